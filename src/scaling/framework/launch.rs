//! The script and its launches: written to a temporary folder, given a spec per workload and
//! GPU count, run with `torch.distributed.run` in its own process group under a time limit.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::protocol::{Event, MAX_LINE, ProbeLine, ResultLine, clip, parse_line, read_lines};
use super::{FrameworkError, FrameworkOptions};
use crate::scaling::table::Mode;
use crate::scaling::workload::{Pattern, Workload};

/// The training script, as shipped.
pub const SCRIPT: &str = include_str!("../../../assets/frameworks/ddp_step.py");

/// Default time limit of one launch (model build, warm-up, measurement, profile).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Seconds the timed window's energy stretches span at least (the script grows the window
/// until they do): NVML's counter steps about every 100 ms, under 2 % of 5 s.
pub const MIN_ENERGY_S: f64 = 5.0;

/// Writes the script to a fresh temporary folder, removed on drop.
pub(super) struct ScriptDir(PathBuf);

impl ScriptDir {
    pub(super) fn new() -> Result<ScriptDir, FrameworkError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("scalescope-{}-{nanos}", std::process::id()));
        let fail = |e: std::io::Error| FrameworkError::Script {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(&dir).map_err(fail)?;
        std::fs::write(dir.join("ddp_step.py"), SCRIPT).map_err(fail)?;
        Ok(ScriptDir(dir))
    }

    pub(super) fn script(&self) -> PathBuf {
        self.0.join("ddp_step.py")
    }
}

impl Drop for ScriptDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The fewest timed steps of a run on one GPU: it calibrates the model, and its steps' spread
/// gives the straggler term (a quantile needs more than a handful of samples).
pub(super) const MIN_STEPS_ONE_GPU: u32 = 15;

/// The script's spec for `w` on `n` GPUs: one run per mode with its micro-batch and
/// accumulation; the (mode, per-GPU batch, global batch) of each.
pub(super) fn spec(
    w: &Workload,
    n: usize,
    opts: &FrameworkOptions,
) -> (serde_json::Value, Vec<(Mode, f64)>) {
    let m = w.model.clone().unwrap_or_default();
    let micro_max = w.micro_batch().max(1.0).floor();
    let mut runs = Vec::new();
    let mut planned = Vec::new();
    for &mode in &opts.modes {
        if mode == Mode::Strong
            && opts
                .strong_for
                .as_ref()
                .is_some_and(|only| !only.contains(&w.name))
        {
            continue;
        }
        let per = match mode {
            Mode::Weak => w.per_gpu_batch,
            Mode::Strong => (w.strong_global_batch / n as f64).floor(),
        };
        if per < 1.0 {
            continue;
        }
        let acc = (per / micro_max).ceil().max(1.0);
        let micro = (per / acc).floor().max(1.0);
        runs.push(serde_json::json!({"mode": mode.id(), "accumulate": acc, "micro_batch": micro}));
        planned.push((mode, micro * acc));
    }
    let micro = runs
        .first()
        .and_then(|r| r["micro_batch"].as_f64())
        .unwrap_or(micro_max);
    let mut arch = serde_json::Map::new();
    for (k, v) in [
        ("layers", m.layers),
        ("hidden", m.hidden),
        ("heads", m.heads),
        ("seq_len", m.seq_len),
        ("vocab", m.vocab),
        ("intermediate", m.intermediate),
    ] {
        if let Some(v) = v {
            arch.insert(k.into(), v.into());
        }
    }
    let spec = serde_json::json!({
        "workload": w.name,
        "model": m.id,
        "arch": arch,
        "image_size": m.image_size.unwrap_or(224),
        "num_classes": 1000,
        "micro_batch": micro,
        "runs": runs,
        "bucket_mb": w.bucket_bytes / 1048576.0,
        "parallel": if w.pattern == Pattern::Fsdp { "fsdp" } else { "ddp" },
        "optimizer": w.optimizer().framework_id(),
        "warmup_s": opts.warmup_s,
        "warmup_next_s": opts.warmup_next_s,
        "measure_s": opts.measure_s,
        "noisy_measure_s": opts.noisy_measure_s,
        // NVML's energy counter steps about every 100 ms: 5 s of the steps' stretches keep
        // its granularity under 2 % of the window's energy (issue U; a 4.1 s window of
        // ResNet-50's 256 ms strong steps read +3.2 % against a separate reader).
        "min_energy_s": MIN_ENERGY_S,
        // A later run of the workload whose step is longer is not timed under DDP again (0:
        // none is).
        "ddp_one_max_step_s": if opts.ddp_one_once { 0.0 } else { 0.5 },
        "min_steps": if n == 1 { MIN_STEPS_ONE_GPU } else { 5 },
        "max_steps": 200,
        // The kernel split calibrates the model from the 1-GPU step only: on more GPUs the
        // profiler's steps (about 3 s a run with its start-up) would feed nothing.
        "profile_steps": if n == 1 { opts.profile_steps } else { 0 },
    });
    (spec, planned)
}

