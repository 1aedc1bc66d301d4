//! Performance checks: each copy figure against what its link should carry, line rate × the
//! reference efficiency ([`super::expected`]), with PASS/WARN/FAIL by the thresholds and, below
//! PASS, the likely cause from the inventory checks' findings.
//!
//! The same rules judge measured figures (a live check) and modeled ones (a catalog machine or a
//! capture: the link state as read or stated × the reference efficiency); a modeled check is
//! labeled modeled and never counts as a PASS of a real machine.

use std::collections::BTreeMap;

use std::sync::atomic::AtomicBool;

use super::causes;
use super::expected::reference;
use super::{Check, CheckId, Evidence, Subject, Thresholds, Verdict};
use crate::bench::plan::PairScope;
use crate::bench::runner::line_rate;
use crate::bench::{Backend, BandwidthOptions, Plan, run_bandwidth};
use crate::model::efficiency::Path;
use crate::model::{BandwidthResult, Endpoint, Shape, Source, Status, TestId, Topology};

/// The load tests of a check, in the order they run.
pub const CHECK_TESTS: [TestId; 6] = [
    TestId::H2d,
    TestId::D2h,
    TestId::P2pReadCe,
    TestId::P2pWriteCe,
    TestId::P2pBidirCe,
    TestId::AllPairs,
];

/// The bandwidth options of a check on `gpus` (`covered` of them): nvbandwidth's 512 MiB and
/// 16 copies × 5 samples, or with `quick` 256 MiB and 4 copies × 3 samples (P2P reaches 98 % of
/// its 512 MiB rate at 256 MiB on H200: docs/BENCHMARKS.md's sweep). Pairs: every pair up to
/// [`crate::bench::plan::ALL_PAIRS_MAX_GPUS`] covered GPUs, else the first of each kind of
/// connection.
pub fn options(gpus: &crate::model::GpuSelection, covered: usize, quick: bool) -> BandwidthOptions {
    BandwidthOptions {
        gpus: gpus.clone(),
        tests: CHECK_TESTS.to_vec(),
        sizes: vec![if quick { 256 << 20 } else { 512 << 20 }],
        iters: if quick { 4 } else { 16 },
        samples: if quick { 3 } else { 5 },
        pairs: PairScope::bounded(covered),
        ..Default::default()
    }
}

/// The subject of a result row.
fn subject(r: &BandwidthResult) -> Option<Subject> {
    let (s, d) = (r.src.gpu(), r.dst.gpu());
    Some(match r.test.shape() {
        Shape::HostDevice { to_device, .. } => Subject::Gpu(if to_device { d? } else { s? }),
        Shape::Pair { bidir: true, .. } => Subject::Pair(s?, d?),
        Shape::Pair { .. } => Subject::Path(s?, d?),
        Shape::AllPairs => Subject::FromAll(d?),
        _ => return None,
    })
}

/// GPUs a result involves.
fn involved(r: &BandwidthResult, gpus: &[usize]) -> Vec<usize> {
    match r.test.shape() {
        Shape::AllPairs => gpus.to_vec(),
        _ => [r.src.gpu(), r.dst.gpu()].into_iter().flatten().collect(),
    }
}

/// The performance check of every judged result (the largest size of each cell).
pub fn checks(
    topo: &Topology,
    results: &[BandwidthResult],
    gpus: &[usize],
    ev: &Evidence,
    inventory: &[Check],
    thresholds: &Thresholds,
) -> Vec<Check> {
    let gpus: Vec<usize> = if gpus.is_empty() {
        topo.gpu_indices()
    } else {
        gpus.to_vec()
    };
    // The largest size of each (test, src, dst).
    let mut cells: BTreeMap<(TestId, Endpoint, Endpoint), &BandwidthResult> = BTreeMap::new();
    for r in results.iter().filter(|r| CHECK_TESTS.contains(&r.test)) {
        cells
            .entry((r.test, r.src, r.dst))
            .and_modify(|e| {
                if r.bytes > e.bytes {
                    *e = r;
                }
            })
            .or_insert(r);
    }
    let judging = Judging {
        topo,
        gpus: &gpus,
        ev,
        inventory,
        thresholds,
    };
    let mut out = Vec::new();
    for test in CHECK_TESTS {
        for (_, r) in cells.iter().filter(|((t, _, _), _)| *t == test) {
            let Some(subj) = subject(r) else {
                continue;
            };
            if let Some(c) = above_line_rate(r, subj) {
                out.push(c);
                continue;
            }
            let published = thresholds
                .published
                .then(|| judging.published_check(r, subj))
                .flatten();
            out.push(published.unwrap_or_else(|| {
                let mut c = judging.judge(r, subj, results);
                if thresholds.published && c.expected.is_some() {
                    c.detail
                        .push_str("; no published figure matches here: judged by line rate");
                }
                c
            }));
        }
    }
    out
}

