//! Real framework runs: each workload's training step in PyTorch, the measured truth that the
//! model is calibrated from and checked against.
//!
//! scalescope writes its training script (assets/frameworks/ddp_step.py, embedded in the binary)
//! to a temporary folder and launches it with `python3 -m torch.distributed.run --standalone
//! --nproc_per_node=N` for N = 1, 2, 4, … and all selected GPUs, `CUDA_VISIBLE_DEVICES` set to
//! the first N of them. The script prints one JSON object per line (its docstring is the
//! protocol); this module parses them, reports progress, enforces a timeout, and turns each
//! launch into rows — a crash, a hang, garbage or an out-of-memory becomes a row that says so,
//! and the other launches still run.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::calibrate::{MeasuredStep, ProbeRates, is_host_bound};
use super::memory;
use super::model::{Mode, OverlapMeasure, RowSource, ScalingPoint, fill_speedup};
use super::proxy::proxy_counts;
use super::workload::{Pattern, Workload};

/// The training script, as shipped.
pub const SCRIPT: &str = include_str!("../../assets/frameworks/ddp_step.py");

/// Environment variable naming the Python to use.
pub const ENV_PYTHON: &str = "SCALESCOPE_PYTHON";

/// Default time limit of one launch (model build, warm-up, measurement, profile).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Lines longer than this are cut (a script that prints garbage cannot exhaust memory).
const MAX_LINE: usize = 1 << 20;

/// What `python -c` prints about its PyTorch.
const PROBE: &str = r#"
import json, sys
r = {"python": sys.version.split()[0]}
try:
    import torch
    r["torch"] = torch.__version__
    r["cuda"] = torch.version.cuda
    r["gpus"] = torch.cuda.device_count()
except Exception as e:
    r["error"] = "%s: %s" % (type(e).__name__, e)
for m in ("transformers", "torchvision"):
    try:
        r[m] = __import__(m).__version__
    except Exception:
        r[m] = None
print(json.dumps(r))
"#;

/// A Python that has PyTorch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PythonEnv {
    /// The interpreter as it was found (a path or `python3`).
    pub path: String,
    pub python: String,
    pub torch: String,
    /// CUDA version PyTorch was built with (`None`: a CPU build).
    pub cuda: Option<String>,
    /// GPUs PyTorch sees.
    pub gpus: usize,
    pub transformers: Option<String>,
    pub torchvision: Option<String>,
}

impl PythonEnv {
    /// e.g. `PyTorch 2.11.0+cu130, transformers 5.17.0 (python3 3.12.3)`.
    pub fn describe(&self) -> String {
        let mut s = format!("PyTorch {}", self.torch);
        if let Some(t) = &self.transformers {
            s.push_str(&format!(", transformers {t}"));
        }
        if let Some(t) = &self.torchvision {
            s.push_str(&format!(", torchvision {t}"));
        }
        format!("{s} ({} {})", self.path, self.python)
    }
}

/// Why no framework run could start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FrameworkError {
    /// No interpreter answered.
    #[error("no python3 found (tried {tried}); give one with --python PATH or {ENV_PYTHON}")]
    NoPython { tried: String },
    /// The interpreter has no (working) PyTorch.
    #[error("{python} has no working PyTorch ({message})")]
    NoTorch { python: String, message: String },
    /// The script could not be written.
    #[error("cannot write the training script to {path}: {message}")]
    Script { path: String, message: String },
}

#[derive(Deserialize)]
struct ProbeAnswer {
    python: Option<String>,
    torch: Option<String>,
    cuda: Option<String>,
    gpus: Option<usize>,
    error: Option<String>,
    transformers: Option<String>,
    torchvision: Option<String>,
}

