//! `scalescope check`: is this box delivering what it should?
//!
//! Inventory checks judge the GPUs' state — PCIe link training, NVLinks up, error counters,
//! memory errors, P2P allowed where the topology allows it ([`state_checks`]), clock limits
//! ([`clock_check`]), temperature ([`temperature_check`]), settings ([`settings_checks`]).
//! Performance checks compare copy bandwidth with what the link should carry: its line rate ×
//! a reference efficiency measured on real hardware ([`expected`], [`copy_checks`]). Each check
//! has a verdict (PASS, WARN, FAIL or UNKNOWN), and below PASS a likely cause and what to do
//! ([`causes`]). Thresholds are configurable ([`thresholds`]).
//!
//! Everything here is plain logic over data: the inventory comes from NVML
//! ([`crate::topology::nvml_state`]), from `nvidia-smi` captures
//! ([`crate::topology::smi_query`]) or from a catalog entry; the figures from the bandwidth bench.
//! [`run`] puts a live check together.

pub mod attribution;
pub mod causes;
mod clock_check;
pub mod collective_checks;
pub mod copy_checks;
pub mod expected;
mod gpu_ctx;
mod nvlink_checks;
pub mod p2p_checks;
pub mod run;
mod settings_checks;
pub mod soak;
pub mod soak_csv;
pub mod state_checks;
mod temperature_check;
pub mod thresholds;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{BandwidthResult, GpuProcess, Inventory, Source, TestId, Topology};
pub use crate::model::{GpuLoadObservation, LoadObservation};
pub use thresholds::Thresholds;

/// The outcome of one check, or of the whole machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Delivers what it should.
    Pass,
    /// Could not be read or judged: never counted as a pass.
    Unknown,
    /// Below what it should be, but not by much, or a finding worth a look.
    Warn,
    /// A fault: the box does not deliver what it should.
    Fail,
}

impl Verdict {
    /// `PASS`, `WARN`, `FAIL`, `UNKNOWN`.
    pub fn word(&self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::Unknown => "UNKNOWN",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// What a check judges: a part of the GPUs' state, or the figure of a copy test. JSON and CSV
/// hold its id (`pcie_link`, `busy`, `h2d`, …), the words earlier files hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CheckId {
    /// `gpu_present`: a GPU the captures show that the driver did not describe.
    Present,
    /// `pcie_link`: PCIe link training against the link's maximum.
    PcieLink,
    /// `nvlink_links`: NVLinks up against the links the GPU has.
    NvlinkLinks,
    /// `nvlink_errors`: NVLink error counters.
    NvlinkErrors,
    /// `pcie_replay`: the PCIe replay counter.
    PcieReplay,
    /// `ecc`: ECC mode and error counters.
    Ecc,
    /// `memory_repair`: retired pages and remapped rows.
    MemoryRepair,
    /// `recovery_action`: what the driver asks to be done to bring the GPU back.
    Recovery,
    /// `clocks`: clock limits during the load.
    Clocks,
    /// `temperature`: the GPU's temperature against its driver's limits.
    Temperature,
    /// `power_limit`: the power limit in force against the board's default.
    PowerLimit,
    /// `clock_settings`: application or locked clocks below the GPU's maximum.
    ClockSettings,
    /// `persistence`: persistence mode.
    Persistence,
    /// `mig_mode`: MIG mode (now and pending).
    MigMode,
    /// `compute_mode`: who may create a context on the GPU.
    ComputeMode,
    /// `busy`: other processes or load on the GPU.
    Busy,
    /// `p2p_status`: P2P refused on a path that allows it.
    P2pStatus,
    /// A copy test's figure against what its link should carry (`h2d`, `p2p_read_ce`, …).
    Copy(TestId),
    /// A rule of the soak's verdict (`soak_jitter`, …).
    Soak(soak::SoakRule),
    /// A collective's bus bandwidth (an imported nccl-tests run) against what the links
    /// should carry (`all_reduce`, `all_gather`, …).
    Collective(crate::model::CollectiveOp),
}

impl CheckId {
    /// Every check of the GPUs' state, in the order a check lists them.
    pub const STATE: [CheckId; 17] = [
        Self::Present,
        Self::Busy,
        Self::PcieLink,
        Self::NvlinkLinks,
        Self::NvlinkErrors,
        Self::PcieReplay,
        Self::Ecc,
        Self::MemoryRepair,
        Self::Recovery,
        Self::Clocks,
        Self::Temperature,
        Self::P2pStatus,
        Self::PowerLimit,
        Self::ClockSettings,
        Self::Persistence,
        Self::MigMode,
        Self::ComputeMode,
    ];

