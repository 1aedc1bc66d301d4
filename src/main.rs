//! Entry point: no arguments opens the desktop app; anything else is the command line.
//! Arguments are parsed, and report paths checked, before any window opens.

use clap::Parser;
use scalescope::cli::{self, Cli, CliError};

fn fail(e: CliError) -> ! {
    eprintln!("{}", cli::error_line(&e.error));
    std::process::exit(e.code);
}

fn open_app(startup: scalescope::ui::Startup) {
    if let Err(e) = cli::check_display() {
        fail(e);
    }
    if let Err(e) = scalescope::ui::run_app(startup) {
        fail(cli::app_error(&e));
    }
}

fn main() {
    if std::env::args_os().len() == 1 {
        open_app(scalescope::ui::Startup::default());
        return;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            eprintln!("{}", cli::clap_error_line(&e.render().to_string()));
            std::process::exit(2);
        }
    };
    if cli.opens_gui() {
        if let Err(e) = cli::check_reports(&cli.reports) {
            fail(e);
        }
        open_app(scalescope::ui::Startup {
            report_paths: cli.reports.clone(),
            ..Default::default()
        });
        return;
    }
    if let Err(e) = cli::run(cli) {
        fail(e);
    }
}
