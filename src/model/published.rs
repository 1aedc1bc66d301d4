//! Published figures: what others measured, stated or set as a floor on a machine like a
//! catalog entry, each with the conditions it was read under and where it was published. The
//! catalog carries them (`[[reference]]` in `assets/hardware/*.toml`); the report, the app and
//! `check` show them beside scalescope's own figure with the conditions that differ.
//!
//! A published figure is never scalescope's measurement and never a line rate: it answers "is
//! my number what this kind of machine gives elsewhere?", with the caveats its conditions carry.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::validate::{Bounds, GBPS};
use super::{
    Algo, BandwidthResult, CollectiveOp, CollectiveResult, Method, Shape, Source, Status, TestId,
    headline,
};

/// Which of scalescope's figures a published one stands beside: a copy test's (`h2d`,
/// `p2p_read_ce`, …: GB/s, or ns for the latency tests) or a collective's bus bandwidth
/// (`all_reduce`, …: nccl-tests' busbw).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Figure {
    /// A copy or latency test.
    Copy(TestId),
    /// A collective's busbw.
    Collective(CollectiveOp),
}

impl Figure {
    /// The figure with this id: a test id or a collective's id.
    pub fn from_id(id: &str) -> Option<Figure> {
        TestId::from_id(id)
            .map(Figure::Copy)
            .or_else(|| CollectiveOp::from_id(id).map(Figure::Collective))
    }

    /// The id the catalog writes, e.g. `h2d`, `all_reduce`.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Copy(t) => t.id(),
            Self::Collective(op) => op.id(),
        }
    }

    /// The unit its values carry.
    pub fn unit(&self) -> Unit {
        match self {
            Self::Copy(t) if t.is_latency() => Unit::Ns,
            _ => Unit::Gbps,
        }
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Copy(t) => f.write_str(t.id()),
            Self::Collective(op) => write!(f, "{op} busbw"),
        }
    }
}

impl Serialize for Figure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Figure::from_id(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown figure {}: expected a test id (h2d, p2p_read_ce, …) or a collective (all_reduce, all_gather, reduce_scatter, broadcast, alltoall, sendrecv)",
                super::validate::quoted(&s)
            ))
        })
    }
}

/// The unit of a published value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// 10⁹ bytes per second.
    #[serde(rename = "GB/s")]
    Gbps,
    /// Nanoseconds per access (the latency tests).
    #[serde(rename = "ns")]
    Ns,
}

impl Unit {
    /// The values a file may state in this unit: [`GBPS`] above 0, or above 0 to 1 s.
    pub fn bounds(&self) -> Bounds {
        match self {
            Self::Gbps => Bounds::above(0.0, GBPS.max, "GB/s"),
            Self::Ns => Bounds::above(0.0, 1e9, "ns"),
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Gbps => "GB/s",
            Self::Ns => "ns",
        })
    }
}

/// What a published value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Someone ran the tool and printed this figure.
    Measured,
    /// A vendor or maintainer stated what the machine should reach.
    Stated,
    /// An acceptance floor: a health check fails a machine below it.
    Threshold,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Measured => "measured",
            Self::Stated => "stated",
            Self::Threshold => "threshold",
        })
    }
}

/// The conditions a published figure was read under; a field left out is not stated there.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conditions {
    /// What it ran on, as the source names it (`Azure ND H100 v5`).
    pub machine: Option<String>,
    /// The tool and test as the source ran them (`nvbandwidth host_to_device_memcpy_ce`).
    pub test: Option<String>,
    /// Message or buffer size, bytes (nccl-tests' size column, nvbandwidth's buffer).
    pub bytes: Option<u64>,
    /// GPUs taking part.
    pub gpus: Option<usize>,
    /// Copy engine or SM copy kernel (copy figures).
    pub method: Option<Method>,
    /// NCCL's version, e.g. `2.18.5`.
    pub nccl: Option<String>,
    /// NVLink SHARP (NCCL's NVLS algorithms) on or off.
    pub nvls: Option<bool>,
    /// In-network reduction over InfiniBand (SHARP, NCCL's CollNet) on or off.
    pub sharp: Option<bool>,
    /// nccl-tests' in-place columns (true) or out-of-place (false).
    pub in_place: Option<bool>,
    /// The NVIDIA driver's version.
    pub driver: Option<String>,
}

