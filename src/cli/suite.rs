//! `scalescope --bench`: the whole suite (topology, bandwidth, collectives, scaling) in one
//! command, written to a folder as CSV, `report.json` and PNGs. CSV and JSON are rewritten
//! after every finished test; Ctrl-C stops after the test in flight (the GPUs are released as
//! the backends drop) and exits 130 with what finished written; a second Ctrl-C exits at once.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::interrupt::{self, CANCEL};
use super::output::{self, OutLock, write_atomic};
use super::{CliError, SourceArgs, write_file};
use crate::bench::collectives::{
    CollCase, CollectiveBackend, CollectiveOptions, ModeledCollectives, plan as coll_plan,
    run_collectives,
};
use crate::bench::modeled::{Assumptions, ModeledBackend};
use crate::bench::plan::{DEFAULT_ITERS, DEFAULT_SAMPLES, PairScope, parse_gpu_list};
use crate::bench::{Backend, BandwidthOptions, Plan, run_bandwidth};
use crate::export;
use crate::model::units::parse_sizes;
use crate::model::validate::quoted;
use crate::model::{Algo, CollectiveOp, Source, TestId, Topology, TopologySource};
use crate::report::{BandwidthSection, CollectivesSection, MachineInfo, Report, ScalingSection};
use crate::scaling::Mode;
use crate::scaling::curve::CommCurve;
use crate::scaling::run::{
    DEFAULT_MAX_GPUS, MeasureOptions, run_measured, run_modeled, run_with_curve,
};
use crate::scaling::workload;

/// Test hook: when set, sleep this many ms after every finished case (lets tests interrupt a
/// modeled run midway). Unset in normal use; nothing sleeps.
pub const CASE_DELAY_ENV: &str = "SCALESCOPE_TEST_CASE_DELAY_MS";

/// Every file `--bench` writes into `--out`; an earlier run's are removed when a run starts, so
/// that the folder never mixes two runs.
const OUTPUT_FILES: [&str; 11] = [
    "gpus.csv",
    "links.csv",
    "bandwidth.csv",
    "collectives.csv",
    "scaling.csv",
    "report.json",
    "report.png",
    "topology.png",
    "bandwidth.png",
    "collectives.png",
    "scaling.png",
];

/// Workloads `--full` measures with proxy runs; the rest of the catalog is modeled on the machine
/// those runs measured.
/// Workloads `--full` measures: their real PyTorch steps (ResNet-50, GPT-2 XL, BERT-large) where
/// PyTorch is found, else proxies, and the TensorRT-style inference proxy.
const FULL_MEASURED_WORKLOADS: [&str; 4] =
    ["resnet50", "gpt2-xl", "bert-large", "resnet50-trt-fp16"];

/// The stages of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Topology,
    /// `scalescope check`: inventory and performance checks, the verdict.
    Health,
    Bandwidth,
    Collectives,
    Scaling,
}

impl Stage {
    const ALL: [Stage; 5] = [
        Stage::Topology,
        Stage::Health,
        Stage::Bandwidth,
        Stage::Collectives,
        Stage::Scaling,
    ];

    fn id(&self) -> &'static str {
        match self {
            Stage::Topology => "topology",
            Stage::Health => "health",
            Stage::Bandwidth => "bandwidth",
            Stage::Collectives => "collectives",
            Stage::Scaling => "scaling",
        }
    }
}

/// What `--bench` was asked to do.
#[derive(Clone, Debug)]
pub struct SuiteArgs {
    pub out: PathBuf,
    pub gpus: String,
    pub full: bool,
    pub suite: String,
    pub modeled: bool,
    pub source: SourceArgs,
    pub nccl_lib: Option<PathBuf>,
    /// Python with PyTorch for the real framework runs of --full.
    pub python: Option<PathBuf>,
}

fn parse_suite(s: &str) -> Result<Vec<Stage>, CliError> {
    if s.trim() == "all" {
        return Ok(Stage::ALL.to_vec());
    }
    let mut out = Vec::new();
    for p in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let st = Stage::ALL.into_iter().find(|x| x.id() == p).ok_or_else(|| {
            CliError::input(anyhow::anyhow!(
                "--suite: unknown stage {} (known: topology, health, bandwidth, collectives, scaling, all)",
                quoted(p)
            ))
        })?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    if out.is_empty() {
        return Err(CliError::input(anyhow::anyhow!(
            "--suite: no stage given (known: topology, bandwidth, collectives, scaling, all)"
        )));
    }
    // Topology is always written: every other stage needs it.
    if !out.contains(&Stage::Topology) {
        out.insert(0, Stage::Topology);
    }
    Ok(out)
}

