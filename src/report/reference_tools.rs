//! The files a user imports (`--import FILE…`, the app's File menu, a fleet node's folder) with
//! the reference tools' outputs among them: nvbandwidth's (text and `-j` JSON) and nccl-tests'
//! (the text table and the `-J` JSON file of any collective's `_perf` binary), told apart from
//! `nvidia-smi` captures by their content, never by their names.
//!
//! Each file is read once (standard input too), bounded as every capture is
//! ([`crate::topology::import::MAX_CAPTURE_BYTES`]); the captures make the machine as
//! [`machine_import::import_machine_texts`] reads them, and the tools' outputs become the report's
//! bandwidth and collectives sections, measured, each naming its source (tool, version, host,
//! date and command line where printed). Without a capture the machine is the GPUs the outputs
//! name ([`TopologySource::ToolOutput`]): how they connect is not known. An error is one line
//! naming the file and, where there is one, the line.

use super::nccl_tests::{self, NcclTestsRun};
use super::nvbandwidth::{self, NvbandwidthRun};
use super::tool_error::ToolError;
use super::{BandwidthSection, CollectivesSection, MachineInfo, Report};
use crate::model::{CollectiveOp, Gpu, Topology, TopologyNote, TopologySource};
use crate::topology::TopologyError;
use crate::topology::import::MAX_CAPTURE_BYTES;
use crate::topology::machine_import::{self, ImportedMachine};

/// A reference tool whose output scalescope reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// nvbandwidth, text or `-j` JSON.
    Nvbandwidth,
    /// nccl-tests' text table.
    NcclTestsText,
    /// nccl-tests' `-J FILE.json`.
    NcclTestsJson,
}

/// Which tool wrote `text`, judged from its content; `None` for anything else (an
/// `nvidia-smi` capture, a report).
pub fn tool_of(text: &str) -> Option<Tool> {
    if nccl_tests::is_text_output(text) {
        Some(Tool::NcclTestsText)
    } else if super::nccl_tests_json::is_json_output(text) {
        Some(Tool::NcclTestsJson)
    } else if nvbandwidth::is_output(text) {
        Some(Tool::Nvbandwidth)
    } else {
        None
    }
}

/// One tool's run read from one file.
#[derive(Clone, Debug, PartialEq)]
pub enum Run {
    NcclTests(NcclTestsRun),
    Nvbandwidth(NvbandwidthRun),
}

/// A run and the file it came from (`-` for standard input).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRun {
    pub path: String,
    pub run: Run,
}

/// What the imported files hold: the machine (from the captures, else the GPUs the tools'
/// outputs name) and the tools' runs, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    pub machine: ImportedMachine,
    pub runs: Vec<ToolRun>,
}

impl Imported {
    /// True when any file was a reference tool's output.
    pub fn has_tools(&self) -> bool {
        !self.runs.is_empty()
    }

    fn nccl(&self) -> impl Iterator<Item = &NcclTestsRun> {
        self.runs.iter().filter_map(|r| match &r.run {
            Run::NcclTests(n) => Some(n),
            Run::Nvbandwidth(_) => None,
        })
    }

    fn nvbandwidth(&self) -> impl Iterator<Item = &NvbandwidthRun> {
        self.runs.iter().filter_map(|r| match &r.run {
            Run::Nvbandwidth(n) => Some(n),
            Run::NcclTests(_) => None,
        })
    }

