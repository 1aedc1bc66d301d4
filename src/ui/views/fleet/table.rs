//! The Fleet view's heat table as data, from a [`FleetOutcome`] as `fleet report` judged it:
//! the nodes worst first, the key figures shown (all, those off the median, or one test's) and
//! each cell's value and level — the outlier rule of `fleet report` itself
//! ([`finding::worse_verdict`]: worse than the median by more than the `[fleet]` share and the
//! MAD spread), so that a red cell is always a FAIL finding and a neutral one never is. Pure:
//! the view draws it, the tests read it.

use crate::fleet::finding::{self, FindingKind};
use crate::fleet::judge::{FigureSummary, FleetOutcome, NodeOutcome};
use crate::health::Verdict;

/// How a cell of the table is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// As good as the fleet's median, or worse within the rule.
    Within,
    /// Worse than the median by more than the WARN share (and the MAD spread).
    Warn,
    /// Worse than the median by more than the FAIL share (and the MAD spread).
    Fail,
    /// The node has no such figure ("—", never 0).
    Missing,
}

impl Level {
    fn of(verdict: Option<Verdict>) -> Self {
        match verdict {
            Some(Verdict::Fail) => Level::Fail,
            Some(Verdict::Warn) => Level::Warn,
            _ => Level::Within,
        }
    }
}

/// One node's figure in the table.
#[derive(Clone, Debug, PartialEq)]
pub struct HeatCell {
    /// The node's figure, in the figure's unit; `None` when the node has none.
    pub value: Option<f64>,
    /// What the cell says: the figure as `fleet report` writes figures, or "—".
    pub text: String,
    pub level: Level,
    /// The difference from the fleet's median in % of the median (signed: + is higher).
    pub deviation_percent: Option<f64>,
}

/// Which figures the table shows as columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FigureFilter {
    /// The figures where some node is off the median (WARN or FAIL); all of them when none is.
    #[default]
    Off,
    /// Every key figure, in fleet.json's order (by test, then GPU or pair).
    All,
    /// The figures of one test or operation (`h2d`, `p2p_read_ce`, `all_reduce`).
    Group(String),
}

impl FigureFilter {
    /// The combo box's text; `off` is [`off_figures`].
    pub fn label(&self, o: &FleetOutcome, off: &[usize]) -> String {
        match self {
            FigureFilter::Off => format!("Off the median ({})", off.len()),
            FigureFilter::All => format!("All figures ({})", o.figures.len()),
            FigureFilter::Group(g) => {
                let n = o.figures.iter().filter(|f| group(&f.id) == g).count();
                format!("{g} ({n})")
            }
        }
    }
}

/// The test or operation a figure belongs to: its id's first word (`h2d` of `h2d GPU 3`,
/// `all_reduce` of `all_reduce nccl busbw 8 GPUs @ 1 GiB`).
pub fn group(id: &str) -> &str {
    id.split_once(' ').map_or(id, |(g, _)| g)
}

/// The figure's subject: what follows its first word (`GPU 3`, `nccl busbw 8 GPUs @ 1 GiB`).
pub fn subject(id: &str) -> &str {
    id.split_once(' ').map_or("", |(_, s)| s)
}

