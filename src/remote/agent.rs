//! `scalescope agent`: serves one client over standard input and output (docs/PROTOCOL.md).
//! A hello first; then topology requests are answered at once, and one job at a time runs on a
//! worker thread whose events are written as they come. A bad request gets an `error` line and
//! the agent keeps serving; end of input cancels a running job, waits for it to release the
//! GPUs, and ends the agent.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::protocol::{
    ALIVE_EVERY, FromAgent, JOB_KINDS, MAX_LINE, MachineHello, PROTOCOL_VERSION, ToAgent, line,
};
use crate::job::{self, Target, TestHooks};
use crate::model::traffic::LiveEvent;
use crate::model::validate::quoted;

/// The agent's output, shared by the reader (answers) and the job's worker (events).
type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn send(out: &Out, msg: &FromAgent) {
    // An error's text may quote what the request said (a serde message naming an unknown
    // variant): it goes out as one line, its control characters escaped.
    let one = |e: &str| crate::model::validate::one_line(e, 200);
    let fixed;
    let msg = match msg {
        FromAgent::Error { id, error } => {
            fixed = FromAgent::Error {
                id: id.clone(),
                error: one(error),
            };
            &fixed
        }
        FromAgent::Failed { id, error, code } => {
            fixed = FromAgent::Failed {
                id: id.clone(),
                error: one(error),
                code: *code,
            };
            &fixed
        }
        other => other,
    };
    if let Ok(mut w) = out.lock() {
        // A closed client cannot be told anything: the next read sees EOF and ends the agent.
        let _ = w.write_all(line(msg).as_bytes()).and_then(|_| w.flush());
    }
}

/// The job in flight.
struct Running {
    id: serde_json::Value,
    cancel: Arc<AtomicBool>,
    worker: JoinHandle<()>,
}

/// Says `alive` about job `id` every [`ALIVE_EVERY`] until `beating` is cleared (checked every
/// 100 ms, so the job's last line follows its end at once).
fn alive(out: Out, id: serde_json::Value, beating: Arc<AtomicBool>) -> Option<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("scalescope-agent-alive".into())
        .spawn(move || {
            let mut last = std::time::Instant::now();
            while beating.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if last.elapsed() >= ALIVE_EVERY && beating.load(Ordering::Relaxed) {
                    send(&out, &FromAgent::Alive { id: id.clone() });
                    last = std::time::Instant::now();
                }
            }
        })
        .ok()
}

/// What the agent says about this machine in its hello.
pub fn hello_machine() -> MachineHello {
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    let (gpus, driver, live, reason) = match crate::topology::live::read() {
        Ok(t) => {
            let driver = match &t.source {
                crate::model::TopologySource::Live { driver_version, .. } => driver_version.clone(),
                _ => None,
            };
            (
                t.gpus.iter().filter_map(|g| g.name.clone()).collect(),
                driver,
                true,
                None,
            )
        }
        Err(e) => (Vec::new(), None, false, Some(e.to_string())),
    };
    MachineHello {
        hostname,
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        gpus,
        driver,
        live,
        reason,
    }
}

/// Serves requests from `input`, answering on `output`, until end of input; jobs run with
/// `hooks` (none in a normal run). Returns the exit code (0).
pub fn serve(input: impl Read, output: Box<dyn Write + Send>, hooks: TestHooks) -> i32 {
    serve_with(input, output, hooks, None)
}

/// [`serve`], answering `watch` requests from the recording `watch_replay` instead of the GPUs
/// when one is given (the hidden `--test-watch-replay` hook).
pub fn serve_with(
    input: impl Read,
    output: Box<dyn Write + Send>,
    hooks: TestHooks,
    watch_replay: Option<std::path::PathBuf>,
) -> i32 {
    let out: Out = Arc::new(Mutex::new(output));
    send(
        &out,
        &FromAgent::Hello {
            protocol: PROTOCOL_VERSION,
            scalescope: env!("CARGO_PKG_VERSION").to_string(),
            machine: hello_machine(),
            jobs: JOB_KINDS.iter().map(|k| k.to_string()).collect(),
        },
    );
    // A job and a watch may run at once (the client watches the traffic of its own job).
    let mut slots = Slots::default();
    crate::lines::read_lines(input, MAX_LINE, &mut |text, cut| {
        for slot in [&mut slots.job, &mut slots.watch] {
            if slot.as_ref().is_some_and(|r| r.worker.is_finished())
                && let Some(r) = slot.take()
            {
                let _ = r.worker.join();
            }
        }
        handle(&out, &mut slots, hooks, watch_replay.as_deref(), &text, cut);
    });
    // End of input: the client is gone. Stop the job and let it release the GPUs.
    for r in [slots.job.take(), slots.watch.take()].into_iter().flatten() {
        r.cancel.store(true, Ordering::Relaxed);
        let _ = r.worker.join();
    }
    0
}

