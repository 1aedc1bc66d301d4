//! Mutation fuzzing of the importer and the report parser through the real binary (what
//! `scripts/fuzz.sh` runs). Each case mutates a capture from `tests/data/` or a report from
//! `assets/reports/`, runs `scalescope topo --import` or `scalescope compare` on it, and checks
//! the command line's contract:
//!
//! - no panic (exit 101 or "panicked" on stderr) and no hang (a time limit per case);
//! - exit code 0, 1 or 2 only;
//! - a failure prints exactly one line, starting `Error: `, of at most 2,000 characters;
//! - a comparison prints no `NaN`, `inf` or negative GB/s.
//!
//! Cases are reproducible: case i of seed s always gets the same input. Violations are saved
//! (input, command, output) under `--keep DIR`.
//!
//! ```sh
//! cargo run --release --example fuzz -- --bin target/release/scalescope --captures 20000 --reports 5000
//! ```

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// xorshift64*: small, fast and reproducible.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, case: u64) -> Rng {
        let mut r = Rng(seed ^ case.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D);
        for _ in 0..4 {
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Words the formats give meaning to, and values that broke parsers before.
const TOKENS: &[&str] = &[
    "X",
    "NV18",
    "NV4",
    "NV0",
    "NV4294967296",
    "PIX",
    "PXB",
    "PHB",
    "NODE",
    "SYS",
    "SOC",
    "OK",
    "CNS",
    "GNS",
    "TNS",
    "NS",
    "U",
    "DR",
    "GPU0",
    "GPU1",
    "GPU7",
    "GPU1048577",
    "NIC0",
    "mlx5_0",
    "CPU Affinity",
    "NUMA Affinity",
    "GPU NUMA ID",
    "N/A",
    "0-31",
    "\t",
    "\r\n",
    "\n",
    "\n\n",
    "\u{1b}[4m",
    "\u{1b}[0m",
    "\u{feff}",
    "\0",
    "Legend:",
    "NIC Legend:",
    "nvidia-smi topo -m",
    "nvidia-smi topo -p2p r",
    "topo -mp",
    "index, name, pcie.link.gen.max",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "5e-324",
    "1e999",
    "NaN",
    "null",
    "true",
    "\"\"",
    "[]",
    "{}",
    "9223372036854775808",
    "18446744073709551616",
    "\"kind\"",
    "\"schema_version\": 1",
    "\"scalescope-report\"",
];

fn mutate_bytes(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = v.len();
        let at = rng.below(len + 1);
        match rng.below(11) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 => v.insert(at, rng.next() as u8),
            2 if len > 0 => {
                let n = 1 + rng.below(64.min(len));
                let start = rng.below(len - n + 1);
                v.drain(start..start + n);
            }
            3 if len > 0 => {
                let n = 1 + rng.below(256.min(len));
                let start = rng.below(len - n + 1);
                let piece: Vec<u8> = v[start..start + n].to_vec();
                let most = if rng.below(20) == 0 { 2000 } else { 4 };
                let reps = 1 + rng.below(most);
                for _ in 0..reps {
                    v.splice(at..at, piece.iter().copied());
                }
            }
            4 => v.truncate(at),
            5 => {
                let t = rng.pick(TOKENS).as_bytes();
                v.splice(at..at, t.iter().copied());
            }
            6 if len > 0 => {
                // Replace a word with a token.
                let start = rng.below(len);
                let end = (start..len)
                    .find(|&i| v[i].is_ascii_whitespace() || v[i] == b',' || v[i] == b'"')
                    .unwrap_or(len);
                let t = rng.pick(TOKENS).as_bytes().to_vec();
                v.splice(start..end, t);
            }
            7 if !other.is_empty() => {
                // Splice a piece of another file in.
                let n = 1 + rng.below(4096.min(other.len()));
                let start = rng.below(other.len() - n + 1);
                v.splice(at..at, other[start..start + n].iter().copied());
            }
            8 => {
                // Swap two lines.
                let text = String::from_utf8_lossy(&v).to_string();
                let mut lines: Vec<&str> = text.split('\n').collect();
                if lines.len() > 1 {
                    let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(a, b);
                    v = lines.join("\n").into_bytes();
                }
            }
            9 => {
                // A digit run made huge, negative or fractional.
                if let Some(i) = (at..len).find(|&i| v[i].is_ascii_digit()) {
                    let t = *rng.pick(&["-", "999999999999999999999", "e308", ".5e-320", "0000"]);
                    v.splice(i..i, t.bytes());
                }
            }
            _ => {
                let t = rng.pick(TOKENS).as_bytes();
                let reps = 1 + rng.below(100);
                for _ in 0..reps {
                    v.splice(at..at, t.iter().copied());
                }
            }
        }
    }
    v
}

