//! Fleet acceptance (issue T): many nodes' checks gathered into one fleet report that names the
//! node, GPU or link that differs from the rest. Open this file first; what lives here:
//!
//! - `fleet report` is read → judge → files: `src/fleet/read.rs` finds and reads the per-node
//!   reports ([`read::discover`], [`read::read_node`]; the between-nodes records are read by
//!   `src/fleet/between.rs`;
//!   [`read_and_judge`] reduces each report as it is read, [`judge::NodeRead`]);
//!   `src/fleet/judge.rs` judges them, pure — consistency, outliers, each node's own check,
//!   verdicts, the drain list ([`judge::judge_read`]); `src/fleet/files.rs` turns the outcome into the bytes of fleet.csv,
//!   fleet.json, fleet.html, fleet.png and fleet.pdf ([`files::all`]). [`read_and_judge`] and
//!   [`report`] (which writes the files through `src/output.rs`) put them together here.
//! - A finding, its kinds and the outlier rule both judges share (`worse_verdict`):
//!   `src/fleet/finding.rs`.
//! - `fleet run`'s per-node half (node records, the host list, Slurm, the ssh pool):
//!   `src/fleet/run.rs`; the all-reduce between nodes (plan, `srun` steps, records, its
//!   judgement): `src/fleet/between.rs`.
//!
//! Where else a fleet lives: `fleet run` in `src/cli/fleet_run.rs`, `fleet report` in
//! `src/cli/fleet_report.rs` (both declared in `src/cli/fleet.rs`); the app's Fleet view in
//! `src/ui/views/fleet/mod.rs` and its heat table in `src/ui/views/fleet/table.rs`.

pub mod between;
pub mod files;
pub mod finding;
pub mod judge;
pub mod read;
pub mod run;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::health::Thresholds;
use judge::FleetOutcome;

/// Why a fleet report could not be made (the user's inputs; nodes' files are findings).
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error(transparent)]
    Read(#[from] read::ReadError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot render {file}: {message}")]
    Render { file: &'static str, message: String },
}

impl crate::model::Blame for FleetError {
    fn fault(&self) -> crate::model::Fault {
        match self {
            Self::Read(_) => crate::model::Fault::Input,
            Self::Write { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                crate::model::Fault::Input
            }
            Self::Write { .. } | Self::Render { .. } => crate::model::Fault::Machine,
        }
    }
}

/// Reads the node reports that `inputs` name (folders or files, with the between-nodes runs of
/// a folder's `between/`) and judges them now.
pub fn read_and_judge(
    inputs: &[PathBuf],
    thresholds: &Thresholds,
) -> Result<FleetOutcome, FleetError> {
    let files = read::discover(inputs)?;
    let nodes = read_nodes(&files);
    let (mut between, mut unread) = (Vec::new(), Vec::new());
    for dir in inputs.iter().filter(|p| p.is_dir()) {
        let (records, errors) = between::read_records(&dir.join(between::BETWEEN_DIR));
        between.extend(records);
        unread.extend(errors);
    }
    Ok(judge::judge_read(
        nodes,
        &between,
        unread,
        thresholds,
        SystemTime::now(),
    ))
}

/// Every node's file read ([`read::read_node`]) and reduced to what the fleet's rules read
/// ([`judge::NodeRead::of`]) on every core, each report dropped as soon as it is reduced: a
/// fleet holds a reduced node per node and one report per core, never every report (16,000
/// checked nodes' reports were 6.6 GB).
pub fn read_nodes(files: &[PathBuf]) -> Vec<judge::NodeRead> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len().max(1));
    let chunk = files.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|f| judge::NodeRead::of(read::read_node(f)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Reads the node reports that `inputs` name, judges them and writes fleet.csv, fleet.json,
/// fleet.html, fleet.png and fleet.pdf into `out` (created if missing; each file written to a
/// temporary name, synced and renamed). The outcome's verdict is FAIL when a node fails. For
/// callers outside the command line (tests, benches); `fleet report` writes through
/// cli/output.rs.
pub fn report(
    inputs: &[PathBuf],
    out: &Path,
    thresholds: &Thresholds,
) -> Result<FleetOutcome, FleetError> {
    let outcome = read_and_judge(inputs, thresholds)?;
    let write_err = |path: &Path, source| FleetError::Write {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(out).map_err(|e| write_err(out, e))?;
    let mut failed = None;
    for (name, bytes) in files::all(&outcome) {
        match bytes {
            Ok(bytes) => {
                let path = out.join(name);
                crate::output::write_atomic(&path, &bytes).map_err(|e| write_err(&path, e))?;
            }
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    failed.map_or(Ok(outcome), Err)
}
