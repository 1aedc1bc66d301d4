//! The step model: the terms of one training or inference step of a workload on n GPUs —
//! compute (calibrated from a measured step where there is one), exposed communication and the
//! pattern's own terms. Every formula and its source is in docs/SCALING.md; the comments here
//! name them.

use super::calibrate::{self, CalibrationKind, StepModel};
use super::machine::{Bound, Machine, Mode};
use super::rates::GemmRate;
use super::workload::{Pattern, Workload};

/// The terms of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct Terms {
    pub step_ms: f64,
    pub compute_ms: f64,
    pub comm_exposed_ms: f64,
    pub other_ms: f64,
    pub bound: Bound,
    /// What calibrated the compute term, and how.
    pub calibration: CalibrationKind,
    pub calibration_basis: String,
    /// The host's time to issue this step (its per-GPU batch), ms, where known: the step is
    /// never shorter (`bound` = host where it sets the step).
    pub host_floor_ms: Option<f64>,
    /// The GPU's own work in the compute term, ms, where the host floor set that term (the
    /// GPU idles for the rest): what its power follows. `None`: the compute term is the GPU's.
    pub gpu_work_ms: Option<f64>,
}

/// Compute time of `samples` at `rate`: FLOPs ÷ (rate × utilization), ms.
pub fn compute_ms(w: &Workload, samples: f64, rate: &GemmRate) -> f64 {
    w.flops_per_sample * samples / (rate.tflops * 1e12 * w.utilization) * 1e3
}

/// Exposed time of a bucketed gradient all-reduce (PyTorch DDP, Li et al. VLDB 2020): buckets of
/// `bucket` bytes become ready through the backward pass and their all-reduces run under it.
/// Overlap hides the share `hidden` of the communication that fits under backward (measured by
/// the overlap probe: NCCL's kernels and backward's share the GPU's SMs and memory bandwidth, so
/// running them together saves less than the whole all-reduce); the last bucket (ready only
/// when backward ends) is always exposed. Returns (total comm, exposed), ms.
pub fn bucketed_exposed_ms(
    grad_bytes: f64,
    bucket: f64,
    backward_ms: f64,
    hidden: f64,
    all_reduce: impl Fn(f64) -> Option<f64>,
) -> Option<(f64, f64)> {
    if grad_bytes <= 0.0 {
        return Some((0.0, 0.0));
    }
    let k = bucket_count(grad_bytes, bucket);
    let bucket = if bucket > 0.0 { bucket } else { grad_bytes };
    let last = grad_bytes - (k - 1.0) * bucket;
    let t_last = all_reduce(last)?;
    let total = (k - 1.0) * all_reduce(bucket)? + t_last;
    let exposed = (total - hidden * total.min(backward_ms)).max(t_last);
    Some((total, exposed))
}

/// DDP's gradient buckets of `bucket` bytes for `grad_bytes` of gradients (one bucket when the
/// size is unset).
fn bucket_count(grad_bytes: f64, bucket: f64) -> f64 {
    if bucket > 0.0 {
        (grad_bytes / bucket).ceil().max(1.0)
    } else {
        1.0
    }
}

/// The step's terms for `w` on `n` GPUs with `b` samples per GPU in `mode`; Err(why) when an
/// input is unknown: the compute term ([`compute_term`]), then the pattern's own model.
pub fn step_terms(
    w: &Workload,
    m: &Machine,
    n: usize,
    b: f64,
    mode: Mode,
) -> Result<Terms, String> {
    step_terms_in(w, m, n, b, w.micro_batch(), mode)
}

