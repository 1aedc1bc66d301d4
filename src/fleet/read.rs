//! Finding and reading the per-node reports of a fleet: `--bench` report.json files (with the
//! health check when that stage ran) and `check --json` files, each named by the `node.json`
//! beside it, its host name, or its folder or file name — what `judge.rs` judges, read once (the
//! all-reduce runs between nodes recorded beside them are `between.rs`'s `read_records`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::health::HealthReport;
use crate::model::validate::one_line;
use crate::report::{Report, reference_tools};

/// The most node reports one fleet report reads: 100,000 (the largest clusters have tens of
/// thousands of nodes; beyond that a listing is more likely a wrong folder than a fleet).
pub const MAX_NODES: usize = 100_000;
/// The largest `node.json` read (it holds a name and a job id).
const MAX_NODE_JSON: u64 = 64 << 10;
/// The longest node name kept; longer ones are shortened (a name is a label, not data).
const MAX_NAME_CHARS: usize = 80;

/// One node's report as read: what it holds, or why it could not be read.
#[derive(Debug)]
pub struct NodeInput {
    /// The node's name (node.json, host name, folder or file name).
    pub name: String,
    /// The file read.
    pub path: PathBuf,
    /// Its folder's name (a report.json, check.json) or its file's stem: what tells two nodes
    /// of the same name apart.
    pub origin: String,
    /// The Slurm job id from `node.json`, when there is one.
    pub slurm_job: Option<String>,
    /// The report, or the one line that says why it could not be read.
    pub content: Result<NodeContent, String>,
    /// Why the `node.json` beside the report could not be read, where one is there and could
    /// not (the node is then named by its report: said, not silently).
    pub record_error: Option<String>,
}

/// What a node's file held.
#[derive(Debug)]
pub enum NodeContent {
    /// A `--bench` report.json (its `health` when the health stage ran).
    Report(Box<Report>),
    /// A `check --json` file.
    Check(Box<HealthReport>),
}

/// Why the inputs could not be read as a fleet (the user's paths, not a node's file).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}: no such file or folder")]
    Missing(String),
    #[error("cannot list {path}: {source}")]
    List {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "no node reports found (looked for DIR/*.json, DIR/*/report.json, DIR/nodes/*/report.json and check.json beside them, and folders of nvbandwidth/nccl-tests outputs) in {0}"
    )]
    Empty(String),
    #[error("more than {MAX_NODES} node reports: name fewer folders")]
    TooMany,
}

/// The `node.json` that `fleet run` writes beside a node's report (`fleet::run::NodeRecord`;
/// read loosely here, so that a record of another version still names its node).
#[derive(Default, Deserialize)]
struct NodeFile {
    node: Option<String>,
    /// `slurm_job` (as the brief of issue T names it) or `job_id` (`fleet run --slurm`).
    #[serde(default, alias = "job_id")]
    slurm_job: Option<serde_json::Value>,
    /// `done`, `unreachable`, `failed`.
    #[serde(default)]
    status: Option<String>,
    /// Why the node was not checked.
    #[serde(default)]
    error: Option<String>,
}

