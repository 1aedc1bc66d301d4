//! Command-line interface: clap definitions, and the code that prints results to the terminal.
//! Every command builds a `job::Job` and runs it here or, with `--remote`, on a server; nothing
//! below cli/ sees a flag's name. What lives here:
//!
//! - This file: the `Cli` and its `Command`s, `topo` (with `src/cli/topo_table.rs`, its
//!   terminal matrices), the catalog list, `CliError` (the one error-to-exit-code mapping) and
//!   the dispatch to the other files.
//! - One file per command: `src/cli/suite.rs` (`--bench`, with `src/cli/stage_clock.rs`:
//!   where each stage's seconds went), `src/cli/check.rs`,
//!   `src/cli/watch.rs` (and `src/cli/metrics_server.rs`, its `/metrics`),
//!   `src/cli/compare.rs`, `src/cli/bandwidth.rs` (with `src/cli/copy_kernel.rs`, its hidden
//!   tuning flags), `src/cli/collectives.rs`, `src/cli/scaling.rs`; `fleet` in
//!   `src/cli/fleet.rs` (its flags), `src/cli/fleet_run.rs` (`fleet run`) and
//!   `src/cli/fleet_report.rs` (`fleet report`).
//! - Shared by the commands: `src/cli/flags.rs` (`--gpus` and the other flags several
//!   commands take, parsed once into the model's types), `src/cli/price.rs` (the price flags),
//!   `src/cli/run_job.rs` (the one loop that runs a job with its progress bar and checkpoint
//!   writes), `src/cli/output.rs` (files written atomically, `--out` locked, I/O errors sorted)
//!   and `src/cli/interrupt.rs` (SIGINT, SIGTERM, SIGHUP).
//!
//! The agent (`scalescope agent`) is `remote::agent`; the desktop app is `ui/`, opened by
//! main.rs, never from here.

mod bandwidth;
mod check;
mod collectives;
mod compare;
mod copy_kernel;
mod flags;
mod fleet;
mod fleet_report;
mod fleet_run;
pub mod interrupt;
mod metrics_server;
pub mod output;
mod price;
mod run_job;
mod scaling;
mod stage_clock;
mod suite;
mod topo_table;
mod watch;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::export;
use crate::model::{Blame, Fault, Topology};
use crate::topology::{TopologyError, catalog, live};

pub use topo_table::describe_source;

/// scalescope: how your GPUs are connected, how fast they really talk, and what that means for
/// scaling. With no arguments it opens the desktop app.
#[derive(Debug, Parser)]
#[command(
    name = "scalescope",
    version,
    about,
    mut_arg("gpus", |a| a.requires("bench").help("GPUs for --bench, e.g. 0,1 (default: all)"))
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Alone: list the hardware catalog (machines as their vendors document them). With
    /// --bench --modeled: the catalog machine to model.
    #[arg(long = "catalog", value_name = "NAME", num_args = 0..=1)]
    pub catalog: Option<Option<String>>,
    /// Run the whole suite (topology, health check, bandwidth, collectives, scaling) and write
    /// CSV, report.json, report.html, PNGs and report.pdf to --out.
    #[arg(long)]
    pub bench: bool,
    /// Folder for --bench's files (created if missing).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "scalescope-report",
        requires = "bench"
    )]
    pub out: PathBuf,
    #[command(flatten)]
    pub gpus: flags::GpuArgs,
    /// --bench preset: short sweeps, fewer samples, the scaling model without training runs
    /// (≈10 s on 2× H200). The default.
    #[arg(long, requires = "bench", conflicts_with = "full")]
    pub quick: bool,
    /// --bench preset: every test, full sweeps, own algorithms, real PyTorch training steps
    /// (synthetic proxies without PyTorch) (248 s on 2× H200).
    #[arg(long, requires = "bench")]
    pub full: bool,
    /// --bench stages: topology,health,bandwidth,collectives,scaling (default: all).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "all",
        hide_default_value = true,
        requires = "bench"
    )]
    pub suite: String,
    /// --bench: model the figures from line rates instead of measuring (labeled modeled).
    #[arg(long, requires = "bench")]
    pub modeled: bool,
    /// --bench --modeled: read the machine from `nvidia-smi topo`, `-q`/`-q -x` or `nvlink`
    /// output in FILE (repeatable).
    #[arg(long, value_name = "FILE", requires = "bench")]
    pub import: Vec<String>,
    /// --bench: NCCL library to load (default: SCALESCOPE_NCCL_LIB, the loader path, python3's
    /// nvidia/nccl/lib).
    #[arg(long, value_name = "PATH", requires = "bench")]
    pub nccl_lib: Option<PathBuf>,
    /// --bench --full: Python with PyTorch for the real training steps (default:
    /// SCALESCOPE_PYTHON, python3).
    #[arg(long, value_name = "PATH", requires = "bench")]
    pub python: Option<PathBuf>,
    /// Run each copy test and collective on until the GPUs' energy counter has stepped across
    /// SECONDS of it (0.2 to 60), so every test has its energy; without it, only tests whose
    /// timed samples last long enough do.
    #[arg(long, value_name = "SECONDS", requires = "bench", allow_hyphen_values = true, value_parser = parse_energy_window)]
    pub energy_window: Option<crate::model::EnergyWindow>,
    /// --bench: add a burn-in stage of this length after the others (90s, 30m, 2h; at least 1
    /// minute): `scalescope check --soak` as a stage, its series in soak.csv and the report.
    #[arg(
        long,
        value_name = "DURATION",
        requires = "bench",
        allow_hyphen_values = true
    )]
    pub soak: Option<String>,
    /// --bench --soak: the soak's loads (gemm,memory,pcie,p2p,nccl).
    #[arg(long, value_name = "LIST", requires = "soak")]
    pub soak_load: Option<String>,
    #[command(flatten)]
    pub price: price::PriceArgs,
    /// Reports (report.json) to open in the desktop app; a folder of node reports (`fleet run`'s
    /// OUT) opens in its Fleet view.
    #[arg(value_name = "REPORT.json|FLEET_DIR")]
    pub reports: Vec<PathBuf>,
}

