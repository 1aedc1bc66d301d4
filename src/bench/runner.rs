//! Plan → results: runs each case on a backend, fills line rates and efficiencies, collects
//! warnings, reports progress after every case and stops early when cancelled.

use std::sync::atomic::{AtomicBool, Ordering};

use super::warning::HIGH_CV;
use super::{Backend, Case, Plan, Warning};
use crate::model::{BandwidthResult, Endpoint, LinkKind, Shape, Status, Topology};

/// Where a run stands, after each finished case.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Cases finished.
    pub done: usize,
    /// Cases in the plan.
    pub total: usize,
    /// The case just finished, e.g. `p2p_read_ce 0→1 512 MiB`.
    pub last: String,
}

/// Everything a run produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutcome {
    pub results: Vec<BandwidthResult>,
    pub warnings: Vec<Warning>,
    /// True when the run stopped before the plan's end.
    pub cancelled: bool,
}

/// One line naming a case.
pub fn case_label(case: &Case) -> String {
    format!(
        "{} {}→{} {}",
        case.test,
        case.src,
        case.dst,
        crate::model::quantities::format_bytes(case.bytes)
    )
}

/// Runs `plan` on `backend`. `on_case` is called after every case with the progress and every
/// result so far (the CLI rewrites its CSV there, the GUI refreshes). Setting `cancel` stops the
/// run after the case in flight; what finished is kept.
pub fn run_bandwidth(
    topo: &Topology,
    plan: &Plan,
    backend: &mut dyn Backend,
    cancel: &AtomicBool,
    on_case: &mut dyn FnMut(&Progress, &[BandwidthResult]),
) -> RunOutcome {
    let mut out = RunOutcome::default();
    let total = plan.cases.len();
    for (i, case) in plan.cases.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            out.cancelled = true;
            break;
        }
        let mut rows = backend.run_case(case, &mut out.warnings);
        for r in &mut rows {
            if r.line_rate_gbps.is_none() {
                r.line_rate_gbps = line_rate(topo, r.test.shape(), r.src, r.dst, &case.gpus);
            }
            r.update_efficiency();
            if let (Some(cv), Status::Ok) = (r.cv, r.status)
                && cv > HIGH_CV
            {
                out.warnings.push(Warning::HighVariance {
                    test: r.test,
                    src: r.src,
                    dst: r.dst,
                    bytes: r.bytes,
                    cv,
                });
            }
        }
        out.results.extend(rows);
        on_case(
            &Progress {
                done: i + 1,
                total,
                last: case_label(case),
            },
            &out.results,
        );
    }
    out
}

/// The most NVLinks a GPU of NVLink `generation` has (P100 4, V100 6, A100 12, Hopper and
/// Blackwell 18; 18 where the generation is not known).
fn most_nvlinks(generation: Option<u32>) -> u32 {
    match generation {
        Some(1) => 4,
        Some(2) => 6,
        Some(3) => 12,
        _ => 18,
    }
}

