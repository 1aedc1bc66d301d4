//! Key figures of reports and their differences: what the Compare view's table and
//! `scalescope compare` show. Pure functions of [`Report`]s.

use std::fmt::Write as _;

use crate::model::{Algo, BandwidthResult, CollectiveOp, Endpoint, Source, Stats, Status, TestId};
use crate::scaling::{Mode, RowSource};

use super::Report;

/// Size at which the all-reduce figure is read: 1 GiB.
pub const ALL_REDUCE_BYTES: u64 = 1 << 30;

/// One key figure of one report.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub value: Option<f64>,
    /// measured or modeled; `None` when there is no value.
    pub source: Option<Source>,
    /// How it was read, e.g. `median p2p_write_ce, 512 MiB` or `interpolated 512 MiB–2 GiB`.
    pub basis: String,
    /// The GPU count the figure was read at, for figures that depend on it (scaling
    /// efficiency, all-reduce busbw); `None` for per-link figures.
    pub n_gpus: Option<usize>,
    /// What else must match for two figures to compare like for like, in words; empty for most
    /// figures. Scaling efficiency: the kind of step (real framework step, synthetic proxy, the
    /// model) and the GPU count its speedup is taken against.
    pub kind: String,
    /// Why the value is above 1.00, where it is a scaling efficiency that reads so
    /// ([`super::superlinear::cause`]): GPUs do not speed each other up.
    pub above_one: Option<String>,
    /// A copy median's slowest cell where it falls 5 % or more short of the median, in words
    /// (`27.7 GB/s, GPU 1`): a median of a healthy and a slow GPU is a figure neither has.
    pub slowest: Option<String>,
}

/// `c` with every string that came from a report's file made safe to print
/// ([`crate::model::validate::for_terminal`]): machine titles, the workload, row names and each
/// figure's basis and kind.
pub fn for_terminal(mut c: Comparison) -> Comparison {
    use crate::model::validate::for_terminal as esc;
    for m in &mut c.machines {
        *m = esc(m);
    }
    if let Some(w) = &mut c.workload {
        *w = esc(w);
    }
    for r in &mut c.rows {
        r.name = esc(&r.name);
        for f in &mut r.figures {
            f.basis = esc(&f.basis);
            f.kind = esc(&f.kind);
            f.above_one = f.above_one.as_deref().map(esc);
            f.slowest = f.slowest.as_deref().map(esc);
        }
    }
    c
}

impl Figure {
    fn none(why: &str) -> Figure {
        Figure {
            value: None,
            source: None,
            basis: why.to_string(),
            n_gpus: None,
            kind: String::new(),
            above_one: None,
            slowest: None,
        }
    }
}

/// A row of the comparison: one figure across every report.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// e.g. `P2P GB/s`.
    pub name: String,
    /// One figure per report, in report order.
    pub figures: Vec<Figure>,
    /// (value − first report's value) ÷ first report's value × 100, per report (the first is
    /// `None`); `None` where either value is unknown.
    pub diff_pct: Vec<Option<f64>>,
}

/// Key figures of several reports, the first one the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Each report's title ([`titles`]: repeated ones numbered).
    pub machines: Vec<String>,
    /// The workload whose scaling efficiency is compared.
    pub workload: Option<String>,
    pub rows: Vec<Row>,
    /// For each report of the older method ([`Report::older_method`]): its column letter's
    /// index and the note.
    pub older: Vec<(usize, &'static str)>,
}

/// The median P2P copy-engine write bandwidth over GPU pairs at the headline size
/// ([`crate::model::headline_size`]: 512 MiB where it ran, as the report's key figures), the
/// slowest pair named where it falls short. Only the write test: a report without it has no
/// figure here (its read test is [`p2p_read_gbps`]'s row, never set against another's write).
pub fn p2p_gbps(report: &Report) -> Figure {
    copy_median(report, TestId::P2pWriteCe)
}

/// [`p2p_gbps`] for the P2P copy-engine read test (nvbandwidth's
/// `device_to_device_memcpy_read_ce`).
pub fn p2p_read_gbps(report: &Report) -> Figure {
    copy_median(report, TestId::P2pReadCe)
}

fn copy_median(report: &Report, test: TestId) -> Figure {
    match &report.bandwidth {
        Some(bw) => median_at_headline(&bw.results, test)
            .unwrap_or_else(|| Figure::none(&not_run_why(&bw.results, test))),
        None => Figure::none("the report has no bandwidth results"),
    }
}

/// The median host→GPU (pinned) bandwidth over GPUs at the headline size, as [`p2p_gbps`].
pub fn h2d_gbps(report: &Report) -> Figure {
    copy_median(report, TestId::H2d)
}

/// Why `test` has no figure: the reason its first row that did not run gives (a modeled
/// machine says which link it has no reference for), else that there is no such row.
fn not_run_why(results: &[BandwidthResult], test: TestId) -> String {
    results
        .iter()
        .filter(|r| r.test == test && r.status != Status::Ok)
        .find_map(|r| r.reason.clone())
        .unwrap_or_else(|| format!("no {test} result"))
}

