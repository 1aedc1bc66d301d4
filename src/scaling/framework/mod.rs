//! Real framework runs: each workload's training step in PyTorch, the measured truth that the
//! model is calibrated from and checked against.
//!
//! scalescope writes its training script (assets/frameworks/ddp_step.py, embedded in the binary)
//! to a temporary folder and launches it with `python3 -m torch.distributed.run --standalone
//! --nproc_per_node=N` for N = 1, 2, 4, … and all selected GPUs, `CUDA_VISIBLE_DEVICES` set to
//! the first N of them. The script prints one JSON object per line (its docstring is the
//! protocol); this module parses them, reports progress, enforces a timeout, and turns each
//! launch into rows — a crash, a hang, garbage or an out-of-memory becomes a row that says so,
//! and the other launches still run.
//!
//! One file per stage: `python` finds a Python with PyTorch, `launch` writes the script and runs
//! each launch (spec, process group, time limit), `protocol` reads its JSON lines, and `rows`
//! turns launches into rows, calibrations and notes; [`run`] drives them.

mod launch;
mod protocol;
mod python;
mod rows;
mod side;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::calibrate::{MeasuredStep, ProbeRates};
use super::memory;
use super::proxy::proxy_counts;
use super::table::{Mode, OverlapMeasure, ScalingPoint};
use super::workload::{Pattern, Workload};
use crate::model::quantities::gpu_list;
pub use launch::{DEFAULT_TIMEOUT, LaunchOutcome, SCRIPT, WorkloadEnd, launch};
use launch::{ScriptDir, launch_script, spec};
pub use protocol::{
    Event, ProbeLine, Profile, ProfileSet, ResultLine, StepStats, clip, parse_line,
};
pub use python::{ENV_PYTHON, PythonEnv, find_python};
use rows::{absorb, absorb_probes, finish, overlap_probe, probe_spec, row};

/// Why no framework run could start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FrameworkError {
    /// No interpreter answered.
    #[error("no python3 found (tried {tried}); give one with --python PATH or {ENV_PYTHON}")]
    NoPython { tried: String },
    /// The interpreter has no (working) PyTorch.
    #[error("{python} has no working PyTorch ({message})")]
    NoTorch { python: String, message: String },
    /// The script could not be written.
    #[error("cannot write the training script to {path}: {message}")]
    Script { path: String, message: String },
}

/// What to run.
#[derive(Clone, Debug)]
pub struct FrameworkOptions {
    /// CUDA ordinals; a launch on n GPUs uses the first n.
    pub gpus: Vec<usize>,
    pub modes: Vec<Mode>,
    /// The workloads whose strong mode runs (`None`: every one); the others' strong rows stay
    /// modeled. `--full` keeps its time so: a language model's strong step at one GPU is its
    /// whole global batch (GPT-2 XL: 3 s a step).
    pub strong_for: Option<Vec<String>>,
    /// Limit of one launch.
    pub timeout: Duration,
    /// Seconds of untimed steps, then of timed steps.
    pub warmup_s: f64,
    /// Seconds of untimed steps of every run after a launch's first (the GPU already warm).
    pub warmup_next_s: f64,
    pub measure_s: f64,
    /// Where the timed steps spread widely (p90 > 1.15 × p10: a host whose speed wanders), the
    /// timed window grows to this many seconds (no growth when ≤ `measure_s`).
    pub noisy_measure_s: f64,
    /// Steps under the profiler after timing (0: none).
    pub profile_steps: u32,
    /// One GPU's memory, GiB: launches that cannot fit are not started.
    pub gpu_memory_gib: Option<f64>,
    /// Time DDP at one rank in a workload's first run only (else also in a later run whose
    /// step is at most 0.5 s).
    pub ddp_one_once: bool,
    /// Seconds of host-probe timings in the overlap probe (the host's speed, GPU 0 alone).
    pub probe_host_s: f64,
    /// The 1-GPU runs go side by side, one launch per GPU at once, each GPU running its share
    /// of the workloads (`--full`'s time; only where the GPUs are alike: each workload's 1-GPU
    /// step is then its step on any of them).
    pub one_gpu_side_by_side: bool,
}

