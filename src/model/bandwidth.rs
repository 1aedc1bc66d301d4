//! Copy-bandwidth and latency results: what `scalescope bench bandwidth` measures (or models).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::stats::Stats;

/// Whether a figure was measured on GPUs or derived from line rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Measured,
    Modeled,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Measured => "measured",
            Self::Modeled => "modeled",
        })
    }
}

/// Outcome of one measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured (or modeled) and, where data moved, verified with 0 wrong elements.
    Ok,
    /// Not applicable on this machine (e.g. peer access unsupported); `reason` says why.
    Waived,
    /// Ran but the result is wrong (verification found wrong elements, or a GPU error).
    Failed,
    /// Could not run at this size (e.g. out of memory) or was cancelled.
    Skipped,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ok => "ok",
            Self::Waived => "waived",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        })
    }
}

/// Who moves the bytes: a copy engine (cuMemcpyAsync) or SMs running scalescope's copy kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Ce,
    Sm,
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Ce => "ce",
            Self::Sm => "sm",
        })
    }
}

/// One end of a copy: the host, a GPU, or every selected GPU at once (`all_to_one`'s and
/// `all_pairs`' source).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    Host,
    Gpu(usize),
    /// All selected GPUs other than the other endpoint.
    All,
}

impl Endpoint {
    /// The GPU index, if this end is one GPU.
    pub fn gpu(&self) -> Option<usize> {
        match self {
            Self::Gpu(i) => Some(*i),
            _ => None,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Host => f.write_str("host"),
            Self::Gpu(i) => write!(f, "{i}"),
            Self::All => f.write_str("all"),
        }
    }
}

impl FromStr for Endpoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "host" => Ok(Self::Host),
            "all" => Ok(Self::All),
            _ => s
                .parse()
                .map(Self::Gpu)
                .map_err(|_| format!("expected a GPU index, host or all, found {s:?}")),
        }
    }
}

impl Serialize for Endpoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The shape of a bandwidth test: which endpoints it involves and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Host ↔ one GPU.
    HostDevice {
        to_device: bool,
        pinned: bool,
        bidir: bool,
    },
    /// One GPU pair; `read`: the destination's context runs the copy, else the source's.
    Pair { read: bool, bidir: bool, peer: bool },
    /// Within one GPU.
    Local,
    /// Every other selected GPU into one (`to_one`) or one into every other.
    Fan { to_one: bool },
    /// Every selected GPU with the host at once.
    HostAll { to_device: bool },
    /// Every selected GPU reads from every other at once (one row per reading GPU).
    AllPairs,
    /// Dependent pointer chase from a GPU into peer (`d2d`) or host memory.
    Latency { d2d: bool },
}

macro_rules! tests {
    ($( $variant:ident = $id:literal, $method:ident, $shape:expr, $doc:literal; )*) => {
        /// A bandwidth or latency test, by its stable id (used by the CLI, CSV and GUI).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum TestId { $( #[doc = $doc] $variant, )* }

        impl TestId {
            /// Every test, in the order a full run performs them.
            pub const ALL: &'static [TestId] = &[ $( Self::$variant, )* ];

            /// The stable id, e.g. `p2p_read_ce`.
            pub fn id(&self) -> &'static str {
                match self { $( Self::$variant => $id, )* }
            }

            /// One line saying what it measures.
            pub fn describe(&self) -> &'static str {
                match self { $( Self::$variant => $doc, )* }
            }

            /// Copy engine or SM kernel.
            pub fn method(&self) -> Method {
                match self { $( Self::$variant => Method::$method, )* }
            }

            /// Which endpoints it involves.
            pub fn shape(&self) -> Shape {
                match self { $( Self::$variant => $shape, )* }
            }
        }
    };
}

