//! `scalescope --bench`: the whole suite (topology, bandwidth, collectives, scaling) in one
//! command, written to a folder as CSV, `report.json`, `report.html`, PNGs and `report.pdf`
//! (typeset on the CPU by [`crate::document`], in the headless build too). CSV, JSON and
//! HTML are rewritten after every finished test; Ctrl-C stops after the test in flight (the
//! GPUs are released as the backends drop) and exits 130 with what finished written; a second
//! Ctrl-C exits at once.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use super::interrupt::{self, CANCEL};
use super::output::{self, OutLock, write_atomic};
use super::run_job::{Stopped, Terminal, drive};
use super::stage_clock::StageClock;
use super::{CliError, SourceArgs, write_file};
use crate::export;
use crate::job::{Event, Job, Stage, SuiteOptions};
use crate::model::Topology;
use crate::model::validate::quoted;
use crate::report::{Report, StageInFlight};

/// Every file `--bench` writes into `--out`; an earlier run's are removed when a run starts, so
/// that the folder never mixes two runs.
const OUTPUT_FILES: [&str; 14] = [
    "gpus.csv",
    "links.csv",
    "health.csv",
    "bandwidth.csv",
    "collectives.csv",
    "scaling.csv",
    "report.json",
    "report.html",
    "report.png",
    "topology.png",
    "bandwidth.png",
    "collectives.png",
    "scaling.png",
    "report.pdf",
];

/// What `--bench` was asked to do.
#[derive(Clone, Debug)]
pub struct SuiteArgs {
    pub out: PathBuf,
    pub gpus: super::flags::GpuArgs,
    pub full: bool,
    pub suite: String,
    pub modeled: bool,
    pub source: SourceArgs,
    pub nccl_lib: Option<PathBuf>,
    /// Python with PyTorch for the real framework runs of --full.
    pub python: Option<PathBuf>,
    /// Run on a server instead of here (files are written here).
    pub remote: super::RemoteArgs,
    /// Prices the scaling rows are costed at.
    pub pricing: Option<crate::scaling::cost::Pricing>,
    /// How long each measured test runs on for its energy (`--energy-window`).
    pub energy_window_s: Option<crate::model::EnergyWindow>,
    /// The soak stage (`--soak D`), run after the others.
    pub soak: Option<crate::model::SoakOptions>,
}

fn parse_suite(s: &str) -> Result<Vec<Stage>, CliError> {
    if s.trim() == "all" {
        return Ok(Stage::ALL.to_vec());
    }
    // One list for both messages, so that a new stage cannot be left out of either.
    let known = Stage::ALL.map(|x| x.id()).join(", ");
    let mut out = Vec::new();
    for p in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let st = Stage::ALL
            .into_iter()
            .find(|x| x.id() == p)
            .ok_or_else(|| {
                CliError::input(anyhow::anyhow!(
                    "--suite: unknown stage {} (known: {known}, all)",
                    quoted(p)
                ))
            })?;
        if !out.contains(&st) {
            out.push(st);
        }
    }
    if out.is_empty() {
        return Err(CliError::input(anyhow::anyhow!(
            "--suite: no stage given (known: {known}, all)"
        )));
    }
    // Topology is always written: every other stage needs it.
    if !out.contains(&Stage::Topology) {
        out.insert(0, Stage::Topology);
    }
    Ok(out)
}

/// What the signal watcher needs to record a cancellation in report.json at once: the folder,
/// the last report written (consistent with the CSV files beside it) and the stage in flight.
struct Shared {
    dir: PathBuf,
    report: Option<Report>,
    stage: Option<StageInFlight>,
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
    r.stage_in_flight = stage;
    // report.html first: a second Ctrl-C may exit once report.json says `cancelled`.
    let html = crate::document::report_html(r);
    let _ = interrupt::writing(false, || {
        write_atomic(&dir.join("report.html"), html.as_bytes())
    });
    if let Ok(bytes) = export::json::report(r) {
        let _ = interrupt::writing(true, || write_atomic(&dir.join("report.json"), &bytes));
    }
}

/// Waits for a cancellation the watcher is recording (it holds the lock while it writes) and
/// leaves it nothing to write from now on; the stage that was in flight.
fn detach() -> Option<StageInFlight> {
    let mut guard = shared();
    let stage = guard.as_ref().and_then(|s| s.stage);
    *guard = None;
    stage
}

