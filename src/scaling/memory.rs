//! Memory per GPU of a training step, against the GPU's memory: weights, gradients, optimizer
//! states, the data-parallel wrapper's communication buffers and the activations of one
//! micro-batch. A row that does not fit is never shown as a throughput; [`advice`] says what
//! would fit. Formulas and sources: docs/SCALING.md, "Memory fit".

use serde::{Deserialize, Serialize};

use super::workload::{Pattern, Workload};

const GIB: f64 = 1073741824.0;

/// Share of the GPU's memory a step may use: the CUDA context (≈ 0.5 GiB) and the caching
/// allocator's fragmentation (reserved − allocated was 2.5 GiB of 80.6 for GPT-2 XL on an H200,
/// PyTorch 2.11, 2026-11-23) take the rest.
pub const USABLE_SHARE: f64 = 0.95;

/// PyTorch DDP (2.11, `gradient_as_bucket_view=False`) keeps its flat gradient buckets beside
/// the parameters' gradients: measured on 2× H200 (2026-11-23) as 2 × the gradient bytes between
/// a plain 1-GPU step and a DDP step (GPT-2 XL 78.1 → 89.7 GiB with 5.8 GiB of gradients,
/// BERT-large 14.8 → 17.3 with 1.25, ResNet-50 11.0 → 11.2 with 0.1).
pub const DDP_BUFFER_GRADIENTS: f64 = 2.0;

/// The memory of one step on one GPU, GiB. `None` parts are unknown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryEstimate {
    /// Weights (the shard of them, sharded), GiB.
    pub weights_gib: f64,
    /// Gradients, GiB.
    pub grads_gib: f64,
    /// Optimizer states (and fp32 master weights where the weights are 16-bit), GiB.
    pub optimizer_gib: f64,
    /// Communication buffers of the data-parallel wrapper (DDP buckets; FSDP's gathered
    /// layers), GiB.
    pub buffers_gib: f64,
    /// Activations of one micro-batch, GiB; `None` when neither measured nor derivable.
    pub activations_gib: Option<f64>,
    /// The GPU's memory, GiB; `None` when unknown.
    pub capacity_gib: Option<f64>,
    /// How the activations were estimated.
    pub activation_basis: String,
}

impl MemoryEstimate {
    /// Everything known, GiB (activations left out when unknown: a lower bound then).
    pub fn total_gib(&self) -> f64 {
        self.weights_gib
            + self.grads_gib
            + self.optimizer_gib
            + self.buffers_gib
            + self.activations_gib.unwrap_or(0.0)
    }

    /// The whole step's memory, GiB, when every part is known; `None` when the activations are
    /// unknown ([`Self::total_gib`] is then only a lower bound, not a figure to show as the total).
    pub fn known_total_gib(&self) -> Option<f64> {
        self.activations_gib.map(|_| self.total_gib())
    }

    /// `12.3 GiB`, or `at least 12.3 GiB` when the activations are unknown; `unknown` where
    /// nothing is known (a workload with no weights stated: not "at least 0.0 GiB").
    pub fn describe_total(&self) -> String {
        match self.known_total_gib() {
            Some(t) => format!("{t:.1} GiB"),
            None if self.nothing_known() => "unknown".to_string(),
            None => format!("at least {:.1} GiB", self.total_gib()),
        }
    }

    /// Whether no part of the step's memory is known (a workload stating no weights and no
    /// activations): no lower bound worth a figure.
    pub fn nothing_known(&self) -> bool {
        self.known_total_gib().is_none() && self.total_gib() < 0.05
    }

    /// Whether the step fits in [`USABLE_SHARE`] of the GPU's memory: `Some(false)` as soon as
    /// the known parts exceed it, `Some(true)` only when every part is known.
    pub fn fits(&self) -> Option<bool> {
        let usable = self.capacity_gib? * USABLE_SHARE;
        if self.total_gib() > usable {
            Some(false)
        } else if self.activations_gib.is_some() {
            Some(true)
        } else {
            None
        }
    }
}