    /// The id JSON and CSV hold, e.g. `pcie_link`, `p2p_read_ce`.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Present => "gpu_present",
            Self::PcieLink => "pcie_link",
            Self::NvlinkLinks => "nvlink_links",
            Self::NvlinkErrors => "nvlink_errors",
            Self::PcieReplay => "pcie_replay",
            Self::Ecc => "ecc",
            Self::MemoryRepair => "memory_repair",
            Self::Recovery => "recovery_action",
            Self::Clocks => "clocks",
            Self::Temperature => "temperature",
            Self::Busy => "busy",
            Self::P2pStatus => "p2p_status",
            Self::PowerLimit => "power_limit",
            Self::ClockSettings => "clock_settings",
            Self::Persistence => "persistence",
            Self::MigMode => "mig_mode",
            Self::ComputeMode => "compute_mode",
            Self::Copy(test) => test.id(),
            Self::Soak(rule) => rule.id(),
            Self::Collective(op) => op.id(),
        }
    }

    /// The check with this id.
    pub fn from_id(id: &str) -> Option<CheckId> {
        Self::STATE
            .into_iter()
            .find(|c| c.id() == id)
            .or_else(|| TestId::from_id(id).map(Self::Copy))
            .or_else(|| {
                soak::SoakRule::ALL
                    .into_iter()
                    .find(|r| r.id() == id)
                    .map(Self::Soak)
            })
            .or_else(|| crate::model::CollectiveOp::from_id(id).map(Self::Collective))
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.id())
    }
}

impl Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for CheckId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = String::deserialize(d)?;
        Self::from_id(&id).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown check {}",
                crate::model::validate::quoted(&id)
            ))
        })
    }
}

/// What keeps a GPU busy (the `busy` check's finding), as data: the check's detail and the
/// copy checks' likely cause are written from it, and nothing reads it back out of a sentence.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Busy {
    /// Other processes with a compute context on the GPU, before or during the load tests.
    pub processes: Vec<GpuProcess>,
    /// The GPU's utilization before the tests, %, where it was above the threshold.
    #[serde(default)]
    pub utilization_percent: Option<u32>,
}

impl Busy {
    /// `pid 77 (python3) on the GPU; 95 % utilization {when}` (`when`: `before the tests` on a
    /// live check, `when the capture was taken` on an import).
    pub fn describe(&self, when: &str) -> String {
        let mut parts = Vec::new();
        if !self.processes.is_empty() {
            let who: Vec<String> = self.processes.iter().map(|p| p.to_string()).collect();
            parts.push(format!("{} on the GPU", who.join(", ")));
        }
        if let Some(u) = self.utilization_percent {
            parts.push(format!("{u} % utilization {when}"));
        }
        parts.join("; ")
    }
}

impl fmt::Display for Busy {
    /// `pid 77 (python3) on the GPU; 95 % utilization before the tests`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe("before the tests"))
    }
}