/// What runs: one job and one watch at most.
#[derive(Default)]
struct Slots {
    job: Option<Running>,
    watch: Option<Running>,
}

/// The files a job names must be regular files here: standard input (`-`) is the protocol
/// stream, and a FIFO or a device would hold the agent (or feed it without end).
fn readable_here(target: &Target) -> Result<(), String> {
    let files: Vec<&str> = match target {
        Target::Import { paths } => paths.iter().map(String::as_str).collect(),
        Target::Catalog { name } if name.trim().to_ascii_lowercase().ends_with(".toml") => {
            vec![name.trim()]
        }
        _ => Vec::new(),
    };
    for f in files {
        if f == "-" {
            return Err(
                "import: \"-\" (standard input) is the agent's protocol stream; give a file on the server"
                    .into(),
            );
        }
        match std::fs::metadata(f) {
            Ok(m) if !m.is_file() => {
                return Err(format!(
                    "{}: not a regular file; the agent reads only regular files",
                    quoted(f)
                ));
            }
            // A missing file is reported by the reader, with its own words.
            _ => {}
        }
    }
    Ok(())
}

/// One request line `text` (`cut` when it was longer than [`MAX_LINE`]): read, checked and
/// answered, or its job or watch started in `slots`.
fn handle(
    out: &Out,
    slots: &mut Slots,
    hooks: TestHooks,
    watch_replay: Option<&std::path::Path>,
    text: &str,
    cut: bool,
) {
    let Some(request) = read_request(out, text, cut) else {
        return;
    };
    match request {
        ToAgent::Topology { id, target } => match target
            .map(|t| readable_here(&t).map(|_| t))
            .unwrap_or(Ok(Target::Live))
            .and_then(|t| t.load().map_err(|e| e.to_string()))
        {
            Ok(t) => send(
                out,
                &FromAgent::Topology {
                    id,
                    topology: Box::new(t),
                },
            ),
            Err(e) => send_error(out, id, e),
        },
        ToAgent::Cancel { id } => match [&slots.job, &slots.watch]
            .into_iter()
            .flatten()
            .find(|r| r.id == id && !r.worker.is_finished())
        {
            Some(r) => r.cancel.store(true, Ordering::Relaxed),
            None => send_error(out, id, "no job with this id is running".into()),
        },
        ToAgent::Watch { id, request } => start_watch(out, slots, watch_replay, id, request),
        ToAgent::Run { id, job } => start_job(out, slots, hooks, id, job),
    }
}

/// Answers request `id` with an error: a request the agent could not take.
fn send_error(out: &Out, id: serde_json::Value, message: String) {
    send(out, &FromAgent::Error { id, error: message });
}

/// Answers request `id` with a job the command line would refuse: the input's fault (code 2),
/// at once.
fn send_refusal(out: &Out, id: serde_json::Value, message: String) {
    let e = job::JobError::input(message);
    send(
        out,
        &FromAgent::Failed {
            id,
            error: e.message,
            code: e.code,
        },
    );
}

/// Request line `text` read: `None`, with an error or refusal sent, when it is blank, cut,
/// not JSON, of an unknown type, without an id, or with values out of range or unreadable.
fn read_request(out: &Out, text: &str, cut: bool) -> Option<ToAgent> {
    if text.trim().is_empty() {
        return None;
    }
    let error = |id: serde_json::Value, message: String| {
        send_error(out, id, message);
        None
    };
    if cut {
        return error(
            serde_json::Value::Null,
            format!("request longer than {} MiB: skipped", MAX_LINE >> 20),
        );
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return error(
                serde_json::Value::Null,
                format!("not JSON ({e}): {}", quoted(text)),
            );
        }
    };
    let id = value.get("id").cloned().unwrap_or(serde_json::Value::Null);
    let Some(kind) = value.get("type").and_then(|t| t.as_str()) else {
        return error(
            id,
            "a request is a JSON object with a \"type\" (topology, run, cancel, watch) and an \
             \"id\""
                .to_string(),
        );
    };
    if !matches!(kind, "topology" | "run" | "cancel" | "watch") {
        return error(
            id,
            format!(
                "unknown request type {} (known: topology, run, cancel, watch)",
                quoted(kind)
            ),
        );
    }
    if id.is_null() {
        return error(id, format!("a {kind} request needs an \"id\""));
    }
    // Reading a request checks its values (their types' deserializers): a value out of range
    // (GPUs listed twice, an interval of 0, a price of -1) is the job's input, refused as the
    // command line refuses it; anything else unreadable is a bad request.
    let (read, refused) = crate::model::options::refusal_in(|| {
        serde_path_to_error::deserialize::<_, ToAgent>(&value)
    });
    match (read, refused) {
        (Ok(r), _) => Some(r),
        (Err(_), Some(refused)) => {
            send_refusal(out, id, refused.to_string());
            None
        }
        (Err(e), None) => {
            // The tagged request is read whole, so a nested field's path may be lost ("."):
            // then the message names the field alone (serde's words name it and its type).
            let path = e.path().to_string();
            let at = if path == "." {
                String::new()
            } else {
                format!(" at {path}")
            };
            error(id, format!("bad {kind} request{at}: {}", e.inner()))
        }
    }
}