impl Cli {
    /// True when the command line asks for the desktop app: with reports to open, or connected
    /// to a server (`--remote HOST` alone).
    pub fn opens_gui(&self) -> bool {
        self.command.is_none()
            && !self.bench
            && self.catalog.is_none()
            && (!self.reports.is_empty() || self.remote.remote.is_some())
    }
}

/// The help heading of the flags that reach servers: apart from each command's own options.
const REMOTE_HEADING: &str = "Remote (over ssh)";

/// The command line's definition as parsed: the remote flags are global (they may follow any
/// subcommand) but each command's help shows only those that mean something there — none for
/// `agent` (it is the server's end), `compare` and `fleet report` (they read files here);
/// `fleet run` keeps --ssh, --remote-command and --remote-install (for its hosts), not --remote.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let cmd = Cli::command();
    // A subcommand that has an argument of a global one's id keeps its own (clap propagates
    // globals only where they are missing): a hidden copy there hides it, and its value still
    // reaches `Cli::remote` (matches propagate by id).
    let copy = |id: &str, hidden: bool| {
        cmd.get_arguments()
            .find(|a| a.get_id() == id)
            .map(|a| a.clone().hide(hidden))
    };
    let with = |c: clap::Command, ids: &[&str], hidden: bool| {
        ids.iter()
            .filter_map(|id| copy(id, hidden))
            .fold(c, |c, a| c.arg(a))
    };
    const ALL: [&str; 4] = ["remote", "remote_command", "ssh", "remote_install"];
    let servers = ["remote_command", "ssh", "remote_install"];
    cmd.clone()
        .mut_subcommand("agent", |c| with(c, &ALL, true))
        .mut_subcommand("compare", |c| with(c, &ALL, true))
        .mut_subcommand("fleet", |f| {
            with(f, &ALL, true)
                .mut_subcommand("report", |c| with(c, &ALL, true))
                .mut_subcommand("run", |c| with(with(c, &["remote"], true), &servers, false))
        })
}

/// The first word of the command line that is not UTF-8, as a one-line error naming its place
/// (and the flag before it): scalescope's flags, paths and values are text, and the report
/// records the command line.
pub fn non_utf8_argument(args: &[std::ffi::OsString]) -> Option<String> {
    let (at, bad) = args
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, a)| a.to_str().is_none())?;
    let after = args[..at]
        .iter()
        .rev()
        .find_map(|a| a.to_str().filter(|a| a.starts_with('-')))
        .map(|flag| format!(" (after {flag})"))
        .unwrap_or_default();
    Some(format!(
        "Error: argument {at}{after} is not valid UTF-8: {:?}; scalescope takes its paths and \
         values as UTF-8 text (rename the file or use a path without those bytes)",
        bad.to_string_lossy()
    ))
}

/// The command line parsed by [`command`]'s definition.
pub fn try_parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    Cli::from_arg_matches(&command().try_get_matches()?)
}

