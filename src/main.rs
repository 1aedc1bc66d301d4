//! Entry point: no arguments opens the desktop app; anything else is the command line.

use clap::Parser;
use scalescope::cli::{self, Cli};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 1 {
        if let Err(e) = scalescope::ui::run_app(scalescope::ui::Startup::default()) {
            eprintln!("Error: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    let cli = Cli::parse();
    if cli.opens_gui() {
        let startup = scalescope::ui::Startup {
            report_paths: cli.reports.clone(),
            ..Default::default()
        };
        if let Err(e) = scalescope::ui::run_app(startup) {
            eprintln!("Error: {e:#}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(e) = cli::run(cli) {
        eprintln!("Error: {:#}", e.error);
        std::process::exit(e.code);
    }
}
