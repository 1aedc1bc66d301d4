//! One job API under the command line, the app and the agent.
//!
//! A [`Job`] says what to run (topology, bandwidth, collectives, scaling, a health check, or the
//! whole suite) on which machine ([`Target`]); [`run`] runs it here and sends [`Event`]s to any
//! sink — a progress bar and the checkpoint writer (CLI), a view's worker channel (app), the
//! agent's standard output (`scalescope agent`). Every job ends in a [`Report`] holding what it
//! produced; the events are that report growing, and [`apply`] replays them into a report on the
//! other side of a channel or an ssh connection (`remote`, the layer above), so that a job run elsewhere
//! fills the same sinks with the same figures.

mod backend;
mod soak;
pub mod soak_file;
mod stages;
pub mod validate;
pub mod watch;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use backend::{
    bandwidth_backend, collectives_backend, measured_bandwidth, measured_collectives,
    modeled_as_stated,
};
pub use stages::{FULL_MEASURED_WORKLOADS, bandwidth_presets, collective_presets};

use crate::bench::collectives::CollectiveOptions;
use crate::bench::{BandwidthOptions, BenchError, Warning};
use crate::health::HealthReport;
use crate::health::run::CheckOptions;
use crate::model::Blame;
use crate::model::{
    BandwidthResult, CollectiveResult, Inventory, SoakEvent, SoakSample, SoakSection, Source,
    Topology, TopologySource,
};
pub use crate::report::Stage;
use crate::report::{
    BandwidthSection, CollectivesSection, MachineInfo, Report, ScalingSection, StageInFlight,
};
use crate::scaling::cost::Pricing;
use crate::scaling::run::MeasureOptions;
use crate::scaling::{Mode, Workload};
use crate::topology::{TopologyError, catalog, live};

/// The machine a job works on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// The machine the job runs on, read live (NVML, CUDA).
    Live,
    /// A hardware catalog entry (`scalescope --catalog`), or a catalog TOML file.
    Catalog { name: String },
    /// `nvidia-smi` captures (`topo -m`, `-q`, `-q -x`, `nvlink -s/-e`) on the machine the job
    /// runs on; `-` is standard input.
    Import { paths: Vec<String> },
    /// A topology given whole: the app's current machine, or the machine of an opened report.
    Topology { topology: Box<Topology> },
}

impl Target {
    /// True when the target describes another machine than the one the job runs on: it can be
    /// modeled, not measured.
    pub fn is_elsewhere(&self) -> bool {
        matches!(self, Self::Catalog { .. } | Self::Import { .. })
    }

    /// Reads the target's topology.
    pub fn load(&self) -> Result<Topology, TopologyError> {
        match self {
            Self::Live => live::read(),
            Self::Catalog { name } => catalog::load(name),
            // The machine as its captures say it runs, as a catalog entry's `[[state]]` gives it.
            Self::Import { paths } => {
                crate::report::reference_tools::import(paths).map(|m| m.machine.running())
            }
            Self::Topology { topology } => Ok((**topology).clone()),
        }
    }

    /// What a check of a described target judges, from one reading of the target: the machine
    /// as designed (expected = the design's line rates: a catalog entry's design or the
    /// captures' `topo` matrices, where [`Self::load`] gives the machine as its `[[state]]` or
    /// its state captures say it runs; `loaded` otherwise) and the health inventory it
    /// describes (captures or the entry's `[[state]]`), before and after; no inventory for a
    /// live machine (the check reads it) or a bare topology.
    pub fn described(
        &self,
        loaded: &Topology,
    ) -> Result<(Topology, Option<Inventory>, Option<Inventory>), TopologyError> {
        match self {
            Self::Import { paths } => {
                let m = crate::report::reference_tools::import(paths)?.machine;
                Ok((m.topology, m.inventory, m.after))
            }
            Self::Catalog { name } => {
                let (design, inv) = catalog::load_machine(name)?;
                Ok((design, Some(inv), None))
            }
            _ => Ok((loaded.clone(), None, None)),
        }
    }
}