/// Where a published figure was published: enough to find it again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    /// The document, page or thread's title.
    pub title: String,
    /// Its address.
    pub url: Option<String>,
    /// A GitHub repository, `owner/name` ...
    pub repository: Option<String>,
    /// ... and the file in it, ...
    pub file: Option<String>,
    /// ... or its issue or pull request number ...
    pub issue: Option<u32>,
    /// ... and the commit the file was read at.
    pub commit: Option<String>,
    /// When it was published (or the file changed to this value): `YYYY-MM-DD` or `YYYY-MM`.
    pub date: String,
}

impl Citation {
    /// `Ok` when it names a title, a date (`YYYY-MM-DD` or `YYYY-MM`) and a place to find it
    /// (a URL or a repository); else what is missing.
    pub fn check(&self) -> Result<(), String> {
        if self.title.trim().is_empty() {
            return Err(
                "source.title is empty: a published figure names where it was published".into(),
            );
        }
        if self.url.as_deref().is_none_or(|u| u.trim().is_empty())
            && self
                .repository
                .as_deref()
                .is_none_or(|r| r.trim().is_empty())
        {
            return Err(
                "source has neither url nor repository: a published figure says where to find it"
                    .into(),
            );
        }
        if let Some(u) = &self.url
            && !(u.starts_with("https://") || u.starts_with("http://"))
        {
            return Err(format!(
                "source.url {} is not an http(s) address",
                super::validate::quoted(u)
            ));
        }
        if let Some(r) = &self.repository {
            let parts: Vec<&str> = r.split('/').collect();
            if parts.len() != 2 || parts.iter().any(|p| p.is_empty()) {
                return Err(format!(
                    "source.repository {} is not owner/name",
                    super::validate::quoted(r)
                ));
            }
        }
        if !date_ok(&self.date) {
            return Err(format!(
                "source.date {} is not YYYY-MM-DD or YYYY-MM",
                super::validate::quoted(&self.date)
            ));
        }
        Ok(())
    }

    /// Where to find it, short: the repository and file or issue (else the title and URL),
    /// and the date: `Azure/azurehpc-health-checks conf/nd96isr_h100_v5.conf, 2024-06-28`.
    pub fn short(&self) -> String {
        let place = match (&self.repository, &self.file, self.issue) {
            (Some(r), Some(f), _) => format!("{r} {f}"),
            (Some(r), None, Some(i)) => format!("{r}#{i}"),
            _ => format!(
                "{} {}",
                self.title,
                self.url
                    .as_deref()
                    .or(self.repository.as_deref())
                    .unwrap_or_default()
            ),
        };
        format!("{place}, {}", self.date)
    }
}

/// `YYYY-MM-DD` or `YYYY-MM` with a month of 1–12 and a day of 1–31.
fn date_ok(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let num = |p: &str, len: usize, lo: u32, hi: u32| {
        p.len() == len
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|v| (lo..=hi).contains(&v))
    };
    match parts.as_slice() {
        [y, m] => num(y, 4, 1990, 2100) && num(m, 2, 1, 12),
        [y, m, d] => num(y, 4, 1990, 2100) && num(m, 2, 1, 12) && num(d, 2, 1, 31),
        _ => false,
    }
}

/// The GPU counts a published figure may state: a cluster's (CoreWeave's 20 racks are 1,440
/// GPUs), so beyond the [`super::MAX_GPUS`] of one machine scalescope reads, up to a million.
pub const PUBLISHED_GPUS: Bounds = Bounds::closed(1.0, 1e6, "GPUs");

/// One published figure (`[[reference]]` in a catalog file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// The figure of scalescope's it stands beside.
    pub figure: Figure,
    pub kind: Kind,
    pub value: f64,
    pub unit: Unit,
    #[serde(default)]
    pub conditions: Conditions,
    pub source: Citation,
    /// A fact about the figure a reader needs (how the source aggregated it, what it left out).
    pub note: Option<String>,
}