/// Finds a Python with PyTorch: `explicit` (--python), then `SCALESCOPE_PYTHON`, then `python3`
/// on PATH. Each is asked for its versions (within 90 s: importing PyTorch is slow).
pub fn find_python(explicit: Option<&Path>) -> Result<PythonEnv, FrameworkError> {
    let mut tried = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    if let Some(p) = explicit {
        candidates.push(p.display().to_string());
    } else if let Some(p) = std::env::var_os(ENV_PYTHON).filter(|p| !p.is_empty()) {
        candidates.push(p.to_string_lossy().into_owned());
    } else {
        candidates.push("python3".to_string());
    }
    for c in candidates {
        let out = Command::new(&c)
            .args(["-c", PROBE])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        let child = match out {
            Ok(child) => child,
            Err(e) => {
                tried.push(format!("{c}: {e}"));
                continue;
            }
        };
        let output = wait_output(child, Duration::from_secs(90));
        let Some((ok, stdout, stderr)) = output else {
            return Err(FrameworkError::NoTorch {
                python: c,
                message: "it did not answer within 90 s".into(),
            });
        };
        let answer = stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<ProbeAnswer>(l.trim()).ok());
        let Some(a) = answer else {
            let why = last_line(&stderr).unwrap_or_else(|| {
                if ok {
                    "its answer was not understood".into()
                } else {
                    "it exited with an error".into()
                }
            });
            return Err(FrameworkError::NoTorch {
                python: c,
                message: why,
            });
        };
        return match (a.torch, a.error) {
            (Some(torch), None) => Ok(PythonEnv {
                path: c,
                python: a.python.unwrap_or_default(),
                torch,
                cuda: a.cuda,
                gpus: a.gpus.unwrap_or(0),
                transformers: a.transformers,
                torchvision: a.torchvision,
            }),
            (_, e) => Err(FrameworkError::NoTorch {
                python: c,
                message: e.unwrap_or_else(|| "torch not importable".into()),
            }),
        };
    }
    Err(FrameworkError::NoPython {
        tried: tried.join("; "),
    })
}

/// Waits for a child (with a time limit, then kills its process group) and returns (exit ok,
/// stdout, stderr).
fn wait_output(mut child: std::process::Child, limit: Duration) -> Option<(bool, String, String)> {
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
fn kill_group(child: &mut std::process::Child) {
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

fn last_line(s: &str) -> Option<String> {
    s.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| clip(l, 300))
}

/// A line as it may be shown: control characters escaped, cut to `max` characters.
pub fn clip(s: &str, max: usize) -> String {
    let escaped: String = s.chars().flat_map(char::escape_debug).collect();
    if escaped.chars().count() > max {
        format!("{}…", escaped.chars().take(max).collect::<String>())
    } else {
        escaped
    }
}

/// Step-time statistics of one result line, ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepStats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub n: usize,
}

/// Kernel time per step on one rank (PyTorch profiler), ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub matrix: f64,
    pub nccl: f64,
    pub other: f64,
    pub busy_ms: f64,
    pub nccl_overlap_ms: f64,
    pub wall_ms: f64,
}

/// Profiles of every rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileSet {
    pub ranks: Vec<Option<Profile>>,
}

/// One measured mode of one launch (`"event": "result"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    pub workload: Option<String>,
    pub mode: String,
    pub world_size: usize,
    pub micro_batch: f64,
    pub accumulate: f64,
    pub per_gpu_batch: f64,
    pub global_batch: f64,
    pub steps: usize,
    pub step_ms: StepStats,
    #[serde(default)]
    pub rank_median_ms: Vec<f64>,
    #[serde(default)]
    pub step_samples_ms: Vec<f64>,
    pub fwd_ms: Option<f64>,
    pub bwd_ms: Option<f64>,
    pub opt_ms: Option<f64>,
    pub samples_per_s: Option<f64>,
    pub peak_mem_gib: Option<f64>,
    pub reserved_gib: Option<f64>,
    pub params: Option<f64>,
    pub model: Option<String>,
    pub profile: Option<ProfileSet>,
    /// The host floor (world size 1): the median step at `host_micro_batch` samples, ms.
    #[serde(default)]
    pub host_ms: Option<f64>,
    #[serde(default)]
    pub host_micro_batch: Option<f64>,
    /// The sequence length of the host floor's batch, where the micro-batch had too few samples
    /// to take a sixteenth of them (language models: shorter sequences instead).
    #[serde(default)]
    pub host_seq_len: Option<f64>,
    /// The host probe between the timed steps (same process), median, µs per iteration: the
    /// host's speed during the window.
    #[serde(default)]
    pub host_probe_us: Option<f64>,
    /// How many host probe timings that median is of.
    #[serde(default)]
    pub host_probes: Option<f64>,
    /// The host probe just before and after the host floor, µs per iteration (their mean).
    #[serde(default)]
    pub host_floor_probe_us: Option<f64>,
    /// Seconds the timed steps took, and whether the window grew because they spread widely.
    #[serde(default)]
    pub window_s: Option<f64>,
    #[serde(default)]
    pub extended: bool,
}