/// A figure above the line rate of the links it crossed, judged UNKNOWN with that cause, before
/// any threshold: no copy beats its links, so such a figure (an imported file of another
/// machine, a topology that understates the links) is no evidence of health either way.
fn above_line_rate(r: &BandwidthResult, subj: Subject) -> Option<Check> {
    let figure = r.median_gbps.filter(|_| r.status == Status::Ok)?;
    let line = r.line_rate_gbps?;
    if figure <= line * crate::model::PLAUSIBLE_EFFICIENCY {
        return None;
    }
    let mut c = Check::new(
        CheckId::Copy(r.test),
        subj,
        Verdict::Unknown,
        r.source,
        format!(
            "{figure:.1} GB/s is above the line rate of the links it crossed ({line:.1} GB/s): \
             not a figure these links can carry"
        ),
    )
    .because(&causes::ABOVE_LINE_RATE);
    c.figure = Some(figure);
    c.unit = Some("GB/s".into());
    Some(c)
}

/// What every copy figure of a check is judged with: the machine, the GPUs tested, what was
/// seen while the tests ran, the state checks (causes are named from them) and the limits.
struct Judging<'a> {
    topo: &'a Topology,
    gpus: &'a [usize],
    ev: &'a Evidence,
    inventory: &'a [Check],
    thresholds: &'a Thresholds,
}

