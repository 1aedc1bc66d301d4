//! Which machine gives the most training per second, per joule and per unit of money, for one
//! workload at chosen GPU counts: the purchase question the Compare view and
//! `scalescope compare` answer. Like is ranked with like only: real framework steps, and the
//! model's rows (projections beyond a box, catalog machines), each among their own kind; a
//! synthetic proxy step or a row modeled by the older method (a report of schema 1) is never
//! set against them — it is listed, unranked and without figures, with the reason; nor is a
//! framework step that is the median of its timed steps (a report written before scalescope
//! took the mean) ranked among means. Every candidate of a group is at the group's GPU count.
//! Pure functions of [`Report`]s.

use std::fmt::Write as _;

use super::Report;
use super::compare::{gpus, numbered};
use crate::scaling::cost::Pricing;
use crate::scaling::{Mode, RowSource, ScalingPoint, StepStatistic};

/// What machines are ranked by: the lowest cost per million samples where any machine has a
/// price, else the most samples per joule where any has power, else the most samples/s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankBy {
    Cost,
    SamplesPerJoule,
    Throughput,
}

impl RankBy {
    /// How the ranking says it, e.g. `cost per million samples (lowest first)`.
    /// How CSV names it.
    pub fn id(self) -> &'static str {
        match self {
            RankBy::Cost => "cost_per_million_samples",
            RankBy::SamplesPerJoule => "samples_per_joule",
            RankBy::Throughput => "samples_per_s",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            RankBy::Cost => "cost per million samples (lowest first)",
            RankBy::SamplesPerJoule => "samples per joule of GPU energy (most first)",
            RankBy::Throughput => "samples/s (most first)",
        }
    }
}

/// What a candidate's figures rest on: candidates are ranked only against their own kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A real framework training step measured on the machine (ranked `1`, `2`, …).
    Measured,
    /// scalescope's current model: calibrated from a framework step (this run's, the user's, a
    /// catalog record) or the catalog's utilization (ranked `~1`, `~2`, …).
    Model,
    /// Not comparable with either: a synthetic proxy step, a row modeled by the older method
    /// (a report of schema 1), or a median framework step among means. Never ranked; its
    /// figures are left out, its note says why.
    LeftOut,
}

/// One machine at one GPU count.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Index of its report (its column letter in the comparison).
    pub machine: usize,
    pub n_gpus: usize,
    /// framework, proxy or modeled (the model's rows, projections included).
    pub source: RowSource,
    /// Which candidates it is ranked against.
    pub kind: Kind,
    pub projected: bool,
    pub throughput: Option<f64>,
    pub watts_per_gpu: Option<f64>,
    /// True where the power is the model's (measured rows: NVML).
    pub power_modeled: bool,
    /// True where the power is only its upper bound (the board limit, idle power unknown):
    /// samples/J is then at least the figure, and neither it nor a cost that needs power
    /// (ownership) is ranked against estimates.
    pub power_upper_bound: bool,
    /// True where the cost includes the GPUs' energy (ownership prices).
    pub cost_needs_power: bool,
    pub samples_per_joule: Option<f64>,
    pub cost_per_million: Option<f64>,
    /// Which figure of its timed steps a real framework step is (the mean; the median in
    /// earlier reports); `None` for other rows.
    pub step_statistic: Option<StepStatistic>,
    /// 1 = best within its kind (measured or modeled); `None` without the figure ranked by,
    /// and for a candidate left out.
    pub rank: Option<usize>,
    /// Why it is not ranked ([`Kind::LeftOut`]), or why a figure is missing (does not fit, no
    /// power, no price).
    pub note: String,
}

/// How far (as a fraction of the measured step) the model may miss a report's own measured
/// n-GPU step before its rows of that report say so: issue U's 10 %.
pub const MODEL_MISS: f64 = 0.10;

/// Why a synthetic proxy step is not ranked.
pub const PROXY_LEFT_OUT: &str = "not ranked: a synthetic proxy step (GEMMs + NCCL, the older \
     method), not the workload's training step — never set against framework steps or the model";

/// Why a framework step that is the median of its steps is not ranked against means.
pub const MEDIAN_LEFT_OUT: &str = "not ranked: its step is the median of its timed steps (a \
     report written before scalescope took the mean, 2026-11-28), the others' the mean, as a \
     run's samples/s — on a host-bound step the median reads up to about 5 % faster; measure it \
     again to rank it";