/// A structural mutation of report JSON: a number, string, null, array or object put where a
/// field was, a field removed, an array cut, repeated or reversed. A third of the cases are
/// byte mutations instead, to reach the syntax errors too.
fn mutate_json(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    if rng.below(3) == 0 {
        return mutate_bytes(rng, input, other);
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(input) else {
        return mutate_bytes(rng, input, other);
    };
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        // Walk to a random node.
        let mut node = &mut v;
        let depth = 1 + rng.below(8);
        for _ in 0..depth {
            let next_is_leaf = match &*node {
                serde_json::Value::Object(m) => m.is_empty(),
                serde_json::Value::Array(a) => a.is_empty(),
                _ => true,
            };
            if next_is_leaf {
                break;
            }
            node = match node {
                serde_json::Value::Object(m) => {
                    let k = rng.below(m.len());
                    m.values_mut().nth(k).expect("index below len")
                }
                serde_json::Value::Array(a) => {
                    let k = rng.below(a.len());
                    &mut a[k]
                }
                _ => unreachable!("checked above"),
            };
        }
        // Most of the time keep the node's type (a report that still parses, with absurd
        // values, reaches `compare`); otherwise anything.
        if rng.below(10) < 7 {
            let kept = match &*node {
                serde_json::Value::Number(_) => Some(match rng.below(6) {
                    0 => serde_json::json!(0),
                    1 => serde_json::json!(1e-300),
                    2 => serde_json::json!(1.7e308),
                    3 => serde_json::json!(u64::MAX),
                    4 => serde_json::json!(-1.5),
                    _ => serde_json::json!((rng.next() % 1_000_000) as f64 / 7.0),
                }),
                serde_json::Value::String(_) => Some(match rng.below(4) {
                    0 => serde_json::json!("\u{1b}[31mred\u{1b}[0m\r\nnext"),
                    1 => serde_json::json!(""),
                    2 => serde_json::json!("w".repeat(1 + rng.below(200_000))),
                    _ => serde_json::json!(*rng.pick(TOKENS)),
                }),
                serde_json::Value::Array(a) if !a.is_empty() => {
                    let mut a = a.clone();
                    match rng.below(3) {
                        0 => a.truncate(rng.below(a.len())),
                        1 => {
                            let first = a[0].clone();
                            let reps = 1 + rng.below(50);
                            a.extend(std::iter::repeat_n(first, reps));
                        }
                        _ => a.reverse(),
                    }
                    Some(serde_json::Value::Array(a))
                }
                _ => None,
            };
            if let Some(k) = kept {
                *node = k;
                continue;
            }
        }
        let replacement = match rng.below(12) {
            0 => serde_json::json!(-1.0),
            1 => serde_json::json!(1e308),
            2 => serde_json::json!(-1e-300),
            3 => serde_json::Value::Null,
            4 => serde_json::json!("\u{1b}[2J\nline two"),
            5 => serde_json::json!("x".repeat(100_000)),
            6 => serde_json::json!([]),
            7 => serde_json::json!({}),
            8 => serde_json::json!(u64::MAX),
            9 => serde_json::json!(true),
            10 => serde_json::json!(0),
            _ => {
                if let serde_json::Value::Object(m) = node
                    && !m.is_empty()
                {
                    let k = m
                        .keys()
                        .nth(rng.below(m.len()))
                        .cloned()
                        .unwrap_or_default();
                    m.remove(&k);
                }
                continue;
            }
        };
        *node = replacement;
    }
    serde_json::to_vec_pretty(&v).unwrap_or_else(|_| input.to_vec())
}

struct Outcome {
    code: Option<i32>,
    timed_out: bool,
    stdout: String,
    stderr: String,
}

