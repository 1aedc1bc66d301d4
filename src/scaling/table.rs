//! The scaling table: a row per GPU count and mode, each with its step time T(n) =
//! compute(per-GPU batch) + exposed communication + the pattern's own terms, for n GPUs in weak
//! (per-GPU batch fixed) and strong (global batch fixed) scaling. Every formula and its source
//! is in docs/SCALING.md; the comments here name them.

use serde::{Deserialize, Serialize};

use super::batch::{self, BatchSplit};
use super::calibrate::CalibrationKind;
pub use super::machine::{Bound, Machine, Mode, OverlapMeasure, RowSource, Sourced, StepRate};
use super::memory;
use super::step::step_terms_in;
use super::workload::{Pattern, Workload};

/// One row of the scaling table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    pub workload: String,
    pub pattern: Pattern,
    pub mode: Mode,
    /// modeled, measured_framework (real PyTorch steps) or proxy (synthetic steps).
    pub source: RowSource,
    pub n_gpus: usize,
    /// Samples per step over all GPUs.
    pub global_batch: f64,
    /// Samples per GPU per step: where a strong global batch does not split evenly over the
    /// GPUs in whole samples, the GPUs with the most, which set the step ([`BatchSplit`]; the
    /// others take one fewer).
    pub per_gpu_batch: f64,
    /// Samples per forward/backward pass (micro-batch) of that per-GPU batch: the step
    /// accumulates gradients over `accumulate` of them, the last one taking what is left where
    /// it does not divide the batch. The memory figure holds one micro-batch's activations.
    /// `None` where unknown (proxy rows, patterns without a memory model, older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<f64>,
    /// Micro-batches per step (1: no accumulation); `None` where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulate: Option<u64>,
    /// One step, ms.
    pub step_time_ms: Option<f64>,
    /// Samples per second over all GPUs.
    pub throughput: Option<f64>,
    /// throughput(n) ÷ throughput(1); where one GPU does not fit or was not run, against the
    /// smallest count that has a throughput, `speedup_base`, taken as perfectly efficient.
    pub speedup: Option<f64>,
    /// The GPU count the speedup is taken against when it is not 1 (see `speedup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_base: Option<usize>,
    /// speedup ÷ n.
    pub efficiency: Option<f64>,
    pub bound: Option<Bound>,
    /// Compute per step, ms.
    pub compute_ms: Option<f64>,
    /// Communication not hidden under compute, ms.
    pub comm_exposed_ms: Option<f64>,
    /// Everything else on the step's critical path (host input, sync, queueing), ms.
    pub other_ms: Option<f64>,
    /// Beyond the box: over nodes, always modeled.
    pub projected: bool,
    /// (model − measured) ÷ measured step time, on measured rows that have a model row.
    pub model_error: Option<f64>,
    /// The same error against the model with catalog figures only (no step this run measured;
    /// the machine's probe rates and host speed), on measured rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_error_uncalibrated: Option<f64>,
    /// A measured row the model was calibrated from (the 1-GPU framework step): the model equals
    /// it by construction, so it has no `model_error` — agreeing with itself checks nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calibration_point: bool,
    /// Memory per GPU of the step, GiB; `None` when unknown (modeled: the activations unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib_per_gpu: Option<f64>,
    /// Whether the step fits the GPU's memory; `None` when unknown. A row that does not fit has
    /// no step time or throughput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fits: Option<bool>,
    /// What calibrates the model's compute term (modeled rows): user, framework, catalog,
    /// transferred or utilization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<CalibrationKind>,
    /// The GPUs' energy per step, J (all GPUs): measured rows, from NVML over the timed window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j_per_step: Option<f64>,
    /// Mean power per GPU over the timed window, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts_per_gpu: Option<f64>,
    /// Samples trained per joule of GPU energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_per_joule: Option<f64>,
    /// Mean power per GPU before the run (measured rows, where NVML read it), W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_watts_per_gpu: Option<f64>,
    /// Where the energy figures come from (the energy counter, or power readings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_basis: Option<crate::model::energy::EnergyBasis>,
    /// The timed window the energy is of, Unix seconds (start, end): a sampler run beside the
    /// job can integrate the same seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_window_unix_s: Option<[f64; 2]>,
    /// Per rank, the stretches of back-to-back steps the energy figures are of, Unix seconds
    /// (start, end; host probes and drains between them left out): a sampler run beside the job
    /// can read the same steps. Empty where the energy comes from the whole window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub energy_stretches_unix_s: Vec<Vec<[f64; 2]>>,
    /// What a million samples cost at the prices the user stated (`crate::scaling::cost`);
    /// `None` without prices, or where the row has no throughput (or no power, for ownership).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_million_samples: Option<f64>,
    /// The host's time to issue this step at its per-GPU batch, ms (modeled rows, where a
    /// measured floor or a catalog record's gives it): the step is never shorter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_floor_ms: Option<f64>,
    /// The GPU's own work per step, ms, on modeled rows the host sets (`compute_ms` is then the
    /// host's time): what the row's modeled power follows (`crate::scaling::power`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_work_ms: Option<f64>,
    /// What a measured framework row's step is of its timed steps: `mean` (a run's samples/s
    /// follow the mean); absent in earlier reports, read as the median
    /// ([`ScalingPoint::step_statistic`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_statistic: Option<StepStatistic>,
    /// What fed the figures (rates, curves), or why a row is empty.
    pub basis: String,
}