impl Default for FrameworkOptions {
    fn default() -> Self {
        Self {
            gpus: Vec::new(),
            modes: Mode::ALL.to_vec(),
            strong_for: None,
            timeout: DEFAULT_TIMEOUT,
            warmup_s: 5.0,
            warmup_next_s: 5.0,
            measure_s: 8.0,
            noisy_measure_s: 24.0,
            profile_steps: 2,
            gpu_memory_gib: None,
            ddp_one_once: false,
            probe_host_s: 8.0,
            one_gpu_side_by_side: false,
        }
    }
}

/// Everything the framework runs produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameworkRun {
    /// Measured rows (`measured_framework`), with speedups against the 1-GPU rows.
    pub rows: Vec<ScalingPoint>,
    /// 1-GPU steps, per workload and mode: they calibrate the model.
    pub steps: Vec<MeasuredStep>,
    /// The overlap probe's hidden share, per workload (two GPUs or more).
    pub overlap: Vec<OverlapMeasure>,
    /// The probe's rates on the first GPU.
    pub probe: Option<ProbeRates>,
    /// What failed or was skipped, in words.
    pub notes: Vec<String>,
    /// Where the PyTorch launches' time went, and how many there were.
    pub time: launch::PhaseTimes,
    pub launches: usize,
    /// How many of them ran side by side with another (their seconds overlap).
    pub side_by_side: usize,
}

impl FrameworkRun {
    /// `3 PyTorch launches, 236 s: measure 80.1 s, start 41.0 s, …`; `None` without a launch.
    /// Launches that ran side by side count their seconds each (the sum is more than the time
    /// they took), and the note says so.
    pub fn time_note(&self) -> Option<String> {
        (self.launches > 0).then(|| {
            let overlap = match self.side_by_side {
                0 => String::new(),
                k => format!(" ({k} of them side by side: their seconds are summed)"),
            };
            format!(
                "{} PyTorch launch{}{overlap}, {:.0} s: {}",
                self.launches,
                if self.launches == 1 { "" } else { "es" },
                self.time.total(),
                self.time.describe()
            )
        })
    }
}

/// One workload's launch on n GPUs: its spec and the (mode, per-GPU batch) it plans.
type Planned<'a> = (&'a Workload, serde_json::Value, Vec<(Mode, f64)>);

/// What every launch of a run shares: the Python, the script written for it, the options and
/// the cancel flag.
#[derive(Clone, Copy)]
struct Launcher<'a> {
    env: &'a PythonEnv,
    script: &'a str,
    opts: &'a FrameworkOptions,
    cancel: &'a AtomicBool,
}

impl<'a> Launcher<'a> {
    fn new(
        env: &'a PythonEnv,
        script: &'a str,
        opts: &'a FrameworkOptions,
        cancel: &'a AtomicBool,
    ) -> Self {
        Self {
            env,
            script,
            opts,
            cancel,
        }
    }
}

/// The workloads a framework run can build: DDP/FSDP patterns with a reference model.
pub fn runnable(w: &Workload) -> bool {
    w.pattern.has_framework_step() && w.model.is_some()
}