impl Judging<'_> {
    /// Result `r` (its test's largest size) about `subj` judged against line rate × reference
    /// efficiency; `all` holds every result, for the all-pairs contention figure.
    fn judge(&self, r: &BandwidthResult, subj: Subject, all: &[BandwidthResult]) -> Check {
        let Judging {
            topo,
            gpus,
            thresholds,
            ..
        } = *self;
        let test = r.test;
        let new = |v: Verdict, d: String| Check::new(CheckId::Copy(test), subj, v, r.source, d);
        match r.status {
            Status::Ok => {}
            Status::Failed if r.wrong.is_some_and(|w| w > 0) => {
                return new(
                    Verdict::Fail,
                    format!(
                        "copied data arrived wrong: {}",
                        r.reason.as_deref().unwrap_or("verification failed")
                    ),
                )
                .because(&causes::WRONG_DATA);
            }
            Status::Failed => {
                return new(
                    Verdict::Fail,
                    format!(
                        "the copy failed: {}",
                        r.reason.as_deref().unwrap_or("GPU error")
                    ),
                )
                .because(&causes::UNEXPLAINED);
            }
            Status::Waived | Status::Skipped => {
                return new(
                    Verdict::Unknown,
                    format!("not measured: {}", r.reason.as_deref().unwrap_or("not run")),
                );
            }
        }
        let Some(figure) = r.median_gbps else {
            return new(Verdict::Unknown, "no figure".to_string());
        };
        // A measured exchange of three GPUs or more (those with a figure: a GPU waived or
        // left out did not exchange) has no reference; a modeled one is the model's healthy
        // figure × the links up, so line rate × efficiency shows a GPU's links down.
        if test == TestId::AllPairs && r.source == Source::Measured {
            let exchanged = self.exchange(r, all);
            if exchanged.len() > 2 {
                return self.among_peers(r, figure, subj, &exchanged);
            }
        }
        let name = r
            .dst
            .gpu()
            .or(r.src.gpu())
            .and_then(|g| topo.gpu(g))
            .and_then(|g| g.name.as_deref());
        let path = Path::of(topo, r.test.shape(), r.src, r.dst, gpus);
        let refr = path.and_then(|p| reference(test, p, name, thresholds));
        let (Some(line), Some(refr)) = (r.line_rate_gbps, refr) else {
            return new(
                Verdict::Unknown,
                format!(
                    "{figure:.1} GB/s; expected unknown (the link's line rate or kind is not known)"
                ),
            );
        };
        let expected = line * refr.efficiency;
        let ratio = figure / expected;
        let verdict = thresholds.verdict(ratio);
        let mut detail = format!(
            "{figure:.1} GB/s, expected {expected:.1} ({:.0} %)",
            ratio * 100.0
        );
        if test == TestId::AllPairs
            && let Some(score) = contention_score(r, all, gpus)
        {
            detail.push_str(&format!("; {score:.2}× the sum of the peers' reads alone"));
        }
        let mut c = new(verdict, detail);
        c.figure = Some(figure);
        c.expected = Some(expected);
        c.percent = Some(ratio * 100.0);
        c.unit = Some("GB/s".into());
        c.basis = Some(format!(
            "{:.1} GB/s line rate × {:.1} %: {}",
            line,
            refr.efficiency * 100.0,
            refr.source
        ));
        if verdict != Verdict::Pass {
            c = self.explained(c, r, path);
        }
        c
    }

    /// The GPUs of the run that exchanged in `r`'s all_pairs (a figure at its size) and their
    /// figures: a GPU waived or left out did not.
    fn exchange(&self, r: &BandwidthResult, all: &[BandwidthResult]) -> Vec<(usize, f64)> {
        all.iter()
            .filter(|x| x.test == TestId::AllPairs && x.bytes == r.bytes && x.status == Status::Ok)
            .filter_map(|x| Some((x.dst.gpu()?, x.median_gbps?)))
            .filter(|(g, _)| self.gpus.contains(g))
            .collect()
    }

    /// An all_pairs figure of three or more GPUs, `figure` GB/s into one of them, judged against
    /// the GPUs of the same run ([`peer_bounds`]). Line rate × a reference efficiency is
    /// measured for two GPUs only (the bidirectional test's); with more, every GPU reads from
    /// several peers while they read from it, and no measurement says what a healthy machine
    /// gives: a 4× H200 VM read 215–249 GB/s into its GPUs (docs/BENCHMARKS.md), nvbandwidth's
    /// all_to_one_read_ce on 8× H800 0.83× a single read. A GPU well below its peers is what
    /// this test can show; a machine slow everywhere is for the pair tests to find.
    fn among_peers(
        &self,
        r: &BandwidthResult,
        figure: f64,
        subj: Subject,
        run: &[(usize, f64)],
    ) -> Check {
        let figures: Vec<f64> = run.iter().map(|(_, f)| *f).collect();
        let new = |v: Verdict, d: String| Check::new(CheckId::Copy(r.test), subj, v, r.source, d);
        let line = r
            .line_rate_gbps
            .map(|l| {
                format!(
                    "; {:.0} % of the {l:.1} GB/s line rate into it",
                    figure / l * 100.0
                )
            })
            .unwrap_or_default();
        let n = self.gpus.len();
        let Some(b) = peer_bounds(&figures, self.thresholds) else {
            return new(
                Verdict::Unknown,
                format!(
                    "{figure:.1} GB/s{line}; expected unknown (no measured reference for {n} GPUs \
                     exchanging at once, and too few other GPUs' figures to hold it to)"
                ),
            );
        };
        let verdict = if figure < b.fail_below {
            Verdict::Fail
        } else if figure < b.warn_below {
            Verdict::Warn
        } else {
            Verdict::Pass
        };
        let ratio = figure / b.median;
        let mut c = new(
            verdict,
            format!(
                "{figure:.1} GB/s, {:.0} % of the GPUs' median {:.1} (WARN below {:.1}, FAIL \
                 below {:.1}){line}",
                ratio * 100.0,
                b.median,
                b.warn_below,
                b.fail_below
            ),
        );
        c.figure = Some(figure);
        c.expected = Some(b.median);
        c.percent = Some(ratio * 100.0);
        c.unit = Some("GB/s".into());
        let named: Vec<String> = run.iter().map(|(g, f)| format!("GPU {g} {f:.1}")).collect();
        let two = crate::model::efficiency::reference(TestId::AllPairs, Path::Nvlink)
            .map(|x| format!(" (line rate × {:.1} % holds for two)", x.efficiency * 100.0))
            .unwrap_or_default();
        c.basis = Some(format!(
            "the GPUs of this run ({}): no measured reference for {n} GPUs exchanging at \
             once{two}",
            named.join(", ")
        ));
        if verdict != Verdict::Pass {
            let path = Path::of(self.topo, r.test.shape(), r.src, r.dst, self.gpus);
            c = self.explained(c, r, path);
        }
        c
    }

    /// A measured (or modeled) copy figure judged against the published figures that match it
    /// (`--thresholds published`); `None` when it has no figure or none matches.
    fn published_check(&self, r: &BandwidthResult, subj: Subject) -> Option<Check> {
        let test = r.test;
        let figure = r.median_gbps.filter(|_| r.status == Status::Ok)?;
        let p = against_published(self.topo, test, r, self.gpus, figure, self.thresholds)?;
        let mut c = Check::new(CheckId::Copy(test), subj, p.verdict, r.source, p.detail);
        c.figure = Some(figure);
        c.expected = Some(p.expected);
        c.percent = Some(p.ratio * 100.0);
        c.unit = Some("GB/s".into());
        c.basis = Some(p.basis);
        if p.verdict != Verdict::Pass {
            let path = Path::of(self.topo, r.test.shape(), r.src, r.dst, self.gpus);
            c = self.explained(c, r, path);
        }
        Some(c)
    }

    /// `c`, about result `r` on `path`, with the likely causes of its shortfall named.
    fn explained(&self, c: Check, r: &BandwidthResult, path: Option<Path>) -> Check {
        let involved = involved(r, self.gpus);
        explain(c, r, path, &involved, self.ev, self.inventory)
    }
}

/// A copy figure judged against a published one (`--thresholds published`).
struct AgainstPublished {
    verdict: Verdict,
    detail: String,
    expected: f64,
    ratio: f64,
    basis: String,
}