/// [`step_terms`] for a step run in micro-batches of `micro` samples (the memory check's, where
/// the workload's own does not fit): the host issues every micro-batch's kernels, so the host
/// floor counts them.
pub fn step_terms_in(
    w: &Workload,
    m: &Machine,
    n: usize,
    b: f64,
    micro: f64,
    mode: Mode,
) -> Result<Terms, String> {
    let c = compute_term(w, m, n, b, micro, mode)?;
    let parts = match w.pattern {
        Pattern::DdpRing => ddp_ring(w, m, n, &c)?,
        Pattern::Fsdp => fsdp(w, m, n, &c)?,
        Pattern::TreeReduce => tree_reduce(w, m, n, &c)?,
        Pattern::SimPolicy => sim_policy(w, m, n, &c)?,
        Pattern::InferenceReplicas => inference_replicas(w, m, n, b, &c)?,
        Pattern::PrimarySecondary => primary_secondary(w, n, b, &c),
        Pattern::RemoteOffload => remote_offload(w, m, n, b, &c),
    };
    // A host-bound compute term is the CPU's time, not the GPU's.
    let compute_bound = if c.host_bound {
        Bound::Host
    } else {
        Bound::Compute
    };
    let bound = parts
        .shares
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(compute_bound, |t| match t.0 {
            Bound::Compute => compute_bound,
            b => b,
        });
    Ok(Terms {
        step_ms: parts.step_ms,
        compute_ms: parts.compute_ms,
        comm_exposed_ms: parts.comm_exposed_ms,
        other_ms: parts.other_ms,
        bound,
        calibration: c.calibration,
        calibration_basis: c.basis,
        host_floor_ms: c.host_floor_ms,
        gpu_work_ms: c.gpu_work_ms,
    })
}

/// The compute term of a step, before the pattern's own terms.
struct ComputeTerm {
    /// Forward, backward and optimizer time of one GPU's `b` samples, ms.
    ms: f64,
    calibration: CalibrationKind,
    basis: String,
    /// The optimizer step inside `ms`, ms.
    optimizer_ms: f64,
    /// The CPU sets the step: the GPU waits for kernel launches.
    host_bound: bool,
    /// The host floor at this batch, ms, where known.
    host_floor_ms: Option<f64>,
    /// DDP's own cost per step (measured at one rank), ms: added on two or more GPUs.
    wrapper_ms: f64,
    /// The GPU's own work, ms, where the host floor set `ms` (see [`Terms::gpu_work_ms`]).
    gpu_work_ms: Option<f64>,
}

/// A pattern's step: its terms, and the share of each candidate for what bounds it.
struct PatternTerms {
    step_ms: f64,
    compute_ms: f64,
    comm_exposed_ms: f64,
    other_ms: f64,
    /// The terms competing for [`Bound`]; the largest names it.
    shares: [(Bound, f64); 3],
}

impl PatternTerms {
    /// A training step of compute, exposed communication and `other_ms` (host time), bound by
    /// the larger of compute and communication.
    fn training(compute: f64, exposed: f64, other_ms: f64) -> PatternTerms {
        PatternTerms {
            step_ms: compute + exposed + other_ms,
            compute_ms: compute,
            comm_exposed_ms: exposed,
            other_ms,
            shares: [
                (Bound::Compute, compute),
                (Bound::Communication, exposed),
                (Bound::Sync, 0.0),
            ],
        }
    }
}

/// The compute term: from the calibrated step model (a measured 1-GPU step, moved to this GPU
/// and slowed by n GPUs running together) where there is one, else FLOPs at the matrix rate ×
/// the catalog's utilization.
fn compute_term(
    w: &Workload,
    m: &Machine,
    n: usize,
    b: f64,
    micro: f64,
    mode: Mode,
) -> Result<ComputeTerm, String> {
    match calibrate::step_model(w, mode, &m.calibration_inputs()) {
        Some(sm) => Ok(calibrated_term(w, m, &sm, n, b, micro)),
        None => utilization_term(w, m, n, b),
    }
}