/// Which figure of a run's timed steps a measured framework row's step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatistic {
    /// The mean: the time a run of those steps takes per step (written from commit 2b47b1e on).
    Mean,
    /// The median: what reports written before the change (2026-11-28, commit e5f0c42) hold;
    /// on a host-bound step (a VM host whose speed wanders) up to about 5 % below the mean
    /// (docs/SCALING.md).
    Median,
}

/// `text` with `sign` (`≤`, `≥`) before its figure where `upper_bound`, after a modeled
/// mark (`~≤350`: modeled, at most 350); "—" as it is.
pub fn bound_mark(text: String, upper_bound: bool, sign: char) -> String {
    match upper_bound && text != "—" {
        true => match text.strip_prefix('~') {
            Some(v) => format!("~{sign}{v}"),
            None => format!("{sign}{text}"),
        },
        false => text,
    }
}

impl ScalingPoint {
    /// True where the row's power is only its upper bound: the model's power at the board
    /// limit (idle power unknown — scaling/power.rs says "an upper bound" in the basis). Its
    /// W/GPU is at most, its samples/J at least, the figure: tables print `≤` and `≥`.
    pub fn power_upper_bound(&self) -> bool {
        self.energy_basis == Some(crate::model::energy::EnergyBasis::Modeled)
            && self.basis.contains("an upper bound")
    }

    /// `text` (a W/GPU or samples/J cell) with `sign` before it where the power is only its
    /// upper bound ([`Self::power_upper_bound`]); "—" as it is.
    pub fn bounded(&self, text: String, sign: char) -> String {
        bound_mark(text, self.power_upper_bound(), sign)
    }

    /// The model error as tables print it: signed percent, `cal.` on the calibration point (no
    /// error: the model is this step), `—` where there is none.
    pub fn error_cell(&self) -> String {
        if self.calibration_point {
            "cal.".to_string()
        } else {
            signed_pct(self.model_error)
        }
    }

    /// The speedup as tables print it: `2.00`, or `2.00 vs 2` when one GPU does not fit (or
    /// was not run) and the speedup is taken against 2 GPUs; `—` where there is none.
    pub fn speedup_cell(&self) -> String {
        match (self.speedup, self.speedup_base) {
            (Some(s), Some(n0)) => format!("{s:.2} vs {n0}"),
            (Some(s), None) => format!("{s:.2}"),
            (None, _) => "—".to_string(),
        }
    }