impl Reference {
    /// `Ok` when the value is in its unit's bounds, the unit is the figure's, the GPU count and
    /// size are possible and the source can be found; else the field at fault and why.
    pub fn check(&self) -> Result<(), String> {
        if self.unit != self.figure.unit() {
            return Err(format!(
                "unit: {} is in {}, not {}",
                self.figure,
                self.figure.unit(),
                self.unit
            ));
        }
        self.unit
            .bounds()
            .check(self.value)
            .map_err(|e| format!("value: {e}"))?;
        if let Some(n) = self.conditions.gpus {
            PUBLISHED_GPUS
                .check(n as f64)
                .map_err(|e| format!("conditions.gpus: {e}"))?;
        }
        if let Some(b) = self.conditions.bytes {
            Bounds::closed(1.0, (1u64 << 50) as f64, "bytes")
                .check(b as f64)
                .map_err(|e| format!("conditions.bytes: {e}"))?;
        }
        self.source.check()
    }

    /// `478.9 GB/s measured`, `460 GB/s threshold`.
    pub fn value_text(&self) -> String {
        format!("{} {} {}", round(self.value), self.unit, self.kind)
    }

    /// The conditions stated there, in words: `8 GPUs, 8 GiB, NVLS on, NCCL 2.18.5`.
    pub fn conditions_text(&self) -> String {
        let c = &self.conditions;
        let mut out: Vec<String> = Vec::new();
        if let Some(m) = &c.machine {
            out.push(m.clone());
        }
        if let Some(n) = c.gpus {
            out.push(format!("{n} GPUs"));
        }
        if let Some(b) = c.bytes {
            out.push(super::quantities::format_bytes(b));
        }
        if let Some(m) = c.method {
            out.push(method_words(m).into());
        }
        if let Some(v) = c.nvls {
            out.push(format!("NVLS {}", on_off(v)));
        }
        if let Some(v) = c.sharp {
            out.push(format!("SHARP {}", on_off(v)));
        }
        if let Some(v) = c.in_place {
            out.push(if v { "in place" } else { "out of place" }.into());
        }
        if let Some(v) = &c.nccl {
            out.push(format!("NCCL {v}"));
        }
        if let Some(v) = &c.driver {
            out.push(format!("driver {v}"));
        }
        if let Some(t) = &c.test {
            out.push(t.clone());
        }
        out.join(", ")
    }

    /// The conditions stated both there and here that differ, in words (`NVLS on there, off
    /// here`); a condition stated there and not known here says so (`NVLS on there, not known
    /// here`).
    pub fn differences(&self, here: &Here) -> Vec<String> {
        let c = &self.conditions;
        let mut out = Vec::new();
        let mut differ =
            |what: &str, there: Option<String>, here: Option<String>| match (there, here) {
                (Some(t), Some(h)) if t != h => out.push(format!("{what}{t} there, {h} here")),
                (Some(t), None) if what == "NVLS " => {
                    out.push(format!("{what}{t} there, not known here"))
                }
                _ => {}
            };
        differ(
            "",
            c.gpus.map(|n| format!("{n} GPUs")),
            here.gpus.map(|n| format!("{n} GPUs")),
        );
        differ(
            "",
            c.bytes.map(super::quantities::format_bytes),
            here.bytes.map(super::quantities::format_bytes),
        );
        differ(
            "",
            c.method.map(|m| method_words(m).to_string()),
            here.method.map(|m| method_words(m).to_string()),
        );
        if matches!(self.figure, Figure::Collective(CollectiveOp::AllReduce)) {
            differ(
                "NVLS ",
                c.nvls.map(|v| on_off(v).to_string()),
                here.nvls.map(|v| on_off(v).to_string()),
            );
        }
        differ(
            "",
            c.in_place
                .map(|v| if v { "in place" } else { "out of place" }.to_string()),
            here.in_place
                .map(|v| if v { "in place" } else { "out of place" }.to_string()),
        );
        differ("NCCL ", c.nccl.clone(), here.nccl.clone());
        differ("driver ", c.driver.clone(), here.driver.clone());
        out
    }