/// Everything the suite writes, rewritten (atomically) after each finished test.
struct Writer<'a> {
    dir: &'a Path,
    stages: &'a [Stage],
    /// When the next write is due (see [`Writer::write_soon`]).
    pacer: std::cell::Cell<output::Pacer>,
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
            pacer: std::cell::Cell::new(output::Pacer::new()),
        }
    }

    /// [`Writer::write`] after a finished test when [`output::Pacer`] says it is due: writing
    /// (each file fsynced, ~10 ms) then takes at most a fifth of the run. Tests on GPUs take
    /// longer than that, so each is written as it finishes; a modeled run finishing hundreds of
    /// results a second is written every few of them. The caller writes once more at the end
    /// of the stage.
    fn write_soon(&self, report: &Report) -> Result<(), CliError> {
        if self.pacer.get().due() {
            self.write(report)
        } else {
            Ok(())
        }
    }

    /// Marks the stage now running (`None` between stages and once finished).
    fn set_stage(&self, stage: Option<StageInFlight>) {
        if let Some(s) = shared().as_mut() {
            s.stage = stage;
        }
    }

    fn write(&self, report: &Report) -> Result<(), CliError> {
        let mut pacer = self.pacer.get();
        let result = pacer.timed(|| self.write_now(report));
        self.pacer.set(pacer);
        result
    }

    fn write_now(&self, report: &Report) -> Result<(), CliError> {
        let mut guard = shared();
        let stage = guard.as_ref().and_then(|s| s.stage);
        let (result, written) = self.write_as(report, stage);
        if let Some(s) = guard.as_mut() {
            s.report = Some(written);
        }
        result
    }

    /// Ends the writing; `true` when a signal came at any time. Waits for a cancellation the
    /// watcher is recording (it holds the lock while it writes), then takes the report away from
    /// it so that a later signal writes nothing: no exit can land in the middle of its write
    /// (a `.scalescope-tmp` left behind) or after a write that says `cancelled: false` with no
    /// record to follow. A signal that came meanwhile is recorded here, by this thread.
    fn close(&self, report: &Report) -> Result<bool, CliError> {
        let stage = detach();
        if interrupt::signalled() {
            self.write_as(report, stage).0?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Writes `report` as the files record it (cancelled or not, the stage in flight) and
    /// returns that record with the result.
    fn write_as(
        &self,
        report: &Report,
        stage: Option<StageInFlight>,
    ) -> (Result<(), CliError>, Report) {
        let mut r = report.clone();
        r.cancelled = interrupt::signalled();
        r.cancelled_by = interrupt::signal_name().map(str::to_string);
        r.stage_in_flight = stage;
        let result = interrupt::writing(r.cancelled, || self.write_files(&r));
        (result, r)
    }

    /// The CSV files of the stages run, report.json and report.html, as one atomic set
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
        if let Some(soak) = &report.soak {
            files.push((
                self.dir.join("soak.csv"),
                crate::health::soak_csv::rows(&soak.samples, &soak.events, true),
            ));
        }
        files.push((self.dir.join("report.json"), export::json::report(report)?));
        // The document beside it, rewritten with it so that the two always agree.
        files.push((
            self.dir.join("report.html"),
            crate::document::report_html(report).into_bytes(),
        ));
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
        crate::stderr_line!(
            "note: removed an earlier run's {} from {}",
            removed.join(", "),
            dir.display()
        );
    }
    Ok(())
}

