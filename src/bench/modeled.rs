//! The modeled backend: "what would this box do", from line rates × typical efficiencies.
//!
//! Every figure it produces is labeled `modeled`. Efficiencies come from the one reference table
//! ([`crate::model::efficiency`]: scalescope's bundled 8× H200 report, nvbandwidth on 2× H200,
//! each entry with its source), which the health check judges measured figures against too. A
//! topology without link speeds (an imported `nvidia-smi` capture) gets documented defaults,
//! each reported as a warning; [`ModeledBackend::as_stated`] models only what it states.

use super::{Backend, Case, Warning};
use crate::model::efficiency::{self, Path, Reference};
use crate::model::{
    BandwidthResult, DEFAULT_NVLINK_GBPS, Endpoint, HEADLINE_BYTES, LineRate, LinkKind, Shape,
    Source, Status, TestId, Topology, pcie_rate_gbps,
};

/// Figures assumed where the topology has none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Assumptions {
    /// Per-link, per-direction NVLink rate, GB/s.
    pub nvlink_gbps_per_link: f64,
    /// PCIe generation and width of GPUs whose link is unknown.
    pub pcie_gen: u32,
    pub pcie_width: u32,
}

impl Default for Assumptions {
    /// 25 GB/s per NVLink per direction; PCIe Gen4 x16.
    fn default() -> Self {
        Self {
            nvlink_gbps_per_link: DEFAULT_NVLINK_GBPS,
            pcie_gen: 4,
            pcie_width: 16,
        }
    }
}

/// Parses `--pcie gen5x16` (also `Gen3x8`, `5x16`). The width is required: a link is a
/// generation and a width, and `gen5` read as x16 would model an x8 slot at twice its rate.
pub fn parse_pcie(s: &str) -> Result<(u32, u32), String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_prefix("gen").unwrap_or(&t);
    let Some((g, w)) = t.split_once('x') else {
        return Err(format!(
            "--pcie: {} names no width (expected e.g. gen5x16 or gen4x8)",
            crate::model::validate::quoted(s)
        ));
    };
    let generation: u32 = g.parse().map_err(|_| bad_pcie(s))?;
    let width: u32 = w.parse().map_err(|_| bad_pcie(s))?;
    if !is_pcie_link(generation, width) {
        return Err(bad_pcie(s));
    }
    Ok((generation, width))
}

/// Whether generation `generation` at width x`width` is a PCIe link there is a rate for.
pub fn is_pcie_link(generation: u32, width: u32) -> bool {
    pcie_rate_gbps(generation, width).is_some() && [1, 2, 4, 8, 16, 32].contains(&width)
}

fn bad_pcie(s: &str) -> String {
    format!(
        "--pcie: {} is not a PCIe link (expected e.g. gen4x16, gen5x16, gen3x8)",
        crate::model::validate::quoted(s)
    )
}

// Latency of one dependent access (nvbandwidth on H200: 829 ns GPU→peer over NVLink, 1204 ns
// GPU→host); PCIe peer reads assumed like host reads.
const LATENCY_NV_NS: f64 = 829.0;
const LATENCY_PCIE_NS: f64 = 1204.0;