/// Every report file the inputs name: a file as it is, a folder searched for `DIR/*.json`,
/// `DIR/*/report.json` and `DIR/nodes/*/report.json` (`check.json` where a folder has no
/// report.json). Sorted, each file once.
pub fn discover(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ReadError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input)
            .map_err(|_| ReadError::Missing(input.display().to_string()))?;
        if !meta.is_dir() {
            files.push(input.clone());
            continue;
        }
        let before = files.len();
        let list = |dir: &Path| -> Result<Vec<PathBuf>, ReadError> {
            let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|source| ReadError::List {
                    path: dir.display().to_string(),
                    source,
                })?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect();
            v.sort();
            Ok(v)
        };
        for entry in list(input)? {
            if entry.is_dir() {
                let nested = if entry.file_name().is_some_and(|n| n == "nodes") {
                    list(&entry)?
                } else {
                    vec![entry.clone()]
                };
                for node_dir in nested.iter().filter(|p| p.is_dir()) {
                    if let Some(f) = ["report.json", "check.json"]
                        .iter()
                        .map(|n| node_dir.join(n))
                        .find(|f| f.is_file())
                    {
                        files.push(f);
                    } else if node_dir.join("node.json").is_file() {
                        // A node `fleet run` could not check: its record says why, and the
                        // missing report is its finding.
                        files.push(node_dir.join("report.json"));
                    } else if !reference_tools::outputs_in(node_dir).is_empty() {
                        // A folder of nvbandwidth/nccl-tests outputs: the node is the folder.
                        files.push(node_dir.clone());
                    }
                }
            } else if entry.extension().is_some_and(|e| e == "json")
                && !entry
                    .file_name()
                    .is_some_and(|n| n == "node.json" || n == "fleet.json")
                && !reference_tools::sniff(&entry.display().to_string()).is_ok_and(|t| t.is_some())
            {
                files.push(entry);
            }
            if files.len() > MAX_NODES {
                return Err(ReadError::TooMany);
            }
        }
        if files.len() == before && !reference_tools::outputs_in(input).is_empty() {
            // The folder named is one node's outputs.
            files.push(input.clone());
        }
        if files.len() == before {
            return Err(ReadError::Empty(input.display().to_string()));
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Reads one node's file and names the node.
pub fn read_node(path: &Path) -> NodeInput {
    let (record, record_error) = match node_json(path) {
        Ok(r) => (r, None),
        Err(why) => (NodeFile::default(), Some(one_line(&why, 160))),
    };
    let content = if path.is_dir() {
        read_tool_outputs(path)
    } else if path.is_file() {
        read_content(path)
    } else {
        Err(match (&record.status, &record.error) {
            (Some(status), Some(e)) => format!("no report: {status}: {e}"),
            (Some(status), None) => format!("no report: {status}"),
            _ => "no report.json beside its node.json".to_string(),
        })
    }
    .map_err(|e| one_line(&e, 160));
    let slurm_job = record.slurm_job.map(|j| match j {
        serde_json::Value::String(s) => one_line(&s, 40),
        other => one_line(&other.to_string(), 40),
    });
    let node_name = record.node;
    let hostname = match &content {
        Ok(NodeContent::Report(r)) => r.machine.hostname.clone(),
        _ => None,
    };
    let fallback = || {
        let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
        match stem.as_deref() {
            Some("report") | Some("check") => path
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().to_string())
                .or(stem),
            _ => stem,
        }
        .unwrap_or_else(|| path.display().to_string())
    };
    let origin = fallback();
    let name = node_name
        .or(hostname)
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| origin.clone());
    NodeInput {
        name: one_line(&name, MAX_NAME_CHARS),
        origin: one_line(&origin, MAX_NAME_CHARS),
        path: path.to_path_buf(),
        slurm_job,
        content,
        record_error,
    }
}

/// A report.json or a `check --json` file; the error is one line.
///
/// A report of this build's schema is deserialized straight into its types: no JSON tree, which
/// `report::parse` builds to tell versions and kinds apart and to name a bad field's path, and
/// which takes most of the time of reading 1,000 nodes. Anything else — an older version, a
/// `check --json` file, a malformed file — goes the long way, for its typed error.
fn read_content(path: &Path) -> Result<NodeContent, String> {
    let content = parse_content(path)?;
    check_figures(&content).map_err(|e| format!("the report is damaged: field {e}"))?;
    Ok(content)
}

/// A node's folder of nvbandwidth/nccl-tests outputs as one report (the figures they measured,
/// the GPUs they name); the error is the importer's one line.
fn read_tool_outputs(dir: &Path) -> Result<NodeContent, String> {
    let files = reference_tools::outputs_in(dir);
    let imported = reference_tools::import(&files).map_err(|e| e.to_string())?;
    let content = NodeContent::Report(Box::new(imported.report()));
    check_figures(&content).map_err(|e| format!("the report is damaged: field {e}"))?;
    Ok(content)
}