fn sizes(s: &str) -> Vec<u64> {
    parse_sizes(s).unwrap_or_default()
}

/// The bandwidth options of a preset.
fn bandwidth_plans(full: bool, gpus: &[usize]) -> Vec<BandwidthOptions> {
    if full {
        // Every test at 512 MiB on every GPU and pair, except the slow ones: copies staged
        // through the host (peer access off) on the first pair of each kind of connection, and
        // pageable copies (one 512 MiB copy is ~70 ms there) with 2 copies per sample. Then
        // sweeps 4K..1G: host copies on every GPU, P2P on the first pair of each kind. On 2 GPUs
        // that is every pair; on an 8-GPU NVSwitch box it keeps --full within minutes.
        let slow = [
            TestId::H2dPageable,
            TestId::D2hPageable,
            TestId::P2pReadCeNopeer,
            TestId::P2pWriteCeNopeer,
            TestId::P2pBidirCeNopeer,
        ];
        let at_512m = |tests: Vec<TestId>, iters: u32, pairs: PairScope| BandwidthOptions {
            gpus: gpus.to_vec(),
            tests,
            sizes: vec![512 << 20],
            iters,
            samples: DEFAULT_SAMPLES,
            pairs,
            ..Default::default()
        };
        let sweep = |tests: Vec<TestId>, pairs: PairScope| BandwidthOptions {
            gpus: gpus.to_vec(),
            tests,
            sizes: sizes("4K..1G"),
            iters: 8,
            samples: 3,
            pairs,
            ..Default::default()
        };
        vec![
            at_512m(
                TestId::ALL
                    .iter()
                    .copied()
                    .filter(|t| !slow.contains(t))
                    .collect(),
                DEFAULT_ITERS,
                PairScope::All,
            ),
            at_512m(slow[..2].to_vec(), 2, PairScope::All),
            at_512m(slow[2..].to_vec(), DEFAULT_ITERS, PairScope::PerLinkKind),
            sweep(vec![TestId::H2d, TestId::D2h], PairScope::All),
            sweep(
                vec![TestId::P2pWriteCe, TestId::P2pReadCe],
                PairScope::PerLinkKind,
            ),
        ]
    } else {
        vec![BandwidthOptions {
            gpus: gpus.to_vec(),
            tests: vec![
                TestId::H2d,
                TestId::D2h,
                TestId::P2pWriteCe,
                TestId::P2pReadCe,
                TestId::P2pBidirCe,
                TestId::P2pWriteSm,
                TestId::LatencyD2d,
            ],
            sizes: vec![64 << 20, 512 << 20],
            iters: 8,
            samples: 3,
            pairs: PairScope::All,
            ..Default::default()
        }]
    }
}

/// The collectives options of a preset (each expanded into its own cases).
fn collective_plans(full: bool, gpus: &[usize]) -> Vec<CollectiveOptions> {
    let base = CollectiveOptions {
        gpus: gpus.to_vec(),
        ..Default::default()
    };
    if full {
        let mut ar = sizes("8..1G");
        ar.push(8 << 30);
        vec![
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Nccl],
                sizes: ar,
                ..base.clone()
            },
            CollectiveOptions {
                ops: CollectiveOp::ALL
                    .iter()
                    .copied()
                    .filter(|o| *o != CollectiveOp::AllReduce)
                    .collect(),
                algos: vec![Algo::Nccl],
                sizes: sizes("8..1G"),
                ..base.clone()
            },
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Ring, Algo::Tree, Algo::Host],
                sizes: sizes("1K..1G"),
                iters: 10,
                warmup: 3,
                ..base
            },
        ]
    } else {
        vec![
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Nccl],
                sizes: sizes("1K..1G"),
                iters: 10,
                warmup: 3,
                ..base.clone()
            },
            CollectiveOptions {
                ops: vec![
                    CollectiveOp::AllGather,
                    CollectiveOp::ReduceScatter,
                    CollectiveOp::Broadcast,
                ],
                algos: vec![Algo::Nccl],
                sizes: vec![1 << 20, 64 << 20, 1 << 30],
                iters: 10,
                warmup: 3,
                ..base
            },
        ]
    }
}