impl ResultLine {
    /// Checks what the rows are built from: finite, positive, consistent.
    fn check(&self) -> Result<(), String> {
        let s = &self.step_ms;
        for (name, v) in [
            ("step_ms.median", s.median),
            ("step_ms.min", s.min),
            ("step_ms.max", s.max),
            ("per_gpu_batch", self.per_gpu_batch),
            ("global_batch", self.global_batch),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} = {v} is not a positive number"));
            }
        }
        if !(s.min <= s.median && s.median <= s.max) {
            return Err("step_ms: median outside min … max".into());
        }
        if self.world_size == 0 {
            return Err("world_size = 0".into());
        }
        Ok(())
    }

    /// The host floor at the host's speed while the steps were timed: the floor × the window's
    /// host probe ÷ the probe beside the floor (the host term's own rule, docs/SCALING.md),
    /// since on a host whose speed wanders the floor, timed after the window, may have met a
    /// faster or slower spell. As measured where either probe is missing.
    pub fn host_floor_at_window(&self) -> Option<f64> {
        let floor = positive(self.host_ms)?;
        Some(
            match (
                positive(self.host_probe_us),
                positive(self.host_floor_probe_us),
            ) {
                (Some(window), Some(beside)) => floor * window / beside,
                _ => floor,
            },
        )
    }

    /// The host floor and the host's speed while the steps were timed, for the row's basis
    /// (empty where the floor was not measured).
    fn host_note(&self) -> String {
        let Some(floor) = self.host_floor_at_window() else {
            return String::new();
        };
        format!(
            "; host floor {floor:.1} ms ({:.0} % of the step{}{}){}",
            floor / self.step_ms.median * 100.0,
            if is_host_bound(floor, self.step_ms.median) {
                ": host-bound"
            } else {
                ""
            },
            match (self.host_micro_batch, positive(self.host_seq_len)) {
                (Some(b), Some(seq)) => format!("; timed at {b:.0} × {seq:.0} tokens"),
                _ => String::new(),
            },
            match (positive(self.host_probe_us), self.host_probes) {
                (Some(us), Some(k)) =>
                    format!(", host probe {us:.0} µs during the window ({k:.0} readings)"),
                (Some(us), None) => format!(", host probe {us:.0} µs"),
                _ => String::new(),
            }
        )
    }

    /// The hosts' speed while the n-GPU steps were timed (the slowest rank's host probe, read
    /// between the steps), beside the 1-GPU window's reading `one` of the same workload and
    /// mode: where they differ, the host changed between the windows (the model is built from
    /// the 1-GPU one and does not read this). Empty without a reading.
    fn ranks_host_note(&self, one: Option<f64>) -> String {
        let Some(us) = positive(self.host_probe_us) else {
            return String::new();
        };
        let vs = match positive(one) {
            Some(one) => format!("; {:.2}× the 1-GPU window's {one:.0} µs", us / one),
            None => String::new(),
        };
        format!(
            "; host probe {us:.0} µs during the window (the slowest of {} ranks{vs})",
            self.world_size
        )
    }

    /// Rank 0's kernel profile, when profiled.
    pub fn rank0_profile(&self) -> Option<&Profile> {
        self.profile.as_ref()?.ranks.first()?.as_ref()
    }

    /// Matrix kernels' share of rank 0's kernel time, when profiled.
    pub fn matrix_share(&self) -> Option<f64> {
        let p = self.rank0_profile()?;
        (p.matrix + p.other > 0.0).then(|| p.matrix / (p.matrix + p.other))
    }
}