    /// The per-GPU batch as tables print it: `8`, `8 = 2 × 4` where the step accumulates
    /// micro-batches (micro-batch × how many), `≤342 …` where the global batch does not split
    /// evenly over the GPUs ([`batch::per_gpu_cell`]).
    pub fn per_gpu_cell(&self) -> String {
        batch::per_gpu_cell(
            self.per_gpu_batch,
            self.splits_unevenly(),
            self.micro_batch,
            self.accumulate,
        )
    }

    /// True where the global batch does not split evenly over the GPUs in whole samples: the
    /// per-GPU batch is that of the GPUs with the most, the others take one fewer.
    pub fn splits_unevenly(&self) -> bool {
        self.per_gpu_batch * self.n_gpus as f64 - self.global_batch >= 0.5
    }

    /// True where the step accumulates gradients over several micro-batches.
    pub fn accumulates(&self) -> bool {
        self.accumulate.is_some_and(|a| a > 1)
    }

    /// Which figure of its timed steps a measured framework row's step is: the row's own field,
    /// else the median (a report written before the change to the mean); `None` for modeled and
    /// proxy rows and rows without a step.
    pub fn step_statistic(&self) -> Option<StepStatistic> {
        (self.source == RowSource::Framework && self.step_time_ms.is_some())
            .then(|| self.step_statistic.unwrap_or(StepStatistic::Median))
    }

    /// The catalog-only model's error as tables print it: signed percent, `—` where there is none.
    pub fn uncalibrated_error_cell(&self) -> String {
        signed_pct(self.model_error_uncalibrated)
    }

    /// An empty row of `w` at `n` GPUs: batch sizes set, every figure unknown.
    pub fn empty(w: &Workload, mode: Mode, source: RowSource, n: usize) -> ScalingPoint {
        let (global, per) = batches(w, mode, n);
        ScalingPoint {
            workload: w.name.clone(),
            pattern: w.pattern,
            mode,
            source,
            n_gpus: n,
            global_batch: global,
            per_gpu_batch: per,
            micro_batch: None,
            accumulate: None,
            step_time_ms: None,
            throughput: None,
            speedup: None,
            speedup_base: None,
            efficiency: None,
            bound: None,
            compute_ms: None,
            comm_exposed_ms: None,
            other_ms: None,
            projected: false,
            model_error: None,
            model_error_uncalibrated: None,
            calibration_point: false,
            memory_gib_per_gpu: None,
            energy_j_per_step: None,
            watts_per_gpu: None,
            samples_per_joule: None,
            energy_basis: None,
            energy_window_unix_s: None,
            energy_stretches_unix_s: Vec::new(),
            idle_watts_per_gpu: None,
            cost_per_million_samples: None,
            step_statistic: None,
            fits: None,
            calibration: None,
            host_floor_ms: None,
            gpu_work_ms: None,
            basis: String::new(),
        }
    }
}

/// (global batch, per-GPU batch) of `w` on `n` GPUs in `mode`. Strong: the global batch split
/// in whole samples ([`BatchSplit`]), the per-GPU batch that of the GPUs with the most.
pub fn batches(w: &Workload, mode: Mode, n: usize) -> (f64, f64) {
    match mode {
        Mode::Weak => (w.per_gpu_batch * n as f64, w.per_gpu_batch),
        Mode::Strong => (
            w.strong_global_batch,
            BatchSplit::new(w.strong_global_batch, n).most as f64,
        ),
    }
}

/// The sizes of the NVLink domains sold as racks (GB200/GB300 NVL72, and two and eight of them):
/// beyond the box the model also projects these counts, so that a rack and the same GPUs in
/// 8-GPU boxes can be put side by side (9 × DGX B200 = 72 GPUs).
pub const RACK_DOMAIN_GPUS: [usize; 3] = [72, 144, 576];

