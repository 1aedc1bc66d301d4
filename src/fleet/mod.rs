//! Fleet acceptance (issue T): many nodes' checks gathered into one fleet report that names the
//! node, GPU or link that differs from the rest. `report.rs` reads the per-node reports and
//! judges them; `run.rs` starts the per-node work through Slurm or ssh.

pub mod run;
