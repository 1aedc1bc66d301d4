//! What the scaling model knows of the machine it models ([`Machine`]: GEMM rates, the
//! all-reduce curve, host and NIC bandwidth, the calibration), and the words a row is made of:
//! where its figures come from ([`RowSource`]), the scaling [`Mode`] and what [`Bound`] its step.
//! The table of rows (`table.rs`) and the step's terms (`step.rs`) both build on it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::calibrate::{CalibrationInputs, MeasuredStep, ProbeRates};
use super::curve::CommCurve;
use super::rates::{GemmRate, GpuRates, PerGpuRates, slowest};
use super::workload::{ComputeDtype, Workload};
use crate::model::collective_reference::DOUBLING_US;
use crate::model::quantities::gpu_list;
use crate::model::{Source, Topology};

/// Where a scaling row's figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RowSource {
    /// The model (dashed lines; projected beyond the box).
    #[serde(rename = "modeled")]
    Modeled,
    /// The real framework's training step (PyTorch DDP/FSDP) measured on this machine: the
    /// measured truth.
    #[serde(rename = "measured_framework")]
    Framework,
    /// The synthetic proxy step (cuBLAS GEMMs + NCCL all-reduce) measured on this machine, for
    /// machines without PyTorch. Reports before schema 3 called these rows `measured`.
    #[serde(rename = "proxy", alias = "measured")]
    Proxy,
}

impl RowSource {
    /// The CSV/JSON id.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Modeled => "modeled",
            Self::Framework => "measured_framework",
            Self::Proxy => "proxy",
        }
    }

    /// True for rows measured on GPUs (framework or proxy).
    pub fn is_measured(&self) -> bool {
        !matches!(self, Self::Modeled)
    }

    /// Measured or modeled, as the other results say it.
    pub fn as_source(&self) -> Source {
        if self.is_measured() {
            Source::Measured
        } else {
            Source::Modeled
        }
    }
}

impl fmt::Display for RowSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The share of all-reduce time that overlap hides under compute, measured by the overlap probe
/// on this machine for one workload's mix of matrix and memory-bound kernels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverlapMeasure {
    pub workload: String,
    /// Matrix kernels' share of the probe's compute, 0 … 1.
    pub matrix_share: f64,
    /// Hidden share of the all-reduce time, 0 … 1.
    pub hidden: f64,
    /// GPUs the probe ran on.
    pub gpus: usize,
    /// How it was measured.
    pub basis: String,
}

/// Weak scaling (per-GPU batch fixed) or strong scaling (global batch fixed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Weak,
    Strong,
}

impl Mode {
    /// Both, weak first.
    pub const ALL: [Mode; 2] = [Mode::Weak, Mode::Strong];

    /// `weak` or `strong`.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Weak => "weak",
            Self::Strong => "strong",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The term that takes the largest share of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    /// The CPU launching the step's kernels (Python, PyTorch's dispatch): the GPU waits for it.
    Host,
    Communication,
    HostInput,
    Sync,
    Network,
}