/// `"event": "probe"`: the overlap probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeLine {
    pub world_size: usize,
    pub matrix_share: f64,
    pub compute_ms: f64,
    pub comm_ms: f64,
    pub both_ms: f64,
    pub hidden: Option<f64>,
    pub gemm_tflops: f64,
    pub copy_gbps: f64,
    /// The host probe on rank 0, alone, µs per iteration.
    #[serde(default)]
    pub host_probe_us: Option<f64>,
    /// Host time to issue one asynchronous all-reduce, every rank at once, µs.
    #[serde(default)]
    pub allreduce_host_us: Option<f64>,
    pub gpu: Option<String>,
}

/// One line of the script's protocol.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Hello {
        torch: Option<String>,
        gpu: Option<String>,
        world_size: Option<usize>,
        nccl: Option<String>,
        transformers: Option<String>,
    },
    Progress {
        phase: String,
        mode: Option<String>,
        model: Option<String>,
    },
    Result(Box<ResultLine>),
    Oom {
        mode: Option<String>,
        phase: Option<String>,
        message: Option<String>,
        peak_mem_gib: Option<f64>,
        total_mem_gib: Option<f64>,
    },
    Error {
        kind: Option<String>,
        mode: Option<String>,
        phase: Option<String>,
        message: Option<String>,
    },
    Probe(Box<ProbeLine>),
    Done,
    /// Anything newer scripts may add.
    #[serde(other)]
    Unknown,
}

/// Parses one line of standard output: `Ok(None)` for lines that are not protocol (blank,
/// or not starting with `{`), `Err` for a `{` line that is not a valid event.
pub fn parse_line(line: &str) -> Result<Option<Event>, String> {
    let t = line.trim();
    if !t.starts_with('{') {
        return Ok(None);
    }
    let e: Event = serde_json::from_str(t).map_err(|e| format!("{e}: {}", clip(t, 120)))?;
    if let Event::Result(r) = &e {
        r.check().map_err(|why| format!("result line: {why}"))?;
    }
    Ok(Some(e))
}

/// How one launch ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchOutcome {
    pub results: Vec<ResultLine>,
    pub probes: Vec<ProbeLine>,
    pub hello: Option<(Option<String>, Option<String>)>,
    /// CUDA ran out of memory: (mode, message).
    pub oom: Option<(Option<String>, String)>,
    /// Why the launch failed (crash, timeout, cancel, error event, garbage), one line.
    pub failure: Option<String>,
    /// Lines on stdout that were not understood.
    pub garbage: Vec<String>,
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
                    on_event(&e);
                    match e {
                        Event::Result(r) => out.results.push(*r),
                        Event::Probe(p) => out.probes.push(*p),
                        Event::Hello { torch, gpu, .. } => out.hello = Some((torch, gpu)),
                        Event::Oom { mode, message, .. } => {
                            out.oom = Some((mode, message.unwrap_or_default()))
                        }
                        Event::Error {
                            kind,
                            phase,
                            message,
                            ..
                        } => {
                            out.failure = Some(format!(
                                "{}{}: {}",
                                kind.unwrap_or_else(|| "error".into()),
                                phase.map(|p| format!(" while {p}")).unwrap_or_default(),
                                clip(&message.unwrap_or_default(), 300)
                            ))
                        }
                        _ => {}
                    }
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
    if out.failure.is_none() {
        out.failure = match (ended_by, status) {
            (Some(why), _) => Some(why),
            _ if out.oom.is_some() => None,
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
            _ if out.results.is_empty() && out.probes.is_empty() => {
                Some(if out.garbage.is_empty() {
                    "printed no result".to_string()
                } else {
                    format!(
                        "printed no result; {} line(s) not understood, the first: {}",
                        out.garbage.len(),
                        out.garbage[0]
                    )
                })
            }
            _ => None,
        };
    }
    out
}