tests! {
    H2d = "h2d", Ce, Shape::HostDevice { to_device: true, pinned: true, bidir: false },
        "host → GPU, pinned host memory, copy engine";
    D2h = "d2h", Ce, Shape::HostDevice { to_device: false, pinned: true, bidir: false },
        "GPU → host, pinned host memory, copy engine";
    H2dPageable = "h2d_pageable", Ce, Shape::HostDevice { to_device: true, pinned: false, bidir: false },
        "host → GPU from pageable (malloc'd) host memory";
    D2hPageable = "d2h_pageable", Ce, Shape::HostDevice { to_device: false, pinned: false, bidir: false },
        "GPU → host into pageable (malloc'd) host memory";
    H2dBidir = "h2d_bidir", Ce, Shape::HostDevice { to_device: true, pinned: true, bidir: true },
        "host → GPU measured while GPU → host runs at the same time";
    D2hBidir = "d2h_bidir", Ce, Shape::HostDevice { to_device: false, pinned: true, bidir: true },
        "GPU → host measured while host → GPU runs at the same time";
    P2pReadCe = "p2p_read_ce", Ce, Shape::Pair { read: true, bidir: false, peer: true },
        "GPU → GPU copy engine, run from the destination's context (reads from the peer)";
    P2pWriteCe = "p2p_write_ce", Ce, Shape::Pair { read: false, bidir: false, peer: true },
        "GPU → GPU copy engine, run from the source's context (writes to the peer)";
    P2pBidirCe = "p2p_bidir_ce", Ce, Shape::Pair { read: false, bidir: true, peer: true },
        "GPU ⇄ GPU copy engine, both directions at once (total, and each direction)";
    P2pReadSm = "p2p_read_sm", Sm, Shape::Pair { read: true, bidir: false, peer: true },
        "GPU → GPU copy kernel on the destination, loading from peer memory";
    P2pWriteSm = "p2p_write_sm", Sm, Shape::Pair { read: false, bidir: false, peer: true },
        "GPU → GPU copy kernel on the source, storing to peer memory";
    P2pBidirSm = "p2p_bidir_sm", Sm, Shape::Pair { read: false, bidir: true, peer: true },
        "GPU ⇄ GPU copy kernels, both directions at once (total, and each direction)";
    P2pReadCeNopeer = "p2p_read_ce_nopeer", Ce, Shape::Pair { read: true, bidir: false, peer: false },
        "p2p_read_ce with peer access disabled: the driver stages the copy through host memory";
    P2pWriteCeNopeer = "p2p_write_ce_nopeer", Ce, Shape::Pair { read: false, bidir: false, peer: false },
        "p2p_write_ce with peer access disabled: staged through host memory";
    P2pBidirCeNopeer = "p2p_bidir_ce_nopeer", Ce, Shape::Pair { read: false, bidir: true, peer: false },
        "p2p_bidir_ce with peer access disabled: staged through host memory";
    LocalCopy = "local_copy", Ce, Shape::Local,
        "copy within one GPU's memory (bytes copied ÷ time; memory traffic is twice that)";
    AllToOne = "all_to_one", Ce, Shape::Fan { to_one: true },
        "every other selected GPU writes into one GPU at once: total into that GPU";
    OneToAll = "one_to_all", Ce, Shape::Fan { to_one: false },
        "one GPU writes to every other selected GPU at once: total out of that GPU";
    HostToAll = "host_to_all", Ce, Shape::HostAll { to_device: true },
        "host → every selected GPU at once (per GPU): PCIe and host-memory contention";
    AllToHost = "all_to_host", Ce, Shape::HostAll { to_device: false },
        "every selected GPU → host at once (per GPU)";
    AllPairs = "all_pairs", Ce, Shape::AllPairs,
        "every selected GPU reads from every other at once, copy engines: total into each GPU (the fabric under full load)";
    LatencyD2d = "latency_d2d", Sm, Shape::Latency { d2d: true },
        "dependent pointer chase by one GPU thread through a peer GPU's memory (ns per access)";
    LatencyH2d = "latency_h2d", Sm, Shape::Latency { d2d: false },
        "dependent pointer chase by one GPU thread through pinned host memory (ns per access)";
}

impl TestId {
    /// The test with this id.
    pub fn from_id(id: &str) -> Option<TestId> {
        Self::ALL.iter().copied().find(|t| t.id() == id)
    }

    /// True for the two latency tests, whose figure is `latency_ns`.
    pub fn is_latency(&self) -> bool {
        matches!(self.shape(), Shape::Latency { .. })
    }

    /// True when the test needs peer access between GPUs.
    pub fn needs_peer(&self) -> bool {
        matches!(
            self.shape(),
            Shape::Pair { peer: true, .. } | Shape::Latency { d2d: true } | Shape::AllPairs
        )
    }

