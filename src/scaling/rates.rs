//! GPU matrix-multiply rates: measured with cuBLAS (`proxy::measure_gemm`) or, when
//! nothing was measured, the datasheet's dense rate for the GPU's name (labeled modeled).
//! Measured rates come in two kinds: the first GPU alone, and every selected GPU while all of
//! them run GEMMs at once ([`PerGpuRates`]); a data-parallel step runs at the slowest GPU's
//! rate among those in it ([`slowest`]).

use serde::{Deserialize, Serialize};

use super::workload::{ComputeDtype, Workload};
use crate::model::Source;

/// A dense matrix-multiply rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GemmRate {
    /// TFLOP/s (10^12 FLOP/s).
    pub tflops: f64,
    /// measured (cuBLAS on this GPU) or modeled (datasheet).
    pub source: Source,
    /// How it was obtained, e.g. `cuBLAS bf16 8192³, median of 5` or a datasheet.
    pub basis: String,
    /// Measured rates: the GPU's mean power over the timed samples, W (NVML energy counter);
    /// `None` where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
}

/// One datasheet row: name substrings (all must match, case-insensitive), dense bf16 and fp32
/// TFLOP/s, and the source.
struct Sheet {
    matches: &'static [&'static str],
    bf16: f64,
    fp32: f64,
    /// Memory bandwidth, GB/s.
    hbm_gbps: f64,
    source: &'static str,
    /// Board power limit (TDP), W, and where it is from.
    power_w: f64,
    /// Power of the GPU at rest with the driver loaded, W, and where it is from; `None` where
    /// nobody we can cite measured it.
    idle_w: Option<f64>,
    power_source: &'static str,
}