/// Reads lines (cut at [`MAX_LINE`] bytes, marked with `…`) until EOF.
fn read_lines(r: impl Read, each: &mut dyn FnMut(String)) {
    crate::lines::read_lines(r, MAX_LINE, &mut |mut line, cut| {
        if cut {
            line.push('…');
        }
        each(line);
    });
}

/// What to run.
#[derive(Clone, Debug)]
pub struct FrameworkOptions {
    /// CUDA ordinals; a launch on n GPUs uses the first n.
    pub gpus: Vec<usize>,
    pub modes: Vec<Mode>,
    /// Limit of one launch.
    pub timeout: Duration,
    /// Seconds of untimed steps, then of timed steps.
    pub warmup_s: f64,
    pub measure_s: f64,
    /// Where the timed steps spread widely (p90 > 1.15 × p10: a host whose speed wanders), the
    /// timed window grows to this many seconds (no growth when ≤ `measure_s`).
    pub noisy_measure_s: f64,
    /// Steps under the profiler after timing (0: none).
    pub profile_steps: u32,
    /// One GPU's memory, GiB: launches that cannot fit are not started.
    pub gpu_memory_gib: Option<f64>,
}

impl Default for FrameworkOptions {
    fn default() -> Self {
        Self {
            gpus: Vec::new(),
            modes: Mode::ALL.to_vec(),
            timeout: DEFAULT_TIMEOUT,
            warmup_s: 5.0,
            measure_s: 8.0,
            noisy_measure_s: 24.0,
            profile_steps: 2,
            gpu_memory_gib: None,
        }
    }
}

/// Everything the framework runs produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameworkRun {
    /// Measured rows (`measured_framework`), with speedups against the 1-GPU rows.
    pub rows: Vec<ScalingPoint>,
    /// 1-GPU steps, per workload and mode: they calibrate the model.
    pub steps: Vec<MeasuredStep>,
    /// The overlap probe's hidden share, per workload (two GPUs or more).
    pub overlap: Vec<OverlapMeasure>,
    /// The probe's rates on the first GPU.
    pub probe: Option<ProbeRates>,
    /// What failed or was skipped, in words.
    pub notes: Vec<String>,
}

/// The workloads a framework run can build: DDP/FSDP patterns with a reference model.
pub fn runnable(w: &Workload) -> bool {
    w.pattern.has_framework_step() && w.model.is_some()
}

/// The script's spec for `w` on `n` GPUs: one run per mode with its micro-batch and
/// accumulation; the (mode, per-GPU batch, global batch) of each.
fn spec(w: &Workload, n: usize, opts: &FrameworkOptions) -> (serde_json::Value, Vec<(Mode, f64)>) {
    let m = w.model.clone().unwrap_or_default();
    let micro_max = w.micro_batch().max(1.0).floor();
    let mut runs = Vec::new();
    let mut planned = Vec::new();
    for &mode in &opts.modes {
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
        "measure_s": opts.measure_s,
        "noisy_measure_s": opts.noisy_measure_s,
        // One GPU calibrates the model, and its steps' spread gives the straggler term: a
        // quantile needs more than a handful of samples.
        "min_steps": if n == 1 { 15 } else { 5 },
        "max_steps": 200,
        "profile_steps": opts.profile_steps,
    });
    (spec, planned)
}

/// A figure the script reported, kept only when it is a finite positive number.
fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// Writes the script to a fresh temporary folder, removed on drop.
struct ScriptDir(PathBuf);

