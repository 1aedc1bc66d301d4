//! Where the model's compute term comes from: a measured 1-GPU step of the real framework run
//! (this machine, now), the user's own figure, a catalog record measured on the same GPU family,
//! a record measured on another family moved to this GPU by the ratio of their rates, or — where
//! nothing was ever measured — FLOPs ÷ (GEMM rate × utilization). docs/SCALING.md,
//! "Calibration", has the formulas and their sources.

use serde::{Deserialize, Serialize};

use super::rates::{datasheet_hbm_gbps, datasheet_rate};
use super::workload::{Calibration, ComputeDtype, Workload};
use crate::model::quantile;

/// Which kind of figure calibrates the compute term, most trusted first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationKind {
    /// The user's own 1-GPU step (`--step-ms-1gpu`, `--samples-per-s-1gpu`, the GUI's form).
    User,
    /// The real framework's 1-GPU step, measured on this machine in this run.
    Framework,
    /// A catalog record measured on this GPU family.
    Catalog,
    /// A catalog record measured on another GPU family, moved to this one by rate ratios.
    Transferred,
    /// No measurement: FLOPs ÷ (GEMM rate × the catalog's utilization).
    Utilization,
}

impl CalibrationKind {
    /// The CSV id.
    pub fn id(&self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Framework => "framework",
            Self::Catalog => "catalog",
            Self::Transferred => "transferred",
            Self::Utilization => "utilization",
        }
    }
}

/// Rates a probe measured on one GPU (the framework probe: a bf16 GEMM and a device copy through
/// PyTorch), used to move a calibration measured on another GPU to this one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeRates {
    /// bf16 matrix-multiply rate, TFLOP/s.
    pub gemm_tflops: f64,
    /// Device-memory copy, bytes read + written per second, GB/s.
    pub copy_gbps: f64,
    /// The host probe (a tiny network's forward and backward, whose time is the host's), µs per
    /// iteration; moves a record's host floor to this machine's CPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe_us: Option<f64>,
    /// Host time to issue one asynchronous all-reduce with every GPU of the probe taking part,
    /// µs: DDP issues one per gradient bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allreduce_host_us: Option<f64>,
    /// How they were measured.
    pub basis: String,
}

/// A 1-GPU framework step measured on this machine in this run, for one workload and mode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredStep {
    pub workload: String,
    pub mode: super::Mode,
    /// Samples per GPU in that step.
    pub per_gpu_batch: f64,
    /// The step, ms: the mean over its timed steps (earlier reports: the median).
    pub step_ms: f64,
    /// Of which the optimizer step, ms.
    pub optimizer_ms: f64,
    /// Every measured step, ms (for the straggler term).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_ms: Vec<f64>,
    /// Matrix kernels' share of the GPU's kernel time (profiler), 0 … 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_share: Option<f64>,
    /// Kernel time per step on rank 0 (profiler): matrix kernels and the others, ms — the
    /// figures a catalog record keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_ms: Option<f64>,
    /// The host floor: the same step at a micro-batch 16 times smaller, ms (its time is the
    /// host's: Python, dispatch, launches), at the host's speed during the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_ms: Option<f64>,
    /// The host probe while the steps were timed (between them, same process), µs per
    /// iteration: the host's speed during the window, which `host_ms` is scaled to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_probe_us: Option<f64>,
    /// Micro-batches per step (gradient accumulation), the host floor's too; `None`: one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulate: Option<f64>,
    /// What PyTorch's DDP wrapper costs a step at one rank (the step under DDP on a group of
    /// one − the plain step, timed in alternating blocks), ms; `None` where not timed. The
    /// model adds it to every data-parallel step on two or more GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper_ms: Option<f64>,
    /// The same step under DDP on a group of one, as timed: shown as its own row, "1 GPU under
    /// DDP" (`wrapper_ms` is its cost); `None` where not timed (and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_ddp: Option<UnderDdp>,
    /// Framework versions, GPU.
    pub basis: String,
}

/// A 1-GPU step timed under PyTorch's DistributedDataParallel on a group of one, in blocks
/// alternating with the plain step (assets/frameworks/ddp_step.py, `wrapper_cost`): what the
/// wrapper costs where nothing is exchanged. Never the 1-GPU baseline (speedups are against the
/// plain step) and never ranked: its own labeled row beside the plain one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnderDdp {
    /// The wrapped step, ms (the mean over its blocks' steps; earlier: the median).
    pub wrapped_ms: f64,
    /// The plain step in the blocks between, ms.
    pub plain_ms: f64,
    /// Steps in each block (0: not known).
    #[serde(default)]
    pub block_steps: f64,
}

impl UnderDdp {
    /// From the script's three figures; `None` unless both steps are positive and finite.
    pub fn new(
        wrapped_ms: Option<f64>,
        plain_ms: Option<f64>,
        block_steps: Option<f64>,
    ) -> Option<Self> {
        let ok = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
        Some(Self {
            wrapped_ms: ok(wrapped_ms)?,
            plain_ms: ok(plain_ms)?,
            block_steps: ok(block_steps).unwrap_or(0.0),
        })
    }