/// The compute term from the calibrated step model `sm`, at `b` samples per GPU (`micro` per
/// micro-batch) on `n` GPUs.
fn calibrated_term(
    w: &Workload,
    m: &Machine,
    sm: &StepModel,
    n: usize,
    b: f64,
    micro: f64,
) -> ComputeTerm {
    // GPUs running together (measured concurrent GEMM rates) slow the matrix share
    // of the step; the slowest of n ranks sets its end (straggler factor).
    let share = sm.matrix_share.unwrap_or(0.5);
    // A host-bound step is set by the CPU: slower matrix kernels do not set its end.
    let slow = if sm.host_bound {
        1.0
    } else {
        1.0 + share * (m.concurrency_slowdown(w.compute_dtype, n) - 1.0)
    };
    // Where the host sets much of the step, its jitter evens out between ranks (see
    // StepModel::straggler).
    let straggler = sm.straggler(n);
    let gpu_ms = sm.compute_ms(b) * slow * straggler;
    // The host must issue every kernel of the step: no step is shorter than its
    // host floor at this batch (unless CUDA graphs replay the kernels).
    let floor = sm
        .host_floor
        .as_ref()
        .filter(|_| !w.cuda_graphs)
        .map(|f| (f.at(b, micro), f));
    let floor_sets = floor.is_some_and(|(ms, _)| ms > gpu_ms);
    let c = match floor {
        Some((ms, _)) if floor_sets => ms,
        _ => gpu_ms,
    };
    let mut basis = sm.label.clone();
    if slow > 1.0 {
        basis.push_str(&format!(
            "; matrix share {share:.2} at the concurrent GEMM rate (×{slow:.3})"
        ));
    }
    if straggler > 1.0 {
        basis.push_str(&format!(
            "; slowest of {n} ranks (×{straggler:.3}, the 0.5^(1/n) quantile of the 1-GPU steps)"
        ));
    }
    if let Some((ms, f)) = floor {
        basis.push_str(&format!(
            "; host floor {ms:.1} ms at {} per GPU ({}){}",
            crate::model::quantities::samples(b),
            f.source,
            if floor_sets {
                format!(": the host sets the step (the GPU's work {gpu_ms:.1} ms is shorter)")
            } else {
                String::new()
            }
        ));
    } else if w.cuda_graphs && sm.host_floor.is_some() {
        basis.push_str(
            "; no host floor: the workload runs under CUDA graphs (kernels replayed, not issued one by one)",
        );
    }
    if sm.host_bound && !floor_sets {
        basis.push_str("; host-bound (the GPU waits for the CPU to launch kernels)");
    }
    let wrapper_ms = if n >= 2 { sm.wrapper_ms } else { 0.0 };
    if wrapper_ms > 0.0 {
        basis.push_str(&format!(
            "; + {wrapper_ms:.1} ms of DDP's own cost per step (measured at one rank; the lower where both modes timed it)"
        ));
    }
    ComputeTerm {
        ms: c,
        calibration: sm.kind,
        basis,
        optimizer_ms: sm.optimizer_ms * slow,
        host_bound: sm.host_bound || floor_sets,
        host_floor_ms: floor.map(|(ms, _)| ms),
        wrapper_ms,
        // A 1-GPU step that was itself host-bound gives no GPU work apart from the host's.
        gpu_work_ms: (floor_sets && !sm.host_bound).then_some(gpu_ms),
    }
}

/// The compute term without a calibration: FLOPs at the matrix rate × the catalog's
/// utilization; `Err` without a rate for the workload's type.
fn utilization_term(w: &Workload, m: &Machine, n: usize, b: f64) -> Result<ComputeTerm, String> {
    let rate = m.rate_for(w.compute_dtype, n).ok_or_else(|| {
        format!(
            "no {} matrix-multiply rate for {} (measure with --measure, or a catalog GPU)",
            w.compute_dtype,
            m.gpu_name.as_deref().unwrap_or("this GPU")
        )
    })?;
    Ok(ComputeTerm {
        ms: compute_ms(w, b, rate.rate),
        calibration: CalibrationKind::Utilization,
        basis: format!(
            "{} {} × {}; catalog utilization, no framework measurement for this GPU",
            w.compute_dtype,
            rate.describe(),
            w.utilization
        ),
        optimizer_ms: 0.0,
        host_bound: false,
        host_floor_ms: None,
        wrapper_ms: 0.0,
        gpu_work_ms: None,
    })
}

/// Why a communication term cannot be modeled.
fn no_curve(m: &Machine) -> String {
    match &m.comm_missing {
        Some(why) => format!("no all-reduce curve for {}: {why}", m.label),
        None => format!(
            "no all-reduce curve for {} (link rates unknown): run bench collectives",
            m.label
        ),
    }
}

/// Gradient bytes of one step.
fn grad_bytes(w: &Workload) -> f64 {
    w.params * w.grad_dtype.size() as f64
}

