//! Entry point: no arguments opens the desktop app; anything else is the command line.

use clap::Parser;
use scalescope::cli::{self, Cli};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 1 {
        exit_on_error(open_app(Vec::new()));
        return;
    }
    let cli = Cli::parse();
    if cli.opens_gui() {
        exit_on_error(open_app(cli.reports.clone()));
        return;
    }
    if let Err(e) = cli::run(cli) {
        eprintln!("Error: {:#}", e.error);
        std::process::exit(e.code);
    }
}

fn exit_on_error(r: anyhow::Result<()>) {
    if let Err(e) = r {
        eprintln!("Error: {e:#}");
        std::process::exit(1);
    }
}

#[cfg(feature = "gui")]
fn open_app(report_paths: Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    scalescope::ui::run_app(scalescope::ui::Startup {
        report_paths,
        ..Default::default()
    })
}

#[cfg(not(feature = "gui"))]
fn open_app(_: Vec<std::path::PathBuf>) -> anyhow::Result<()> {
    anyhow::bail!(
        "this scalescope was built without the desktop app (headless build): use the command \
         line (`scalescope --help`), or open the app from a laptop with `scalescope --remote HOST`"
    )
}