    /// What the wrapper costs a step, ms (signed: within the steps' spread it can read below 0).
    pub fn cost_ms(&self) -> f64 {
        self.wrapped_ms - self.plain_ms
    }

    /// Samples per second of the wrapped step at `per_gpu_batch` samples (one GPU).
    pub fn samples_per_s(&self, per_gpu_batch: f64) -> f64 {
        per_gpu_batch / (self.wrapped_ms * 1e-3)
    }

    /// The cost as a share of the plain step.
    pub fn cost_share(&self) -> f64 {
        self.cost_ms() / self.plain_ms
    }

    /// The row's words: both steps, how they were timed, the cost, and where `step` (the plain
    /// step it belongs to) is host-bound, why the cost is large: the wrapper's work is the host's.
    pub fn describe(&self, step: &MeasuredStep) -> String {
        let host = step
            .host_ms
            .filter(|&h| h.is_finite() && is_host_bound(h, step.step_ms))
            .map(|h| {
                format!(
                    "; the plain step is host-bound (its host floor {:.0} % of it) and DDP's autograd hooks and gradient-bucket copies are issued by the host, so they lengthen it",
                    h / step.step_ms * 100.0
                )
            })
            .unwrap_or_default();
        format!(
            "1 GPU under DDP: DistributedDataParallel on a group of one, {:.2} ms against the plain step's {:.2} ms in alternating blocks{}: the wrapper costs {:+.2} ms a step ({:+.1} %) with nothing to exchange{host}; speedup and efficiency are taken against the plain step",
            self.wrapped_ms,
            self.plain_ms,
            if self.block_steps > 0.0 {
                format!(" of {:.0} steps", self.block_steps)
            } else {
                String::new()
            },
            self.cost_ms(),
            self.cost_share() * 100.0
        ) + &self.drift_note(step)
    }

    /// How far the plain step in these blocks is from `step`'s own timed window, as a share of
    /// the window's, where it is more than [`BASELINE_DRIFT`]: the host's speed moved between
    /// them (the window's step is the one speedups are taken against).
    pub fn drift(&self, step: &MeasuredStep) -> Option<f64> {
        let d = self.plain_ms / step.step_ms - 1.0;
        (d.is_finite() && d.abs() > BASELINE_DRIFT).then_some(d)
    }

    fn drift_note(&self, step: &MeasuredStep) -> String {
        self.drift(step)
            .map(|d| {
                format!(
                    "; the plain step read {:.2} ms in these blocks and {:.2} ms in its own timed window ({:+.0} %): the host's speed moved between them, and speedups and efficiencies rest on the window's — measure again on a quiet host to trust them",
                    self.plain_ms,
                    step.step_ms,
                    d * 100.0
                )
            })
            .unwrap_or_default()
    }
}

/// The plain step timed beside DDP and in its own window may differ by this share before the
/// row says the host's speed moved between them.
pub const BASELINE_DRIFT: f64 = 0.10;

/// The host's time to issue one step, at the batch it was measured at: no step of that
/// workload is shorter where the same kernels are launched (docs/SCALING.md, "The host term").
#[derive(Clone, Debug, PartialEq)]
pub struct HostFloor {
    /// The floor of one step at the calibration batch, ms (at this machine's host speed).
    pub ms: f64,
    /// Micro-batches in that step: each launches the forward and backward kernels again.
    pub micro_batches: f64,
    /// Where it comes from, in words (`measured here`, `catalog H200 record moved to this CPU`).
    pub source: String,
}

impl HostFloor {
    /// The floor of a step of `per_gpu` samples in micro-batches of `micro`: the host issues
    /// one forward and backward per micro-batch, so the floor goes with their count.
    pub fn at(&self, per_gpu: f64, micro: f64) -> f64 {
        let k = if micro > 0.0 && per_gpu.is_finite() {
            (per_gpu / micro).ceil().max(1.0)
        } else {
            1.0
        };
        self.ms / self.micro_batches.max(1.0) * k
    }
}

/// The compute term of one workload and mode: time = per-sample cost × samples per GPU + the
/// optimizer step, times the straggler factor for n GPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct StepModel {
    pub kind: CalibrationKind,
    /// Forward + backward per sample, ms.
    pub per_sample_ms: f64,
    /// Optimizer step, ms (once per step, whatever the batch).
    pub optimizer_ms: f64,
    /// Sorted 1-GPU step samples, ms (empty: no straggler term).
    pub samples_ms: Vec<f64>,
    /// Matrix kernels' share of compute, where known.
    pub matrix_share: Option<f64>,
    /// The host (Python, dispatch, kernel launches) sets the step, not the GPU: the step at a
    /// sixteenth of the batch takes ≥ 90 % as long (framework), or the record's host floor moved
    /// here is longer than its kernels.
    pub host_bound: bool,
    /// The host floor ÷ the step, where measured.
    pub host_share: Option<f64>,
    /// The host's time to issue a step, where measured here or in a catalog record: a floor no
    /// modeled step goes below (unless the workload runs under CUDA graphs).
    pub host_floor: Option<HostFloor>,
    /// DDP's own cost per step, measured at one rank (0 where not measured): added on two or
    /// more GPUs, where the wrapper runs.
    pub wrapper_ms: f64,
    /// One line: what calibrates it.
    pub label: String,
}