/// One check of one GPU, pair or path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What was checked.
    pub check: CheckId,
    /// `GPU 3`, `GPU 0→1` (a direction), `GPU 0–1` (a pair), `GPU 2 ← all`.
    pub subject: String,
    /// The GPU (the source of a directional figure, the lower of a pair, the destination of
    /// `all_pairs`).
    pub gpu: Option<usize>,
    /// The other GPU of a pair or direction.
    pub peer: Option<usize>,
    pub verdict: Verdict,
    /// `measured` (live or a real capture) or `modeled` (a catalog description, or figures derived
    /// from line rates): a modeled PASS is never a PASS of a real machine.
    pub source: Source,
    /// The figure judged (GB/s for bandwidth), when there is one.
    pub figure: Option<f64>,
    /// What it should be.
    pub expected: Option<f64>,
    /// `figure ÷ expected × 100`.
    pub percent: Option<f64>,
    /// Unit of `figure` and `expected`.
    pub unit: Option<String>,
    /// What was found, e.g. `PCIe Gen4 x8 under load, expected Gen5 x16`.
    pub detail: String,
    /// Below PASS: the likely cause.
    pub cause: Option<String>,
    /// Below PASS: what to do.
    pub fix: Option<String>,
    /// Where `expected` comes from.
    pub basis: Option<String>,
    /// A `busy` finding: what keeps the GPU busy. Absent from other checks and from the files of
    /// earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<Busy>,
    /// A soak finding's anomaly windows, each with the cause its evidence names. Absent from
    /// other checks and from the files of earlier versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<attribution::Window>,
}

impl Check {
    /// A check with nothing but its identity and verdict; fill the rest with the builders.
    pub fn new(
        check: CheckId,
        subject: Subject,
        verdict: Verdict,
        source: Source,
        detail: impl Into<String>,
    ) -> Self {
        let (gpu, peer) = subject.gpus();
        Self {
            check,
            subject: subject.to_string(),
            gpu,
            peer,
            verdict,
            source,
            figure: None,
            expected: None,
            percent: None,
            unit: None,
            detail: detail.into(),
            cause: None,
            fix: None,
            basis: None,
            busy: None,
            windows: Vec::new(),
        }
    }

    /// Sets the cause and fix (only shown below PASS).
    pub fn because(mut self, cause: &causes::Cause) -> Self {
        self.cause = Some(cause.likely.to_string());
        self.fix = Some(cause.fix.to_string());
        self
    }

    /// Sets the cause (with details filled in) and fix.
    pub fn because_text(mut self, likely: String, fix: &str) -> Self {
        self.cause = Some(likely);
        self.fix = Some(fix.to_string());
        self
    }

    /// The cause as shown beside a finding: `likely: …`, or the bare `cause unknown: …` where
    /// no evidence names one (an unknown cause is never dressed as a likely one).
    pub fn cause_words(&self) -> Option<String> {
        self.cause.as_ref().map(|c| {
            if c.starts_with("cause unknown") {
                c.clone()
            } else {
                format!("likely: {c}")
            }
        })
    }

    /// `PASS`, or `PASS (modeled)` for a modeled check.
    pub fn verdict_text(&self) -> String {
        match self.source {
            Source::Modeled => format!("{} (modeled)", self.verdict),
            Source::Measured => self.verdict.to_string(),
        }
    }
}

/// What a check is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// The whole machine.
    Machine,
    /// One GPU.
    Gpu(usize),
    /// A direction, `src → dst`.
    Path(usize, usize),
    /// A pair, both directions.
    Pair(usize, usize),
    /// A GPU reading from every peer at once.
    FromAll(usize),
}

impl Subject {
    fn gpus(&self) -> (Option<usize>, Option<usize>) {
        match *self {
            Self::Machine => (None, None),
            Self::Gpu(g) | Self::FromAll(g) => (Some(g), None),
            Self::Path(a, b) => (Some(a), Some(b)),
            Self::Pair(a, b) => (Some(a.min(b)), Some(a.max(b))),
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Machine => f.write_str("machine"),
            Self::Gpu(g) => write!(f, "GPU {g}"),
            Self::Path(a, b) => write!(f, "GPU {a}→{b}"),
            Self::Pair(a, b) => write!(f, "GPU {}–{}", a.min(b), a.max(b)),
            Self::FromAll(g) => write!(f, "GPU {g} ← all"),
        }
    }
}

/// How many checks ended how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub pass: usize,
    pub warn: usize,
    pub fail: usize,
    pub unknown: usize,
}