/// How one launch ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchOutcome {
    pub results: Vec<ResultLine>,
    pub probes: Vec<ProbeLine>,
    pub hello: Option<(Option<String>, Option<String>)>,
    /// CUDA ran out of memory: (mode, message).
    pub oom: Option<(Option<String>, String)>,
    /// Why the launch failed (crash, timeout, cancel, an error event of no one workload,
    /// garbage), one line.
    pub failure: Option<String>,
    /// Lines on stdout that were not understood.
    pub garbage: Vec<String>,
    /// In a launch of several workloads: each one's out-of-memory (mode, message) and error.
    pub ends: Vec<WorkloadEnd>,
    /// Where the launch's time went, per phase of the script.
    pub phases: PhaseTimes,
}

/// Where launches' time went: seconds per phase of the script (its `progress` events: build,
/// warmup, measure, host, profile, ddp_one …), "start" from the process's start to its first
/// phase (Python, imports, CUDA and NCCL set-up). Summed over a run's launches, it says what
/// the scaling stage's minutes were spent on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes(pub Vec<(String, f64)>);

impl PhaseTimes {
    /// Adds `seconds` to `phase` (a new phase goes last: the order they first ran in).
    pub fn add(&mut self, phase: &str, seconds: f64) {
        match self.0.iter_mut().find(|(p, _)| p == phase) {
            Some((_, s)) => *s += seconds,
            None => self.0.push((phase.to_string(), seconds)),
        }
    }

    /// Adds every phase of `other`.
    pub fn merge(&mut self, other: &PhaseTimes) {
        for (p, s) in &other.0 {
            self.add(p, *s);
        }
    }

    /// Seconds in all.
    pub fn total(&self) -> f64 {
        self.0.iter().map(|(_, s)| s).sum()
    }