/// Every figure group, in the order their figures come.
pub fn groups(o: &FleetOutcome) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for f in &o.figures {
        let g = group(&f.id);
        if out.last() != Some(&g) && !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// The indices (into `o.figures`) of the figures where some node is WARN or FAIL (every
/// node × figure: computed once per fleet, not per frame).
pub fn off_figures(o: &FleetOutcome) -> Vec<usize> {
    (0..o.figures.len())
        .filter(|&i| {
            o.nodes
                .iter()
                .any(|n| matches!(level(o, n, i).1, Level::Warn | Level::Fail))
        })
        .collect()
}

/// The figures `filter` shows, as indices into `o.figures` in their order; `off` is
/// [`off_figures`].
pub fn columns(o: &FleetOutcome, filter: &FigureFilter, off: &[usize]) -> Vec<usize> {
    match filter {
        FigureFilter::All => (0..o.figures.len()).collect(),
        FigureFilter::Off if off.is_empty() => (0..o.figures.len()).collect(),
        FigureFilter::Off => off.to_vec(),
        FigureFilter::Group(g) => (0..o.figures.len())
            .filter(|&i| group(&o.figures[i].id) == g)
            .collect(),
    }
}

/// How bad a verdict is, worst first: FAIL, WARN, UNKNOWN, PASS.
fn badness(v: Verdict) -> u8 {
    match v {
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Unknown => 2,
        Verdict::Pass => 3,
    }
}

/// The nodes as the table lists them: worst verdict first, then by name; only those whose name
/// holds `filter` (any case) when it is not empty. Indices into `o.nodes`.
pub fn rows(o: &FleetOutcome, filter: &str) -> Vec<usize> {
    let filter = filter.trim().to_lowercase();
    let mut rows: Vec<usize> = (0..o.nodes.len())
        .filter(|&i| filter.is_empty() || o.nodes[i].name.to_lowercase().contains(&filter))
        .collect();
    rows.sort_by(|&a, &b| {
        let (a, b) = (&o.nodes[a], &o.nodes[b]);
        badness(a.verdict)
            .cmp(&badness(b.verdict))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

/// Node `n`'s figure `figure` (an index into `o.figures`) and its level.
fn level(o: &FleetOutcome, n: &NodeOutcome, figure: usize) -> (Option<f64>, Level) {
    let f = &o.figures[figure];
    let Some(&x) = n.figures.get(&f.id) else {
        return (None, Level::Missing);
    };
    let worse = if f.higher_is_better {
        f.median - x
    } else {
        x - f.median
    };
    let rules = &o.thresholds;
    let spread = rules.mad_k * f.scaled_mad;
    let verdict = finding::worse_verdict(worse, f.median, spread, rules);
    (Some(x), Level::of(verdict))
}

/// Node `n`'s cell of figure `figure` (an index into `o.figures`).
pub fn cell(o: &FleetOutcome, n: &NodeOutcome, figure: usize) -> HeatCell {
    let median = o.figures[figure].median;
    let (value, level) = level(o, n, figure);
    HeatCell {
        value,
        text: value.map_or_else(|| "—".into(), finding::figure_text),
        level,
        deviation_percent: value
            .filter(|_| median != 0.0)
            .map(|x| (x - median) / median * 100.0),
    }
}

/// What hovering node `n`'s cell of `figure` says: the figure, the fleet's median, the
/// difference and the finding's sentence, if the node has one on it.
pub fn cell_hover(o: &FleetOutcome, n: &NodeOutcome, figure: usize) -> String {
    let f: &FigureSummary = &o.figures[figure];
    let c = cell(o, n, figure);
    let better = if f.higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    };
    let mut s = format!("{} · {}\n", n.name, f.id);
    match c.value {
        Some(x) => s.push_str(&format!("{} {}", finding::figure_text(x), f.unit)),
        None => s.push_str("not in this node's report"),
    }
    s.push_str(&format!(
        "\nfleet median {} {} ({} nodes; {better})",
        finding::figure_text(f.median),
        f.unit,
        f.nodes
    ));
    if let Some(p) = c.deviation_percent {
        s.push_str(&format!("\n{p:+.1} % from the median"));
    }
    let finding = n.findings.iter().find(|x| {
        x.kind == FindingKind::Outlier
            && x.subject
                .as_deref()
                .is_some_and(|sub| format!("{} {sub}", x.field) == f.id)
    });
    if let Some(x) = finding {
        s.push_str(&format!("\n{}: {}", x.verdict.word(), x.detail));
    }
    s
}

/// The fields where node `n` differs from the fleet's majority (`driver 575.57.08`,
/// `pcie GPU 2 Gen4 x16`), for the table's "Differs" column.
pub fn differs(n: &NodeOutcome) -> String {
    n.findings
        .iter()
        .filter(|f| matches!(f.kind, FindingKind::Consistency | FindingKind::Unreadable))
        .map(|f| match f.kind {
            FindingKind::Unreadable => "report unreadable".to_string(),
            _ => [
                Some(f.field.as_str()),
                f.subject.as_deref(),
                f.value.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" "),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_subjects_split_at_the_first_word() {
        assert_eq!(group("h2d GPU 3"), "h2d");
        assert_eq!(subject("h2d GPU 3"), "GPU 3");
        assert_eq!(group("all_reduce nccl busbw 8 GPUs @ 1 GiB"), "all_reduce");
        assert_eq!(group("step_time"), "step_time");
        assert_eq!(subject("step_time"), "");
    }

    #[test]
    fn worst_verdict_first() {
        assert!(badness(Verdict::Fail) < badness(Verdict::Warn));
        assert!(badness(Verdict::Warn) < badness(Verdict::Unknown));
        assert!(badness(Verdict::Unknown) < badness(Verdict::Pass));
    }
}