    /// True when it needs at least two GPUs.
    pub fn needs_pairs(&self) -> bool {
        matches!(
            self.shape(),
            Shape::Pair { .. } | Shape::Fan { .. } | Shape::Latency { d2d: true } | Shape::AllPairs
        )
    }
}

impl fmt::Display for TestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for TestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for TestId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::from_id(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown test {s:?}")))
    }
}

/// Checks the GB/s figures of `results` read from a file against [`super::validate::GBPS`] and
/// against each other: a size of 0 bytes, a least above the median or a most below it, an
/// efficiency that is not the figure over the line rate, or a GPU `gpus` does not hold (where it
/// is not empty: the report's machine) is a damaged or edited file (a cell may be there twice:
/// `--full` times 512 MiB in its headline run and again in its sweep). The error names the
/// first bad one by `path` (`bandwidth.results[3].median_gbps: …`).
pub fn check_bandwidth_figures(
    results: &[BandwidthResult],
    path: &str,
    gpus: &[usize],
) -> Result<(), String> {
    for (i, r) in results.iter().enumerate() {
        for (field, v) in [
            ("median_gbps", r.median_gbps),
            ("min_gbps", r.min_gbps),
            ("max_gbps", r.max_gbps),
            ("fwd_gbps", r.fwd_gbps),
            ("rev_gbps", r.rev_gbps),
            ("line_rate_gbps", r.line_rate_gbps),
        ] {
            if let Some(v) = v {
                super::validate::GBPS
                    .check(v)
                    .map_err(|e| format!("{path}[{i}].{field}: {e}"))?;
            }
        }
        if let Some(g) = [r.src, r.dst]
            .iter()
            .filter_map(|e| e.gpu())
            .find(|g| !gpus.is_empty() && !gpus.contains(g))
        {
            return Err(format!(
                "{path}[{i}]: GPU {g} is not one of the report's GPUs ({})",
                super::quantities::gpu_list(gpus)
            ));
        }
        if r.bytes == 0 {
            return Err(format!("{path}[{i}].bytes: 0 bytes is no size"));
        }
        if let (Some(m), Some(lo), Some(hi)) = (r.median_gbps, r.min_gbps, r.max_gbps)
            && !(lo <= m * (1.0 + 1e-9) && m <= hi * (1.0 + 1e-9))
        {
            let n = super::validate::number;
            return Err(format!(
                "{path}[{i}]: median {} GB/s is not between its least {} and most {}",
                n(m),
                n(lo),
                n(hi)
            ));
        }
        if let (Some(e), Some(m), Some(l)) = (r.efficiency, r.median_gbps, r.line_rate_gbps)
            && l > 0.0
            && (e - m / l).abs() > 0.01 * (m / l).max(1e-9)
        {
            let n = super::validate::number;
            return Err(format!(
                "{path}[{i}].efficiency: {} is not its median over its line rate ({} / {})",
                n(e),
                n(m),
                n(l)
            ));
        }
    }
    Ok(())
}

/// One row of `bandwidth.csv`: a test between two endpoints at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BandwidthResult {
    pub test: TestId,
    pub method: Method,
    pub src: Endpoint,
    pub dst: Endpoint,
    /// Buffer size of one copy, bytes.
    pub bytes: u64,
    /// Each sample's figure: GB/s (10^9 B/s), or ns per access for latency tests. Empty when
    /// modeled or not run.
    pub sample_values: Vec<f64>,
    /// Median/min/max/coefficient of variation of `sample_values` (GB/s); `None` for latency
    /// tests and for results that did not run.
    pub median_gbps: Option<f64>,
    pub min_gbps: Option<f64>,
    pub max_gbps: Option<f64>,
    /// Standard deviation ÷ mean of the samples.
    pub cv: Option<f64>,
    /// Bidirectional tests: median GB/s of the src→dst and dst→src copies (`median_gbps` is their
    /// total).
    pub fwd_gbps: Option<f64>,
    pub rev_gbps: Option<f64>,
    /// Latency tests: median ns per dependent access.
    pub latency_ns: Option<f64>,
    /// The line rate the figure is compared to, GB/s: the most the links the figure crosses can
    /// carry in its direction (see `bench::runner::line_rate` and docs/CSV.md): one link for
    /// pair and host tests, twice that for bidirectional totals, the centre GPU's links
    /// together for `all_to_one`, `one_to_all` and `all_pairs`, whose figures are totals.
    pub line_rate_gbps: Option<f64>,
    /// `median_gbps ÷ line_rate_gbps`.
    pub efficiency: Option<f64>,
    /// Elements found wrong when the copied data was checked; `None` when not checked.
    pub wrong: Option<u64>,
    pub status: Status,
    /// Why a result is waived, failed or skipped, or a note on how it was obtained.
    pub reason: Option<String>,
    pub source: Source,
    /// The energy the GPUs of the test used over its timed samples (measured results whose
    /// window the energy counter could cover; see `model::energy::TestEnergy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::model::energy::TestEnergy>,
}