/// Data-parallel training with bucketed ring all-reduces (PyTorch DDP).
fn ddp_ring(w: &Workload, m: &Machine, n: usize, c: &ComputeTerm) -> Result<PatternTerms, String> {
    let (compute, grad) = (c.ms, grad_bytes(w));
    // Forward : backward ≈ 1 : 2 in FLOPs (Kaplan et al. 2020), so backward = 2/3 of
    // the forward + backward time.
    let bwd = (compute - c.optimizer_ms).max(0.0) * 2.0 / 3.0;
    let (hidden, _) = m.hidden_share(w);
    let (_, exposed) =
        bucketed_exposed_ms(grad, w.bucket_bytes, bwd, hidden, |s| m.all_reduce_ms(s, n))
            .ok_or_else(|| no_curve(m))?;
    // A host-bound step exposes its all-reduces as a GPU-bound one does: the GPU's idle
    // time is spread over gaps between short kernels, not free for NCCL (docs/SCALING.md,
    // "The host term"), and the host also issues one all-reduce per bucket.
    // DDP's own cost measured at one rank (bucket copies, hooks, the all-reduces issued) holds
    // the host's issuing of the all-reduces: then it replaces the per-bucket estimate.
    let host_extra = match m.probe.as_ref().and_then(|p| p.allreduce_host_us) {
        _ if c.wrapper_ms > 0.0 => c.wrapper_ms,
        Some(us) if c.host_bound && n >= 2 => bucket_count(grad, w.bucket_bytes) * us / 1e3,
        _ => 0.0,
    };
    Ok(PatternTerms::training(compute, exposed, host_extra))
}

/// Sharded data-parallel training (ZeRO-3 / FSDP).
fn fsdp(w: &Workload, m: &Machine, n: usize, c: &ComputeTerm) -> Result<PatternTerms, String> {
    // ZeRO-3 / FSDP (Rajbhandari et al. 2020 §5; Zhao et al. 2023): per layer, its
    // parameters are all-gathered before forward and again before backward, and its
    // gradients reduce-scattered after backward. A ring all-reduce is a reduce-scatter
    // then an all-gather (Patarasuk & Yuan 2009), so each costs half an all-reduce of
    // the same size. The first gather and the last reduce-scatter cannot overlap.
    let layers = w
        .model
        .as_ref()
        .and_then(|x| x.layers)
        .map(f64::from)
        .unwrap_or_else(|| (w.params * w.weight_bytes() / w.bucket_bytes).ceil())
        .max(1.0);
    let (sw, sg) = (
        w.params * w.weight_bytes() / layers,
        w.params * w.grad_bytes() / layers,
    );
    let half = |s: f64| {
        m.all_reduce_ms(s, n)
            .map(|t| t / 2.0)
            .ok_or_else(|| no_curve(m))
    };
    let (ag, rs) = (half(sw)?, half(sg)?);
    let comm = layers * (2.0 * ag + rs);
    let (hidden, _) = m.hidden_share(w);
    let fb = (c.ms - c.optimizer_ms).max(0.0);
    // Each rank updates only its shard of the parameters and optimizer states: the
    // optimizer step takes 1/n of one GPU's (measured: Llama-2-7B's AdamW step 55.0 ms
    // on one H200, 27.7 on each of two, 2026-11-24).
    let compute = fb + c.optimizer_ms / n.max(1) as f64;
    let exposed = (comm - hidden * comm.min(fb)).max(ag + rs);
    let exposed = if n <= 1 { 0.0 } else { exposed };
    Ok(PatternTerms::training(compute, exposed, 0.0))
}

/// Gradients reduced up a binary tree and the model sent back down (Caffe's multi-GPU).
fn tree_reduce(
    w: &Workload,
    m: &Machine,
    n: usize,
    c: &ComputeTerm,
) -> Result<PatternTerms, String> {
    let (compute, grad) = (c.ms, grad_bytes(w));
    // Caffe (docs/multigpu.md): pairs exchange up a binary tree (⌈log2 n⌉ levels), the
    // root updates, and the model goes back down the same levels: 2⌈log2 n⌉ exchanges
    // of the whole gradient; levels above the box cross the NIC.
    let levels = (n as f64).log2().ceil() as usize;
    let box_levels = (m.gpus_per_node as f64).log2().floor() as usize;
    let (intra, inter) = (levels.min(box_levels), levels.saturating_sub(box_levels));
    let mut comm = 0.0;
    if intra > 0 {
        comm += 2.0 * intra as f64 * m.exchange_ms(grad, false).ok_or_else(|| no_curve(m))?;
    }
    if inter > 0 {
        comm += 2.0 * inter as f64 * m.exchange_ms(grad, true).unwrap_or(0.0);
    }
    let (hidden, _) = m.hidden_share(w);
    let exposed = (comm - hidden * comm.min(compute * 2.0 / 3.0)).max(0.0);
    Ok(PatternTerms::training(compute, exposed, 0.0))
}

