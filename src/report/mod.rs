//! A report: everything one `scalescope --bench` run produced — the machine, its topology, the
//! bandwidth, collectives and scaling results, warnings — as one value that `report.json` holds,
//! the GUI opens and `scalescope compare` reads.
//!
//! Plain data plus parsing; its reads are [`load`] (one report file) and `reference_tools.rs`
//! (a reference tool's output files or folder). Writing is the caller's (through
//! `export::json`, the layer above this one).

pub mod bundled;
pub mod compare;
pub mod nccl_tests;
pub mod nccl_tests_json;
pub mod nvbandwidth;
pub mod published;
pub mod ranking;
pub mod reference_tools;
pub mod summary;
pub mod superlinear;
pub mod tool_error;

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::bench::Warning;
use crate::health::HealthReport;
use crate::model::{BandwidthResult, CollectiveResult, Source, Topology};
use crate::scaling::run::ScalingRun;

/// The `kind` field every report carries, so that other JSON is told apart from a report.
pub const KIND: &str = "scalescope-report";
/// The report format this build writes. Bump it when a field changes meaning.
/// Version 2 added `health` (`scalescope check`'s verdict), real framework scaling rows
/// (`measured_framework`; proxy rows renamed from `measured` to `proxy`), and memory-fit and
/// calibration fields.
pub const SCHEMA_VERSION: u32 = 2;
/// Every version this build reads: version 1 reports (no `health`, scaling rows `measured`,
/// read as proxies) still open.
pub const READABLE_VERSIONS: [u32; 2] = [1, 2];

/// One `--bench` run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`KIND`].
    pub kind: String,
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Where and when it ran, and with what.
    pub machine: MachineInfo,
    /// The topology the run used (live, catalog or imported).
    pub topology: Topology,
    /// Copy bandwidth and latency; `None` when the stage was not run.
    pub bandwidth: Option<BandwidthSection>,
    /// Collectives; `None` when the stage was not run.
    pub collectives: Option<CollectivesSection>,
    /// Weak and strong scaling; `None` when the stage was not run.
    pub scaling: Option<ScalingSection>,
    /// The health check (`scalescope check`'s verdict); `None` when the stage was not run and
    /// in version 1 reports.
    #[serde(default)]
    pub health: Option<HealthReport>,
    /// The burn-in (`check --soak`, `--bench --soak`): the per-second series and its events;
    /// its verdict is in `health` (the `soak_*` checks). `None` when no soak ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<crate::model::SoakSection>,
    /// A window of live traffic (the app's Live overlay, saved with the report): the recording
    /// `scalescope watch --record` writes. `None` when none was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<crate::model::traffic::TrafficRecording>,
    /// Every warning of the run, in the order it came.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// True when the run was interrupted (Ctrl-C, SIGTERM, SIGHUP): the sections hold what
    /// finished.
    #[serde(default)]
    pub cancelled: bool,
    /// The signal that interrupted the run (`SIGINT`, `SIGTERM`, `SIGHUP`); `None` otherwise.
    #[serde(default)]
    pub cancelled_by: Option<String>,
    /// The stage that was running when this file was written: `None` in the file of a finished
    /// run, and of a run interrupted between stages. A file of a run that is still going, or was
    /// killed, names the stage it was in; with `cancelled`, the stage the interruption stopped.
    #[serde(default)]
    pub stage_in_flight: Option<StageInFlight>,
}

/// What a `--bench` run was doing when its files were written (a report's `stage_in_flight`):
/// one of the suite's stages, or writing the PNGs after them. JSON holds the same words as the
/// files of earlier versions (`topology`, `health`, `bandwidth`, `collectives`, `scaling`,
/// `soak`, `pngs`), which still open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageInFlight {
    /// A stage of the suite.
    Running(Stage),
    /// The PNGs, drawn after every stage finished.
    Pngs,
}

impl StageInFlight {
    /// The word in JSON.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Running(stage) => stage.id(),
            Self::Pngs => "pngs",
        }
    }
}

impl Serialize for StageInFlight {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> Deserialize<'de> for StageInFlight {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = String::deserialize(d)?;
        if word == "pngs" {
            return Ok(Self::Pngs);
        }
        Stage::ALL
            .into_iter()
            .chain([Stage::Soak])
            .find(|s| s.id() == word)
            .map(Self::Running)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown stage {word:?}")))
    }
}