    /// True when every condition that decides the figure (GPUs, size, copy method, NVLS,
    /// in place) is the same there as here where both state it, and those that must be known
    /// are on both sides: the GPU count for collectives and for the copies that involve every
    /// GPU at once, NVLS for all-reduce, the copy method for copies. Then the figure can judge
    /// ours.
    pub fn matches(&self, here: &Here) -> bool {
        let c = &self.conditions;
        let same = |a: Option<String>, b: Option<String>| match (a, b) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let (gpus_decide, method_decides) = match self.figure {
            Figure::Collective(_) => (true, false),
            Figure::Copy(t) => (
                matches!(
                    t.shape(),
                    Shape::Fan { .. } | Shape::AllPairs | Shape::HostAll { .. }
                ),
                true,
            ),
        };
        let nvls_known = !matches!(self.figure, Figure::Collective(CollectiveOp::AllReduce))
            || (c.nvls.is_some() && here.nvls.is_some());
        (!gpus_decide || (c.gpus.is_some() && c.gpus == here.gpus))
            && (!method_decides || (c.method.is_some() && c.method == here.method))
            && nvls_known
            && same(
                c.bytes.map(|b| b.to_string()),
                here.bytes.map(|b| b.to_string()),
            )
            && same(
                c.method.map(|m| m.to_string()),
                here.method.map(|m| m.to_string()),
            )
            && same(
                c.nvls.map(|v| v.to_string()),
                here.nvls.map(|v| v.to_string()),
            )
            && same(
                c.in_place.map(|v| v.to_string()),
                here.in_place.map(|v| v.to_string()),
            )
    }
}

fn on_off(v: bool) -> &'static str {
    if v { "on" } else { "off" }
}

fn method_words(m: Method) -> &'static str {
    match m {
        Method::Ce => "copy engine",
        Method::Sm => "SM copy",
    }
}

/// A figure for text: three significant digits or the whole part (`478.9`, `48`, `0.977`).
fn round(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}").trim_end_matches(".0").to_string()
    } else {
        format!("{v:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// The conditions of scalescope's own figure, as far as the report knows them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Here {
    pub gpus: Option<usize>,
    pub bytes: Option<u64>,
    pub method: Option<Method>,
    pub nvls: Option<bool>,
    pub in_place: Option<bool>,
    pub nccl: Option<String>,
    pub driver: Option<String>,
}

/// Scalescope's figure a published one stands beside, and how it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct Ours {
    /// GB/s, or ns for the latency tests.
    pub value: f64,
    /// Where `value` is the worst of this many cells (against a threshold), not their median.
    pub worst_of: Option<usize>,
    /// The slowest cell where `value` is a median the slowest is more than 10 % under (one GPU
    /// at Gen5 x8 beside one at x16: a median of 41.5 GB/s that no GPU has); shown beside it.
    pub slowest: Option<f64>,
    pub source: Source,
    pub here: Here,
}