/// What the suite runs (`scalescope --bench`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SuiteOptions {
    /// Stages in order (topology always comes first).
    pub stages: Vec<Stage>,
    /// The GPUs (every GPU when none are named).
    pub gpus: crate::model::GpuSelection,
    /// The `--full` preset (every test, full sweeps, own algorithms, framework runs).
    pub full: bool,
    /// Model every figure from line rates instead of measuring.
    pub modeled: bool,
    /// NCCL library to load.
    pub nccl_lib: Option<PathBuf>,
    /// Python with PyTorch for the framework runs of `--full`.
    pub python: Option<PathBuf>,
    /// Prices for the scaling rows' cost per million samples (none: no cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing: Option<Pricing>,
    /// Measured only: run each copy test and collective on until the energy counter has
    /// stepped across this many seconds of it (`--energy-window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_window_s: Option<crate::model::EnergyWindow>,
    /// The soak stage's duration and loads (`--soak D`; the stage runs only when asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<crate::model::SoakOptions>,
}

/// What to run, and on which machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Job {
    /// The topology alone (`scalescope topo`).
    Topology { target: Target },
    /// Copy bandwidth and latency (`scalescope bench bandwidth`).
    Bandwidth {
        target: Target,
        options: BandwidthOptions,
        /// Model from line rates instead of measuring.
        #[serde(default)]
        modeled: bool,
        /// Modeled only: assume every GPU's PCIe link at (generation, width).
        #[serde(default)]
        pcie: Option<(u32, u32)>,
        /// Measured only: run each test on (untimed) until the energy counter has stepped
        /// across this many seconds of it, so that every test has its energy (`--energy-window`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        energy_window_s: Option<crate::model::EnergyWindow>,
    },
    /// Collectives (`scalescope bench collectives`, one process).
    Collectives {
        target: Target,
        options: CollectiveOptions,
        #[serde(default)]
        modeled: bool,
        #[serde(default)]
        nccl_lib: Option<PathBuf>,
        /// Measured only: run each test on (untimed) until the energy counter has stepped
        /// across this many seconds of it, so that every test has its energy (`--energy-window`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        energy_window_s: Option<crate::model::EnergyWindow>,
    },
    /// Weak and strong scaling (`scalescope bench scaling`).
    Scaling {
        target: Target,
        /// The GPUs (every GPU when none are named).
        #[serde(default)]
        gpus: crate::model::GpuSelection,
        workloads: Vec<Workload>,
        modes: Vec<Mode>,
        max_gpus: usize,
        /// `None`: modeled; else measured on the target's GPUs with these options.
        #[serde(default)]
        measure: Option<MeasureOptions>,
        /// Prices for the rows' cost per million samples (none: no cost).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pricing: Option<Pricing>,
    },
    /// The health check (`scalescope check`): modeled for captures and catalog machines.
    Check {
        target: Target,
        #[serde(default)]
        options: CheckOptions,
    },
    /// The whole suite (`scalescope --bench`).
    Suite {
        target: Target,
        options: SuiteOptions,
    },
}

impl Job {
    /// The machine the job works on.
    pub fn target(&self) -> &Target {
        match self {
            Self::Topology { target }
            | Self::Bandwidth { target, .. }
            | Self::Collectives { target, .. }
            | Self::Scaling { target, .. }
            | Self::Check { target, .. }
            | Self::Suite { target, .. } => target,
        }
    }

