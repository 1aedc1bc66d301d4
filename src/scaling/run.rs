//! A whole scaling run, shared by the CLI and the GUI: the machine's inputs (measured on this
//! machine, or modeled), the model over every workload and mode, and the proxy runs.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::curve::CommCurve;
use super::framework::{self, FrameworkOptions};
use super::proxy::{self, ProxyOptions};
use super::rates::{GemmRate, GpuRates, PerGpuRates};
use super::table::{
    Machine, Mode, RowSource, ScalingPoint, attach_errors, attach_uncalibrated_errors, model,
};
use super::workload::Workload;
use crate::bench::collectives::{CollectiveOptions, MakeCollectives, plan, run_collectives};
use crate::bench::modeled::{Assumptions, with_assumptions};
use crate::model::Topology;
use crate::model::quantities::gpu_list;
use crate::model::quantities::parse_sizes;

/// Default projection limit: up to 1024 GPUs over nodes.
pub const DEFAULT_MAX_GPUS: usize = 1024;

/// Everything a scaling run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScalingRun {
    /// The machine the model used (`None` before anything ran).
    pub machine: Option<Machine>,
    pub workloads: Vec<Workload>,
    /// Model rows (modeled), then measured rows (measured_framework or proxy).
    pub rows: Vec<ScalingPoint>,
    /// The Python and PyTorch the framework runs used, e.g. `PyTorch 2.11.0+cu130, …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// What was measured or could not be, in words.
    pub notes: Vec<String>,
    /// The prices the rows' `cost_per_million_samples` were figured at (none: no cost).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing: Option<super::cost::Pricing>,
    /// The rule the modeled rows' power was figured by ([`super::power::PowerRule`]); absent in
    /// runs written before the rule of 2026-12-07.
    #[serde(default = "super::power::PowerRule::earliest")]
    pub power_rule: super::power::PowerRule,
}

impl ScalingRun {
    /// The "1 GPU under DDP" row every view shows below `row`: where `row` is a plain 1-GPU
    /// framework step, the same step as timed under DDP on a group of one, with the measured
    /// step it belongs to. `None` for every other row and where it was not timed.
    pub fn under_ddp_below(
        &self,
        row: &ScalingPoint,
    ) -> Option<(&super::calibrate::MeasuredStep, &super::calibrate::UnderDdp)> {
        if row.source != RowSource::Framework || row.n_gpus != 1 {
            return None;
        }
        self.machine
            .as_ref()?
            .framework_steps
            .iter()
            .filter(|s| s.workload == row.workload && s.mode == row.mode)
            .find_map(|s| Some((s, s.under_ddp.as_ref()?)))
    }
}

/// Models every workload on `topo` restricted to `gpus` (empty = all) with datasheet rates and
/// the modeled all-reduce curve. Runs nothing on GPUs.
pub fn run_modeled(
    topo: &Topology,
    gpus: &[usize],
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
) -> ScalingRun {
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    // Link rates an import lacks are filled as the modeled backend assumes them (with warnings).
    let (sub, warnings) = with_assumptions(&sub, Assumptions::default());
    let machine = Machine::modeled(&sub);
    let mut notes: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    notes.push(match (&machine.comm, &machine.comm_missing) {
        (None, Some(why)) => format!("modeled: datasheet GEMM rates; no all-reduce curve ({why})"),
        _ => {
            "modeled: datasheet GEMM rates and the all-reduce curve modeled from line rates".into()
        }
    });
    finish(machine, workloads, modes, max_gpus, Vec::new(), notes)
}

/// Models every workload on `topo` (restricted to `gpus`, empty = all) with datasheet GEMM rates
/// and an all-reduce curve the caller measured (e.g. the collectives stage of `--bench`). Runs
/// nothing on GPUs.
pub fn run_with_curve(
    topo: &Topology,
    gpus: &[usize],
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
    comm: CommCurve,
) -> ScalingRun {
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    let (assumed, warnings) = with_assumptions(&sub, Assumptions::default());
    let name = sub
        .gpus
        .iter()
        .find_map(|g| g.name.clone())
        .unwrap_or_default();
    let mut notes: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    notes.push(format!(
        "model fed by the {} all-reduce curve ({}) and datasheet GEMM rates",
        comm.source, comm.basis
    ));
    let mut machine = Machine::from_topology(&assumed, Some(comm), GpuRates::datasheet(&name));
    machine.label = sub.source.label();
    finish(machine, workloads, modes, max_gpus, Vec::new(), notes)
}