/// The median of `test` over its cells at [`crate::model::headline_size`] (each cell once: the
/// first row of a pair measured twice at that size) — the size the report's key figures and
/// the Bandwidth view's summary read, so that one run's figure is one number everywhere.
fn median_at_headline(results: &[BandwidthResult], test: TestId) -> Option<Figure> {
    let ok: Vec<&BandwidthResult> = results
        .iter()
        .filter(|r| r.test == test && r.status == Status::Ok && r.median_gbps.is_some())
        .collect();
    let bytes = crate::model::headline_size(ok.iter().copied(), test)?;
    let mut seen = Vec::new();
    let at: Vec<&&BandwidthResult> = ok
        .iter()
        .filter(|r| r.bytes == bytes)
        .filter(|r| {
            let fresh = !seen.contains(&(r.src, r.dst));
            seen.push((r.src, r.dst));
            fresh
        })
        .collect();
    // A cell above its line rate is a measurement to distrust: left out, and said.
    let (at, implausible): (Vec<&&BandwidthResult>, Vec<&&BandwidthResult>) =
        at.into_iter().partition(|r| !r.above_line_rate());
    let vals: Vec<f64> = at.iter().filter_map(|r| r.median_gbps).collect();
    let Some(st) = Stats::of(&vals) else {
        return (!implausible.is_empty()).then(|| {
            Figure::none(&format!(
                "every {test} cell is above its line rate: a measurement to distrust"
            ))
        });
    };
    let left_out = if implausible.is_empty() {
        String::new()
    } else {
        format!(
            "; {} cell(s) above the line rate left out",
            implausible.len()
        )
    };
    let source = if at.iter().all(|r| r.source == Source::Measured) {
        Source::Measured
    } else {
        Source::Modeled
    };
    // A median of a healthy and a slow GPU is a figure neither has: the slowest is named
    // where it falls 5 % or more short of the median.
    let slowest = at
        .iter()
        .filter_map(|r| Some((r, r.median_gbps?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, v)| *v < 0.95 * st.median)
        .map(|(r, v)| {
            let ends = match (r.src, r.dst) {
                (Endpoint::Host, d) => format!("GPU {d}"),
                (s, Endpoint::Host) => format!("GPU {s}"),
                (s, d) => format!("GPU {s}→{d}"),
            };
            (format!("{v:.1} GB/s"), ends)
        });
    Some(Figure {
        value: Some(st.median),
        source: Some(source),
        basis: format!(
            "median {test} over {} cell(s), {}{}{left_out}",
            vals.len(),
            crate::model::quantities::format_bytes(bytes),
            slowest
                .as_ref()
                .map(|(v, ends)| format!("; slowest {v} ({ends})"))
                .unwrap_or_default()
        ),
        n_gpus: None,
        kind: String::new(),
        above_one: None,
        slowest: slowest.map(|(v, ends)| format!("{v}, {ends}")),
    })
}

/// NCCL all-reduce busbw at 1 GiB (out of place preferred): the row at 1 GiB, else linear in
/// log(size) between the nearest sizes around it. Never extrapolated.
pub fn all_reduce_busbw_1g(report: &Report) -> Figure {
    let Some(c) = &report.collectives else {
        return Figure::none("the report has no collectives results");
    };
    for in_place in [false, true] {
        let n_gpus = c
            .results
            .iter()
            .filter(|r| r.op == CollectiveOp::AllReduce && r.algo == Algo::Nccl)
            .map(|r| r.gpus.len())
            .max();
        let mut pts: Vec<(u64, f64, Source)> = c
            .results
            .iter()
            // The most GPUs' rows only: busbw at 2 GPUs and at 8 are other figures (a report
            // of imported nccl-tests outputs can hold several counts).
            .filter(|r| {
                r.op == CollectiveOp::AllReduce
                    && r.algo == Algo::Nccl
                    && r.in_place == in_place
                    && r.status == Status::Ok
                    && Some(r.gpus.len()) == n_gpus
            })
            .filter_map(|r| Some((r.bytes, r.busbw_gbps?, r.source)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by_key(|p| p.0);
        if let Some(p) = pts.iter().find(|p| p.0 == ALL_REDUCE_BYTES) {
            return Figure {
                value: Some(p.1),
                source: Some(p.2),
                basis: "NCCL all_reduce at 1 GiB".into(),
                n_gpus,
                kind: String::new(),
                above_one: None,
                slowest: None,
            };
        }
        let below = pts.iter().rev().find(|p| p.0 < ALL_REDUCE_BYTES);
        let above = pts.iter().find(|p| p.0 > ALL_REDUCE_BYTES);
        if let (Some(a), Some(b)) = (below, above) {
            let x = (ALL_REDUCE_BYTES as f64).ln();
            let t = (x - (a.0 as f64).ln()) / ((b.0 as f64).ln() - (a.0 as f64).ln());
            let source = if a.2 == Source::Measured && b.2 == Source::Measured {
                Source::Measured
            } else {
                Source::Modeled
            };
            return Figure {
                value: Some(a.1 + t * (b.1 - a.1)),
                source: Some(source),
                basis: format!(
                    "interpolated between {} and {}",
                    crate::model::quantities::format_bytes(a.0),
                    crate::model::quantities::format_bytes(b.0)
                ),
                n_gpus,
                kind: String::new(),
                above_one: None,
                slowest: None,
            };
        }
    }
    Figure::none("no NCCL all_reduce around 1 GiB")
}

/// Scaling efficiency of `workload` in `mode` at the largest GPU count inside the box (a
/// measured proxy row when there is one, else the model's row).
pub fn efficiency(report: &Report, workload: &str, mode: Mode) -> Figure {
    efficiency_at(report, workload, mode, None)
}

/// The GPU counts inside the box at which `report` has an efficiency of `workload` in `mode`.
pub fn efficiency_counts(report: &Report, workload: &str, mode: Mode) -> Vec<usize> {
    let mut ns: Vec<usize> = report
        .scaling
        .iter()
        .flat_map(|s| s.run.rows.iter())
        .filter(|r| r.workload == workload && r.mode == mode && !r.projected)
        .filter(|r| r.efficiency.is_some())
        .map(|r| r.n_gpus)
        .collect();
    ns.sort_unstable();
    ns.dedup();
    ns
}

/// Scaling efficiency of `workload` in `mode` at `n` GPUs (`None`: the largest count inside the
/// box), a measured row preferred over the model's.
pub fn efficiency_at(report: &Report, workload: &str, mode: Mode, n: Option<usize>) -> Figure {
    let Some(s) = &report.scaling else {
        return Figure::none("no scaling results");
    };
    let rows: Vec<_> = s
        .run
        .rows
        .iter()
        .filter(|r| r.workload == workload && r.mode == mode && !r.projected)
        .filter(|r| r.efficiency.is_some())
        .collect();
    let Some(n) = n.or_else(|| rows.iter().map(|r| r.n_gpus).max()) else {
        return Figure::none("workload not in the report");
    };
    let at_n: Vec<_> = rows.iter().filter(|r| r.n_gpus == n).collect();
    let row = at_n
        .iter()
        .find(|r| r.source.is_measured())
        .or_else(|| at_n.first());
    match row {
        Some(r) => {
            // The speedup's base: the smallest count of that source with a throughput (one GPU
            // unless it does not fit or was not run).
            let base = rows
                .iter()
                .filter(|x| x.source == r.source)
                .map(|x| x.n_gpus)
                .min()
                .unwrap_or(1);
            if n <= base {
                // A speedup over itself: 1.00 by definition, nothing scaled (the 1× H100
                // example compared "at n=1" read as a figure).
                return Figure {
                    n_gpus: Some(n),
                    ..Figure::none(&format!(
                        "{workload}, {mode} scaling: {} is its own base, efficiency 1.00 by \
                         definition — nothing scaled",
                        gpus(n)
                    ))
                };
            }
            let step = match r.source {
                // Earlier reports hold the median of the timed steps, later ones the
                // mean: not alike (on a host-bound step about 5 % apart).
                RowSource::Framework
                    if r.step_statistic() == Some(crate::scaling::StepStatistic::Median) =>
                {
                    MEDIAN_STEPS
                }
                RowSource::Framework => "real framework steps",
                RowSource::Proxy => PROXY_STEPS,
                // A schema-1 report's model: before framework calibration and the
                // concurrent-rate rule, not the current model's like.
                RowSource::Modeled if report.older_method().is_some() => OLDER_MODEL,
                RowSource::Modeled => "the model",
            };
            let kind = if base > 1 {
                format!("{step}, against {}", gpus(base))
            } else {
                step.to_string()
            };
            Figure {
                value: r.efficiency,
                source: Some(r.source.as_source()),
                basis: format!("{workload}, {mode} scaling, {}, {kind}", gpus(n)),
                n_gpus: Some(n),
                kind,
                above_one: super::superlinear::cause(r, &s.run.rows),
                slowest: None,
            }
        }
        None => Figure::none(&format!("no {workload} {mode} row at {}", gpus(n))),
    }
}

/// The workload compared by default: the first one every report has rows for.
pub fn default_workload(reports: &[&Report]) -> Option<String> {
    let first = reports.first()?.scaling.as_ref()?;
    first
        .run
        .workloads
        .iter()
        .map(|w| w.name.clone())
        .find(|name| {
            reports.iter().all(|r| {
                r.scaling
                    .as_ref()
                    .is_some_and(|s| s.run.rows.iter().any(|row| &row.workload == name))
            })
        })
}

/// Compares `reports` (the first is the reference) on P2P, H2D, all-reduce busbw at 1 GiB and
/// weak/strong scaling efficiency of `workload` (default: [`default_workload`]).
pub fn compare(reports: &[&Report], workload: Option<&str>) -> Comparison {
    let workload = workload
        .map(str::to_string)
        .or_else(|| default_workload(reports));
    let mut rows = vec![
        row("P2P read CE GB/s (peer → GPU)", reports, p2p_read_gbps),
        row("P2P write CE GB/s (GPU → peer)", reports, p2p_gbps),
        row("H2D GB/s (host → GPU, pinned)", reports, h2d_gbps),
        with_n(row(
            "all-reduce busbw @1 GiB, GB/s",
            reports,
            all_reduce_busbw_1g,
        )),
    ];
    if let Some(w) = &workload {
        for mode in Mode::ALL {
            // At the largest GPU count every report has, so that n matches; else each
            // report's largest (and the label says the counts differ). One GPU is no common
            // count: an efficiency there is 1 by definition and says nothing.
            let common = reports
                .iter()
                .map(|r| efficiency_counts(r, w, mode))
                .reduce(|a, b| a.into_iter().filter(|n| b.contains(n)).collect())
                .and_then(|ns| ns.last().copied())
                .filter(|n| *n >= 2);
            rows.push(with_n(row(
                &format!("{w} {mode} efficiency"),
                reports,
                |r| efficiency_at(r, w, mode, common),
            )));
        }
    }
    Comparison {
        machines: titles(reports),
        workload,
        rows,
        older: reports
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.older_method().map(|n| (i, n)))
            .collect(),
    }
}

/// Each report's [`Report::title`], numbered as [`numbered`] does.
pub fn titles(reports: &[&Report]) -> Vec<String> {
    numbered(reports.iter().map(|r| r.title()))
}

/// Names with a repeated one numbered from its second use (`… #2`), so that legends and columns
/// keep reports with alike names apart.
pub fn numbered(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: Vec<(String, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|(x, _)| *x == n) {
            Some((_, k)) => {
                *k += 1;
                out.push(format!("{n} #{k}"));
            }
            None => {
                seen.push((n.clone(), 1));
                out.push(n);
            }
        }
    }
    out
}

/// `row` with the GPU counts of its figures in its name: `at n=8`, or `at n=2 / n=8` when
/// they differ.
fn with_n(mut row: Row) -> Row {
    // The counts of the figures that have one (a report without the figure has none: it was a
    // "?" no one could read).
    let mut ns: Vec<String> = Vec::new();
    for n in row.figures.iter().filter_map(|f| f.n_gpus) {
        let n = format!("n={n}");
        if !ns.contains(&n) {
            ns.push(n);
        }
    }
    if row.figures.iter().any(|f| f.n_gpus.is_some()) {
        let _ = write!(row.name, " at {}", ns.join(" / "));
    }
    // Measured, but not the workload's real step: the name says so when every figure is.
    let known: Vec<&Figure> = row.figures.iter().filter(|f| f.value.is_some()).collect();
    if !known.is_empty() && known.iter().all(|f| f.kind.starts_with(PROXY_STEPS)) {
        let _ = write!(row.name, " ({PROXY_STEPS})");
    }
    row
}

/// A GPU count as words: `1 GPU`, `8 GPUs`.
pub use crate::model::quantities::gpus;

/// How a synthetic proxy's efficiency is named (it is measured, but not the workload's step).
const PROXY_STEPS: &str = "synthetic proxy steps, the older method";

/// How a framework step of an earlier report (the median of its timed steps) is named.
const MEDIAN_STEPS: &str = "real framework steps, their medians (an earlier report)";

/// How the model of a report of the older method (schema 1) is named.
const OLDER_MODEL: &str = "the model, the older method";

/// Whether `b` may be set against `a` as a difference in %: read at one GPU count and, for
/// scaling efficiencies, of one kind of step (a proxy or the older method's model never against
/// a framework step or the current model; a 1-GPU figure never against an n-GPU one). A modeled
/// link figure against a measured one still is, grey and with the row's caveat.
pub fn comparable(a: &Figure, b: &Figure) -> bool {
    a.n_gpus == b.n_gpus && a.kind == b.kind
}

impl Row {
    /// True when the `i`-th figure and the first can be told apart as better or worse: both
    /// measured, at the same GPU count. A modeled figure against a measured one, or figures at
    /// different GPU counts, differ for reasons other than the machines.
    pub fn like_for_like(&self, i: usize) -> bool {
        let (Some(a), Some(b)) = (self.figures.first(), self.figures.get(i)) else {
            return false;
        };
        a.source == Some(Source::Measured)
            && b.source == Some(Source::Measured)
            && a.n_gpus == b.n_gpus
            && a.kind == b.kind
    }

    /// Why this row's differences are not a verdict on the machines, if they are not.
    pub fn caveat(&self) -> Option<String> {
        let sources: Vec<Source> = self.figures.iter().filter_map(|f| f.source).collect();
        let known: Vec<&Figure> = self.figures.iter().filter(|f| f.value.is_some()).collect();
        if sources.contains(&Source::Modeled) && sources.contains(&Source::Measured) {
            Some("modeled vs measured — the difference is the model's from a measurement, not one machine's from another".into())
        } else if known.windows(2).any(|w| w[0].n_gpus != w[1].n_gpus) {
            Some("different GPU counts — not a like-for-like comparison".into())
        } else {
            known.windows(2).find(|w| w[0].kind != w[1].kind).map(|w| {
                format!(
                    "{} vs {} — not a like-for-like comparison",
                    w[0].kind, w[1].kind
                )
            })
        }
    }
}

fn row(name: &str, reports: &[&Report], f: impl Fn(&Report) -> Figure) -> Row {
    let figures: Vec<Figure> = reports.iter().map(|r| f(r)).collect();
    let first = figures.first();
    let base = first.and_then(|f| f.value);
    // No difference where the figures are not alike: read at other GPU counts, or of another
    // kind of step (the row's caveat says which).
    let diff_pct = figures
        .iter()
        .enumerate()
        .map(|(i, f)| match (i, base, f.value) {
            (0, _, _) => None,
            _ if first.is_some_and(|a| !comparable(a, f)) => None,
            (_, Some(b), Some(v)) if b != 0.0 => {
                Some((v - b) / b * 100.0).filter(|d| d.is_finite())
            }
            _ => None,
        })
        .collect();
    Row {
        name: name.to_string(),
        figures,
        diff_pct,
    }
}

/// One line per efficiency above 1.00 with its cause, `name` naming the `i`-th machine:
/// `resnet50 weak efficiency at n=2, [B]: 1.07 — above 1.00: …`. The terminal table and the
/// Compare view print them.
pub fn above_one_lines(c: &Comparison, name: impl Fn(usize) -> String) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.rows {
        for (i, f) in r.figures.iter().enumerate() {
            if let Some(why) = &f.above_one {
                out.push(format!(
                    "{}, {}: {} — above 1.00: {why}",
                    crate::model::validate::one_line(&r.name, 80),
                    name(i),
                    format_figure(f)
                ));
            }
        }
    }
    out
}