/// A stage of the suite (`--bench`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Topology,
    Health,
    Bandwidth,
    Collectives,
    Scaling,
    /// The burn-in (`--soak D`): only when asked, never in the default stages.
    Soak,
}

impl Stage {
    /// Every stage, in the order the suite runs them.
    pub const ALL: [Stage; 5] = [
        Stage::Topology,
        Stage::Health,
        Stage::Bandwidth,
        Stage::Collectives,
        Stage::Scaling,
    ];

    /// The id used by `--suite` and in reports' `stage_in_flight`.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Topology => "topology",
            Self::Health => "health",
            Self::Bandwidth => "bandwidth",
            Self::Collectives => "collectives",
            Self::Scaling => "scaling",
            Self::Soak => "soak",
        }
    }
}

/// The machine a report was produced on, and the software that produced it. Unknown values are
/// `None` (null in JSON), never empty strings or zeros.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineInfo {
    /// Host name (live runs), else `None`.
    pub hostname: Option<String>,
    /// A short name for the machine: the host name, catalog name or imported file.
    pub label: String,
    /// The name a person gave the machine (renamed in the app); it replaces the name derived
    /// from its GPUs (`2× H200 SXM`), the host still shown second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// NVIDIA driver version, e.g. `580.95.05`.
    pub driver_version: Option<String>,
    /// CUDA driver API version, e.g. `13.0`.
    pub cuda_version: Option<String>,
    /// NCCL version the collectives used, e.g. `2.28.9`.
    pub nccl_version: Option<String>,
    /// GPU names in index order.
    pub gpu_names: Vec<String>,
    /// When the run started, RFC 3339 UTC.
    pub created_at: String,
    /// scalescope's version.
    pub scalescope_version: String,
    /// The command line, one argument per element.
    pub command_line: Vec<String>,
    /// `quick`, `full` or a custom suite description.
    pub preset: String,
}

/// The bandwidth stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BandwidthSection {
    /// measured or modeled (every result says so too).
    pub source: Source,
    /// The backend's one-line description.
    pub backend: String,
    pub results: Vec<BandwidthResult>,
}

/// The collectives stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectivesSection {
    pub source: Source,
    pub backend: String,
    pub results: Vec<CollectiveResult>,
}

impl CollectivesSection {
    /// True where no result ran: none at all (a run stopped before its first size), or every
    /// row waived, skipped or failed (one GPU, no NCCL).
    pub fn none_ran(&self) -> bool {
        Self::none_ran_in(&self.results)
    }

    /// [`Self::none_ran`] of any rows (the app's, with a modeled overlay among them).
    pub fn none_ran_in(results: &[CollectiveResult]) -> bool {
        results.iter().all(|r| r.status != crate::model::Status::Ok)
    }

    /// The section's source in words, or `none ran` where [`Self::none_ran`], so that no header
    /// calls it measured.
    pub fn source_words(&self) -> String {
        if self.none_ran() {
            "none ran".to_string()
        } else {
            self.source.to_string()
        }
    }
}

/// The scaling stage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalingSection {
    /// modeled when every row is modeled; measured when proxy runs or a measured all-reduce
    /// curve fed it.
    pub source: Source,
    pub run: ScalingRun,
}

impl Report {
    /// An empty report for `topology` (sections are filled as stages finish).
    pub fn new(machine: MachineInfo, topology: Topology) -> Report {
        Report {
            kind: KIND.to_string(),
            schema_version: SCHEMA_VERSION,
            machine,
            topology,
            bandwidth: None,
            collectives: None,
            scaling: None,
            health: None,
            soak: None,
            traffic: None,
            warnings: Vec::new(),
            cancelled: false,
            cancelled_by: None,
            stage_in_flight: None,
        }
    }

    /// True when any stage put something in the report (a job that failed before its first
    /// stage holds only the topology: there is nothing of it to keep).
    pub fn has_results(&self) -> bool {
        self.bandwidth.is_some()
            || self.collectives.is_some()
            || self.scaling.is_some()
            || self.health.is_some()
            || self.soak.is_some()
    }

    /// True when any figure in the report is modeled.
    pub fn has_modeled(&self) -> bool {
        self.bandwidth
            .as_ref()
            .is_some_and(|b| b.source == Source::Modeled)
            || self
                .collectives
                .as_ref()
                .is_some_and(|c| c.source == Source::Modeled)
            || self
                .health
                .as_ref()
                .is_some_and(|h| h.source == Source::Modeled)
            || (self.topology.source.kind() != "live" && !self.imported_measured())
    }

