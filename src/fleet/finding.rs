//! One finding about one node of a fleet ([`Finding`], [`FindingKind`]), the outlier rule
//! ([`worse_verdict`]) and how a fleet figure is written ([`figure_text`]): shared by the
//! judgement of node reports (`report.rs`) and of the runs between nodes (`between.rs`).

use serde::Serialize;

use crate::health::Verdict;
use crate::health::thresholds::FleetThresholds;

/// What a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The node's report could not be read.
    Unreadable,
    /// A field differs from the fleet's majority.
    Consistency,
    /// A figure is worse than the fleet's median by more than the rule allows.
    Outlier,
    /// A check of the node's own health verdict below PASS.
    Health,
    /// The node's all-reduce with other nodes (`fleet run --between`) is slow or failed.
    Between,
    /// A figure of the node's report above the line rate of the links it crossed: a
    /// measurement to distrust, left out of the fleet's comparison (UNKNOWN).
    Implausible,
}

impl FindingKind {
    /// The word CSV and the terminal use.
    pub fn word(self) -> &'static str {
        match self {
            Self::Unreadable => "unreadable",
            Self::Consistency => "consistency",
            Self::Outlier => "outlier",
            Self::Health => "health",
            Self::Between => "between",
            Self::Implausible => "implausible",
        }
    }
}

/// One finding about one node.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub verdict: Verdict,
    /// The field (`driver`, `pcie`), figure (`h2d`, `all_reduce nccl busbw`, `step_time`) or
    /// health check id (`pcie_link`).
    pub field: String,
    /// `GPU 3`, `GPU 0→1`, `8 GPUs @ 1 GiB`; `None` for a node-wide field.
    pub subject: Option<String>,
    pub gpu: Option<usize>,
    pub peer: Option<usize>,
    /// The node's value (consistency: as text; outliers: the figure).
    pub value: Option<String>,
    /// The fleet's value: the majority's, or the median.
    pub fleet_value: Option<String>,
    /// Outliers: the node's figure, the fleet's median, and the difference in % of the median.
    pub figure: Option<f64>,
    pub median: Option<f64>,
    pub deviation_percent: Option<f64>,
    pub unit: Option<String>,
    /// The finding as one sentence.
    pub detail: String,
}

/// The outlier rule: a figure `worse` than the median (in its unit) by more than `spread`
/// (mad_k × the scaled MAD) and by more than the fail or warn share of the median; `None`
/// when it is within.
pub fn worse_verdict(
    worse: f64,
    median: f64,
    spread: f64,
    rules: &FleetThresholds,
) -> Option<Verdict> {
    if worse > spread.max(rules.fail * median.abs()) {
        Some(Verdict::Fail)
    } else if worse > spread.max(rules.warn * median.abs()) {
        Some(Verdict::Warn)
    } else {
        None
    }
}

/// A figure with three significant digits or more (`52.3`, `1234`, `0.0412`).
pub fn figure_text(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The median of the finite figures (`model::median`, the one every figure is reported with);
/// NaN where there are none, so that no spread or outlier follows from it.
pub(super) fn median_of(xs: &[f64]) -> f64 {
    crate::model::median(xs).unwrap_or(f64::NAN)
}