/// Watch `id` started on a worker thread in `slots` (refused while another watch runs): its
/// events sent as they come (from the recording at `replay` when the agent plays one back),
/// with signs of life between them, then its end.
fn start_watch(
    out: &Out,
    slots: &mut Slots,
    replay: Option<&std::path::Path>,
    id: serde_json::Value,
    request: crate::job::watch::WatchRequest,
) {
    if let Some(r) = slots.watch.as_ref().filter(|r| !r.worker.is_finished()) {
        return send_error(out, id, format!("busy: watch {} is running", r.id));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let (out2, flag, id2) = (out.clone(), cancel.clone(), id.clone());
    let replay = replay.map(std::path::Path::to_path_buf);
    let worker = std::thread::Builder::new()
        .name("scalescope-agent-watch".into())
        .spawn(move || {
            // Signs of life between samples when the interval is long.
            let beating = Arc::new(AtomicBool::new(true));
            let heart = alive(out2.clone(), id2.clone(), beating.clone());
            let mut sink = |event| {
                send(
                    &out2,
                    &FromAgent::Live {
                        id: id2.clone(),
                        event: Box::new(event),
                    },
                )
            };
            let result = match &replay {
                Some(path) => job::watch::watch_recording(path, &flag, &mut sink),
                None => job::watch::watch(&request, &flag, &mut sink),
            };
            beating.store(false, Ordering::Relaxed);
            if let Some(h) = heart {
                let _ = h.join();
            }
            let end = match result {
                Ok(()) => FromAgent::Live {
                    id: id2,
                    event: Box::new(LiveEvent::End { error: None }),
                },
                Err(e) => FromAgent::Failed {
                    id: id2,
                    error: e.message,
                    code: e.code,
                },
            };
            send(&out2, &end);
        });
    match worker {
        Ok(worker) => slots.watch = Some(Running { id, cancel, worker }),
        Err(e) => send_error(out, id, format!("cannot start a worker thread: {e}")),
    }
}

/// Job `id` started on a worker thread in `slots` (refused while another job runs, or when
/// its files or values would be refused): its events sent as they come, with signs of life
/// between them, then its report or failure.
fn start_job(
    out: &Out,
    slots: &mut Slots,
    hooks: TestHooks,
    id: serde_json::Value,
    job: Box<job::Job>,
) {
    if let Some(r) = slots.job.as_ref().filter(|r| !r.worker.is_finished()) {
        return send_error(out, id, format!("busy: job {} is running", r.id));
    }
    if let Err(e) = readable_here(job.target()) {
        return send_error(out, id, e);
    }
    // Refused at once, before a worker starts (job::run_with checks again for every other
    // caller).
    if let Err(e) = job.validate() {
        return send_refusal(out, id, e);
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let (out2, flag, id2) = (out.clone(), cancel.clone(), id.clone());
    let worker = std::thread::Builder::new()
        .name("scalescope-agent-job".into())
        .spawn(move || {
            let beating = Arc::new(AtomicBool::new(true));
            let heart = alive(out2.clone(), id2.clone(), beating.clone());
            let result = job::run_with(&job, hooks, &flag, &mut |event| {
                send(
                    &out2,
                    &FromAgent::Event {
                        id: id2.clone(),
                        event: Box::new(event.clone()),
                    },
                )
            });
            let msg = match result {
                Ok(report) if report.cancelled => FromAgent::Cancelled {
                    id: id2,
                    report: Box::new(report),
                },
                Ok(report) => FromAgent::Done {
                    id: id2,
                    report: Box::new(report),
                },
                Err(e) => FromAgent::Failed {
                    id: id2,
                    error: e.message,
                    code: e.code,
                },
            };
            beating.store(false, Ordering::Relaxed);
            if let Some(h) = heart {
                let _ = h.join();
            }
            send(&out2, &msg);
        });
    match worker {
        Ok(worker) => slots.job = Some(Running { id, cancel, worker }),
        Err(e) => send_error(out, id, format!("cannot start a worker thread: {e}")),
    }
}
