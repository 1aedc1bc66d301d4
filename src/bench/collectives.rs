//! Collectives: options, the plan, the backend seam, the runner and the modeled backend.
//!
//! The real backends (NCCL, and scalescope's own ring/tree/via-host all-reduce over P2P) live in
//! `bench::cuda`; this module is what they share with the modeled backend that CI runs.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::{BenchError, Warning};
use crate::model::collective_reference as reference;
use crate::model::{
    Algo, CollectiveCase, CollectiveOp, CollectiveResult, Dtype, LinkKind, Source, Status, Topology,
};

/// Smallest and largest size of the default sweep: 8 B … 1 GiB by ×2, as nccl-tests' `-b 8 -e 1G -f 2`.
pub const DEFAULT_MIN_BYTES: u64 = 8;
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// Default timed iterations and warm-up iterations per size (nccl-tests: `-n 20 -w 5`).
pub const DEFAULT_ITERS: u32 = 20;
pub const DEFAULT_WARMUP: u32 = 5;

/// In-place, out-of-place, or both (nccl-tests reports both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    OutOfPlace,
    InPlace,
    Both,
}

impl Placement {
    /// The in_place values to run.
    pub fn values(&self) -> Vec<bool> {
        match self {
            Self::OutOfPlace => vec![false],
            Self::InPlace => vec![true],
            Self::Both => vec![false, true],
        }
    }
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveOptions {
    /// The GPUs (every GPU when none are named).
    pub gpus: crate::model::GpuSelection,
    /// Ops; empty = all_reduce.
    pub ops: Vec<CollectiveOp>,
    /// Algorithms; empty = nccl. Own algorithms (ring, tree, host) run all_reduce only.
    pub algos: Vec<Algo>,
    /// Sizes in bytes; empty = 8 B … 1 GiB by ×2.
    pub sizes: Vec<u64>,
    pub dtype: Dtype,
    pub placement: Placement,
    pub iters: u32,
    pub warmup: u32,
    /// Capture the timed launches in a CUDA graph.
    pub graph: bool,
}

impl Default for CollectiveOptions {
    fn default() -> Self {
        Self {
            gpus: Default::default(),
            ops: Vec::new(),
            algos: Vec::new(),
            sizes: Vec::new(),
            dtype: Dtype::F32,
            placement: Placement::OutOfPlace,
            iters: DEFAULT_ITERS,
            warmup: DEFAULT_WARMUP,
            graph: false,
        }
    }
}

/// One unit of work: one op by one algorithm at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct CollCase {
    pub op: CollectiveOp,
    pub algo: Algo,
    pub gpus: Vec<usize>,
    pub bytes: u64,
    pub dtype: Dtype,
    pub in_place: bool,
    pub iters: u32,
    pub warmup: u32,
    pub graph: bool,
}

impl CollCase {
    /// A row for this case with nothing measured yet: its status and the reason (or note).
    pub fn row(
        &self,
        source: Source,
        status: Status,
        reason: impl Into<String>,
    ) -> CollectiveResult {
        CollectiveResult::empty(
            CollectiveCase {
                op: self.op,
                algo: self.algo,
                gpus: &self.gpus,
                bytes: self.bytes,
                dtype: self.dtype,
                in_place: self.in_place,
            },
            source,
            status,
            reason,
        )
    }
}

/// The default size sweep.
pub fn default_sizes() -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = DEFAULT_MIN_BYTES;
    while s <= DEFAULT_MAX_BYTES {
        v.push(s);
        s *= 2;
    }
    v
}

/// Parses `--ops all_reduce,all_gather` (or `all`).
pub fn parse_ops(s: &str) -> Result<Vec<CollectiveOp>, BenchError> {
    parse_list(
        s,
        "--ops",
        CollectiveOp::from_id,
        CollectiveOp::ALL,
        CollectiveOp::id,
    )
}

/// Parses `--algo nccl,ring` (or `all`).
pub fn parse_algos(s: &str) -> Result<Vec<Algo>, BenchError> {
    parse_list(s, "--algo", Algo::from_id, Algo::ALL, Algo::id)
}

