//! scalescope: how a machine's GPUs are connected, how fast they really talk, and what that means
//! for scaling workloads.
//!
//! The library holds everything but the entry point, so that integration tests and benchmarks can
//! reach it. See ARCHITECTURE.md for the layers and what each may use.

pub mod bench;
pub mod cli;
pub mod cuda;
pub mod document;
pub mod export;
pub mod fleet;
pub mod health;
pub mod input;
pub mod job;
pub mod lines;
pub mod model;
pub mod output;
pub mod process;
pub mod remote;
pub mod report;
pub mod scaling;
pub mod telemetry;
pub mod topology;
#[cfg(feature = "gui")]
pub mod ui;