/// What a model row calibrated from a median framework step says (it is ranked: the model's
/// own error is larger than the median's skew, but the reader is told).
pub const MEDIAN_MODEL_NOTE: &str = "modeled from a median 1-GPU step (an earlier report): \
     up to about 5 % optimistic on a host-bound step, so a lead that small is not one";

/// Why a row modeled by the older method is not ranked.
pub const OLDER_MODEL_LEFT_OUT: &str = "not ranked: modeled by the older method (report schema \
     1, before framework calibration and the concurrent-rate rule), unlike the current model";

impl Candidate {
    /// True for a real framework step ([`Kind::Measured`]); a proxy, measured but not the
    /// workload's step, is not.
    pub fn measured(&self) -> bool {
        self.kind == Kind::Measured
    }

    /// The figure ranked by, where it is ranked: `None` without it, and for samples/J or an
    /// ownership cost resting on power that is only its upper bound.
    pub fn key(&self, by: RankBy) -> Option<f64> {
        match by {
            RankBy::Cost => self
                .cost_per_million
                .filter(|_| !(self.power_upper_bound && self.cost_needs_power)),
            RankBy::SamplesPerJoule => self.samples_per_joule.filter(|_| !self.power_upper_bound),
            RankBy::Throughput => self.throughput,
        }
        .filter(|v| v.is_finite())
    }
}

/// The candidates at one GPU count: measured ones first, then the model's, each best first,
/// then those left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub n_gpus: usize,
    pub candidates: Vec<Candidate>,
}

/// The ranking of several machines for a workload.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    pub workload: String,
    pub mode: Mode,
    pub by: RankBy,
    /// Each report's title, numbered where repeated.
    pub machines: Vec<String>,
    /// Each machine's prices in words (`None`: no price).
    pub prices: Vec<Option<String>>,
    pub groups: Vec<Group>,
    /// A run the user sizes, in samples: each candidate's time and cost for it are shown.
    pub run_samples: Option<f64>,
}

/// The GPU counts ranked by default: the largest count inside every box that all reports have a
/// row at, then 8, 64 and 512 where any report has a row there, and each machine's own box size
/// where another machine has a row there too (an NVL72 rack's 72 against nine 8-GPU boxes).
pub fn default_counts(reports: &[&Report], workload: &str, mode: Mode) -> Vec<usize> {
    let counts = |r: &Report, projected: bool| -> Vec<usize> {
        rows(r, workload, mode)
            .filter(|x| projected || !x.projected)
            .map(|x| x.n_gpus)
            .collect()
    };
    let common_in_box = reports
        .iter()
        .map(|r| counts(r, false))
        .reduce(|a, b| a.into_iter().filter(|n| b.contains(n)).collect())
        .and_then(|ns| ns.into_iter().max());
    let mut out: Vec<usize> = common_in_box.into_iter().collect();
    for n in [8, 64, 512] {
        if reports.iter().any(|r| counts(r, true).contains(&n)) {
            out.push(n);
        }
    }
    for (i, r) in reports.iter().enumerate() {
        let Some(own) = counts(r, false).into_iter().max() else {
            continue;
        };
        let elsewhere = reports
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && counts(o, true).contains(&own));
        if elsewhere {
            out.push(own);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn rows<'a>(
    r: &'a Report,
    workload: &'a str,
    mode: Mode,
) -> impl Iterator<Item = &'a ScalingPoint> {
    r.scaling
        .iter()
        .flat_map(|s| s.run.rows.iter())
        .filter(move |x| x.workload == workload && x.mode == mode)
}

/// Ranks `reports` for `workload` in `mode` at each of `counts`. `prices[i]`, where given,
/// prices report `i` (else the prices its run was made with, if any).
pub fn rank(
    reports: &[&Report],
    workload: &str,
    mode: Mode,
    counts: &[usize],
    prices: &[Option<Pricing>],
) -> Ranking {
    let ranker = Ranker {
        reports,
        workload,
        mode,
        prices,
    };
    let mut groups: Vec<Group> = counts
        .iter()
        .map(|&n| Group {
            n_gpus: n,
            candidates: (0..reports.len())
                .filter_map(|i| ranker.candidate(i, n))
                .collect(),
        })
        .collect();
    // Medians left out first, so that what is ranked by is chosen among what is ranked.
    for g in &mut groups {
        leave_out_medians_among_means(&mut g.candidates);
    }
    let all = || groups.iter().flat_map(|g| g.candidates.iter());
    let by = if all().any(|c| c.cost_per_million.is_some()) {
        RankBy::Cost
    } else if all().any(|c| c.samples_per_joule.is_some()) {
        RankBy::SamplesPerJoule
    } else {
        RankBy::Throughput
    };
    for g in &mut groups {
        order(&mut g.candidates, by);
    }
    Ranking {
        workload: workload.to_string(),
        mode,
        by,
        machines: numbered(reports.iter().map(|r| r.title())),
        prices: (0..reports.len())
            .map(|i| ranker.pricing(i).map(|p| p.describe()))
            .collect(),
        groups,
        run_samples: None,
    }
}