/// `topo` with the `assume`d figures filled in where it states none (a GPU's PCIe link, an
/// NVLink pair's speed) and line rates derived; each assumption is returned as a warning. What
/// the modeled backend models, and what the scaling model reads line rates from.
pub fn with_assumptions(topo: &Topology, assume: Assumptions) -> (Topology, Vec<Warning>) {
    let mut topo = topo.clone();
    let mut warnings = Vec::new();
    let missing_pcie: Vec<usize> = topo
        .gpus
        .iter()
        .filter(|g| g.pcie.line_rate_gbps().is_none())
        .map(|g| g.index)
        .collect();
    if !missing_pcie.is_empty() {
        for g in &mut topo.gpus {
            if missing_pcie.contains(&g.index) {
                g.pcie.gen_max = Some(assume.pcie_gen);
                g.pcie.width_max = Some(assume.pcie_width);
            }
        }
        let text = format!(
            "PCIe Gen{} x{} for {} (not in the topology: add `nvidia-smi -q` with another --import, or `bench bandwidth --modeled --pcie gen5x16`)",
            assume.pcie_gen,
            assume.pcie_width,
            if missing_pcie.len() == topo.gpus.len() && missing_pcie.len() > 8 {
                format!("all {} GPUs", missing_pcie.len())
            } else {
                format!(
                    "GPU {}",
                    crate::model::quantities::first_of(&missing_pcie, 8)
                )
            }
        );
        warnings.push(Warning::Assumption { text });
    }
    let mut missing_nv = Vec::new();
    for l in &mut topo.links {
        if let (Some(LinkKind::Nv(n)), None) = (l.kind, &l.line_rate) {
            l.line_rate = Some(LineRate {
                gbps: f64::from(n) * assume.nvlink_gbps_per_link,
                basis: format!(
                    "{n} NVLinks × {} GB/s (assumed)",
                    assume.nvlink_gbps_per_link
                ),
            });
            missing_nv.push(format!("{}–{}", l.a, l.b));
        }
    }
    if !missing_nv.is_empty() {
        let text = format!(
            "{} GB/s per NVLink per direction for GPU pairs {} (the topology carries no link speeds)",
            assume.nvlink_gbps_per_link,
            crate::model::quantities::first_of(&missing_nv, 8)
        );
        warnings.push(Warning::Assumption { text });
    }
    topo.derive_line_rates();
    (topo, warnings)
}

/// Figures from line rates. Built from a topology; fills in assumed line rates where it has none.
pub struct ModeledBackend {
    topo: Topology,
    assumptions: Vec<String>,
}