/// The GB/s figures a fleet compares, held to [`crate::model::validate::GBPS`]: a median of
/// 1e308 GB/s is a damaged or forged file, not a node to compare the fleet against.
fn check_figures(content: &NodeContent) -> Result<(), String> {
    match content {
        NodeContent::Report(r) => {
            let gpus: Vec<usize> = r.topology.gpus.iter().map(|g| g.index).collect();
            if let Some(b) = &r.bandwidth {
                crate::model::check_bandwidth_figures(&b.results, "bandwidth.results", &gpus)?;
            }
            if let Some(c) = &r.collectives {
                crate::model::check_collective_figures(&c.results, "collectives.results")?;
            }
            if let Some(h) = &r.health {
                crate::model::check_bandwidth_figures(&h.bandwidth, "health.bandwidth", &gpus)?;
            }
        }
        NodeContent::Check(h) => {
            crate::model::check_bandwidth_figures(&h.bandwidth, "bandwidth", &[])?
        }
    }
    Ok(())
}

fn parse_content(path: &Path) -> Result<NodeContent, String> {
    let bytes = crate::input::read(path, crate::report::MAX_REPORT_BYTES).map_err(|e| match e {
        crate::input::InputError::TooLarge { .. } => {
            crate::report::ReportError::TooLarge.to_string()
        }
        other => crate::report::ReportError::Io(other.into()).to_string(),
    })?;
    // The fast way in skips `report::parse`'s JSON tree; its one rule serde does not hold —
    // figures not negative (JSON has no NaN or infinity) — is kept by taking any file with a
    // negative number the slow way, which names the field.
    if !may_hold_negative(&bytes)
        && let Ok(r) = serde_json::from_slice::<Report>(&bytes)
        && r.kind == crate::report::KIND
        && r.schema_version == crate::report::SCHEMA_VERSION
    {
        return Ok(NodeContent::Report(Box::new(r)));
    }
    if let Ok(h) = serde_json::from_slice::<HealthReport>(&bytes) {
        return Ok(NodeContent::Check(Box::new(h)));
    }
    let text = std::str::from_utf8(&bytes).map_err(|e| format!("not UTF-8 text ({e})"))?;
    match crate::report::parse(text) {
        Ok(r) => Ok(NodeContent::Report(Box::new(r))),
        Err(crate::report::ReportError::NotAReport) => {
            Err("neither a report.json nor a check --json file".to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Whether JSON text may hold a negative number: a `-` right after `:`, `[` or `,` (whitespace
/// between allowed). A `-` inside a string can match too; that only costs the slow way.
fn may_hold_negative(json: &[u8]) -> bool {
    let mut last = b' ';
    for &b in json {
        if b == b'-' && matches!(last, b':' | b'[' | b',') {
            return true;
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
    }
    false
}

/// The `node.json` beside a report.json or check.json; nothing for other files (a folder of
/// `*.json` reports shares one folder) or where there is none; why not where one is there and
/// cannot be read.
fn node_json(path: &Path) -> Result<NodeFile, String> {
    let own_folder = path
        .file_name()
        .is_some_and(|n| n == "report.json" || n == "check.json");
    let Some(file) = path.parent().map(|p| p.join("node.json")) else {
        return Ok(NodeFile::default());
    };
    if !own_folder || !file.is_file() {
        return Ok(NodeFile::default());
    }
    let text = crate::input::read_text(&file, MAX_NODE_JSON).map_err(|e| e.to_string())?;
    serde_json::from_str::<NodeFile>(&text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_numbers_are_spotted() {
        assert!(may_hold_negative(br#"{"a": -1}"#));
        assert!(may_hold_negative(b"[1,\n  -2.5]"));
        assert!(may_hold_negative(b"[-0]"));
        assert!(!may_hold_negative(
            br#"{"a": 1e-3, "b": "x-y", "c": [1, 2]}"#
        ));
    }
}