/// What [`rank`] ranks: the reports, the workload and mode, and the prices stated for them.
struct Ranker<'a> {
    reports: &'a [&'a Report],
    workload: &'a str,
    mode: Mode,
    prices: &'a [Option<Pricing>],
}

impl Ranker<'_> {
    /// True where `row` is the model calibrated from this run's framework step and that step is
    /// a median (an earlier report): [`MEDIAN_MODEL_NOTE`].
    fn modeled_from_a_median(&self, r: &Report, row: &ScalingPoint) -> bool {
        row.source == RowSource::Modeled
            && row.calibration == Some(crate::scaling::calibrate::CalibrationKind::Framework)
            && r.scaling
                .iter()
                .flat_map(|s| s.run.rows.iter())
                // Either mode's step: a strong row may be modeled from the weak one.
                .any(|x| {
                    x.workload == self.workload
                        && x.n_gpus == 1
                        && x.step_statistic() == Some(StepStatistic::Median)
                })
    }

    /// Where `row` is the model's and the model missed this report's own measured step of the
    /// workload by more than [`MODEL_MISS`] at some GPU count (a framework row's
    /// `model_error`): the largest miss, in words — a projection from that model is no better.
    fn model_missed(&self, r: &Report, row: &ScalingPoint) -> Option<String> {
        if row.source != RowSource::Modeled {
            return None;
        }
        let worst = rows(r, self.workload, self.mode)
            .filter(|x| x.source == RowSource::Framework && x.n_gpus > 1)
            .filter_map(|x| Some((x.n_gpus, x.model_error?)))
            .filter(|(_, e)| e.is_finite() && e.abs() > MODEL_MISS)
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
        Some(format!(
            "the model missed this run's measured {} step by {:+.1} %: its figures here are no \
             closer",
            crate::model::quantities::gpus(worst.0),
            worst.1 * 100.0
        ))
    }

    /// The prices of report `i`: stated for this ranking, else those its run was made with.
    fn pricing(&self, i: usize) -> Option<Pricing> {
        self.prices
            .get(i)
            .copied()
            .flatten()
            .or_else(|| self.reports[i].scaling.as_ref().and_then(|s| s.run.pricing))
    }

    /// Report `i` as a candidate at `n` GPUs, with its figures and a note on what is missing
    /// (a left-out row with only its note); `None` when it has no row at `n`.
    fn candidate(&self, i: usize, n: usize) -> Option<Candidate> {
        let r = self.reports[i];
        let older = r.older_method().is_some();
        let at_n: Vec<&ScalingPoint> = rows(r, self.workload, self.mode)
            .filter(|x| x.n_gpus == n)
            .collect();
        let row = pick_row(&at_n, older)?;
        let kind = row_kind(row, older);
        // The row as a candidate without figures: what a left-out row shows.
        let bare = Candidate {
            machine: i,
            n_gpus: n,
            source: row.source,
            kind,
            projected: row.projected,
            throughput: None,
            watts_per_gpu: None,
            power_modeled: false,
            power_upper_bound: false,
            cost_needs_power: false,
            samples_per_joule: None,
            cost_per_million: None,
            step_statistic: row.step_statistic(),
            rank: None,
            note: String::new(),
        };
        if kind == Kind::LeftOut {
            return Some(Candidate {
                note: if row.source == RowSource::Proxy {
                    PROXY_LEFT_OUT
                } else {
                    OLDER_MODEL_LEFT_OUT
                }
                .to_string(),
                ..bare
            });
        }
        // A row whose power an earlier rule modeled keeps its throughput and loses its power
        // (and a cost that needs it): not today's model's, not to set beside it.
        let stale = r
            .scaling
            .as_ref()
            .is_some_and(|s| s.run.power_rule.stale_for(row));
        let unpowered;
        let row = if stale {
            unpowered = ScalingPoint {
                watts_per_gpu: None,
                samples_per_joule: None,
                energy_j_per_step: None,
                energy_basis: None,
                ..row.clone()
            };
            &unpowered
        } else {
            row
        };
        let gpus_per_node = r.topology.gpus.len();
        let cost = match (self.prices.get(i).copied().flatten(), stale) {
            // Prices stated for this ranking: the row at them.
            (Some(stated), _) => crate::scaling::cost::of_row(&stated, row, gpus_per_node),
            // The run's own prices, again without the power an earlier rule modeled.
            (None, true) => self
                .pricing(i)
                .and_then(|p| crate::scaling::cost::of_row(&p, row, gpus_per_node)),
            // The run's own prices (or none): the cost its rows carry, figured once when the
            // run was made.
            (None, false) => row.cost_per_million_samples,
        };
        let mut note = if stale {
            format!(
                "power not compared: {}",
                crate::scaling::power::STALE_POWER_NOTE
            )
        } else {
            row_note(row, self.pricing(i).is_some(), cost.is_some())
        };
        if self.modeled_from_a_median(r, row) {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(MEDIAN_MODEL_NOTE);
        }
        if let Some(miss) = self.model_missed(r, row) {
            if !note.is_empty() {
                note.push_str("; ");
            }
            note.push_str(&miss);
        }
        Some(Candidate {
            throughput: row.throughput,
            watts_per_gpu: row.watts_per_gpu,
            power_modeled: row.energy_basis == Some(crate::model::energy::EnergyBasis::Modeled),
            power_upper_bound: row.power_upper_bound(),
            cost_needs_power: matches!(self.pricing(i), Some(Pricing::Ownership { .. })),
            samples_per_joule: row.samples_per_joule,
            cost_per_million: cost,
            note,
            ..bare
        })
    }
}