/// Where commands run: here (default), or on a server through ssh and `scalescope agent`.
#[derive(Debug, Clone, Default, Args)]
pub struct RemoteArgs {
    /// Run on this server instead of here: `[user@]host` as ssh takes it (keys, ssh-agent,
    /// ProxyJump and ~/.ssh/config apply). Measurements run there; files are written here. Alone
    /// it opens the app on the server's machine.
    #[arg(long, value_name = "[USER@]HOST", global = true, help_heading = REMOTE_HEADING)]
    pub remote: Option<String>,
    /// What runs on the server (default: `scalescope agent`, from PATH or ~/.cache/scalescope).
    /// With --remote, or for every host of `fleet run --hosts`.
    #[arg(long, value_name = "CMD", global = true, help_heading = REMOTE_HEADING)]
    pub remote_command: Option<String>,
    /// The ssh program and its options (default `ssh`), e.g. "ssh -J bastion -p 2222". With
    /// --remote, or for every host of `fleet run --hosts`.
    #[arg(long, value_name = "CMD", global = true, help_heading = REMOTE_HEADING)]
    pub ssh: Option<String>,
    /// When the server has no scalescope, copy this binary there (same OS and architecture) into
    /// ~/.cache/scalescope first. With --remote, or for every host of `fleet run --hosts`.
    #[arg(long, global = true, help_heading = REMOTE_HEADING)]
    pub remote_install: bool,
    /// Test hook: sleep MS milliseconds after every finished case of a job run here (or by
    /// `agent`), so that tests can interrupt or cut a modeled run midway. Hidden.
    #[arg(long, value_name = "MS", global = true, hide = true)]
    pub test_case_delay_ms: Option<u64>,
    /// Test hook: alter one GEMM result of the soak on purpose — the GPU's position in the
    /// soak's list and the seconds after the load began (`0@30`) — to show that a wrong result
    /// is caught and named. Hidden: not a user option.
    #[arg(long, value_name = "POS@SECONDS", global = true, hide = true, value_parser = parse_corrupt)]
    pub test_corrupt_gemm: Option<crate::bench::cuda::soak::CorruptAt>,
    /// Test hook: `agent` answers `watch` requests by playing this recording (ten times its
    /// pace) instead of reading GPUs, so that tests without a GPU can stream samples through
    /// ssh. Hidden: not a user option.
    #[arg(long, value_name = "FILE", global = true, hide = true)]
    pub test_watch_replay: Option<PathBuf>,
    /// Test hook: give up on a server silent about a request for MS milliseconds instead of
    /// the 60 s the protocol allows, so that tests of a silent server end quickly. Hidden.
    #[arg(
        long,
        value_name = "MS",
        global = true,
        hide = true,
        requires = "remote"
    )]
    pub test_silence_limit_ms: Option<u64>,
    /// Test hook: give up on a FIFO, pipe or device named as an input after MS milliseconds of
    /// silence instead of 5 s, so that fuzzing many silent FIFOs ends quickly. Hidden.
    #[arg(long, value_name = "MS", global = true, hide = true)]
    pub test_stall_ms: Option<u64>,
}

/// `--bench --soak D [--soak-load LIST]`.
fn bench_soak(
    d: Option<&str>,
    loads: Option<&str>,
    modeled: bool,
) -> Result<Option<crate::model::SoakOptions>, CliError> {
    let Some(d) = d else { return Ok(None) };
    let bad = |e: String| CliError::input(anyhow::anyhow!("{e}"));
    if modeled {
        return Err(bad(
            "--soak loads this machine's GPUs: a soak cannot be modeled (leave out --modeled)"
                .into(),
        ));
    }
    Ok(Some(crate::model::SoakOptions {
        duration_s: crate::model::soak::parse_duration(d)
            .map_err(|e| bad(format!("--soak: {e}")))?,
        loads: match loads {
            Some(l) => crate::model::soak::parse_loads(l).map_err(bad)?,
            None => Vec::new(),
        },
        ..Default::default()
    }))
}

/// `--test-corrupt-gemm POS@SECONDS`.
fn parse_corrupt(s: &str) -> Result<crate::bench::cuda::soak::CorruptAt, String> {
    let (g, t) = s.split_once('@').ok_or("expected POS@SECONDS, e.g. 0@30")?;
    Ok(crate::bench::cuda::soak::CorruptAt {
        gpu: g.trim().parse().map_err(|_| "POS: a GPU position")?,
        after_s: t
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or("SECONDS: a number of seconds")?,
    })
}

impl RemoteArgs {
    /// The options the client connects with, when a server is named.
    pub fn options(&self) -> Option<crate::remote::RemoteOptions> {
        Some(crate::remote::RemoteOptions {
            host: self.remote.clone()?,
            ssh: self.ssh.clone(),
            command: self.remote_command.clone(),
            silence_limit: self
                .test_silence_limit_ms
                .map(std::time::Duration::from_millis),
        })
    }

    /// The test hooks of jobs run here (none unless a test asked for them).
    pub fn hooks(&self) -> crate::job::TestHooks {
        crate::job::TestHooks {
            case_delay: self
                .test_case_delay_ms
                .map(std::time::Duration::from_millis),
            corrupt_gemm: self.test_corrupt_gemm,
        }
    }