impl BandwidthResult {
    /// A result with nothing measured yet, for `status`/`reason` outcomes.
    pub fn empty(
        test: TestId,
        src: Endpoint,
        dst: Endpoint,
        bytes: u64,
        source: Source,
        status: Status,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            test,
            method: test.method(),
            src,
            dst,
            bytes,
            sample_values: Vec::new(),
            median_gbps: None,
            min_gbps: None,
            max_gbps: None,
            cv: None,
            fwd_gbps: None,
            rev_gbps: None,
            latency_ns: None,
            line_rate_gbps: None,
            efficiency: None,
            wrong: None,
            status,
            reason: Some(reason.into()),
            source,
            energy: None,
        }
    }

    /// Fills median/min/max/cv (or latency) from measured samples and the efficiency from the
    /// line rate.
    pub fn set_samples(&mut self, values: Vec<f64>) {
        let stats = Stats::of(&values);
        if self.test.is_latency() {
            self.latency_ns = stats.map(|s| s.median);
        } else {
            self.median_gbps = stats.map(|s| s.median);
            self.min_gbps = stats.map(|s| s.min);
            self.max_gbps = stats.map(|s| s.max);
        }
        self.cv = stats.and_then(|s| s.cv);
        self.sample_values = values;
        self.update_efficiency();
    }

    /// The figure a summary reads: `latency_ns` for latency tests, else `median_gbps`.
    pub fn figure(&self) -> Option<f64> {
        if self.test.is_latency() {
            self.latency_ns
        } else {
            self.median_gbps
        }
    }

    /// Whether its efficiency is above what a correct measurement can show
    /// ([`PLAUSIBLE_EFFICIENCY`]): a figure to distrust, not one to compare or rank.
    pub fn above_line_rate(&self) -> bool {
        self.efficiency
            .is_some_and(|e| e.is_finite() && e > PLAUSIBLE_EFFICIENCY)
    }

    /// Recomputes `efficiency` from `median_gbps` and `line_rate_gbps`.
    pub fn update_efficiency(&mut self) {
        self.efficiency = match (self.median_gbps, self.line_rate_gbps) {
            (Some(m), Some(l)) if l > 0.0 => Some(m / l),
            _ => None,
        };
    }
}

/// The buffer size at which `test` covers the most endpoint pairs (the largest such size on a
/// tie): the size a matrix of that test should show. A run that sweeps sizes on a few pairs and
/// measures every pair at one size (`--full` on many GPUs) has its full matrix there, not at
/// its largest size.
pub fn fullest_size<'a>(
    results: impl IntoIterator<Item = &'a BandwidthResult>,
    test: TestId,
) -> Option<u64> {
    let mut cells: BTreeMap<u64, BTreeSet<(Endpoint, Endpoint)>> = BTreeMap::new();
    for r in results.into_iter().filter(|r| r.test == test) {
        cells.entry(r.bytes).or_default().insert((r.src, r.dst));
    }
    // max_by_key keeps the last maximum: sizes ascend, so ties go to the largest size.
    cells
        .into_iter()
        .max_by_key(|(_, pairs)| pairs.len())
        .map(|(bytes, _)| bytes)
}

/// nvbandwidth's default buffer size (512 MiB): the size a headline figure is read at when the
/// test ran there.
pub const HEADLINE_BYTES: u64 = 512 << 20;

/// The most `efficiency` a correct measurement can show: the line rate is the most the links
/// carry, so a figure above it by more than rounding and clock slack (5 %) is a measurement to
/// distrust, not a result.
pub const PLAUSIBLE_EFFICIENCY: f64 = 1.05;

