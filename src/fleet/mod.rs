//! Fleet acceptance (issue T): many nodes' checks gathered into one fleet report that names the
//! node, GPU or link that differs from the rest. `read.rs` finds and reads the per-node reports,
//! `report.rs` judges them (consistency, outliers, verdicts; a finding and the outlier rule in
//! `finding.rs`) and `files.rs` writes the outcome
//! as fleet.csv, fleet.json, fleet.html, fleet.png and fleet.pdf; `run.rs` starts the per-node
//! work through Slurm or ssh; `between.rs` is the all-reduce between nodes.
//!
//! Where else a fleet lives (open this file first): `fleet run` in `src/cli/fleet_run.rs`,
//! `fleet report` in `src/cli/fleet_report.rs` (both declared in `src/cli/fleet.rs`); the app's
//! Fleet view in `src/ui/fleet_view.rs` and its heat table in `src/ui/fleet_table.rs`.

pub mod between;
pub mod files;
pub mod finding;
pub mod read;
pub mod report;
pub mod run;