impl ModeledBackend {
    /// A model of `topo`. Where a GPU's PCIe link or an NVLink pair's speed is unknown, the
    /// `assume`d figures are used and each use is returned as a warning.
    pub fn new(topo: &Topology, assume: Assumptions) -> (Self, Vec<Warning>) {
        let (topo, warnings) = with_assumptions(topo, assume);
        let assumptions = warnings
            .iter()
            .filter_map(|w| match w {
                Warning::Assumption { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        (Self { topo, assumptions }, warnings)
    }

    /// A model of `topo` exactly as it states it: a figure whose link the topology does not
    /// state is not modeled (skipped, and it says why), never assumed. The health check models
    /// a machine's links as read or stated with it.
    pub fn as_stated(topo: &Topology) -> Self {
        Self {
            topo: topo.clone(),
            assumptions: Vec::new(),
        }
    }

    /// The topology with assumed figures filled in.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    fn pcie(&self, gpu: usize) -> Option<f64> {
        self.topo.gpu(gpu)?.pcie.line_rate_gbps()
    }

    /// Host copies over a link other than PCIe (NVLink-C2C) have no reference efficiency yet:
    /// skipped, saying so, rather than modeled with PCIe's.
    fn refuse_host_link(&self, gpu: usize) -> Result<(), (Status, String)> {
        match self.topo.gpu(gpu).and_then(|g| g.host_link.as_ref()) {
            Some(h) => Err((
                Status::Skipped,
                format!(
                    "modeled: no reference efficiency for host copies over {} ({:.0} GB/s per direction) yet",
                    h.kind, h.gbps
                ),
            )),
            None => Ok(()),
        }
    }

    fn pair(&self, a: usize, b: usize) -> Option<(LinkKind, f64)> {
        let l = self.topo.link(a, b)?;
        Some((l.kind?, l.line_rate.as_ref()?.gbps))
    }

    /// Ok when `a` and `b` may access each other's memory over a path that runs: peer access
    /// allowed ([`require_peer`]) and, where they are joined by NVLink, some of its links up. A
    /// pair whose every NVLink is down keeps its `NV#` (`model::running::as_running`) at rate 0:
    /// whether the driver would then carry its copies over PCIe, or refuse peer access, is not
    /// modeled — skipped, saying so, never a modeled 0 GB/s.
    fn require_peer(&self, a: usize, b: usize) -> Result<(), (Status, String)> {
        require_peer(&self.topo, a, b)?;
        match self.topo.link(a, b).filter(|l| l.no_nvlink_up()) {
            Some(l) => Err((
                Status::Skipped,
                format!(
                    "not modeled: no NVLink of the {} between GPU {a} and GPU {b} is up; \
                     {NO_NVLINK_UP}",
                    l.kind.map(|k| k.to_string()).unwrap_or_default()
                ),
            )),
            None => Ok(()),
        }
    }

    /// Whether `a` and `b` are joined by an NVLink bond with no link up.
    fn no_nvlink_up(&self, a: usize, b: usize) -> bool {
        self.topo.link(a, b).is_some_and(|l| l.no_nvlink_up())
    }

    /// `gpus` less the peers of `me` joined to it by an NVLink bond with no link up, and a note
    /// naming them; a fan or all-pairs cell is modeled over the peers whose links run (the ones
    /// left out would go over PCIe or be refused: not modeled). Every peer left out: the first
    /// one's reason.
    fn live_group(
        &self,
        me: usize,
        gpus: &[usize],
    ) -> Result<(Vec<usize>, Option<String>), (Status, String)> {
        let (out, live): (Vec<usize>, Vec<usize>) = gpus
            .iter()
            .partition(|&&g| g != me && self.no_nvlink_up(me, g));
        if out.is_empty() {
            return Ok((live, None));
        }
        if live.iter().all(|&g| g == me) {
            // No peer left: the first one's reason (its link is down, or peer access refused).
            self.require_peer(me, out[0])?;
        }
        let note = format!(
            "GPU {} left out: no NVLink to GPU {me} up ({NO_NVLINK_UP})",
            crate::model::quantities::gpu_list(&out)
        );
        Ok((live, Some(note)))
    }

    /// (figure, line rate, how) for one cell; `Err(reason)` when it is waived or unknown.
    fn figure(
        &self,
        case: &Case,
        src: Endpoint,
        dst: Endpoint,
    ) -> Result<Figure, (Status, String)> {
        // The buffers a live run allocates must fit (skipped as a live run runs out of memory).
        if let Some(why) = not_fitting(&self.topo, case.bytes, buffers_per_gpu(case, src, dst)) {
            return Err((Status::Skipped, why));
        }
        let unknown = |what: &str| (Status::Skipped, format!("modeled: {what} unknown"));
        let shape = case.test.shape();
        let path = Path::of(&self.topo, shape, src, dst, &case.gpus);
        // The table's efficiency of `test` on this cell's path.
        let efficiency = |test: TestId| {
            path.and_then(|p| efficiency::reference(test, p))
                .ok_or_else(|| unknown("link"))
        };
        match shape {
            Shape::HostDevice { to_device, .. } => {
                let g = if to_device { dst } else { src }
                    .gpu()
                    .ok_or_else(|| unknown("GPU"))?;
                self.refuse_host_link(g)?;
                let line = self.pcie(g).ok_or_else(|| unknown("PCIe link"))?;
                Ok(Figure::rate(line, efficiency(case.test)?, line))
            }
            Shape::HostAll { to_device } => {
                let g = if src == Endpoint::Host { dst } else { src }
                    .gpu()
                    .ok_or_else(|| unknown("GPU"))?;
                self.refuse_host_link(g)?;
                let line = self.pcie(g).ok_or_else(|| unknown("PCIe link"))?;
                // One GPU alone copies as a plain pinned copy does.
                let test = match (case.gpus.len() > 1, to_device) {
                    (true, _) => case.test,
                    (false, true) => TestId::H2d,
                    (false, false) => TestId::D2h,
                };
                Ok(Figure::rate(line, efficiency(test)?, line))
            }
            Shape::Pair { bidir, peer, .. } => {
                let (a, b) = (
                    src.gpu().ok_or_else(|| unknown("GPU"))?,
                    dst.gpu().ok_or_else(|| unknown("GPU"))?,
                );
                let (_, line) = self.pair(a, b).ok_or_else(|| unknown("link"))?;
                let total = if bidir { 2.0 } else { 1.0 };
                if !peer {
                    let host = self
                        .pcie(a)
                        .zip(self.pcie(b))
                        .map(|(x, y)| x.min(y))
                        .ok_or_else(|| unknown("PCIe link"))?;
                    return Ok(Figure::rate(
                        host * total,
                        efficiency(case.test)?,
                        line * total,
                    ));
                }
                self.require_peer(a, b)?;
                Ok(Figure::rate(
                    line * total,
                    efficiency(case.test)?,
                    line * total,
                ))
            }
            Shape::Fan { to_one } => {
                let me = if to_one { dst } else { src }
                    .gpu()
                    .ok_or_else(|| unknown("GPU"))?;
                let (group, note) = self.live_group(me, &case.gpus)?;
                let line = super::runner::line_rate(&self.topo, shape, src, dst, &group)
                    .ok_or_else(|| unknown("link"))?;
                let carried = super::runner::carried_rate(&self.topo, shape, src, dst, &group)
                    .unwrap_or(line);
                for &g in group.iter().filter(|&&g| g != me) {
                    self.require_peer(me, g)?;
                }
                Ok(Figure::rate(carried, efficiency(case.test)?, line).noting(note))
            }
            Shape::AllPairs => {
                let me = dst.gpu().ok_or_else(|| unknown("GPU"))?;
                let (group, note) = self.live_group(me, &case.gpus)?;
                let line = super::runner::line_rate(&self.topo, shape, src, dst, &group)
                    .ok_or_else(|| unknown("link"))?;
                let carried = super::runner::carried_rate(&self.topo, shape, src, dst, &group)
                    .unwrap_or(line);
                for &g in group.iter().filter(|&&g| g != me) {
                    self.require_peer(me, g)?;
                }
                Ok(Figure::rate(carried, efficiency(case.test)?, line).noting(note))
            }
            Shape::Local => Err((
                Status::Skipped,
                "modeled: device memory bandwidth is not in the topology".to_string(),
            )),
            Shape::Latency { d2d } => self.latency(src, dst, d2d),
        }
    }

    /// A latency cell's figure: NVLink's between GPUs joined by NVLink, else PCIe's (a pair
    /// of GPUs over PCIe only where P2P is allowed).
    fn latency(&self, src: Endpoint, dst: Endpoint, d2d: bool) -> Result<Figure, (Status, String)> {
        let nv = d2d
            && matches!(
                src.gpu().zip(dst.gpu()).and_then(|(a, b)| self.pair(a, b)),
                Some((LinkKind::Nv(_), _))
            );
        if d2d {
            let (a, b) = src
                .gpu()
                .zip(dst.gpu())
                .ok_or_else(|| (Status::Skipped, "modeled: GPU unknown".to_string()))?;
            // Over PCIe only where peer access is allowed; a bond with no link up has neither
            // NVLink's latency nor, not known, PCIe's.
            if !nv || self.no_nvlink_up(a, b) {
                self.require_peer(a, b)?;
            }
        }
        let (ns, how) = if nv {
            (LATENCY_NV_NS, "NVLink peer latency, nvbandwidth on H200")
        } else {
            (LATENCY_PCIE_NS, "PCIe host latency, nvbandwidth on H200")
        };
        Ok(Figure {
            value: ns,
            line: None,
            how: how.to_string(),
        })
    }
}

struct Figure {
    value: f64,
    line: Option<f64>,
    how: String,
}

impl Figure {
    /// The figure of a copy of `case.bytes`: each of its copies (both directions of a
    /// bidirectional pair, every peer of a fan) first takes the test's fixed time
    /// (`efficiency::per_copy`), then moves its bytes at the rate that gives the reference's
    /// figure at the size it was read at ([`HEADLINE_BYTES`], which already holds that time once).
    /// Said in `how` where that time is over 1 % of the copy's.
    fn at_size(self, case: &Case) -> Self {
        // None for latency tests: their figure is a time already.
        let Some(pc) = efficiency::per_copy(case.test).filter(|_| self.value > 0.0) else {
            return self;
        };
        let copies = match case.test.shape() {
            Shape::Pair { bidir: true, .. } => 2.0,
            Shape::Fan { .. } | Shape::AllPairs => case.gpus.len().saturating_sub(1).max(1) as f64,
            _ => 1.0,
        };
        let bytes = case.bytes as f64;
        let fixed_s = pc.us * 1e-6;
        // Seconds per byte once moving: the reference's time at its size less the fixed time.
        let per_byte = 1.0 / (self.value / copies * 1e9) - fixed_s / HEADLINE_BYTES as f64;
        if per_byte <= 0.0 {
            return self;
        }
        let moving_s = bytes * per_byte;
        let share = fixed_s / (fixed_s + moving_s);
        let mut how = self.how;
        if share > 0.01 {
            how.push_str(&format!(
                "; {:.2} µs per copy before its bytes move ({}), {:.0} % of this size's time",
                pc.us,
                pc.source,
                share * 100.0
            ));
        }
        Figure {
            value: copies * bytes / (fixed_s + moving_s) / 1e9,
            line: self.line,
            how,
        }
    }

    /// `base` GB/s × the reference's efficiency, against `line`.
    /// The figure with `note` (if any) after its `how`.
    fn noting(mut self, note: Option<String>) -> Self {
        if let Some(n) = note {
            self.how = format!("{}; {n}", self.how);
        }
        self
    }

    fn rate(base: f64, r: Reference, line: f64) -> Self {
        Figure {
            value: base * r.efficiency,
            line: Some(line),
            how: format!(
                "{:.0}% of {:.1} GB/s ({})",
                r.efficiency * 100.0,
                base,
                r.how()
            ),
        }
    }
}

impl Backend for ModeledBackend {
    fn source(&self) -> Source {
        Source::Modeled
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "modeled from the line rates of {}",
            self.topo.source.label()
        );
        if !self.assumptions.is_empty() {
            s.push_str(&format!(" (assumed: {})", self.assumptions.join("; ")));
        }
        s
    }

    fn run_case(&mut self, case: &Case, _warnings: &mut Vec<Warning>) -> Vec<BandwidthResult> {
        case.cells()
            .into_iter()
            .map(|(src, dst)| match self.figure(case, src, dst) {
                Ok(f) => {
                    let f = f.at_size(case);
                    let mut r = BandwidthResult::empty(
                        case.test,
                        src,
                        dst,
                        case.bytes,
                        Source::Modeled,
                        Status::Ok,
                        format!("modeled: {}", f.how),
                    );
                    r.line_rate_gbps = f.line;
                    if case.test.is_latency() {
                        r.latency_ns = Some(f.value);
                    } else {
                        r.median_gbps = Some(f.value);
                        if matches!(case.test.shape(), Shape::Pair { bidir: true, .. }) {
                            r.fwd_gbps = Some(f.value / 2.0);
                            r.rev_gbps = Some(f.value / 2.0);
                        }
                    }
                    r.update_efficiency();
                    r
                }
                Err((status, reason)) => BandwidthResult::empty(
                    case.test,
                    src,
                    dst,
                    case.bytes,
                    Source::Modeled,
                    status,
                    reason,
                ),
            })
            .collect()
    }
}

/// Why `buffers` of `bytes` each on a GPU (`(gpu, buffers)`) do not fit in its memory, for the
/// first GPU of `topo` where they do not (`None` where all fit, or the memory is not known): a
/// copy or collective of more than a GPU holds runs out of memory on a real machine, so it is
/// not modeled at its line rate.
pub(crate) fn not_fitting(
    topo: &Topology,
    bytes: u64,
    buffers: impl IntoIterator<Item = (usize, u64)>,
) -> Option<String> {
    let fmt = crate::model::quantities::format_bytes;
    buffers.into_iter().find_map(|(g, n)| {
        let mib = topo.gpu(g)?.memory_mib?;
        let needed = bytes.saturating_mul(n);
        (needed > mib << 20).then(|| {
            let what = if n == 1 {
                format!("a {} buffer does", fmt(bytes))
            } else {
                format!("{n} buffers of {} ({}) do", fmt(bytes), fmt(needed))
            };
            format!(
                "not modeled: {what} not fit in GPU {g}'s {} of memory",
                fmt(mib << 20)
            )
        })
    })
}

/// The device buffers of `case`'s size a live run allocates on each GPU of the cell
/// (`bench/cuda/cases.rs`): a host copy one (three for the bidirectional ones: the timed copy
/// and the opposite one of twice its size), a pair one on each side (two for bidirectional),
/// a local copy two, a fan into one GPU one per peer on it, every GPU's source plus a
/// destination per peer for all-pairs. Latency tests use a small chase buffer: none.
fn buffers_per_gpu(case: &Case, src: Endpoint, dst: Endpoint) -> Vec<(usize, u64)> {
    let peers = case.gpus.len().saturating_sub(1) as u64;
    let others = |me: usize| case.gpus.iter().filter(move |&&g| g != me).copied();
    match case.test.shape() {
        Shape::HostDevice { bidir, .. } => {
            let g = src.gpu().or(dst.gpu());
            g.map(|g| (g, if bidir { 3 } else { 1 }))
                .into_iter()
                .collect()
        }
        Shape::HostAll { .. } => src
            .gpu()
            .or(dst.gpu())
            .map(|g| (g, 1))
            .into_iter()
            .collect(),
        Shape::Pair { bidir, .. } => [src.gpu(), dst.gpu()]
            .into_iter()
            .flatten()
            .map(|g| (g, if bidir { 2 } else { 1 }))
            .collect(),
        Shape::Local => src.gpu().map(|g| (g, 2)).into_iter().collect(),
        Shape::Fan { to_one } => {
            let Some(me) = (if to_one { dst } else { src }).gpu() else {
                return Vec::new();
            };
            let mine = if to_one { peers.max(1) } else { 1 };
            std::iter::once((me, mine))
                .chain(others(me).map(|o| (o, 1)))
                .collect()
        }
        Shape::AllPairs => case.gpus.iter().map(|&g| (g, peers + 1)).collect(),
        Shape::Latency { .. } => Vec::new(),
    }
}

/// How a pair whose every NVLink is down is said not to be modeled (the check's notes group by it).
pub(crate) const NO_NVLINK_UP: &str =
    "whether the driver carries their copies over PCIe instead is not known";

/// How [`require_peer`] says a pair's peer access is not stated (the check's notes group by it).
pub(crate) const PEER_UNSTATED: &str = "allow peer access is unknown";

/// Ok when GPUs `a` and `b` of `topo` may access each other's memory; waived where the topology
/// says they may not (as a live run would be), skipped (not modeled) where it does not say:
/// unknown is never modeled as working. Shared by the modeled bandwidth and the modeled check.
pub(crate) fn require_peer(topo: &Topology, a: usize, b: usize) -> Result<(), (Status, String)> {
    match topo.peer_access(a, b) {
        Some(true) => Ok(()),
        Some(false) => Err((
            Status::Waived,
            format!("peer access unsupported between GPU {a} and GPU {b} (P2P status not OK)"),
        )),
        None => Err((
            Status::Skipped,
            format!(
                "not modeled: whether GPU {a} and GPU {b} {PEER_UNSTATED} (the topology does not say)"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{BandwidthOptions, Plan, run_bandwidth};
    use crate::model::{Gpu, P2pStatus, PcieLink, TestId, TopologySource};
    use std::sync::atomic::AtomicBool;

    fn h200_pair(nv: Option<u32>) -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..2)
            .map(|index| Gpu {
                index,
                pcie: PcieLink {
                    gen_max: Some(5),
                    width_max: Some(16),
                    ..Default::default()
                },
                nvlink_gbps_per_link: nv.map(|_| 26.562),
                nvlinks_active: nv,
                ..Default::default()
            })
            .collect();
        t.normalize();
        t.link_mut(0, 1).unwrap().kind = Some(nv.map_or(LinkKind::Sys, LinkKind::Nv));
        t.derive_line_rates();
        t
    }

    /// `t` with its GPUs' P2P status stated as refused (`NS`) both ways.
    fn refused(mut t: Topology) -> Topology {
        for (a, b) in [(0, 1), (1, 0)] {
            let p = t.p2p_mut(a, b).unwrap();
            p.caps.read = Some(P2pStatus::Ns);
            p.caps.write = Some(P2pStatus::Ns);
        }
        t
    }

    fn run(t: &Topology, tests: Vec<TestId>) -> Vec<BandwidthResult> {
        let (mut be, _) = ModeledBackend::new(t, Assumptions::default());
        let plan = Plan::new(
            t,
            &BandwidthOptions {
                tests,
                ..Default::default()
            },
        )
        .unwrap();
        run_bandwidth(t, &plan, &mut be, &AtomicBool::new(false), &mut |_, _| {}).results
    }

    #[test]
    fn nvlink_p2p_is_efficiency_times_line_rate_and_labeled() {
        let rs = run(
            &h200_pair(Some(18)),
            vec![TestId::P2pReadCe, TestId::P2pBidirCe],
        );
        let read = rs.iter().find(|r| r.test == TestId::P2pReadCe).unwrap();
        let line = 18.0 * 26.562;
        let read_eff = efficiency::reference(TestId::P2pReadCe, Path::Nvlink)
            .unwrap()
            .efficiency;
        assert!((read.median_gbps.unwrap() - read_eff * line).abs() < 1e-9);
        assert_eq!(read.line_rate_gbps, Some(line));
        assert!((read.efficiency.unwrap() - read_eff).abs() < 1e-12);
        assert_eq!(read.source, Source::Modeled);
        assert!(read.reason.as_deref().unwrap().starts_with("modeled"));
        assert_eq!(read.wrong, None, "a model checks no data");
        let bidir = rs.iter().find(|r| r.test == TestId::P2pBidirCe).unwrap();
        assert_eq!(bidir.line_rate_gbps, Some(2.0 * line));
        assert!(
            (bidir.fwd_gbps.unwrap() + bidir.rev_gbps.unwrap() - bidir.median_gbps.unwrap()).abs()
                < 1e-9
        );
    }

    #[test]
    fn a_pair_with_every_nvlink_down_is_not_modeled_at_zero() {
        // As `model::running::as_running` leaves a pair with none of its links up: its NV18
        // kept, its rate 0.
        let mut t = h200_pair(Some(18));
        t.link_mut(0, 1).unwrap().line_rate.as_mut().unwrap().gbps = 0.0;
        let rs = run(
            &t,
            vec![
                TestId::P2pReadCe,
                TestId::P2pBidirCe,
                TestId::AllPairs,
                TestId::LatencyD2d,
                TestId::P2pReadCeNopeer,
            ],
        );
        let peer: Vec<_> = rs
            .iter()
            .filter(|r| r.test != TestId::P2pReadCeNopeer)
            .collect();
        assert!(peer.len() >= 7, "{peer:?}");
        assert!(peer.iter().any(|r| r.test == TestId::LatencyD2d));
        for r in peer {
            assert_eq!(r.status, Status::Skipped, "{r:?}");
            assert_eq!(r.median_gbps, None, "{r:?}");
            assert!(r.reason.as_deref().unwrap().contains(NO_NVLINK_UP), "{r:?}");
        }
        // Staged through the host, the copies do not use the NVLinks: still modeled.
        let staged = rs
            .iter()
            .find(|r| r.test == TestId::P2pReadCeNopeer)
            .unwrap();
        assert_eq!(staged.status, Status::Ok);
        assert!(staged.median_gbps.unwrap() > 0.0);
        // With one link of the 18 up, the pair is modeled at that link.
        let mut one = h200_pair(Some(18));
        one.link_mut(0, 1).unwrap().line_rate.as_mut().unwrap().gbps = 26.562;
        let rs = run(&one, vec![TestId::P2pReadCe]);
        assert!(
            rs.iter()
                .all(|r| r.status == Status::Ok && r.median_gbps.unwrap() < 26.562)
        );
    }

    #[test]
    fn no_p2p_is_waived_but_staged_copies_still_model() {
        let rs = run(
            &refused(h200_pair(None)),
            vec![TestId::P2pReadCe, TestId::P2pReadCeNopeer],
        );
        let p2p: Vec<_> = rs.iter().filter(|r| r.test == TestId::P2pReadCe).collect();
        assert_eq!(p2p.len(), 2);
        assert!(
            p2p.iter()
                .all(|r| r.status == Status::Waived && r.median_gbps.is_none())
        );
        let staged = rs
            .iter()
            .find(|r| r.test == TestId::P2pReadCeNopeer)
            .unwrap();
        assert_eq!(staged.status, Status::Ok);
        assert!(staged.median_gbps.unwrap() < 63.0);
        // Unstated is not refused: not modeled, and it says why.
        let unstated = run(&h200_pair(None), vec![TestId::P2pReadCe, TestId::AllPairs]);
        assert!(
            unstated.iter().all(|r| r.status == Status::Skipped
                && r.median_gbps.is_none()
                && r.reason.as_deref().is_some_and(|w| w.contains("unknown"))),
            "{unstated:?}"
        );
    }

    #[test]
    fn imported_topology_uses_documented_defaults_with_warnings() {
        let mut t = h200_pair(Some(18));
        for g in &mut t.gpus {
            g.pcie = PcieLink::default();
            g.nvlink_gbps_per_link = None;
        }
        for l in &mut t.links {
            l.line_rate = None;
        }
        let (be, warnings) = ModeledBackend::new(&t, Assumptions::default());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        let text: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert!(text[0].contains("PCIe Gen4 x16"), "{text:?}");
        assert!(text[1].contains("25 GB/s per NVLink"), "{text:?}");
        assert_eq!(
            be.topology()
                .link(0, 1)
                .unwrap()
                .line_rate
                .as_ref()
                .unwrap()
                .gbps,
            450.0
        );
    }

    #[test]
    fn host_to_all_reports_every_gpu() {
        let rs = run(&h200_pair(Some(18)), vec![TestId::HostToAll]);
        assert_eq!(rs.len(), 2);
        assert!(
            rs.iter()
                .all(|r| r.src == Endpoint::Host && r.status == Status::Ok)
        );
    }

    #[test]
    fn all_pairs_models_one_row_per_gpu_capped_by_its_own_links() {
        let rs = run(&h200_pair(Some(18)), vec![TestId::AllPairs]);
        assert_eq!(rs.len(), 2);
        for r in &rs {
            assert_eq!(r.src, Endpoint::All);
            assert_eq!(r.status, Status::Ok);
            let line = 18.0 * 26.562;
            assert_eq!(r.line_rate_gbps, Some(line));
            let eff = efficiency::reference(TestId::AllPairs, Path::Nvlink)
                .unwrap()
                .efficiency;
            assert!((r.median_gbps.unwrap() - eff * line).abs() < 1e-9);
        }
        // Without P2P the exchange is waived.
        let rs = run(&refused(h200_pair(None)), vec![TestId::AllPairs]);
        assert!(rs.iter().all(|r| r.status == Status::Waived), "{rs:?}");
    }

    #[test]
    fn pcie_flag() {
        assert_eq!(parse_pcie("gen5x16"), Ok((5, 16)));
        assert_eq!(parse_pcie("Gen3x8"), Ok((3, 8)));
        assert_eq!(parse_pcie("4x16"), Ok((4, 16)));
        assert!(parse_pcie("gen5").unwrap_err().contains("names no width"));
        assert!(parse_pcie("4").is_err());
        assert!(parse_pcie("gen9x16").is_err());
        assert!(parse_pcie("gen4x3").is_err());
    }
}