    /// Where jobs run: here, or connected to the server (copying this binary there first when
    /// it has none and `--remote-install` was given). Progress goes to standard error.
    pub fn runner(&self) -> Result<crate::remote::Runner, CliError> {
        use crate::remote::{Client, ConnectError, Runner, client};
        let Some(opts) = self.options() else {
            return Ok(Runner::Local(self.hooks()));
        };
        crate::stderr_line!(
            "connecting to {} …",
            crate::model::validate::for_terminal(&opts.host)
        );
        let client = match Client::connect(&opts) {
            Err(ConnectError::NotInstalled { .. }) if self.remote_install => {
                let done = client::install(&opts).map_err(connect_err)?;
                crate::stderr_line!("{done}");
                Client::connect(&opts).map_err(connect_err)?
            }
            other => other.map_err(connect_err)?,
        };
        let m = client.machine();
        crate::stderr_line!(
            "connected to {} ({}: {})",
            crate::model::validate::for_terminal(&opts.host),
            // Already escaped as it arrived (Client::connect); escaped again here so that this
            // print stays safe whoever built the hello.
            crate::model::validate::for_terminal(m.hostname.as_deref().unwrap_or("?")),
            if m.live {
                format!("{} GPU(s)", m.gpus.len())
            } else {
                crate::model::validate::for_terminal(
                    m.reason.as_deref().unwrap_or("GPUs not readable"),
                )
            }
        );
        Ok(Runner::Remote(Box::new(client)))
    }
}

fn connect_err(e: crate::remote::ConnectError) -> CliError {
    CliError {
        code: e.code(),
        error: anyhow::anyhow!(e),
    }
}

impl From<crate::job::JobError> for CliError {
    fn from(e: crate::job::JobError) -> Self {
        Self {
            code: e.code,
            error: anyhow::anyhow!(e.message),
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show how the GPUs are connected: the `nvidia-smi topo -m` matrix, line rates and P2P.
    Topo(TopoArgs),
    /// Measure (or model) the GPUs one part at a time: copy bandwidth and latency, collectives,
    /// scaling.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Compare reports (report.json of `--bench`): key figures and the difference in %.
    Compare(compare::CompareArgs),
    /// Is this box delivering what it should? PCIe, NVLink, memory, clock and temperature checks plus copy
    /// bandwidth against expected, each PASS/WARN/FAIL with the likely cause and what to do.
    /// Exit 0 when nothing failed, 3 when a check failed (a node health check before jobs).
    Check(check::CheckArgs),
    /// Watch the traffic on every PCIe and NVLink link live: a line per GPU per interval and
    /// per busy GPU pair; --csv, --record FILE (JSON lines) and --replay FILE, --prometheus
    /// [ADDR:]PORT serves /metrics. Ctrl-C or --count N ends it (exit 0).
    Watch(watch::WatchArgs),
    /// Fleet acceptance: the check on many nodes (Slurm or ssh) and a fleet report naming the
    /// node, GPU or link that differs from the rest.
    #[command(subcommand)]
    Fleet(fleet::FleetCommand),
    /// Serve jobs to a remote client over standard input and output (newline-delimited JSON,
    /// docs/PROTOCOL.md). `--remote HOST` starts it on the server through ssh.
    Agent,
}

/// `scalescope bench …`
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Copy bandwidth and latency: host↔GPU, GPU↔GPU (copy engines and kernels), contention.
    Bandwidth(bandwidth::BandwidthArgs),
    /// Collectives: NCCL sweeps (nccl-tests' algbw/busbw) and scalescope's own all-reduce.
    Collectives(collectives::CollectivesArgs),
    /// Weak and strong scaling of workloads: modeled, or measured (--measure: real PyTorch
    /// training steps; synthetic proxy runs where PyTorch is not installed).
    Scaling(scaling::ScalingArgs),
}

/// Where a topology comes from: this machine (default), an `nvidia-smi topo` capture, or the
/// catalog. Shared by every command that needs a topology.
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    /// Read `nvidia-smi topo -m` / `-mp` / `-p2p r|w|n|a` output from FILE ('-' = stdin);
    /// repeat to merge several captures. `nvidia-smi -q`, `-q -x` and `nvlink -s` output add
    /// the GPUs' PCIe links, names and NVLink speeds, and the machine is modeled as they say it
    /// runs (NVLinks down, PCIe trained low; `check` judges it against the design); nvbandwidth's
    /// output (text or -j JSON) and nccl-tests' (text or -J JSON) add the figures they
    /// measured there.
    #[arg(long, value_name = "FILE", conflicts_with = "catalog")]
    pub import: Vec<String>,
    /// Use a hardware catalog entry (see `scalescope --catalog`), or a catalog .toml file.
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
}