/// [`format_figure`] with its unit, or "—" and why where there is no value (a unit after "—"
/// would read as a figure).
pub fn format_figure_in(f: &Figure, unit: &str) -> String {
    match f.value.filter(|v| v.is_finite()) {
        Some(_) => format!("{} {unit}", format_figure(f)),
        None => format!("— ({})", crate::model::validate::one_line(&f.basis, 80)),
    }
}

/// [`format_figure_in`] and, for a copy median whose slowest cell falls short of it
/// ([`p2p_gbps`], [`h2d_gbps`]), that cell: `41.5 GB/s (slowest 27.7 GB/s, GPU 1)`.
pub fn format_copy_figure(f: &Figure) -> String {
    let text = format_figure_in(f, "GB/s");
    match &f.slowest {
        Some(slowest) if f.value.is_some() => format!("{text} (slowest {slowest})"),
        _ => text,
    }
}

/// A figure as text: two decimals for efficiencies (≤ 1.5), one otherwise, powers of ten
/// beyond 10^7; `~` marks modeled; "—" when unknown or not finite.
pub fn format_figure(f: &Figure) -> String {
    match f.value.filter(|v| v.is_finite()) {
        None => "—".to_string(),
        Some(v) if v.abs() >= 1e7 => {
            let mark = if f.source == Some(Source::Modeled) {
                "~"
            } else {
                ""
            };
            format!("{mark}{v:.3e}")
        }
        Some(v) => {
            let mark = if f.source == Some(Source::Modeled) {
                "~"
            } else {
                ""
            };
            if v.abs() <= 1.5 {
                // An efficiency whose cause of reading above 1 is given shows the digits that
                // read above 1 (`1.0013`, not `1.00 — above 1.00`).
                if f.above_one.is_some() && !super::superlinear::reads_above_one(v, 2) {
                    format!("{mark}{v:.4}")
                } else {
                    format!("{mark}{v:.2}")
                }
            } else {
                format!("{mark}{v:.1}")
            }
        }
    }
}

