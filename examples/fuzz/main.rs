//! Fuzzing scalescope through the real binary (what `scripts/fuzz.sh` runs). Each *campaign*
//! makes cases — a command line, files, standard input, environment — from a seeded generator;
//! every case runs with a time limit and is held to the command line's contract:
//!
//! - no panic (exit 101 or "panicked" on stderr) and no hang (the time limit, 10 s by default);
//! - exit code 0, 1 or 2 only (a campaign may allow others, e.g. 3 for a FAIL verdict);
//! - a failure prints exactly one line, starting `Error: `, of at most 2,000 characters;
//! - nothing printed holds a character a terminal acts on (ESC, other controls, U+2028, the
//!   bidirectional overrides: `model::validate::unsafe_on_terminal`);
//! - and what the campaign checks besides (no `NaN`/`inf` figure, nothing written outside
//!   `--out`, …).
//!
//! Cases are reproducible: case i of a campaign with seed s always gets the same input.
//! Violations are saved (input, command, output) under `--keep DIR`.
//!
//! ```sh
//! cargo run --release --example fuzz -- --bin target/release/scalescope          # every campaign
//! cargo run --release --example fuzz -- --bin … --only captures,reports --cases captures=500
//! ```
//!
//! Adding a campaign: a module with a type implementing [`Campaign`], listed in [`campaigns`].

mod args;
mod corpus;
mod fifo;
mod hostile;
mod injection;
mod mutate;
mod protocol;
mod scale;
mod server;
mod signals;
mod surfaces;
mod toml;
mod xml;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// xorshift64*: small, fast and reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D);
        for _ in 0..4 {
            r.next_u64();
        }
        r
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// One case: how to run the binary, and what to save when it breaks the contract.
#[derive(Default)]
pub struct Case {
    /// Arguments after the binary's name.
    pub args: Vec<String>,
    /// Bytes on standard input; `None` for /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// Environment set for this case (on top of the runner's: no GPU, no display).
    pub env: Vec<(String, String)>,
    /// The generated input, saved with a violation (a file's bytes, a protocol script).
    pub input: Vec<u8>,
    /// What the input was made from, for the violation line.
    pub origin: String,
    /// A signal sent to the binary this long after it started (if it is still running).
    pub signal: Option<(i32, Duration)>,
    /// The binary's limit on open files (`ulimit -n`), where the case sets one.
    pub nofile: Option<u64>,
}

/// A family of generated cases.
pub trait Campaign: Sync {
    /// The name used by `--only` and `--cases NAME=N`.
    fn name(&self) -> &'static str;
    /// How many cases a plain run makes.
    fn default_cases(&self) -> usize;
    /// Case number `i`. `dir` is a folder of the worker's own, emptied before each case, for
    /// the files the case needs.
    fn case(&self, rng: &mut Rng, dir: &Path) -> Case;
    /// Runs on a thread of its own beside the binary, from just before it starts (`pid` is 0
    /// until it has): a client of what the binary serves. `Err(why)` is a violation.
    fn during(&self, case: &Case, pid: &AtomicU32) -> Result<(), String> {
        let _ = (case, pid);
        Ok(())
    }
    /// Whether the outcome keeps the contract; by default [`contract`].
    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        let _ = (case, dir);
        contract(o)
    }
}

/// Every campaign, in the order they run.
fn campaigns(root: &Path, bin: &Path) -> Vec<Box<dyn Campaign>> {
    vec![
        Box::new(corpus::Captures::new(root)),
        Box::new(corpus::Reports::new(root)),
        Box::new(xml::Xml::new(root)),
        Box::new(toml::Toml::new(root)),
        Box::new(args::Args::new(root)),
        Box::new(fifo::Fifo::new(root)),
        Box::new(signals::Signals),
        Box::new(scale::Scale),
        Box::new(protocol::Protocol::new(root)),
        Box::new(server::Server::new(bin)),
        Box::new(injection::Injection),
        Box::new(hostile::Hostile::new(root)),
        Box::new(surfaces::Endpoint::new(root)),
        Box::new(surfaces::FleetRun::new(bin)),
        Box::new(surfaces::Pricing),
        Box::new(surfaces::Thresholds::new(root)),
        Box::new(surfaces::Catalog::new(root)),
    ]
}