// Dense rates (no sparsity). bf16 with fp32 accumulate.
const SHEETS: &[Sheet] = &[
    // Blackwell: the superchip parts first (their names contain the board parts').
    Sheet {
        matches: &["gb300"],
        bf16: 2500.0,
        fp32: 80.0,
        hbm_gbps: 8000.0,
        source: "Verda, \"NVIDIA GB300 NVL72: GPU Architecture & Performance\" (per-GPU table, dense): BF16 2.5 PFLOPS, FP8 5 PFLOPS (not used by the model); FP32 0.080; 8 TB/s",
        power_w: 1400.0,
        idle_w: None,
        power_source: "Verda's per-GPU table: GB300 max TDP 1.4 kW",
    },
    Sheet {
        matches: &["gb200"],
        bf16: 2500.0,
        fp32: 80.0,
        hbm_gbps: 8000.0,
        source: "NVIDIA GB200 NVL72 specifications, rack totals ÷ 72 GPUs: FP16/BF16 360 PFLOPS with sparsity = 2.5 PFLOPS dense, FP32 5,760 TFLOPS = 80, HBM3e 576 TB/s = 8 TB/s; the GB200 part runs at 1.2 kW where HGX B200 runs at 1 kW and 2.25 PFLOPS (G. Lockwood's B200 notes from NVIDIA's Blackwell technical brief agree on 2.5 PFLOPS BF16 dense at 1.2 kW; Verda's per-GPU table lists 2.25 and 7.7 TB/s, B200's figures)",
        power_w: 1200.0,
        idle_w: None,
        power_source: "Verda's per-GPU table: GB200 max TDP 1.2 kW",
    },
    Sheet {
        matches: &["b300"],
        bf16: 2250.0,
        fp32: 75.0,
        hbm_gbps: 8000.0,
        source: "Verda, \"NVIDIA GB300 NVL72: GPU Architecture & Performance\" (per-GPU table, dense): BF16 2.25 PFLOPS, FP8 4.5 PFLOPS (not used by the model); FP32 0.075 (G. Lockwood's B300 notes, from NVIDIA's HGX B300 figures, agree: BF16 2,250 TFLOPS dense, FP32 75); memory 8 TB/s: HGX B300 as its resellers publish it, \"up to 8 TB/s per GPU, 64 TB/s per node\" (AceCloud), and Lockwood's 8 TB/s (Verda's table lists 7.7)",
        power_w: 1100.0,
        idle_w: None,
        power_source: "Verda's per-GPU table: B300 max TDP 1.1 kW",
    },
    Sheet {
        matches: &["b200"],
        bf16: 2250.0,
        fp32: 75.0,
        hbm_gbps: 8000.0,
        source: "Verda, \"NVIDIA GB300 NVL72: GPU Architecture & Performance\" (per-GPU table, dense): BF16 2.25 PFLOPS (DGX B200's 72 PFLOPS FP8 training ÷ 8 GPUs ÷ 2 for sparsity ÷ 2 for BF16 agrees), FP8 4.5 PFLOPS (not used by the model); FP32 0.075; memory 8 TB/s: DGX B200's 64 TB/s HBM3e ÷ 8 GPUs (Verda's table lists 7.7)",
        power_w: 1000.0,
        idle_w: None,
        power_source: "MLCommons inference v6.0 nebius_b200_n1: \"B200 TGP 1000W\"",
    },
    Sheet {
        matches: &["rtx pro 6000"],
        bf16: 500.0,
        fp32: 125.0,
        hbm_gbps: 1792.0,
        source: "RTX PRO 6000 Blackwell as announced at GTC 2025 (gpu.name, VideoCardz): FP32 125 TFLOPS, 1,792 GB/s; BF16 500 TFLOPS dense (FP8 1,000) derived from its 4,000 AI TOPS (FP4 with sparsity) ÷ 2 (sparsity) ÷ 2 (FP8) ÷ 2 (BF16), not published figures",
        power_w: 600.0,
        idle_w: None,
        power_source: "RTX PRO 6000 Blackwell as announced: 600 W",
    },
    Sheet {
        matches: &["h200", "nvl"],
        bf16: 835.5,
        fp32: 60.0,
        hbm_gbps: 4800.0,
        source: "NVIDIA H200 datasheet (NVL): BF16 1,671 TFLOPS with sparsity → 835.5 dense (FP8 3,341 → 1,670.5, not used by the model); FP32 60; 4.8 TB/s",
        power_w: 600.0,
        idle_w: None,
        power_source: "NVIDIA H200 datasheet: H200 NVL max TDP up to 600 W (configurable)",
    },
    Sheet {
        matches: &["h200"],
        bf16: 989.0,
        fp32: 67.0,
        hbm_gbps: 4800.0,
        source: "NVIDIA H200 datasheet (SXM): BF16 1,979 TFLOPS with sparsity → 989 dense; FP32 67; 4.8 TB/s",
        power_w: 700.0,
        idle_w: Some(128.0),
        power_source: "NVIDIA H200 datasheet: max TDP up to 700 W (SXM); idle 128 W: NVML with a CUDA context up and no work, nvidia-h200, 2026-11-26 (126–129 W; 81 W with no process on the GPU)",
    },
    Sheet {
        matches: &["h100", "pcie"],
        bf16: 756.0,
        fp32: 51.0,
        hbm_gbps: 2000.0,
        source: "NVIDIA H100 datasheet (PCIe): BF16 1,513 TFLOPS with sparsity → 756 dense; FP32 51; 2 TB/s",
        power_w: 350.0,
        idle_w: None,
        power_source: "NVIDIA H100 datasheet: max TDP 300–350 W (PCIe)",
    },
    Sheet {
        matches: &["h100"],
        bf16: 989.0,
        fp32: 67.0,
        hbm_gbps: 3350.0,
        source: "NVIDIA H100 datasheet (SXM): BF16 1,979 TFLOPS with sparsity → 989 dense; FP32 67; 3.35 TB/s",
        power_w: 700.0,
        idle_w: Some(123.0),
        power_source: "NVIDIA H100 datasheet: max TDP up to 700 W (SXM); idle 123 W: NVML with a CUDA context up and no work, nvidia-h100-x1, 2026-11-26 (121–126 W; 70–73 W with no process on the GPU)",
    },
    Sheet {
        matches: &["a100"],
        bf16: 312.0,
        fp32: 19.5,
        hbm_gbps: 2039.0,
        source: "NVIDIA A100 datasheet: BF16 312 TFLOPS dense (624 with sparsity); FP32 19.5; 2,039 GB/s (80 GB SXM)",
        power_w: 400.0,
        idle_w: None,
        power_source: "NVIDIA A100 datasheet: max TDP 400 W (80 GB SXM; the PCIe card is 300 W)",
    },
    Sheet {
        matches: &["l40s"],
        bf16: 362.05,
        fp32: 91.6,
        hbm_gbps: 864.0,
        source: "NVIDIA L40S datasheet: BF16 362.05 TFLOPS dense (733 with sparsity); FP32 91.6; 864 GB/s",
        power_w: 350.0,
        idle_w: None,
        power_source: "NVIDIA L40S datasheet: max power consumption 350 W",
    },
    Sheet {
        matches: &["4090"],
        bf16: 165.2,
        fp32: 82.6,
        hbm_gbps: 1008.0,
        source: "NVIDIA Ada Lovelace architecture whitepaper, Appendix A (RTX 4090): BF16 with FP32 \
                 accumulate 165.2 TFLOPS dense (330.3 with sparsity; 330.3 dense only with FP16 \
                 accumulate); FP32 82.6; 1,008 GB/s",
        power_w: 450.0,
        idle_w: None,
        power_source: "NVIDIA GeForce RTX 4090 specifications: total graphics power 450 W",
    },
];