    /// The tools' runs in words, each once: `nvbandwidth v0.8, driver … on node1; nccl-tests
    /// 2.19.6, NCCL 2.28.9, 8 ranks on node1`.
    pub fn source_words(&self) -> String {
        let mut labels: Vec<String> = Vec::new();
        for r in &self.runs {
            let l = match &r.run {
                Run::NcclTests(n) => n.source_label(),
                Run::Nvbandwidth(n) => n.source_label(),
            };
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        labels.join("; ")
    }

    /// Every nvbandwidth run's cells as one section; `None` without an nvbandwidth output.
    pub fn bandwidth(&self) -> Option<BandwidthSection> {
        let runs: Vec<&NvbandwidthRun> = self.nvbandwidth().collect();
        let first = runs.first()?;
        let mut section = first.section();
        let mut labels = vec![first.source_label()];
        for r in &runs[1..] {
            section.results.extend(r.results.iter().cloned());
            let l = r.source_label();
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
        section.backend = format!("imported: {}", labels.join("; "));
        Some(section)
    }

    /// Every nccl-tests run's rows as one section; `None` without an nccl-tests output.
    pub fn collectives(&self) -> Option<CollectivesSection> {
        let runs: Vec<NcclTestsRun> = self.nccl().cloned().collect();
        (!runs.is_empty()).then(|| nccl_tests::section(&runs))
    }

    /// What was read and what was not, one line per file: `nvbandwidth.txt: nvbandwidth v0.8 …,
    /// 12 figures; not read: host_to_device_memcpy_sm (no scalescope test measures it …)`.
    pub fn summary_lines(&self) -> Vec<String> {
        self.runs
            .iter()
            .map(|t| {
                let (label, n, not_read) = match &t.run {
                    Run::NcclTests(r) => (r.provenance(), r.results.len(), &r.not_read),
                    Run::Nvbandwidth(r) => (r.source_label(), r.results.len(), &r.not_read),
                };
                let mut line = format!(
                    "{}: {label}; {n} figure{}",
                    t.path,
                    if n == 1 { "" } else { "s" }
                );
                if !not_read.is_empty() {
                    line.push_str(&format!("; not read: {}", not_read.join("; ")));
                }
                crate::model::validate::for_terminal(&line)
            })
            .collect()
    }

    /// One line per file that held figures scalescope did not read, and why (`FILE: 13 "int8"
    /// rows not read: …`, `FILE: not read: host_to_device_memcpy_sm: …`). Empty where every
    /// figure was read.
    pub fn not_read_lines(&self) -> Vec<String> {
        self.runs
            .iter()
            .filter_map(|t| {
                // nccl-tests' note says "… not read: …" itself; nvbandwidth's name the tests.
                let (not_read, head) = match &t.run {
                    Run::NcclTests(r) => (&r.not_read, ""),
                    Run::Nvbandwidth(r) => (&r.not_read, "not read: "),
                };
                (!not_read.is_empty()).then(|| {
                    crate::model::validate::for_terminal(&format!(
                        "{}: {head}{}",
                        t.path,
                        not_read.join("; ")
                    ))
                })
            })
            .collect()
    }

    /// The imported files as a report: the machine, and the tools' sections, measured (on the
    /// machine the outputs came from, not here).
    pub fn report(&self) -> Report {
        let topo = &self.machine.topology;
        let nv: Vec<&NvbandwidthRun> = self.nvbandwidth().collect();
        let nccl: Vec<&NcclTestsRun> = self.nccl().collect();
        let hostname = nv
            .iter()
            .find_map(|r| r.host.clone())
            .or_else(|| nccl.iter().find_map(|r| r.hosts.first().cloned()));
        let mut commands: Vec<String> = Vec::new();
        for c in nccl.iter().filter_map(|r| r.command_line.clone()) {
            if !commands.contains(&c) {
                commands.push(c);
            }
        }
        let machine = MachineInfo {
            hostname: hostname.clone(),
            label: hostname.unwrap_or_else(|| topo.title()),
            display_name: None,
            driver_version: nv.iter().find_map(|r| r.driver.clone()),
            cuda_version: nv.iter().find_map(|r| r.cuda.as_deref().map(cuda_words)),
            nccl_version: nccl.iter().find_map(|r| r.nccl.clone()),
            gpu_names: topo.gpus.iter().filter_map(|g| g.name.clone()).collect(),
            created_at: nccl.iter().find_map(|r| r.date.clone()).unwrap_or_default(),
            scalescope_version: env!("CARGO_PKG_VERSION").to_string(),
            command_line: commands,
            preset: "imported".to_string(),
        };
        let mut report = Report::new(machine, topo.clone());
        report.bandwidth = self.bandwidth();
        report.collectives = self.collectives();
        report
    }
}

/// CUDA's version as nvbandwidth prints it (`13000`) in the usual words (`13.0`); as printed
/// when it is not that code.
fn cuda_words(v: &str) -> String {
    match v.trim().parse::<u32>() {
        Ok(code) if code >= 1000 => format!("{}.{}", code / 1000, (code % 1000) / 10),
        _ => v.to_string(),
    }
}

/// The name errors use for `path`.
fn origin(path: &str) -> &str {
    if path == "-" { "<stdin>" } else { path }
}

/// Reads `path` (`-`: standard input) within the capture bound.
fn read_bytes(path: &str) -> Result<Vec<u8>, TopologyError> {
    let read = if path == "-" {
        crate::input::read_stdin(MAX_CAPTURE_BYTES)
    } else {
        crate::input::read(std::path::Path::new(path), MAX_CAPTURE_BYTES)
    };
    read.map_err(|e| match e {
        crate::input::InputError::TooLarge { .. } => TopologyError::BadFile {
            origin: origin(path).to_string(),
            message: format!(
                "larger than {} MiB: not an nvidia-smi capture, nvbandwidth or nccl-tests output",
                MAX_CAPTURE_BYTES >> 20
            ),
        },
        other => TopologyError::Io {
            path: origin(path).to_string(),
            source: other.into(),
        },
    })
}

/// The collective a file's name suggests (`node1/all_reduce_perf.txt`, `ar-sendrecv_perf.json`),
/// for outputs that do not name it.
pub fn op_of_file_name(path: &str) -> Option<CollectiveOp> {
    let name = std::path::Path::new(path).file_name()?.to_str()?;
    // Longest names first, so that no name is found inside another.
    let mut ops: Vec<CollectiveOp> = CollectiveOp::ALL.to_vec();
    ops.sort_by_key(|o| std::cmp::Reverse(o.id().len()));
    ops.into_iter()
        .find(|o| name.contains(&format!("{}_perf", o.id())))
}

/// A tool's error as the importer's: the file, and the line where there is one.
fn located(path: &str, e: ToolError) -> TopologyError {
    match e.line {
        Some(line) => TopologyError::Parse {
            origin: origin(path).to_string(),
            line,
            message: e.message,
        },
        None => TopologyError::BadFile {
            origin: origin(path).to_string(),
            message: e.message,
        },
    }
}

/// Reads one tool's output; `Ok(None)` when the text is none of theirs.
fn read_run(path: &str, text: &str) -> Result<Option<Run>, TopologyError> {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| {
        !matches!(c, '\t' | '\n' | '\r') && crate::model::validate::unsafe_on_terminal(c)
    }) && tool_of(text).is_some()
    {
        return Err(TopologyError::Parse {
            origin: origin(path).to_string(),
            line: 1 + text[..at].matches('\n').count(),
            message: format!(
                "control character U+{:04X}: not the text nvbandwidth or nccl-tests prints",
                u32::from(c)
            ),
        });
    }
    let hint = op_of_file_name(path);
    let run = match tool_of(text) {
        None => return Ok(None),
        Some(Tool::NcclTestsText) => {
            Run::NcclTests(nccl_tests::parse(text, hint).map_err(|e| located(path, e))?)
        }
        Some(Tool::NcclTestsJson) => {
            Run::NcclTests(super::nccl_tests_json::parse(text, hint).map_err(|e| located(path, e))?)
        }
        Some(Tool::Nvbandwidth) => Run::Nvbandwidth(
            nvbandwidth::parse(text, nvbandwidth::DEFAULT_BUFFER_BYTES)
                .map_err(|e| located(path, e))?,
        ),
    };
    Ok(Some(run))
}

/// Which tool wrote the file at `path` (`-`: standard input), judged from its content; `None`
/// for anything else (a report, a capture, binary data).
pub fn sniff(path: &str) -> Result<Option<Tool>, TopologyError> {
    let bytes = read_bytes(path)?;
    Ok(tool_of(&String::from_utf8_lossy(&bytes)))
}

/// The most files of one folder looked at for tools' outputs (a node's folder holds a few).
pub const MAX_FOLDER_FILES: usize = 256;

/// The reference tools' outputs in folder `dir` (not its subfolders), sorted: the files whose
/// content one of them wrote, whatever their names. Files that cannot be read are left for the
/// caller's other readers.
pub fn outputs_in(dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .take(MAX_FOLDER_FILES)
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| p.display().to_string())
        .filter(|p| sniff(p).ok().flatten().is_some())
        .collect()
}

