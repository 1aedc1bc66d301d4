//! `scalescope fleet run`.

use clap::Args;

use super::{CliError, RemoteArgs};

/// `scalescope fleet run` options.
#[derive(Debug, Args)]
pub struct RunArgs {}

pub fn run(_args: RunArgs, _remote: &RemoteArgs) -> Result<(), CliError> {
    Err(CliError::env(anyhow::anyhow!("fleet run: not built yet")))
}