/// How many times shorter than the fastest GPU's compute bound a stated step must be to be
/// refused ([`possible_step`]).
pub const IMPOSSIBLE_MARGIN: f64 = 10.0;

/// [`IMPOSSIBLE_MARGIN`] for a bf16 workload on a GPU whose datasheet is known: its dense bf16
/// rate is the most it computes, but for FP8 kernels (Transformer Engine) at twice it.
pub const IMPOSSIBLE_MARGIN_BF16_KNOWN_GPU: f64 = 2.0;

/// The shortest a step of `flops` can be on any GPU of the datasheets (its dense peak rate for
/// `dtype`), ms: no step measured or stated anywhere is shorter. With that rate, TFLOP/s.
pub fn fastest_possible_ms(flops: f64, dtype: ComputeDtype) -> (f64, f64) {
    let rate = |s: &Sheet| match dtype {
        ComputeDtype::Bf16 => s.bf16,
        ComputeDtype::Fp32 => s.fp32,
    };
    let best = SHEETS
        .iter()
        .max_by(|a, b| rate(a).total_cmp(&rate(b)))
        .expect("the datasheets are not empty");
    (flops / (rate(best) * 1e12) * 1e3, rate(best))
}

/// Whether a 1-GPU step of `step_ms` at `w`'s per-GPU batch could be: no GPU computes its FLOPs
/// faster than the fastest datasheet's dense peak ([`fastest_possible_ms`]). Some workloads'
/// FLOPs are estimates (a simulator's, a renderer's) and fp32 models may run TF32 kernels above
/// the FP32 rate, so only a step [`IMPOSSIBLE_MARGIN`] times shorter than that is refused: a typo
/// or a unit slip, never a calibration. On a GPU whose datasheet is known, a bf16 step is held
/// to [`IMPOSSIBLE_MARGIN_BF16_KNOWN_GPU`] ([`possible_step_on`]).
pub fn possible_step(w: &Workload, step_ms: f64) -> Result<(), String> {
    possible_step_on(w, step_ms, None)
}

/// [`possible_step`] on the GPU named `gpu` where its datasheet is known (a 3 ms ResNet-50
/// step of 256 images is a typo on an RTX 4090, whose peak needs 38 ms, though not on any GPU
/// at all), else on the fastest GPU of the datasheets.
pub fn possible_step_on(w: &Workload, step_ms: f64, gpu: Option<&str>) -> Result<(), String> {
    let flops = w.flops_per_sample * w.per_gpu_batch;
    let on = gpu.and_then(|g| Some((g, datasheet_rate(g, w.compute_dtype)?.tflops)));
    let (least, tflops, whose) = match on {
        Some((g, tflops)) => (
            flops / (tflops * 1e12) * 1e3,
            tflops,
            format!("{g}'s datasheet rate"),
        ),
        None => {
            let (least, tflops) = fastest_possible_ms(flops, w.compute_dtype);
            (least, tflops, "the fastest datasheet rate".to_string())
        }
    };
    let margin = match (on.is_some(), w.compute_dtype) {
        (true, ComputeDtype::Bf16) => IMPOSSIBLE_MARGIN_BF16_KNOWN_GPU,
        _ => IMPOSSIBLE_MARGIN,
    };
    if step_ms * margin >= least {
        return Ok(());
    }
    Err(format!(
        "a {} ms step of {} ({} per GPU) is over {margin}× faster than {} computes its {:.2} \
         TFLOP: at least {least:.2} ms at {whose} ({tflops} TFLOP/s dense)",
        crate::model::validate::number(step_ms),
        w.name,
        crate::model::quantities::samples(w.per_gpu_batch),
        if on.is_some() { "this GPU" } else { "any GPU" },
        flops / 1e12,
    ))
}

/// The datasheet's dense rate for a GPU name (e.g. `NVIDIA H200`), labeled modeled.
pub fn datasheet_rate(gpu_name: &str, dtype: ComputeDtype) -> Option<GemmRate> {
    let name = gpu_name.to_lowercase();
    let s = SHEETS
        .iter()
        .find(|s| s.matches.iter().all(|m| name.contains(m)))?;
    Some(GemmRate {
        tflops: match dtype {
            ComputeDtype::Bf16 => s.bf16,
            ComputeDtype::Fp32 => s.fp32,
        },
        source: Source::Modeled,
        basis: format!("datasheet: {}", s.source),
        watts: None,
    })
}

/// The datasheet's memory bandwidth for a GPU name (or family, e.g. `H200`), GB/s.
pub fn datasheet_hbm_gbps(gpu_name: &str) -> Option<f64> {
    let name = gpu_name.to_lowercase();
    SHEETS
        .iter()
        .find(|s| s.matches.iter().all(|m| name.contains(m)))
        .map(|s| s.hbm_gbps)
}

