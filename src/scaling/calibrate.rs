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
    /// Median step, ms.
    pub step_ms: f64,
    /// Of which the optimizer step, ms.
    pub optimizer_ms: f64,
    /// Every measured step, ms (for the straggler term).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_ms: Vec<f64>,
    /// Matrix kernels' share of the GPU's kernel time (profiler), 0 … 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix_share: Option<f64>,
    /// Framework versions, GPU.
    pub basis: String,
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
        if n <= 1 || self.samples_ms.len() < 3 {
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
    if let Some(ms) = w.step_ms_1gpu
        && !inputs.catalog_only
    {
        return Some(from_record_figures(
            CalibrationKind::User,
            w,
            ms,
            0.0,
            None,
            format!("your 1-GPU step: {ms:.1} ms at {} samples", w.per_gpu_batch),
        ));
    }
    if !inputs.catalog_only {
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
        if let Some(s) = here(mode).or_else(|| here(other)) {
            let mut samples = s.samples_ms.clone();
            samples.sort_by(f64::total_cmp);
            return Some(StepModel {
                kind: CalibrationKind::Framework,
                per_sample_ms: (s.step_ms - s.optimizer_ms).max(0.0) / s.per_gpu_batch,
                optimizer_ms: s.optimizer_ms,
                samples_ms: if s.mode == mode { samples } else { Vec::new() },
                matrix_share: s.matrix_share,
                label: format!(
                    "framework 1-GPU step measured here: {:.1} ms at {} samples ({})",
                    s.step_ms, s.per_gpu_batch, s.basis
                ),
            });
        }
    }
    let gpu = inputs.gpu_name?;
    if let Some(c) = w.calibration_for(gpu) {
        return Some(from_record(
            CalibrationKind::Catalog,
            w,
            c,
            1.0,
            String::new(),
        ));
    }
    // Another family's record, moved here: matrix kernels by the GEMM-rate ratio, the rest of
    // the kernels by the memory-bandwidth ratio, host gaps unchanged.
    let c = w.calibration.first()?;
    let (scale, how) = transfer_scale(c, gpu, w.compute_dtype, inputs.probe)?;
    Some(from_record(
        CalibrationKind::Transferred,
        w,
        c,
        scale,
        format!(" moved to {gpu} × {scale:.3} ({how})"),
    ))
}

fn from_record(
    kind: CalibrationKind,
    w: &Workload,
    c: &Calibration,
    scale: f64,
    moved: String,
) -> StepModel {
    let share = match (c.matrix_ms, c.other_ms) {
        (Some(m), Some(o)) if m + o > 0.0 => Some(m / (m + o)),
        _ => None,
    };
    from_record_figures(
        kind,
        w,
        c.step_ms * scale,
        c.optimizer_ms * scale,
        share,
        format!(
            "catalog: {} 1-GPU step {:.1} ms at {} samples ({}){moved}",
            c.gpu, c.step_ms, w.per_gpu_batch, c.measured
        ),
    )
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
        label,
    }
}

/// How much longer (> 1) or shorter a step measured on `c.gpu` takes on `gpu`, and how that was
/// derived: the matrix kernels' time scales with the GEMM rate, the other kernels' with the
/// memory bandwidth, the rest (host gaps) stays. Probe rates when both sides have them (the same
/// method on both GPUs), else datasheet figures for both; `None` when neither is known.
pub fn transfer_scale(
    c: &Calibration,
    gpu: &str,
    dtype: ComputeDtype,
    probe: Option<&ProbeRates>,
) -> Option<(f64, String)> {
    let (mm, other) = (c.matrix_ms?, c.other_ms?);
    let rest = (c.step_ms - mm - other).max(0.0);
    let ((r_ref, r_tgt), (b_ref, b_tgt), how) = match (probe, c.gemm_tflops, c.copy_gbps) {
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
    if r_tgt <= 0.0 || b_tgt <= 0.0 {
        return None;
    }
    let moved = mm * r_ref / r_tgt + other * b_ref / b_tgt + rest;
    Some((moved / c.step_ms, how))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::Mode;
    use crate::scaling::workload::catalog;

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
            label: String::new(),
        };
        assert_eq!(m.straggler(1), 1.0);
        // n = 2: the 0.7071 quantile of 101…201 is 101 + 0.7071·100 = 171.71; median 151.
        let f = m.straggler(2);
        assert!((f - 171.7107 / 151.0).abs() < 1e-4, "{f}");
        assert!(m.straggler(8) > f);
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