/// Simulation rollouts with a policy-gradient all-reduce every `steps_per_sync` steps.
fn sim_policy(
    w: &Workload,
    m: &Machine,
    n: usize,
    c: &ComputeTerm,
) -> Result<PatternTerms, String> {
    let (compute, grad) = (c.ms, grad_bytes(w));
    // One policy-gradient all-reduce every `steps_per_sync` simulation steps, after the
    // rollout (nothing to hide it under); spread over the steps it serves.
    let per = w.steps_per_sync.unwrap_or(1.0);
    let (total, _) = bucketed_exposed_ms(grad, w.bucket_bytes, 0.0, 0.0, |s| m.all_reduce_ms(s, n))
        .ok_or_else(|| no_curve(m))?;
    let sync = total / per;
    Ok(PatternTerms {
        step_ms: compute + sync,
        compute_ms: compute,
        comm_exposed_ms: sync,
        other_ms: 0.0,
        shares: [
            (Bound::Compute, compute),
            (Bound::Sync, sync),
            (Bound::Network, 0.0),
        ],
    })
}

/// One inference engine per GPU, fed over PCIe from the host.
fn inference_replicas(
    w: &Workload,
    m: &Machine,
    n: usize,
    b: f64,
    c: &ComputeTerm,
) -> Result<PatternTerms, String> {
    let compute = c.ms;
    // One engine per GPU; input copies are double-buffered with compute, so the step is
    // the slower of the two (all replicas share PCIe / host memory).
    let h2d = m
        .h2d_gbps(n)
        .ok_or("host→GPU bandwidth unknown (PCIe link not in the topology)")?;
    let input = b * w.sample_input_bytes.unwrap_or(0.0) / (h2d * 1e9) * 1e3;
    let exposed_input = (input - compute).max(0.0);
    Ok(PatternTerms {
        step_ms: compute + exposed_input,
        compute_ms: compute,
        comm_exposed_ms: 0.0,
        other_ms: exposed_input,
        shares: [
            (Bound::Compute, compute),
            (Bound::HostInput, input),
            (Bound::Sync, 0.0),
        ],
    })
}

/// A primary that steps the world and secondaries that render it (CARLA's multi-GPU mode).
fn primary_secondary(w: &Workload, n: usize, b: f64, c: &ComputeTerm) -> PatternTerms {
    let compute = c.ms;
    // CARLA multi-GPU: the primary steps physics, then sends the scene to each of the n
    // secondaries over one link; each renders its sensors; all sensor data goes to the
    // client over the same link, streamed while rendering.
    let link = w.link_gbps.unwrap_or(1.0) * 1e9;
    let primary = w.primary_ms.unwrap_or(0.0);
    let scene = n as f64 * w.sync_bytes.unwrap_or(0.0) / link * 1e3;
    let output = n as f64 * b * w.sample_output_bytes.unwrap_or(0.0) / link * 1e3;
    let exposed_out = (output - compute).max(0.0);
    PatternTerms {
        step_ms: primary + scene + compute + exposed_out,
        compute_ms: compute,
        comm_exposed_ms: exposed_out,
        other_ms: primary + scene,
        shares: [
            (Bound::Compute, compute),
            (Bound::Sync, primary + scene),
            (Bound::Network, output),
        ],
    }
}

/// A server of n GPUs answering remote requests over one link (an M/M/1 queue).
fn remote_offload(w: &Workload, m: &Machine, n: usize, b: f64, c: &ComputeTerm) -> PatternTerms {
    let compute = c.ms;
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
    PatternTerms {
        step_ms: service + wait,
        compute_ms: compute,
        comm_exposed_ms: exposed_net,
        other_ms: w.rtt_ms.unwrap_or(0.0) + wait,
        shares: [
            (Bound::Compute, compute),
            (Bound::Network, network),
            (Bound::Sync, 0.0),
        ],
    }
}