/// GPU counts to model: every count 1 … box, then doubling up to `max_gpus` (projected), and
/// the rack-scale domain sizes [`RACK_DOMAIN_GPUS`] above the box.
pub fn gpu_counts(gpus_in_box: usize, max_gpus: usize) -> Vec<usize> {
    let g = gpus_in_box.max(1);
    let mut v: Vec<usize> = (1..=g.min(max_gpus.max(1))).collect();
    // Checked: a count that would overflow ends the list instead of wrapping around.
    let mut next = g.checked_next_power_of_two();
    if next == Some(g) {
        next = g.checked_mul(2);
    }
    while let Some(n) = next.filter(|&n| n <= max_gpus) {
        v.push(n);
        next = n.checked_mul(2);
    }
    v.extend(RACK_DOMAIN_GPUS.iter().filter(|&&n| n > g && n <= max_gpus));
    v.sort_unstable();
    v.dedup();
    v
}

/// Models `w` on `m` for every GPU count of [`gpu_counts`] and every mode. Strong-scaling rows
/// stop where the per-GPU batch would fall below one sample. A row whose step does not fit the
/// GPU's memory keeps its memory figure and says what would fit, with no step time.
pub fn model(w: &Workload, m: &Machine, modes: &[Mode], max_gpus: usize) -> Vec<ScalingPoint> {
    let mut out = Vec::new();
    let counts = gpu_counts(m.gpus_per_node, max_gpus);
    for &mode in modes {
        let mut rows = Vec::new();
        for &n in &counts {
            let p = ScalingPoint::empty(w, mode, RowSource::Modeled, n);
            // Whole samples: where the global batch has fewer than one per GPU, some would idle.
            if p.global_batch < n as f64 {
                break;
            }
            rows.push(model_row(w, m, mode, n, p));
        }
        fill_speedup(&mut rows);
        out.extend(rows);
    }
    out
}

/// Fills the modeled row `p` of `w` on `n` GPUs of `m`: its micro-batch and memory, and the
/// step's terms, or why it does not fit (no step time then).
fn model_row(w: &Workload, m: &Machine, mode: Mode, n: usize, mut p: ScalingPoint) -> ScalingPoint {
    let split_note = match mode {
        Mode::Strong => BatchSplit::new(p.global_batch, n).note(),
        Mode::Weak => None,
    };
    p.projected = n > m.gpus_per_node;
    let wanted = w.micro_batch().min(p.per_gpu_batch);
    let (micro, mem) = fitting_micro_batch(w, m, n, p.per_gpu_batch, wanted);
    let accumulating = p.per_gpu_batch > micro;
    // What the memory was checked at: where there is an estimate, the step is run in
    // micro-batches of that size.
    if mem.is_some() {
        p.micro_batch = Some(micro);
        p.accumulate = Some(batch::accumulation(p.per_gpu_batch, micro));
    }
    let smaller_micro = (micro < wanted).then(|| {
        format!(
            "; in micro-batches of {micro:.0} (the workload's {wanted:.0} does not fit: gradients accumulated, the step modeled as one)"
        )
    });
    // Only a whole estimate is a figure; without the activations it is a lower bound,
    // said in the basis.
    p.memory_gib_per_gpu = mem.as_ref().and_then(|e| e.known_total_gib());
    p.fits = mem.as_ref().and_then(|e| e.fits());
    if let (Some(false), Some(e)) = (p.fits, &mem) {
        let cap = m.gpu_memory_gib.unwrap_or(0.0);
        p.basis = format!(
            "does not fit: {} per GPU of {cap:.0} GiB ({} usable{}); {}",
            e.describe_total(),
            (cap * memory::USABLE_SHARE).floor(),
            if e.known_total_gib().is_none() {
                "; activations unknown, not counted"
            } else {
                ""
            },
            memory::advice(w, n, cap, accumulating)
        );
        if let Some(note) = &split_note {
            p.basis.push_str(&format!("; {note}"));
        }
        return p;
    }
    let memory_note = mem
        .as_ref()
        .filter(|e| e.known_total_gib().is_none())
        .map(|e| {
            if e.nothing_known() {
                "; memory per GPU unknown (the workload states neither its weights nor its \
                 activations)"
                    .to_string()
            } else {
                format!(
                    "; memory per GPU {} (weights, gradients, optimizer states; activations \
                     unknown)",
                    e.describe_total()
                )
            }
        });
    // In micro-batches of `micro` (halved where the workload's does not fit): the host
    // issues each one's kernels, so the host floor goes with their count.
    match step_terms_in(w, m, n, p.per_gpu_batch, micro, mode) {
        Ok(t) => {
            p.step_time_ms = Some(t.step_ms);
            p.throughput = Some(p.global_batch / (t.step_ms * 1e-3));
            p.compute_ms = Some(t.compute_ms);
            p.comm_exposed_ms = Some(t.comm_exposed_ms);
            p.other_ms = Some(t.other_ms);
            p.bound = Some(t.bound);
            p.calibration = Some(t.calibration);
            p.host_floor_ms = t.host_floor_ms;
            p.gpu_work_ms = t.gpu_work_ms;
            p.basis = format!(
                "{}{}{}{}",
                t.calibration_basis,
                basis(w, m, n, p.projected),
                memory_note.as_deref().unwrap_or(""),
                smaller_micro.as_deref().unwrap_or("")
            );
            if let Some(note) = &split_note {
                p.basis.push_str(&format!("; {note}"));
            }
        }
        Err(e) => p.basis = e,
    }
    p
}