/// A difference as text, e.g. `+12.3%`; "—" when unknown
/// ([`crate::model::quantities::signed_percent`]).
pub fn format_diff(d: Option<f64>) -> String {
    crate::model::quantities::signed_percent(d)
}

/// The comparison as a terminal table: one column per report (after the first, with the
/// difference from the first in %).
/// Why a row shows "—": `name: — for A: why; B: why`, one line per row with a figure
/// missing, each machine named by `name(its index)`. The reasons come from the reports'
/// files, escaped.
pub fn missing_lines(c: &Comparison, name: impl Fn(usize) -> String) -> Vec<String> {
    c.rows
        .iter()
        .filter_map(|r| {
            let parts: Vec<String> = r
                .figures
                .iter()
                .enumerate()
                .filter(|(_, f)| f.value.filter(|v| v.is_finite()).is_none())
                .map(|(i, f)| {
                    format!(
                        "{} {}",
                        name(i),
                        crate::model::validate::one_line(&f.basis, 80)
                    )
                })
                .collect();
            (!parts.is_empty()).then(|| {
                format!(
                    "{}: — for {}",
                    crate::model::validate::one_line(&r.name, 80),
                    parts.join("; ")
                )
            })
        })
        .collect()
}

pub fn to_table(c: &Comparison) -> String {
    let mut out = String::new();
    for (i, m) in c.machines.iter().enumerate() {
        // Titles come from the files: control characters escaped, long words shortened.
        let m = crate::model::validate::one_line(m, 80);
        let _ = writeln!(out, "[{}] {m}", (b'A' + (i as u8 % 26)) as char);
    }
    out.push('\n');
    let name_w = c
        .rows
        .iter()
        .map(|r| {
            crate::model::validate::one_line(&r.name, 80)
                .chars()
                .count()
        })
        .max()
        .unwrap_or(10);
    let _ = write!(out, "{:<name_w$}", "figure");
    for i in 0..c.machines.len() {
        let col = (b'A' + (i as u8 % 26)) as char;
        if i == 0 {
            let _ = write!(out, " {:>10}", col);
        } else {
            let _ = write!(out, " {:>10} {:>9}", col, format!("{col} vs A"));
        }
    }
    out.push('\n');
    for r in &c.rows {
        let name = crate::model::validate::one_line(&r.name, 80);
        let _ = write!(out, "{:<name_w$}", name);
        for (i, f) in r.figures.iter().enumerate() {
            if i == 0 {
                let _ = write!(out, " {:>10}", format_figure(f));
            } else {
                let _ = write!(
                    out,
                    " {:>10} {:>9}",
                    format_figure(f),
                    format_diff(r.diff_pct[i])
                );
            }
        }
        out.push('\n');
    }
    if c.rows
        .iter()
        .any(|r| r.figures.iter().any(|f| f.source == Some(Source::Modeled)))
    {
        out.push_str("\n~ modeled (derived from line rates, not measured)\n");
    }
    for r in &c.rows {
        if let Some(why) = r.caveat() {
            let name = crate::model::validate::one_line(&r.name, 80);
            let left_out = if r.diff_pct.iter().skip(1).all(Option::is_none)
                && r.figures.iter().skip(1).any(|f| f.value.is_some())
                && r.figures.first().is_some_and(|f| f.value.is_some())
            {
                " (no difference given)"
            } else {
                ""
            };
            let _ = writeln!(out, "{name}: {why}{left_out}");
        }
    }
    for line in missing_lines(c, |i| format!("[{}]", (b'A' + (i as u8 % 26)) as char)) {
        let _ = writeln!(out, "{line}");
    }
    for line in above_one_lines(c, |i| format!("[{}]", (b'A' + (i as u8 % 26)) as char)) {
        let _ = writeln!(out, "{line}");
    }
    for (i, note) in &c.older {
        let mut line = format!("[{}]", (b'A' + (*i as u8 % 26)) as char);
        // Wrapped at 100 columns, as the table above is about that wide.
        for word in note.split_whitespace() {
            if line.len() + 1 + word.len() > 100 {
                let _ = writeln!(out, "{line}");
                line = "   ".to_string();
            }
            line.push(' ');
            line.push_str(word);
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::MachineInfo;

    #[test]
    fn strings_from_the_files_are_escaped_for_the_terminal() {
        let c = Comparison {
            machines: vec!["box \u{1b}[31mred\nverdict PASS".into()],
            workload: Some("w\u{7}".into()),
            rows: vec![Row {
                name: "row\u{9b}".into(),
                figures: vec![Figure {
                    value: None,
                    source: None,
                    basis: "b\r".into(),
                    n_gpus: None,
                    kind: "k\u{2028}".into(),
                    above_one: Some("c\u{1b}".into()),
                    slowest: None,
                }],
                diff_pct: vec![None],
            }],
            older: Vec::new(),
        };
        let e = for_terminal(c);
        let all = format!(
            "{}{}{}{}{}{}",
            e.machines[0],
            e.workload.as_deref().unwrap_or(""),
            e.rows[0].name,
            e.rows[0].figures[0].basis,
            e.rows[0].figures[0].kind,
            e.rows[0].figures[0].above_one.as_deref().unwrap_or("")
        );
        assert!(
            !all.chars().any(crate::model::validate::unsafe_on_terminal),
            "{all:?}"
        );
        assert!(
            e.machines[0].starts_with("box \\u{1b}[31mred"),
            "{}",
            e.machines[0]
        );
    }

    #[test]
    fn the_all_reduce_figure_is_the_most_gpus_only() {
        // A report holding all-reduce at 8 GPUs and (as imported nccl-tests outputs can) at 2:
        // the 2-GPU rows never stand in the 8-GPU figure.
        let mut r = crate::report::bundled::reports()
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .find(|r| r.topology.gpus.len() == 8 && r.collectives.is_some())
            .expect("the bundled 8x H200 report");
        let eight = all_reduce_busbw_1g(&r);
        assert_eq!(eight.n_gpus, Some(8));
        let c = r.collectives.as_mut().unwrap();
        let mut two: Vec<crate::model::CollectiveResult> = c
            .results
            .iter()
            .filter(|x| x.op == CollectiveOp::AllReduce && x.algo == Algo::Nccl)
            .cloned()
            .collect();
        for x in &mut two {
            x.gpus.truncate(2);
            x.busbw_gbps = x.busbw_gbps.map(|b| b / 3.0);
        }
        two.append(&mut c.results);
        c.results = two;
        let mixed = all_reduce_busbw_1g(&r);
        assert_eq!(mixed.n_gpus, Some(8));
        assert_eq!(mixed.value, eight.value);
    }

    #[test]
    fn repeated_titles_are_numbered() {
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let report = |label: &str| {
            Report::new(
                MachineInfo {
                    label: label.into(),
                    created_at: "2026-11-22T10:00:00Z".into(),
                    ..Default::default()
                },
                topo.clone(),
            )
        };
        let (a, b) = (report("a"), report("b"));
        let t = titles(&[&a, &b, &a, &a]);
        assert_eq!(t[0], a.title());
        assert_eq!(t[1], b.title());
        assert_eq!(t[2], format!("{} #2", a.title()));
        assert_eq!(t[3], format!("{} #3", a.title()));
    }

    #[test]
    fn p2p_figure_takes_the_size_of_the_full_matrix() {
        // Every ordered pair of 3 GPUs at 512 MiB (0→1 twice: the matrix and a sweep), and a
        // sweep of the one pair 0→1 up to 1 GiB: the figure is the matrix's median.
        let cell = |src: usize, dst: usize, bytes: u64, gbps: f64| {
            measured_cell(TestId::P2pWriteCe, Endpoint::Gpu(src), dst, bytes, gbps)
        };
        let mut results = vec![cell(0, 1, 512 << 20, 390.0), cell(0, 1, 512 << 20, 100.0)];
        for (i, (a, b)) in [(0, 2), (1, 0), (1, 2), (2, 0), (2, 1)].iter().enumerate() {
            results.push(cell(*a, *b, 512 << 20, 391.0 + i as f64));
        }
        results.push(cell(0, 1, 1 << 30, 500.0));
        let f = p2p_gbps(&with_bandwidth(results));
        // 390 … 395 → 392.5 (with the repeated 0→1 it would be 392; at 1 GiB, 500).
        assert_eq!(f.value, Some(392.5));
        assert!(
            f.basis.contains("6 cell(s)") && f.basis.contains("512 MiB"),
            "{}",
            f.basis
        );
    }

    #[test]
    fn a_copy_figure_is_its_own_test_at_the_key_figures_size_and_names_its_slowest_cell() {
        let cell = |test: TestId, dst: usize, bytes: u64, gbps: f64| {
            measured_cell(test, Endpoint::Host, dst, bytes, gbps)
        };
        // H2D at 512 MiB on both GPUs (GPU 1 at half speed) and at 1 GiB on both; a P2P read
        // test and no write test.
        let report = with_bandwidth(vec![
            cell(TestId::H2d, 0, 512 << 20, 55.4),
            cell(TestId::H2d, 1, 512 << 20, 27.7),
            cell(TestId::H2d, 0, 1 << 30, 55.6),
            cell(TestId::H2d, 1, 1 << 30, 27.8),
            measured_cell(TestId::P2pReadCe, Endpoint::Gpu(0), 1, 512 << 20, 394.0),
        ]);
        let h2d = h2d_gbps(&report);
        assert!((h2d.value.unwrap() - 41.55).abs() < 1e-9, "{h2d:?}");
        assert!(h2d.basis.contains("512 MiB"), "{}", h2d.basis);
        assert_eq!(
            format_copy_figure(&h2d),
            "41.5 GB/s (slowest 27.7 GB/s, GPU 1)"
        );
        // No write test: no write figure (the read test's is its own row).
        let write = p2p_gbps(&report);
        assert_eq!(write.value, None);
        assert!(write.basis.contains("no p2p_write_ce"), "{}", write.basis);
        assert_eq!(p2p_read_gbps(&report).value, Some(394.0));
        // Cells within 5 % of each other: no slowest named.
        let mut even = report.clone();
        if let Some(b) = &mut even.bandwidth {
            b.results[1].median_gbps = Some(54.0);
        }
        assert!(!format_copy_figure(&h2d_gbps(&even)).contains("slowest"));
    }

    /// A measured `ok` cell of `test` from `src` to GPU `dst` at `gbps`.
    fn measured_cell(
        test: TestId,
        src: Endpoint,
        dst: usize,
        bytes: u64,
        gbps: f64,
    ) -> BandwidthResult {
        let mut r = BandwidthResult::empty(
            test,
            src,
            Endpoint::Gpu(dst),
            bytes,
            Source::Measured,
            Status::Ok,
            "",
        );
        r.median_gbps = Some(gbps);
        r
    }

    /// A DGX H100 report holding `results` as its measured bandwidth section.
    fn with_bandwidth(results: Vec<BandwidthResult>) -> Report {
        let mut report = Report::new(
            MachineInfo::default(),
            crate::topology::catalog::load("dgx-h100").unwrap(),
        );
        report.bandwidth = Some(crate::report::BandwidthSection {
            source: Source::Measured,
            backend: String::new(),
            results,
        });
        report
    }

    fn fig(v: f64, source: Source, n: Option<usize>) -> Figure {
        Figure {
            value: Some(v),
            source: Some(source),
            basis: String::new(),
            n_gpus: n,
            kind: String::new(),
            above_one: None,
            slowest: None,
        }
    }

    #[test]
    fn modeled_against_measured_is_not_a_win_or_a_loss() {
        let r = |a: Figure, b: Figure| Row {
            name: "x".into(),
            figures: vec![a, b],
            diff_pct: vec![None, Some(50.0)],
        };
        let mixed = r(
            fig(1.0, Source::Measured, Some(8)),
            fig(1.5, Source::Modeled, Some(8)),
        );
        assert!(!mixed.like_for_like(1));
        assert!(mixed.caveat().unwrap().contains("modeled vs measured"));
        let other_n = r(
            fig(1.0, Source::Measured, Some(2)),
            fig(1.5, Source::Measured, Some(8)),
        );
        assert!(!other_n.like_for_like(1));
        assert!(other_n.caveat().unwrap().contains("GPU counts"));
        let like = r(
            fig(1.0, Source::Measured, Some(8)),
            fig(1.5, Source::Measured, Some(8)),
        );
        assert!(like.like_for_like(1));
        assert_eq!(like.caveat(), None);
        let table = to_table(&Comparison {
            machines: vec!["a".into(), "b".into()],
            workload: None,
            rows: vec![mixed],
            older: Vec::new(),
        });
        assert!(
            table.contains(
                "x: modeled vs measured — the difference is the model's from a measurement"
            )
        );
    }

    #[test]
    fn n_dependent_rows_name_their_gpu_counts() {
        let row = |ns: [Option<usize>; 2]| {
            with_n(Row {
                name: "w weak efficiency".into(),
                figures: ns.iter().map(|&n| fig(0.9, Source::Measured, n)).collect(),
                diff_pct: vec![None, Some(0.0)],
            })
            .name
        };
        assert_eq!(row([Some(8), Some(8)]), "w weak efficiency at n=8");
        assert_eq!(row([Some(2), Some(8)]), "w weak efficiency at n=2 / n=8");
    }

    #[test]
    fn efficiencies_against_different_bases_are_not_like_for_like() {
        // Llama-2-7B (FSDP) does not fit one 80 GB H100: its efficiency there is taken against
        // 2 GPUs, on the H200 against 1. Compared, the row says so instead of a plain verdict.
        let report = |catalog: &str| {
            let topo = crate::topology::catalog::load(catalog).unwrap();
            let w = crate::scaling::workload::resolve("llama2-7b").unwrap();
            let run = crate::scaling::run::run_modeled(&topo, &[], &[w], &Mode::ALL, 16);
            let mut r = Report::new(Default::default(), topo);
            r.scaling = Some(crate::report::ScalingSection {
                source: Source::Modeled,
                run,
            });
            r
        };
        let (h200, h100) = (report("hgx-h200"), report("dgx-h100"));
        let c = compare(&[&h200, &h100], Some("llama2-7b"));
        let weak = c
            .rows
            .iter()
            .find(|r| r.name.starts_with("llama2-7b weak efficiency"))
            .unwrap();
        assert_eq!(weak.figures[0].kind, "the model");
        assert_eq!(weak.figures[1].kind, "the model, against 2 GPUs");
        assert_eq!(
            weak.caveat().as_deref(),
            Some("the model vs the model, against 2 GPUs — not a like-for-like comparison")
        );
        assert!(to_table(&c).contains("against 2 GPUs — not a like-for-like"));
        // Alike, no caveat.
        let same = compare(&[&h200, &h200], Some("llama2-7b"));
        assert!(same.rows.iter().all(|r| r.caveat().is_none()), "{same:?}");
    }

    #[test]
    fn a_median_step_efficiency_is_not_set_against_a_mean_one() {
        // The same 2-GPU framework rows, one report's steps marked the mean (written from
        // commit 2b47b1e on), the other's not (an earlier report: medians).
        let report = |mean: bool| {
            let mut run = crate::scaling::run::fixtures::calibrated_gpt2_xl();
            for r in run
                .rows
                .iter_mut()
                .filter(|r| r.source == RowSource::Framework)
            {
                // The fixture's steps: 380 ms on one GPU, 395 on two (weak).
                r.efficiency = Some(if r.n_gpus == 2 { 380.0 / 395.0 } else { 1.0 });
                if mean {
                    r.step_statistic = Some(crate::scaling::StepStatistic::Mean);
                }
            }
            let topo = crate::topology::catalog::load("hgx-h200").unwrap();
            let mut r = Report::new(Default::default(), topo);
            r.scaling = Some(crate::report::ScalingSection {
                source: Source::Measured,
                run,
            });
            r
        };
        let (new, old) = (report(true), report(false));
        let at_2 = |r: &Report| efficiency_at(r, "gpt2-xl", Mode::Weak, Some(2));
        let (a, b) = (at_2(&new), at_2(&old));
        assert_eq!(a.kind, "real framework steps");
        assert!(b.kind.contains("medians"), "{b:?}");
        assert_eq!(a.value, b.value);
        assert!(a.value.is_some());
        assert!(!comparable(&a, &b));
    }
}