    /// The job's kind, as the protocol names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Topology { .. } => "topology",
            Self::Bandwidth { .. } => "bandwidth",
            Self::Collectives { .. } => "collectives",
            Self::Scaling { .. } => "scaling",
            Self::Check { .. } => "check",
            Self::Suite { .. } => "suite",
        }
    }

    /// The `--bench --modeled --catalog NAME` suite of `stages`: the catalog machine modeled,
    /// nothing measured, no prices.
    pub fn modeled_catalog(name: &str, stages: Vec<Stage>) -> Job {
        Job::Suite {
            target: Target::Catalog { name: name.into() },
            options: SuiteOptions {
                stages,
                gpus: Default::default(),
                full: false,
                modeled: true,
                nccl_lib: None,
                python: None,
                pricing: None,
                energy_window_s: None,
                soak: None,
            },
        }
    }

    /// The prices a scaling or suite job costs its rows with.
    pub fn pricing(&self) -> Option<Pricing> {
        match self {
            Self::Scaling { pricing, .. } => *pricing,
            Self::Suite { options, .. } => options.pricing,
            _ => None,
        }
    }

    /// True when the job measures (runs on the target's GPUs), false when it models.
    pub fn measures(&self) -> bool {
        match self {
            Self::Topology { .. } => false,
            Self::Bandwidth { modeled, .. } | Self::Collectives { modeled, .. } => !modeled,
            Self::Scaling { measure, .. } => measure.is_some(),
            Self::Check { target, .. } => matches!(target, Target::Live | Target::Topology { .. }),
            Self::Suite { options, .. } => !options.modeled,
        }
    }

    /// The NCCL library the job was told to load (`--nccl-lib`), where it measures.
    fn nccl_lib(&self) -> Option<&std::path::Path> {
        let named = match self {
            Self::Collectives { nccl_lib, .. } => nccl_lib.as_deref(),
            Self::Scaling { measure, .. } => measure.as_ref().and_then(|m| m.nccl_lib.as_deref()),
            Self::Check { options, .. } => {
                options.soak.as_ref().and_then(|s| s.nccl_lib.as_deref())
            }
            Self::Suite { options, .. } => options.nccl_lib.as_deref(),
            Self::Topology { .. } | Self::Bandwidth { .. } => None,
        };
        named.filter(|_| self.measures())
    }

    /// The preset a report of this job names (`quick`, `full`, or the job's kind).
    fn preset(&self) -> String {
        match self {
            Self::Suite { options, .. } if options.full => "full".into(),
            Self::Suite { .. } => "quick".into(),
            other => other.kind().into(),
        }
    }
}

/// How far a job is, and what it produced so far. Applied in order to an empty report
/// ([`apply`]), the events of a job give the report [`run`] returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The job started on this machine and topology (a report's header).
    Started {
        machine: Box<MachineInfo>,
        topology: Box<Topology>,
    },
    /// A stage began (`done` false) or ended (`done` true, after `seconds`).
    Stage {
        stage: Stage,
        done: bool,
        #[serde(default)]
        seconds: Option<f64>,
    },
    /// `done` of `total` steps of the running stage; `label` says which.
    Progress {
        done: usize,
        total: usize,
        label: String,
    },
    /// Bandwidth results finished since the last such event (the section is created by the
    /// first, with its source and backend).
    Bandwidth {
        source: Source,
        backend: String,
        results: Vec<BandwidthResult>,
    },
    /// Collective results finished since the last such event.
    Collectives {
        source: Source,
        backend: String,
        results: Vec<CollectiveResult>,
    },
    /// The scaling run so far (replaces the last one).
    Scaling { section: Box<ScalingSection> },
    /// The health check so far (replaces the last one).
    Health { report: Box<HealthReport> },
    /// A soak began: how it runs (the section, without samples yet).
    SoakStarted { section: Box<SoakSection> },
    /// A soak's samples and events since the last such event, how long it has run, and whether
    /// it ran its whole duration.
    SoakSamples {
        samples: Vec<SoakSample>,
        #[serde(default)]
        events: Vec<SoakEvent>,
        elapsed_s: f64,
        #[serde(default)]
        finished: bool,
    },
    /// Something the user should know about the figures.
    Warning { warning: Warning },
    /// A note in words (what was measured, what fell back to a model).
    Note { text: String },
}