impl StepModel {
    /// Compute time of one step with `per_gpu` samples on each GPU, ms.
    pub fn compute_ms(&self, per_gpu: f64) -> f64 {
        self.per_sample_ms * per_gpu + self.optimizer_ms
    }

    /// The straggler factor for `n` GPUs: a synchronous step ends when its slowest rank ends,
    /// so the median n-GPU step is the 0.5^(1/n) quantile of the 1-GPU step distribution
    /// (P(max of n ≤ t) = F(t)^n; the order statistics of independent ranks), divided by the
    /// median. 1 without samples or for one GPU.
    pub fn straggler(&self, n: usize) -> f64 {
        // Where the host takes half the step or more, the steps' spread is mostly the host's,
        // and hosts run ahead of their GPUs (the launch queue), so that jitter evens out between
        // ranks instead of stacking up (docs/SCALING.md, "The host term").
        if n <= 1 || self.samples_ms.len() < 3 || self.host_share.is_some_and(|h| h >= 0.5) {
            return 1.0;
        }
        let median = quantile(&self.samples_ms, 0.5);
        let q = 0.5f64.powf(1.0 / n as f64);
        if median > 0.0 {
            (quantile(&self.samples_ms, q) / median).max(1.0)
        } else {
            1.0
        }
    }
}

/// A framework step is host-bound when its host floor (the step at a sixteenth of the batch) takes
/// at least this share of the full step.
pub const HOST_BOUND_SHARE: f64 = 0.9;

/// A step whose host floor takes at least [`HOST_BOUND_SHARE`] of it is set by the host.
pub fn is_host_bound(host_ms: f64, step_ms: f64) -> bool {
    host_ms >= HOST_BOUND_SHARE * step_ms
}

/// What the compute term may be calibrated from, besides the workload itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct CalibrationInputs<'a> {
    /// The GPU's name (`NVIDIA H200`).
    pub gpu_name: Option<&'a str>,
    /// Framework steps measured here (any workload and mode).
    pub measured: &'a [MeasuredStep],
    /// The framework probe's rates on this GPU.
    pub probe: Option<&'a ProbeRates>,
    /// Ignore measurements made here (the "uncalibrated" model, for its error).
    pub catalog_only: bool,
}

/// The compute term for `w` in `mode`, from the most trusted source available; `None` when
/// only the utilization formula applies (the caller then uses the GEMM rate).
pub fn step_model(
    w: &Workload,
    mode: super::Mode,
    inputs: &CalibrationInputs<'_>,
) -> Option<StepModel> {
    if !inputs.catalog_only {
        if let Some(ms) = w.step_ms_1gpu {
            let mut m = from_record_figures(
                CalibrationKind::User,
                w,
                ms,
                0.0,
                None,
                format!(
                    "your 1-GPU step: {ms:.1} ms at {}",
                    crate::model::quantities::samples(w.per_gpu_batch)
                ),
            );
            // Your step sets the GPU's work, not the host's: a smaller per-GPU batch is still
            // no faster than the host can issue it (measured here, else the catalog record's
            // floor moved to this CPU).
            // At your own batch the floor is at most your step (you timed it).
            m.host_floor = measured_here(w, mode, inputs)
                .and_then(|h| h.host_floor)
                .or_else(|| from_catalog(w, mode, inputs).and_then(|c| c.host_floor))
                .map(|f| {
                    if f.ms > ms {
                        HostFloor {
                            source: format!(
                                "{} — {:.1} ms there, capped at your step",
                                f.source, f.ms
                            ),
                            ms,
                            ..f
                        }
                    } else {
                        f
                    }
                });
            return Some(m);
        }
        if let Some(m) = measured_here(w, mode, inputs) {
            return Some(m);
        }
    }
    from_catalog(w, mode, inputs)
}

