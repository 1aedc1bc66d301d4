//! The agent protocol's messages (docs/PROTOCOL.md): newline-delimited JSON, one object per line.

use serde::{Deserialize, Serialize};

use crate::job::{Event, Job, Target};
use crate::model::Topology;
use crate::report::Report;

/// This document's version; a client refuses a hello of another. 2 added `alive`.
pub const PROTOCOL_VERSION: u32 = 2;

/// How often the agent says `alive` about the job it runs, so that the client can tell a long
/// step from a server that went silent (the client's `SILENCE_LIMIT`).
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
    /// A watch's header, samples and end (request `watch`).
    Live {
        id: serde_json::Value,
        event: Box<crate::model::traffic::LiveEvent>,
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
    /// Stream this machine's live traffic until cancelled (answered with `live` messages).
    Watch {
        id: serde_json::Value,
        request: crate::job::watch::WatchRequest,
    },
}

/// The job kinds an agent runs.
pub const JOB_KINDS: [&str; 7] = [
    "topology",
    "bandwidth",
    "collectives",
    "scaling",
    "check",
    "suite",
    "watch",
];

/// One JSON line (no newline inside; serde_json escapes control characters).
pub fn line<T: Serialize>(msg: &T) -> String {
    let mut s = serde_json::to_string(msg).unwrap_or_else(|e| {
        format!("{{\"type\":\"error\",\"id\":null,\"error\":\"cannot encode a message: {e}\"}}")
    });
    // JSON leaves DEL, C1 controls and the Unicode line separators raw inside strings; written
    // as \uXXXX escapes they mean the same and the line is safe on a terminal (an agent run by
    // hand echoes what it was sent).
    if s.chars().any(crate::model::validate::unsafe_on_terminal) {
        let mut escaped = String::with_capacity(s.len() + 16);
        for c in s.chars() {
            if crate::model::validate::unsafe_on_terminal(c) {
                escaped.push_str(&format!("\\u{:04x}", c as u32));
            } else {
                escaped.push(c);
            }
        }
        s = escaped;
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_carries_no_raw_terminal_character_and_means_the_same() {
        let text = "a\u{7f}b\u{9b}c\u{2028}d\u{1b}e\nf";
        let l = line(&serde_json::json!({ "error": text }));
        assert!(
            !l.trim_end()
                .chars()
                .any(crate::model::validate::unsafe_on_terminal),
            "{l:?}"
        );
        let back: serde_json::Value = serde_json::from_str(l.trim_end()).unwrap();
        assert_eq!(back["error"], text);
    }
}
