//! The scaling model: step time T(n) = compute(per-GPU batch) + exposed communication + the
//! pattern's own terms, for n GPUs in weak (per-GPU batch fixed) and strong (global batch fixed)
//! scaling. Every formula and its source is in docs/SCALING.md; the comments here name them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::curve::CommCurve;
use super::rates::{GemmRate, GpuRates, PerGpuRates, gpu_list, slowest};
use super::workload::{ComputeDtype, Pattern, Workload};
use crate::model::{Source, Topology};

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
// host_to_all_memcpy_ce on 2× H200 (50.4 and 53.2 GB/s against 63.0 line rate; ANCHORS.md).
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
    /// Host→GPU bandwidth per GPU while every GPU of the box copies.
    pub h2d_per_gpu: Option<Sourced>,
    /// Cap on all host→GPU traffic of the box together (measured host_to_all sum), if known.
    pub h2d_total: Option<Sourced>,
    /// Inter-node bandwidth per GPU (NICs' line rate ÷ GPUs × efficiency).
    pub nic_per_gpu: Sourced,
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
        Machine {
            label: topo.source.label(),
            gpu_name,
            gpus_per_node: topo.gpus.len().max(1),
            rates,
            concurrent: Vec::new(),
            comm,
            h2d_per_gpu,
            h2d_total: None,
            nic_per_gpu,
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
        Self::from_topology(topo, CommCurve::modeled(topo, &topo.gpu_indices()), rates)
    }

    /// The GEMM rate a step on `n` GPUs runs at. A data-parallel step waits for its slowest
    /// GPU, and GPUs running together share the chassis' power and cooling, so for n ≥ 2 it is
    /// the slowest of the first n GPUs' concurrent rates (all of them beyond the box: every box
    /// of a multi-node job runs full); for one GPU, or when no concurrent rate was measured, the
    /// machine's one rate ([`Machine::rates`]).
    pub fn rate_for(&self, dtype: ComputeDtype, n: usize) -> Option<StepRate<'_>> {
        if n >= 2 && self.concurrent.len() >= 2 {
            let together = &self.concurrent[..n.min(self.concurrent.len())];
            if let Some((gpu, rate)) = slowest(together, dtype) {
                return Some(StepRate {
                    rate,
                    slowest_of: Some((gpu, together.iter().map(|g| g.gpu).collect())),
                });
            }
        }
        self.rates.get(dtype).map(|rate| StepRate {
            rate,
            slowest_of: None,
        })
    }

    /// All-reduce time of `bytes` over `n` GPUs, ms. Within the box: the curve. Beyond it
    /// (hierarchical, modeled): reduce-scatter + all-gather inside each node at the curve's
    /// busbw, 2(m−1)/m · (S/g) over each GPU's NIC between the m nodes.
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
        let inter = 2.0 * (m - 1.0) / m * (bytes / g as f64) / (self.nic_per_gpu.gbps * 1e9) * 1e3;
        Some(intra + inter)
    }

    /// One pairwise exchange of `bytes`, ms, inside the box (`inter` = false) or across nodes.
    fn exchange_ms(&self, bytes: f64, inter: bool) -> Option<f64> {
        if inter {
            Some(bytes / (self.nic_per_gpu.gbps * 1e9) * 1e3)
        } else {
            self.comm.as_ref()?.exchange_ms(bytes)
        }
    }

    /// Host→GPU bandwidth per GPU when `n` GPUs of a box copy at once, GB/s.
    fn h2d_gbps(&self, n: usize) -> Option<f64> {
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
            (None, Source::Measured) => " (first GPU alone)".to_string(),
            (None, _) => String::new(),
        };
        format!("{:.0} TFLOP/s {}{which}", r.tflops, r.source)
    }
}

/// One row of the scaling table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingPoint {
    pub workload: String,
    pub pattern: Pattern,
    pub mode: Mode,
    /// modeled (the model) or measured (a proxy run on GPUs).
    pub source: Source,
    pub n_gpus: usize,
    /// Samples per step over all GPUs.
    pub global_batch: f64,
    /// Samples per GPU per step.
    pub per_gpu_batch: f64,
    /// One step, ms.
    pub step_time_ms: Option<f64>,
    /// Samples per second over all GPUs.
    pub throughput: Option<f64>,
    /// throughput(n) ÷ throughput(1).
    pub speedup: Option<f64>,
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
    /// What fed the figures (rates, curves), or why a row is empty.
    pub basis: String,
}