    /// True when the report's figures are a reference tool's, measured on the machine it names
    /// (nvbandwidth, nccl-tests imported): its topology is not read live, yet nothing in it is
    /// modeled.
    fn imported_measured(&self) -> bool {
        let kind = self.topology.source.kind();
        (kind == "tool_output" || kind == "imported")
            && self.health.is_none()
            && self.scaling.is_none()
            && (self.bandwidth.is_some() || self.collectives.is_some())
    }

    /// What a reader must know about a report written before real framework runs and the
    /// health check (schema 1, as the bundled examples): its measured scaling rows are
    /// synthetic proxy steps, the older method. `None` for current reports.
    pub fn older_method(&self) -> Option<&'static str> {
        (self.schema_version < 2).then_some(OLDER_METHOD)
    }

    /// The date part of `created_at` (`2026-11-22`), or the whole string when it has none.
    pub fn date(&self) -> &str {
        self.machine
            .created_at
            .get(..10)
            .unwrap_or(&self.machine.created_at)
    }

    /// The GPUs, counted by name in index order: `8× NVIDIA H200`, `4× NVIDIA H100, 4× NVIDIA
    /// A100`; `8 GPUs` when the names are unknown; `None` when the report has no GPU at all.
    pub fn gpu_summary(&self) -> Option<String> {
        let mut names: Vec<(&str, usize)> = Vec::new();
        for n in &self.machine.gpu_names {
            match names.iter_mut().find(|(x, _)| x == n) {
                Some(e) => e.1 += 1,
                None => names.push((n, 1)),
            }
        }
        if !names.is_empty() {
            let parts: Vec<String> = names.iter().map(|(n, c)| format!("{c}× {n}")).collect();
            return Some(parts.join(", "));
        }
        match self.topology.gpus.len() {
            0 => None,
            1 => Some("1 GPU".to_string()),
            n => Some(format!("{n} GPUs")),
        }
    }

    /// The report's name wherever reports are listed or named: the machine by what it is, the
    /// host second, and the date, e.g. `8× H200 SXM · vm · 2026-11-22`, so that two runs on one
    /// host on different GPUs stay apart. A catalog machine is named by its entry:
    /// `NVIDIA DGX H100 · 2026-11-22`.
    pub fn name(&self) -> String {
        match self.date() {
            // An imported tool's output may print no date.
            "" => self.machine_key(),
            date => format!("{} · {date}", self.machine_key()),
        }
    }

    /// [`Report::name`] without the date: the machine, which every report of it shares (the
    /// Cost panel keeps prices by it).
    pub fn machine_key(&self) -> String {
        match &self.topology.source {
            crate::model::TopologySource::Catalog { .. } if !self.machine.label.is_empty() => {
                self.machine.label.clone()
            }
            _ => summary::machine_title(self),
        }
    }

    /// [`Report::name`] with `(modeled)` when any figure is: what lists and comparisons show.
    pub fn title(&self) -> String {
        if self.has_modeled() {
            format!("{} (modeled)", self.name())
        } else {
            self.name()
        }
    }
}

/// [`Report::older_method`]'s note.
pub const OLDER_METHOD: &str = "written by an older scalescope (report schema 1), before real \
     framework runs and the health check: its measured scaling rows are synthetic proxy steps \
     (GEMMs + NCCL all-reduce), not the workloads' training steps, and it has no health verdict";

/// Why a file is not a report this build can read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The file could not be read.
    #[error("cannot read the report ({0})")]
    Io(#[from] std::io::Error),
    /// The JSON ends early.
    #[error("the report is truncated (the JSON ends early at line {line}, column {column})")]
    Truncated { line: usize, column: usize },
    /// Not JSON at all.
    #[error("not a scalescope report: invalid JSON ({0})")]
    Syntax(String),
    /// JSON, but not a report.
    #[error("not a scalescope report (no \"kind\": \"{KIND}\" and no schema_version field)")]
    NotAReport,
    /// A report written by another version of the format.
    #[error(
        "unsupported report schema_version {found} (this scalescope reads versions 1 to {SCHEMA_VERSION}); open it with a matching scalescope"
    )]
    UnknownVersion { found: String },
    /// A file larger than any report ([`MAX_REPORT_BYTES`]).
    #[error("not a scalescope report: larger than {} MiB", MAX_REPORT_BYTES >> 20)]
    TooLarge,
    /// A report of the right version whose fields do not fit.
    #[error("the report is damaged: {0}")]
    Invalid(String),
    /// A field of the right name whose value does not fit, by its JSON path
    /// (`bandwidth.results[3].median_gbps`); strings from the file are escaped and shortened.
    #[error("the report is damaged: field {path}: {message}")]
    BadField { path: String, message: String },
    /// A figure that is not finite or is negative where only 0 or more makes sense.
    #[error(
        "the report is damaged: field {path} is {value}: figures must be finite and not negative"
    )]
    BadFigure { path: String, value: String },
}

