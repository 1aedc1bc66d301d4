//! `scalescope fleet …`: run the check on many nodes (`run`, through Slurm or ssh) and judge
//! them together (`report`).

use clap::Subcommand;

use super::{CliError, RemoteArgs, fleet_report, fleet_run};

/// `scalescope fleet …`
#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Read per-node reports (folders or files) and write the fleet report: consistency,
    /// outliers against the fleet's median, a verdict per node. Exit 3 when a node fails.
    Report(fleet_report::ReportArgs),
    /// Run the check on every node of a Slurm allocation or an ssh host list, then the report.
    Run(fleet_run::RunArgs),
    /// One node's part of `fleet run --slurm` (a Slurm task): the check here, into
    /// OUT/nodes/<node>/. Hidden: `fleet run` starts it.
    #[command(hide = true)]
    Node(fleet_run::NodeArgs),
}

pub fn run(cmd: FleetCommand, remote: &RemoteArgs) -> Result<(), CliError> {
    match cmd {
        FleetCommand::Report(args) => fleet_report::run(args),
        FleetCommand::Run(args) => fleet_run::run(args, remote),
        FleetCommand::Node(args) => fleet_run::node(args, remote),
    }
}