impl Counts {
    /// Counts `checks`.
    pub fn of(checks: &[Check]) -> Counts {
        let mut c = Counts::default();
        for k in checks {
            match k.verdict {
                Verdict::Pass => c.pass += 1,
                Verdict::Warn => c.warn += 1,
                Verdict::Fail => c.fail += 1,
                Verdict::Unknown => c.unknown += 1,
            }
        }
        c
    }
}

/// Everything known about the machine's state for the inventory checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    /// The first reading: before the load tests (live), the capture, or the catalog's statement.
    pub before: Option<Inventory>,
    /// A later reading of the counters: after the load tests, or a later capture.
    pub after: Option<Inventory>,
    /// What the sampler saw during the load tests.
    pub load: Option<LoadObservation>,
}

/// The result of `scalescope check`: every check, the verdict, and the readings behind them.
/// `report.json` holds it as `health`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HealthReport {
    /// `measured` when the checks ran on this machine or on captures of a real one; `modeled`
    /// when the performance checks (or everything, for a catalog machine) are modeled.
    pub source: Source,
    /// The machine, as its topology source names it.
    pub machine: String,
    /// When the check ran, RFC 3339 UTC.
    pub created_at: String,
    /// The worst verdict of any check (UNKNOWN only when nothing could be judged).
    pub verdict: Verdict,
    pub counts: Counts,
    pub checks: Vec<Check>,
    pub thresholds: Thresholds,
    /// The readings the inventory checks used.
    pub before: Option<Inventory>,
    pub after: Option<Inventory>,
    pub load: Option<LoadObservation>,
    /// The load tests' results (measured or modeled).
    pub bandwidth: Vec<BandwidthResult>,
    /// How the check ran, what was left out and why.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl HealthReport {
    /// A report over `checks`, verdict and counts filled in.
    pub fn new(
        topo: &Topology,
        source: Source,
        checks: Vec<Check>,
        thresholds: Thresholds,
        evidence: Evidence,
        bandwidth: Vec<BandwidthResult>,
    ) -> HealthReport {
        HealthReport {
            source,
            machine: topo.source.label(),
            created_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            verdict: overall(&checks),
            counts: Counts::of(&checks),
            checks,
            thresholds,
            before: evidence.before,
            after: evidence.after,
            load: evidence.load,
            bandwidth,
            notes: Vec::new(),
        }
    }

    /// Adds `checks` (the soak's) and recounts the verdict.
    pub fn add_checks(&mut self, checks: impl IntoIterator<Item = Check>) {
        self.checks.extend(checks);
        self.verdict = overall(&self.checks);
        self.counts = Counts::of(&self.checks);
    }

    /// True when any check failed: `scalescope check` exits 3.
    pub fn failed(&self) -> bool {
        self.counts.fail > 0
    }

    /// The worst verdict among the checks about GPU `gpu` alone.
    pub fn gpu_verdict(&self, gpu: usize) -> Option<Verdict> {
        worst(
            self.checks
                .iter()
                .filter(|c| c.gpu == Some(gpu) && c.peer.is_none()),
        )
    }

    /// The worst verdict among the checks about the pair `a`, `b` (either direction).
    pub fn pair_verdict(&self, a: usize, b: usize) -> Option<Verdict> {
        worst(self.checks.iter().filter(|c| {
            matches!((c.gpu, c.peer), (Some(x), Some(y)) if (x, y) == (a, b) || (x, y) == (b, a))
        }))
    }

    /// One line: `FAIL — 2 fail, 1 warn, 30 pass, 4 unknown`, with `(modeled)` where it is, and
    /// how many checks were modeled where a measured check holds some.
    pub fn summary_line(&self) -> String {
        let c = &self.counts;
        if c.fail + c.warn + c.pass + c.unknown == 0 {
            return format!(
                "{} — nothing was judged (no check had anything to judge)",
                self.verdict
            );
        }
        let modeled = self
            .checks
            .iter()
            .filter(|c| c.source == Source::Modeled)
            .count();
        format!(
            "{}{} — {} fail, {} warn, {} pass, {} unknown{}",
            self.verdict,
            if self.source == Source::Modeled {
                " (modeled)"
            } else {
                ""
            },
            c.fail,
            c.warn,
            c.pass,
            c.unknown,
            if self.source == Source::Measured && modeled > 0 {
                format!(
                    "; {modeled} of the {} checks modeled from line rates",
                    self.checks.len()
                )
            } else {
                String::new()
            }
        )
    }
}