/// Top-level sections whose numbers are figures, checked by [`check_figures`]; sections this
/// build does not know are left alone.
const FIGURE_SECTIONS: [&str; 5] = ["machine", "topology", "bandwidth", "collectives", "scaling"];
/// Figures that may be negative: (model − measured) ÷ measured, against the calibrated model and
/// against the catalog-only one.
const SIGNED_FIGURES: [&str; 2] = ["model_error", "model_error_uncalibrated"];

/// Refuses non-finite numbers anywhere in the known sections, and negative ones except
/// [`SIGNED_FIGURES`], naming the JSON path of the first.
fn check_figures(value: &serde_json::Value) -> Result<(), ReportError> {
    let Some(obj) = value.as_object() else {
        return Ok(());
    };
    for section in FIGURE_SECTIONS {
        if let Some(v) = obj.get(section) {
            check_section_figures(v, section)?;
        }
    }
    Ok(())
}

/// [`parse`]'s rule for figures applied to a report that did not come from a file: a server's
/// answer is held to what `compare` would later demand of the report written from it.
pub fn check_report_figures(value: &serde_json::Value) -> Result<(), ReportError> {
    check_figures(value)
}

/// The same rule for one part of a report (an event a server sent), named `path` in the error.
pub fn check_section_figures(value: &serde_json::Value, path: &str) -> Result<(), ReportError> {
    fn walk(v: &serde_json::Value, path: &mut String, key: &str) -> Result<(), ReportError> {
        use serde_json::Value;
        match v {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if !x.is_finite() || (x < 0.0 && !SIGNED_FIGURES.contains(&key)) {
                    return Err(ReportError::BadFigure {
                        path: path.clone(),
                        value: crate::model::validate::number(x),
                    });
                }
                if key.ends_with("_gbps")
                    && let Err(message) = crate::model::validate::GBPS.check(x)
                {
                    return Err(ReportError::BadField {
                        path: path.clone(),
                        message,
                    });
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, path, key)?;
                    path.truncate(len);
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&crate::model::validate::one_line(k, 40));
                    walk(item, path, k)?;
                    path.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }
    let mut p = path.to_string();
    walk(value, &mut p, path)
}

/// The most JSON values a report file may hold: its JSON tree costs 32 bytes a value or more,
/// so 200 MB of `0,0,0,…` (100 million values) once took more than 4 GB before any check.
/// Reports hold a value per 15–20 bytes: the largest file read ([`MAX_REPORT_BYTES`]) fits.
pub const MAX_JSON_VALUES: usize = 20_000_000;

/// An upper bound of the values in JSON `text`: one more than its commas, colons and opening
/// brackets (those inside strings count too; the bound only grows).
fn json_values_at_most(text: &str) -> usize {
    1 + text
        .bytes()
        .filter(|b| matches!(b, b',' | b':' | b'[' | b'{'))
        .count()
}