/// Reads each path (`-`: standard input, read once) and makes one machine of them: the
/// `nvidia-smi` captures as `--import` always read them, the reference tools' outputs as runs.
pub fn import(paths: &[String]) -> Result<Imported, TopologyError> {
    let mut inputs = Vec::with_capacity(paths.len());
    for p in paths {
        inputs.push((p.clone(), read_bytes(p)?));
    }
    import_bytes(inputs)
}

/// [`import`] for files already read: `(path, bytes)` each.
pub fn import_bytes(inputs: Vec<(String, Vec<u8>)>) -> Result<Imported, TopologyError> {
    let mut captures: Vec<(String, String)> = Vec::new();
    let mut runs: Vec<ToolRun> = Vec::new();
    for (path, bytes) in inputs {
        match std::str::from_utf8(&bytes) {
            Ok(text) if tool_of(text).is_some() => {
                if let Some(run) = read_run(&path, text)? {
                    runs.push(ToolRun { path, run });
                }
            }
            Err(e) if tool_of(&String::from_utf8_lossy(&bytes)).is_some() => {
                let line = 1 + bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                return Err(TopologyError::Parse {
                    origin: origin(&path).to_string(),
                    line,
                    message:
                        "binary data (not UTF-8): not the text nvbandwidth or nccl-tests prints"
                            .into(),
                });
            }
            _ => {
                let text = crate::topology::import::decode(&bytes, origin(&path))?;
                captures.push((path, text));
            }
        }
    }
    let machine = if captures.is_empty() {
        let paths: Vec<String> = runs.iter().map(|r| r.path.clone()).collect();
        ImportedMachine {
            topology: gpus_named(&runs, paths),
            inventory: None,
            after: None,
        }
    } else {
        machine_import::import_machine_texts(&captures)?
    };
    same_gpus(&machine.topology, &runs)?;
    Ok(Imported { machine, runs })
}