/// Adds warnings the report does not hold yet (the bandwidth and collectives stages each make
/// the same modeling assumptions about an imported machine).
fn add_warnings(report: &mut Report, new: impl IntoIterator<Item = crate::bench::Warning>) {
    for w in new {
        if !report.warnings.contains(&w) {
            report.warnings.push(w);
        }
    }
}

/// What the signal watcher needs to record a cancellation in report.json at once: the folder,
/// the last report written (consistent with the CSV files beside it) and the stage in flight.
struct Shared {
    dir: PathBuf,
    report: Option<Report>,
    stage: Option<&'static str>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

fn shared() -> std::sync::MutexGuard<'static, Option<Shared>> {
    SHARED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by the signal watcher right after the first signal: rewrites report.json as last
/// written, now saying `cancelled` and which stage was in flight.
fn record_cancellation() {
    let mut guard = shared();
    let Some(s) = guard.as_mut() else { return };
    let stage = s.stage;
    let dir = s.dir.clone();
    let Some(r) = s.report.as_mut() else { return };
    r.cancelled = true;
    r.cancelled_by = interrupt::signal_name().map(str::to_string);
    r.stage_in_flight = stage.map(str::to_string);
    if let Ok(bytes) = export::json::to_json(&*r) {
        let _ = interrupt::writing(true, || write_atomic(&dir.join("report.json"), &bytes));
    }
}

/// Everything the suite writes, rewritten (atomically) after each finished test.
struct Writer<'a> {
    dir: &'a Path,
    stages: &'a [Stage],
    /// When the last write ended and how long it took (see [`Writer::write_soon`]).
    last: std::cell::Cell<Option<(Instant, Duration)>>,
}

impl Writer<'_> {
    fn new<'a>(dir: &'a Path, stages: &'a [Stage]) -> Writer<'a> {
        *shared() = Some(Shared {
            dir: dir.to_path_buf(),
            report: None,
            stage: None,
        });
        Writer {
            dir,
            stages,
            last: std::cell::Cell::new(None),
        }
    }

    /// [`Writer::write`] after a finished test, unless the last write ended less than four of
    /// its own durations ago: writing (each file fsynced, ~10 ms) then takes at most a fifth of
    /// the run. Tests on GPUs take longer than that, so each is written as it finishes; a
    /// modeled run finishing hundreds of results a second is written every few of them. The
    /// caller writes once more at the end of the stage.
    fn write_soon(&self, report: &Report) -> Result<(), CliError> {
        if let Some((end, cost)) = self.last.get()
            && end.elapsed() < cost * 4
        {
            return Ok(());
        }
        self.write(report)
    }

    /// Marks the stage now running (`None` between stages and once finished).
    fn set_stage(&self, stage: Option<&'static str>) {
        if let Some(s) = shared().as_mut() {
            s.stage = stage;
        }
    }

    fn write(&self, report: &Report) -> Result<(), CliError> {
        let start = Instant::now();
        let mut guard = shared();
        let stage = guard.as_ref().and_then(|s| s.stage);
        let mut r = report.clone();
        r.cancelled = interrupt::signalled();
        r.cancelled_by = interrupt::signal_name().map(str::to_string);
        r.stage_in_flight = stage.map(str::to_string);
        let result = interrupt::writing(r.cancelled, || self.write_files(&r));
        if let Some(s) = guard.as_mut() {
            s.report = Some(r);
        }
        self.last.set(Some((Instant::now(), start.elapsed())));
        result
    }

    /// The CSV files of the stages run and report.json, as one atomic set
    /// ([`output::write_all_atomic`]): on a full disk the earlier set stays, consistent.
    fn write_files(&self, report: &Report) -> Result<(), CliError> {
        let has = |s: Stage| self.stages.contains(&s);
        let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        if has(Stage::Health) {
            let rows = report
                .health
                .as_ref()
                .map(|h| h.checks.as_slice())
                .unwrap_or(&[]);
            files.push((self.dir.join("health.csv"), export::csv::health(rows)?));
        }
        if has(Stage::Bandwidth) {
            let rows = report
                .bandwidth
                .as_ref()
                .map(|b| b.results.as_slice())
                .unwrap_or(&[]);
            files.push((
                self.dir.join("bandwidth.csv"),
                export::csv::bandwidth(rows)?,
            ));
        }
        if has(Stage::Collectives) {
            let rows = report
                .collectives
                .as_ref()
                .map(|c| c.results.as_slice())
                .unwrap_or(&[]);
            files.push((
                self.dir.join("collectives.csv"),
                export::csv::collectives(rows)?,
            ));
        }
        if has(Stage::Scaling) {
            let rows = report
                .scaling
                .as_ref()
                .map(|s| s.run.rows.as_slice())
                .unwrap_or(&[]);
            files.push((self.dir.join("scaling.csv"), export::csv::scaling(rows)?));
        }
        files.push((self.dir.join("report.json"), export::json::to_json(report)?));
        let set: Vec<(&Path, &[u8])> = files
            .iter()
            .map(|(p, b)| (p.as_path(), b.as_slice()))
            .collect();
        output::write_all_atomic(&set).map_err(|(p, e)| output::write_error(p, e))
    }

    fn write_topology(&self, topo: &Topology) -> Result<(), CliError> {
        write_file(&self.dir.join("gpus.csv"), &export::csv::gpus(topo)?)?;
        write_file(&self.dir.join("links.csv"), &export::csv::links(topo)?)
    }
}