/// Parses report JSON. Never panics; every failure is one of [`ReportError`]'s kinds.
pub fn parse(text: &str) -> Result<Report, ReportError> {
    let values = json_values_at_most(text);
    if values > MAX_JSON_VALUES {
        return Err(ReportError::Invalid(format!(
            "up to {values} JSON values, more than the {MAX_JSON_VALUES} a report may hold"
        )));
    }
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        if e.is_eof() {
            ReportError::Truncated {
                line: e.line(),
                column: e.column(),
            }
        } else {
            ReportError::Syntax(crate::model::validate::one_line(&e.to_string(), 80))
        }
    })?;
    let obj = value.as_object().ok_or(ReportError::NotAReport)?;
    let kind_ok = obj.get("kind").and_then(|k| k.as_str()) == Some(KIND);
    let version = obj.get("schema_version");
    match (kind_ok, version) {
        (_, Some(v))
            if v.as_u64()
                .is_some_and(|v| READABLE_VERSIONS.iter().any(|r| u64::from(*r) == v)) => {}
        (_, Some(v)) => {
            return Err(ReportError::UnknownVersion {
                found: v.to_string(),
            });
        }
        (_, None) => return Err(ReportError::NotAReport),
    }
    if !kind_ok {
        return Err(ReportError::NotAReport);
    }
    check_figures(&value)?;
    let mut report: Report = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let message = crate::model::validate::one_line(&e.into_inner().to_string(), 80);
        if path.is_empty() || path == "." {
            ReportError::Invalid(message)
        } else {
            ReportError::BadField {
                path: crate::model::validate::one_line(&path, 80),
                message,
            }
        }
    })?;
    let gpus: Vec<usize> = report.topology.gpus.iter().map(|g| g.index).collect();
    if let Some(b) = &report.bandwidth {
        crate::model::check_bandwidth_figures(&b.results, "bandwidth.results", &gpus)
            .map_err(ReportError::Invalid)?;
    }
    if let Some(h) = &report.health {
        crate::model::check_bandwidth_figures(&h.bandwidth, "health.bandwidth", &gpus)
            .map_err(ReportError::Invalid)?;
    }
    // A run's GPUs listed twice (an edited or damaged file) would be ranked as another count.
    if let Some(c) = &report.collectives {
        crate::model::check_collective_figures(&c.results, "collectives.results")
            .map_err(ReportError::Invalid)?;
    }
    // Schema 1 labeled the scaling model's machine `live: HOST`, read as if it were live here.
    if let Some(m) = report.scaling.as_mut().and_then(|s| s.run.machine.as_mut())
        && m.label.starts_with("live: ")
    {
        m.label = report.topology.source.label();
    }
    // Power an earlier rule modeled is said where the run's notes are read.
    if let Some(s) = report.scaling.as_mut() {
        let rule = s.run.power_rule;
        let stale = s.run.rows.iter().filter(|r| rule.stale_for(r)).count();
        let rows = if stale == 1 { "row" } else { "rows" };
        let verb = if stale == 1 { "has" } else { "have" };
        let note = format!(
            "{stale} modeled {rows} the host sets {verb} power {}; compare leaves it out",
            crate::scaling::power::STALE_POWER_NOTE
        );
        // Said once, also in a report saved again after it was read.
        let said = s
            .run
            .notes
            .iter()
            .any(|n| n.contains(crate::scaling::power::STALE_POWER_NOTE));
        if stale > 0 && !said {
            s.run.notes.push(note);
        }
    }
    Ok(report)
}

/// The largest report file read, bytes (the 8-GPU `--full` example is under 2 MB).
pub const MAX_REPORT_BYTES: u64 = 256 << 20;

/// Reads and parses the report at `path`; files over [`MAX_REPORT_BYTES`] (or endless ones such
/// as `/dev/zero`) are refused without reading them whole.
pub fn load(path: &Path) -> Result<Report, ReportError> {
    parse(&read_text(path)?)
}

/// The text of a file read as a report is read: at most [`MAX_REPORT_BYTES`], UTF-8.
pub fn read_text(path: &Path) -> Result<String, ReportError> {
    let bytes = crate::input::read(path, MAX_REPORT_BYTES).map_err(|e| match e {
        crate::input::InputError::TooLarge { .. } => ReportError::TooLarge,
        other => ReportError::Io(other.into()),
    })?;
    String::from_utf8(bytes).map_err(|e| ReportError::Syntax(format!("not UTF-8 text ({e})")))
}

/// A load error with the file named last, as the CLI and GUI show it.
#[derive(Debug)]
pub struct LoadError {
    pub path: String,
    pub error: ReportError,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.path)
    }
}

impl std::error::Error for LoadError {}

impl crate::model::Blame for LoadError {
    /// The user's: a report path that does not hold a report this build reads.
    fn fault(&self) -> crate::model::Fault {
        crate::model::Fault::Input
    }
}