/// The step model from this workload's framework steps measured here: the same mode's 1-GPU
/// step, else the other mode's (the same model, another batch).
fn measured_here(
    w: &Workload,
    mode: super::Mode,
    inputs: &CalibrationInputs<'_>,
) -> Option<StepModel> {
    let here = |m: super::Mode| {
        inputs
            .measured
            .iter()
            .find(|s| s.workload == w.name && s.mode == m)
    };
    // The same mode's 1-GPU step; else the other mode's (the same model, another batch).
    let other = match mode {
        super::Mode::Weak => super::Mode::Strong,
        super::Mode::Strong => super::Mode::Weak,
    };
    let s = here(mode).or_else(|| here(other))?;
    let mut samples = s.samples_ms.clone();
    samples.sort_by(f64::total_cmp);
    Some(StepModel {
        kind: CalibrationKind::Framework,
        per_sample_ms: (s.step_ms - s.optimizer_ms).max(0.0) / s.per_gpu_batch,
        optimizer_ms: s.optimizer_ms,
        samples_ms: if s.mode == mode { samples } else { Vec::new() },
        matrix_share: s.matrix_share,
        host_bound: s.host_ms.is_some_and(|h| is_host_bound(h, s.step_ms)),
        host_share: s.host_ms.map(|h| h / s.step_ms),
        host_floor: s
            .host_ms
            .filter(|h| h.is_finite() && *h > 0.0)
            .map(|ms| HostFloor {
                ms,
                micro_batches: s.accumulate.unwrap_or(1.0),
                source: format!(
                    "measured here ({} 1-GPU step at a sixteenth of its work)",
                    s.mode.id()
                ),
            }),
        // DDP's own cost per step is one pass over the buckets in either mode (the
        // micro-batches before the last run under no_sync), and interference only adds
        // time: where both modes timed it, the lower is the wrapper's cost (on 4× H200
        // one run read +4.8 ms in weak blocks and +1.2 ms in strong ones, the 2-GPU
        // step 1.5 ms above the plain one; docs/BENCHMARKS.md, issue U).
        wrapper_ms: [here(mode), here(other)]
            .into_iter()
            .flatten()
            .filter_map(|x| x.wrapper_ms)
            .filter(|v| v.is_finite())
            .reduce(f64::min)
            .unwrap_or(0.0)
            .max(0.0),
        label: format!(
            "framework 1-GPU step measured here: {:.1} ms at {} ({})",
            s.step_ms,
            crate::model::quantities::samples(s.per_gpu_batch),
            s.basis
        ),
    })
}

/// The step model from the workload's catalog record of this GPU family, else another
/// family's moved here; `None` without a GPU name or a record.
fn from_catalog(
    w: &Workload,
    mode: super::Mode,
    inputs: &CalibrationInputs<'_>,
) -> Option<StepModel> {
    let gpu = inputs.gpu_name?;
    // A record of this GPU family as measured; else another family's, moved here: matrix
    // kernels by the GEMM-rate ratio, the other kernels by the memory-bandwidth ratio. Either
    // way the host floor moves to this machine's CPU by the host probes' ratio.
    let (c, same) = match w.calibration_for(gpu) {
        Some(c) => (c, true),
        None => (w.calibration.first()?, false),
    };
    let host = host_reading(w, mode, inputs);
    let here = record_here(c, gpu, w.compute_dtype, inputs.probe, host, same)?;
    let kind = if same {
        CalibrationKind::Catalog
    } else {
        CalibrationKind::Transferred
    };
    let mut m = from_record_figures(
        kind,
        w,
        here.step_ms,
        c.optimizer_ms * here.step_ms / c.step_ms,
        c.matrix_ms
            .zip(c.other_ms)
            .filter(|(m, o)| m + o > 0.0)
            .map(|(m, o)| m / (m + o)),
        format!(
            "catalog: {} 1-GPU step {:.1} ms at {} ({}){}",
            c.gpu,
            c.step_ms,
            crate::model::quantities::samples(w.per_gpu_batch),
            c.measured,
            here.how
        ),
    );
    m.host_bound = here.host_bound;
    m.wrapper_ms = c
        .wrapper_ms
        .filter(|v| v.is_finite())
        .unwrap_or(0.0)
        .max(0.0);
    m.host_floor = here.host_ms.map(|ms| HostFloor {
        ms,
        micro_batches: (w.per_gpu_batch / w.micro_batch()).ceil().max(1.0),
        source: format!("{}'s catalog record{}", c.gpu, here.host_how),
    });
    Some(m)
}

/// The host's speed while this workload's own steps were timed here, where they were (the
/// host probe between steps): on a host whose speed wanders, a reading taken minutes apart
/// describes another host. Only the host probe is taken from that run, never its step. Else
/// the framework probe's reading.
fn host_reading(
    w: &Workload,
    mode: super::Mode,
    inputs: &CalibrationInputs<'_>,
) -> Option<HostReading<'static>> {
    inputs
        .measured
        .iter()
        .filter(|s| s.workload == w.name && s.mode == mode)
        .find_map(|s| s.host_probe_us)
        .map(|us| HostReading {
            us,
            when: "read during the measured window",
        })
        .or_else(|| {
            inputs
                .probe
                .and_then(|p| p.host_probe_us)
                .map(|us| HostReading {
                    us,
                    when: "the framework probe's",
                })
        })
}

fn from_record_figures(
    kind: CalibrationKind,
    w: &Workload,
    step_ms: f64,
    optimizer_ms: f64,
    matrix_share: Option<f64>,
    label: String,
) -> StepModel {
    StepModel {
        kind,
        per_sample_ms: (step_ms - optimizer_ms).max(0.0) / w.per_gpu_batch,
        optimizer_ms,
        samples_ms: Vec::new(),
        matrix_share,
        host_bound: false,
        host_share: None,
        host_floor: None,
        wrapper_ms: 0.0,
        label,
    }
}