/// `figure` judged against the published figures for `topo`'s GPU whose conditions match this
/// cell's (same test and copy method; size where both state it); the worst verdict where
/// several match. `None` where none does.
fn against_published(
    topo: &Topology,
    test: TestId,
    r: &BandwidthResult,
    gpus: &[usize],
    figure: f64,
    thresholds: &Thresholds,
) -> Option<AgainstPublished> {
    use crate::model::published::{Figure, Here, judge};
    let here = Here {
        gpus: Some(gpus.len()),
        bytes: Some(r.bytes),
        method: Some(test.method()),
        ..Here::default()
    };
    let (reference, (level, ratio)) = crate::topology::published::for_topology(topo)
        .into_iter()
        .flat_map(|p| &p.references)
        .filter(|x| x.figure == Figure::Copy(test) && x.matches(&here))
        .map(|x| (x, judge(x, figure, thresholds.pass, thresholds.warn)))
        .max_by_key(|(_, (level, _))| *level)?;
    let verdict = match level {
        0 => Verdict::Pass,
        1 => Verdict::Warn,
        _ => Verdict::Fail,
    };
    Some(AgainstPublished {
        verdict,
        detail: format!(
            "{figure:.1} GB/s against published {} ({:.0} %)",
            reference.value_text(),
            ratio * 100.0
        ),
        expected: reference.value,
        ratio,
        basis: format!(
            "published {}: {} ({})",
            reference.kind,
            reference.source.short(),
            reference.conditions_text()
        ),
    })
}

/// Where a GPU's figure stops being like its peers': the run's median and the figures below
/// which it warns and fails.
struct PeerBounds {
    median: f64,
    warn_below: f64,
    fail_below: f64,
}

/// The bounds of a figure among the same run's `figures` (every GPU's, its own included; at
/// least three), as `fleet report` holds a node to the fleet: worse than the median by more
/// than `max(3.5 × 1.4826 × MAD, (1 − pass) × median)` warns, by more than `max(3.5 × 1.4826 ×
/// MAD, (1 − warn) × median)` fails. MAD is the median absolute deviation; × 1.4826 makes it a
/// normal distribution's standard deviation, and 3.5 is Iglewicz and Hoaglin's limit for the
/// modified z-score ("How to Detect and Handle Outliers", 1993). The floors are the check's own
/// PASS and WARN fractions, so a run of alike GPUs is not split by noise.
fn peer_bounds(figures: &[f64], thresholds: &Thresholds) -> Option<PeerBounds> {
    const MAD_K: f64 = 3.5 * 1.4826;
    if figures.len() < 3 {
        return None;
    }
    let median = crate::model::median(figures).filter(|m| *m > 0.0)?;
    let deviations: Vec<f64> = figures.iter().map(|f| (f - median).abs()).collect();
    let spread = MAD_K * crate::model::median(&deviations)?;
    Some(PeerBounds {
        median,
        warn_below: median - spread.max((1.0 - thresholds.pass) * median),
        fail_below: median - spread.max((1.0 - thresholds.warn) * median),
    })
}

/// `all_pairs` into one GPU ÷ the sum of that GPU's isolated reads from each peer (same size).
pub fn contention_score(
    r: &BandwidthResult,
    all: &[BandwidthResult],
    gpus: &[usize],
) -> Option<f64> {
    let d = r.dst.gpu()?;
    let isolated: Option<Vec<f64>> = gpus
        .iter()
        .filter(|&&g| g != d)
        .map(|&p| {
            all.iter()
                .find(|x| {
                    x.test == TestId::P2pReadCe
                        && x.src == Endpoint::Gpu(p)
                        && x.dst == Endpoint::Gpu(d)
                        && x.bytes == r.bytes
                        && x.status == Status::Ok
                })
                .and_then(|x| x.median_gbps)
        })
        .collect();
    let sum: f64 = isolated?.iter().sum();
    (sum > 0.0).then(|| r.median_gbps.unwrap_or(f64::NAN) / sum)
}