fn parse_list<T: Copy>(
    s: &str,
    flag: &str,
    from: fn(&str) -> Option<T>,
    all: &[T],
    id: fn(&T) -> &'static str,
) -> Result<Vec<T>, BenchError> {
    if s.trim() == "all" {
        return Ok(all.to_vec());
    }
    let known = || all.iter().map(id).collect::<Vec<_>>().join(", ");
    let out: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            from(p).ok_or_else(|| {
                BenchError::BadOption(format!(
                    "{flag}: unknown value {} (known: {}, all)",
                    crate::model::validate::quoted(p),
                    known()
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(BenchError::BadOption(format!(
            "{flag}: no value given (known: {}, all)",
            known()
        )));
    }
    crate::model::validate::distinct(flag, &out, |v| id(v).to_string())
        .map_err(BenchError::BadOption)?;
    Ok(out)
}

/// Expands options into cases (sizes rounded down to whole elements per rank; sizes too small
/// for one element per rank are dropped, as nccl-tests does).
pub fn plan(
    topo: &Topology,
    opts: &CollectiveOptions,
) -> Result<(Vec<usize>, Vec<CollCase>), BenchError> {
    let gpus = super::plan::select_gpus(topo, &opts.gpus)?;
    if opts.iters == 0 {
        return Err(BenchError::BadOption("--iters must be at least 1".into()));
    }
    let ops = if opts.ops.is_empty() {
        vec![CollectiveOp::AllReduce]
    } else {
        opts.ops.clone()
    };
    let algos = if opts.algos.is_empty() {
        vec![Algo::Nccl]
    } else {
        opts.algos.clone()
    };
    let sizes = if opts.sizes.is_empty() {
        default_sizes()
    } else {
        opts.sizes.clone()
    };
    let n = gpus.len() as u64;
    let mut cases = Vec::new();
    let mut smallest_unit: Option<u64> = None;
    for &algo in &algos {
        for &op in &ops {
            if algo != Algo::Nccl && op != CollectiveOp::AllReduce {
                continue;
            }
            for &in_place in &opts.placement.values() {
                for &bytes in &sizes {
                    let unit = opts.dtype.size()
                        * match op {
                            CollectiveOp::AllGather
                            | CollectiveOp::ReduceScatter
                            | CollectiveOp::AllToAll => n,
                            _ => 1,
                        };
                    let bytes = bytes / unit * unit;
                    if bytes == 0 {
                        smallest_unit = Some(smallest_unit.map_or(unit, |u| u.min(unit)));
                        continue;
                    }
                    cases.push(CollCase {
                        op,
                        algo,
                        gpus: gpus.clone(),
                        bytes,
                        dtype: opts.dtype,
                        in_place,
                        iters: opts.iters,
                        warmup: opts.warmup,
                        graph: opts.graph,
                    });
                }
            }
        }
    }
    if cases.is_empty() {
        return Err(BenchError::BadOption(match smallest_unit {
            Some(unit) => format!(
                "--sizes: every size is smaller than one {} element per rank ({unit} bytes): nothing to run",
                opts.dtype
            ),
            None => "--algo/--ops: nothing to run: scalescope's own algorithms (ring, tree, host) run all_reduce only".to_string(),
        }));
    }
    Ok((gpus, cases))
}

/// Builds the collectives backend for a topology: what a layer that runs collectives of its own
/// is handed (`job::backend` is the one place that builds backends).
pub type MakeCollectives<'a> =
    dyn Fn(&Topology) -> Result<Box<dyn CollectiveBackend>, BenchError> + 'a;

/// Something that runs collective cases.
pub trait CollectiveBackend {
    fn source(&self) -> Source;
    fn describe(&self) -> String;
    /// Runs one case; never panics; trouble becomes a row with status and reason.
    fn run_case(&mut self, case: &CollCase, warnings: &mut Vec<Warning>) -> CollectiveResult;
}

/// Runs every case, calling `on_case` after each with (done, total, results so far).
pub fn run_collectives(
    cases: &[CollCase],
    backend: &mut dyn CollectiveBackend,
    cancel: &AtomicBool,
    warnings: &mut Vec<Warning>,
    on_case: &mut dyn FnMut(usize, usize, &[CollectiveResult]),
) -> (Vec<CollectiveResult>, bool) {
    let mut results = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return (results, true);
        }
        results.push(backend.run_case(case, warnings));
        on_case(i + 1, cases.len(), &results);
    }
    (results, false)
}

// Modeled collectives. Over NVLink: made from NCCL's curves measured on 2× and 8× H200
// (`model::collective_reference`, every size, every op). Over other links: time = α(n) + bytes ×
// factor ÷ (line rate × 0.8), the fraction assumed like host copies' and α the latency once
// fitted to NCCL over NVLink — neither measured over these links.
const ALPHA_US: f64 = 14.0;
/// Latency each GPU beyond two adds to a ring collective, µs: NCCL 2.28.9 all_reduce of 1 MiB on
/// 2, 3, 4 and 8 H200s over NVLink (docs/BENCHMARKS.md, "Collectives on 2, 3, 4 and 8 GPUs"):
/// about 10 µs a GPU, as a ring's 2(n−1) steps.
const RING_STEP_US: f64 = 10.0;
/// The fraction of a PCIe link's line rate a collective is assumed to reach (like host copies).
const PCIE_FRACTION: f64 = 0.8;

/// The fixed time of one collective over links other than NVLink on `n` GPUs, µs: 14 µs + 10 per
/// GPU beyond two up to 8, then [`reference::DOUBLING_US`] per doubling (as over NVLink).
fn pcie_alpha_us(n: usize) -> f64 {
    let ring = |n: usize| ALPHA_US + RING_STEP_US * n.saturating_sub(2) as f64;
    if n <= 8 {
        ring(n)
    } else {
        ring(8) + reference::DOUBLING_US * (n as f64 / 8.0).log2()
    }
}

/// How a collective over a pair with no NVLink up is said not to be modeled.
pub const NCCL_WITHOUT_NVLINK: &str =
    "whether NCCL would run it over PCIe or host memory instead, and how fast, is not known";

/// Modeled collectives from the slowest link among the selected GPUs.
pub struct ModeledCollectives {
    topo: Topology,
}

impl ModeledCollectives {
    /// A model over `topo` (use the modeled bandwidth backend's topology, with assumptions filled).
    pub fn new(topo: &Topology) -> Self {
        Self { topo: topo.clone() }
    }
}

/// The slowest link among `gpus` of `topo`: its line rate, whether it is NVLink, and its pair.
pub(crate) fn slowest_link(topo: &Topology, gpus: &[usize]) -> Option<(f64, bool, (usize, usize))> {
    // One pass over the topology's links (a lookup per pair was most of a 1,000-GPU --bench).
    let top = gpus.iter().copied().max()?;
    let mut selected = vec![false; top + 1];
    for &g in gpus {
        selected[g] = true;
    }
    let distinct = selected.iter().filter(|&&s| s).count();
    let mut worst: Option<(f64, bool, (usize, usize))> = None;
    let mut seen = 0usize;
    for l in &topo.links {
        if l.a == l.b || !selected.get(l.a).copied().unwrap_or(false) {
            continue;
        }
        if !selected.get(l.b).copied().unwrap_or(false) {
            continue;
        }
        seen += 1;
        let rate = l.line_rate.as_ref()?.gbps;
        let nv = matches!(l.kind, Some(LinkKind::Nv(_)));
        if worst.is_none_or(|(w, _, _)| rate < w) {
            worst = Some((rate, nv, (l.a, l.b)));
        }
    }
    // Every pair needs its link.
    (seen == distinct * (distinct - 1) / 2).then_some(())?;
    worst
}

/// One collective case modeled on `topo`: what [`ModeledCollectives`] runs, and what the scaling
/// model's modeled all-reduce curve is made of (no backend runs).
pub fn model_case(topo: &Topology, case: &CollCase) -> CollectiveResult {
    let mk = |status, reason: String| case.row(Source::Modeled, status, reason);
    if case.gpus.len() < 2 {
        return mk(
            Status::Waived,
            "a collective needs at least two GPUs".into(),
        );
    }
    if case.algo != Algo::Nccl {
        return mk(
            Status::Skipped,
            format!(
                "modeled: only NCCL is modeled, not scalescope's {} algorithm",
                case.algo
            ),
        );
    }
    // A buffer larger than a GPU holds runs out of memory on a real machine: not modeled.
    if let Some(why) =
        super::modeled::not_fitting(topo, case.bytes, case.gpus.iter().map(|&g| (g, 1)))
    {
        return mk(Status::Skipped, why);
    }
    let Some((line, nv, (a, b))) = slowest_link(topo, &case.gpus) else {
        return mk(Status::Skipped, "modeled: link line rates unknown".into());
    };
    if line <= 0.0 {
        // A pair whose every NVLink is down (`model::running::as_running` keeps its NV# at rate
        // 0): not a collective at 0 GB/s, which NCCL would not run.
        return mk(
            Status::Skipped,
            format!(
                "not modeled: no {} between GPU {a} and GPU {b} is up; {NCCL_WITHOUT_NVLINK}",
                if nv { "NVLink" } else { "link" }
            ),
        );
    }
    let n = case.gpus.len();
    let factor = case.op.busbw_factor(n);
    let (time_us, mut reason) = if nv {
        let (t, basis) = reference::nvlink_time_us(case.op, n, case.bytes, line);
        let mut reason = format!("modeled: {basis}; slowest link {line:.1} GB/s");
        if case.dtype != Dtype::F32 || case.in_place {
            reason.push_str(&format!(
                "; this {}{} row modeled as those",
                case.dtype,
                if case.in_place { " in-place" } else { "" }
            ));
        }
        (t, reason)
    } else {
        let alpha = pcie_alpha_us(n);
        let peak = line * PCIE_FRACTION;
        (
            alpha + case.bytes as f64 * factor / (peak * 1e9) * 1e6,
            format!(
                "modeled: {alpha:.0} µs + bytes × {factor:.3} ÷ ({:.0}% of {line:.1} GB/s) — not \
                 NVLink: the fraction assumed like host copies' and the latency as once fitted to \
                 NCCL over NVLink (14 µs + 10 per GPU beyond two; neither measured over these \
                 links)",
                PCIE_FRACTION * 100.0
            ),
        )
    };
    if matches!(
        case.op,
        CollectiveOp::AllReduce | CollectiveOp::ReduceScatter
    ) && switched_nvlink(topo, &case.gpus)
    {
        reason.push_str(
            "; ring and tree algorithms only: NVLink SHARP (NCCL's NVLS, reduction in the NVLink \
             switches) is not modeled — where the switches have it, NCCL can exceed this",
        );
    }
    let mut r = mk(Status::Ok, reason);
    r.set_time_us(time_us);
    r
}

/// Whether `gpus` (three or more) all reach each other over the same NVLink bond: GPUs behind
/// NVLink switches, where NVLink SHARP may apply.
fn switched_nvlink(topo: &Topology, gpus: &[usize]) -> bool {
    gpus.len() >= 3 && topo.common_nvlink_bond(gpus).is_some()
}

impl CollectiveBackend for ModeledCollectives {
    fn source(&self) -> Source {
        Source::Modeled
    }

    fn describe(&self) -> String {
        format!(
            "collectives modeled from the line rates of {}",
            self.topo.source.label()
        )
    }

    fn run_case(&mut self, case: &CollCase, _warnings: &mut Vec<Warning>) -> CollectiveResult {
        model_case(&self.topo, case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Gpu, TopologySource};

    fn topo(n: usize, nv: u32) -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..n)
            .map(|index| Gpu {
                index,
                nvlink_gbps_per_link: Some(26.562),
                ..Default::default()
            })
            .collect();
        t.normalize();
        for l in &mut t.links {
            l.kind = Some(LinkKind::Nv(nv));
        }
        t.derive_line_rates();
        t
    }

    #[test]
    fn default_sweep_is_8_bytes_to_1_gib() {
        let s = default_sizes();
        assert_eq!(s.first(), Some(&8));
        assert_eq!(s.last(), Some(&(1 << 30)));
        assert_eq!(s.len(), 28);
    }

    #[test]
    fn plan_rounds_to_whole_elements_and_limits_own_algos_to_all_reduce() {
        let opts = CollectiveOptions {
            ops: vec![CollectiveOp::AllReduce, CollectiveOp::AllGather],
            algos: vec![Algo::Nccl, Algo::Ring],
            sizes: vec![8, 100],
            ..Default::default()
        };
        let (gpus, cases) = plan(&topo(4, 18), &opts).unwrap();
        assert_eq!(gpus, vec![0, 1, 2, 3]);
        let ag: Vec<u64> = cases
            .iter()
            .filter(|c| c.op == CollectiveOp::AllGather)
            .map(|c| c.bytes)
            .collect();
        assert_eq!(
            ag,
            vec![96],
            "8 B is less than one f32 per rank; 100 B rounds to 96"
        );
        assert!(
            cases
                .iter()
                .filter(|c| c.algo == Algo::Ring)
                .all(|c| c.op == CollectiveOp::AllReduce)
        );
    }

    /// Over NVLink the model is the measured curve: on 2 and 8 GPUs at H200's line rate it reads
    /// the bundled reports' all_reduce (8 GiB on 2 GPUs, 8 B on 8), and says so.
    #[test]
    fn nvlink_collectives_follow_the_measured_curves() {
        let run = |t: &Topology, n: usize, bytes: u64| {
            model_case(
                t,
                &CollCase {
                    op: CollectiveOp::AllReduce,
                    algo: Algo::Nccl,
                    gpus: (0..n).collect(),
                    bytes,
                    dtype: Dtype::F32,
                    in_place: false,
                    iters: 20,
                    warmup: 5,
                    graph: false,
                },
            )
        };
        let pair = run(&topo(2, 18), 2, 8 << 30);
        assert!((pair.time_us.unwrap() - 24903.2).abs() < 0.1, "{pair:?}");
        assert!(pair.reason.unwrap().contains("2× H200"));
        assert_eq!(pair.source, Source::Modeled);
        let mut hgx = crate::topology::catalog::load("hgx-h200").unwrap();
        hgx.derive_line_rates();
        let tiny = run(&hgx, 8, 8);
        // Below 32 B, the 8-GPU curve's time at 32 B: fitted non-decreasing, the mean of its
        // times from 32 B to 256 KiB (75.6–84.9 µs), 79.75 µs — 79.4 measured at 8 B.
        assert!((tiny.time_us.unwrap() - 79.75).abs() < 0.01, "{tiny:?}");
        assert!(tiny.reason.unwrap().contains("below 32 B"));
        let bf16 = model_case(
            &hgx,
            &CollCase {
                op: CollectiveOp::AllReduce,
                algo: Algo::Nccl,
                gpus: (0..8).collect(),
                bytes: 1 << 30,
                dtype: Dtype::Bf16,
                in_place: true,
                iters: 20,
                warmup: 5,
                graph: false,
            },
        );
        let why = bf16.reason.unwrap();
        assert!(
            why.contains("f32, out of place") && why.contains("bf16 in-place row"),
            "{why}"
        );
        // Over PCIe: the assumed formula, said to be assumed.
        let mut pcie = topo(2, 18);
        for l in &mut pcie.links {
            l.kind = Some(LinkKind::Pix);
            l.line_rate = Some(crate::model::LineRate {
                gbps: 25.0,
                basis: "PCIe 4.0 x16".into(),
            });
        }
        let r = run(&pcie, 2, 1 << 30);
        assert!(
            r.reason.as_deref().unwrap().contains("neither measured"),
            "{r:?}"
        );
    }

    #[test]
    fn parse_lists() {
        assert_eq!(parse_ops("all").unwrap().len(), 6);
        assert!(
            parse_ops("all_reduce,bogus")
                .unwrap_err()
                .to_string()
                .contains("bogus")
        );
        assert_eq!(
            parse_algos("ring,tree").unwrap(),
            vec![Algo::Ring, Algo::Tree]
        );
    }
}