/// The micro-batch a step of `per_gpu_batch` samples on `n` GPUs runs in, and its memory
/// estimate. As the framework runs do on running out of memory: micro-batches half as large
/// (the same per-GPU batch, accumulated) than the workload's `wanted`, down to one sample;
/// where none fits, the workload's own micro-batch is what the row reports.
fn fitting_micro_batch(
    w: &Workload,
    m: &Machine,
    n: usize,
    per_gpu_batch: f64,
    wanted: f64,
) -> (f64, Option<memory::MemoryEstimate>) {
    let estimate = |micro: f64| {
        memory::estimate_accumulating(
            w,
            w.pattern,
            n,
            micro,
            per_gpu_batch > micro,
            m.gpu_memory_gib,
        )
    };
    let first = estimate(wanted);
    let too_big =
        |e: &Option<memory::MemoryEstimate>| e.as_ref().and_then(|e| e.fits()) == Some(false);
    if !too_big(&first) {
        return (wanted, first);
    }
    let mut micro = wanted;
    while micro > 1.0 {
        micro = (micro / 2.0).floor().max(1.0);
        let e = estimate(micro);
        if !too_big(&e) {
            return (micro, e);
        }
    }
    (wanted, first)
}

/// Sets speedup and efficiency against the 1-GPU row of the same workload, mode and source; where
/// one GPU does not fit (or was not measured), against the smallest GPU count that has a
/// throughput, scaled as if that count were perfectly efficient (said in the row's basis).
pub fn fill_speedup(rows: &mut [ScalingPoint]) {
    let mut bases: Vec<(String, Mode, RowSource, usize, f64)> = Vec::new();
    for r in rows.iter() {
        let Some(t) = r.throughput else { continue };
        match bases
            .iter_mut()
            .find(|b| b.0 == r.workload && b.1 == r.mode && b.2 == r.source)
        {
            Some(b) if r.n_gpus < b.3 => (b.3, b.4) = (r.n_gpus, t),
            Some(_) => {}
            None => bases.push((r.workload.clone(), r.mode, r.source, r.n_gpus, t)),
        }
    }
    for r in rows.iter_mut() {
        let base = bases
            .iter()
            .find(|b| b.0 == r.workload && b.1 == r.mode && b.2 == r.source);
        if let (Some(&(_, _, _, n0, t0)), Some(t)) = (base, r.throughput) {
            let speedup = t / t0 * n0 as f64;
            r.speedup = Some(speedup);
            r.speedup_base = (n0 > 1).then_some(n0);
            r.efficiency = Some(speedup / r.n_gpus as f64);
            if n0 > 1 && !r.basis.contains("speedup against") {
                r.basis.push_str(&format!(
                    "; speedup against {n0} GPUs × {n0} (fewer do not fit or were not run)"
                ));
            }
        }
    }
}