/// The `--catalog` values that name a file (`.toml`, as `catalog::load_machine` decides), as the
/// inputs no output may replace: a name (`dgx-h100`) is the built-in entry whatever file lies
/// about.
pub(crate) fn catalog_files<'a>(
    values: impl IntoIterator<Item = &'a String>,
) -> impl Iterator<Item = (&'static str, &'a std::path::Path)> {
    values
        .into_iter()
        .filter(|v| v.trim().to_ascii_lowercase().ends_with(".toml"))
        .map(|v| ("--catalog", std::path::Path::new(v)))
}

impl SourceArgs {
    /// The files these flags read (`--import` captures, a `--catalog` file), by flag: what no
    /// output of the command may replace ([`output::check_outputs`]).
    pub fn files(&self) -> Vec<(&'static str, &std::path::Path)> {
        let imports = self
            .import
            .iter()
            .map(|p| ("--import", std::path::Path::new(p)));
        imports.chain(catalog_files(&self.catalog)).collect()
    }

    /// The machine these flags name, as a job's target.
    pub fn target(&self) -> crate::job::Target {
        use crate::job::Target;
        if !self.import.is_empty() {
            Target::Import {
                paths: self.import.clone(),
            }
        } else if let Some(name) = &self.catalog {
            Target::Catalog { name: name.clone() }
        } else {
            Target::Live
        }
    }

    /// The target, for a job that may run on a server: there, `--import` names the server's
    /// files, and standard input (`-`) is refused (it would be the connection's).
    pub fn target_for(&self, remote: &RemoteArgs) -> Result<crate::job::Target, CliError> {
        if remote.remote.is_some() && self.import.iter().any(|p| p == "-") {
            return Err(CliError::input(anyhow::anyhow!(
                "--import -: standard input is not read with --remote; name a capture file on the server"
            )));
        }
        Ok(self.target())
    }

    /// A job's error, with how to model a machine instead where this machine (not another one)
    /// could not be read.
    pub fn hint(&self, e: crate::job::JobError, modeled: bool, remote: bool) -> CliError {
        if e.no_driver && !self.describes_another_machine() && !remote {
            let hint = if modeled {
                "--modeled needs a machine to model here: add --catalog NAME (see `scalescope --catalog`) or --import FILE"
            } else {
                "to model a machine instead, run with --modeled --catalog NAME or --modeled --import FILE"
            };
            return CliError::env(anyhow::anyhow!(
                "{}",
                e.message.replace(crate::topology::NO_DRIVER_ADVICE, hint)
            ));
        }
        e.into()
    }

    /// True when the flags name another machine (an import or a catalog entry).
    pub fn describes_another_machine(&self) -> bool {
        !self.import.is_empty() || self.catalog.is_some()
    }

    /// `--import`/`--catalog` describe another machine, which can be modeled but not measured
    /// from here.
    pub fn refuse_measuring_elsewhere(&self, modeled: bool) -> Result<(), CliError> {
        if self.describes_another_machine() && !modeled {
            return Err(CliError::input(anyhow::anyhow!(
                "--import/--catalog describe another machine, which cannot be measured from here: add --modeled to model it"
            )));
        }
        Ok(())
    }

    /// Loads the topology these flags name.
    pub fn load(&self) -> Result<Topology, TopologyError> {
        if !self.import.is_empty() {
            crate::report::reference_tools::import(&self.import).map(|m| m.machine.topology)
        } else if let Some(name) = &self.catalog {
            catalog::load(name)
        } else {
            live::read()
        }
    }
}

/// `scalescope topo` options.
#[derive(Debug, Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Which table to write as CSV.
    #[arg(long, value_enum, default_value_t = Table::Links)]
    pub table: Table,
    /// Write to FILE instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Output formats of `topo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
}

/// CSV tables of `topo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Table {
    /// One row per ordered GPU pair.
    Links,
    /// One row per GPU.
    Gpus,
}

/// Exit code: the machine or its environment failed (no driver, a GPU, a full disk).
pub const EXIT_MACHINE: i32 = 1;
/// Exit code: bad input (files, flags, indices, names).
pub const EXIT_INPUT: i32 = 2;
/// Exit code: `check` ran and a check failed (with `--strict`, any WARN or UNKNOWN).
pub const EXIT_CHECK_FAILED: i32 = 3;

/// An error with the exit code the process should end with. The codes are decided here and
/// nowhere else: 2 for bad input, 1 for the machine (from the error's [`Blame`] where it is
/// typed), 3 for a failed check, 128 + the signal for an interrupted run.
#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub error: anyhow::Error,
}

impl CliError {
    /// An error whose exit code follows from whose fault it is.
    pub fn new(fault: Fault, error: impl Into<anyhow::Error>) -> Self {
        let code = match fault {
            Fault::Input => EXIT_INPUT,
            Fault::Machine => EXIT_MACHINE,
        };
        Self {
            code,
            error: error.into(),
        }
    }