/// A host probe reading on this machine (µs per iteration) and when it was taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostReading<'a> {
    pub us: f64,
    pub when: &'a str,
}

/// A catalog record's 1-GPU step on this machine.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordHere {
    /// The step, ms.
    pub step_ms: f64,
    /// The host floor moved here is the longer part: the GPU would wait for the CPU.
    pub host_bound: bool,
    /// How it was moved (empty when taken as measured), starting with "; " or " ".
    pub how: String,
    /// The record's host floor on this machine's CPU, ms, where the record has one.
    pub host_ms: Option<f64>,
    /// How that floor was moved, in words (starts with " ", or empty).
    pub host_how: String,
}

/// Moves record `c` to `gpu` (`same_family`: the record's own GPU family). The GPU's part:
/// matrix kernels scale with the GEMM rate, the other kernels with the memory bandwidth (probe
/// rates when both sides have them — the same method on both GPUs — else datasheet figures;
/// kept as measured on the same family). The host's part: the record's host floor × `host`,
/// this machine's host probe reading, ÷ the record's. The step is the longer of the two, plus
/// the record's own remainder (gaps neither explains). A record without a host floor keeps its host gaps as they
/// were. `None` when another family's record has no kernel split or no rates to move it with.
pub fn record_here(
    c: &Calibration,
    gpu: &str,
    dtype: ComputeDtype,
    probe: Option<&ProbeRates>,
    host: Option<HostReading<'_>>,
    same_family: bool,
) -> Option<RecordHere> {
    let kernels = c.matrix_ms.zip(c.other_ms);
    let mut how = String::new();
    // The GPU's kernel time here, and the record's kernel time.
    let (gpu_here, gpu_rec) = match kernels {
        Some((mm, other)) if !same_family => {
            let ((r_ref, r_tgt), (b_ref, b_tgt), src) = move_rates(c, gpu, dtype, probe)?;
            let moved = mm * r_ref / r_tgt + other * b_ref / b_tgt;
            how = format!(
                " moved to {gpu}: kernels {:.1} → {moved:.1} ms ({src})",
                mm + other
            );
            (moved, mm + other)
        }
        Some((mm, other)) => (mm + other, mm + other),
        None if same_family => (c.step_ms, c.step_ms),
        None => return None,
    };
    let Some(host_rec) = c.host_ms else {
        // No host floor: the record's gaps between kernels stay as they were.
        let step = gpu_here + (c.step_ms - gpu_rec).max(0.0);
        return Some(RecordHere {
            step_ms: step,
            host_bound: false,
            how,
            host_ms: None,
            host_how: String::new(),
        });
    };
    let (host_here, host_how) = match (host, c.host_probe_us) {
        (Some(HostReading { us: here, when }), Some(rec)) if rec > 0.0 && here > 0.0 => {
            let h = host_rec * here / rec;
            how.push_str(&format!(
                "; host floor {host_rec:.1} → {h:.1} ms (host probe {rec:.0} → {here:.0} µs, {when})"
            ));
            (
                h,
                format!(" moved to this CPU (host probe {rec:.0} → {here:.0} µs)"),
            )
        }
        _ => {
            how.push_str(&format!(
                "; host floor {host_rec:.1} ms as measured (no host probe to compare CPUs)"
            ));
            (
                host_rec,
                " as measured there (no host probe here to compare CPUs)".to_string(),
            )
        }
    };
    let rest = (c.step_ms - gpu_rec.max(host_rec)).max(0.0);
    let host_bound = host_here >= gpu_here;
    if host_bound {
        how.push_str(" — host-bound: the GPU waits for the CPU");
    }
    let step = gpu_here.max(host_here) + rest;
    Some(RecordHere {
        step_ms: step,
        host_bound,
        how,
        host_ms: Some(host_here),
        host_how,
    })
}

/// A rate on the record's GPU and the same rate here.
type RatePair = (f64, f64);