/// Sets `model_error` on measured rows: (model − measured) ÷ measured step time, against the
/// modeled rows of the same workload, mode and GPU count. The 1-GPU framework row that
/// calibrates the model gets none: it is marked `calibration_point` and says so in its basis.
pub fn attach_errors(rows: &mut [ScalingPoint]) {
    // Model rows at one GPU calibrated by a framework step: from this mode's own step (then the
    // model is that step), or the other mode's (another batch: then it is a real check).
    let calibrated_here: Vec<(String, Mode, f64)> = rows
        .iter()
        .filter(|r| {
            r.source == RowSource::Modeled
                && r.n_gpus == 1
                && r.calibration == Some(CalibrationKind::Framework)
        })
        .filter_map(|r| Some((r.workload.clone(), r.mode, r.step_time_ms?)))
        .collect();
    let models: Vec<(String, Mode, usize, f64)> = rows
        .iter()
        .filter(|r| r.source == RowSource::Modeled)
        .filter_map(|r| Some((r.workload.clone(), r.mode, r.n_gpus, r.step_time_ms?)))
        .collect();
    for r in rows.iter_mut().filter(|r| r.source.is_measured()) {
        // The framework calibration takes the same mode's 1-GPU step when there is one, and
        // its model reproduces it to rounding: that row is the calibration point.
        let point = r.source == RowSource::Framework
            && r.n_gpus == 1
            && r.step_time_ms.is_some_and(|me| {
                calibrated_here.iter().any(|(w, mode, model)| {
                    *w == r.workload && *mode == r.mode && (model - me).abs() <= 1e-9 * me.abs()
                })
            });
        r.calibration_point = point;
        if point {
            r.model_error = None;
            if !r.basis.contains(CALIBRATION_POINT) {
                r.basis.push_str(&format!("; {CALIBRATION_POINT}"));
            }
        } else {
            r.model_error = error_against(&models, r);
        }
    }
}

/// `+1.2%` for 0.012; `—` where unknown or not finite.
fn signed_pct(e: Option<f64>) -> String {
    crate::model::quantities::signed_percent(e.map(|e| e * 100.0))
}

/// The basis note of a calibration point.
pub const CALIBRATION_POINT: &str =
    "the model's calibration point: the model is this step, so it has no error to report";

/// Sets `model_error_uncalibrated` on measured rows against `uncalibrated` model rows.
pub fn attach_uncalibrated_errors(rows: &mut [ScalingPoint], uncalibrated: &[ScalingPoint]) {
    let models: Vec<(String, Mode, usize, f64)> = uncalibrated
        .iter()
        .filter_map(|r| Some((r.workload.clone(), r.mode, r.n_gpus, r.step_time_ms?)))
        .collect();
    for r in rows.iter_mut().filter(|r| r.source.is_measured()) {
        r.model_error_uncalibrated = error_against(&models, r);
    }
}

fn error_against(models: &[(String, Mode, usize, f64)], r: &ScalingPoint) -> Option<f64> {
    let model = models
        .iter()
        .find(|m| m.0 == r.workload && m.1 == r.mode && m.2 == r.n_gpus)
        .map(|m| m.3)?;
    let me = r.step_time_ms.filter(|&me| me > 0.0)?;
    Some((model - me) / me)
}

fn basis(w: &Workload, m: &Machine, n: usize, projected: bool) -> String {
    let comm = match (&m.comm, w.pattern.is_training() && n > 1) {
        (Some(c), true) => format!(
            "; all-reduce curve {} ({}); {}",
            c.source,
            c.basis,
            m.hidden_share(w).1
        ),
        _ => String::new(),
    };
    let proj = if projected {
        format!(
            "; projected over nodes, NIC {:.1} GB/s per GPU",
            m.nic_per_gpu.gbps
        )
    } else {
        String::new()
    };
    format!("{comm}{proj}")
}