/// What one run of the binary did.
pub struct Outcome {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Killed at the time limit.
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the binary on one case with a time limit, feeding the case's standard input.
fn run(bin: &Path, case: &Case, timeout: Duration, pid: &AtomicU32) -> Outcome {
    let mut command = Command::new(bin);
    for (k, v) in &case.env {
        command.env(k, v);
    }
    if let Some(n) = case.nofile {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit(2) only, between fork and exec: async-signal-safe, no allocation.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            })
        };
    }
    let mut child = command
        .args(&case.args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(if case.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the binary");
    pid.store(child.id(), Ordering::SeqCst);
    if let (Some(bytes), Some(mut pipe)) = (case.stdin.clone(), child.stdin.take()) {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let mut timed_out = false;
    let mut signal = case.signal;
    let status = loop {
        // Sent only while try_wait says the child was not reaped: its pid is still its own.
        if let Some((sig, after)) = signal
            && start.elapsed() >= after
            && matches!(child.try_wait(), Ok(None))
        {
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            signal = None;
        }
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if start.elapsed() > timeout => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    Outcome {
        code: status.and_then(|s| s.code()),
        timed_out,
        stdout: String::from_utf8_lossy(&out_t.join().unwrap_or_default()).to_string(),
        stderr: String::from_utf8_lossy(&err_t.join().unwrap_or_default()).to_string(),
    }
}

/// What every case must keep, whatever its exit code: no hang, no panic, no terminal control
/// character printed.
pub fn no_hang_panic_or_escape(o: &Outcome) -> Result<(), String> {
    if o.timed_out {
        return Err("hang: killed at the time limit".into());
    }
    if o.stderr.contains("panicked") || o.code == Some(101) {
        return Err("panic".into());
    }
    if let Some(c) = o
        .stdout
        .chars()
        .chain(o.stderr.chars())
        .find(|&c| is_terminal_control(c))
    {
        return Err(format!("terminal control character {c:?} printed"));
    }
    Ok(())
}

/// The command line's contract for every case; `Err(why)` on a violation.
pub fn contract(o: &Outcome) -> Result<(), String> {
    no_hang_panic_or_escape(o)?;
    let code = o.code.ok_or("killed by a signal")?;
    if !matches!(code, 0..=2) {
        return Err(format!("exit code {code}"));
    }
    if code != 0 {
        let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() != 1 {
            return Err(format!("{} lines of error", lines.len()));
        }
        if !lines[0].starts_with("Error: ") {
            return Err("error line does not start with `Error: `".into());
        }
        if lines[0].chars().count() > 2000 {
            return Err(format!(
                "error line of {} characters",
                lines[0].chars().count()
            ));
        }
    }
    Ok(())
}

/// [`contract`] for a client of a server (`--remote`): progress lines ("connecting to …") may
/// come before the error, so a failure prints exactly one `Error: ` line, the last; `check` may
/// exit 3 (a FAIL verdict).
pub fn remote_contract(case: &Case, o: &Outcome) -> Result<(), String> {
    no_hang_panic_or_escape(o)?;
    let code = o.code.ok_or("killed by a signal")?;
    let check = case.args.iter().any(|a| a == "check");
    if !(matches!(code, 0..=2) || (check && code == 3)) {
        return Err(format!("exit code {code}"));
    }
    if matches!(code, 1 | 2) {
        let errors: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("Error: "))
            .collect();
        if errors.len() != 1 {
            return Err(format!("{} error lines", errors.len()));
        }
        if o.stderr.lines().rev().find(|l| !l.trim().is_empty()) != Some(errors[0]) {
            return Err("the error line is not the last".into());
        }
        if errors[0].chars().count() > 2000 {
            return Err(format!(
                "error line of {} characters",
                errors[0].chars().count()
            ));
        }
    }
    Ok(())
}

/// A character that a terminal acts on rather than shows (ESC and the other C0 controls but
/// newline and tab, DEL, the C1 controls, the Unicode line and paragraph separators): printed
/// from input, it can rewrite the screen, the title or the clipboard, or fake a line.
pub fn is_terminal_control(c: char) -> bool {
    c != '\n' && c != '\t' && scalescope::model::validate::unsafe_on_terminal(c)
}

/// No `NaN`, `inf` figure in what a successful run printed.
pub fn no_bad_figures(o: &Outcome) -> Result<(), String> {
    if o.code == Some(0) {
        for word in o.stdout.split(|c: char| c.is_whitespace() || c == ',') {
            let w = word
                .trim_start_matches(['~', '+', '-'])
                .trim_end_matches('%');
            if matches!(w, "NaN" | "inf") {
                return Err(format!("figure {word:?} printed"));
            }
        }
    }
    Ok(())
}

/// The files of `dir` with one of the extensions, sorted by name.
pub fn corpus(dir: &Path, exts: &[&str]) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    e.path()
                        .extension()
                        .is_some_and(|x| exts.iter().any(|w| x == *w))
                })
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    std::fs::read(e.path()).ok().map(|b| (name, b))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The value after `--name`, parsed; `default` when absent or unparsable.
fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // The `server` campaign's fake server runs this binary as its filter.
    if let [_, flag, plan, seed] = &args[..]
        && flag == "--serve-mutated"
    {
        server::serve_mutated(plan, seed.parse().unwrap_or(0));
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin: PathBuf = arg(&args, "--bin", root.join("target/debug/scalescope"));
    let seed: u64 = arg(&args, "--seed", 20_261_123);
    let jobs: usize = arg(
        &args,
        "--jobs",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let timeout = Duration::from_millis(arg(&args, "--timeout-ms", 10_000));
    let keep: PathBuf = arg(
        &args,
        "--keep",
        std::env::temp_dir().join("scalescope-fuzz"),
    );
    let only: String = arg(&args, "--only", String::new());
    // `--cases a=N,b=M`; `--captures N` and `--reports N` as before.
    let mut counts: Vec<(String, usize)> = arg::<String>(&args, "--cases", String::new())
        .split(',')
        .filter_map(|p| p.split_once('='))
        .filter_map(|(k, v)| Some((k.trim().to_string(), v.trim().parse().ok()?)))
        .collect();
    for old in ["captures", "reports"] {
        let n: usize = arg(&args, &format!("--{old}"), usize::MAX);
        if n != usize::MAX {
            counts.push((old.to_string(), n));
        }
    }
    let all = campaigns(&root, &bin);
    let chosen: Vec<(&dyn Campaign, usize)> = all
        .iter()
        .filter(|c| only.is_empty() || only.split(',').any(|o| o.trim() == c.name()))
        .map(|c| {
            let n = counts
                .iter()
                .rev()
                .find(|(k, _)| k == c.name())
                .map_or(c.default_cases(), |(_, n)| *n);
            (c.as_ref(), n)
        })
        .collect();
    if chosen.is_empty() {
        let names: Vec<&str> = all.iter().map(|c| c.name()).collect();
        eprintln!(
            "fuzz: no campaign named {only:?} (known: {})",
            names.join(", ")
        );
        std::process::exit(2);
    }
    // Case i → (campaign, its own case number), campaigns one after the other.
    let plan: Vec<(usize, usize)> = chosen
        .iter()
        .enumerate()
        .flat_map(|(c, (_, n))| (0..*n).map(move |k| (c, k)))
        .collect();
    let total = plan.len();
    let work = tempfile_dir();
    let _ = std::fs::create_dir_all(&keep);
    let next = AtomicUsize::new(0);
    // Per campaign: exit codes 0, 1, 2, other; the slowest case.
    let codes = Mutex::new(vec![[0usize; 4]; chosen.len()]);
    let slowest = Mutex::new(vec![(Duration::ZERO, 0usize); chosen.len()]);
    let violations: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let started = Instant::now();
    let listed: Vec<String> = chosen
        .iter()
        .map(|(c, n)| format!("{} {n}", c.name()))
        .collect();
    eprintln!(
        "fuzz: {total} cases ({}) against {} with {jobs} jobs, seed {seed}, {} ms per case",
        listed.join(", "),
        bin.display(),
        timeout.as_millis()
    );
    std::thread::scope(|s| {
        for job in 0..jobs {
            let (next, codes, violations, slowest) = (&next, &codes, &violations, &slowest);
            let (chosen, plan, bin, work, keep) = (&chosen, &plan, &bin, &work, &keep);
            s.spawn(move || {
                let dir = work.join(format!("job{job}"));
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= total {
                        return;
                    }
                    let (c, k) = plan[i];
                    let campaign = chosen[c].0;
                    let _ = std::fs::remove_dir_all(&dir);
                    if std::fs::create_dir_all(&dir).is_err() {
                        continue;
                    }
                    let mut rng = Rng::new(seed ^ fnv(campaign.name()), k as u64);
                    let case = campaign.case(&mut rng, &dir);
                    let t0 = Instant::now();
                    let pid = AtomicU32::new(0);
                    let (o, during) = std::thread::scope(|s| {
                        let client = s.spawn(|| campaign.during(&case, &pid));
                        let o = run(bin, &case, timeout, &pid);
                        (o, client.join().unwrap_or_else(|_| Err("the client panicked".into())))
                    });
                    let took = t0.elapsed();
                    if std::env::var_os("FUZZ_TRACE").is_some() {
                        // Each case's command and the last line it printed, to see what a
                        // campaign reaches.
                        eprintln!(
                            "{} {k}: {:?} → {:?}: {}",
                            campaign.name(),
                            case.args.iter().map(|a| a.chars().take(60).collect::<String>()).collect::<Vec<_>>(),
                            o.code,
                            o.stderr.lines().last().unwrap_or("").chars().take(200).collect::<String>()
                        );
                    }
                    {
                        let mut sl = slowest.lock().unwrap_or_else(|e| e.into_inner());
                        if took > sl[c].0 {
                            sl[c] = (took, k);
                        }
                    }
                    let slot = match o.code {
                        Some(code @ 0..=2) => code as usize,
                        _ => 3,
                    };
                    codes.lock().unwrap_or_else(|e| e.into_inner())[c][slot] += 1;
                    if let Err(why) = during.and_then(|()| campaign.check(&case, &dir, &o)) {
                        let name = campaign.name();
                        let saved = keep.join(format!("{name}-{k}"));
                        let _ = std::fs::create_dir_all(&saved);
                        let _ = std::fs::write(saved.join("input"), &case.input);
                        let _ = std::fs::write(
                            saved.join("report.txt"),
                            format!(
                                "why: {why}\ncommand: {:?}\nenv: {:?}\nexit: {:?}\nstderr:\n{}\nstdout (first 4000 bytes):\n{}",
                                case.args,
                                case.env,
                                o.code,
                                o.stderr,
                                o.stdout.chars().take(4000).collect::<String>()
                            ),
                        );
                        violations.lock().unwrap_or_else(|e| e.into_inner()).push(format!(
                            "{name} case {k} ({}): {why} — saved in {}",
                            case.origin,
                            saved.display()
                        ));
                    }
                    let done = i + 1;
                    if done % 1000 == 0 {
                        eprintln!("fuzz: {done}/{total} cases, {:.0} s", started.elapsed().as_secs_f64());
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&work);
    let codes = codes.into_inner().unwrap_or_else(|e| e.into_inner());
    let slowest = slowest.into_inner().unwrap_or_else(|e| e.into_inner());
    let violations = violations.into_inner().unwrap_or_else(|e| e.into_inner());
    println!(
        "fuzz: {total} cases in {:.0} s, seed {seed}; {} violation(s)",
        started.elapsed().as_secs_f64(),
        violations.len()
    );
    for (c, (campaign, n)) in chosen.iter().enumerate() {
        let [e0, e1, e2, other] = codes[c];
        println!(
            "  {:<12} {n:>6} cases: exit 0: {e0}, exit 1: {e1}, exit 2: {e2}, other: {other}; slowest {:.2} s (case {})",
            campaign.name(),
            slowest[c].0.as_secs_f64(),
            slowest[c].1
        );
    }
    for v in violations.iter().take(50) {
        println!("  {v}");
    }
    if !violations.is_empty() {
        std::process::exit(1);
    }
}

/// FNV-1a of a campaign's name, so each campaign's cases differ under one seed.
fn fnv(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A fresh working folder under the system's temporary folder.
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scalescope-fuzz-work-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}