    /// `start 12.1 s, build 20.4 s, …`, the longest first.
    pub fn describe(&self) -> String {
        let mut v = self.0.clone();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v.iter()
            .map(|(p, s)| format!("{p} {s:.1} s"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Times a launch's phases as its `progress` events arrive.
struct PhaseClock {
    current: String,
    since: f64,
    times: PhaseTimes,
}

impl PhaseClock {
    fn new() -> PhaseClock {
        PhaseClock {
            current: "start".into(),
            since: 0.0,
            times: PhaseTimes::default(),
        }
    }

    /// Event `e` arrived `now` seconds after the launch: a `progress` event ends the phase
    /// before it.
    fn see(&mut self, e: &Event, now: f64) {
        if let Event::Progress { phase, .. } = e {
            self.times.add(&self.current, now - self.since);
            self.current = phase.clone();
            self.since = now;
        }
    }

    /// The times, the last phase running until `now` (the process's end).
    fn finish(mut self, now: f64) -> PhaseTimes {
        self.times.add(&self.current, now - self.since);
        self.times
    }
}

/// How one workload of a launch ended, where it did not end well.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadEnd {
    pub workload: String,
    pub oom: Option<(Option<String>, String)>,
    pub error: Option<String>,
}

impl LaunchOutcome {
    /// The launch as one workload saw it: its results, its own out-of-memory or error, and —
    /// where it got no result and no end of its own — the launch's failure (the process ended
    /// before or while it ran).
    pub fn for_workload(&self, name: &str) -> LaunchOutcome {
        let results: Vec<ResultLine> = self
            .results
            .iter()
            .filter(|r| r.workload.as_deref().is_none_or(|w| w == name))
            .cloned()
            .collect();
        let own = self.ends.iter().find(|e| e.workload == name);
        // An out-of-memory that names no workload (a script of one) is the only one's.
        let oom = own.and_then(|e| e.oom.clone()).or_else(|| {
            self.ends
                .iter()
                .all(|e| e.oom.is_none())
                .then(|| self.oom.clone())
                .flatten()
        });
        let failure = match own.and_then(|e| e.error.clone()) {
            Some(e) => Some(e),
            // A launch that ran the overlap probe at its end printed something: that it
            // printed no result of this workload is said here.
            None if results.is_empty() && oom.is_none() => self
                .failure
                .clone()
                .or_else(|| {
                    self.oom.as_ref().map(|_| {
                        "the launch ended when another workload ran out of GPU memory".into()
                    })
                })
                .or_else(|| Some(self.no_result())),
            None => None,
        };
        LaunchOutcome {
            results,
            probes: Vec::new(),
            hello: self.hello.clone(),
            oom,
            failure,
            garbage: self.garbage.clone(),
            ends: Vec::new(),
            // The launch's time is the whole launch's, counted once by whoever launched it.
            phases: PhaseTimes::default(),
        }
    }
}

/// Launches `script` with `spec` through `torch.distributed.run`, one process per GPU of `gpus`
/// (`CUDA_VISIBLE_DEVICES` set to them), unbuffered, with [`launch`]'s time limit and cancel.
pub(super) fn launch_script(
    python: &str,
    script: &str,
    spec: &serde_json::Value,
    gpus: &[usize],
    timeout: Duration,
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> LaunchOutcome {
    let visible = gpus
        .iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let args = vec![
        "-m".to_string(),
        "torch.distributed.run".to_string(),
        "--standalone".to_string(),
        format!("--nproc_per_node={}", gpus.len()),
        script.to_string(),
        "--spec".to_string(),
        spec.to_string(),
    ];
    let envs = vec![
        ("CUDA_VISIBLE_DEVICES".to_string(), visible),
        ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
    ];
    launch(python, &args, &envs, timeout, cancel, on_event)
}

/// Runs `python args…` in its own process group with `env`, streaming stdout events to
/// `on_event`; kills the group at `timeout` or when `cancel` is set.
pub fn launch(
    python: &str,
    args: &[String],
    env: &[(String, String)],
    timeout: Duration,
    cancel: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> LaunchOutcome {
    let mut out = LaunchOutcome::default();
    let mut cmd = Command::new(python);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            out.failure = Some(format!("cannot start {python}: {e}"));
            return out;
        }
    };
    enum Line {
        Out(String),
        Err(String),
    }
    let (tx, rx) = mpsc::channel::<Line>();
    let mut readers = Vec::new();
    if let Some(o) = child.stdout.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            read_lines(o, &mut |l| {
                let _ = tx.send(Line::Out(l));
            })
        }));
    }
    if let Some(e) = child.stderr.take() {
        let tx = tx.clone();
        readers.push(std::thread::spawn(move || {
            read_lines(e, &mut |l| {
                let _ = tx.send(Line::Err(l));
            })
        }));
    }
    drop(tx);
    let start = Instant::now();
    let mut clock = PhaseClock::new();
    let mut stderr_tail: std::collections::VecDeque<String> = Default::default();
    let mut ended_by: Option<String> = None;
    loop {
        if cancel.load(Ordering::Relaxed) {
            ended_by = Some("cancelled".into());
            break;
        }
        if start.elapsed() > timeout {
            ended_by = Some(format!(
                "timed out after {:.0} s (limit: --framework-timeout)",
                timeout.as_secs_f64()
            ));
            break;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Line::Out(l)) => match parse_line(&l) {
                Ok(Some(e)) => {
                    clock.see(&e, start.elapsed().as_secs_f64());
                    on_event(&e);
                    out.absorb(e);
                }
                Ok(None) => {}
                Err(why) => out.garbage.push(why),
            },
            Ok(Line::Err(l)) => {
                if stderr_tail.len() == 20 {
                    stderr_tail.pop_front();
                }
                stderr_tail.push_back(l);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    if ended_by.is_some() {
        kill_group(&mut child);
    }
    let status = child.wait().ok();
    for r in readers {
        let _ = r.join();
    }
    out.phases = clock.finish(start.elapsed().as_secs_f64());
    if out.failure.is_none() {
        out.failure = out.failure_after(ended_by, status, &stderr_tail);
    }
    out
}

impl LaunchOutcome {
    /// Keeps what protocol event `e` says: a result, a probe, the greeting, a workload's or the
    /// launch's out-of-memory or error.
    fn absorb(&mut self, e: Event) {
        match e {
            Event::Result(r) => self.results.push(*r),
            Event::Probe(p) => self.probes.push(*p),
            Event::Hello { torch, gpu, .. } => self.hello = Some((torch, gpu)),
            Event::Oom {
                workload,
                mode,
                message,
                ..
            } => {
                let oom = (mode, message.unwrap_or_default());
                if let Some(w) = workload {
                    end_of(&mut self.ends, w).oom = Some(oom.clone());
                }
                self.oom = Some(oom);
            }
            Event::Error {
                workload,
                kind,
                phase,
                message,
                ..
            } => {
                let why = format!(
                    "{}{}: {}",
                    kind.unwrap_or_else(|| "error".into()),
                    phase.map(|p| format!(" while {p}")).unwrap_or_default(),
                    clip(&message.unwrap_or_default(), 300)
                );
                match workload {
                    Some(w) => end_of(&mut self.ends, w).error = Some(why),
                    None => self.failure = Some(why),
                }
            }
            _ => {}
        }
    }

    /// Why the launch failed, where nothing said so before: how it was ended, its exit code
    /// with the last line of its standard error, or that it printed no result.
    fn failure_after(
        &self,
        ended_by: Option<String>,
        status: Option<std::process::ExitStatus>,
        stderr_tail: &std::collections::VecDeque<String>,
    ) -> Option<String> {
        match (ended_by, status) {
            (Some(why), _) => Some(why),
            // A workload's own end (out of memory, an error) explains the exit code.
            _ if self.oom.is_some() || !self.ends.is_empty() => None,
            (None, Some(s)) if !s.success() => {
                let tail = stderr_tail
                    .iter()
                    .rev()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty() && !l.starts_with('*'))
                    .map(|l| clip(l, 300))
                    .unwrap_or_default();
                Some(format!(
                    "exited with {}{}",
                    s.code()
                        .map_or("a signal".to_string(), |c| format!("code {c}")),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                ))
            }
            _ if self.results.is_empty() && self.probes.is_empty() => Some(self.no_result()),
            _ => None,
        }
    }

    /// `printed no result`, with the lines not understood.
    fn no_result(&self) -> String {
        match self.garbage.first() {
            None => "printed no result".to_string(),
            Some(first) => format!(
                "printed no result; {} line(s) not understood, the first: {first}",
                self.garbage.len()
            ),
        }
    }
}