    /// Bad input: exit 2.
    pub fn input(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Fault::Input, error)
    }

    /// The machine or the environment: exit 1.
    pub fn env(error: impl Into<anyhow::Error>) -> Self {
        Self::new(Fault::Machine, error)
    }

    /// `check` found a failure: exit 3.
    pub fn check_failed(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: EXIT_CHECK_FAILED,
            error: error.into(),
        }
    }

    /// A signal stopped the run: exit 128 + the signal (130 for Ctrl-C).
    pub fn interrupted(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: interrupt::exit_code(),
            error: error.into(),
        }
    }
}

/// Every typed error of the layers below says whose fault it is, and so its exit code.
impl<E: Blame + std::error::Error + Send + Sync + 'static> From<E> for CliError {
    fn from(e: E) -> Self {
        Self::new(e.fault(), e)
    }
}

/// `--energy-window SECONDS` ([`crate::model::EnergyWindow`]); clap names the flag.
pub(crate) fn parse_energy_window(s: &str) -> Result<crate::model::EnergyWindow, String> {
    crate::model::EnergyWindow::parse(s).map_err(|e| e.why)
}

/// Refuses `--energy-window` where nothing is measured.
pub(crate) fn energy_window_needs_measuring(
    window: Option<crate::model::EnergyWindow>,
    modeled: bool,
) -> Result<(), CliError> {
    refuse_unused(
        &[("--energy-window", window.is_some())],
        !modeled,
        "runs measured tests longer for their energy: it does not apply with --modeled",
    )
}

/// Refuses the first of `flags` given (`(flag, given)`) where it does not apply: `why` says
/// when it does. A flag that changes nothing is said, not silently ignored.
pub(crate) fn refuse_unused(
    flags: &[(&str, bool)],
    applies: bool,
    why: &str,
) -> Result<(), CliError> {
    match flags.iter().find(|(_, given)| *given) {
        Some((flag, _)) if !applies => Err(CliError::input(anyhow::anyhow!("{flag} {why}"))),
        _ => Ok(()),
    }
}

/// Runs a parsed command line that is not the GUI.
pub fn run(cli: Cli) -> Result<(), CliError> {
    if cli.command.is_some() && (cli.bench || cli.catalog.is_some() || !cli.reports.is_empty()) {
        return Err(CliError::input(anyhow::anyhow!(
            "--bench, --catalog and report files do not go with a subcommand (topo, bench, check, compare, agent)"
        )));
    }
    if cli.bench {
        if matches!(cli.catalog, Some(Some(_))) && !cli.import.is_empty() {
            return Err(CliError::input(anyhow::anyhow!(
                "--catalog and --import both name the machine to model: give one of them"
            )));
        }
        if matches!(cli.catalog, Some(None)) {
            return Err(CliError::input(anyhow::anyhow!(
                "--bench --catalog needs a machine name (see `scalescope --catalog`)"
            )));
        }
        return suite::run(suite::SuiteArgs {
            out: cli.out,
            gpus: cli.gpus,
            full: cli.full,
            suite: cli.suite,
            modeled: cli.modeled,
            source: SourceArgs {
                import: cli.import,
                catalog: cli.catalog.flatten(),
            },
            nccl_lib: cli.nccl_lib,
            python: cli.python,
            remote: cli.remote,
            pricing: cli.price.pricing()?,
            energy_window_s: cli.energy_window,
            soak: bench_soak(cli.soak.as_deref(), cli.soak_load.as_deref(), cli.modeled)?,
        });
    }
    if cli.price.pricing()?.is_some() {
        return Err(CliError::input(anyhow::anyhow!(
            "prices (--price-per-gpu-hour, --capex-per-node, …) cost the scaling rows of --bench or `bench scaling`"
        )));
    }
    if matches!(cli.catalog, Some(None)) {
        return print_catalog();
    }
    if cli.catalog.is_some() || !cli.import.is_empty() {
        return Err(CliError::input(anyhow::anyhow!(
            "--catalog NAME and --import go with --bench (or a subcommand such as `topo`)"
        )));
    }
    let remote = cli.remote;
    let fleet_run = matches!(
        &cli.command,
        Some(Command::Fleet(fleet::FleetCommand::Run(_)))
    );
    check_ssh_flags(&remote, fleet_run)?;
    let reads_reports = matches!(
        &cli.command,
        Some(Command::Compare(_) | Command::Fleet(fleet::FleetCommand::Report(_)))
    );
    if reads_reports && remote.remote.is_some() {
        return Err(CliError::input(anyhow::anyhow!(
            "--remote: compare and fleet report read report files here; run --bench or check \
             with --remote HOST (its files are written here), then compare them"
        )));
    }
    match cli.command {
        Some(Command::Compare(args)) => compare::run(args),
        Some(Command::Topo(args)) => topo(args, &remote),
        Some(Command::Check(args)) => check::run(args, &remote),
        Some(Command::Watch(args)) => watch::run(args, &remote),
        Some(Command::Fleet(cmd)) => fleet::run(cmd, &remote),
        Some(Command::Bench(BenchCommand::Bandwidth(args))) => bandwidth::run(args, &remote),
        Some(Command::Bench(BenchCommand::Collectives(args))) => collectives::run(args, &remote),
        Some(Command::Bench(BenchCommand::Scaling(args))) => scaling::run(args, &remote),
        Some(Command::Agent) => {
            if remote.remote.is_some() {
                return Err(CliError::input(anyhow::anyhow!(
                    "`agent` serves the machine it runs on; start it there (--remote starts it for you)"
                )));
            }
            let code = crate::remote::agent::serve_with(
                std::io::stdin().lock(),
                Box::new(std::io::stdout()),
                remote.hooks(),
                remote.test_watch_replay.clone(),
            );
            if code == 0 {
                Ok(())
            } else {
                Err(CliError::env(anyhow::anyhow!("agent ended with {code}")))
            }
        }
        None => Ok(()),
    }
}

