//! Entry point: no arguments opens the desktop app; anything else is the command line.
//! Arguments are parsed, and report paths checked, before any window opens.

use scalescope::cli::{self, CliError};

fn fail(e: CliError) -> ! {
    scalescope::stderr_line!("{}", cli::error_line(&e.error));
    std::process::exit(e.code);
}

#[cfg(feature = "gui")]
fn open_app(
    report_paths: Vec<std::path::PathBuf>,
    remote: Option<scalescope::remote::RemoteOptions>,
) {
    if let Err(e) = cli::check_display() {
        fail(e);
    }
    let startup = scalescope::ui::Startup {
        report_paths,
        remote,
        ..Default::default()
    };
    if let Err(e) = scalescope::ui::run_app(startup) {
        fail(cli::app_error(&e));
    }
}

#[cfg(not(feature = "gui"))]
fn open_app(_: Vec<std::path::PathBuf>, _: Option<scalescope::remote::RemoteOptions>) {
    fail(CliError::env(anyhow::anyhow!(
        "this scalescope was built without the desktop app (headless build): use the command \
         line (`scalescope --help`), or open the app from a laptop with `scalescope --remote HOST`"
    )));
}

fn main() {
    if std::env::args_os().len() == 1 {
        open_app(Vec::new(), None);
        return;
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(line) = cli::non_utf8_argument(&args) {
        scalescope::stderr_line!("{line}");
        std::process::exit(cli::EXIT_INPUT);
    }
    let cli = match cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let args: Vec<String> = scalescope::process::command_line()
                .into_iter()
                .skip(1)
                .collect();
            let line = cli::missing_subcommand_line(&e, &args)
                .unwrap_or_else(|| cli::clap_error_line(&e.render().to_string()));
            scalescope::stderr_line!("{line}");
            std::process::exit(cli::EXIT_INPUT);
        }
    };
    if let Some(ms) = cli.remote.test_stall_ms {
        scalescope::input::shorten_stall_for_tests(std::time::Duration::from_millis(ms));
    }
    if cli.opens_gui() {
        if let Err(e) = cli::check_ssh_flags(&cli.remote, false) {
            fail(e);
        }
        if let Err(e) = cli::check_reports(&cli.reports) {
            fail(e);
        }
        open_app(cli.reports.clone(), cli.remote.options());
        return;
    }
    if let Err(e) = cli::run(cli) {
        fail(e);
    }
}