/// Runs every runnable workload's real training step on 1, 2, 4, … and all of `opts.gpus`, then
/// the overlap probe on all of them; `progress` gets a label and the rows so far after every
/// launch. Failures are rows and notes, never an early end; only a missing script folder is an
/// error.
pub fn run(
    env: &PythonEnv,
    workloads: &[Workload],
    opts: &FrameworkOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) -> Result<FrameworkRun, FrameworkError> {
    let dir = ScriptDir::new()?;
    let script = dir.script().display().to_string();
    let launcher = Launcher::new(env, &script, opts, cancel);
    let mut run = FrameworkRun::default();
    let basis_env = env.describe();
    let mut runnable = as_launched(workloads, opts, &mut run.notes);
    // One launch per GPU count runs every workload in turn (one process group, one Python and
    // PyTorch start-up, each model built once); a workload that ran out of memory or did not
    // get to run in it is launched again alone.
    let counts = proxy_counts(opts.gpus.len());
    let mut probed = false;
    for &n in &counts {
        if cancel.load(Ordering::Relaxed) {
            run.notes.push("framework runs cancelled".into());
            return Ok(finish(run, workloads));
        }
        let batch = plan_batch(&runnable, n, opts, &mut run, progress);
        let mut fitted: Vec<(String, f64)> = Vec::new();
        if batch.is_empty() {
            continue;
        }
        let shares = side::shares(batch, n, opts);
        if let Some(note) = side::note(&shares) {
            run.side_by_side += shares.len();
            run.notes.push(note);
        }
        let names: Vec<&str> = shares
            .iter()
            .flat_map(|(_, part)| part.iter().map(|(w, _, _)| w.name.as_str()))
            .collect();
        let label = format!("PyTorch: {} on {n} GPU(s)", names.join(", "));
        progress(&label, &run.rows);
        let rows_so_far = run.rows.clone();
        let mut probes = Vec::new();
        let mut specs = Vec::new();
        for (gpus, part) in &shares {
            let (combined, probe) = spec_with_probe(part, n, &run, workloads, opts);
            specs.push((gpus.clone(), combined));
            probes.push(probe);
        }
        let outcomes = side::launch_together(&env.path, &script, &specs, opts, cancel, &mut |e| {
            if let Some(l) = phase_label(e, "", n) {
                progress(&l, &rows_so_far);
            }
        });
        for ((share, together), probe) in shares.into_iter().zip(outcomes).zip(probes) {
            run.time.merge(&together.phases);
            run.launches += 1;
            probed |= take_probe(&mut run, &together, probe, n);
            let ran = Ran {
                launch: &together,
                n,
                label: &label,
                basis_env: &basis_env,
                workloads,
            };
            absorb_share(&launcher, share, &ran, &mut run, &mut fitted, progress);
        }
        if counts.last().is_some_and(|&last| last > n) {
            keep_what_fit(&mut runnable, fitted, n, &mut run.notes);
        }
    }
    // The probe's GEMM and copy rates move catalog calibrations here (also on one GPU), its
    // overlap needs two: alone where no launch ended with it (one GPU, or a crash before it).
    if !probed && !opts.gpus.is_empty() && !cancel.load(Ordering::Relaxed) && !run.steps.is_empty()
    {
        overlap_probe(
            &mut run,
            env,
            &script,
            workloads,
            opts,
            cancel,
            &mut *progress,
        );
    }
    Ok(finish(run, workloads))
}

/// A launch on `n` GPUs that has ended, and what its workloads' rows need.
struct Ran<'a> {
    launch: &'a LaunchOutcome,
    n: usize,
    /// The progress label of the launches on `n` GPUs.
    label: &'a str,
    basis_env: &'a str,
    workloads: &'a [Workload],
}

/// The rows of `share`'s workloads from the launch that ran them (`ran`): each workload's own
/// results, or — where the shared launch ended before it ran (another one crashed it) or it
/// ran out of memory — what a launch of its own gave (`run_alone`). DDP micro-batches that
/// fitted only smaller go to `fitted`. A share run on other GPUs than the first `n` (side by
/// side) says on which in its rows.
fn absorb_share(
    launcher: &Launcher<'_>,
    (gpus, part): side::Share<'_>,
    ran: &Ran<'_>,
    run: &mut FrameworkRun,
    fitted: &mut Vec<(String, f64)>,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) {
    let Ran {
        launch: together,
        n,
        label,
        basis_env,
        workloads,
    } = *ran;
    let opts = launcher.opts;
    let basis_env = if gpus.as_slice() == &opts.gpus[..n.min(opts.gpus.len())] {
        basis_env.to_string()
    } else {
        format!("{basis_env}; on GPU {}, side by side", gpu_list(&gpus))
    };
    let several = part.len() > 1;
    for (w, spec, planned) in part {
        let first = together.for_workload(&w.name);
        // Alone again where the shared launch ended before this workload ran (another
        // one crashed it); out of memory is handled below, at a smaller micro-batch.
        let first = if first.results.is_empty()
            && first.oom.is_none()
            && several
            && !launcher.cancel.load(Ordering::Relaxed)
            && !together.ends.iter().any(|e| e.workload == w.name)
        {
            None
        } else {
            Some(first)
        };
        let (w_run, planned, outcome) =
            run_alone(launcher, (w, spec, planned), &gpus, first, run, progress);
        if w_run.micro_batch != w.micro_batch
            && !outcome.results.is_empty()
            && w.pattern == Pattern::DdpRing
        {
            fitted.push((w.name.clone(), w_run.micro_batch()));
        }
        absorb(run, &w_run, n, &planned, &outcome, &basis_env);
        let partial = finish(run.clone(), workloads);
        progress(label, &partial.rows);
    }
}