/// What a scaling run covers: the GPUs it runs on (empty: every GPU), the workloads and modes,
/// and the largest GPU count its table goes to.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub gpus: &'a [usize],
    pub workloads: &'a [Workload],
    pub modes: &'a [Mode],
    pub max_gpus: usize,
}

/// How `run_measured` measures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MeasureOptions {
    /// NCCL library for the all-reduce curve and the proxies.
    pub nccl_lib: Option<std::path::PathBuf>,
    /// Python with PyTorch for the framework runs (default: SCALESCOPE_PYTHON, python3).
    pub python: Option<std::path::PathBuf>,
    /// Run no framework steps (proxies only).
    pub no_framework: bool,
    /// Limit of one framework launch (default [`framework::DEFAULT_TIMEOUT`]).
    pub framework_timeout: Option<std::time::Duration>,
    /// Shorter warm-up and measurement windows (the --bench --quick preset).
    pub quick: bool,
    /// The all-reduce curve already measured over these GPUs (the suite's collectives stage):
    /// used as it is instead of a sweep of its own. Never taken from a job sent to the agent
    /// (the suite builds it where it runs).
    #[serde(skip)]
    pub curve: Option<CommCurve>,
    /// The `--bench --full` suite's brief runs (its time, README): warm-ups of 3 s (1.5 s for a
    /// launch's later runs), windows of 5 s that grow only until their energy stretches span
    /// 5 s (`MIN_ENERGY_S`: the counter's 100 ms steps at most 2 % of them), DDP at one rank
    /// timed once per workload, a 3 s host probe, and
    /// on two or more GPUs the first GPU's GEMM rate taken from the run of all of them at once
    /// and, where the GPUs are alike, the 1-GPU runs side by side (one launch per GPU at once).
    pub brief: bool,
    /// The workloads whose strong mode the framework runs (`None`: every one).
    pub strong_for: Option<Vec<String>>,
}

impl MeasureOptions {
    /// The framework runs' options on `ordinals` (their GPU memory is the machine's, set where
    /// they run).
    fn framework(&self, ordinals: &[usize], modes: &[Mode]) -> FrameworkOptions {
        let (warmup_s, warmup_next_s, measure_s, noisy_measure_s) = self.windows();
        FrameworkOptions {
            gpus: ordinals.to_vec(),
            modes: modes.to_vec(),
            strong_for: self.strong_for.clone(),
            timeout: self.framework_timeout.unwrap_or(framework::DEFAULT_TIMEOUT),
            warmup_s,
            warmup_next_s,
            measure_s,
            noisy_measure_s,
            profile_steps: 2,
            gpu_memory_gib: None,
            ddp_one_once: self.brief,
            probe_host_s: if self.brief { 3.0 } else { 8.0 },
            one_gpu_side_by_side: self.brief,
        }
    }

    /// The framework runs' windows, seconds: (warm-up of a launch's first run, of its later
    /// runs, timed window, what a noisy timed window grows to).
    fn windows(&self) -> (f64, f64, f64, f64) {
        if self.quick {
            (2.0, 1.0, 2.0, 2.0)
        } else if self.brief {
            (3.0, 1.5, 5.0, 5.0)
        } else {
            (5.0, 2.0, 5.0, 20.0)
        }
    }
}

/// Whether every GPU of `topo` is the same model (each named, one name).
fn alike(topo: &Topology) -> bool {
    let mut names = topo.gpus.iter().map(|g| g.name.as_deref());
    let first = names.next().flatten();
    first.is_some() && names.all(|n| n == first)
}