/// [`load`], with the path attached to the error.
pub fn load_named(path: &Path) -> Result<Report, LoadError> {
    load(path).map_err(|error| LoadError {
        path: path.display().to_string(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        Report::new(
            MachineInfo {
                label: "DGX".into(),
                created_at: "2026-11-22T10:00:00Z".into(),
                ..Default::default()
            },
            topo,
        )
    }

    #[test]
    fn round_trip() {
        // serde_json (without float_roundtrip) may move a float's last bit on the first read;
        // from then on a report reads back as it was written.
        let r = parse(&serde_json::to_string(&sample()).unwrap()).unwrap();
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(parse(&text).unwrap(), r);
        assert_eq!(r.date(), "2026-11-22");
        // A catalog machine's label names its GPUs.
        assert_eq!(r.title(), "DGX · 2026-11-22 (modeled)");
    }

    #[test]
    fn the_stage_in_flight_keeps_the_words_of_earlier_files() {
        let mut r = sample();
        for (stage, word) in [
            (StageInFlight::Running(Stage::Topology), "topology"),
            (StageInFlight::Running(Stage::Health), "health"),
            (StageInFlight::Running(Stage::Bandwidth), "bandwidth"),
            (StageInFlight::Running(Stage::Collectives), "collectives"),
            (StageInFlight::Running(Stage::Scaling), "scaling"),
            (StageInFlight::Running(Stage::Soak), "soak"),
            (StageInFlight::Pngs, "pngs"),
        ] {
            r.stage_in_flight = Some(stage);
            let json: serde_json::Value = serde_json::to_value(&r).unwrap();
            assert_eq!(json["stage_in_flight"], word);
            assert_eq!(
                parse(&json.to_string()).unwrap().stage_in_flight,
                Some(stage)
            );
        }
        r.stage_in_flight = None;
        let json: serde_json::Value = serde_json::to_value(&r).unwrap();
        assert!(json["stage_in_flight"].is_null());
    }

    #[test]
    fn names_count_gpus_by_name() {
        let mut r = sample();
        r.topology.source = crate::model::TopologySource::Live {
            hostname: Some("vm".into()),
            driver_version: None,
            nvml_version: None,
            cuda_driver_version: None,
        };
        r.machine.label = "vm".into();
        // Named by what the machine is, the host second: no GPU names in the machine info, so
        // the topology's GPU names stand in.
        assert_eq!(r.name(), "8× H100 80GB HBM3 SXM · vm · 2026-11-22");
        r.machine.gpu_names = vec!["NVIDIA H200".into(); 8];
        assert_eq!(r.name(), "8× H200 SXM · vm · 2026-11-22");
        r.machine.gpu_names = vec!["A".into(), "B".into(), "A".into()];
        assert_eq!(r.gpu_summary().as_deref(), Some("2× A, 1× B"));
    }

    #[test]
    fn a_model_below_its_measurement_reads_back() {
        // Measured scaling rows carry signed errors: the model may be below the measurement,
        // calibrated or from the catalog only. Such a report must open again.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/reports/h200-2x-sxm-2026-11-22.json"
        ))
        .unwrap();
        let mut r = parse(&text).unwrap();
        let rows = &mut r.scaling.as_mut().unwrap().run.rows;
        let row = rows.iter_mut().find(|x| x.source.is_measured()).unwrap();
        row.model_error = Some(-0.05);
        row.model_error_uncalibrated = Some(-0.12);
        let back = parse(&serde_json::to_string(&r).unwrap()).unwrap();
        let row = back.scaling.unwrap().run.rows;
        let row = row.iter().find(|x| x.source.is_measured()).unwrap();
        assert_eq!(row.model_error_uncalibrated, Some(-0.12));
        // Other figures stay non-negative.
        let bad = serde_json::to_string(&r).unwrap().replacen(
            "\"model_error_uncalibrated\":-0.12",
            "\"memory_gib_per_gpu\":-1.0",
            1,
        );
        assert!(matches!(parse(&bad), Err(ReportError::BadFigure { .. })));
    }

    #[test]
    fn errors_are_told_apart() {
        let text = serde_json::to_string(&sample()).unwrap();
        assert!(matches!(
            parse(&text[..text.len() / 2]),
            Err(ReportError::Truncated { .. })
        ));
        let v2 = text.replace("\"schema_version\":2", "\"schema_version\":99");
        assert!(matches!(
            parse(&v2),
            Err(ReportError::UnknownVersion { .. })
        ));
        assert!(matches!(
            parse("{\"gpus\": []}"),
            Err(ReportError::NotAReport)
        ));
        assert!(matches!(parse("[1, 2]"), Err(ReportError::NotAReport)));
        assert!(matches!(parse("hello"), Err(ReportError::Syntax(_))));
    }

    #[test]
    fn version_1_reports_still_open_without_health() {
        let text = serde_json::to_string(&sample())
            .unwrap()
            .replace("\"schema_version\":2", "\"schema_version\":1")
            .replace(",\"health\":null", "");
        assert!(!text.contains("health"));
        let r = parse(&text).unwrap();
        assert_eq!(r.schema_version, 1);
        assert_eq!(r.health, None);
    }
}