impl ScriptDir {
    fn new() -> Result<ScriptDir, FrameworkError> {
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

    fn script(&self) -> PathBuf {
        self.0.join("ddp_step.py")
    }
}

impl Drop for ScriptDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs every runnable workload's real training step on 1, 2, 4, … and all of `opts.gpus`, then
/// the overlap probe on all of them; `progress` gets a label and the rows so far after every
/// launch. Failures are rows and notes, never an early end; only a missing script folder is an
/// error.
pub fn run(
    env: &PythonEnv,
    workloads: &[Workload],
    opts: &FrameworkOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) -> Result<FrameworkRun, FrameworkError> {
    let dir = ScriptDir::new()?;
    let script = dir.script().display().to_string();
    let mut run = FrameworkRun::default();
    let basis_env = env.describe();
    for w in workloads.iter().filter(|w| runnable(w)) {
        for n in proxy_counts(opts.gpus.len()) {
            if cancel.load(Ordering::Relaxed) {
                run.notes.push("framework runs cancelled".into());
                return Ok(finish(run));
            }
            let (spec, planned) = spec(w, n, opts);
            if planned.is_empty() {
                continue;
            }
            // A launch that cannot fit by a wide margin is not started (it would only OOM).
            if let Some(cap) = opts.gpu_memory_gib {
                let micro = w.micro_batch().min(w.per_gpu_batch);
                if let Some(e) = memory::estimate(w, w.pattern, n, micro, Some(cap))
                    && e.total_gib() > cap * 1.15
                {
                    for &(mode, per) in &planned {
                        let mut row = row(w, mode, n, per);
                        row.fits = Some(false);
                        row.memory_gib_per_gpu = e.known_total_gib();
                        row.basis = format!(
                            "not run: the model needs {} per GPU of {cap:.0} GiB",
                            e.describe_total()
                        );
                        run.rows.push(row);
                    }
                    progress(
                        &format!("{} on {n} GPU(s): does not fit", w.name),
                        &run.rows,
                    );
                    continue;
                }
            }
            let label = format!("PyTorch: {} on {n} GPU(s)", w.name);
            progress(&label, &run.rows);
            let visible = opts.gpus[..n]
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let args = vec![
                "-m".to_string(),
                "torch.distributed.run".to_string(),
                "--standalone".to_string(),
                format!("--nproc_per_node={n}"),
                script.clone(),
                "--spec".to_string(),
                spec.to_string(),
            ];
            let envs = vec![
                ("CUDA_VISIBLE_DEVICES".to_string(), visible),
                ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
            ];
            let rows_so_far = run.rows.clone();
            let outcome = launch(&env.path, &args, &envs, opts.timeout, cancel, &mut |e| {
                if let Event::Progress { phase, mode, .. } = e {
                    let what = mode
                        .as_deref()
                        .map(|m| format!(" ({m})"))
                        .unwrap_or_default();
                    progress(&format!("{label}: {phase}{what}"), &rows_so_far);
                }
            });
            absorb(&mut run, w, n, &planned, &outcome, &basis_env);
            let partial = finish(run.clone());
            progress(&label, &partial.rows);
        }
    }
    // The probe's GEMM and copy rates move catalog calibrations to this GPU (also on one GPU);
    // its overlap share needs two or more.
    if !opts.gpus.is_empty() && !cancel.load(Ordering::Relaxed) && !run.steps.is_empty() {
        overlap_probe(
            &mut run,
            env,
            &script,
            workloads,
            opts,
            cancel,
            &mut *progress,
        );
    }
    Ok(finish(run))
}

fn row(w: &Workload, mode: Mode, n: usize, per: f64) -> ScalingPoint {
    let mut r = ScalingPoint::empty(w, mode, RowSource::Framework, n);
    r.per_gpu_batch = per;
    r.global_batch = per * n as f64;
    r
}

/// Turns one launch's outcome into rows, 1-GPU calibrations and notes.
fn absorb(
    run: &mut FrameworkRun,
    w: &Workload,
    n: usize,
    planned: &[(Mode, f64)],
    o: &LaunchOutcome,
    basis_env: &str,
) {
    for &(mode, per) in planned {
        let mut r = row(w, mode, n, per);
        match o.results.iter().find(|x| x.mode == mode.id()) {
            Some(x) => {
                r.per_gpu_batch = x.per_gpu_batch;
                r.global_batch = x.global_batch;
                r.step_time_ms = Some(x.step_ms.median);
                r.throughput = Some(x.global_batch / (x.step_ms.median * 1e-3));
                r.memory_gib_per_gpu = x.peak_mem_gib;
                r.fits = Some(true);
                r.basis = format!(
                    "{} steps{}, median {:.2} ms (min {:.2}, max {:.2}); {}{}{}; {basis_env}",
                    x.steps,
                    match (x.extended, x.window_s) {
                        (true, Some(s)) => format!(
                            " over {s:.0} s (window grown: the steps spread widely, the host's speed varied)"
                        ),
                        (true, None) => " (window grown: the steps spread widely)".to_string(),
                        _ => String::new(),
                    },
                    x.step_ms.median,
                    x.step_ms.min,
                    x.step_ms.max,
                    x.model.as_deref().unwrap_or("?"),
                    if x.accumulate > 1.0 {
                        format!(", {} micro-batches of {}", x.accumulate, x.micro_batch)
                    } else {
                        String::new()
                    },
                    if n == 1 {
                        x.host_note()
                    } else {
                        x.ranks_host_note(
                            run.steps
                                .iter()
                                .find(|s| s.workload == w.name && s.mode == mode)
                                .and_then(|s| s.host_probe_us),
                        )
                    },
                );
                if n == 1 {
                    let mut samples = x.step_samples_ms.clone();
                    samples.retain(|v| v.is_finite() && *v > 0.0);
                    run.steps.push(MeasuredStep {
                        workload: w.name.clone(),
                        mode,
                        per_gpu_batch: x.per_gpu_batch,
                        step_ms: x.step_ms.median,
                        optimizer_ms: x
                            .opt_ms
                            .filter(|v| v.is_finite() && *v >= 0.0)
                            .unwrap_or(0.0),
                        samples_ms: samples,
                        matrix_share: x.matrix_share(),
                        matrix_ms: x.rank0_profile().map(|p| p.matrix),
                        other_ms: x.rank0_profile().map(|p| p.other),
                        host_ms: x.host_floor_at_window(),
                        host_probe_us: positive(x.host_probe_us),
                        basis: basis_env.to_string(),
                    });
                }
            }
            None => {
                let why = match (&o.oom, &o.failure) {
                    (Some((m, msg)), _) if m.as_deref().is_none_or(|m| m == mode.id()) => {
                        r.fits = Some(false);
                        format!("out of GPU memory (measured): {}", clip(msg, 200))
                    }
                    (Some(_), _) => "not run: an earlier mode ran out of GPU memory".to_string(),
                    (None, Some(f)) => format!("failed: {f}"),
                    (None, None) => "failed: no result for this mode".to_string(),
                };
                r.basis = why;
            }
        }
        run.rows.push(r);
    }
    if let Some(f) = &o.failure {
        run.notes
            .push(format!("PyTorch {} on {n} GPU(s): {f}", w.name));
    }
    if !o.garbage.is_empty() {
        run.notes.push(format!(
            "PyTorch {} on {n} GPU(s): {} output line(s) not understood, the first: {}",
            w.name,
            o.garbage.len(),
            o.garbage[0]
        ));
    }
}

fn overlap_probe(
    run: &mut FrameworkRun,
    env: &PythonEnv,
    script: &str,
    workloads: &[Workload],
    opts: &FrameworkOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) {
    // One compute mix per workload: its matrix-kernel share measured at n = 1.
    let mut shares: Vec<(String, f64)> = Vec::new();
    for w in workloads.iter().filter(|w| w.pattern.is_training()) {
        let share = run
            .steps
            .iter()
            .find(|s| s.workload == w.name)
            .and_then(|s| s.matrix_share)
            .unwrap_or(0.5);
        shares.push((w.name.clone(), (share * 100.0).round() / 100.0));
    }
    let list: Vec<f64> = {
        let mut v: Vec<f64> = shares.iter().map(|s| s.1).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let n = opts.gpus.len();
    let label = format!("probe on {n} GPU(s): GEMM and copy rates, overlap");
    progress(&label, &run.rows);
    let spec = serde_json::json!({
        "probe": "overlap", "compute_ms": 200, "allreduces": 128, "repeats": 3,
        "matrix_shares": list,
    });
    let visible = opts
        .gpus
        .iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let args = vec![
        "-m".to_string(),
        "torch.distributed.run".to_string(),
        "--standalone".to_string(),
        format!("--nproc_per_node={n}"),
        script.to_string(),
        "--spec".to_string(),
        spec.to_string(),
    ];
    let envs = vec![
        ("CUDA_VISIBLE_DEVICES".to_string(), visible),
        ("PYTHONUNBUFFERED".to_string(), "1".to_string()),
    ];
    let o = launch(&env.path, &args, &envs, opts.timeout, cancel, &mut |_| {});
    if let Some(f) = &o.failure {
        run.notes.push(format!(
            "overlap probe: {f}; the catalog's overlap figures are used"
        ));
    }
    if let Some(p) = o.probes.first() {
        let host = o.probes.iter().find_map(|p| positive(p.host_probe_us));
        let allreduce_host_us = o.probes.iter().find_map(|p| positive(p.allreduce_host_us));
        run.probe = Some(ProbeRates {
            gemm_tflops: p.gemm_tflops,
            copy_gbps: p.copy_gbps,
            host_probe_us: host,
            allreduce_host_us,
            basis: format!(
                "framework probe on {}: torch bf16 4096³ GEMM, 256 MiB device copy ({n} GPUs busy){}",
                p.gpu.as_deref().unwrap_or("GPU 0"),
                host.map(|us| format!("; host probe {us:.0} µs per iteration (GPU 0 alone)"))
                    .unwrap_or_default()
                    + &allreduce_host_us
                        .map(|us| format!("; {us:.0} µs of host time per all-reduce issued"))
                        .unwrap_or_default()
            ),
        });
    }
    for (w, share) in shares {
        let best = o
            .probes
            .iter()
            .filter(|p| p.world_size >= 2 && p.hidden.is_some_and(f64::is_finite))
            .min_by(|a, b| {
                (a.matrix_share - share)
                    .abs()
                    .total_cmp(&(b.matrix_share - share).abs())
            });
        if let Some(p) = best {
            run.overlap.push(OverlapMeasure {
                workload: w,
                matrix_share: p.matrix_share,
                hidden: p.hidden.unwrap_or(0.0).clamp(0.0, 1.0),
                gpus: p.world_size,
                basis: format!(
                    "compute {:.1} ms + all-reduces {:.1} ms alone, {:.1} ms together",
                    p.compute_ms, p.comm_ms, p.both_ms
                ),
            });
        }
    }
}

fn finish(mut run: FrameworkRun) -> FrameworkRun {
    fill_speedup(&mut run.rows);
    run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_protocol_lines() {
        assert_eq!(parse_line("warning: something"), Ok(None));
        assert_eq!(parse_line(""), Ok(None));
        assert!(matches!(
            parse_line(r#"{"event":"done"}"#),
            Ok(Some(Event::Done))
        ));
        assert!(matches!(
            parse_line(r#"{"event":"new_kind","x":1}"#),
            Ok(Some(Event::Unknown))
        ));
        assert!(parse_line("{not json").is_err());
        let bad = r#"{"event":"result","mode":"weak","world_size":1,"micro_batch":8,"accumulate":1,"per_gpu_batch":8,"global_batch":8,"steps":5,"step_ms":{"median":-1,"min":-2,"max":0,"mean":-1,"n":5}}"#;
        let e = parse_line(bad).unwrap_err();
        assert!(e.contains("step_ms.median"), "{e}");
    }

    #[test]
    fn clip_escapes_and_cuts() {
        assert_eq!(clip("a\u{1b}[31mb\n", 100), "a\\u{1b}[31mb\\n");
        assert_eq!(clip(&"x".repeat(10), 4), "xxxx…");
    }

    #[test]
    fn spec_accumulates_strong_batches() {
        let w = super::super::workload::catalog()
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
    }
}