/// The cause of a figure below PASS, from the evidence on the GPUs involved: a setting that
/// holds a GPU below its best, another process, the link's state, error counters that grew on
/// the path the copy crossed, clock limits seen during the tests. Evidence that cannot explain
/// the figure is not offered as its cause (PCIe replays for a copy over NVLink, replays counted
/// before the tests and not grown during them); with none left the cause is unknown.
fn explain(
    c: Check,
    r: &BandwidthResult,
    path: Option<Path>,
    involved: &[usize],
    ev: &Evidence,
    inventory: &[Check],
) -> Check {
    let on = |id: CheckId, bad: &[Verdict]| {
        inventory
            .iter()
            .filter(|k| k.check == id && bad.contains(&k.verdict))
            .find(|k| k.gpu.is_some_and(|g| involved.contains(&g)))
    };
    let quoted = |k: &Check| format!("GPU {}: {}", k.gpu.unwrap_or_default(), k.detail);
    let either = [Verdict::Fail, Verdict::Warn];
    // Settings first: a lowered power limit or a clock setting slows every test on its GPU.
    for id in [CheckId::PowerLimit, CheckId::ClockSettings] {
        if let Some(k) = on(id, &either) {
            return c.because_text(
                quoted(k),
                k.fix.as_deref().unwrap_or(causes::CLOCKS_SET.fix),
            );
        }
    }
    if let Some(b) = on(CheckId::Busy, &either)
        && let Some(busy) = &b.busy
    {
        return c.because_text(
            format!(
                "another process is using GPU {} ({busy}): contention",
                b.gpu.unwrap_or_default()
            ),
            causes::CONTENTION.fix,
        );
    }
    let host = matches!(r.test.shape(), Shape::HostDevice { .. });
    let over_pcie = host || matches!(path, Some(Path::PciePeer(_)));
    let over_nvlink = matches!(path, Some(Path::Nvlink));
    if host && let Some(k) = on(CheckId::PcieLink, &either) {
        return c.because_text(
            quoted(k),
            k.fix.as_deref().unwrap_or(causes::PCIE_DOWNTRAINED.fix),
        );
    }
    if over_nvlink && let Some(k) = on(CheckId::NvlinkLinks, &[Verdict::Fail]) {
        return c.because_text(quoted(k), causes::NVLINK_INACTIVE.fix);
    }
    // Error counters only where they grew during the tests (FAIL) and on the path crossed.
    if over_nvlink && let Some(k) = on(CheckId::NvlinkErrors, &[Verdict::Fail]) {
        return c.because_text(
            quoted(k),
            k.fix.as_deref().unwrap_or(causes::UNEXPLAINED.fix),
        );
    }
    if over_pcie && let Some(k) = on(CheckId::PcieReplay, &[Verdict::Fail]) {
        return c.because_text(
            quoted(k),
            k.fix.as_deref().unwrap_or(causes::PCIE_REPLAYS.fix),
        );
    }
    // The host: a saturated CPU delays every copy's issue and its completion.
    if let Some(busy) = ev.load.as_ref().and_then(|l| l.host_cpu_percent)
        && busy >= super::attribution::HOST_SATURATED_PERCENT
    {
        return c.because_text(
            format!("the host's CPUs were saturated during the tests ({busy:.0} % busy): copies wait for the host to issue and complete them"),
            "find what uses the CPUs (`top`) and check again on an idle host",
        );
    }
    if let Some(k) = on(CheckId::Clocks, &either) {
        return c.because_text(
            quoted(k),
            k.fix.as_deref().unwrap_or(causes::UNEXPLAINED.fix),
        );
    }
    if r.cv.is_some_and(|cv| cv > crate::bench::warning::HIGH_CV) {
        return c.because(&causes::NOISY);
    }
    // Live checks: utilization during the tests from something else than us is contention too.
    let util = ev
        .load
        .as_ref()
        .map(|l| {
            l.gpus
                .iter()
                .any(|g| involved.contains(&g.index) && !g.other_processes.is_empty())
        })
        .unwrap_or(false);
    if util {
        return c.because(&causes::CONTENTION);
    }
    if r.source == Source::Modeled {
        return c.because_text(
            "the link state as read or stated (modeled from it)".to_string(),
            "see the inventory lines above",
        );
    }
    c.because(&causes::UNEXPLAINED)
}

// ---------------------------------------------------------------------------------------------
// Modeled figures for machines checked from captures or a catalog entry

/// Modeled load-test results for a machine known from captures or a catalog entry, through
/// the modeled backend `model` builds (the one `bench bandwidth --modeled` runs) on the machine
/// *as read or stated* ([`as_running`]: a downtrained PCIe link, NVLinks down): line rate ×
/// reference efficiency, each figure then held against the line rate of the link as designed.
/// Labeled `modeled`; a figure whose link is not stated is skipped, never assumed.
pub fn modeled_results(
    topo: &Topology,
    ev: &Evidence,
    gpus: &crate::model::GpuSelection,
    model: &dyn Fn(&Topology) -> Box<dyn Backend>,
) -> Vec<BandwidthResult> {
    let selected: Vec<usize> = if gpus.is_all() {
        topo.gpu_indices()
    } else {
        gpus.to_vec()
    };
    let running = as_running(topo, ev);
    // The GPUs were checked against the topology before the check started.
    let Ok(plan) = Plan::new(&running, &options(gpus, selected.len(), false)) else {
        return Vec::new();
    };
    let mut backend = model(&running);
    let outcome = run_bandwidth(
        &running,
        &plan,
        backend.as_mut(),
        &AtomicBool::new(false),
        &mut |_, _| {},
    );
    outcome
        .results
        .into_iter()
        .map(|mut r| {
            r.line_rate_gbps = line_rate(topo, r.test.shape(), r.src, r.dst, &selected);
            r.update_efficiency();
            r
        })
        .collect()
}