/// A GPU's board power limit and idle power from [`SHEETS`], for the power model.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasheetPower {
    pub limit_w: f64,
    pub idle_w: Option<f64>,
    pub source: &'static str,
}

/// The board power limit and idle power for a GPU name (e.g. `NVIDIA H100 80GB HBM3`).
pub fn datasheet_power(gpu_name: &str) -> Option<DatasheetPower> {
    let name = gpu_name.to_lowercase();
    SHEETS
        .iter()
        .find(|s| s.matches.iter().all(|m| name.contains(m)))
        .map(|s| DatasheetPower {
            limit_w: s.power_w,
            idle_w: s.idle_w,
            source: s.power_source,
        })
}

/// Rates of one GPU for both dtypes (each may be missing).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuRates {
    pub bf16: Option<GemmRate>,
    pub fp32: Option<GemmRate>,
}

impl GpuRates {
    /// The datasheet rates for a GPU name.
    pub fn datasheet(gpu_name: &str) -> GpuRates {
        GpuRates {
            bf16: datasheet_rate(gpu_name, ComputeDtype::Bf16),
            fp32: datasheet_rate(gpu_name, ComputeDtype::Fp32),
        }
    }

    /// The rate for `dtype`.
    pub fn get(&self, dtype: ComputeDtype) -> Option<&GemmRate> {
        match dtype {
            ComputeDtype::Bf16 => self.bf16.as_ref(),
            ComputeDtype::Fp32 => self.fp32.as_ref(),
        }
    }

    /// Measured rates where there are some, datasheet rates for the rest.
    pub fn or(self, fallback: GpuRates) -> GpuRates {
        GpuRates {
            bf16: self.bf16.or(fallback.bf16),
            fp32: self.fp32.or(fallback.fp32),
        }
    }
}

/// One GPU's rates measured while every selected GPU ran the same GEMMs at once (as in a
/// training step: the GPUs share the chassis' power and cooling).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerGpuRates {
    /// CUDA ordinal.
    pub gpu: usize,
    pub rates: GpuRates,
}

/// The slowest GPU among `gpus` for `dtype`, with its rate; `None` when `gpus` is empty or any
/// of them lacks a `dtype` rate (a minimum over some of them would not bound the step).
pub fn slowest(gpus: &[PerGpuRates], dtype: ComputeDtype) -> Option<(usize, &GemmRate)> {
    let mut out: Option<(usize, &GemmRate)> = None;
    for g in gpus {
        let r = g.rates.get(dtype)?;
        if out.is_none_or(|(_, best)| r.tflops < best.tflops) {
            out = Some((g.gpu, r));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(gpu: usize, bf16: f64) -> PerGpuRates {
        PerGpuRates {
            gpu,
            rates: GpuRates {
                bf16: Some(GemmRate {
                    tflops: bf16,
                    source: Source::Measured,
                    basis: "test".into(),
                    watts: None,
                }),
                fp32: None,
            },
        }
    }

    #[test]
    fn slowest_is_the_minimum_and_needs_every_gpu() {
        let gpus = [on(0, 720.0), on(1, 700.0), on(2, 710.0)];
        let (gpu, r) = slowest(&gpus, ComputeDtype::Bf16).unwrap();
        assert_eq!((gpu, r.tflops), (1, 700.0));
        assert_eq!(slowest(&gpus[..1], ComputeDtype::Bf16).unwrap().0, 0);
        assert!(slowest(&gpus, ComputeDtype::Fp32).is_none());
        assert!(slowest(&[], ComputeDtype::Bf16).is_none());
    }

    #[test]
    fn datasheet_matches_names() {
        assert_eq!(
            datasheet_rate("NVIDIA H200", ComputeDtype::Bf16)
                .unwrap()
                .tflops,
            989.0
        );
        assert_eq!(
            datasheet_rate("NVIDIA H100 PCIe", ComputeDtype::Bf16)
                .unwrap()
                .tflops,
            756.0
        );
        assert_eq!(
            datasheet_rate("NVIDIA H100 80GB HBM3", ComputeDtype::Fp32)
                .unwrap()
                .tflops,
            67.0
        );
        assert_eq!(
            datasheet_rate("NVIDIA GeForce RTX 4090", ComputeDtype::Bf16)
                .unwrap()
                .tflops,
            165.2
        );
        assert!(datasheet_rate("Tesla K80", ComputeDtype::Bf16).is_none());
        assert_eq!(
            datasheet_rate("NVIDIA A100-SXM4-80GB", ComputeDtype::Bf16)
                .unwrap()
                .source,
            Source::Modeled
        );
    }
}