/// A write error met inside a runner's callback: kept, and the run stopped (nothing more could
/// be saved); returned once the runner is back.
fn keep_first_error(slot: &mut Option<CliError>, result: Result<(), CliError>) {
    if slot.is_none()
        && let Err(e) = result
    {
        *slot = Some(e);
        interrupt::stop();
    }
}

/// Removes the files of an earlier run in `dir` (only the names `--bench` writes) and says so.
fn clear_earlier_run(dir: &Path) -> Result<(), CliError> {
    let mut removed = Vec::new();
    for name in OUTPUT_FILES {
        let p = dir.join(name);
        if p.is_file() {
            std::fs::remove_file(&p).map_err(|e| output::write_error(&p, e))?;
            removed.push(name);
        }
    }
    if !removed.is_empty() {
        eprintln!(
            "note: removed an earlier run's {} from {}",
            removed.join(", "),
            dir.display()
        );
    }
    Ok(())
}

fn case_delay() -> Option<Duration> {
    std::env::var(CASE_DELAY_ENV)
        .ok()?
        .parse::<u64>()
        .ok()
        .map(Duration::from_millis)
}

fn machine_info(topo: &Topology, preset: &str) -> MachineInfo {
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
        label: hostname.clone().unwrap_or_else(|| topo.title()),
        hostname,
        driver_version: driver,
        cuda_version: cuda,
        nccl_version: None,
        gpu_names: topo.gpus.iter().filter_map(|g| g.name.clone()).collect(),
        created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        scalescope_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        preset: preset.to_string(),
    }
}