/// The entry of workload `w` in `ends`, added where there is none.
fn end_of(ends: &mut Vec<WorkloadEnd>, w: String) -> &mut WorkloadEnd {
    let i = match ends.iter().position(|e| e.workload == w) {
        Some(i) => i,
        None => {
            ends.push(WorkloadEnd {
                workload: w,
                ..Default::default()
            });
            ends.len() - 1
        }
    };
    &mut ends[i]
}

/// Waits for a child (with a time limit, then kills its process group) and returns (exit ok,
/// stdout, stderr).
pub(super) fn wait_output(
    mut child: std::process::Child,
    limit: Duration,
) -> Option<(bool, String, String)> {
    let (mut out, mut err) = (child.stdout.take()?, child.stderr.take()?);
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out
            .by_ref()
            .take(MAX_LINE as u64 * 4)
            .read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err
            .by_ref()
            .take(MAX_LINE as u64 * 4)
            .read_to_string(&mut s);
        s
    });
    let status = crate::process::wait_within(&mut child, limit);
    if status.is_none() {
        kill_group(&mut child);
    }
    let (o, e) = (
        t_out.join().unwrap_or_default(),
        t_err.join().unwrap_or_default(),
    );
    status.map(|s| (s.success(), o, e))
}

/// Ends a child started with `process_group(0)` and everything it started (torchrun's workers).
pub(super) fn kill_group(child: &mut std::process::Child) {
    let pgid = child.id() as libc::pid_t;
    // SAFETY: kill(2) with a negative pid signals the process group the child leads (it was
    // spawned with process_group(0), so its pid is the group id); no memory is touched.
    unsafe {
        libc::kill(-pgid, libc::SIGTERM);
    }
    crate::process::wait_within(child, Duration::from_secs(5));
    // SAFETY: as above; SIGKILL for whatever ignored SIGTERM.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
    let _ = child.wait();
}