impl Bound {
    /// The CSV id.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Compute => "compute",
            Self::Host => "host",
            Self::Communication => "communication",
            Self::HostInput => "host_input",
            Self::Sync => "sync",
            Self::Network => "network",
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A figure with where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sourced {
    /// GB/s.
    pub gbps: f64,
    /// measured or modeled (line rate × efficiency, or assumed).
    pub source: Source,
    pub basis: String,
}

// Host→GPU copy efficiency over PCIe with every GPU copying at once: nvbandwidth's
// host_to_all_memcpy_ce on 2× H200 (50.4 and 53.2 GB/s against 63.0 line rate; docs/REFERENCE.md).
const H2D_ALL_EFFICIENCY: f64 = 0.82;
// Assumed where the topology lists no NIC: one 400 Gb/s NDR InfiniBand port per GPU (50 GB/s),
// as in a DGX H100 (eight ConnectX-7 compute ports, DGX H100 user guide).
const ASSUMED_NIC_GBPS_PER_GPU: f64 = 50.0;
// Assumed efficiency of NCCL over InfiniBand against the line rate (nccl-tests all_reduce busbw
// ≈ 90 % of NIC rate across nodes is the usual target).
const NIC_EFFICIENCY: f64 = 0.9;

/// What the model knows about the machine: rates, the all-reduce curve, host and NIC bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// e.g. `catalog: NVIDIA DGX H100`.
    pub label: String,
    /// GPU name, e.g. `NVIDIA H200`.
    pub gpu_name: Option<String>,
    /// GPUs in one box; beyond it the model projects over nodes.
    pub gpus_per_node: usize,
    /// One GPU's rates: measured on the first selected GPU alone, or the datasheet's. Used for
    /// one GPU, and for every count when `concurrent` is empty.
    pub rates: GpuRates,
    /// Each selected GPU's rates measured while all of them ran GEMMs at once, in the order the
    /// proxies take them (an n-GPU step runs on the first n); empty when not measured (modeled
    /// machines, one GPU). See [`Machine::rate_for`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub concurrent: Vec<PerGpuRates>,
    /// All-reduce busbw(size) inside the box.
    pub comm: Option<CommCurve>,
    /// Why the modeled machine has no all-reduce curve, where the model said (e.g. every
    /// NVLink of a pair down); `None`: the links' rates are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm_missing: Option<String>,
    /// Host→GPU bandwidth per GPU while every GPU of the box copies.
    pub h2d_per_gpu: Option<Sourced>,
    /// Cap on all host→GPU traffic of the box together (measured host_to_all sum), if known.
    pub h2d_total: Option<Sourced>,
    /// Inter-node bandwidth per GPU (NICs' line rate ÷ GPUs × efficiency).
    pub nic_per_gpu: Sourced,
    /// One GPU's memory (the smallest in the box), GiB; `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_gib: Option<f64>,
    /// Rates the framework probe measured on the first GPU (they move catalog calibrations
    /// measured on other GPUs to this one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeRates>,
    /// The overlap probe's hidden share of all-reduce time here, per workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlap: Vec<OverlapMeasure>,
    /// 1-GPU framework steps measured here: they calibrate the compute term.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub framework_steps: Vec<MeasuredStep>,
    /// Model with catalog figures only, ignoring the steps this run measured (for the
    /// "uncalibrated" error); it still reads the machine's probe rates and host speed.
    #[serde(skip)]
    pub catalog_only: bool,
}