/// Where some real framework steps of a group are the mean of their timed steps and others the
/// median (earlier reports), the medians are left out, with [`MEDIAN_LEFT_OUT`] and no
/// figures: a median is not a mean. Medians among medians only are ranked with each other.
fn leave_out_medians_among_means(cs: &mut [Candidate]) {
    let measured =
        |c: &Candidate, s: StepStatistic| c.kind == Kind::Measured && c.step_statistic == Some(s);
    if !cs.iter().any(|c| measured(c, StepStatistic::Mean)) {
        return;
    }
    for c in cs.iter_mut().filter(|c| measured(c, StepStatistic::Median)) {
        *c = Candidate {
            kind: Kind::LeftOut,
            throughput: None,
            watts_per_gpu: None,
            power_modeled: false,
            samples_per_joule: None,
            cost_per_million: None,
            note: MEDIAN_LEFT_OUT.to_string(),
            ..c.clone()
        };
    }
}

/// How a row ranks: a real framework step is measured; the current model's row is modeled;
/// a proxy row, or a modeled one of a report made with an older method (`older`), is left out.
fn row_kind(x: &ScalingPoint, older: bool) -> Kind {
    match x.source {
        RowSource::Framework => Kind::Measured,
        RowSource::Modeled if !older => Kind::Model,
        RowSource::Modeled | RowSource::Proxy => Kind::LeftOut,
    }
}

/// The row of a report's rows at one GPU count (`at_n`) that ranks it: a real framework step
/// where the run has one, else the current model's row; only where the machine has neither,
/// its proxy (what was measured) before its older-method row, left out. Rows with a
/// throughput come first.
fn pick_row<'a>(at_n: &[&'a ScalingPoint], older: bool) -> Option<&'a ScalingPoint> {
    let order = [
        (Kind::Measured, None),
        (Kind::Model, None),
        (Kind::LeftOut, Some(RowSource::Proxy)),
        (Kind::LeftOut, Some(RowSource::Modeled)),
    ];
    order
        .iter()
        .find_map(|(k, src)| {
            at_n.iter().find(|x| {
                row_kind(x, older) == *k
                    && src.is_none_or(|s| x.source == s)
                    && x.throughput.is_some()
            })
        })
        .or_else(|| at_n.iter().find(|x| row_kind(x, older) != Kind::LeftOut))
        .or_else(|| at_n.first())
        .copied()
}