/// The runnable workloads of `workloads` as launched: each micro-batch halved where a launch
/// would only run out of memory (`start_where_the_record_fits`; later `keep_what_fit`), with a
/// note in `notes`.
fn as_launched(
    workloads: &[Workload],
    opts: &FrameworkOptions,
    notes: &mut Vec<String>,
) -> Vec<Workload> {
    let mut launched: Vec<Workload> = workloads.iter().filter(|w| runnable(w)).cloned().collect();
    for w in &mut launched {
        if let Some(note) = start_where_the_record_fits(w, opts.gpu_memory_gib) {
            notes.push(note);
        }
    }
    launched
}

/// The spec of `batch`'s launch on `n` GPUs and, where it ends with the overlap probe, the
/// probe's matrix shares per workload: on every GPU, after a launch on fewer has measured the
/// shares (no launch of its own: its Python, CUDA and NCCL start-up took 6 s on 2× H200).
fn spec_with_probe(
    batch: &[Planned<'_>],
    n: usize,
    run: &FrameworkRun,
    workloads: &[Workload],
    opts: &FrameworkOptions,
) -> (serde_json::Value, Option<Vec<(String, f64)>>) {
    let mut combined = combined_spec(batch);
    if n < 2 || n != opts.gpus.len() || run.steps.is_empty() {
        return (combined, None);
    }
    let (spec, shares) = probe_spec(run, workloads, opts);
    match combined.as_object_mut() {
        Some(map) => {
            map.insert("overlap_probe".into(), spec);
            (combined, Some(shares))
        }
        None => (combined, None),
    }
}

/// The overlap probe's figures where the launch on `n` GPUs was asked to end with it (`probe`:
/// its matrix shares) and printed them; a note where it did not (the probe then runs alone).
/// Whether they came.
fn take_probe(
    run: &mut FrameworkRun,
    launch: &LaunchOutcome,
    probe: Option<Vec<(String, f64)>>,
    n: usize,
) -> bool {
    let Some(shares) = probe else { return false };
    if launch.probes.is_empty() {
        run.notes.push(format!(
            "the launch on {n} GPU(s) ended without the overlap probe ({}): it runs alone",
            launch.failure.as_deref().unwrap_or("no probe line")
        ));
        return false;
    }
    absorb_probes(run, &launch.probes, shares, n);
    true
}

/// The launch on `n` GPUs of `runnable`'s workloads: each with its spec and planned rows, but for
/// those with nothing planned and those that cannot fit by a wide margin (rows that say so).
fn plan_batch<'w>(
    runnable: &'w [Workload],
    n: usize,
    opts: &FrameworkOptions,
    run: &mut FrameworkRun,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) -> Vec<Planned<'w>> {
    let mut batch = Vec::new();
    for w in runnable {
        let (spec, planned) = spec(w, n, opts);
        if planned.is_empty() {
            continue;
        }
        // A launch that cannot fit by a wide margin is not started (it would only OOM).
        if let Some(rows) = unfit_rows(w, n, &planned, opts) {
            run.rows.extend(rows);
            progress(
                &format!("{} on {n} GPU(s): does not fit", w.name),
                &run.rows,
            );
            continue;
        }
        batch.push((w, spec, planned));
    }
    batch
}

/// The micro-batches that fit on `n` GPUs after running out of memory (`fitted`: workload,
/// micro-batch) become the workloads' own for the launches on more GPUs, each with a note (the
/// larger ones that ran out are in the notes before it). Only DDP's (the caller keeps to them):
/// DDP holds more per GPU on more GPUs (its buckets), never less, so the larger one would only
/// run out again (on 80 GB GPUs, GPT-2 XL's 8); FSDP shards more on more GPUs, so its
/// micro-batch starts as the workload's at every count.
fn keep_what_fit(
    runnable: &mut [Workload],
    fitted: Vec<(String, f64)>,
    n: usize,
    notes: &mut Vec<String>,
) {
    for (name, micro) in fitted {
        if let Some(w) = runnable.iter_mut().find(|w| w.name == name) {
            notes.push(format!(
                "{name}: micro-batch {micro:.0} on more GPUs too (on {n} GPU(s) {:.0} ran out of memory)",
                w.micro_batch()
            ));
            w.micro_batch = Some(micro);
        }
    }
}

