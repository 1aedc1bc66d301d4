//! The agent protocol's messages (docs/PROTOCOL.md): newline-delimited JSON, one object per line.

use serde::{Deserialize, Serialize};

use crate::job::{Event, Job, Target};
use crate::model::Topology;
use crate::report::Report;

/// This document's version; a client refuses a hello of another. 2 added `alive`.
pub const PROTOCOL_VERSION: u32 = 2;

/// How often the agent says `alive` about the job it runs, so that the client can tell a long
/// step from a server that went silent ([`super::client::SILENCE_LIMIT`]).
pub const ALIVE_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Lines longer than this are refused (the rest of the line is skipped).
pub const MAX_LINE: usize = 16 << 20;

/// What the agent says about its machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineHello {
    pub hostname: Option<String>,
    pub os: String,
    pub arch: String,
    /// GPU names in index order (empty when the GPUs cannot be read).
    pub gpus: Vec<String>,
    pub driver: Option<String>,
    /// Whether the GPUs can be read; `reason` says why not.
    pub live: bool,
    pub reason: Option<String>,
}

/// A message from the agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAgent {
    Hello {
        protocol: u32,
        scalescope: String,
        machine: MachineHello,
        jobs: Vec<String>,
    },
    Topology {
        id: serde_json::Value,
        topology: Box<Topology>,
    },
    Event {
        id: serde_json::Value,
        event: Box<Event>,
    },
    Done {
        id: serde_json::Value,
        report: Box<Report>,
    },
    Cancelled {
        id: serde_json::Value,
        report: Box<Report>,
    },
    /// The job `id` is still running (every [`ALIVE_EVERY`]).
    Alive { id: serde_json::Value },
    Failed {
        id: serde_json::Value,
        error: String,
        code: i32,
    },
    Error {
        id: serde_json::Value,
        error: String,
    },
}

/// A request from the client.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAgent {
    Topology {
        id: serde_json::Value,
        #[serde(default)]
        target: Option<Target>,
    },
    Run {
        id: serde_json::Value,
        job: Box<Job>,
    },
    Cancel {
        id: serde_json::Value,
    },
}

/// The job kinds an agent runs.
pub const JOB_KINDS: [&str; 6] = [
    "topology",
    "bandwidth",
    "collectives",
    "scaling",
    "check",
    "suite",
];

/// One JSON line (no newline inside; serde_json escapes control characters).
pub fn line<T: Serialize>(msg: &T) -> String {
    let mut s = serde_json::to_string(msg).unwrap_or_else(|e| {
        format!("{{\"type\":\"error\",\"id\":null,\"error\":\"cannot encode a message: {e}\"}}")
    });
    s.push('\n');
    s
}