/// Our figure for `reference` from a report's results: a copy test's headline (median over
/// its cells at [`super::headline_size`]), or a collective's busbw at the reference's size
/// (else the largest run), NCCL's run first, the most GPUs, in place as the reference states
/// where the report has such rows.
/// `None` when the report has no such figure. `gpus` is the machine's GPU count; `driver` its
/// driver's version where known.
pub fn ours(
    reference: &Reference,
    bandwidth: &[BandwidthResult],
    collectives: &[CollectiveResult],
    gpus: usize,
    driver: Option<&str>,
) -> Option<Ours> {
    match reference.figure {
        Figure::Copy(test) => {
            let h = headline(bandwidth, test)?;
            // A threshold is a floor every GPU (pair) must meet, as the health checks that
            // publish them judge each one: the worst cell stands against it, not the median.
            let floor = reference.kind == Kind::Threshold && h.cells > 1;
            Some(Ours {
                value: if floor { h.worst } else { h.median },
                worst_of: floor.then_some(h.cells),
                slowest: (!floor && h.cells > 1 && h.worst < 0.9 * h.median).then_some(h.worst),
                source: if h.modeled {
                    Source::Modeled
                } else {
                    Source::Measured
                },
                here: Here {
                    gpus: Some(gpus),
                    bytes: Some(h.bytes),
                    method: Some(test.method()),
                    driver: driver.map(str::to_string),
                    ..Here::default()
                },
            })
        }
        Figure::Collective(op) => {
            let all: Vec<&CollectiveResult> = collectives
                .iter()
                .filter(|c| c.op == op && c.status == Status::Ok && c.busbw_gbps.is_some())
                .collect();
            // In place as the reference states where the report has such rows; else what it has
            // (the difference is then named).
            let want = reference.conditions.in_place;
            let ok: Vec<&CollectiveResult> =
                if all.iter().any(|c| want.is_none_or(|v| c.in_place == v)) {
                    all.into_iter()
                        .filter(|c| want.is_none_or(|v| c.in_place == v))
                        .collect()
                } else {
                    all
                };
            let algo = if ok.iter().any(|c| c.algo == Algo::Nccl) {
                Algo::Nccl
            } else {
                ok.first()?.algo
            };
            let n = ok
                .iter()
                .filter(|c| c.algo == algo)
                .map(|c| c.gpus.len())
                .max()?;
            let runs: Vec<&&CollectiveResult> = ok
                .iter()
                .filter(|c| c.algo == algo && c.gpus.len() == n)
                .collect();
            let at = reference
                .conditions
                .bytes
                .filter(|b| runs.iter().any(|c| c.bytes == *b))
                .or_else(|| runs.iter().map(|c| c.bytes).max())?;
            let best = runs.iter().filter(|c| c.bytes == at).max_by(|a, b| {
                a.busbw_gbps
                    .unwrap_or(0.0)
                    .total_cmp(&b.busbw_gbps.unwrap_or(0.0))
            })?;
            Some(Ours {
                value: best.busbw_gbps?,
                worst_of: None,
                slowest: None,
                source: best.source,
                here: Here {
                    gpus: Some(n),
                    bytes: Some(at),
                    // Scalescope's own ring and tree never use NVLink SHARP; what NCCL chose
                    // is not recorded.
                    nvls: (algo != Algo::Nccl).then_some(false),
                    in_place: Some(best.in_place),
                    nccl: best
                        .backend_version
                        .as_deref()
                        .and_then(|v| v.strip_prefix("NCCL "))
                        .map(|v| v.split(['+', ' ']).next().unwrap_or(v).to_string()),
                    driver: driver.map(str::to_string),
                    ..Here::default()
                },
            })
        }
    }
}

/// How `figure` (ours, in the reference's unit) fares against a matching published one: a
/// threshold passes at or above its value and fails below; a measured or stated figure is a
/// target, ours ÷ it judged by `pass` and `warn` as line-rate ratios are. For latency (ns),
/// lower is better: the ratio is inverted. Returns (0 pass / 1 warn / 2 fail, the ratio).
pub fn judge(reference: &Reference, figure: f64, pass: f64, warn: f64) -> (u8, f64) {
    let ratio = match reference.unit {
        Unit::Ns => reference.value / figure,
        Unit::Gbps => figure / reference.value,
    };
    let level = match reference.kind {
        Kind::Threshold if ratio >= 1.0 => 0,
        Kind::Threshold => 2,
        _ if ratio >= pass => 0,
        _ if ratio >= warn => 1,
        _ => 2,
    };
    (level, ratio)
}