/// Applies one event to `report`: what [`run`] does to its own report, and what any receiver
/// of the events does to its copy.
pub fn apply(report: &mut Report, event: &Event) {
    match event {
        Event::Started { machine, topology } => {
            report.machine = (**machine).clone();
            report.topology = (**topology).clone();
        }
        Event::Bandwidth {
            source,
            backend,
            results,
        } => {
            let section = report.bandwidth.get_or_insert_with(|| BandwidthSection {
                source: *source,
                backend: backend.clone(),
                results: Vec::new(),
            });
            section.results.extend(results.iter().cloned());
        }
        Event::Collectives {
            source,
            backend,
            results,
        } => {
            let section = report
                .collectives
                .get_or_insert_with(|| CollectivesSection {
                    source: *source,
                    backend: backend.clone(),
                    results: Vec::new(),
                });
            section.results.extend(results.iter().cloned());
            // The NCCL version the collectives ran with, for the machine's facts line.
            if report.machine.nccl_version.is_none() {
                report.machine.nccl_version = results
                    .iter()
                    .filter(|r| r.algo == crate::model::Algo::Nccl && r.source != Source::Modeled)
                    .find_map(|r| r.backend_version.clone());
            }
        }
        Event::Scaling { section } => report.scaling = Some((**section).clone()),
        Event::Health { report: h } => report.health = Some((**h).clone()),
        Event::SoakStarted { section } => report.soak = Some((**section).clone()),
        Event::SoakSamples {
            samples,
            events,
            elapsed_s,
            finished,
        } => {
            let soak = report.soak.get_or_insert_with(SoakSection::default);
            soak.samples.extend(samples.iter().cloned());
            soak.events.extend(events.iter().cloned());
            soak.elapsed_s = *elapsed_s;
            soak.finished = *finished;
        }
        Event::Warning { warning } => {
            if !report.warnings.contains(warning) {
                report.warnings.push(warning.clone());
            }
        }
        Event::Stage { stage, done, .. } => {
            report.stage_in_flight = (!done).then_some(StageInFlight::Running(*stage));
        }
        Event::Progress { .. } | Event::Note { .. } => {}
    }
}

/// An empty report to [`apply`] a job's events to.
pub fn empty_report() -> Report {
    Report::new(
        MachineInfo::default(),
        Topology::new(TopologySource::Imported { paths: Vec::new() }),
    )
}

/// Why a job could not run (or stopped on an error): one line, and the exit code the command
/// line ends with (2: the user's input, 1: the machine).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct JobError {
    pub code: i32,
    pub message: String,
    /// The machine's GPUs could not be read at all (no driver): the command line then says how
    /// to model a machine instead.
    #[serde(default)]
    pub no_driver: bool,
}

impl JobError {
    /// The user's input is at fault (exit 2).
    pub fn input(message: impl std::fmt::Display) -> Self {
        Self {
            code: 2,
            message: message.to_string(),
            no_driver: false,
        }
    }

    /// The machine is at fault (exit 1).
    pub fn machine(message: impl std::fmt::Display) -> Self {
        Self {
            code: 1,
            message: message.to_string(),
            no_driver: false,
        }
    }
}

impl JobError {
    /// The user's or the machine's, as the error itself says ([`Blame`]).
    fn blamed(e: impl Blame + std::fmt::Display) -> Self {
        if e.is_bad_input() {
            Self::input(e)
        } else {
            Self::machine(e)
        }
    }
}

impl From<TopologyError> for JobError {
    fn from(e: TopologyError) -> Self {
        let no_driver = matches!(e, TopologyError::NoDriver { .. });
        Self {
            no_driver,
            ..Self::blamed(e)
        }
    }
}

impl From<BenchError> for JobError {
    fn from(e: BenchError) -> Self {
        Self::blamed(e)
    }
}

/// Hooks for tests, handed in by whoever runs the job (the command line's and the agent's hidden
/// `--test-case-delay-ms`): a normal run passes [`TestHooks::default`], which does nothing, and
/// no layer reads them from the environment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TestHooks {
    /// Sleep this long after every finished case, so that a test can interrupt or cut a modeled
    /// run midway.
    pub case_delay: Option<Duration>,
    /// Alter one GEMM result of the soak on purpose (GPU position, seconds after the load
    /// began), to show that a wrong result is caught: the hidden `--test-corrupt-gemm`.
    pub corrupt_gemm: Option<crate::bench::cuda::soak::CorruptAt>,
}