/// The GPUs the runs name, by index: nvbandwidth's device list, else the ranks of an nccl-tests
/// run on one host.
fn gpus_named(runs: &[ToolRun], paths: Vec<String>) -> Topology {
    let mut names: Vec<Option<String>> = Vec::new();
    for r in runs {
        let these: Vec<Option<String>> = match &r.run {
            Run::Nvbandwidth(n) => n.devices.iter().cloned().map(Some).collect(),
            Run::NcclTests(n) if n.hosts.len() <= 1 => n.devices.clone(),
            Run::NcclTests(_) => Vec::new(),
        };
        for (i, name) in these.into_iter().enumerate() {
            if i >= names.len() {
                names.push(None);
            }
            if names[i].is_none() {
                names[i] = name;
            }
        }
    }
    let mut t = Topology::new(TopologySource::ToolOutput { paths });
    t.gpus = names
        .into_iter()
        .enumerate()
        .map(|(index, name)| Gpu {
            index,
            name,
            ..Default::default()
        })
        .collect();
    t.normalize();
    t.notes.push(TopologyNote::new(
        "GPUs as nvbandwidth/nccl-tests output names them: how they connect is not known (import `nvidia-smi topo -m` and `nvidia-smi -q` output beside it for the links)",
    ));
    t
}

/// An nvbandwidth output that names more GPUs than the captures hold is of another machine.
fn same_gpus(topo: &Topology, runs: &[ToolRun]) -> Result<(), TopologyError> {
    for r in runs {
        let Run::Nvbandwidth(n) = &r.run else {
            continue;
        };
        if !topo.gpus.is_empty() && n.devices.len() > topo.gpus.len() {
            return Err(TopologyError::BadFile {
                origin: origin(&r.path).to_string(),
                message: format!(
                    "names {} GPUs where the captures imported with it hold {}: not the same machine",
                    n.devices.len(),
                    topo.gpus.len()
                ),
            });
        }
    }
    Ok(())
}