/// One line for a terminal or a table cell: `published: 478.9 GB/s measured (8 GPUs, 8 GiB,
/// NVLS on, NCCL 2.18.5) — Azure AI benchmarking guide, …, 2024-09-24; ours 352 GB/s measured;
/// differs: NVLS on there, not known here`.
pub fn beside_line(reference: &Reference, ours: Option<&Ours>) -> String {
    let mut line = format!("published {}: {}", reference.figure, reference.value_text());
    let cond = reference.conditions_text();
    if !cond.is_empty() {
        line.push_str(&format!(" ({cond})"));
    }
    line.push_str(&format!(" — {}", reference.source.short()));
    match ours {
        Some(o) => {
            let worst = o
                .worst_of
                .map(|n| format!(", the slowest of {n}"))
                .unwrap_or_default();
            line.push_str(&format!(
                "; here {} {} {}{worst} ({:.0} % of it)",
                round(o.value),
                reference.unit,
                o.source,
                o.value / reference.value * 100.0
            ));
            if let Some(w) = o.slowest {
                line.push_str(&format!(
                    "; the slowest here {} ({:.0} %)",
                    round(w),
                    w / reference.value * 100.0
                ));
            }
            let d = reference.differences(&o.here);
            if !d.is_empty() {
                line.push_str(&format!("; differs: {}", d.join(", ")));
            }
        }
        None => line.push_str("; not run here"),
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference() -> Reference {
        Reference {
            figure: Figure::Collective(CollectiveOp::AllReduce),
            kind: Kind::Measured,
            value: 478.87,
            unit: Unit::Gbps,
            conditions: Conditions {
                gpus: Some(8),
                bytes: Some(8 << 30),
                nvls: Some(true),
                in_place: Some(true),
                nccl: Some("2.18.5".into()),
                ..Conditions::default()
            },
            source: Citation {
                title: "Azure ND H100 v5 benchmark results".into(),
                repository: Some("Azure/AI-benchmarking-guide".into()),
                file: Some("Azure_Results/ND_H100_v5_results.md".into()),
                date: "2024-09-24".into(),
                ..Citation::default()
            },
            note: None,
        }
    }

    #[test]
    fn figure_ids_cover_tests_and_collectives_and_keep_units() {
        assert_eq!(Figure::from_id("h2d"), Some(Figure::Copy(TestId::H2d)));
        assert_eq!(
            Figure::from_id("all_reduce"),
            Some(Figure::Collective(CollectiveOp::AllReduce))
        );
        assert_eq!(Figure::from_id("latency_d2d").unwrap().unit(), Unit::Ns);
        assert_eq!(Figure::from_id("nope"), None);
    }

    #[test]
    fn a_reference_without_a_source_or_out_of_range_is_refused() {
        assert_eq!(reference().check(), Ok(()));
        let mut r = reference();
        r.source.url = None;
        r.source.repository = None;
        assert!(
            r.check()
                .unwrap_err()
                .contains("neither url nor repository")
        );
        let mut r = reference();
        r.source.title = " ".into();
        assert!(r.check().unwrap_err().starts_with("source.title"));
        let mut r = reference();
        r.source.date = "24 Sept".into();
        assert!(r.check().unwrap_err().starts_with("source.date"));
        for bad in [0.0, -1.0, f64::NAN, 2e5] {
            let mut r = reference();
            r.value = bad;
            assert!(r.check().unwrap_err().starts_with("value: "), "{bad}");
        }
        let mut r = reference();
        r.unit = Unit::Ns;
        assert!(r.check().unwrap_err().starts_with("unit: "));
        let mut r = reference();
        r.conditions.gpus = Some(0);
        assert!(r.check().unwrap_err().starts_with("conditions.gpus: "));
    }

    #[test]
    fn differences_name_both_sides_and_matching_needs_the_deciding_conditions() {
        let r = reference();
        let here = Here {
            gpus: Some(2),
            bytes: Some(8 << 30),
            nvls: Some(false),
            in_place: Some(true),
            ..Here::default()
        };
        assert_eq!(
            r.differences(&here),
            vec!["8 GPUs there, 2 GPUs here", "NVLS on there, off here"]
        );
        assert!(!r.matches(&here));
        let same = Here {
            gpus: Some(8),
            nvls: Some(true),
            ..here.clone()
        };
        assert!(r.differences(&same).is_empty());
        assert!(r.matches(&same));
        // NCCL chose: NVLS not known here, so the figure cannot judge ours.
        let unknown = Here { nvls: None, ..same };
        assert_eq!(
            r.differences(&unknown),
            vec!["NVLS on there, not known here"]
        );
        assert!(!r.matches(&unknown));
    }

    #[test]
    fn a_copy_floor_matches_by_method_and_judges_by_kind() {
        let floor = Reference {
            figure: Figure::Copy(TestId::H2d),
            kind: Kind::Threshold,
            value: 48.0,
            unit: Unit::Gbps,
            conditions: Conditions {
                method: Some(Method::Ce),
                ..Conditions::default()
            },
            ..reference()
        };
        let ce = Here {
            gpus: Some(2),
            bytes: Some(512 << 20),
            method: Some(Method::Ce),
            ..Here::default()
        };
        assert!(floor.matches(&ce));
        assert!(!floor.matches(&Here {
            method: Some(Method::Sm),
            ..ce.clone()
        }));
        assert_eq!(judge(&floor, 50.0, 0.9, 0.75).0, 0);
        assert_eq!(judge(&floor, 47.9, 0.9, 0.75).0, 2);
        let target = Reference {
            kind: Kind::Measured,
            ..floor.clone()
        };
        assert_eq!(judge(&target, 40.0, 0.9, 0.75).0, 1);
        let latency = Reference {
            figure: Figure::Copy(TestId::LatencyD2d),
            kind: Kind::Measured,
            value: 800.0,
            unit: Unit::Ns,
            ..floor
        };
        assert_eq!(judge(&latency, 850.0, 0.9, 0.75), (0, 800.0 / 850.0));
    }

    #[test]
    fn a_threshold_stands_against_the_slowest_gpu_a_target_against_the_median() {
        // Azure's h2d floor of 48 GB/s holds for each GPU: GPU 1 at 27.7 fails it, whatever
        // the median of the two (41.5) says.
        let cell = |g: usize, gbps: f64| {
            let mut r = BandwidthResult::empty(
                TestId::H2d,
                crate::model::Endpoint::Host,
                crate::model::Endpoint::Gpu(g),
                512 << 20,
                Source::Modeled,
                Status::Ok,
                "",
            );
            r.median_gbps = Some(gbps);
            r
        };
        let cells = [cell(0, 55.4), cell(1, 27.7)];
        let floor = Reference {
            figure: Figure::Copy(TestId::H2d),
            kind: Kind::Threshold,
            value: 48.0,
            conditions: Conditions {
                method: Some(Method::Ce),
                ..Conditions::default()
            },
            ..reference()
        };
        let o = ours(&floor, &cells, &[], 2, None).unwrap();
        assert_eq!((o.value, o.worst_of), (27.7, Some(2)));
        assert!(
            beside_line(&floor, Some(&o))
                .contains("27.7 GB/s modeled, the slowest of 2 (58 % of it)")
        );
        let target = Reference {
            kind: Kind::Measured,
            ..floor
        };
        let o = ours(&target, &cells, &[], 2, None).unwrap();
        assert_eq!(o.worst_of, None);
        assert!((o.value - 41.55).abs() < 1e-9, "{}", o.value);
        // The median no GPU has is shown with the slowest beside it.
        assert_eq!(o.slowest, Some(27.7));
        let line = beside_line(&target, Some(&o));
        assert!(line.contains("; the slowest here 27.7 (58 %)"), "{line}");
        // Alike cells: the median alone.
        let alike = [cell(0, 55.4), cell(1, 54.0)];
        assert_eq!(ours(&target, &alike, &[], 2, None).unwrap().slowest, None);
    }

    #[test]
    fn the_line_names_value_conditions_source_and_ours() {
        let r = reference();
        let ours = Ours {
            value: 239.4,
            worst_of: None,
            slowest: None,
            source: Source::Measured,
            here: Here {
                gpus: Some(8),
                nvls: Some(false),
                ..Here::default()
            },
        };
        assert_eq!(
            beside_line(&r, Some(&ours)),
            "published all_reduce busbw: 478.9 GB/s measured (8 GPUs, 8 GiB, NVLS on, in place, NCCL 2.18.5) — Azure/AI-benchmarking-guide Azure_Results/ND_H100_v5_results.md, 2024-09-24; here 239.4 GB/s measured (50 % of it); differs: NVLS on there, off here"
        );
        assert!(beside_line(&r, None).ends_with("; not run here"));
    }
}