impl Machine {
    /// From a topology: GPU name, count, PCIe and NICs; `comm` and `rates` are the caller's
    /// (measured, or [`CommCurve::modeled`] and [`GpuRates::datasheet`]).
    pub fn from_topology(topo: &Topology, comm: Option<CommCurve>, rates: GpuRates) -> Machine {
        let gpu_name = topo.gpus.iter().find_map(|g| g.name.clone());
        let pcie = topo
            .gpus
            .iter()
            .filter_map(|g| g.pcie.line_rate_gbps())
            .min_by(f64::total_cmp);
        let h2d_per_gpu = pcie.map(|line| Sourced {
            gbps: line * H2D_ALL_EFFICIENCY,
            source: Source::Modeled,
            basis: format!(
                "PCIe {line:.1} GB/s × {H2D_ALL_EFFICIENCY} (nvbandwidth host_to_all on H200)"
            ),
        });
        let nic_total: f64 = topo.nics.iter().filter_map(|n| n.line_rate_gbps).sum();
        let n = topo.gpus.len().max(1);
        let nic_per_gpu = if nic_total > 0.0 {
            Sourced {
                gbps: nic_total / n as f64 * NIC_EFFICIENCY,
                source: Source::Modeled,
                basis: format!(
                    "NICs {nic_total:.1} GB/s ÷ {n} GPUs × {NIC_EFFICIENCY} (assumed efficiency)"
                ),
            }
        } else {
            Sourced {
                gbps: ASSUMED_NIC_GBPS_PER_GPU * NIC_EFFICIENCY,
                source: Source::Modeled,
                basis: format!(
                    "assumed one 400 Gb/s NIC per GPU ({ASSUMED_NIC_GBPS_PER_GPU} GB/s) × {NIC_EFFICIENCY}: the topology lists no NIC rate"
                ),
            }
        };
        let gpu_memory_gib = topo
            .gpus
            .iter()
            .map(|g| g.memory_mib.map(|m| m as f64 / 1024.0))
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().min_by(f64::total_cmp));
        Machine {
            label: topo.source.label(),
            gpu_name,
            gpus_per_node: topo.gpus.len().max(1),
            rates,
            concurrent: Vec::new(),
            comm,
            comm_missing: None,
            h2d_per_gpu,
            h2d_total: None,
            nic_per_gpu,
            gpu_memory_gib,
            probe: None,
            overlap: Vec::new(),
            framework_steps: Vec::new(),
            catalog_only: false,
        }
    }

    /// What the calibration of the compute term may draw on here.
    pub fn calibration_inputs(&self) -> CalibrationInputs<'_> {
        CalibrationInputs {
            gpu_name: self.gpu_name.as_deref(),
            measured: &self.framework_steps,
            probe: self.probe.as_ref(),
            catalog_only: self.catalog_only,
        }
    }

    /// The share of all-reduce time hidden under compute for `w`: the overlap probe's measure
    /// for it here, else the workload's catalog `overlap`.
    pub fn hidden_share(&self, w: &Workload) -> (f64, String) {
        match self
            .overlap
            .iter()
            .find(|o| o.workload == w.name && !self.catalog_only)
        {
            Some(o) => (
                o.hidden.clamp(0.0, 1.0),
                format!("overlap probe here: {:.2} hidden", o.hidden),
            ),
            None => (w.overlap, format!("catalog overlap {:.2}", w.overlap)),
        }
    }

    /// How much slower a GPU's matrix work runs with `n` GPUs busy than alone (≥ 1): the alone
    /// rate over the slowest concurrent rate of the first n, when both were measured.
    pub(super) fn concurrency_slowdown(&self, dtype: ComputeDtype, n: usize) -> f64 {
        let alone = self
            .rates
            .get(dtype)
            .filter(|r| r.source == Source::Measured);
        let together = self.rate_for(dtype, n).filter(|r| r.slowest_of.is_some());
        match (alone, together) {
            (Some(a), Some(t)) if t.rate.tflops > 0.0 => (a.tflops / t.rate.tflops).max(1.0),
            _ => 1.0,
        }
    }

    /// A fully modeled machine: datasheet rates and the modeled all-reduce curve.
    pub fn modeled(topo: &Topology) -> Machine {
        let rates = topo
            .gpus
            .iter()
            .find_map(|g| g.name.as_deref())
            .map(GpuRates::datasheet)
            .unwrap_or_default();
        match CommCurve::modeled_or_why(topo, &topo.gpu_indices()) {
            Ok(curve) => Self::from_topology(topo, Some(curve), rates),
            Err(why) => Machine {
                comm_missing: why,
                ..Self::from_topology(topo, None, rates)
            },
        }
    }

    /// The GEMM rate a step on `n` GPUs runs at. A data-parallel step waits for its slowest
    /// GPU, and GPUs running together share the chassis' power and cooling, so for n ≥ 2 it is
    /// the slowest of the first n GPUs' concurrent rates (all of them beyond the box: every box
    /// of a multi-node job runs full), unless that is above the measured rate alone; for one
    /// GPU, or when no concurrent rate was measured, the machine's one rate ([`Machine::rates`]).
    pub fn rate_for(&self, dtype: ComputeDtype, n: usize) -> Option<StepRate<'_>> {
        let alone = self.rates.get(dtype);
        if n >= 2 && self.concurrent.len() >= 2 {
            let together = &self.concurrent[..n.min(self.concurrent.len())];
            if let Some((gpu, rate)) = slowest(together, dtype) {
                // Running together never makes a GPU faster than it runs alone: a slowest rate
                // above the measured rate alone is the two measurements' noise, and a model that
                // took it would scale better than perfectly.
                if let Some(a) =
                    alone.filter(|a| a.source == Source::Measured && a.tflops < rate.tflops)
                {
                    return Some(StepRate {
                        rate: a,
                        slowest_of: None,
                        faster_together: Some(rate.tflops),
                    });
                }
                return Some(StepRate {
                    rate,
                    slowest_of: Some((gpu, together.iter().map(|g| g.gpu).collect())),
                    faster_together: None,
                });
            }
        }
        alone.map(|rate| StepRate {
            rate,
            slowest_of: None,
            faster_together: None,
        })
    }

    /// All-reduce time of `bytes` over `n` GPUs, ms. Within the box: the curve. Beyond it
    /// (hierarchical, modeled): reduce-scatter + all-gather inside each node at the curve's
    /// busbw, 2(m−1)/m · (S/g) over each GPU's NIC between the m nodes, and a latency growing
    /// by [`DOUBLING_US`] per doubling of the nodes (the same assumption as a large NVLink
    /// domain's, `model::collective_reference`).
    pub fn all_reduce_ms(&self, bytes: f64, n: usize) -> Option<f64> {
        if n <= 1 || bytes <= 0.0 {
            return Some(0.0);
        }
        let g = self.gpus_per_node;
        if n <= g {
            return self.comm.as_ref()?.all_reduce_ms(bytes, n);
        }
        let m = n.div_ceil(g) as f64;
        let intra = if g > 1 {
            self.comm.as_ref()?.all_reduce_ms(bytes, g)?
        } else {
            0.0
        };
        let inter = 2.0 * (m - 1.0) / m * (bytes / g as f64) / (self.nic_per_gpu.gbps * 1e9) * 1e3
            + DOUBLING_US * m.log2() / 1e3;
        Some(intra + inter)
    }

    /// One pairwise exchange of `bytes`, ms, inside the box (`inter` = false) or across nodes.
    pub(super) fn exchange_ms(&self, bytes: f64, inter: bool) -> Option<f64> {
        if inter {
            Some(bytes / (self.nic_per_gpu.gbps * 1e9) * 1e3)
        } else {
            self.comm.as_ref()?.exchange_ms(bytes)
        }
    }

    /// Host→GPU bandwidth per GPU when `n` GPUs of a box copy at once, GB/s.
    pub(super) fn h2d_gbps(&self, n: usize) -> Option<f64> {
        let per = self.h2d_per_gpu.as_ref()?.gbps;
        let n_box = n.min(self.gpus_per_node).max(1) as f64;
        Some(match &self.h2d_total {
            Some(t) => per.min(t.gbps / n_box),
            None => per,
        })
    }
}