fn worst<'a>(checks: impl Iterator<Item = &'a Check>) -> Option<Verdict> {
    checks.map(|c| c.verdict).max()
}

/// The machine's verdict: FAIL if any check failed, else WARN if any warned, else PASS if any
/// passed; UNKNOWN only when nothing could be judged.
pub fn overall(checks: &[Check]) -> Verdict {
    let c = Counts::of(checks);
    if c.fail > 0 {
        Verdict::Fail
    } else if c.warn > 0 {
        Verdict::Warn
    } else if c.pass > 0 {
        Verdict::Pass
    } else {
        Verdict::Unknown
    }
}

/// `checks` with their subjects, where the lines of single GPUs that say the same (verdict,
/// check, detail, cause and fix) become one, `GPUs 0–7`, where the first of them stood: eight
/// GPUs of an import without a state capture read 6 lines, not 48. Pairs and directions keep
/// their own (`GPU 0–1` is a pair). What the terminal and the report's table show; the files
/// list every GPU.
pub fn alike_gpus<'a>(checks: &[&'a Check]) -> Vec<(String, &'a Check)> {
    // The GPU of each line about a single GPU.
    let single: Vec<Option<usize>> = checks
        .iter()
        .map(|c| {
            c.gpu
                .filter(|&g| c.peer.is_none() && c.subject == Subject::Gpu(g).to_string())
        })
        .collect();
    let same = |a: &Check, b: &Check| {
        a.verdict == b.verdict
            && a.check == b.check
            && a.source == b.source
            && a.detail == b.detail
            && a.cause == b.cause
            && a.fix == b.fix
    };
    let mut out: Vec<(String, &Check)> = Vec::new();
    let mut taken = vec![false; checks.len()];
    for (i, &c) in checks.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let Some(g) = single[i] else {
            out.push((c.subject.clone(), c));
            continue;
        };
        let mut gpus = vec![g];
        for (j, &d) in checks.iter().enumerate().skip(i + 1) {
            if let Some(h) = single[j].filter(|_| !taken[j] && same(c, d)) {
                taken[j] = true;
                gpus.push(h);
            }
        }
        let subject = match gpus.len() {
            1 => c.subject.clone(),
            _ => {
                gpus.sort_unstable();
                format!("GPUs {}", crate::model::quantities::gpu_set(&gpus))
            }
        };
        out.push((subject, c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(v: Verdict, subject: Subject) -> Check {
        Check::new(CheckId::Ecc, subject, v, Source::Measured, "")
    }

    /// Alike lines of single GPUs share one, where the first stood; a GPU that differs, a pair
    /// and a direction keep their own.
    #[test]
    fn alike_gpus_share_a_line() {
        let mut checks = [
            check(Verdict::Pass, Subject::Gpu(0)),
            check(Verdict::Pass, Subject::Pair(0, 1)),
            check(Verdict::Pass, Subject::Gpu(1)),
            check(Verdict::Warn, Subject::Gpu(2)),
            check(Verdict::Pass, Subject::Gpu(3)),
            check(Verdict::Pass, Subject::Path(2, 3)),
            check(Verdict::Pass, Subject::Gpu(5)),
        ];
        checks[4].detail = "another finding".into();
        let refs: Vec<&Check> = checks.iter().collect();
        let subjects: Vec<String> = alike_gpus(&refs).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            subjects,
            ["GPUs 0,1,5", "GPU 0–1", "GPU 2", "GPU 3", "GPU 2→3"],
            "{subjects:?}"
        );
    }

    #[test]
    fn overall_verdict_is_the_worst_and_unknown_never_passes() {
        assert_eq!(overall(&[]), Verdict::Unknown);
        assert_eq!(
            overall(&[check(Verdict::Unknown, Subject::Gpu(0))]),
            Verdict::Unknown
        );
        assert_eq!(
            overall(&[
                check(Verdict::Pass, Subject::Gpu(0)),
                check(Verdict::Unknown, Subject::Gpu(1))
            ]),
            Verdict::Pass
        );
        assert_eq!(
            overall(&[
                check(Verdict::Warn, Subject::Gpu(0)),
                check(Verdict::Pass, Subject::Gpu(1))
            ]),
            Verdict::Warn
        );
        assert_eq!(
            overall(&[
                check(Verdict::Warn, Subject::Gpu(0)),
                check(Verdict::Fail, Subject::Path(0, 1))
            ]),
            Verdict::Fail
        );
    }

    #[test]
    fn check_ids_keep_their_json_words() {
        let words = [
            "gpu_present",
            "busy",
            "pcie_link",
            "nvlink_links",
            "nvlink_errors",
            "pcie_replay",
            "ecc",
            "memory_repair",
            "recovery_action",
            "clocks",
            "temperature",
            "p2p_status",
            "power_limit",
            "clock_settings",
            "persistence",
            "mig_mode",
            "compute_mode",
        ];
        let copies = copy_checks::CHECK_TESTS.map(CheckId::Copy);
        for (id, word) in CheckId::STATE
            .iter()
            .zip(words)
            .chain(copies.iter().zip(copy_checks::CHECK_TESTS.map(|t| t.id())))
        {
            let json = serde_json::to_string(id).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<CheckId>(&json).unwrap(), *id);
            assert_eq!(format!("{id:<14}|"), format!("{word:<14}|"));
        }
        assert!(serde_json::from_str::<CheckId>("\"warp_drive\"").is_err());
    }

    #[test]
    fn a_busy_finding_holds_its_processes_and_reads_without_them() {
        let mut c = check(Verdict::Warn, Subject::Gpu(0));
        c.check = CheckId::Busy;
        c.busy = Some(Busy {
            processes: vec![GpuProcess {
                pid: 77,
                name: Some("python3".into()),
            }],
            utilization_percent: Some(95),
        });
        assert_eq!(
            c.busy.as_ref().unwrap().to_string(),
            "pid 77 (python3) on the GPU; 95 % utilization before the tests"
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["busy"]["processes"][0]["pid"], 77);
        // A check of an earlier version has no `busy`; other checks write none.
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("busy");
        assert_eq!(serde_json::from_value::<Check>(old).unwrap().busy, None);
        let plain = serde_json::to_value(check(Verdict::Pass, Subject::Gpu(1))).unwrap();
        assert!(plain.get("busy").is_none());
    }

    #[test]
    fn subjects_and_pair_verdicts() {
        assert_eq!(Subject::Path(0, 1).to_string(), "GPU 0→1");
        assert_eq!(Subject::Pair(3, 1).to_string(), "GPU 1–3");
        assert_eq!(Subject::FromAll(2).to_string(), "GPU 2 ← all");
        let topo = Topology::new(crate::model::TopologySource::Imported { paths: vec![] });
        let r = HealthReport::new(
            &topo,
            Source::Measured,
            vec![
                check(Verdict::Pass, Subject::Path(0, 1)),
                check(Verdict::Fail, Subject::Path(1, 0)),
                check(Verdict::Warn, Subject::Gpu(0)),
            ],
            Thresholds::default(),
            Evidence::default(),
            Vec::new(),
        );
        assert_eq!(r.pair_verdict(0, 1), Some(Verdict::Fail));
        assert_eq!(r.gpu_verdict(0), Some(Verdict::Warn));
        assert_eq!(r.gpu_verdict(1), None);
        assert!(r.failed());
        assert_eq!(r.summary_line(), "FAIL — 1 fail, 1 warn, 1 pass, 0 unknown");
    }
}