/// The job's running state: its report, grown by the events it sends.
pub(crate) struct Ctx<'a> {
    pub report: Report,
    pub cancel: &'a AtomicBool,
    hooks: TestHooks,
    sink: &'a mut dyn FnMut(&Event),
    /// The job's prices: every scaling section sent carries its rows' costs.
    pub pricing: Option<Pricing>,
}

impl Ctx<'_> {
    /// Applies `event` to the job's report and sends it.
    pub fn emit(&mut self, event: Event) {
        apply(&mut self.report, &event);
        (self.sink)(&event);
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// After a finished case: waits as long as the test hooks say (not at all in a normal run).
    pub fn hooks(&self) -> TestHooks {
        self.hooks
    }

    pub fn after_case(&self) {
        if let Some(d) = self.hooks.case_delay {
            std::thread::sleep(d);
        }
    }

    pub fn warnings(&mut self, warnings: impl IntoIterator<Item = Warning>) {
        for warning in warnings {
            self.emit(Event::Warning { warning });
        }
    }
}

/// Runs `job` on this machine, sending its events to `sink`; stops after the step in flight
/// when `cancel` is set (the report then says `cancelled`, with what finished).
pub fn run(
    job: &Job,
    cancel: &AtomicBool,
    sink: &mut dyn FnMut(&Event),
) -> Result<Report, JobError> {
    run_with(job, TestHooks::default(), cancel, sink)
}

/// [`run`] with test hooks.
pub fn run_with(
    job: &Job,
    hooks: TestHooks,
    cancel: &AtomicBool,
    sink: &mut dyn FnMut(&Event),
) -> Result<Report, JobError> {
    job.validate().map_err(JobError::input)?;
    let target = job.target();
    if job.measures() && target.is_elsewhere() {
        return Err(JobError::input(
            "a catalog or imported machine cannot be measured from here: model it instead \
             (--modeled)",
        ));
    }
    // A named NCCL that is not there is the user's slip, said before anything runs (on one GPU
    // no collective would load it, and the run went on without a word).
    // A bare name (`libnccl.so.2`) is the loader's to find: only a path is checked here.
    if let Some(lib) = job
        .nccl_lib()
        .filter(|p| p.components().count() > 1 && !p.is_file())
    {
        return Err(JobError::input(format!(
            "--nccl-lib {}: no such file (the NCCL library to load, e.g. PyTorch's \
             …/site-packages/nvidia/nccl/lib/libnccl.so.2)",
            crate::model::validate::for_terminal(&lib.display().to_string())
        )));
    }
    let topo = target.load()?;
    let mut ctx = Ctx {
        report: empty_report(),
        cancel,
        hooks,
        sink,
        pricing: job.pricing(),
    };
    ctx.emit(Event::Started {
        machine: Box::new(machine_info(&topo, &job.preset())),
        topology: Box::new(topo.clone()),
    });
    match job {
        Job::Topology { .. } => {}
        Job::Bandwidth {
            options,
            modeled,
            pcie,
            energy_window_s,
            ..
        } => stages::bandwidth(
            &mut ctx,
            &topo,
            std::slice::from_ref(options),
            *modeled,
            *pcie,
            *energy_window_s,
        )?,
        Job::Collectives {
            options,
            modeled,
            nccl_lib,
            energy_window_s,
            ..
        } => stages::collectives(
            &mut ctx,
            &topo,
            std::slice::from_ref(options),
            *modeled,
            nccl_lib.as_deref(),
            *energy_window_s,
        )?,
        Job::Scaling {
            gpus,
            workloads,
            modes,
            max_gpus,
            measure,
            ..
        } => stages::scaling(
            &mut ctx,
            &topo,
            crate::scaling::run::Scope {
                gpus,
                workloads,
                modes,
                max_gpus: *max_gpus,
            },
            measure.as_ref(),
        )?,
        Job::Check { target, options } => stages::health(&mut ctx, &topo, target, options)?,
        Job::Suite { target, options } => stages::suite(&mut ctx, &topo, target, options)?,
    }
    ctx.report.cancelled = ctx.cancelled();
    Ok(ctx.report)
}