pub(super) fn last_line(s: &str) -> Option<String> {
    s.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| clip(l, 300))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_launchs_time_goes_to_the_phase_that_was_running() {
        use super::{Event, PhaseClock};
        let progress = |phase: &str| Event::Progress {
            phase: phase.into(),
            mode: None,
            model: None,
            workload: None,
        };
        let mut c = PhaseClock::new();
        c.see(&progress("build"), 10.0);
        c.see(&Event::Done, 12.0);
        c.see(&progress("warmup"), 15.0);
        c.see(&progress("measure"), 20.0);
        c.see(&progress("warmup"), 26.0);
        let t = c.finish(29.0);
        let get = |p: &str| t.0.iter().find(|(q, _)| q == p).map(|x| x.1);
        assert_eq!(get("start"), Some(10.0));
        assert_eq!(
            get("build"),
            Some(5.0),
            "a non-progress event ends no phase"
        );
        assert_eq!(get("warmup"), Some(8.0), "a phase run twice adds up");
        assert_eq!(get("measure"), Some(6.0));
        assert_eq!(t.total(), 29.0);
        assert!(
            t.describe().starts_with("start 10.0 s, warmup 8.0 s"),
            "{}",
            t.describe()
        );
    }

    use super::*;

    #[test]
    fn spec_accumulates_strong_batches() {
        let w = crate::scaling::workload::catalog()
            .into_iter()
            .find(|w| w.name == "gpt2-xl")
            .unwrap();
        let (s, planned) = spec(&w, 2, &FrameworkOptions::default());
        // Strong: 64 sequences over 2 GPUs = 32 per GPU = 4 micro-batches of 8.
        assert_eq!(planned, vec![(Mode::Weak, 8.0), (Mode::Strong, 32.0)]);
        assert_eq!(s["runs"][1]["accumulate"], 4.0);
        assert_eq!(s["runs"][1]["micro_batch"], 8.0);
        assert_eq!(s["model"], "transformers:gpt2");
        assert_eq!(s["arch"]["layers"], 48);
        assert_eq!(s["optimizer"], "adamw");
        assert_eq!(s["parallel"], "ddp");
        // Only the 1-GPU step's kernel split calibrates the model: more GPUs are not profiled.
        assert_eq!(s["profile_steps"], 0);
        assert_eq!(
            spec(&w, 1, &FrameworkOptions::default()).0["profile_steps"],
            2
        );
    }
}