fn run(bin: &Path, args: &[String], timeout: Duration) -> Outcome {
    let mut child = Command::new(bin)
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the binary");
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
    let status = loop {
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

/// The contract; `Err(why)` on a violation.
fn check(o: &Outcome, comparing: bool) -> Result<(), String> {
    if o.timed_out {
        return Err("hang: killed at the time limit".into());
    }
    if o.stderr.contains("panicked") || o.code == Some(101) {
        return Err("panic".into());
    }
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
    if comparing && code == 0 {
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

fn corpus(dir: &Path, exts: &[&str]) -> Vec<(String, Vec<u8>)> {
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

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin: PathBuf = arg(&args, "--bin", root.join("target/debug/scalescope"));
    let n_captures: usize = arg(&args, "--captures", 20_000);
    let n_reports: usize = arg(&args, "--reports", 5_000);
    let seed: u64 = arg(&args, "--seed", 20_261_123);
    let jobs: usize = arg(
        &args,
        "--jobs",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let timeout = Duration::from_millis(arg(&args, "--timeout-ms", 30_000));
    let keep: PathBuf = arg(
        &args,
        "--keep",
        std::env::temp_dir().join("scalescope-fuzz"),
    );
    let captures = corpus(&root.join("tests/data"), &["txt", "csv"]);
    let reports = corpus(&root.join("assets/reports"), &["json"]);
    assert!(!captures.is_empty() && !reports.is_empty(), "no corpus");
    let work = tempfile_dir();
    let _ = std::fs::create_dir_all(&keep);
    // The reference report every comparison is made against.
    let reference = work.join("reference.json");
    std::fs::write(&reference, &reports[0].1).expect("write the reference report");

    let total = n_captures + n_reports;
    let next = AtomicUsize::new(0);
    // Exit codes 0, 1, 2 and other, for captures [0] and reports [1].
    let codes = Mutex::new([[0usize; 4]; 2]);
    let violations: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let slowest = Mutex::new((Duration::ZERO, String::new()));
    let started = Instant::now();
    eprintln!(
        "fuzz: {n_captures} mutated captures ({} seeds) and {n_reports} mutated reports ({} seeds) against {} with {jobs} jobs, seed {seed}",
        captures.len(),
        reports.len(),
        bin.display()
    );
    std::thread::scope(|s| {
        for job in 0..jobs {
            let (next, codes, violations, slowest) = (&next, &codes, &violations, &slowest);
            let (captures, reports, bin, work, keep, reference) =
                (&captures, &reports, &bin, &work, &keep, &reference);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= total {
                        return;
                    }
                    let mut rng = Rng::new(seed, i as u64);
                    let is_capture = i < n_captures;
                    let pool = if is_capture { captures } else { reports };
                    let kind = if is_capture { "capture" } else { "report" };
                    let (name, seed_bytes) = &pool[rng.below(pool.len())];
                    let other = &pool[rng.below(pool.len())].1;
                    let bytes = if is_capture {
                        mutate_bytes(&mut rng, seed_bytes, other)
                    } else {
                        mutate_json(&mut rng, seed_bytes, other)
                    };
                    // File names that still say what the file is (p2p-r, mp) half the time.
                    let file = if rng.below(2) == 0 {
                        work.join(format!("job{job}-{name}"))
                    } else {
                        work.join(format!("job{job}-case.{}", if is_capture { "txt" } else { "json" }))
                    };
                    if std::fs::write(&file, &bytes).is_err() {
                        continue;
                    }
                    let f = file.to_string_lossy().to_string();
                    let cmd: Vec<String> = if is_capture {
                        match rng.below(4) {
                            0 => vec!["topo".into(), "--import".into(), f, "--format".into(), "csv".into()],
                            1 => vec!["topo".into(), "--import".into(), f, "--format".into(), "json".into()],
                            2 => vec!["topo".into(), "--import".into(), f],
                            _ => vec![
                                "bench".into(), "bandwidth".into(), "--modeled".into(), "--import".into(), f,
                                "--tests".into(), "p2p_read_ce,h2d".into(), "--sizes".into(), "64M".into(),
                            ],
                        }
                    } else if rng.below(4) == 0 {
                        vec!["compare".into(), reference.to_string_lossy().to_string(), f, "--csv".into()]
                    } else {
                        vec!["compare".into(), f, reference.to_string_lossy().to_string()]
                    };
                    let t0 = Instant::now();
                    let o = run(bin, &cmd, timeout);
                    let took = t0.elapsed();
                    {
                        let mut sl = slowest.lock().unwrap_or_else(|e| e.into_inner());
                        if took > sl.0 {
                            *sl = (took, format!("case {i} ({kind}, {} bytes)", bytes.len()));
                        }
                    }
                    let slot = match o.code {
                        Some(c @ 0..=2) => c as usize,
                        _ => 3,
                    };
                    codes.lock().unwrap_or_else(|e| e.into_inner())[usize::from(!is_capture)][slot] +=
                        1;
                    if let Err(why) = check(&o, !is_capture) {
                        let dir = keep.join(format!("case-{i}"));
                        let _ = std::fs::create_dir_all(&dir);
                        let _ = std::fs::write(dir.join("input"), &bytes);
                        let _ = std::fs::write(
                            dir.join("report.txt"),
                            format!(
                                "why: {why}\ncommand: {cmd:?}\nexit: {:?}\nstderr:\n{}\nstdout (first 4000 bytes):\n{}",
                                o.code,
                                o.stderr,
                                o.stdout.chars().take(4000).collect::<String>()
                            ),
                        );
                        violations
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(format!("case {i} ({kind} from {name}): {why} — saved in {}", dir.display()));
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
    let violations = violations.into_inner().unwrap_or_else(|e| e.into_inner());
    let slowest = slowest.into_inner().unwrap_or_else(|e| e.into_inner());
    let shown = |c: &[usize; 4]| {
        format!(
            "exit 0: {}, exit 1: {}, exit 2: {}, other: {}",
            c[0], c[1], c[2], c[3]
        )
    };
    println!(
        "fuzz: {total} cases in {:.0} s, seed {seed}; {n_captures} captures ({}), {n_reports} reports ({}); slowest case {:.2} s ({}); {} violation(s)",
        started.elapsed().as_secs_f64(),
        shown(&codes[0]),
        shown(&codes[1]),
        slowest.0.as_secs_f64(),
        slowest.1,
        violations.len()
    );
    for v in violations.iter().take(50) {
        println!("  {v}");
    }
    if !violations.is_empty() {
        std::process::exit(1);
    }
}

/// A fresh working folder under the system's temporary folder.
fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scalescope-fuzz-work-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}
