//! `scalescope fleet report`.

use clap::Args;

use super::CliError;

/// `scalescope fleet report` options.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Per-node reports: folders holding them, or report files.
    #[arg(value_name = "DIR|FILE", required = true)]
    pub inputs: Vec<std::path::PathBuf>,
}

pub fn run(_args: ReportArgs) -> Result<(), CliError> {
    Err(CliError::env(anyhow::anyhow!(
        "fleet report: not built yet"
    )))
}
