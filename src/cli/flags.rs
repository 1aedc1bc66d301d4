//! Flags that several commands take, declared once and parsed once into the model's types
//! (`crate::model::options`; prices: `super::price`). Here a refused value is named by its
//! flag; a job read from elsewhere names the field instead, with the same message.

use clap::Args;

use super::CliError;
use crate::model::{GpuSelection, Refused};

/// `--gpus LIST`: `0,1,3` or `all`. A command says what its GPUs are for with
/// `#[command(mut_arg("gpus", |a| a.help(…)))]`.
#[derive(Clone, Debug, Args)]
pub struct GpuArgs {
    /// GPUs to use, e.g. 0,1,3 (default: all).
    // Every command's help says "(default: all)" in its own words; clap's "[default: all]"
    // after it would say it twice.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "all",
        hide_default_value = true,
        allow_negative_numbers = true
    )]
    pub gpus: String,
}

impl GpuArgs {
    /// The GPUs asked for.
    pub fn selection(&self) -> Result<GpuSelection, CliError> {
        GpuSelection::parse(&self.gpus).map_err(refused("--gpus"))
    }
}

/// A value its type refused, as the command line says it: under `flag`, exit 2.
pub fn refused(flag: &str) -> impl Fn(Refused) -> CliError + '_ {
    move |e| CliError::input(anyhow::anyhow!(e.named(flag)))
}