/// The all-reduce curve the model uses on two or more GPUs: the collectives stage's sweep
/// where it handed one over, else a sweep of its own, else `fallback` (the modeled curve), the
/// notes saying which.
fn all_reduce_curve(
    sub: &Topology,
    opts: &MeasureOptions,
    collectives: &MakeCollectives<'_>,
    cancel: &AtomicBool,
    fallback: &Option<CommCurve>,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> Option<CommCurve> {
    if let Some(c) = &opts.curve {
        notes.push("all-reduce curve: the collectives stage's NCCL sweep over these GPUs".into());
        return Some(c.clone());
    }
    progress(
        "measuring the all-reduce curve (NCCL)",
        &ScalingRun::default(),
    );
    measure_curve(sub, collectives, cancel).unwrap_or_else(|e| {
        notes.push(format!(
            "all-reduce curve not measured ({e}); modeled curve used"
        ));
        fallback.clone()
    })
}

/// The synthetic proxy steps of the workloads the framework did not run (`measured` holds what
/// it did), reporting progress over `run`'s rows; a note in `run` where they cannot run.
fn proxy_rows(
    scope: Scope<'_>,
    ordinals: Vec<usize>,
    opts: &MeasureOptions,
    run: &mut ScalingRun,
    measured: &[ScalingPoint],
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> Vec<ScalingPoint> {
    let Scope {
        workloads, modes, ..
    } = scope;
    let ran: Vec<&str> = measured.iter().map(|r| r.workload.as_str()).collect();
    let rest: Vec<Workload> = workloads
        .iter()
        .filter(|w| !ran.contains(&w.name.as_str()))
        .cloned()
        .collect();
    if !rest.is_empty() && !cancel.load(Ordering::Relaxed) {
        progress("proxy runs", run);
        let popts = ProxyOptions {
            gpus: ordinals,
            modes: modes.to_vec(),
            nccl_lib: opts.nccl_lib.clone(),
        };
        let model_rows = run.rows.clone();
        let proxied = proxy::run(&rest, &popts, cancel, &mut |rows| {
            let mut all = model_rows.clone();
            all.extend_from_slice(measured);
            all.extend_from_slice(rows);
            attach_errors(&mut all);
            let partial = ScalingRun {
                rows: all,
                ..run.clone()
            };
            progress("proxy runs", &partial);
        });
        match proxied {
            Ok(rows) => return rows,
            Err(e) => run.notes.push(format!("proxy runs skipped: {e}")),
        }
    }
    Vec::new()
}

/// The PyTorch lookup under way (`framework::find_python` on a thread of its own).
type Lookup = std::thread::JoinHandle<Result<framework::PythonEnv, framework::FrameworkError>>;

/// The real framework's steps as `fopts` says where `lookup` found PyTorch: their rows and the
/// PyTorch that ran them. `machine` takes their calibration (1-GPU steps, overlap, probe rates),
/// `notes` what failed or was skipped and where the launches' time went.
fn framework_rows(
    scope: Scope<'_>,
    fopts: &FrameworkOptions,
    lookup: Option<Lookup>,
    machine: &mut Machine,
    notes: &mut Vec<String>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> (Vec<ScalingPoint>, Option<String>) {
    let Scope {
        workloads,
        modes,
        max_gpus,
        ..
    } = scope;
    let mut measured: Vec<ScalingPoint> = Vec::new();
    let mut framework_env = None;
    let runnable: Vec<Workload> = workloads
        .iter()
        .filter(|w| framework::runnable(w))
        .cloned()
        .collect();
    let Some(lookup) = lookup.filter(|_| !cancel.load(Ordering::Relaxed)) else {
        return (measured, framework_env);
    };
    progress("looking for PyTorch", &ScalingRun::default());
    let found = lookup.join().unwrap_or_else(|_| {
        Err(framework::FrameworkError::NoPython {
            tried: "a lookup whose thread panicked".into(),
        })
    });
    match found {
        Ok(env) if env.gpus == 0 => notes.push(format!(
            "PyTorch found ({}) but it sees no GPU: synthetic proxy runs instead",
            env.describe()
        )),
        Ok(env) => {
            let fopts = FrameworkOptions {
                gpu_memory_gib: machine.gpu_memory_gib,
                ..fopts.clone()
            };
            let base = finish(
                machine.clone(),
                workloads,
                modes,
                max_gpus,
                Vec::new(),
                notes.clone(),
            );
            let fw = framework::run(&env, &runnable, &fopts, cancel, &mut |label, rows| {
                let mut all = base.rows.clone();
                all.extend_from_slice(rows);
                attach_errors(&mut all);
                progress(
                    label,
                    &ScalingRun {
                        rows: all,
                        ..base.clone()
                    },
                );
            });
            match fw {
                Ok(fw) => {
                    notes.extend(fw.time_note()); // where the stage's minutes went
                    machine.framework_steps = fw.steps;
                    machine.overlap = fw.overlap;
                    machine.probe = fw.probe;
                    notes.extend(fw.notes);
                    measured.extend(fw.rows);
                    framework_env = Some(env.describe());
                }
                Err(e) => notes.push(format!("framework runs not started: {e}")),
            }
        }
        Err(e) => notes.push(format!(
            "real framework runs skipped: {e}; synthetic proxy runs (labeled proxy) instead"
        )),
    }
    (measured, framework_env)
}

/// On this machine: measures the GEMM rates (cuBLAS: the first GPU alone, then every GPU at
/// once) and an NCCL all-reduce sweep over `gpus` (on the backend `collectives` builds for a
/// topology: `job::backend` hands the NCCL one); runs each workload's real training step with
/// PyTorch on 1, 2, 4, … and N GPUs where PyTorch is found (their 1-GPU steps calibrate the
/// model), and the synthetic proxies for the workloads PyTorch cannot run (all of them without
/// PyTorch). Each input that cannot be measured falls back to its modeled value with a note.
/// `progress` gets a label per stage.
pub fn run_measured(
    topo: &Topology,
    scope: Scope<'_>,
    opts: &MeasureOptions,
    collectives: &MakeCollectives<'_>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> Result<ScalingRun, String> {
    let Scope {
        gpus,
        workloads,
        modes,
        max_gpus,
    } = scope;
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    let ordinals = sub.gpu_indices();
    let mut notes = Vec::new();
    let name = sub
        .gpus
        .iter()
        .find_map(|g| g.name.clone())
        .unwrap_or_default();
    let (assumed, _) = with_assumptions(&sub, Assumptions::default());
    let modeled_machine = Machine::modeled(&assumed);
    // PyTorch is looked for while the GEMM rates are measured: its import takes seconds of the
    // CPU, the rates the GPUs.
    let looking = (!opts.no_framework && workloads.iter().any(framework::runnable)).then(|| {
        let python = opts.python.clone();
        std::thread::spawn(move || framework::find_python(python.as_deref()))
    });
    let (rates, concurrent) = measure_rates(&ordinals, opts.brief, cancel, &mut notes, progress);
    let rates = rates.or(GpuRates::datasheet(&name));
    let comm = if ordinals.len() < 2 {
        None
    } else {
        let fallback = &modeled_machine.comm;
        all_reduce_curve(
            &sub,
            opts,
            collectives,
            cancel,
            fallback,
            &mut notes,
            progress,
        )
    };
    let mut machine = Machine::from_topology(&assumed, comm, rates);
    machine.label = sub.source.label();
    machine.concurrent = concurrent;

    // The real framework's steps: the measured truth, and the model's calibration. Side by
    // side, a workload's 1-GPU step is its step on any of the GPUs: only where they are alike.
    let mut fopts = opts.framework(&ordinals, modes);
    fopts.one_gpu_side_by_side &= alike(&sub);
    let (mut measured, framework_env) = framework_rows(
        scope,
        &fopts,
        looking,
        &mut machine,
        &mut notes,
        cancel,
        progress,
    );

    let mut run = finish(
        machine.clone(),
        workloads,
        modes,
        max_gpus,
        Vec::new(),
        notes,
    );
    run.framework = framework_env;
    // The proxies stand in for what the framework did not run.
    let proxied = proxy_rows(scope, ordinals, opts, &mut run, &measured, cancel, progress);
    measured.extend(proxied);
    run.rows.extend(measured);
    attach_errors(&mut run.rows);
    // The model with catalog figures only (no step this run measured calibrates it; it reads the
    // machine's rates and host speed, as it would on a machine it never ran on): its error says
    // how well such a machine is predicted.
    let mut uncal = machine;
    uncal.catalog_only = true;
    let uncalibrated: Vec<ScalingPoint> = workloads
        .iter()
        .flat_map(|w| model(w, &uncal, modes, max_gpus))
        .collect();
    attach_uncalibrated_errors(&mut run.rows, &uncalibrated);
    Ok(run)
}

/// Drops the measured rows of a finished run (the Scaling view models itself).
pub fn measured_rows(run: &ScalingRun) -> Vec<ScalingPoint> {
    run.rows
        .iter()
        .filter(|r| r.source != RowSource::Modeled)
        .cloned()
        .collect()
}

/// The GEMM rates of `ordinals`: with two or more GPUs, each GPU while all of them run at once
/// (empty where not measured); then the first GPU alone (empty where not measured, and then
/// the concurrent rates are dropped too, so the model uses one rate for every count). The
/// concurrent run goes first so that the alone rate, too, is taken on a GPU that is as warm as
/// it is during the proxy runs that follow: a GPU fresh from idle sustains a higher rate for
/// its first seconds of load than after minutes of it (on 2× H200: 737 TFLOP/s cold, 675 with
/// both GPUs busy, docs/BENCHMARKS.md). `brief` (`--full`): where the concurrent run measured
/// the first GPU, its rate there stands for its rate alone (on 2× H200, 2026-11-28: 706.6
/// TFLOP/s bf16 with both busy, 703.2 alone), saving the 12 s of a second run. What fails is
/// noted.
fn measure_rates(
    ordinals: &[usize],
    brief: bool,
    cancel: &AtomicBool,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> (GpuRates, Vec<PerGpuRates>) {
    let Some(&first) = ordinals.first() else {
        return (GpuRates::default(), Vec::new());
    };
    let cublas = match crate::cuda::cublas::Cublas::load() {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("GEMM rate not measured: {e}; datasheet rate used"));
            return (GpuRates::default(), Vec::new());
        }
    };
    let mut concurrent = Vec::new();
    if ordinals.len() >= 2 && !cancel.load(Ordering::Relaxed) {
        let list = gpu_list(ordinals);
        progress(
            &format!("measuring the GEMM rate on GPUs {list} at once (cuBLAS)"),
            &ScalingRun::default(),
        );
        match proxy::measure_gemm(&cublas, ordinals) {
            Ok(r) => concurrent = r,
            Err(e) => notes.push(format!(
                "GEMM rate of GPUs {list} running at once not measured ({e}); every GPU count \
                 modeled at GPU {first}'s rate alone"
            )),
        }
    }
    if brief && let Some(own) = concurrent.iter().find(|r| r.gpu == first) {
        let alone = GpuRates {
            bf16: own.rates.bf16.clone().map(as_alone),
            fp32: own.rates.fp32.clone().map(as_alone),
        };
        return (alone, concurrent);
    }
    progress(
        &format!("measuring the GEMM rate on GPU {first} alone (cuBLAS)"),
        &ScalingRun::default(),
    );
    match proxy::measure_gemm(&cublas, &[first]) {
        Ok(mut r) => (r.pop().map(|r| r.rates).unwrap_or_default(), concurrent),
        Err(e) => {
            // One GPU count at the datasheet's rate and the others at a measured one would make
            // the speedups meaningless: the datasheet's for every count.
            notes.push(format!("GEMM rate not measured ({e}); datasheet rate used"));
            (GpuRates::default(), Vec::new())
        }
    }
}

/// A rate measured with every GPU busy, standing for the GPU's rate alone (its basis says so).
fn as_alone(mut rate: GemmRate) -> GemmRate {
    rate.basis
        .push_str("; also its rate alone (--full: not measured alone)");
    rate
}

fn measure_curve(
    topo: &Topology,
    collectives: &MakeCollectives<'_>,
    cancel: &AtomicBool,
) -> Result<Option<CommCurve>, String> {
    let opts = CollectiveOptions {
        gpus: crate::model::GpuSelection::all(),
        sizes: parse_sizes("1K..1G").map_err(|e| e.to_string())?,
        ..Default::default()
    };
    let (_, cases) = plan(topo, &opts).map_err(|e| e.to_string())?;
    let mut backend = collectives(topo).map_err(|e| e.to_string())?;
    let (results, _) = run_collectives(
        &cases,
        backend.as_mut(),
        cancel,
        &mut Vec::new(),
        &mut |_, _, _| {},
    );
    CommCurve::from_results(&results)
        .map(Some)
        .ok_or_else(|| "no all-reduce size measured".to_string())
}

fn finish(
    machine: Machine,
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
    mut rows: Vec<ScalingPoint>,
    notes: Vec<String>,
) -> ScalingRun {
    for w in workloads {
        rows.extend(model(w, &machine, modes, max_gpus));
    }
    ScalingRun {
        machine: Some(machine),
        workloads: workloads.to_vec(),
        rows,
        notes,
        framework: None,
        pricing: None,
        power_rule: super::power::PowerRule::default(),
    }
}

/// Scaling runs built by hand for tests elsewhere in the crate.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::scaling::calibrate::MeasuredStep;

    /// GPT-2 XL on the HGX H200 catalog machine, its model calibrated by a weak 1-GPU framework
    /// step of 380 ms, with weak framework rows measured at 1 GPU (that step) and 2 GPUs
    /// (395 ms) and a strong one at 1 GPU (2,990 ms: its model comes from the weak step);
    /// errors attached.
    pub fn calibrated_gpt2_xl() -> ScalingRun {
        let topo = crate::topology::catalog::load("hgx-h200").unwrap();
        let w = super::super::workload::resolve("gpt2-xl").unwrap();
        let mut m = Machine::modeled(&topo);
        m.framework_steps = vec![MeasuredStep {
            workload: w.name.clone(),
            mode: Mode::Weak,
            per_gpu_batch: w.per_gpu_batch,
            step_ms: 380.0,
            optimizer_ms: 12.0,
            samples_ms: Vec::new(),
            matrix_share: Some(0.4),
            matrix_ms: None,
            other_ms: None,
            host_ms: None,
            host_probe_us: None,
            accumulate: None,
            wrapper_ms: None,
            under_ddp: None,
            basis: "test".into(),
        }];
        let mut rows = model(&w, &m, &Mode::ALL, 8);
        for (mode, n, ms) in [
            (Mode::Weak, 1, 380.0),
            (Mode::Weak, 2, 395.0),
            (Mode::Strong, 1, 2990.0),
        ] {
            let mut r = ScalingPoint::empty(&w, mode, RowSource::Framework, n);
            r.step_time_ms = Some(ms);
            r.throughput = Some(r.global_batch / (ms * 1e-3));
            r.basis = "measured".into();
            rows.push(r);
        }
        attach_errors(&mut rows);
        ScalingRun {
            machine: Some(m),
            workloads: vec![w],
            rows,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_suites_brief_runs_keep_the_counters_window_and_never_grow_it() {
        let brief = MeasureOptions {
            brief: true,
            ..Default::default()
        }
        .framework(&[0, 1], &Mode::ALL);
        let own = MeasureOptions::default().framework(&[0, 1], &Mode::ALL);
        // 5 s windows: the energy counter's 100 ms steps are 2 % of them.
        assert_eq!(brief.measure_s, 5.0);
        assert_eq!(
            brief.noisy_measure_s, brief.measure_s,
            "a brief window grew"
        );
        assert!(
            own.noisy_measure_s > own.measure_s,
            "a run of its own grows a noisy window"
        );
        assert!(brief.warmup_s < own.warmup_s && brief.warmup_next_s < own.warmup_next_s);
        assert!(brief.ddp_one_once && !own.ddp_one_once);
        assert!(brief.probe_host_s < own.probe_host_s);
        assert_eq!(brief.gpus, vec![0, 1]);
        // The 1-GPU runs side by side in the suite only, and only on alike GPUs.
        assert!(brief.one_gpu_side_by_side && !own.one_gpu_side_by_side);
        let mut topo = crate::topology::catalog::load("dgx-h100").unwrap();
        assert!(alike(&topo));
        topo.gpus[1].name = Some("NVIDIA H200".into());
        assert!(!alike(&topo));
        topo.gpus[1].name = None;
        assert!(!alike(&topo));
    }

    #[test]
    fn a_rate_taken_from_the_concurrent_run_says_so() {
        let r = as_alone(GemmRate {
            tflops: 706.6,
            source: crate::model::Source::Measured,
            basis: "cuBLAS GemmEx bf16 8192³ … while GPUs 0–1 ran the same at once".into(),
            watts: None,
        });
        assert_eq!(r.tflops, 706.6);
        assert!(
            r.basis
                .ends_with("also its rate alone (--full: not measured alone)")
        );
    }
}