/// Activation bytes per sample: the workload's measured figure, else the transformer formula
/// of Korthikanti et al. (2022, eq. 2: 34·s·h bytes per layer per sample with 16-bit
/// activations and no recomputation; the 5·a·s²-term of stored attention scores drops out with
/// memory-efficient attention) plus the language-model head's logits (s·V × 10 bytes: bf16
/// logits, their fp32 copy for the loss, and its gradient). `None` for other models.
pub fn activation_bytes(w: &Workload) -> Option<(f64, String)> {
    if let Some(b) = w.activation_bytes_per_sample {
        return Some((b, format!("{:.3} GiB per sample (measured)", b / GIB)));
    }
    let m = w.model.as_ref().filter(|m| m.is_transformer())?;
    let (l, h, s) = (m.layers? as f64, m.hidden? as f64, m.seq_len? as f64);
    let v = m.vocab.unwrap_or(0) as f64;
    let bytes = 34.0 * s * h * l + 10.0 * s * v;
    Some((
        bytes,
        format!(
            "{:.3} GiB per sample (formula: 34·s·h·L + 10·s·V, Korthikanti et al. 2022)",
            bytes / GIB
        ),
    ))
}

/// The memory of `w` (with `pattern`, which may differ from the catalog's) on each of `n` GPUs
/// with a micro-batch of `micro` samples; `capacity_gib` is the GPU's memory. `None` for patterns
/// without a model of their memory.
pub fn estimate(
    w: &Workload,
    pattern: Pattern,
    n: usize,
    micro: f64,
    capacity_gib: Option<f64>,
) -> Option<MemoryEstimate> {
    estimate_accumulating(w, pattern, n, micro, false, capacity_gib)
}

/// [`estimate`] for a step that accumulates several micro-batches (`accumulating`): sharded
/// data parallelism then also holds every parameter's unsharded gradient between them, since
/// the reduce-scatter is skipped until the last (PyTorch FSDP's `no_sync` and FSDP2's
/// `set_requires_gradient_sync(False)`: "FSDP will accumulate the full model gradients (instead
/// of gradient shards) until the eventual sync"; measured: Llama-2-7B on one H200 fit at 121.9
/// GiB unaccumulated and ran out of 139.8 GiB accumulating 16, 2026-11-24). Plain DDP
/// accumulates into the gradients it already holds.
pub fn estimate_accumulating(
    w: &Workload,
    pattern: Pattern,
    n: usize,
    micro: f64,
    accumulating: bool,
    capacity_gib: Option<f64>,
) -> Option<MemoryEstimate> {
    let p = w.params;
    let opt = w.optimizer();
    // 16-bit weights keep an fp32 master copy for the update (ZeRO, §3.1: 16 bytes per
    // parameter for mixed-precision Adam).
    let master = if w.weight_bytes() < 4.0 && opt.state_bytes() > 0.0 {
        4.0
    } else {
        0.0
    };
    let act = activation_bytes(w);
    let activations_gib = act.as_ref().map(|(b, _)| b * micro / GIB);
    let activation_basis = act.map_or(
        "activations unknown (no measured figure, no formula for this model)".into(),
        |a| a.1,
    );
    let (shard, buffers) = match pattern {
        // One GPU runs the plain model (no wrapper: the 1-GPU baseline), so no buckets.
        Pattern::DdpRing if n <= 1 => (1.0, 0.0),
        Pattern::DdpRing => (1.0, DDP_BUFFER_GRADIENTS * p * w.grad_bytes()),
        Pattern::TreeReduce | Pattern::SimPolicy => (1.0, 0.0),
        Pattern::Fsdp => {
            // Each GPU holds 1/n of everything, plus the parameters of the layer running and
            // the one prefetched, gathered in full.
            let layers = w.model.as_ref().and_then(|m| m.layers).unwrap_or(1).max(1) as f64;
            let gathered = (2.0 * p / layers).min(p) * w.weight_bytes();
            let unsharded_grads = if accumulating {
                p * w.grad_bytes()
            } else {
                0.0
            };
            (
                n.max(1) as f64,
                if n > 1 { gathered } else { 0.0 } + unsharded_grads,
            )
        }
        Pattern::InferenceReplicas => {
            return Some(MemoryEstimate {
                weights_gib: p * w.weight_bytes() / GIB,
                grads_gib: 0.0,
                optimizer_gib: 0.0,
                buffers_gib: 0.0,
                activations_gib,
                capacity_gib,
                activation_basis,
            });
        }
        Pattern::PrimarySecondary | Pattern::RemoteOffload => return None,
    };
    Some(MemoryEstimate {
        weights_gib: p * w.weight_bytes() / shard / GIB,
        grads_gib: p * w.grad_bytes() / shard / GIB,
        optimizer_gib: p * (opt.state_bytes() + master) / shard / GIB,
        buffers_gib: buffers / GIB,
        activations_gib,
        capacity_gib,
        activation_basis,
    })
}