/// What a row whose power is only its upper bound says: it is not ranked where power decides.
pub const POWER_BOUND_NOTE: &str = "power only its upper bound (this GPU's idle power unknown: \
     the board limit, or a reference's power kept whole; the basis says which): samples/J at least \
     this, an ownership cost at most this, not ranked by either against estimates";

/// What a ranked row lacks, in words: a fit, a throughput, a power figure (or one only at
/// its upper bound), a price (`priced`) or the power its cost needs (`costed`).
fn row_note(row: &ScalingPoint, priced: bool, costed: bool) -> String {
    let mut note = Vec::new();
    if row.fits == Some(false) {
        note.push("does not fit the GPU's memory".to_string());
    } else if row.throughput.is_none() {
        note.push("no throughput".to_string());
    } else {
        if row.watts_per_gpu.is_none() {
            note.push("no power figure".to_string());
        } else if row.power_upper_bound() {
            note.push(POWER_BOUND_NOTE.to_string());
        }
        if !priced {
            note.push("no price".to_string());
        } else if !costed {
            note.push("ownership needs power".to_string());
        }
    }
    note.join("; ")
}

/// Sorts measured candidates before modeled ones and those left out last, each best first by
/// `by` (those without the figure last, unranked), and numbers the ranks within each kind.
fn order(cs: &mut [Candidate], by: RankBy) {
    cs.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then_with(|| match (a.key(by), b.key(by)) {
                (Some(x), Some(y)) if by == RankBy::Cost => x.total_cmp(&y),
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.machine.cmp(&b.machine),
            })
    });
    let (mut measured, mut modeled) = (0, 0);
    for c in cs.iter_mut() {
        if c.key(by).is_none() {
            continue;
        }
        let k = match c.kind {
            Kind::Measured => &mut measured,
            Kind::Model => &mut modeled,
            Kind::LeftOut => continue,
        };
        *k += 1;
        c.rank = Some(*k);
    }
}

/// A figure as the ranking prints it: `~` marks the model's, `—` where unknown.
pub fn cell(v: Option<f64>, modeled: bool, decimals: usize) -> String {
    match v.filter(|v| v.is_finite()) {
        None => "—".to_string(),
        Some(v) => {
            let mark = if modeled { "~" } else { "" };
            if v.abs() >= 1e6 {
                format!("{mark}{v:.3e}")
            } else {
                format!("{mark}{v:.decimals$}")
            }
        }
    }
}

impl Candidate {
    /// The rank as printed: `1` measured, `~1` modeled, `—` unranked.
    pub fn rank_cell(&self) -> String {
        match self.rank {
            Some(k) if self.measured() => k.to_string(),
            Some(k) => format!("~{k}"),
            None => "—".to_string(),
        }
    }

    /// `measured`, `proxy`, `modeled` or `projected` (modeled beyond the box).
    pub fn source_word(&self) -> &'static str {
        match (self.source, self.projected) {
            (RowSource::Framework, _) => "measured",
            (RowSource::Proxy, _) => "proxy",
            (RowSource::Modeled, true) => "projected",
            (RowSource::Modeled, false) => "modeled",
        }
    }

    /// Seconds and cost of a run of `samples` samples at this candidate's samples/s and cost
    /// per million samples (each `None` where unknown).
    pub fn run_of(&self, samples: f64) -> (Option<f64>, Option<f64>) {
        let secs = self
            .throughput
            .filter(|t| t.is_finite() && *t > 0.0)
            .map(|t| samples / t);
        let cost = self.cost_per_million.map(|c| c * samples / 1e6);
        (secs, cost)
    }

    /// The time and cost of a run of `samples` as printed (`~` marks the model's).
    pub fn run_cells(&self, samples: f64) -> [String; 2] {
        let (secs, money) = self.run_of(samples);
        let time = match (duration(secs), self.measured()) {
            (t, false) if t != "—" => format!("~{t}"),
            (t, _) => t,
        };
        [
            time,
            crate::scaling::bound_mark(
                cell(
                    money,
                    !self.measured() || self.power_modeled,
                    significant(money, 3),
                ),
                self.power_upper_bound && self.cost_needs_power,
                '≤',
            ),
        ]
    }

    /// The figures as printed: samples/s, W/GPU, samples/J, cost/M.
    pub fn cells(&self) -> [String; 4] {
        let modeled = !self.measured();
        // Power at its upper bound: at most that many watts, at least that many samples/J
        // (`~≤350`: modeled, at most 350).
        let bound =
            |text: String, sign| crate::scaling::bound_mark(text, self.power_upper_bound, sign);
        [
            cell(self.throughput, modeled, 1),
            bound(
                cell(self.watts_per_gpu, modeled || self.power_modeled, 0),
                '≤',
            ),
            bound(
                cell(
                    self.samples_per_joule,
                    modeled || self.power_modeled,
                    significant(self.samples_per_joule, 4).max(3),
                ),
                '≥',
            ),
            // An ownership cost pays for the energy: at most the figure where power is.
            crate::scaling::bound_mark(
                cell(
                    self.cost_per_million,
                    modeled || self.power_modeled,
                    significant(self.cost_per_million, 3),
                ),
                self.power_upper_bound && self.cost_needs_power,
                '≤',
            ),
        ]
    }
}