/// GPU counts to model: every count 1 … box, then doubling up to `max_gpus` (projected).
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
    v
}

/// The terms of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Terms {
    pub step_ms: f64,
    pub compute_ms: f64,
    pub comm_exposed_ms: f64,
    pub other_ms: f64,
    pub bound: Bound,
}

/// Compute time of `samples` at `rate`: FLOPs ÷ (rate × utilization), ms.
pub fn compute_ms(w: &Workload, samples: f64, rate: &GemmRate) -> f64 {
    w.flops_per_sample * samples / (rate.tflops * 1e12 * w.utilization) * 1e3
}

/// Exposed time of a bucketed gradient all-reduce (PyTorch DDP, Li et al. VLDB 2020): buckets of
/// `bucket` bytes become ready through the backward pass and their all-reduces run under it;
/// what exceeds `overlap` × backward is exposed, and the last bucket (ready only when backward
/// ends) always is. Returns (total comm, exposed), ms.
pub fn bucketed_exposed_ms(
    grad_bytes: f64,
    bucket: f64,
    backward_ms: f64,
    overlap: f64,
    all_reduce: impl Fn(f64) -> Option<f64>,
) -> Option<(f64, f64)> {
    if grad_bytes <= 0.0 {
        return Some((0.0, 0.0));
    }
    let bucket = if bucket > 0.0 { bucket } else { grad_bytes };
    let k = (grad_bytes / bucket).ceil().max(1.0);
    let last = grad_bytes - (k - 1.0) * bucket;
    let t_last = all_reduce(last)?;
    let total = (k - 1.0) * all_reduce(bucket)? + t_last;
    let exposed = (total - overlap * backward_ms).max(t_last);
    Some((total, exposed))
}