/// The divisors of `m` below `m`, largest first. Found by trial up to √m, so a micro-batch of
/// 1e9 (the largest accepted) costs ~32,000 steps, not the billion that trying every smaller
/// size took (41–82 s of CPU per modeled table).
fn proper_divisors_descending(m: u64) -> Vec<u64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i = 1u64;
    while i.saturating_mul(i) <= m {
        if m.is_multiple_of(i) {
            small.push(i);
            if i != m / i {
                large.push(m / i);
            }
        }
        i += 1;
    }
    // `small` ascends and `large` descends; together (large, then small reversed) they descend.
    large
        .into_iter()
        .chain(small.into_iter().rev())
        .filter(|&k| k < m)
        .collect()
}

/// What would fit when `w` does not fit on `n` GPUs with its pattern (`accumulating`: the step
/// accumulates micro-batches): reduce-scattering every micro-batch (sharded, accumulating), a
/// smaller micro-batch (gradient accumulation keeps the batch), or sharding over enough GPUs.
pub fn advice(w: &Workload, n: usize, capacity_gib: f64, accumulating: bool) -> String {
    let usable = (capacity_gib * USABLE_SHARE).floor();
    let micro = w.micro_batch();
    if w.pattern == Pattern::Fsdp
        && accumulating
        && estimate_accumulating(w, w.pattern, n, micro, false, Some(capacity_gib))
            .and_then(|e| e.fits())
            == Some(true)
    {
        return "fits when every micro-batch's gradients are reduce-scattered (no accumulation of unsharded gradients; one reduce-scatter per micro-batch)".into();
    }
    // Micro-batches smaller than the present one accumulate, as does a step that already did.
    let fits_with = |pattern: Pattern, n: usize, k: f64| {
        estimate_accumulating(
            w,
            pattern,
            n,
            k,
            accumulating || k < micro,
            Some(capacity_gib),
        )
        .and_then(|e| e.fits())
        .unwrap_or(false)
    };
    // Smaller micro-batches that divide the present one, so that accumulating them keeps the
    // batch (and the training) as it was.
    let m = micro.floor() as u64;
    if let Some(k) = proper_divisors_descending(m)
        .into_iter()
        .find(|&k| fits_with(w.pattern, n, k as f64))
    {
        return format!(
            "fits with micro-batches of {k} ({} accumulated for every {m} samples; the batch unchanged)",
            m / k
        );
    }
    if w.pattern != Pattern::Fsdp {
        for g in std::iter::successors(Some(2usize), |g| g.checked_mul(2)).take(10) {
            if fits_with(Pattern::Fsdp, g, 1.0) {
                return format!("fits sharded (fsdp pattern) on {g} or more GPUs");
            }
        }
    }
    // The least it could need: one sample, and (sharded) every micro-batch reduce-scattered;
    // "at least" where the activations are unknown.
    let need = estimate_accumulating(w, w.pattern, n, 1.0, false, Some(capacity_gib)).map_or(
        "an unknown amount".to_string(),
        |e| match e.known_total_gib() {
            Some(t) => format!("{t:.0} GiB"),
            None => format!("at least {:.0} GiB", e.total_gib()),
        },
    );
    format!("needs {need} per GPU even with one sample; {usable:.0} GiB usable")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::workload::catalog;

    fn load(name: &str) -> Workload {
        catalog().into_iter().find(|w| w.name == name).unwrap()
    }

    #[test]
    fn adam_ddp_counts_sixteen_bytes_per_parameter_plus_buckets() {
        // 1e9 fp32 parameters with AdamW: 4 (weights) + 4 (grads) + 8 (moments) bytes each, and
        // DDP's buckets hold 2 × 4 bytes more.
        let mut w = load("gpt2-xl");
        w.params = 1e9;
        w.activation_bytes_per_sample = Some(GIB);
        let e = estimate(&w, Pattern::DdpRing, 2, 3.0, Some(80.0)).unwrap();
        assert!((e.weights_gib - 4e9 / GIB).abs() < 1e-9);
        assert!((e.grads_gib - 4e9 / GIB).abs() < 1e-9);
        assert!((e.optimizer_gib - 8e9 / GIB).abs() < 1e-9);
        assert!((e.buffers_gib - 8e9 / GIB).abs() < 1e-9);
        assert_eq!(e.activations_gib, Some(3.0));
        assert!((e.total_gib() - (24e9 / GIB + 3.0)).abs() < 1e-9);
        assert_eq!(e.fits(), Some(true));
        // One GPU is the plain model, without DDP's buckets (GPT-2 XL measured 78.1 GiB plain,
        // 89.7 under DDP).
        let one = estimate(&w, Pattern::DdpRing, 1, 3.0, Some(80.0)).unwrap();
        assert_eq!(one.buffers_gib, 0.0);
    }

    /// Llama-2-7B under DDP on one H200: the plain 1-GPU step fits (FSDP's unsharded step, the
    /// same memory, ran at 121.9 GiB of 139.8 on 2026-11-24); on two, DDP's buckets do not.
    #[test]
    fn one_gpu_of_a_ddp_workload_is_the_plain_step() {
        let w = load("llama2-7b-ddp");
        let at = |n| estimate(&w, Pattern::DdpRing, n, 1.0, Some(140.4)).unwrap();
        assert_eq!(at(1).fits(), Some(true), "{:?}", at(1));
        assert_eq!(at(2).fits(), Some(false), "{:?}", at(2));
    }

    #[test]
    fn sixteen_bit_weights_keep_an_fp32_master_copy() {
        let mut w = load("gpt2-xl");
        w.params = 1e9;
        w.weight_bytes = Some(2.0);
        w.grad_dtype = crate::model::Dtype::Bf16;
        let e = estimate(&w, Pattern::TreeReduce, 1, 1.0, None).unwrap();
        // 2 + 2 + (8 + 4) = 16 bytes per parameter (ZeRO §3.1).
        assert!((e.weights_gib + e.grads_gib + e.optimizer_gib - 16e9 / GIB).abs() < 1e-9);
        assert_eq!(e.fits(), None);
    }

    #[test]
    fn llama_ddp_does_not_fit_on_80_gb_and_fsdp_does_on_two() {
        let w = load("llama2-7b-ddp");
        let e = estimate(&w, Pattern::DdpRing, 1, 1.0, Some(80.0)).unwrap();
        assert_eq!(e.fits(), Some(false), "{e:?}");
        // 6.7e9 × 16 bytes alone is 99.8 GiB.
        assert!(e.weights_gib + e.grads_gib + e.optimizer_gib > 99.0);
        let a = advice(&w, 1, 80.0, false);
        assert!(a.contains("fsdp") && a.contains("2 or more GPUs"), "{a}");
        let f = estimate(&w, Pattern::Fsdp, 2, 1.0, Some(80.0)).unwrap();
        assert_eq!(f.fits(), Some(true), "{f:?}");
    }

    #[test]
    fn divisors_come_largest_first_and_cheaply() {
        assert_eq!(proper_divisors_descending(12), vec![6, 4, 3, 2, 1]);
        assert_eq!(proper_divisors_descending(16), vec![8, 4, 2, 1]);
        assert_eq!(proper_divisors_descending(1), Vec::<u64>::new());
        assert_eq!(proper_divisors_descending(0), Vec::<u64>::new());
        let t = std::time::Instant::now();
        let d = proper_divisors_descending(1_000_000_000);
        assert_eq!((d[0], d.len()), (500_000_000, 99));
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    }

    #[test]
    fn a_smaller_micro_batch_that_keeps_the_batch() {
        // GPT-2 XL at 8 sequences needs 89.7 GiB; on an 80 GB GPU (76 usable) 5 would fit, but
        // 5 does not divide 8: the advice is the largest divisor that fits, 4, twice.
        let w = load("gpt2-xl");
        let e = estimate(&w, w.pattern, 1, 8.0, Some(80.0)).unwrap();
        assert_eq!(e.fits(), Some(false), "{e:?}");
        let fits = |k: f64| estimate(&w, w.pattern, 1, k, Some(80.0)).unwrap().fits();
        assert_eq!((fits(5.0), fits(4.0)), (Some(true), Some(true)));
        let a = advice(&w, 1, 80.0, false);
        assert_eq!(
            a,
            "fits with micro-batches of 4 (2 accumulated for every 8 samples; the batch unchanged)"
        );
    }

    #[test]
    fn unknown_activations_can_still_prove_a_misfit() {
        let mut w = load("llama2-7b-ddp");
        w.activation_bytes_per_sample = None;
        w.model = None;
        let e = estimate(&w, Pattern::DdpRing, 1, 1.0, Some(80.0)).unwrap();
        assert_eq!(e.activations_gib, None);
        assert_eq!(e.fits(), Some(false));
        let e = estimate(&w, Pattern::DdpRing, 1, 1.0, Some(400.0)).unwrap();
        assert_eq!(e.fits(), None);
    }

    #[test]
    fn transformer_formula_matches_hand_arithmetic() {
        let mut w = load("bert-large");
        w.activation_bytes_per_sample = None;
        let (b, basis) = activation_bytes(&w).unwrap();
        // 34 × 128 × 1024 × 24 + 10 × 128 × 30522 = 106,954,752 + 39,068,160.
        assert_eq!(b, 106_954_752.0 + 39_068_160.0);
        assert!(basis.contains("Korthikanti"));
    }

    #[test]
    fn sharded_accumulation_holds_the_unsharded_gradients() {
        // Llama-2-7B on one 141 GB H200: one sequence fits (measured 121.9 GiB), sixteen
        // accumulated do not (measured: out of memory at 139.8 GiB) — FSDP keeps every
        // parameter's fp32 gradient unsharded between micro-batches: 6.7e9 × 4 bytes = 25 GiB.
        let w = load("llama2-7b");
        let one = estimate_accumulating(&w, Pattern::Fsdp, 1, 1.0, false, Some(141.0)).unwrap();
        let acc = estimate_accumulating(&w, Pattern::Fsdp, 1, 1.0, true, Some(141.0)).unwrap();
        assert!((acc.total_gib() - one.total_gib() - 6.7e9 * 4.0 / GIB).abs() < 1e-9);
        assert_eq!((one.fits(), acc.fits()), (Some(true), Some(false)));
        // Plain DDP accumulates into the gradients it holds: no difference.
        let w = load("gpt2-xl");
        let a = estimate_accumulating(&w, Pattern::DdpRing, 2, 4.0, true, Some(141.0)).unwrap();
        let b = estimate_accumulating(&w, Pattern::DdpRing, 2, 4.0, false, Some(141.0)).unwrap();
        assert_eq!(a, b);
        // The advice for the sharded, accumulating step: reduce-scatter every micro-batch.
        let w = load("llama2-7b");
        assert!(advice(&w, 1, 141.0, true).contains("reduce-scattered"));
        // On 80 GB nothing on one GPU fits: it says the least it needs (one sample, no
        // accumulation).
        let need = one.total_gib().round();
        let a = advice(&w, 1, 80.0, true);
        assert!(a.contains(&format!("needs {need} GiB")), "{a}");
    }
}