/// Room a step needs on the GPU beyond the memory PyTorch allocates at its peak, GiB: the CUDA
/// context and the caching allocator's reserve (on an H100 80GB, GPT-2 XL's 79.3 GiB peak at
/// micro-batch 8 ran out of memory in 79.6 GiB: docs/BENCHMARKS.md, eleventh session).
const BEYOND_PEAK_GIB: f64 = 1.0;

/// Halves `w`'s micro-batch where a catalog record of it (any GPU: the same model, script and
/// micro-batch) peaked too close to `cap` GiB to fit: that launch would only run out of memory.
/// Returns the note that says so; `None` (nothing changed) where it may fit or nothing is known.
fn start_where_the_record_fits(w: &mut Workload, cap: Option<f64>) -> Option<String> {
    // FSDP holds less per GPU on more GPUs than its 1-GPU record did: only DDP's record says.
    if w.pattern != Pattern::DdpRing {
        return None;
    }
    let cap = cap.filter(|c| c.is_finite() && *c > 0.0)?;
    let micro = w.micro_batch().min(w.per_gpu_batch).floor();
    let (gpu, peak) = w
        .calibration
        .iter()
        .filter_map(|c| Some((c.gpu.as_str(), c.peak_mem_gib.filter(|p| p.is_finite())?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    if micro <= 1.0 || peak + BEYOND_PEAK_GIB <= cap {
        return None;
    }
    let half = (micro / 2.0).floor();
    let note = format!(
        "{}: micro-batch {half:.0} from the start: at {micro:.0} its {gpu} record peaked at {peak:.1} GiB, too close to this GPU's {cap:.1} GiB to fit",
        w.name
    );
    w.micro_batch = Some(half);
    Some(note)
}

/// The spec of one launch running `batch`'s workloads in turn: a workload's own spec, or
/// `{"workloads": [...]}` for several.
fn combined_spec(batch: &[Planned<'_>]) -> serde_json::Value {
    if batch.len() == 1 {
        batch[0].1.clone()
    } else {
        serde_json::json!({
            "workloads": batch.iter().map(|(_, s, _)| s.clone()).collect::<Vec<_>>()
        })
    }
}

/// The rows of `w` on `n` GPUs where its estimated memory exceeds the GPU's by more than 15 %
/// (not run: the launch would only run out of memory); `None` where it may fit or the GPU's
/// memory is not known.
fn unfit_rows(
    w: &Workload,
    n: usize,
    planned: &[(Mode, f64)],
    opts: &FrameworkOptions,
) -> Option<Vec<ScalingPoint>> {
    let cap = opts.gpu_memory_gib?;
    let micro = w.micro_batch().min(w.per_gpu_batch);
    let e = memory::estimate(w, w.pattern, n, micro, Some(cap))?;
    if e.total_gib() <= cap * 1.15 {
        return None;
    }
    let rows = planned
        .iter()
        .map(|&(mode, per)| {
            let mut row = row(w, mode, n, per);
            row.fits = Some(false);
            row.micro_batch = Some(micro);
            row.accumulate = Some(crate::scaling::batch::accumulation(per, micro));
            row.memory_gib_per_gpu = e.known_total_gib();
            row.basis = format!(
                "not run: the model needs {} per GPU of {cap:.0} GiB",
                e.describe_total()
            );
            row
        })
        .collect();
    Some(rows)
}

/// A progress line for the script's `progress` event `e` on `n` GPUs, e.g. `PyTorch: gpt2-xl on 2
/// GPU(s): measure (weak)`; the event's workload, else `workload`.
fn phase_label(e: &Event, workload: &str, n: usize) -> Option<String> {
    let Event::Progress {
        phase,
        mode,
        workload: named,
        ..
    } = e
    else {
        return None;
    };
    let what = mode
        .as_deref()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let who = named
        .as_deref()
        .map_or(workload.to_string(), |w| clip(w, 40));
    if who.is_empty() {
        // A phase of the launch, not of a workload (the overlap probe at its end).
        return Some(format!("PyTorch: on {n} GPU(s): {phase}{what}"));
    }
    Some(format!("PyTorch: {who} on {n} GPU(s): {phase}{what}"))
}

/// `w` on `gpus` in a launch of its own, unless `first` already holds how it ended; out of
/// memory before any result runs it again with micro-batches half as large (the same per-GPU
/// batch, accumulated), down to one sample — the micro-batch that fits. Returns the workload as
/// run (its micro-batch), the (mode, per-GPU batch) planned, and the outcome.
fn run_alone(
    launcher: &Launcher<'_>,
    (w, spec, planned): Planned<'_>,
    gpus: &[usize],
    mut first: Option<LaunchOutcome>,
    run: &mut FrameworkRun,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) -> (Workload, Vec<(Mode, f64)>, LaunchOutcome) {
    let Launcher {
        env,
        script,
        opts,
        cancel,
    } = *launcher;
    let n = gpus.len();
    let label = format!("PyTorch: {} on {n} GPU(s)", w.name);
    let rows_so_far = run.rows.clone();
    let (mut w_run, mut spec, mut planned) = (w.clone(), spec, planned);
    loop {
        let outcome = match first.take() {
            Some(o) => o,
            None => {
                progress(&label, &rows_so_far);
                let o = launch_script(
                    &env.path,
                    script,
                    &spec,
                    gpus,
                    opts.timeout,
                    cancel,
                    &mut |e| {
                        if let Some(l) = phase_label(e, &w.name, n) {
                            progress(&l, &rows_so_far);
                        }
                    },
                );
                run.time.merge(&o.phases);
                run.launches += 1;
                o.for_workload(&w.name)
            }
        };
        let micro = w_run.micro_batch().min(w_run.per_gpu_batch).floor();
        if outcome.oom.is_none()
            || !outcome.results.is_empty()
            || micro <= 1.0
            || cancel.load(Ordering::Relaxed)
        {
            return (w_run, planned, outcome);
        }
        let half = (micro / 2.0).floor();
        run.notes.push(format!(
            "{} on {n} GPU(s): out of GPU memory at micro-batch {micro:.0}; run again at {half:.0}",
            w.name
        ));
        w_run.micro_batch = Some(half);
        (spec, planned) = launch::spec(&w_run, n, opts);
        progress(&format!("{label}: micro-batch {half:.0}"), &rows_so_far);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::workload::resolve;

    #[test]
    fn a_micro_batch_whose_record_peaked_near_the_gpus_memory_starts_halved() {
        let mut gpt = resolve("gpt2-xl").unwrap();
        let peak = gpt.calibration[0].peak_mem_gib.unwrap();
        // An H100 80GB as NVML reads it: 79.65 GiB, under the record's peak + 1 GiB.
        let note = start_where_the_record_fits(&mut gpt, Some(79.6474609375)).unwrap();
        assert_eq!(gpt.micro_batch, Some(4.0));
        assert!(note.contains(&format!("peaked at {peak:.1} GiB")), "{note}");
        // An H200's 140 GiB: 8 fits, nothing changes; nor where the memory is not known.
        for cap in [Some(140.4), None] {
            let mut gpt = resolve("gpt2-xl").unwrap();
            assert_eq!(start_where_the_record_fits(&mut gpt, cap), None);
            assert_eq!(gpt.micro_batch, Some(8.0));
        }
        // FSDP shards more on more GPUs than its 1-GPU record held: the record does not say.
        let mut fsdp = resolve("llama2-7b").unwrap();
        assert_eq!(fsdp.pattern, crate::scaling::Pattern::Fsdp);
        fsdp.micro_batch = Some(8.0);
        fsdp.per_gpu_batch = 8.0;
        assert_eq!(start_where_the_record_fits(&mut fsdp, Some(1.0)), None);
        // ResNet-50's record peaks far below 80 GB.
        let mut cnn = resolve("resnet50").unwrap();
        let before = cnn.micro_batch;
        assert_eq!(start_where_the_record_fits(&mut cnn, Some(79.65)), None);
        assert_eq!(cnn.micro_batch, before);
    }
}