/// `topo` with its links as the check's first inventory reads or states them
/// ([`crate::model::as_running`], the one rule every modeled figure follows).
pub fn as_running(topo: &Topology, ev: &Evidence) -> Topology {
    crate::model::as_running(topo, ev.before.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Gpu, Inventory, InventoryKind, LoadState, PcieLink, TopologySource};

    fn h200x2() -> Topology {
        let mut t = crate::topology::catalog::load("h200-2x-sxm").unwrap();
        t.source = TopologySource::Imported { paths: vec![] };
        t
    }

    fn result(test: TestId, src: Endpoint, dst: Endpoint, gbps: f64, line: f64) -> BandwidthResult {
        let mut r =
            BandwidthResult::empty(test, src, dst, 512 << 20, Source::Measured, Status::Ok, "");
        r.median_gbps = Some(gbps);
        r.line_rate_gbps = Some(line);
        r.wrong = Some(0);
        r.cv = Some(0.001);
        r
    }

    #[test]
    fn measured_figures_are_judged_against_line_rate_times_reference() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let rs = vec![
            result(TestId::H2d, Endpoint::Host, g(0), 55.4, 63.015),
            result(TestId::P2pReadCe, g(0), g(1), 394.0, 478.116),
            result(TestId::P2pReadCe, g(1), g(0), 300.0, 478.116),
            result(TestId::P2pWriteCe, g(0), g(1), 150.0, 478.116),
        ];
        let cs = checks(
            &t,
            &rs,
            &[0, 1],
            &Evidence::default(),
            &[],
            &Thresholds::default(),
        );
        assert_eq!(cs.len(), 4);
        let by = |id: TestId, s: &str| {
            cs.iter()
                .find(|c| c.check == CheckId::Copy(id) && c.subject == s)
                .unwrap()
        };
        let h2d = by(TestId::H2d, "GPU 0");
        assert_eq!(h2d.verdict, Verdict::Pass);
        assert!((h2d.expected.unwrap() - 55.39).abs() < 0.1, "{h2d:?}");
        assert!(h2d.basis.as_deref().unwrap().contains("h200-8x-sxm"));
        assert_eq!(by(TestId::P2pReadCe, "GPU 0→1").verdict, Verdict::Pass);
        // 300 of 394: 76 % → WARN; 150 of 396: 38 % → FAIL, cause named.
        assert_eq!(by(TestId::P2pReadCe, "GPU 1→0").verdict, Verdict::Warn);
        let w = by(TestId::P2pWriteCe, "GPU 0→1");
        assert_eq!(w.verdict, Verdict::Fail);
        assert!(w.cause.is_some() && w.fix.is_some());
    }

    #[test]
    fn the_cause_is_evidence_on_the_path_crossed_or_unknown() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let rs = vec![
            result(TestId::P2pReadCe, g(1), g(0), 290.0, 478.116),
            result(TestId::D2h, g(1), Endpoint::Host, 45.0, 63.015),
        ];
        let finding = |id: CheckId, gpu: usize, v: Verdict, detail: &str| {
            Check::new(id, Subject::Gpu(gpu), v, Source::Measured, detail)
                .because(&causes::PCIE_REPLAYS)
        };
        // One PCIe replay counted before the tests (not grown): the cause of neither figure.
        let replay = finding(
            CheckId::PcieReplay,
            1,
            Verdict::Warn,
            "1 PCIe replay(s) since the driver loaded",
        );
        let run = |inventory: &[Check]| {
            checks(
                &t,
                &rs,
                &[0, 1],
                &Evidence::default(),
                inventory,
                &Thresholds::default(),
            )
        };
        for c in run(std::slice::from_ref(&replay)) {
            assert_ne!(c.verdict, Verdict::Pass, "{c:?}");
            let cause = c.cause.as_deref().unwrap();
            assert!(cause.starts_with("cause unknown"), "{cause}");
        }
        // Grown during the tests: the cause of the host copy, not of the NVLink copy.
        let grown = finding(
            CheckId::PcieReplay,
            1,
            Verdict::Fail,
            "PCIe replays grew from 1 to 9 between the readings",
        );
        let cs = run(&[grown]);
        let d2h = cs
            .iter()
            .find(|c| c.check == CheckId::Copy(TestId::D2h))
            .unwrap();
        assert!(d2h.cause.as_deref().unwrap().contains("grew from 1 to 9"));
        let p2p = cs
            .iter()
            .find(|c| c.check == CheckId::Copy(TestId::P2pReadCe))
            .unwrap();
        assert!(p2p.cause.as_deref().unwrap().starts_with("cause unknown"));
        // A clock setting on GPU 1 explains both, before the replay.
        let locked = Check::new(
            CheckId::ClockSettings,
            Subject::Gpu(1),
            Verdict::Warn,
            Source::Measured,
            "a clock setting held the clocks during the load tests (Applications Clocks Setting)",
        )
        .because(&causes::CLOCKS_SET);
        for c in run(&[replay, locked]) {
            let cause = c.cause.as_deref().unwrap();
            assert!(cause.contains("GPU 1: a clock setting held"), "{cause}");
            assert!(c.fix.as_deref().unwrap().contains("-rgc"), "{c:?}");
        }
        // A saturated host during the tests, nothing on the GPUs.
        let ev = Evidence {
            load: Some(crate::model::LoadObservation {
                host_cpu_percent: Some(97.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cs = checks(&t, &rs, &[0, 1], &ev, &[], &Thresholds::default());
        for c in cs {
            let cause = c.cause.as_deref().unwrap();
            assert!(
                cause.contains("saturated during the tests (97 % busy)"),
                "{cause}"
            );
        }
    }

    #[test]
    fn contention_is_named_when_another_process_uses_the_gpu() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let rs = vec![result(TestId::P2pReadCe, g(0), g(1), 180.0, 478.116)];
        let mut busy = Check::new(
            CheckId::Busy,
            Subject::Gpu(0),
            Verdict::Warn,
            Source::Measured,
            "another process is using this GPU: pid 77 (python3) on the GPU",
        );
        busy.busy = Some(crate::health::Busy {
            processes: vec![crate::model::GpuProcess {
                pid: 77,
                name: Some("python3".into()),
            }],
            utilization_percent: None,
        });
        let cs = checks(
            &t,
            &rs,
            &[0, 1],
            &Evidence::default(),
            &[busy],
            &Thresholds::default(),
        );
        let c = &cs[0];
        assert_eq!(c.verdict, Verdict::Fail);
        let cause = c.cause.as_deref().unwrap();
        assert!(
            cause.contains("contention") && cause.contains("pid 77"),
            "{cause}"
        );
    }

    /// A healthy 4× H200 read 215–249 GB/s into each GPU with every GPU exchanging at once and
    /// the check failed them all against the two-GPU reference (391.6). With three or more
    /// GPUs a GPU is held to its peers in the run: the slow one fails, the alike ones pass;
    /// two GPUs keep the measured reference.
    #[test]
    fn all_pairs_of_more_than_two_gpus_holds_each_to_its_peers() {
        let mut t = crate::topology::catalog::load("hgx-h200").unwrap();
        t.source = TopologySource::Imported { paths: vec![] };
        let all_pairs = |figures: &[f64]| -> Vec<BandwidthResult> {
            figures
                .iter()
                .enumerate()
                .map(|(g, f)| {
                    result(
                        TestId::AllPairs,
                        Endpoint::All,
                        Endpoint::Gpu(g),
                        *f,
                        478.116,
                    )
                })
                .collect()
        };
        let judged = |rs: &[BandwidthResult], gpus: &[usize]| -> Vec<Check> {
            checks(
                &t,
                rs,
                gpus,
                &Evidence::default(),
                &[],
                &Thresholds::default(),
            )
            .into_iter()
            .filter(|c| c.check == CheckId::Copy(TestId::AllPairs))
            .collect()
        };
        let cs = judged(&all_pairs(&[215.0, 249.0, 230.0, 240.0]), &[0, 1, 2, 3]);
        assert_eq!(cs.len(), 4);
        assert!(cs.iter().all(|c| c.verdict == Verdict::Pass), "{cs:#?}");
        // Median 235, MAD 9.5: WARN below 235 − 3.5 × 1.4826 × 9.5 = 185.7, FAIL below
        // 235 × 0.75 = 176.25 (shown 176.2).
        let first = &cs[0];
        assert_eq!(first.expected, Some(235.0), "{first:#?}");
        assert!(
            first
                .detail
                .contains("91 % of the GPUs' median 235.0 (WARN below 185.7, FAIL below 176.2)"),
            "{}",
            first.detail
        );
        assert!(
            first.basis.as_deref().unwrap().contains("GPU 1 249.0"),
            "{first:#?}"
        );
        let cs = judged(&all_pairs(&[230.0, 235.0, 240.0, 120.0]), &[0, 1, 2, 3]);
        let verdicts: Vec<Verdict> = cs.iter().map(|c| c.verdict).collect();
        assert_eq!(
            verdicts,
            [Verdict::Pass, Verdict::Pass, Verdict::Pass, Verdict::Fail],
            "{cs:#?}"
        );
        // Two GPUs: the measured reference, so 215 still fails.
        let cs = judged(&all_pairs(&[215.0, 215.0]), &[0, 1]);
        assert!(cs.iter().all(|c| c.verdict == Verdict::Fail), "{cs:#?}");
        assert!(cs[0].detail.contains("expected 391.6"), "{}", cs[0].detail);
        // Three selected, one waived: two exchanged, and two have the measured reference.
        let mut rs = all_pairs(&[390.0, 389.0, 0.0]);
        rs[2].status = Status::Waived;
        rs[2].median_gbps = None;
        let cs = judged(&rs, &[0, 1, 2]);
        assert_eq!(cs[0].verdict, Verdict::Pass, "{cs:#?}");
        assert!(cs[0].detail.contains("expected 391.6"), "{}", cs[0].detail);
        // A modeled exchange is the model's healthy figure × the links up: held to line rate
        // × efficiency, so a GPU's links down show in it.
        let mut rs = all_pairs(&[261.1, 261.1, 261.1, 261.1]);
        for r in &mut rs {
            r.source = Source::Modeled;
        }
        let cs = judged(&rs, &[0, 1, 2, 3]);
        assert!(cs.iter().all(|c| c.verdict == Verdict::Fail), "{cs:#?}");
    }

    #[test]
    fn all_pairs_reports_its_contention_score() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let rs = vec![
            result(TestId::P2pReadCe, g(1), g(0), 394.0, 478.116),
            result(TestId::AllPairs, Endpoint::All, g(0), 390.0, 478.116),
        ];
        let cs = checks(
            &t,
            &rs,
            &[0, 1],
            &Evidence::default(),
            &[],
            &Thresholds::default(),
        );
        let c = cs
            .iter()
            .find(|c| c.check == CheckId::Copy(TestId::AllPairs))
            .unwrap();
        assert_eq!(c.subject, "GPU 0 ← all");
        assert!(
            c.detail.contains("0.99× the sum of the peers' reads alone"),
            "{}",
            c.detail
        );
        assert_eq!(c.verdict, Verdict::Pass);
    }

    #[test]
    fn a_figure_above_its_line_rate_is_unknown_not_a_pass_with_or_without_published_figures() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let rs = vec![
            // 155.4 GB/s over a Gen5 x16 link (63 GB/s): an edited or foreign file.
            result(TestId::H2d, Endpoint::Host, g(0), 155.4, 63.015),
            // At the line rate, within the timing noise: judged as usual.
            result(TestId::H2d, Endpoint::Host, g(1), 63.5, 63.015),
        ];
        for published in [false, true] {
            let thresholds = Thresholds {
                published,
                ..Thresholds::default()
            };
            let cs = checks(&t, &rs, &[0, 1], &Evidence::default(), &[], &thresholds);
            let c = cs.iter().find(|c| c.subject == "GPU 0").unwrap();
            assert_eq!(c.verdict, Verdict::Unknown, "{c:?}");
            assert!(c.detail.contains("above the line rate"), "{}", c.detail);
            assert_eq!(c.cause.as_deref(), Some(causes::ABOVE_LINE_RATE.likely));
            assert_eq!(c.expected, None, "no expected figure is set against it");
            let ok = cs.iter().find(|c| c.subject == "GPU 1").unwrap();
            assert_eq!(ok.verdict, Verdict::Pass, "{ok:?}");
        }
    }

    #[test]
    fn failed_verification_fails_and_skipped_is_unknown() {
        let t = h200x2();
        let g = Endpoint::Gpu;
        let mut bad = result(TestId::P2pReadCe, g(0), g(1), 394.0, 478.116);
        bad.status = Status::Failed;
        bad.wrong = Some(12);
        let mut skipped = result(TestId::H2d, Endpoint::Host, g(1), 0.0, 63.0);
        skipped.status = Status::Skipped;
        skipped.median_gbps = None;
        let cs = checks(
            &t,
            &[bad, skipped],
            &[0, 1],
            &Evidence::default(),
            &[],
            &Thresholds::default(),
        );
        assert_eq!(
            cs.iter()
                .find(|c| c.check == CheckId::Copy(TestId::P2pReadCe))
                .unwrap()
                .verdict,
            Verdict::Fail
        );
        assert_eq!(
            cs.iter()
                .find(|c| c.check == CheckId::Copy(TestId::H2d))
                .unwrap()
                .verdict,
            Verdict::Unknown
        );
    }

    #[test]
    fn modeled_figures_follow_the_stated_link_state() {
        let t = h200x2();
        let mut inv = Inventory::new(InventoryKind::Catalog, vec!["c".into()]);
        for gi in 0..2 {
            let g = inv.gpu_mut(gi);
            g.pcie.link = PcieLink {
                gen_current: Some(5),
                gen_max: Some(5),
                width_current: Some(16),
                width_max: Some(16),
            };
            g.pcie.load = Some(LoadState::Stated);
        }
        inv.gpu_mut(1).pcie.link.gen_current = Some(4);
        inv.gpu_mut(1).pcie.link.width_current = Some(8);
        let ev = Evidence {
            before: Some(inv),
            ..Default::default()
        };
        let th = Thresholds::default();
        let model = |t: &Topology| -> Box<dyn Backend> {
            Box::new(crate::bench::modeled::ModeledBackend::as_stated(t))
        };
        let rs = modeled_results(
            &t,
            &ev,
            &crate::model::GpuSelection::new(vec![0, 1]).unwrap(),
            &model,
        );
        assert!(rs.iter().all(|r| r.source == Source::Modeled));
        let cs = checks(&t, &rs, &[0, 1], &ev, &[], &th);
        let h2d = |s: &str| {
            cs.iter()
                .find(|c| c.check == CheckId::Copy(TestId::H2d) && c.subject == s)
                .unwrap()
        };
        assert_eq!(h2d("GPU 0").verdict, Verdict::Pass);
        assert_eq!(h2d("GPU 0").verdict_text(), "PASS (modeled)");
        assert_eq!(h2d("GPU 1").verdict, Verdict::Fail);
        // Gen4 x8 is a quarter of Gen5 x16's line rate, modeled at the Gen4 host-copy
        // efficiency of the one table and judged against Gen5's.
        let eff = |g| {
            crate::model::efficiency::reference(TestId::H2d, Path::Host { pcie_gen: g })
                .unwrap()
                .efficiency
        };
        let expected = 25.0 * eff(4) / eff(5);
        assert!((h2d("GPU 1").percent.unwrap() - expected).abs() < 0.1);
        // NVLink pairs are unaffected by a PCIe link.
        assert!(
            cs.iter()
                .filter(|c| matches!(
                    c.check,
                    CheckId::P2pStatus
                        | CheckId::Copy(
                            TestId::P2pReadCe
                                | TestId::P2pWriteCe
                                | TestId::P2pBidirCe
                                | TestId::AllPairs
                        )
                ))
                .all(|c| c.verdict == Verdict::Pass),
            "{cs:#?}"
        );
        assert_eq!(
            cs.iter()
                .filter(|c| c.check == CheckId::Copy(TestId::AllPairs))
                .count(),
            2
        );
        let _ = Gpu::default();
    }
}