/// How many scaling rows each source gave, e.g. `12 measured with PyTorch, 285 modeled`:
/// one word per row kind rather than the run's source beside "the model's rows are modeled".
fn row_kinds(rows: &[crate::scaling::table::ScalingPoint]) -> String {
    use crate::scaling::table::RowSource;
    let count = |k: RowSource| rows.iter().filter(|r| r.source == k).count();
    let parts: Vec<String> = [
        (RowSource::Framework, "measured with PyTorch"),
        (RowSource::Proxy, "synthetic proxy steps"),
        (RowSource::Modeled, "modeled"),
    ]
    .into_iter()
    .map(|(k, word)| (count(k), word))
    .filter(|&(n, _)| n > 0)
    .map(|(n, word)| format!("{n} {word}"))
    .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// The line `--bench` prints when a stage ends, from the report so far.
fn stage_line(stage: Stage, report: &Report, source_word: &str, seconds: f64) -> Option<String> {
    use crate::report::compare::{
        all_reduce_busbw_1g, format_copy_figure, format_figure_in, h2d_gbps, p2p_gbps,
    };
    Some(match stage {
        Stage::Topology => return None,
        Stage::Health => format!(
            "health       {}  [{seconds:.1} s] → health.csv (details: scalescope check)",
            report.health.as_ref()?.summary_line()
        ),
        Stage::Bandwidth => {
            let b = report.bandwidth.as_ref()?;
            let ok = b
                .results
                .iter()
                .filter(|r| r.status == crate::model::Status::Ok)
                .count();
            format!(
                "bandwidth    {} results ({ok} ok, {source_word}): P2P write {}, H2D {}  [{seconds:.1} s] → bandwidth.csv",
                b.results.len(),
                format_copy_figure(&p2p_gbps(report)),
                format_copy_figure(&h2d_gbps(report)),
            )
        }
        Stage::Collectives => format!(
            "collectives  {} results ({source_word}): all-reduce busbw @1 GiB {}  [{seconds:.1} s] → collectives.csv",
            report.collectives.as_ref()?.results.len(),
            format_figure_in(&all_reduce_busbw_1g(report), "GB/s"),
        ),
        Stage::Soak => {
            let s = report.soak.as_ref()?;
            format!(
                "soak         {} of {}, {} GPU{} × {} samples{}  [{seconds:.1} s] → soak.csv",
                crate::model::soak::duration_words(s.elapsed_s),
                crate::model::soak::duration_words(s.duration_s),
                s.sampled_gpus().len(),
                if s.sampled_gpus().len() == 1 { "" } else { "s" },
                s.samples.len() / s.sampled_gpus().len().max(1),
                if s.finished { "" } else { " (stopped early)" }
            )
        }
        Stage::Scaling => {
            let s = report.scaling.as_ref()?;
            format!(
                "scaling      {} rows over {} workloads ({})  [{seconds:.1} s] → scaling.csv",
                s.run.rows.len(),
                s.run.workloads.len(),
                row_kinds(&s.run.rows)
            )
        }
    })
}

/// Runs `--bench`: the suite job, here or on a server, its events written to `--out` as they
/// come (the checkpoint writer), then the PNGs and the PDF.
impl SuiteArgs {
    /// Refuses flags that would change nothing with these `stages`: measuring flags on another
    /// machine or with --modeled, prices without the scaling stage.
    fn refuse_what_does_not_apply(&self, stages: &[Stage]) -> Result<(), CliError> {
        self.source.refuse_measuring_elsewhere(self.modeled)?;
        super::energy_window_needs_measuring(self.energy_window_s, self.modeled)?;
        super::refuse_unused(
            &[(
                "prices (--price-per-gpu-hour, --capex-per-node, …)",
                self.pricing.is_some(),
            )],
            stages.contains(&Stage::Scaling),
            "cost the scaling rows: add scaling to --suite",
        )?;
        super::refuse_unused(
            &[
                ("--python", self.python.is_some()),
                ("--nccl-lib", self.nccl_lib.is_some()),
            ],
            !self.modeled,
            "runs on the GPUs: it does not apply with --modeled",
        )
    }
}

pub fn run(args: SuiteArgs) -> Result<(), CliError> {
    let started = Instant::now();
    // First: from here a signal cancels the run instead of killing the process, so whatever
    // it interrupts ends with a report saying `cancelled` or, before anything was measured,
    // with no report (a signal in the first milliseconds of the process, before this line,
    // ends it as the default action does: nothing is in --out yet either).
    interrupt::install(record_cancellation);
    let mut stages = parse_suite(&args.suite)?;
    if args.soak.is_some() {
        stages.push(Stage::Soak);
    }
    let gpus = args.gpus.selection()?;
    args.refuse_what_does_not_apply(&stages)?;
    let target = args.source.target_for(&args.remote)?;
    let mut runner = args.remote.runner()?;
    // The machine is read before --out is touched: a bad capture or GPU list leaves an earlier
    // run's files as they are.
    let topo = runner.topology(&target).map_err(|e| {
        args.source
            .hint(e, args.modeled, args.remote.remote.is_some())
    })?;
    check_before_writing(&topo, &gpus, &args.out)?;
    output::prepare_out_dir(&args.out)?;
    // Held until the process ends: a second run into the same folder is refused.
    let _lock = OutLock::acquire(&args.out)?;
    output::remove_stale_temps(&args.out);
    clear_earlier_run(&args.out)?;
    let preset = if args.full { "full" } else { "quick" };
    let writer = Writer::new(&args.out, &stages);
    let source_word = if args.modeled { "modeled" } else { "measured" };
    crate::stderr_line!(
        "scalescope --bench ({preset}, {source_word}) on {}{} → {}",
        topo.source.label(),
        args.remote
            .remote
            .as_deref()
            .map(|h| format!(" at {h}"))
            .unwrap_or_default(),
        args.out.display()
    );
    let job = Job::Suite {
        target,
        options: SuiteOptions {
            stages: stages.clone(),
            gpus,
            full: args.full,
            modeled: args.modeled,
            nccl_lib: args.nccl_lib.clone(),
            python: args.python.clone(),
            pricing: args.pricing,
            energy_window_s: args.energy_window_s,
            soak: args.soak.clone(),
        },
    };
    let mut clock = StageClock::default();
    let report = drive(&mut runner, &job, &CANCEL, false, &mut |e, report, term| {
        on_event(&writer, source_word, e, report, term, &mut clock)
    });
    let report = match report {
        Ok(r) => r,
        Err(Stopped::Write(e)) => {
            // The files stay as last written; only the watcher is stopped from writing.
            detach();
            return Err(e);
        }
        Err(Stopped::Job { error, report }) => {
            // What arrived is kept: a job that failed (or a connection that dropped) midway
            // leaves the files of what finished.
            let _ = writer.write(&report);
            if writer.close(&report)? {
                return Err(interrupted(&args.out));
            }
            return Err(error.into());
        }
    };

    writer.write(&report)?;
    let documents = if interrupt::cancelled() {
        Vec::new()
    } else {
        write_documents(&writer, &report, &args.out)?
    };
    // Whenever a signal came, the files say so before the process ends (see `close`).
    if writer.close(&report)? {
        return Err(interrupted(&args.out));
    }
    crate::stdout_line!(
        "report       report.json, report.html{}{}  [{:.1} s total] in {}",
        if documents.is_empty() { "" } else { ", " },
        documents.join(", "),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    for w in crate::bench::warning::summarize(&report.warnings, 3) {
        crate::stderr_line!("warning: {w}");
    }
    Ok(())
}

/// Before `out` is touched: every GPU of `gpus` is in `topo`, and no signal came yet (one
/// that did ends the run with nothing written).
fn check_before_writing(topo: &Topology, gpus: &[usize], out: &Path) -> Result<(), CliError> {
    for &g in gpus {
        if topo.gpu(g).is_none() {
            return Err(CliError::input(anyhow::anyhow!(
                "--gpus: no GPU {g} (the machine has GPUs {})",
                crate::model::quantities::gpu_list(&topo.gpu_indices())
            )));
        }
    }
    if interrupt::cancelled() {
        let signal = interrupt::signal_name().unwrap_or("a signal");
        return Err(CliError::interrupted(anyhow::anyhow!(
            "interrupted ({signal}) before anything was measured: nothing written to {}",
            out.display()
        )));
    }
    Ok(())
}

/// What the suite does with each event of its job: the topology's files and line, a stage's
/// files and line when it ends, the report rewritten soon after each result.
fn on_event(
    writer: &Writer<'_>,
    source_word: &str,
    e: &Event,
    report: &Report,
    term: &Terminal,
    clock: &mut StageClock,
) -> Result<(), CliError> {
    match e {
        Event::Started { topology, .. } => {
            writer.set_stage(Some(StageInFlight::Running(Stage::Topology)));
            let written = writer.write_topology(topology).and(writer.write(report));
            writer.set_stage(None);
            term.say(&format!(
                "topology     {}, {} links ({}) → gpus.csv, links.csv",
                crate::report::compare::gpus(topology.gpus.len()),
                topology.links.len(),
                topology.source.kind()
            ));
            written
        }
        Event::Stage {
            stage, done: false, ..
        } => {
            writer.set_stage(Some(StageInFlight::Running(*stage)));
            clock.start(*stage);
            Ok(())
        }
        Event::Stage {
            stage,
            done: true,
            seconds,
        } => {
            let written = writer.write(report);
            if let Some(line) = stage_line(*stage, report, source_word, seconds.unwrap_or_default())
            {
                term.say(&line);
            }
            if let Some(line) = clock.finish() {
                term.say(&line);
            }
            writer.set_stage(None);
            written
        }
        Event::Bandwidth { .. }
        | Event::Collectives { .. }
        | Event::Scaling { .. }
        | Event::Health { .. }
        | Event::SoakStarted { .. }
        | Event::SoakSamples { .. } => writer.write_soon(report),
        Event::Progress { label, .. } => {
            clock.progress(label);
            Ok(())
        }
        Event::Warning { .. } | Event::Note { .. } => Ok(()),
    }
}

/// Renders the PNGs and the PDF into `out`; a signal during the rendering skips writing the
/// rest (the message says so). Returns the names written.
fn write_documents(
    writer: &Writer<'_>,
    report: &Report,
    out: &Path,
) -> Result<Vec<&'static str>, CliError> {
    let mut documents = Vec::new();
    writer.set_stage(Some(StageInFlight::Pngs));
    for (name, result) in crate::document::render_all(report) {
        if interrupt::cancelled() {
            break;
        }
        match result {
            Ok(bytes) => {
                write_file(&out.join(name), &bytes)?;
                documents.push(name);
            }
            Err(e) => crate::stderr_line!("warning: {name} not written: {e:#}"),
        }
    }
    Ok(documents)
}

/// The error of a run a signal stopped: exit 128 + the signal (130 for Ctrl-C).
fn interrupted(out: &Path) -> CliError {
    let signal = interrupt::signal_name().unwrap_or("a signal");
    crate::stderr_line!(
        "interrupted: wrote what finished to {} (PNGs and PDF skipped)",
        out.display()
    );
    CliError::interrupted(anyhow::anyhow!("interrupted ({signal})"))
}