/// Runs `--bench`.
pub fn run(args: SuiteArgs) -> Result<(), CliError> {
    let started = Instant::now();
    let stages = parse_suite(&args.suite)?;
    let gpus = parse_gpu_list(&args.gpus)?;
    let topo = args.source.load_or_hint(args.modeled)?;
    for &g in &gpus {
        if topo.gpu(g).is_none() {
            return Err(CliError::input(anyhow::anyhow!(
                "--gpus: GPU {g} is not in the topology (GPUs: {:?})",
                topo.gpu_indices()
            )));
        }
    }
    output::prepare_out_dir(&args.out)?;
    // Held until the process ends: a second run into the same folder is refused.
    let _lock = OutLock::acquire(&args.out)?;
    output::remove_stale_temps(&args.out);
    clear_earlier_run(&args.out)?;
    interrupt::install(record_cancellation);
    let preset = if args.full { "full" } else { "quick" };
    let mut report = Report::new(machine_info(&topo, preset), topo.clone());
    let writer = Writer::new(&args.out, &stages);
    let delay = case_delay();
    let pause = || {
        if let Some(d) = delay {
            std::thread::sleep(d);
        }
    };
    let source_word = if args.modeled { "modeled" } else { "measured" };
    eprintln!(
        "scalescope --bench ({preset}, {source_word}) on {} → {}",
        topo.source.label(),
        args.out.display()
    );

    // Topology.
    writer.set_stage(Some(Stage::Topology.id()));
    writer.write_topology(&topo)?;
    writer.write(&report)?;
    writer.set_stage(None);
    println!(
        "topology     {} GPUs, {} links ({}) → gpus.csv, links.csv",
        topo.gpus.len(),
        topo.links.len(),
        topo.source.kind()
    );

    let mut curve: Option<CommCurve> = None;
    for stage in &stages {
        if interrupt::cancelled() {
            break;
        }
        let t0 = Instant::now();
        writer.set_stage(Some(stage.id()));
        match stage {
            Stage::Topology => {}
            Stage::Health => {
                let opts = crate::health::run::CheckOptions {
                    gpus: gpus.clone(),
                    quick: !args.full,
                    thresholds: crate::health::Thresholds::default(),
                };
                let health = if args.modeled {
                    let (before, after) = args.source.load_inventory()?;
                    crate::health::run::check_described(&topo, before, after, &opts)
                } else {
                    let bar = super::progress_bar(0);
                    let (h, warnings) =
                        crate::health::run::check_live(&topo, &opts, &CANCEL, &mut |p, _| {
                            bar.set_length(p.total as u64);
                            bar.set_position(p.done as u64);
                            bar.set_message(p.last.clone());
                            pause();
                        })
                        .map_err(|e| CliError::env(anyhow::anyhow!(e)))?;
                    bar.finish_and_clear();
                    add_warnings(&mut report, warnings);
                    h
                };
                let line = health.summary_line();
                report.health = Some(health);
                writer.write(&report)?;
                println!(
                    "health       {line}  [{:.1} s] → health.csv (details: scalescope check)",
                    t0.elapsed().as_secs_f64()
                );
            }
            Stage::Bandwidth => {
                let mut backend: Box<dyn Backend> = if args.modeled {
                    let (b, w) = ModeledBackend::new(&topo, Assumptions::default());
                    add_warnings(&mut report, w);
                    Box::new(b)
                } else {
                    Box::new(crate::bench::cuda::CudaBackend::new(&topo)?)
                };
                let plans: Vec<Plan> = bandwidth_plans(args.full, &gpus)
                    .iter()
                    .map(|o| Plan::new(&topo, o))
                    .collect::<Result<_, _>>()?;
                let total: usize = plans.iter().map(|p| p.cases.len()).sum();
                let bar = super::progress_bar(total as u64);
                bar.set_prefix("bandwidth");
                let mut section = BandwidthSection {
                    source: backend.source(),
                    backend: backend.describe(),
                    results: Vec::new(),
                };
                let mut done_before = 0;
                let mut write_error = None;
                for plan in &plans {
                    let before = section.results.clone();
                    let outcome =
                        run_bandwidth(&topo, plan, backend.as_mut(), &CANCEL, &mut |p, results| {
                            bar.set_position((done_before + p.done) as u64);
                            bar.set_message(p.last.clone());
                            let mut all = before.clone();
                            all.extend_from_slice(results);
                            report.bandwidth = Some(BandwidthSection {
                                results: all,
                                ..section.clone()
                            });
                            keep_first_error(&mut write_error, writer.write_soon(&report));
                            pause();
                        });
                    done_before += plan.cases.len();
                    section.results.extend(outcome.results);
                    add_warnings(&mut report, outcome.warnings);
                    if outcome.cancelled {
                        break;
                    }
                }
                bar.finish_and_clear();
                drop(backend);
                if let Some(e) = write_error {
                    return Err(e);
                }
                let ok = section
                    .results
                    .iter()
                    .filter(|r| r.status == crate::model::Status::Ok)
                    .count();
                let n = section.results.len();
                report.bandwidth = Some(section);
                writer.write(&report)?;
                let p2p = crate::report::compare::p2p_gbps(&report);
                let h2d = crate::report::compare::h2d_gbps(&report);
                println!(
                    "bandwidth    {n} results ({ok} ok, {source_word}): P2P {} GB/s, H2D {} GB/s  [{:.1} s] → bandwidth.csv",
                    crate::report::compare::format_figure(&p2p),
                    crate::report::compare::format_figure(&h2d),
                    t0.elapsed().as_secs_f64()
                );
            }
            Stage::Collectives => {
                let mut backend: Box<dyn CollectiveBackend> = if args.modeled {
                    let (bw, w) = ModeledBackend::new(&topo, Assumptions::default());
                    add_warnings(&mut report, w);
                    Box::new(ModeledCollectives::new(bw.topology()))
                } else {
                    Box::new(crate::bench::cuda::collectives::CudaCollectives::new(
                        &topo,
                        args.nccl_lib.as_deref(),
                    )?)
                };
                let mut cases: Vec<CollCase> = Vec::new();
                for o in collective_plans(args.full, &gpus) {
                    let (_, c) = coll_plan(&topo, &o)?;
                    cases.extend(c);
                }
                let bar = super::progress_bar(cases.len() as u64);
                let mut section = CollectivesSection {
                    source: backend.source(),
                    backend: backend.describe(),
                    results: Vec::new(),
                };
                let mut warnings = Vec::new();
                let mut write_error = None;
                let (results, _) = run_collectives(
                    &cases,
                    backend.as_mut(),
                    &CANCEL,
                    &mut warnings,
                    &mut |done, _, results| {
                        bar.set_position(done as u64);
                        if let Some(r) = results.last() {
                            bar.set_message(format!(
                                "{} {} {}",
                                r.op,
                                r.algo,
                                crate::model::units::format_bytes(r.bytes)
                            ));
                        }
                        report.collectives = Some(CollectivesSection {
                            results: results.to_vec(),
                            ..section.clone()
                        });
                        keep_first_error(&mut write_error, writer.write_soon(&report));
                        pause();
                    },
                );
                bar.finish_and_clear();
                drop(backend);
                if let Some(e) = write_error {
                    return Err(e);
                }
                report.machine.nccl_version = results
                    .iter()
                    .filter(|r| r.algo == Algo::Nccl)
                    .find_map(|r| r.backend_version.as_deref())
                    .and_then(|v| v.strip_prefix("NCCL "))
                    .map(str::to_string);
                section.results = results;
                add_warnings(&mut report, warnings);
                curve = CommCurve::from_results(&section.results);
                report.collectives = Some(section);
                writer.write(&report)?;
                let ar = crate::report::compare::all_reduce_busbw_1g(&report);
                println!(
                    "collectives  {} results ({source_word}): all-reduce busbw @1 GiB {} GB/s  [{:.1} s] → collectives.csv",
                    report.collectives.as_ref().map_or(0, |c| c.results.len()),
                    crate::report::compare::format_figure(&ar),
                    t0.elapsed().as_secs_f64()
                );
            }
            Stage::Scaling => {
                let workloads = workload::catalog();
                let modes = Mode::ALL.to_vec();
                let bar = super::progress_bar(0);
                let mut write_error = None;
                let run = if args.modeled {
                    run_modeled(&topo, &gpus, &workloads, &modes, DEFAULT_MAX_GPUS)
                } else if args.full {
                    // Framework (or proxy) runs for the workloads the benchmarks track; the rest
                    // of the catalog is modeled on the machine those runs measured (GEMM rate,
                    // all-reduce curve, calibrations), so --full stays within minutes.
                    let (proxied, rest): (Vec<_>, Vec<_>) = workloads
                        .iter()
                        .cloned()
                        .partition(|w| FULL_MEASURED_WORKLOADS.contains(&w.name.as_str()));
                    run_measured(
                        &topo,
                        &gpus,
                        &proxied,
                        &modes,
                        DEFAULT_MAX_GPUS,
                        &MeasureOptions {
                            nccl_lib: args.nccl_lib.clone(),
                            python: args.python.clone(),
                            ..Default::default()
                        },
                        &CANCEL,
                        &mut |label, partial| {
                            bar.set_message(label.to_string());
                            if !partial.rows.is_empty() {
                                report.scaling = Some(ScalingSection {
                                    source: Source::Measured,
                                    run: partial.clone(),
                                });
                                keep_first_error(&mut write_error, writer.write_soon(&report));
                            }
                        },
                    )
                    .map_err(|e| CliError::env(anyhow::anyhow!(e)))
                    .map(|mut run| {
                        if let Some(machine) = run.machine.clone() {
                            for w in &rest {
                                run.rows.extend(crate::scaling::model::model(
                                    w,
                                    &machine,
                                    &modes,
                                    DEFAULT_MAX_GPUS,
                                ));
                            }
                            run.workloads.extend(rest.iter().cloned());
                            run.notes.push(format!(
                                "measured runs for {}; the other workloads modeled on the measured machine",
                                FULL_MEASURED_WORKLOADS.join(", ")
                            ));
                        }
                        run
                    })?
                } else {
                    match curve.clone() {
                        Some(c) => {
                            run_with_curve(&topo, &gpus, &workloads, &modes, DEFAULT_MAX_GPUS, c)
                        }
                        None => {
                            let mut r =
                                run_modeled(&topo, &gpus, &workloads, &modes, DEFAULT_MAX_GPUS);
                            r.notes.push(
                                "no measured all-reduce curve (collectives not run): modeled curve used"
                                    .into(),
                            );
                            r
                        }
                    }
                };
                bar.finish_and_clear();
                if let Some(e) = write_error {
                    return Err(e);
                }
                let measured = run.rows.iter().any(|r| r.source.is_measured())
                    || run
                        .machine
                        .as_ref()
                        .and_then(|m| m.comm.as_ref())
                        .is_some_and(|c| c.source == Source::Measured);
                let source = if measured {
                    Source::Measured
                } else {
                    Source::Modeled
                };
                let n = run.rows.len();
                report.scaling = Some(ScalingSection { source, run });
                writer.write(&report)?;
                println!(
                    "scaling      {n} rows over {} workloads ({source}; the model's rows are modeled)  [{:.1} s] → scaling.csv",
                    workloads.len(),
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        if !interrupt::cancelled() {
            writer.set_stage(None);
        }
    }

    writer.write(&report)?;
    if interrupt::cancelled() {
        return Err(interrupted(&args.out));
    }
    writer.set_stage(Some("pngs"));
    let rendered = render_pngs(&report);
    if interrupt::cancelled() {
        writer.write(&report)?;
        return Err(interrupted(&args.out));
    }
    let mut pngs = Vec::new();
    for (name, result) in rendered {
        match result {
            Ok(bytes) => {
                write_file(&args.out.join(name), &bytes)?;
                pngs.push(name);
            }
            Err(e) => eprintln!("warning: {name} not written: {e:#}"),
        }
    }
    if interrupt::cancelled() {
        writer.write(&report)?;
        return Err(interrupted(&args.out));
    }
    writer.set_stage(None);
    println!(
        "report       report.json{}{}  [{:.1} s total] in {}",
        if pngs.is_empty() { "" } else { ", " },
        pngs.join(", "),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    for w in crate::bench::warning::summarize(&report.warnings, 3) {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// The error of a run a signal stopped: exit 128 + the signal (130 for Ctrl-C).
fn interrupted(out: &Path) -> CliError {
    let signal = interrupt::signal_name().unwrap_or("a signal");
    eprintln!(
        "interrupted: wrote what finished to {} (PNGs skipped)",
        out.display()
    );
    CliError::interrupted(anyhow::anyhow!("interrupted ({signal})"))
}

/// The report's PNGs, rendered offscreen through the app's views: (file name, bytes or why not).
#[cfg(feature = "gui")]
fn render_pngs(report: &Report) -> Vec<(&'static str, anyhow::Result<Vec<u8>>)> {
    crate::ui::report_view::render_all(report)
}

/// A headless build draws nothing: the PNGs are rendered elsewhere from report.json.
#[cfg(not(feature = "gui"))]
fn render_pngs(_: &Report) -> Vec<(&'static str, anyhow::Result<Vec<u8>>)> {
    eprintln!(
        "warning: PNGs not written: this is the headless build; render them with a full build \
         (`cargo run --release --example render_report -- report.json OUTDIR`) or open \
         report.json in the app"
    );
    Vec::new()
}
