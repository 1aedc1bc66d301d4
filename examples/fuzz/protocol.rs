//! `protocol`: hostile request lines to `scalescope agent` on its standard input — good
//! requests with their values spoiled (structural JSON mutations, terminal escapes, absurd
//! sizes, workloads a workload file could not hold, `-`, FIFOs, devices and folders as files to
//! import), cancels of jobs that do not run, unknown types, lines that are not JSON or longer
//! than the protocol allows. The agent must answer each line that needs an answer with one line
//! of JSON, keep serving, end with 0 at end of input, never panic and never hang.

use std::path::Path;

use crate::mutate::{TERMINAL, mutate_value};
use crate::{Campaign, Case, Outcome, Rng, no_hang_panic_or_escape};

/// Good requests; `{id}` is the request's id, `{file}` a file to import.
const REQUESTS: &[&str] = &[
    r#"{"type":"topology","id":{id},"target":{"kind":"catalog","name":"h200-2x-sxm"}}"#,
    r#"{"type":"topology","id":{id},"target":{"kind":"import","paths":["{file}"]}}"#,
    r#"{"type":"topology","id":{id}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"topology","target":{"kind":"catalog","name":"dgx-h100"}}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"topology","target":{"kind":"import","paths":["{file}"]}}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"bandwidth","target":{"kind":"catalog","name":"h200-2x-sxm"},"options":{"gpus":[],"tests":["h2d","p2p_read_ce"],"sizes":[1048576],"iters":4,"samples":3},"modeled":true}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"bandwidth","target":{"kind":"catalog","name":"h200-2x-sxm"},"options":{"gpus":[0,1],"tests":[],"sizes":[4096,1048576],"iters":16,"samples":5},"modeled":true,"pcie":[5,16]}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"collectives","target":{"kind":"catalog","name":"h200-2x-sxm"},"options":{"gpus":[],"ops":[],"algos":[],"sizes":[1048576],"dtype":"f32","placement":"out_of_place","iters":5,"warmup":1,"graph":false},"modeled":true}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"check","target":{"kind":"catalog","name":"h200-2x-sxm"}}}"#,
    r#"{"type":"run","id":{id},"job":{"kind":"suite","target":{"kind":"catalog","name":"h200-2x-sxm"},"options":{"stages":["topology","bandwidth"],"modeled":true}}}"#,
    r#"{"type":"cancel","id":{id}}"#,
];

/// Files a request names to import.
const FILES: &[&str] = &[
    "-",
    "/dev/zero",
    "/dev/null",
    "/proc/self/mem",
    "/",
    "{fifo}",
    "{capture}",
    "/no/such/file",
    "",
];

pub struct Protocol {
    capture: String,
    scaling: String,
}

impl Protocol {
    pub fn new(root: &Path) -> Protocol {
        // A scaling request needs whole workload objects: the bundled report's own run holds
        // none, so the request is built from the workload catalog's first entry as JSON.
        let workload = serde_json::to_string(&scalescope::scaling::workload::catalog()[0])
            .expect("a workload serializes");
        Protocol {
            capture: root
                .join("tests/data/h200-2x-device-topo-m.txt")
                .to_string_lossy()
                .to_string(),
            scaling: format!(
                r#"{{"type":"run","id":{{id}},"job":{{"kind":"scaling","target":{{"kind":"catalog","name":"h200-2x-sxm"}},"gpus":[],"workloads":[{workload}],"modes":["weak","strong"],"max_gpus":16,"measure":null}}}}"#
            ),
        }
    }
}

/// The types an agent's line may have.
const ANSWERS: &[&str] = &[
    "hello",
    "topology",
    "event",
    "done",
    "cancelled",
    "alive",
    "failed",
    "error",
];

impl Campaign for Protocol {
    fn name(&self) -> &'static str {
        "protocol"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let fifo = dir.join("fifo");
        let _ = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).map(|c| {
            // SAFETY: a NUL-terminated path that lives across the call.
            unsafe { libc::mkfifo(c.as_ptr(), 0o600) }
        });
        let mut lines = Vec::new();
        let mut shown = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let id = match rng.below(6) {
                0 => "\"a\"".to_string(),
                1 => "null".to_string(),
                2 => serde_json::json!(rng.pick(TERMINAL)).to_string(),
                _ => (1 + rng.below(3)).to_string(),
            };
            let template = if rng.below(8) == 0 {
                self.scaling.as_str()
            } else {
                *rng.pick(REQUESTS)
            };
            let file = rng
                .pick(FILES)
                .replace("{fifo}", &fifo.to_string_lossy())
                .replace("{capture}", &self.capture);
            let good = template
                .replace("{id}", &id)
                .replace("{file}", &file.replace('\\', "\\\\").replace('"', "\\\""));
            let line = match rng.below(10) {
                // Spoiled values, still JSON.
                0..=4 => match serde_json::from_str::<serde_json::Value>(&good) {
                    Ok(mut v) => {
                        let rounds = 1 + rng.below(3);
                        mutate_value(rng, &mut v, rounds);
                        serde_json::to_string(&v).unwrap_or(good)
                    }
                    Err(_) => good,
                },
                5 => match rng.below(6) {
                    0 => rng.pick(TERMINAL).to_string(),
                    1 => good[..rng.below(good.len())].to_string(),
                    2 => format!("{good}{good}"),
                    3 => format!(
                        r#"{{"type":"run","id":1,"pad":"{}"}}"#,
                        "x".repeat(17 << 20)
                    ),
                    4 => r#"{"type":"frobnicate","id":1}"#.to_string(),
                    _ => "[]".to_string(),
                },
                _ => good,
            };
            shown.push(line.chars().take(60).collect::<String>());
            lines.push(line);
        }
        let mut stdin = lines.join("\n").into_bytes();
        stdin.push(b'\n');
        Case {
            args: vec!["agent".to_string()],
            stdin: Some(stdin.clone()),
            input: stdin,
            origin: shown.join(" | "),
            ..Case::default()
        }
    }

    fn check(&self, _case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        no_hang_panic_or_escape(o)?;
        if o.code != Some(0) {
            return Err(format!("the agent ended with {:?}, not 0", o.code));
        }
        for (n, line) in o.stdout.lines().enumerate() {
            let v: serde_json::Value = serde_json::from_str(line)
                .map_err(|e| format!("line {} is not JSON ({e})", n + 1))?;
            let kind = v["type"].as_str().unwrap_or("");
            if !ANSWERS.contains(&kind) {
                return Err(format!("line {} has the type {kind:?}", n + 1));
            }
            if (n == 0) != (kind == "hello") {
                return Err(format!(
                    "line {} is {kind:?}: hello comes first, once",
                    n + 1
                ));
            }
            if kind == "error" || kind == "failed" {
                let text = v["error"].as_str().unwrap_or("");
                if text.is_empty() || text.contains('\n') || text.chars().count() > 2000 {
                    return Err(format!("line {}: an error that is not one line", n + 1));
                }
            }
        }
        Ok(())
    }
}