/// The size a test's headline figure is read at: [`HEADLINE_BYTES`] when the test has an `ok`
/// figure there, else [`fullest_size`] of its `ok` rows (the largest size when every size has
/// the same cells). Never a pool of several sizes.
pub fn headline_size<'a>(
    results: impl IntoIterator<Item = &'a BandwidthResult>,
    test: TestId,
) -> Option<u64> {
    let ok: Vec<&BandwidthResult> = results
        .into_iter()
        .filter(|r| r.test == test && r.status == Status::Ok && r.figure().is_some())
        .collect();
    if ok.iter().any(|r| r.bytes == HEADLINE_BYTES) {
        return Some(HEADLINE_BYTES);
    }
    fullest_size(ok, test)
}

/// A test's figure at one size, over its cells: what a summary line shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Headline {
    pub test: TestId,
    /// The one size every figure here was read at ([`headline_size`]).
    pub bytes: u64,
    /// Median over the cells of `median_gbps` (ns for latency tests).
    pub median: f64,
    /// The worst cell's figure: the lowest rate, the longest latency (what a floor every GPU
    /// must meet is judged by).
    pub worst: f64,
    /// Cells at `bytes` (each ordered pair of endpoints once: the first row of a repeat).
    pub cells: usize,
    /// Median over the cells of `efficiency`; `None` where no cell has a line rate.
    pub efficiency: Option<f64>,
    /// Cells whose efficiency is above [`PLAUSIBLE_EFFICIENCY`].
    pub above_line_rate: usize,
    /// True when any cell is modeled.
    pub modeled: bool,
}

impl Headline {
    /// True when the size is nvbandwidth's default, false when the test did not run there.
    pub fn at_default_size(&self) -> bool {
        self.bytes == HEADLINE_BYTES
    }
}

/// `test`'s headline at [`headline_size`]; `None` when it has no `ok` figure.
pub fn headline<'a>(
    results: impl IntoIterator<Item = &'a BandwidthResult>,
    test: TestId,
) -> Option<Headline> {
    let results: Vec<&BandwidthResult> = results.into_iter().collect();
    let bytes = headline_size(results.iter().copied(), test)?;
    let mut seen = BTreeSet::new();
    let at: Vec<&BandwidthResult> = results
        .into_iter()
        .filter(|r| r.test == test && r.status == Status::Ok && r.bytes == bytes)
        .filter(|r| r.figure().is_some() && seen.insert((r.src, r.dst)))
        .collect();
    let vals: Vec<f64> = at.iter().filter_map(|r| r.figure()).collect();
    let effs: Vec<f64> = at.iter().filter_map(|r| r.efficiency).collect();
    Some(Headline {
        test,
        bytes,
        median: Stats::of(&vals)?.median,
        worst: if test.is_latency() {
            vals.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        } else {
            vals.iter().copied().fold(f64::INFINITY, f64::min)
        },
        cells: vals.len(),
        efficiency: Stats::of(&effs).map(|s| s.median),
        above_line_rate: effs.iter().filter(|&&e| e > PLAUSIBLE_EFFICIENCY).count(),
        modeled: at.iter().any(|r| r.source == Source::Modeled),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(test: TestId, src: usize, dst: usize, bytes: u64) -> BandwidthResult {
        BandwidthResult::empty(
            test,
            Endpoint::Gpu(src),
            Endpoint::Gpu(dst),
            bytes,
            Source::Measured,
            Status::Ok,
            "",
        )
    }

    #[test]
    fn fullest_size_prefers_the_size_with_every_pair() {
        let t = TestId::P2pReadCe;
        let mut rs = vec![cell(t, 0, 1, 1 << 30), cell(t, 1, 0, 1 << 30)];
        for (s, d) in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)] {
            rs.push(cell(t, s, d, 512 << 20));
        }
        rs.push(cell(TestId::H2d, 0, 0, 2 << 30));
        assert_eq!(fullest_size(&rs, t), Some(512 << 20));
        // On a tie, the largest size.
        rs.retain(|r| r.bytes == 1 << 30);
        rs.push(cell(t, 0, 1, 4096));
        rs.push(cell(t, 1, 0, 4096));
        assert_eq!(fullest_size(&rs, t), Some(1 << 30));
        assert_eq!(fullest_size(&rs, TestId::D2h), None);
    }
}