/// The rates that move a record's kernels from `c.gpu` to `gpu`: (GEMM record → here, copy
/// record → here, how). Probe rates when both sides have them (the same method on both GPUs),
/// else datasheet figures for both; `None` when neither is known or a rate here is not positive.
fn move_rates(
    c: &Calibration,
    gpu: &str,
    dtype: ComputeDtype,
    probe: Option<&ProbeRates>,
) -> Option<(RatePair, RatePair, String)> {
    let rates = match (probe, c.gemm_tflops, c.copy_gbps) {
        (Some(p), Some(r), Some(b)) => (
            (r, p.gemm_tflops),
            (b, p.copy_gbps),
            format!(
                "GEMM {:.0} → {:.0} TFLOP/s, copy {:.0} → {:.0} GB/s, probe-measured",
                r, p.gemm_tflops, b, p.copy_gbps
            ),
        ),
        _ => {
            let r_ref = datasheet_rate(&c.gpu, dtype)?.tflops;
            let r_tgt = datasheet_rate(gpu, dtype)?.tflops;
            let b_ref = datasheet_hbm_gbps(&c.gpu)?;
            let b_tgt = datasheet_hbm_gbps(gpu)?;
            (
                (r_ref, r_tgt),
                (b_ref, b_tgt),
                format!(
                    "datasheet: {dtype} {r_ref:.0} → {r_tgt:.0} TFLOP/s, memory {b_ref:.0} → {b_tgt:.0} GB/s"
                ),
            )
        }
    };
    (rates.0.1 > 0.0 && rates.1.1 > 0.0).then_some(rates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::Mode;
    use crate::scaling::workload::catalog;

    #[test]
    fn the_row_under_ddp_says_why_where_the_plain_step_is_host_bound() {
        let step = |step_ms: f64, host_ms: Option<f64>| MeasuredStep {
            workload: "bert-large".into(),
            mode: Mode::Weak,
            per_gpu_batch: 64.0,
            step_ms,
            optimizer_ms: 5.0,
            samples_ms: Vec::new(),
            matrix_share: None,
            matrix_ms: None,
            other_ms: None,
            host_ms,
            host_probe_us: None,
            accumulate: None,
            wrapper_ms: Some(33.0),
            under_ddp: None,
            basis: "test".into(),
        };
        let u = UnderDdp::new(Some(127.6), Some(94.6), Some(12.0)).unwrap();
        assert!((u.cost_ms() - 33.0).abs() < 1e-9);
        // BERT-large on an H100: its host floor 101.4 of 106.5 ms (95 %).
        let bound = u.describe(&step(106.5, Some(101.4)));
        assert!(bound.contains("+33.00 ms a step (+34.9 %)"), "{bound}");
        assert!(
            bound.contains("host-bound (its host floor 95 % of it)"),
            "{bound}"
        );
        // A step the GPU sets (ResNet-50: 29.6 of 64.3 ms), or no host floor: the figures only.
        for host in [Some(29.6), None] {
            let words = u.describe(&step(64.3, host));
            assert!(!words.contains("host-bound"), "{words}");
            assert!(
                words.contains("against the plain step's 94.60 ms"),
                "{words}"
            );
        }
        // Nothing to show without both steps.
        assert_eq!(UnderDdp::new(Some(127.6), None, Some(12.0)), None);
        assert_eq!(UnderDdp::new(Some(f64::NAN), Some(94.6), None), None);
    }

    fn gpt2() -> Workload {
        catalog().into_iter().find(|w| w.name == "gpt2-xl").unwrap()
    }

    #[test]
    fn straggler_is_the_quantile_of_the_max() {
        let samples: Vec<f64> = (1..=101).map(|i| 100.0 + i as f64).collect();
        let m = StepModel {
            kind: CalibrationKind::Framework,
            per_sample_ms: 1.0,
            optimizer_ms: 0.0,
            samples_ms: samples,
            matrix_share: None,
            host_bound: false,
            host_share: None,
            host_floor: None,
            wrapper_ms: 0.0,
            label: String::new(),
        };
        assert_eq!(m.straggler(1), 1.0);
        // n = 2: the 0.7071 quantile of 101…201 is 101 + 0.7071·100 = 171.71; median 151.
        let f = m.straggler(2);
        assert!((f - 171.7107 / 151.0).abs() < 1e-4, "{f}");
        assert!(m.straggler(8) > f);
        // A step whose host floor is half of it or more: no straggler term.
        let host = StepModel {
            host_share: Some(0.6),
            ..m.clone()
        };
        assert_eq!(host.straggler(2), 1.0);
        let gpu = StepModel {
            host_share: Some(0.3),
            ..m
        };
        assert_eq!(gpu.straggler(2), f);
    }

    #[test]
    fn user_figure_wins_and_sets_the_one_gpu_step() {
        let mut w = gpt2();
        w.step_ms_1gpu = Some(50.0);
        let m = step_model(
            &w,
            Mode::Weak,
            &CalibrationInputs {
                gpu_name: Some("NVIDIA H200"),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(m.kind, CalibrationKind::User);
        assert!((m.compute_ms(w.per_gpu_batch) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn catalog_record_for_the_family_else_moved() {
        let w = gpt2();
        let inputs = CalibrationInputs {
            gpu_name: Some("NVIDIA H200"),
            ..Default::default()
        };
        let m = step_model(&w, Mode::Weak, &inputs).unwrap();
        assert_eq!(m.kind, CalibrationKind::Catalog);
        let c = w.calibration_for("NVIDIA H200").unwrap();
        assert!((m.compute_ms(w.per_gpu_batch) - c.step_ms).abs() < 1e-9);
        // On an H100 (80 GB HBM3): same dense bf16 rate, 3.35 vs 4.8 TB/s: only the non-matrix
        // kernels take longer.
        let h100 = CalibrationInputs {
            gpu_name: Some("NVIDIA H100 80GB HBM3"),
            ..Default::default()
        };
        let t = step_model(&w, Mode::Weak, &h100).unwrap();
        assert_eq!(t.kind, CalibrationKind::Transferred);
        let expect = c.matrix_ms.unwrap()
            + c.other_ms.unwrap() * 4800.0 / 3350.0
            + (c.step_ms - c.matrix_ms.unwrap() - c.other_ms.unwrap());
        assert!(
            (t.compute_ms(w.per_gpu_batch) - expect).abs() < 1e-6,
            "{} vs {expect}",
            t.compute_ms(w.per_gpu_batch)
        );
        // No datasheet for the GPU and no probe: nothing to move it with.
        let unknown = CalibrationInputs {
            gpu_name: Some("Mystery GPU"),
            ..Default::default()
        };
        assert!(step_model(&w, Mode::Weak, &unknown).is_none());
    }

    fn record(host_ms: Option<f64>) -> Calibration {
        Calibration {
            gpu: "H200".into(),
            step_ms: 60.0,
            optimizer_ms: 3.0,
            matrix_ms: Some(29.0),
            other_ms: Some(28.0),
            gemm_tflops: Some(800.0),
            copy_gbps: Some(4000.0),
            peak_mem_gib: None,
            host_ms,
            host_probe_us: Some(1000.0),
            wrapper_ms: None,
            measured: "test".into(),
        }
    }

    fn probe(host_probe_us: Option<f64>) -> ProbeRates {
        ProbeRates {
            gemm_tflops: 800.0,
            copy_gbps: 4000.0,
            host_probe_us,
            allreduce_host_us: None,
            basis: "test".into(),
        }
    }

    #[test]
    fn a_host_floor_moves_with_the_host_probe() {
        let dtype = ComputeDtype::Bf16;
        // Host-bound record (floor 65 ms over 57 ms of kernels) on a CPU 1.5× slower: the step
        // is the host's 65 × 1.5 = 97.5 ms (the record had no time beyond the longer part).
        let slow = probe(Some(1500.0));
        // The record with floor `floor` on an H200 whose host probe reads `host` µs.
        let on_h200 = |floor, host: Option<f64>| {
            let reading = host.map(|us| HostReading {
                us,
                when: "test reading",
            });
            record_here(
                &record(floor),
                "NVIDIA H200",
                dtype,
                Some(&slow),
                reading,
                true,
            )
            .unwrap()
        };
        let h = on_h200(Some(65.0), Some(1500.0));
        assert!((h.step_ms - 97.5).abs() < 1e-9, "{h:?}");
        assert!(
            h.host_bound && h.how.contains("host probe 1000 → 1500 µs, test reading"),
            "{h:?}"
        );
        // GPU-bound record (floor 20 ms): the slower CPU still finishes first; the step stays
        // 57 ms of kernels + the record's 3 ms remainder.
        let g = on_h200(Some(20.0), Some(1500.0));
        assert!((g.step_ms - 60.0).abs() < 1e-9 && !g.host_bound, "{g:?}");
        // No host probe here: the floor is taken as measured, and said so.
        let same = on_h200(Some(65.0), None);
        assert!((same.step_ms - 65.0).abs() < 1e-9, "{same:?}");
        assert!(same.how.contains("as measured"), "{same:?}");
        // No host floor in the record: as before, the record's step.
        let old = on_h200(None, Some(1500.0));
        assert!(
            (old.step_ms - 60.0).abs() < 1e-9 && !old.host_bound,
            "{old:?}"
        );
        // Another family (probe rates): kernels by the rates, host by the probe; the longer wins.
        let h100 = ProbeRates {
            gemm_tflops: 400.0,
            copy_gbps: 2000.0,
            host_probe_us: Some(500.0),
            allreduce_host_us: None,
            basis: "test".into(),
        };
        let t = record_here(
            &record(Some(65.0)),
            "NVIDIA H100",
            dtype,
            Some(&h100),
            Some(HostReading {
                us: 500.0,
                when: "test reading",
            }),
            false,
        )
        .unwrap();
        // Kernels 29 × 2 + 28 × 2 = 114 ms; host 65 × 0.5 = 32.5 ms.
        assert!((t.step_ms - 114.0).abs() < 1e-9 && !t.host_bound, "{t:?}");
    }

    #[test]
    fn a_host_bound_catalog_step_is_bound_by_the_host() {
        let mut w = gpt2();
        w.calibration = vec![record(Some(65.0))];
        let slow = probe(Some(1500.0));
        let inputs = CalibrationInputs {
            gpu_name: Some("NVIDIA H200"),
            probe: Some(&slow),
            ..Default::default()
        };
        let m = step_model(&w, Mode::Weak, &inputs).unwrap();
        assert_eq!(m.kind, CalibrationKind::Catalog);
        assert!(m.host_bound);
        assert!(m.label.contains("host-bound"), "{}", m.label);
    }

    #[test]
    fn catalog_only_reads_the_host_during_the_measured_window() {
        let mut w = gpt2();
        w.calibration = vec![record(Some(65.0))];
        // The separate probe read the record's host speed; while the weak steps were timed the
        // host ran 1.5× slower. The strong steps were not measured.
        let measured = [MeasuredStep {
            workload: w.name.clone(),
            mode: Mode::Weak,
            per_gpu_batch: w.per_gpu_batch,
            step_ms: 100.0,
            optimizer_ms: 3.0,
            samples_ms: Vec::new(),
            matrix_share: None,
            matrix_ms: None,
            other_ms: None,
            host_ms: Some(99.0),
            host_probe_us: Some(1500.0),
            accumulate: None,
            wrapper_ms: None,
            under_ddp: None,
            basis: "test".into(),
        }];
        let separate = probe(Some(1000.0));
        let inputs = CalibrationInputs {
            gpu_name: Some("NVIDIA H200"),
            measured: &measured,
            probe: Some(&separate),
            catalog_only: true,
        };
        // Weak: the record's host floor 65 ms × 1500 ÷ 1000, host-bound; nothing else of the
        // measured step (its 100 ms, its 99 ms floor) enters.
        let weak = step_model(&w, Mode::Weak, &inputs).unwrap();
        assert_eq!(weak.kind, CalibrationKind::Catalog);
        assert!(
            (weak.compute_ms(w.per_gpu_batch) - 97.5).abs() < 1e-9,
            "{weak:?}"
        );
        assert!(
            weak.label.contains("during the measured window"),
            "{}",
            weak.label
        );
        // Strong: no window of its own, the separate probe: the record's 65 ms.
        let strong = step_model(&w, Mode::Strong, &inputs).unwrap();
        assert!(
            (strong.compute_ms(w.per_gpu_batch) - 65.0).abs() < 1e-9,
            "{strong:?}"
        );
        assert!(!strong.label.contains("during the measured window"));
        // Without the framework probe (it failed) the window's reading still moves the floor.
        let no_probe = CalibrationInputs {
            probe: None,
            ..inputs
        };
        let weak = step_model(&w, Mode::Weak, &no_probe).unwrap();
        assert!(
            (weak.compute_ms(w.per_gpu_batch) - 97.5).abs() < 1e-9,
            "{weak:?}"
        );
        // A record without a host floor uses no reading and claims none.
        w.calibration = vec![record(None)];
        let gpu_bound = step_model(&w, Mode::Weak, &inputs).unwrap();
        assert!(
            !gpu_bound.label.contains("host probe"),
            "{}",
            gpu_bound.label
        );
    }

    #[test]
    fn the_wrapper_cost_is_the_lower_of_both_modes_timings() {
        let w = gpt2();
        let step = |mode, wrapper_ms| MeasuredStep {
            workload: w.name.clone(),
            mode,
            per_gpu_batch: w.per_gpu_batch,
            step_ms: 100.0,
            optimizer_ms: 3.0,
            samples_ms: Vec::new(),
            matrix_share: None,
            matrix_ms: None,
            other_ms: None,
            host_ms: None,
            host_probe_us: None,
            accumulate: None,
            wrapper_ms,
            under_ddp: None,
            basis: "test".into(),
        };
        let both = [step(Mode::Weak, Some(4.8)), step(Mode::Strong, Some(1.2))];
        let inputs = CalibrationInputs {
            gpu_name: Some("NVIDIA H200"),
            measured: &both,
            ..Default::default()
        };
        for mode in [Mode::Weak, Mode::Strong] {
            let m = step_model(&w, mode, &inputs).unwrap();
            assert!((m.wrapper_ms - 1.2).abs() < 1e-12, "{mode:?}: {m:?}");
        }
        // One mode timed it: that figure; none: no cost.
        let one = [step(Mode::Weak, Some(4.8)), step(Mode::Strong, None)];
        let inputs = CalibrationInputs {
            measured: &one,
            ..inputs
        };
        let m = step_model(&w, Mode::Strong, &inputs).unwrap();
        assert!((m.wrapper_ms - 4.8).abs() < 1e-12, "{m:?}");
    }

    #[test]
    fn measured_here_beats_the_catalog_unless_catalog_only() {
        let w = gpt2();
        let measured = [MeasuredStep {
            workload: w.name.clone(),
            mode: Mode::Weak,
            per_gpu_batch: w.per_gpu_batch,
            step_ms: 400.0,
            optimizer_ms: 10.0,
            samples_ms: vec![400.0, 401.0, 399.0],
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
        let mut inputs = CalibrationInputs {
            gpu_name: Some("NVIDIA H200"),
            measured: &measured,
            ..Default::default()
        };
        let m = step_model(&w, Mode::Strong, &inputs).unwrap();
        assert_eq!(m.kind, CalibrationKind::Framework);
        // Strong mode borrows the weak step's per-sample cost: 64 samples → 64·390/8 + 10.
        assert!((m.compute_ms(64.0) - (64.0 * 390.0 / 8.0 + 10.0)).abs() < 1e-9);
        inputs.catalog_only = true;
        assert_eq!(
            step_model(&w, Mode::Weak, &inputs).unwrap().kind,
            CalibrationKind::Catalog
        );
    }
}