/// The line rate a result is compared to: the most the links its figure crosses carry in the
/// figure's direction, so that a correct measurement stays at or below 100 %. `None` where no
/// meaningful one exists (local copies, latency). Per shape (docs/CSV.md, "line_rate_gbps"):
/// - host tests, `host_to_all`, `all_to_host`: the GPU's PCIe link (their figures are per GPU);
/// - pair tests: the pair's link per direction, twice that for bidirectional totals;
/// - `all_to_one`, `one_to_all`, `all_pairs` (totals into or out of one GPU): the sum of that
///   GPU's links to the other selected GPUs, capped by its own NVLinks (links × per-link rate)
///   when every peer is reached over NVLink — through an NVSwitch each pair's `NV18` is the same
///   18 links, so the sum alone would count them once per peer.
pub fn line_rate(
    topo: &Topology,
    shape: Shape,
    src: Endpoint,
    dst: Endpoint,
    gpus: &[usize],
) -> Option<f64> {
    let pcie = |e: Endpoint| topo.gpu(e.gpu()?)?.host_line_rate_gbps();
    // A pair with every NVLink down keeps its kind at rate 0 (`model::running::as_running`):
    // no line rate to set a copy against, never a 0.
    let pair = |a: usize, b: usize| {
        topo.link(a, b)?
            .line_rate
            .as_ref()
            .map(|r| r.gbps)
            .filter(|r| *r > 0.0)
    };
    match shape {
        Shape::HostDevice { .. } | Shape::HostAll { .. } => {
            pcie(if src == Endpoint::Host { dst } else { src })
        }
        Shape::Pair { bidir, .. } => {
            let r = pair(src.gpu()?, dst.gpu()?)?;
            Some(if bidir { 2.0 * r } else { r })
        }
        // Into (or out of) one GPU from every other at once.
        Shape::Fan { .. } | Shape::AllPairs => {
            let me = if src == Endpoint::All { dst } else { src }.gpu()?;
            let peers: Option<Vec<f64>> = gpus
                .iter()
                .filter(|&&g| g != me)
                .map(|&g| pair(me, g))
                .collect();
            let sum: f64 = peers?.iter().sum();
            // Through a switch, one GPU's NVLinks cap what it can take in or send out at once:
            // as many as the most any GPU of its model has up, or a pair bond counts (through a
            // switch each pair's `NV18` is the GPU's 18 links, even where every GPU has some
            // down). A link down on this GPU is a fault `nvlink_links` names, not a lower line
            // rate to judge its copies against.
            let g = topo.gpu(me)?;
            // A pair bond stands for the GPU's own links only where the bonds cannot be links
            // of their own: more in all than a GPU of its NVLink generation has (through a
            // switch, seven NV18 bonds are the same 18 links). A direct mesh (three NV6 bonds
            // of 18 links) sums its bonds.
            let bonds: Vec<u32> = gpus
                .iter()
                .filter(|&&o| o != me)
                .filter_map(|&o| topo.link(me, o)?.kind?.nvlinks())
                .collect();
            let shared = bonds.iter().sum::<u32>() > most_nvlinks(g.nvlink_generation);
            let bonded = bonds.iter().copied().max().filter(|_| shared);
            let links = topo
                .gpus
                .iter()
                .filter(|o| o.name == g.name)
                .filter_map(|o| o.nvlinks_active)
                .chain(bonded)
                .max()
                .or(g.nvlinks_active);
            let own = match (links, per_link_gbps(topo, me, gpus)) {
                (Some(n), Some(r)) if n > 0 => Some(f64::from(n) * r),
                _ => None,
            };
            Some(match own {
                Some(own) if all_nvlink(topo, me, gpus) => sum.min(own),
                _ => sum,
            })
        }
        Shape::Local | Shape::Latency { .. } => None,
    }
}

/// The rate of one of GPU `me`'s NVLinks: its own figure, else a bond's line rate shared by its
/// links (a catalog entry or an import without a per-link figure: `NV12` at the generation's
/// 300 GB/s is 25 GB/s a link).
fn per_link_gbps(topo: &Topology, me: usize, gpus: &[usize]) -> Option<f64> {
    topo.gpu(me)?.nvlink_gbps_per_link.or_else(|| {
        gpus.iter()
            .filter(|&&o| o != me)
            .filter_map(|&o| {
                let l = topo.link(me, o)?;
                let n = l.kind?.nvlinks()?;
                let rate = l.line_rate.as_ref()?.gbps;
                (rate > 0.0).then(|| rate / f64::from(n.max(1)))
            })
            .reduce(f64::max)
    })
}

/// Whether GPU `me` reaches every other GPU of `gpus` over NVLink.
fn all_nvlink(topo: &Topology, me: usize, gpus: &[usize]) -> bool {
    gpus.iter()
        .filter(|&&o| o != me)
        .all(|&o| matches!(topo.link(me, o).and_then(|l| l.kind), Some(LinkKind::Nv(_))))
}

/// What the links as they run can carry for a result, where [`line_rate`] is the healthy figure
/// it is judged against: a GPU with NVLinks down takes in and sends out no more than its links
/// up carry (12 of 18 H200 links: 318.7 GB/s, not 478.1). Into or out of one GPU (`all_to_one`,
/// `one_to_all`): that GPU's links up. `all_pairs`, whose figure is all bytes ÷ the slowest
/// copy's time: every reader waits on the GPU with the fewest links up, so each reads at most
/// that GPU's links up, itself included. Other shapes: [`line_rate`].
pub fn carried_rate(
    topo: &Topology,
    shape: Shape,
    src: Endpoint,
    dst: Endpoint,
    gpus: &[usize],
) -> Option<f64> {
    let line = line_rate(topo, shape, src, dst, gpus)?;
    let me = match shape {
        Shape::Fan { .. } | Shape::AllPairs => {
            if src == Endpoint::All { dst } else { src }.gpu()?
        }
        _ => return Some(line),
    };
    if !all_nvlink(topo, me, gpus) {
        return Some(line);
    }
    let up = |g: usize| -> Option<f64> {
        let n = topo.gpu(g)?.nvlinks_active?;
        Some(f64::from(n) * per_link_gbps(topo, g, gpus)?)
    };
    let limit = match shape {
        Shape::AllPairs => gpus.iter().filter_map(|&g| up(g)).reduce(f64::min),
        _ => up(me),
    };
    Some(match limit {
        Some(l) if l > 0.0 => line.min(l),
        _ => line,
    })
}