/// The error as the command line prints it: one line, `Error: ` and the message with its
/// causes, each cause once (a message that already quotes its cause is not followed by it
/// again), control characters escaped and very long words shortened.
pub fn error_line(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let c = cause.to_string();
        if text.contains(&c) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&c);
    }
    format!(
        "Error: {}",
        crate::model::validate::one_line(&text, 200).trim_end()
    )
}

/// A clap error (bad flag, unknown subcommand, bad value) as one line, with clap's hint kept:
/// `Error: invalid value 'xml' for '--format <FORMAT>' [possible values: table, csv, json]`.
pub fn clap_error_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let text = parts.join(" ");
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    format!(
        "Error: {}; see `scalescope --help`",
        crate::model::validate::one_line(text, 200)
    )
}

/// `scalescope bench` (or any command that takes a subcommand) without one, as one line naming
/// the subcommands it takes, rather than its whole help squeezed onto a line; `None` for other
/// errors. `args` are the words after the program's name.
pub fn missing_subcommand_line(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::ErrorKind;
    if !matches!(
        e.kind(),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand
    ) {
        return None;
    }
    let mut cmd = command();
    let mut path = vec!["scalescope".to_string()];
    for a in args.iter().filter(|a| !a.starts_with('-')) {
        if let Some(sub) = cmd.find_subcommand(a).cloned() {
            path.push(a.clone());
            cmd = sub;
        }
    }
    let subs: Vec<&str> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name())
        .collect();
    if subs.is_empty() {
        return None;
    }
    let path = path.join(" ");
    Some(format!(
        "Error: `{path}` needs a subcommand: {}; see `{path} --help`",
        subs.join(", ")
    ))
}

/// Before a window opens for `scalescope REPORT.json …`: every path must be a report this
/// build reads. A word that is no file is most likely a mistyped subcommand, and says so.
pub fn check_reports(paths: &[PathBuf]) -> Result<(), CliError> {
    for p in paths {
        let shown = crate::model::validate::quoted(&p.to_string_lossy());
        if !p.exists() {
            let text = p.to_string_lossy();
            let word = !text.contains(['/', '.', '\\']);
            return Err(CliError::input(if word {
                anyhow::anyhow!(
                    "unknown command {shown}: expected a subcommand (topo, bench, compare), an option (see `scalescope --help`) or report files to open"
                )
            } else {
                anyhow::anyhow!("no such report: {shown}")
            }));
        }
        // A folder of node reports is a fleet: the app opens it in its Fleet view.
        if p.is_dir() && crate::fleet::read::discover(std::slice::from_ref(p)).is_ok() {
            continue;
        }
        if p.is_dir() {
            return Err(CliError::input(anyhow::anyhow!(
                "{shown} is a folder without node reports: give a report.json, or a fleet's folder"
            )));
        }
        // A soak recording, or the file `check --json` wrote after a soak, opens in the Soak
        // view (judged as `check --soak-replay` judges it).
        if crate::job::soak_file::is_soak_csv(p) {
            crate::health::soak_csv::read(p).map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
            continue;
        }
        if let Err(e) = crate::report::load_named(p)
            && !matches!(crate::job::soak_file::open(p), Ok(Some(_)))
        {
            return Err(e.into());
        }
    }
    Ok(())
}

/// Before the desktop app starts: is there a display to open a window on? (Linux: X11 or
/// Wayland.) Without one, says what works headless (exit 1).
pub fn check_display() -> Result<(), CliError> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") || set("WAYLAND_SOCKET") {
        return Ok(());
    }
    Err(CliError::env(anyhow::anyhow!(
        "no display for the desktop app (DISPLAY and WAYLAND_DISPLAY are unset); without one, use `scalescope --bench --modeled --catalog NAME`, `scalescope topo` or `scalescope compare A.json B.json` (see `scalescope --help`)"
    )))
}