/// The GEMM rate one step is modeled with ([`Machine::rate_for`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StepRate<'a> {
    pub rate: &'a GemmRate,
    /// `Some((slowest, gpus))`: the slowest GPU's ordinal among `gpus`, measured while all of
    /// them ran GEMMs at once. `None`: the machine's one rate (first GPU alone, or datasheet).
    pub slowest_of: Option<(usize, Vec<usize>)>,
    /// The slowest rate measured together where it came out above the rate alone, TFLOP/s: GPUs
    /// do not speed each other up, so that gap is noise between runs and the step keeps the rate
    /// alone (`rate`).
    pub faster_together: Option<f64>,
}

impl StepRate<'_> {
    /// e.g. `701 TFLOP/s measured (GPU 1: slowest of GPUs 0–1 running together)`.
    pub fn describe(&self) -> String {
        let r = self.rate;
        let which = match (&self.slowest_of, r.source) {
            (Some((gpu, of)), _) => {
                format!(
                    " (GPU {gpu}: slowest of GPUs {} running together)",
                    gpu_list(of)
                )
            }
            (None, Source::Measured) => match self.faster_together {
                Some(t) => format!(
                    " (first GPU alone; the slowest running together measured {t:.0}, not slower: \
                     GPUs do not speed each other up)"
                ),
                None => " (first GPU alone)".to_string(),
            },
            (None, _) => String::new(),
        };
        format!("{:.0} TFLOP/s {}{which}", r.tflops, r.source)
    }
}