/// The step's terms for `w` on `n` GPUs with `b` samples per GPU; Err(why) when an input is
/// unknown.
pub fn step_terms(w: &Workload, m: &Machine, n: usize, b: f64) -> Result<Terms, String> {
    let rate = m.rate_for(w.compute_dtype, n).ok_or_else(|| {
        format!(
            "no {} matrix-multiply rate for {} (measure with --measure, or a catalog GPU)",
            w.compute_dtype,
            m.gpu_name.as_deref().unwrap_or("this GPU")
        )
    })?;
    let compute = compute_ms(w, b, rate.rate);
    let no_curve = || {
        format!(
            "no all-reduce curve for {} (link rates unknown): run bench collectives",
            m.label
        )
    };
    let grad = w.params * w.grad_dtype.size() as f64;
    let pick = |terms: [(Bound, f64); 3]| {
        terms
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(Bound::Compute, |t| t.0)
    };
    Ok(match w.pattern {
        Pattern::DdpRing => {
            // Forward : backward ≈ 1 : 2 in FLOPs (Kaplan et al. 2020), so backward = 2/3.
            let bwd = compute * 2.0 / 3.0;
            let (_, exposed) = bucketed_exposed_ms(grad, w.bucket_bytes, bwd, w.overlap, |s| {
                m.all_reduce_ms(s, n)
            })
            .ok_or_else(no_curve)?;
            Terms {
                step_ms: compute + exposed,
                compute_ms: compute,
                comm_exposed_ms: exposed,
                other_ms: 0.0,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::Communication, exposed),
                    (Bound::Sync, 0.0),
                ]),
            }
        }
        Pattern::TreeReduce => {
            // Caffe (docs/multigpu.md): pairs exchange up a binary tree (⌈log2 n⌉ levels), the
            // root updates, and the model goes back down the same levels: 2⌈log2 n⌉ exchanges
            // of the whole gradient; levels above the box cross the NIC.
            let levels = (n as f64).log2().ceil() as usize;
            let box_levels = (m.gpus_per_node as f64).log2().floor() as usize;
            let (intra, inter) = (levels.min(box_levels), levels.saturating_sub(box_levels));
            let mut comm = 0.0;
            if intra > 0 {
                comm += 2.0 * intra as f64 * m.exchange_ms(grad, false).ok_or_else(no_curve)?;
            }
            if inter > 0 {
                comm += 2.0 * inter as f64 * m.exchange_ms(grad, true).unwrap_or(0.0);
            }
            let exposed = (comm - w.overlap * compute * 2.0 / 3.0).max(0.0);
            Terms {
                step_ms: compute + exposed,
                compute_ms: compute,
                comm_exposed_ms: exposed,
                other_ms: 0.0,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::Communication, exposed),
                    (Bound::Sync, 0.0),
                ]),
            }
        }
        Pattern::SimPolicy => {
            // One policy-gradient all-reduce every `steps_per_sync` simulation steps, after the
            // rollout (nothing to hide it under); spread over the steps it serves.
            let per = w.steps_per_sync.unwrap_or(1.0);
            let (total, _) =
                bucketed_exposed_ms(grad, w.bucket_bytes, 0.0, 0.0, |s| m.all_reduce_ms(s, n))
                    .ok_or_else(no_curve)?;
            let sync = total / per;
            Terms {
                step_ms: compute + sync,
                compute_ms: compute,
                comm_exposed_ms: sync,
                other_ms: 0.0,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::Sync, sync),
                    (Bound::Network, 0.0),
                ]),
            }
        }
        Pattern::InferenceReplicas => {
            // One engine per GPU; input copies are double-buffered with compute, so the step is
            // the slower of the two (all replicas share PCIe / host memory).
            let h2d = m
                .h2d_gbps(n)
                .ok_or("host→GPU bandwidth unknown (PCIe link not in the topology)")?;
            let input = b * w.sample_input_bytes.unwrap_or(0.0) / (h2d * 1e9) * 1e3;
            let exposed_input = (input - compute).max(0.0);
            Terms {
                step_ms: compute + exposed_input,
                compute_ms: compute,
                comm_exposed_ms: 0.0,
                other_ms: exposed_input,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::HostInput, input),
                    (Bound::Sync, 0.0),
                ]),
            }
        }
        Pattern::PrimarySecondary => {
            // CARLA multi-GPU: the primary steps physics, then sends the scene to each of the n
            // secondaries over one link; each renders its sensors; all sensor data goes to the
            // client over the same link, streamed while rendering.
            let link = w.link_gbps.unwrap_or(1.0) * 1e9;
            let primary = w.primary_ms.unwrap_or(0.0);
            let scene = n as f64 * w.sync_bytes.unwrap_or(0.0) / link * 1e3;
            let output = n as f64 * b * w.sample_output_bytes.unwrap_or(0.0) / link * 1e3;
            let exposed_out = (output - compute).max(0.0);
            Terms {
                step_ms: primary + scene + compute + exposed_out,
                compute_ms: compute,
                comm_exposed_ms: exposed_out,
                other_ms: primary + scene,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::Sync, primary + scene),
                    (Bound::Network, output),
                ]),
            }
        }
        Pattern::RemoteOffload => {
            // One server with n GPUs behind one link: requests in and replies out share it.
            // Service = max(compute, network) + RTT; M/M/1 mean wait ρ/(1−ρ) × service.
            let link = match w.link_gbps {
                Some(l) => l,
                None => m.nic_per_gpu.gbps * m.gpus_per_node as f64,
            } * 1e9;
            let bytes = w.sample_input_bytes.unwrap_or(0.0) + w.sample_output_bytes.unwrap_or(0.0);
            let network = n as f64 * b * bytes / link * 1e3;
            let service = compute.max(network) + w.rtt_ms.unwrap_or(0.0);
            let rho = w.offered_load.unwrap_or(0.0);
            let wait = rho / (1.0 - rho) * service;
            let exposed_net = (network - compute).max(0.0);
            Terms {
                step_ms: service + wait,
                compute_ms: compute,
                comm_exposed_ms: exposed_net,
                other_ms: w.rtt_ms.unwrap_or(0.0) + wait,
                bound: pick([
                    (Bound::Compute, compute),
                    (Bound::Network, network),
                    (Bound::Sync, 0.0),
                ]),
            }
        }
    })
}