/// The machine a report describes, and what produced it.
pub fn machine_info(topo: &Topology, preset: &str) -> MachineInfo {
    let (hostname, driver, cuda) = match &topo.source {
        TopologySource::Live {
            hostname,
            driver_version,
            cuda_driver_version,
            ..
        } => (
            hostname.clone(),
            driver_version.clone(),
            cuda_driver_version.map(|v| format!("{}.{}", v / 1000, (v % 1000) / 10)),
        ),
        _ => (None, None, None),
    };
    MachineInfo {
        display_name: None,
        label: hostname.clone().unwrap_or_else(|| topo.title()),
        hostname,
        driver_version: driver,
        cuda_version: cuda,
        nccl_version: None,
        gpu_names: topo.gpus.iter().filter_map(|g| g.name.clone()).collect(),
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        scalescope_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: crate::process::command_line(),
        preset: preset.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measured job told to load an NCCL that is not there stops before anything runs, with
    /// the flag and the path (on one GPU no collective would have loaded it); a modeled one
    /// loads none and runs.
    #[test]
    fn a_named_nccl_that_is_not_there_stops_a_measured_job_before_it_runs() {
        let job = |modeled| Job::Collectives {
            target: Target::Live,
            options: Default::default(),
            modeled,
            nccl_lib: Some(PathBuf::from("/nonexistent/libnccl.so.2")),
            energy_window_s: None,
        };
        let cancel = AtomicBool::new(false);
        let e = run(&job(false), &cancel, &mut |_| {}).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--nccl-lib /nonexistent/libnccl.so.2: no such file"),
            "{e}"
        );
        assert_eq!(job(true).nccl_lib(), None);
        // A bare name is the loader's to find (LD_LIBRARY_PATH, the cache): not refused here.
        let bare = Job::Collectives {
            target: Target::Live,
            options: Default::default(),
            modeled: false,
            nccl_lib: Some(PathBuf::from("libnccl.so.2")),
            energy_window_s: None,
        };
        let e = run(&bare, &cancel, &mut |_| {}).unwrap_err();
        assert!(!e.to_string().starts_with("--nccl-lib"), "{e}");
    }

    /// The events of a modeled job, applied to an empty report, give the report the job returns:
    /// what a remote client rebuilds is what ran.
    #[test]
    fn events_replay_into_the_report() {
        let job = Job::Bandwidth {
            target: Target::Catalog {
                name: "h200-2x-sxm".into(),
            },
            options: BandwidthOptions {
                tests: vec![crate::model::TestId::P2pReadCe, crate::model::TestId::H2d],
                ..Default::default()
            },
            modeled: true,
            pcie: None,
            energy_window_s: None,
        };
        let mut replayed = empty_report();
        let mut n = 0;
        let report = run(&job, &AtomicBool::new(false), &mut |e| {
            apply(&mut replayed, e);
            n += 1;
        })
        .unwrap();
        assert!(n > 3);
        assert_eq!(replayed, report);
        assert!(!report.bandwidth.as_ref().unwrap().results.is_empty());
        // Over the wire (JSON) the events are the same.
        let job_json = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<Job>(&job_json).unwrap(), job);
    }

    #[test]
    fn measuring_another_machine_is_refused() {
        let job = Job::Bandwidth {
            target: Target::Catalog {
                name: "dgx-h100".into(),
            },
            options: BandwidthOptions::default(),
            modeled: false,
            pcie: None,
            energy_window_s: None,
        };
        let e = run(&job, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.contains("--modeled"), "{e}");
    }
}