/// The desktop app's start-up error without the windowing library's source locations
/// (`os error at /root/.cargo/registry/…/mod.rs:765: …`).
pub fn app_error(e: &anyhow::Error) -> CliError {
    let text = format!("{e:#}");
    let cleaned = match (text.find(" at /"), text.find(".rs:")) {
        (Some(a), Some(b)) if a < b => {
            let after = &text[b + 4..];
            let rest = after.trim_start_matches(|c: char| c.is_ascii_digit() || c == ':');
            format!(
                "{}{}",
                &text[..a],
                rest.strip_prefix(' ').map_or(rest, |r| r)
            )
        }
        _ => text,
    };
    CliError::env(anyhow::anyhow!(cleaned))
}

/// Loads reports, naming the file in any error (exit 2).
pub fn load_reports(paths: &[PathBuf]) -> Result<Vec<crate::report::Report>, CliError> {
    paths
        .iter()
        .map(|p| crate::report::load_named(p).map_err(CliError::from))
        .collect()
}

fn print_catalog() -> Result<(), CliError> {
    let entries = catalog::entries();
    let width = entries.iter().map(|e| e.id.len()).max().unwrap_or(0);
    let mut out = String::from("Hardware catalog (documented designs, not measurements):\n");
    for e in entries {
        out.push_str(&format!("  {:<width$}  {} — {}\n", e.id, e.name, e.summary));
    }
    out.push_str(
        "\nUse one with: scalescope topo --catalog ID (its topology), or scalescope --bench --modeled --catalog ID (the modeled report)\n",
    );
    emit(None, out.as_bytes())
}

fn topo(args: TopoArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    output::check_outputs(&[("-o", args.output.as_ref())], &args.source.files())?;
    let job = crate::job::Job::Topology {
        target: args.source.target_for(remote)?,
    };
    let mut runner = remote.runner()?;
    let report = runner.run(
        &job,
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )?;
    let topo = report.topology;
    let bytes = match (args.format, args.table) {
        (Format::Table, _) => {
            let mut text = topo_table::render(&topo);
            // The reference tools' outputs among the imports: what each gave (their figures
            // are for check, compare and the app).
            if remote.remote.is_none() && !args.source.import.is_empty() {
                let imported = crate::report::reference_tools::import(&args.source.import)?;
                for line in imported.summary_lines() {
                    text.push_str(&format!("imported {line}\n"));
                }
            }
            text.into_bytes()
        }
        (Format::Csv, Table::Links) => export::csv::links(&topo)?,
        (Format::Csv, Table::Gpus) => export::csv::gpus(&topo)?,
        (Format::Json, _) => export::json::to_json(&topo)?,
    };
    emit(args.output.as_deref(), &bytes)
}

/// Writes a whole file atomically (see [`output::write_atomic`]), naming it in the error: a
/// full disk is the machine's (exit 1), a bad path the user's (exit 2).
fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), CliError> {
    output::write_atomic(path, bytes).map_err(|e| output::write_error(path, e))
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed_precise} {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// Writes to a file, or to stdout (a closed pipe is not an error).
pub(crate) fn emit(path: Option<&std::path::Path>, bytes: &[u8]) -> Result<(), CliError> {
    match path {
        Some(p) => write_file(p, bytes),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|_| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::env(e)),
                _ => Ok(()),
            }
        }
    }
}

/// `--ssh`, `--remote-command` and `--remote-install` reach servers: one (`--remote HOST`) or
/// every host of `fleet run`; anywhere else they would be ignored, so they are an error.
pub fn check_ssh_flags(remote: &RemoteArgs, fleet_run: bool) -> Result<(), CliError> {
    if remote.remote.is_some() && fleet_run {
        return Err(CliError::input(anyhow::anyhow!(
            "fleet run reaches its hosts itself (--hosts, --hosts-file, --slurm): --remote goes with one server"
        )));
    }
    if remote
        .remote
        .as_deref()
        .is_some_and(|h| h.trim().is_empty())
    {
        // Refused here rather than after "connecting to  …".
        return Err(CliError::input(anyhow::anyhow!(
            "--remote: no host given (expected [user@]host as ssh takes it)"
        )));
    }
    if remote.remote.is_some() || fleet_run {
        return Ok(());
    }
    let given = [
        (remote.ssh.is_some(), "--ssh"),
        (remote.remote_command.is_some(), "--remote-command"),
        (remote.remote_install, "--remote-install"),
    ];
    match given.iter().find(|(set, _)| *set) {
        Some((_, flag)) => Err(CliError::input(anyhow::anyhow!(
            "{flag} goes with --remote HOST (or with `fleet run --hosts`)"
        ))),
        None => Ok(()),
    }
}