/// Models `w` on `m` for every GPU count of [`gpu_counts`] and every mode. Strong-scaling rows
/// stop where the per-GPU batch would fall below one sample.
pub fn model(w: &Workload, m: &Machine, modes: &[Mode], max_gpus: usize) -> Vec<ScalingPoint> {
    let mut out = Vec::new();
    let counts = gpu_counts(m.gpus_per_node, max_gpus);
    for &mode in modes {
        let mut rows = Vec::new();
        for &n in &counts {
            let (global, per) = match mode {
                Mode::Weak => (w.per_gpu_batch * n as f64, w.per_gpu_batch),
                Mode::Strong => (w.strong_global_batch, w.strong_global_batch / n as f64),
            };
            if per < 1.0 {
                break;
            }
            let mut p = ScalingPoint {
                workload: w.name.clone(),
                pattern: w.pattern,
                mode,
                source: Source::Modeled,
                n_gpus: n,
                global_batch: global,
                per_gpu_batch: per,
                step_time_ms: None,
                throughput: None,
                speedup: None,
                efficiency: None,
                bound: None,
                compute_ms: None,
                comm_exposed_ms: None,
                other_ms: None,
                projected: n > m.gpus_per_node,
                model_error: None,
                basis: String::new(),
            };
            match step_terms(w, m, n, per) {
                Ok(t) => {
                    p.step_time_ms = Some(t.step_ms);
                    p.throughput = Some(global / (t.step_ms * 1e-3));
                    p.compute_ms = Some(t.compute_ms);
                    p.comm_exposed_ms = Some(t.comm_exposed_ms);
                    p.other_ms = Some(t.other_ms);
                    p.bound = Some(t.bound);
                    p.basis = basis(w, m, n, p.projected);
                }
                Err(e) => p.basis = e,
            }
            rows.push(p);
        }
        fill_speedup(&mut rows);
        out.extend(rows);
    }
    out
}

/// Sets speedup and efficiency against the 1-GPU row of the same workload, mode and source.
pub fn fill_speedup(rows: &mut [ScalingPoint]) {
    let bases: Vec<(String, Mode, Source, f64)> = rows
        .iter()
        .filter(|r| r.n_gpus == 1)
        .filter_map(|r| Some((r.workload.clone(), r.mode, r.source, r.throughput?)))
        .collect();
    for r in rows.iter_mut() {
        let base = bases
            .iter()
            .find(|b| b.0 == r.workload && b.1 == r.mode && b.2 == r.source)
            .map(|b| b.3);
        if let (Some(t1), Some(t)) = (base, r.throughput) {
            r.speedup = Some(t / t1);
            r.efficiency = Some(t / t1 / r.n_gpus as f64);
        }
    }
}

/// Sets `model_error` on measured rows: (model − measured) ÷ measured step time.
pub fn attach_errors(rows: &mut [ScalingPoint]) {
    let models: Vec<(String, Mode, usize, f64)> = rows
        .iter()
        .filter(|r| r.source == Source::Modeled)
        .filter_map(|r| Some((r.workload.clone(), r.mode, r.n_gpus, r.step_time_ms?)))
        .collect();
    for r in rows.iter_mut().filter(|r| r.source == Source::Measured) {
        let model = models
            .iter()
            .find(|m| m.0 == r.workload && m.1 == r.mode && m.2 == r.n_gpus)
            .map(|m| m.3);
        if let (Some(mo), Some(me)) = (model, r.step_time_ms)
            && me > 0.0
        {
            r.model_error = Some((mo - me) / me);
        }
    }
}

fn basis(w: &Workload, m: &Machine, n: usize, projected: bool) -> String {
    let rate = m
        .rate_for(w.compute_dtype, n)
        .map(|r| format!("{} {} × {}", w.compute_dtype, r.describe(), w.utilization))
        .unwrap_or_default();
    let comm = m
        .comm
        .as_ref()
        .map(|c| format!("; all-reduce curve {}", c.source))
        .unwrap_or_default();
    let proj = if projected {
        format!(
            "; projected over nodes, NIC {:.1} GB/s per GPU",
            m.nic_per_gpu.gbps
        )
    } else {
        String::new()
    };
    format!("{rate}{comm}{proj}")
}