/// Decimals that show `v` to `digits` significant digits (at least 2): a cost of 0.187 is
/// not printed as 0.19.
pub fn significant(v: Option<f64>, digits: i32) -> usize {
    match v.filter(|v| v.is_finite() && *v != 0.0) {
        Some(v) => (digits - 1 - v.abs().log10().floor() as i32).clamp(2, 9) as usize,
        None => 2,
    }
}

/// A sample count for a column head: `1.2e9 samples`, `50000 samples`.
fn count(n: f64) -> String {
    if n >= 1e6 {
        format!("{n:.2e} samples")
    } else {
        format!("{n:.0} samples")
    }
}

/// A duration as people read it: `45 s`, `12.5 min`, `3.2 h`, `4.1 days`; `—` when unknown.
pub fn duration(secs: Option<f64>) -> String {
    match secs.filter(|s| s.is_finite() && *s >= 0.0) {
        None => "—".to_string(),
        Some(s) if s < 90.0 => format!("{s:.0} s"),
        Some(s) if s < 5_400.0 => format!("{:.1} min", s / 60.0),
        Some(s) if s < 172_800.0 => format!("{:.1} h", s / 3_600.0),
        Some(s) => format!("{:.1} days", s / 86_400.0),
    }
}

/// The ranking as a terminal table, one block per GPU count.
pub fn to_table(r: &Ranking) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Purchase ranking: {}, {} scaling — by {}",
        crate::model::validate::one_line(&r.workload, 60),
        r.mode,
        r.by.words()
    );
    for (i, (m, p)) in r.machines.iter().zip(&r.prices).enumerate() {
        let _ = writeln!(
            out,
            "  [{}] {}: {}",
            letter(i),
            crate::model::validate::one_line(m, 80),
            p.as_deref().unwrap_or("no price")
        );
    }
    let mut header: Vec<String> = COLUMNS.map(str::to_string).to_vec();
    if let Some(n) = r.run_samples {
        header.push(format!("time for {}", count(n)));
        header.push("its cost".to_string());
    }
    header.push(String::new());
    let cols = header.len();
    for g in &r.groups {
        let _ = writeln!(out, "\nat {}", gpus(g.n_gpus));
        if g.candidates.is_empty() {
            let _ = writeln!(out, "  no machine has a row here");
            continue;
        }
        let mut lines: Vec<Vec<String>> = vec![header.clone()];
        for c in &g.candidates {
            let [thr, w, spj, cost] = c.cells();
            let mut line = vec![
                c.rank_cell(),
                format!("[{}]", letter(c.machine)),
                c.source_word().to_string(),
                thr,
                w,
                spj,
                cost,
            ];
            if let Some(n) = r.run_samples {
                line.extend(c.run_cells(n));
            }
            // A machine left out says why once, under the table.
            line.push(if c.kind == Kind::LeftOut {
                "not ranked (why: below)".to_string()
            } else {
                c.note.clone()
            });
            lines.push(line);
        }
        let widths: Vec<usize> = (0..cols)
            .map(|k| {
                lines
                    .iter()
                    .map(|l| l[k].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for l in &lines {
            let mut s = String::from(" ");
            for (k, v) in l.iter().enumerate() {
                let w = widths[k];
                if k == 1 || k == 2 || k == cols - 1 {
                    let _ = write!(s, " {v:<w$}");
                } else {
                    let _ = write!(s, " {v:>w$}");
                }
            }
            let _ = writeln!(out, "{}", s.trim_end());
        }
    }
    out.push_str(
        "\n~ the model's figure (projections beyond a box, catalog machines, modeled power),\n  \
         ranked apart from measured ones. samples/J counts GPU energy only; cost/M: the cost\n  \
         of a million samples at the prices above.\n",
    );
    for x in left_out(r) {
        // Wrapped at 100 columns, the next lines indented under the machine's letter.
        let mut line = String::new();
        for word in x.line(&format!("[{}]", letter(x.machine))).split(' ') {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > 100 {
                let _ = writeln!(out, "{line}");
                line = "   ".to_string();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A machine left out of the ranking at some counts, for one reason.
#[derive(Clone, Debug, PartialEq)]
pub struct LeftOut {
    /// Index of its report.
    pub machine: usize,
    /// The GPU counts it is left out at.
    pub n_gpus: Vec<usize>,
    /// Why (a candidate's note without its `not ranked: `).
    pub why: String,
}

impl LeftOut {
    /// The line printed under a ranking, `name` naming the machine: `[A] not ranked at 1, 2
    /// GPUs: a synthetic proxy step …`.
    pub fn line(&self, name: &str) -> String {
        let ns: Vec<String> = self.n_gpus.iter().map(usize::to_string).collect();
        let gpus = if self.n_gpus == [1] { "GPU" } else { "GPUs" };
        format!(
            "{name} not ranked at {} {gpus}: {}",
            ns.join(", "),
            self.why
        )
    }
}

/// The machines left out of the ranking, with why: the terminal table and the Compare view
/// print one line each under the ranking.
pub fn left_out(r: &Ranking) -> Vec<LeftOut> {
    let mut out: Vec<LeftOut> = Vec::new();
    for c in r.groups.iter().flat_map(|g| g.candidates.iter()) {
        if c.kind != Kind::LeftOut {
            continue;
        }
        let why = c.note.trim_start_matches("not ranked: ");
        match out
            .iter_mut()
            .find(|x| x.machine == c.machine && x.why == why)
        {
            Some(x) => x.n_gpus.push(c.n_gpus),
            None => out.push(LeftOut {
                machine: c.machine,
                n_gpus: vec![c.n_gpus],
                why: why.to_string(),
            }),
        }
    }
    out
}

/// The ranking's columns, as the terminal table and the Compare view head them.
pub const COLUMNS: [&str; 7] = [
    "rank",
    "machine",
    "source",
    "samples/s",
    "W/GPU",
    "samples/J",
    "cost/M",
];

/// A report's column letter: A, B, … Z, then A again.
pub fn letter(i: usize) -> char {
    (b'A' + (i % 26) as u8) as char
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(machine: usize, source: RowSource, cost: Option<f64>) -> Candidate {
        Candidate {
            machine,
            n_gpus: 8,
            source,
            kind: match source {
                RowSource::Framework => Kind::Measured,
                RowSource::Modeled => Kind::Model,
                RowSource::Proxy => Kind::LeftOut,
            },
            projected: false,
            throughput: Some(100.0),
            watts_per_gpu: None,
            power_modeled: false,
            power_upper_bound: false,
            cost_needs_power: false,
            samples_per_joule: None,
            cost_per_million: cost,
            step_statistic: (source == RowSource::Framework).then_some(StepStatistic::Mean),
            rank: None,
            note: String::new(),
        }
    }

    #[test]
    fn measured_and_modeled_are_ranked_apart_cheapest_first() {
        let mut cs = vec![
            c(0, RowSource::Modeled, Some(3.0)),
            c(1, RowSource::Framework, Some(5.0)),
            c(2, RowSource::Framework, None),
            c(3, RowSource::Framework, Some(4.0)),
            c(4, RowSource::Modeled, Some(1.0)),
        ];
        order(&mut cs, RankBy::Cost);
        let got: Vec<(usize, String)> = cs.iter().map(|c| (c.machine, c.rank_cell())).collect();
        assert_eq!(
            got,
            [
                (3, "1".into()),
                (1, "2".into()),
                (2, "—".into()),
                (4, "~1".into()),
                (0, "~2".into())
            ]
        );
    }

    #[test]
    fn costs_keep_three_significant_digits() {
        assert_eq!(
            cell(Some(0.18734), false, significant(Some(0.18734), 3)),
            "0.187"
        );
        assert_eq!(cell(Some(12.5), true, significant(Some(12.5), 3)), "~12.50");
        assert_eq!(
            cell(Some(0.000512), false, significant(Some(0.000512), 3)),
            "0.000512"
        );
    }

    #[test]
    fn a_run_of_n_samples_takes_its_time_and_cost() {
        let mut a = c(0, RowSource::Framework, Some(0.2));
        a.throughput = Some(4_000.0);
        // 1.2 billion samples at 4,000/s: 300,000 s = 3.5 days; at 0.2 per million: 240.
        let (secs, cost) = a.run_of(1.2e9);
        assert_eq!(secs, Some(300_000.0));
        assert!((cost.unwrap() - 240.0).abs() < 1e-9);
        assert_eq!(duration(secs), "3.5 days");
        assert_eq!(duration(Some(45.0)), "45 s");
        assert_eq!(duration(Some(600.0)), "10.0 min");
        assert_eq!(duration(None), "—");
    }

    /// The Compare tab's example of issue U: the bundled 1× H100 (a real framework step) and
    /// 2× H200 (a proxy step, the older method) at one GPU. The proxy is not ranked against the
    /// framework step; it is listed without figures, and why.
    #[test]
    fn a_proxy_step_is_never_ranked_against_a_framework_step() {
        let reports: Vec<Report> = crate::report::bundled::reports()
            .into_iter()
            .map(|(_, r)| r.unwrap())
            .collect();
        let refs: Vec<&Report> = reports.iter().collect();
        let rk = rank(&refs, "resnet50", Mode::Weak, &[1, 2], &[]);
        let mut proxies = 0;
        for c in rk.groups.iter().flat_map(|g| g.candidates.iter()) {
            let row_source = c.source;
            match c.kind {
                Kind::Measured => assert_eq!(row_source, RowSource::Framework, "{c:?}"),
                Kind::Model => assert_eq!(row_source, RowSource::Modeled, "{c:?}"),
                Kind::LeftOut => {
                    assert_eq!(c.rank, None, "{c:?}");
                    assert_eq!(c.throughput, None, "{c:?}");
                    assert!(c.note.starts_with("not ranked: "), "{c:?}");
                    proxies += usize::from(row_source == RowSource::Proxy);
                }
            }
        }
        let lines = left_out(&rk);
        if proxies > 0 {
            assert!(
                lines.iter().any(|x| x.why.contains("synthetic proxy step")),
                "{lines:?}"
            );
            assert!(to_table(&rk).contains("not ranked at"), "{}", to_table(&rk));
        }
    }

    /// A median step (an earlier report) beside mean steps is left out, without
    /// figures and with why; medians alone rank among themselves.
    #[test]
    fn a_median_step_is_not_ranked_against_means() {
        let median = |m: usize, cost: f64| Candidate {
            step_statistic: Some(StepStatistic::Median),
            ..c(m, RowSource::Framework, Some(cost))
        };
        // The median reads cheapest (its step shortest): were it ranked, it would be first.
        let mut cs = vec![
            c(0, RowSource::Framework, Some(5.0)),
            median(1, 4.0),
            c(2, RowSource::Modeled, Some(1.0)),
        ];
        leave_out_medians_among_means(&mut cs);
        order(&mut cs, RankBy::Cost);
        let got: Vec<(usize, String)> = cs.iter().map(|c| (c.machine, c.rank_cell())).collect();
        assert_eq!(got, [(0, "1".into()), (2, "~1".into()), (1, "—".into())]);
        let left = &cs[2];
        assert_eq!((left.kind, left.cost_per_million), (Kind::LeftOut, None));
        assert!(left.note.contains("median of its timed steps"), "{left:?}");
        let mut only = vec![median(0, 5.0), median(1, 4.0)];
        leave_out_medians_among_means(&mut only);
        order(&mut only, RankBy::Cost);
        let ranks: Vec<String> = only.iter().map(Candidate::rank_cell).collect();
        assert_eq!(ranks, ["1", "2"]);
        assert_eq!(only[0].machine, 1);
    }

    #[test]
    fn more_is_better_for_samples_per_joule() {
        let mut a = c(0, RowSource::Framework, None);
        a.samples_per_joule = Some(2.0);
        let mut b = c(1, RowSource::Framework, None);
        b.samples_per_joule = Some(3.0);
        let mut cs = vec![a, b];
        order(&mut cs, RankBy::SamplesPerJoule);
        assert_eq!(cs[0].machine, 1);
        assert_eq!(cs[0].rank, Some(1));
    }
}
