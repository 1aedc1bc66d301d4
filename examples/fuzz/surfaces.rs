//! The surfaces of issue X that the `hostile` campaign does not reach, one campaign each:
//!
//! - `endpoint`: `watch --replay … --prometheus PORT` with at most 1,024 open files, while this
//!   process holds hundreds of half-open connections (slowloris), clients that ask for /metrics
//!   and never read it (a recording of up to 256 GPUs: a /metrics of megabytes), junk and
//!   oversized requests; the scraper must still get a 200 within 3 s. Then Ctrl-C: exit 0.
//! - `fleet_run`: `fleet run --hosts`/`--hosts-file` through a stand-in `ssh` (this build's agent,
//!   or one that prints escapes, fails or hangs) and `fleet run --slurm` through stand-in
//!   `scontrol` and `srun` scripts (scontrol printing hostile names, floods, nothing, or
//!   hanging); host names with escapes, bidi overrides, `../`, option-looking words; an
//!   `OUT/nodes/<node>` that is a symbolic link out of `--out`. Nothing may be written outside
//!   `--out`.
//! - `pricing`: the six price flags of `bench scaling` and `compare` with hostile values, one or
//!   one per machine, and `compare --ranking-csv`: no `inf`/`NaN` written or printed.
//! - `thresholds`: thresholds files whose `[soak]`, `[fleet]`, `[settings]` and top-level keys
//!   are hostile, through `check --catalog`, `check --soak-replay` and `fleet report`.
//! - `catalog`: catalog entries and workloads with hostile values and 100 KB strings through
//!   `--bench --modeled`, `compare --catalog` and `bench scaling --modeled` with a price.
//!
//! Each must keep the command line's contract (exit 0, 1, 2, or 3 where a verdict FAILs; one
//! `Error:` line; nothing a terminal acts on) and write nothing outside its folder.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::toml::HOSTILE_VALUES;
use crate::{
    Campaign, Case, Outcome, Rng, corpus, no_bad_figures, no_hang_panic_or_escape, remote_contract,
};

/// Strings a name, a host or a model is given.
const TEXTS: &[&str] = &[
    "\u{1b}]0;pwned\u{7}",
    "\u{1b}[2J",
    "evil\u{202e}gnp.exe",
    "a\u{2066}b\u{2069}",
    "a\u{2028}b",
    "-oProxyCommand=touch /tmp/pwned",
    "$(touch pwned)",
    "`id`",
    "../../outside",
    "a/b",
    ".",
    "..",
    "x y",
    "plain",
];

/// Writes an executable script.
fn script(path: &Path, body: &str) {
    let _ = std::fs::write(path, format!("#!/bin/sh\n{body}\n"));
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
}

/// Files under `dir/outside` (where nothing may be written) and the stray `pwned` files a shell
/// injection would leave in the case's folder.
fn written_outside(dir: &Path) -> Result<(), String> {
    let outside = std::fs::read_dir(dir.join("outside")).map_or(0, |d| d.count());
    if outside > 0 {
        return Err(format!("{outside} file(s) written outside --out"));
    }
    if dir.join("pwned").exists() || Path::new("/tmp/pwned").exists() {
        return Err("a host name ran as a command".into());
    }
    Ok(())
}

/// The contract of a command that may FAIL (exit 3) and print progress before its one error.
fn verdict_contract(case: &Case, o: &Outcome) -> Result<(), String> {
    if o.code == Some(3) {
        return no_hang_panic_or_escape(o);
    }
    remote_contract(case, o)
}

// ---------------------------------------------------------------------------------------------
// endpoint

pub struct Endpoint {
    /// Recordings of 2 (measured), 64 and 256 GPUs.
    recordings: Vec<(usize, String)>,
}

impl Endpoint {
    pub fn new(root: &Path) -> Endpoint {
        let measured = std::fs::read_to_string(root.join("tests/data/watch-h100x2-nvlink.jsonl"))
            .unwrap_or_default();
        let mut recordings = vec![(2, measured.clone())];
        for n in [64, 256] {
            recordings.push((n, widened(&measured, n)));
        }
        Endpoint { recordings }
    }
}

/// The measured 2-GPU recording as one of `n` GPUs, every pair NV18: its header's topology a
/// generated catalog machine, each sample's GPU 0 repeated with its NVLinks to the next GPU.
fn widened(measured: &str, n: usize) -> String {
    let entry = format!(
        "[machine]\nid = \"wide\"\nname = \"Wide\"\nsummary = \"generated\"\nsource = \"fuzz\"\n\n\
         [gpu]\nmodel = \"NVIDIA H100 80GB HBM3\"\ncount = {n}\nmemory_mib = 81920\npcie_gen = 5\n\
         pcie_width = 16\nnvlink_generation = 4\nnvlinks = 18\nnvlink_gbps_per_link = 26.562\n\n\
         [topology]\nall = \"NV18\"\n"
    );
    let Ok(topology) = scalescope::topology::catalog::parse_entry("wide.toml", &entry) else {
        return measured.to_string();
    };
    let header = scalescope::model::traffic::WatchHeader::new(
        topology,
        (0..n).collect(),
        1.0,
        "2026-11-27T00:00:00Z".into(),
    );
    let mut out = serde_json::to_string(&header).unwrap_or_default();
    out.push('\n');
    for line in measured.lines().skip(1).take(12) {
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(first) = v["gpus"].get(0).cloned() else {
            continue;
        };
        let gpus: Vec<serde_json::Value> = (0..n)
            .map(|g| {
                let mut e = first.clone();
                e["gpu"] = serde_json::json!(g);
                if let Some(links) = e["nvlinks"].as_array_mut() {
                    for l in links {
                        l["peer"] = serde_json::json!({"gpu": (g + 1) % n});
                    }
                }
                e
            })
            .collect();
        v["gpus"] = serde_json::Value::Array(gpus);
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// A free port on 127.0.0.1 (free when asked; the binary binds it next).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_or(0, |a| a.port())
}

fn connect(port: u16) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(1),
    )?;
    s.set_read_timeout(Some(Duration::from_secs(3)))?;
    s.set_write_timeout(Some(Duration::from_secs(3)))?;
    Ok(s)
}

/// GET /metrics to the end: the status line, or why not.
fn scrape(port: u16) -> Result<String, String> {
    let mut s = connect(port).map_err(|e| format!("connect: {e}"))?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .map_err(|e| format!("send: {e}"))?;
    let mut body = Vec::new();
    s.read_to_end(&mut body).map_err(|e| format!("read: {e}"))?;
    let text = String::from_utf8_lossy(&body);
    Ok(text.lines().next().unwrap_or("").to_string())
}

/// What the clients beside the scraper do, from the case's `origin`.
#[derive(Clone, Copy)]
struct Attack {
    port: u16,
    slowloris: usize,
    readers: usize,
    junk: usize,
}

impl Attack {
    fn parse(origin: &str) -> Option<Attack> {
        let mut it = origin
            .split_whitespace()
            .filter_map(|w| w.split_once('=').and_then(|(_, v)| v.parse::<usize>().ok()));
        Some(Attack {
            port: it.next()? as u16,
            slowloris: it.next()?,
            readers: it.next()?,
            junk: it.next()?,
        })
    }
}

/// Requests no server should choke on.
const JUNK: &[&[u8]] = &[
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
    b"GET /\x1b]0;pwned\x07 HTTP/1.1\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"\r\n\r\n\r\n\r\n",
    b"GET /metrics?x=%00%ff HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n",
];

impl Campaign for Endpoint {
    fn name(&self) -> &'static str {
        "endpoint"
    }

    fn default_cases(&self) -> usize {
        200
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let (n, text) = rng.pick(&self.recordings);
        let file = dir.join("rec.jsonl");
        let _ = std::fs::write(&file, text);
        let port = free_port();
        let slowloris = *rng.pick(&[0, 50, 300, 700, 1100]);
        let readers = *rng.pick(&[0, 20, 100, 400, 800]);
        let junk = rng.below(40);
        let args = vec![
            "watch".to_string(),
            "--replay".into(),
            file.display().to_string(),
            "--replay-speed".into(),
            "0.05".into(),
            "--quiet".into(),
            "--prometheus".into(),
            port.to_string(),
        ];
        Case {
            args,
            origin: format!(
                "{n} GPUs port={port} slowloris={slowloris} readers={readers} junk={junk}"
            ),
            nofile: Some(1024),
            ..Case::default()
        }
    }

    fn during(&self, case: &Case, pid: &AtomicU32) -> Result<(), String> {
        let Some(a) = Attack::parse(&case.origin) else {
            return Ok(());
        };
        let start = Instant::now();
        // Up within 8 s (a debug build parses a 256-GPU recording's header in well under that).
        loop {
            // A 200: the watch has its first reading (before it, a 503 says it is starting).
            if scrape(a.port).is_ok_and(|status| status.contains(" 200")) {
                break;
            }
            if start.elapsed() > Duration::from_secs(8) {
                return Err("the endpoint never answered".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut held = Vec::new();
        for i in 0..a.slowloris + a.readers + a.junk {
            let Ok(mut s) = connect(a.port) else {
                continue;
            };
            let _ = if i < a.slowloris {
                s.write_all(b"GET /metr")
            } else if i < a.slowloris + a.readers {
                s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            } else {
                let junk = JUNK[i % JUNK.len()];
                if i % 5 == 0 {
                    // A header line of 1 MB.
                    let mut big = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
                    big.resize(1 << 20, b'a');
                    s.write_all(&big)
                } else {
                    s.write_all(junk)
                }
            };
            held.push(s);
        }
        let t = Instant::now();
        let result = scrape(a.port);
        let took = t.elapsed();
        drop(held);
        let pid = pid.load(Ordering::SeqCst);
        if pid != 0 {
            // SAFETY: kill(2) on the runner's child; the runner reaps it only after it ends.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
        }
        match result {
            Ok(status) if status.contains(" 200") && took < Duration::from_secs(3) => Ok(()),
            Ok(status) => Err(format!(
                "the scrape beside {} half-open, {} unread and {} junk connections: {status:?} in {took:?}",
                a.slowloris, a.readers, a.junk
            )),
            Err(e) => Err(format!(
                "the scrape beside {} half-open, {} unread and {} junk connections failed: {e}",
                a.slowloris, a.readers, a.junk
            )),
        }
    }

    fn check(&self, _case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        no_hang_panic_or_escape(o)?;
        // Ctrl-C ends a watch with exit 0; a replay that ended first also exits 0.
        match o.code {
            Some(0) => Ok(()),
            other => Err(format!("exit {other:?}: {}", o.stderr.trim())),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// fleet_run

pub struct FleetRun {
    bin: PathBuf,
}

impl FleetRun {
    pub fn new(bin: &Path) -> FleetRun {
        FleetRun {
            bin: bin.canonicalize().unwrap_or_else(|_| bin.to_path_buf()),
        }
    }
}

/// What the stand-in `ssh` does: run this build's agent (its last argument is the remote
/// command), or misbehave.
const SSH: &[&str] = &[
    "for last; do :; done; exec sh -c \"$last\"",
    "for last; do :; done; exec sh -c \"$last\"",
    "for last; do :; done; exec sh -c \"$last\"",
    "printf '\\033]0;pwned\\007\\033[2J\\342\\200\\256 ssh: connect to host: refused\\n' >&2; exit 255",
    "printf '{\"type\":\"hello\",\"protocol\":1}\\n'; exit 0",
    "sleep 2; exit 255",
    "head -c 3000000 /dev/zero | tr '\\0' 'x'; exit 1",
];

/// What the stand-in `scontrol show hostnames` prints.
const SCONTROL: &[&str] = &[
    "printf 'n1\\nn2\\n'",
    "printf 'n1\\n\\033]0;pwned\\007\\n'",
    "printf 'evil\\342\\200\\256gnp\\n../../outside\\n'",
    "printf -- '-oProxyCommand=x\\n$(touch pwned)\\n'",
    "printf ''",
    "exit 1",
    "exec sleep 30",
    "head -c 20000000 /dev/zero | tr '\\0' 'n'",
    "i=0; while [ $i -lt 3000 ]; do echo n$i; i=$((i+1)); done",
];

impl Campaign for FleetRun {
    fn name(&self) -> &'static str {
        "fleet_run"
    }

    fn default_cases(&self) -> usize {
        1_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let _ = std::fs::create_dir_all(dir.join("outside"));
        let out = dir.join("fleet");
        let mut made = String::new();
        // A node folder already there as a link out of --out (a shared file system's).
        if rng.below(4) == 0 {
            let _ = std::fs::create_dir_all(out.join("nodes"));
            let name = *rng.pick(&["n1", "n2", "h0"]);
            let _ = std::os::unix::fs::symlink(dir.join("outside"), out.join("nodes").join(name));
            made.push_str(&format!("nodes/{name} → outside; "));
        }
        let bin = dir.join("bin");
        let _ = std::fs::create_dir_all(&bin);
        let mut env = Vec::new();
        let mut args: Vec<String> = vec!["fleet".into(), "run".into()];
        if rng.below(3) == 0 {
            let scontrol = *rng.pick(SCONTROL);
            script(&bin.join("scontrol"), scontrol);
            // srun starts this build's hidden `fleet node` (as Slurm would, once per node) or
            // nothing.
            let srun = if rng.below(2) == 0 {
                "exit 0".to_string()
            } else {
                format!(
                    "for a; do case \"$a\" in fleet) break;; esac; shift; done; SLURMD_NODENAME=n1 exec {} \"$@\"",
                    self.bin.display()
                )
            };
            script(&bin.join("srun"), &srun);
            env.push((
                "PATH".to_string(),
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            ));
            for (k, v) in [
                ("SLURM_JOB_ID", "7"),
                ("SLURM_NNODES", "2"),
                ("SLURM_JOB_NODELIST", "n[1-2]"),
                ("SCALESCOPE_TEST_SCONTROL_LIMIT_MS", "1500"),
            ] {
                env.push((k.to_string(), v.to_string()));
            }
            args.push("--slurm".into());
            made.push_str(&format!("scontrol: {scontrol}; srun: {srun}"));
        } else {
            let ssh = *rng.pick(SSH);
            script(&bin.join("ssh"), ssh);
            let hosts: Vec<String> = (0..1 + rng.below(4))
                .map(|i| {
                    if rng.below(3) == 0 {
                        rng.pick(TEXTS).to_string()
                    } else {
                        format!("h{i}")
                    }
                })
                .collect();
            if rng.below(3) == 0 {
                let mut file = String::from("# hosts\n");
                for h in &hosts {
                    file.push_str(h);
                    file.push('\n');
                }
                // Many names that are not hosts (refused before any is tried).
                if rng.below(3) == 0 {
                    for i in 0..20_000 {
                        file.push_str(&format!("bad/host{i}\n"));
                    }
                }
                let f = dir.join("hosts.txt");
                let _ = std::fs::write(&f, file);
                args.extend(["--hosts-file".into(), f.display().to_string()]);
            } else {
                args.extend(["--hosts".into(), hosts.join(",")]);
            }
            args.extend([
                "--ssh".into(),
                bin.join("ssh").display().to_string(),
                "--remote-command".into(),
                format!("{} agent", self.bin.display()),
                "--parallel".into(),
                (1 + rng.below(3)).to_string(),
            ]);
            made.push_str(&format!("hosts {hosts:?}; ssh: {ssh}"));
        }
        args.extend([
            "--catalog".into(),
            rng.pick(&["h200-2x-sxm", "h100-pcie-2x-nvlink"])
                .to_string(),
            "--quick".into(),
            "--out".into(),
            out.display().to_string(),
        ]);
        Case {
            args,
            env,
            input: made.clone().into_bytes(),
            origin: made,
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        written_outside(dir)?;
        if case.origin.contains("exec ") && case.args.iter().any(|a| a == "--slurm") {
            // srun's tasks (`fleet node`, one per node) share fleet run's standard error, as
            // under Slurm: a task's own error line comes before fleet run's, which is the last.
            no_hang_panic_or_escape(o)?;
            if !matches!(o.code, Some(0..=3)) {
                return Err(format!("exit code {:?}", o.code));
            }
            let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            if o.code != Some(0) && !lines.last().is_some_and(|l| l.starts_with("Error: ")) {
                return Err("the error line is not the last".into());
            }
            if let Some(l) = lines.iter().find(|l| l.chars().count() > 2000) {
                return Err(format!("a line of {} characters", l.chars().count()));
            }
            return no_bad_figures(o);
        }
        verdict_contract(case, o)?;
        no_bad_figures(o)
    }
}

// ---------------------------------------------------------------------------------------------
// pricing

pub struct Pricing;

const PRICE_FLAGS: &[&str] = &[
    "--price-per-gpu-hour",
    "--capex-per-node",
    "--years",
    "--power-price-per-kwh",
    "--pue",
    "--node-overhead-w",
];

const PRICES: &[&str] = &[
    "2.5",
    "0",
    "-1",
    "1e-300",
    "5e-324",
    "1e308",
    "1e18",
    "nan",
    "inf",
    "-inf",
    "1,2",
    "1,,2",
    "6,3,1",
    "",
    " ",
    "0x10",
    "1e",
    "²",
    "3.5e2",
    "0.1",
    "100",
    "5",
    "1.0000001",
];

impl Campaign for Pricing {
    fn name(&self) -> &'static str {
        "pricing"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let mut args: Vec<String> = if rng.below(2) == 0 {
            [
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                *rng.pick(&["dgx-h100", "h200-2x-sxm", "gb200-nvl72"]),
                "--workload",
                *rng.pick(&["resnet50", "gpt2-xl", "llama2-7b"]),
            ]
            .map(String::from)
            .to_vec()
        } else {
            let mut a: Vec<String> = ["compare", "--catalog", "dgx-b200", "--catalog", "dgx-h100"]
                .map(String::from)
                .to_vec();
            if rng.below(2) == 0 {
                let samples = rng.pick(&["1e18", "1e15", "1", "5e-324", "-1", "nan", "1e308"]);
                a.push(format!("--samples={samples}"));
            }
            if rng.below(2) == 0 {
                a.extend([
                    "--ranking-csv".into(),
                    dir.join("ranking.csv").display().to_string(),
                ]);
            }
            a
        };
        // A whole rental or ownership pricing at prices within the flags' bounds (their edges
        // included: where the arithmetic meets its extremes), then none to two figures made
        // hostile.
        let mut prices: Vec<(&str, String)> = if rng.below(2) == 0 {
            vec![(
                "--price-per-gpu-hour",
                rng.pick(&["2.5", "10000", "0.0001", "6,3"]).to_string(),
            )]
        } else {
            vec![
                (
                    "--capex-per-node",
                    rng.pick(&["400000", "1e9", "0.01", "3e5,2e5"]).to_string(),
                ),
                ("--years", rng.pick(&["5", "0.1", "50", "4,5"]).to_string()),
                (
                    "--power-price-per-kwh",
                    rng.pick(&["0.12", "100", "1e-9"]).to_string(),
                ),
                ("--pue", rng.pick(&["1.2", "1", "5"]).to_string()),
                (
                    "--node-overhead-w",
                    rng.pick(&["575", "0", "1e6"]).to_string(),
                ),
            ]
        };
        for _ in 0..rng.below(3) {
            let k = rng.below(prices.len());
            prices[k].1 = rng.pick(PRICES).to_string();
        }
        if rng.below(8) == 0 {
            prices.push((*rng.pick(PRICE_FLAGS), rng.pick(PRICES).to_string()));
        }
        for (flag, value) in prices {
            // `--flag=value`: a value such as -inf is the flag's, not an option of its own.
            args.push(format!("{flag}={value}"));
        }
        Case {
            origin: "pricing".into(),
            input: args.join(" ").into_bytes(),
            args,
            ..Case::default()
        }
    }

    fn check(&self, _case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        crate::contract(o)?;
        no_bad_figures(o)?;
        if let Ok(csv) = std::fs::read_to_string(dir.join("ranking.csv")) {
            for cell in csv.split([',', '\n']) {
                if matches!(cell.trim(), "inf" | "-inf" | "NaN" | "nan") {
                    return Err(format!("{cell:?} written to the ranking CSV"));
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// thresholds

pub struct Thresholds {
    soak: Vec<(String, Vec<u8>)>,
    root: PathBuf,
}

impl Thresholds {
    pub fn new(root: &Path) -> Thresholds {
        let soak = corpus(&root.join("tests/data"), &["csv"])
            .into_iter()
            .filter(|(n, _)| n.starts_with("soak-"))
            .collect();
        Thresholds {
            soak,
            root: root.to_path_buf(),
        }
    }
}

/// Every key of a thresholds file, by table (`health::thresholds`, `health::soak`).
const TABLES: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "pass",
            "warn",
            "busy_util_percent",
            "nvlink_crc_per_s",
            "published",
        ],
    ),
    (
        "soak",
        &[
            "jitter_warn",
            "jitter_fail",
            "dip",
            "drop_warn",
            "drop_fail",
            "hw_slowdown_fail",
            "sw_thermal_warn",
            "temp_spread_warn_c",
            "settle_s",
        ],
    ),
    ("fleet", &["mad_k", "warn", "fail", "consistency"]),
    (
        "settings",
        &[
            "power_limit_warn",
            "power_limit_fail",
            "clocks_warn",
            "persistence",
            "mig",
            "compute_mode",
        ],
    ),
    ("efficiency", &["p2p_read_ce", "h2d", "d2h", "nope"]),
];

/// Numbers TOML reads (the checks decide whether they make sense).
const NUMBERS: &[&str] = &[
    "0", "-1", "0.5", "0.9", "0.95", "0.8", "1", "1.5", "3", "100", "1e308", "5e-324", "-0.0",
    "1e9", "0.0001", "10", "50",
];

const WORDS: &[&str] = &[
    "\"warn\"", "\"fail\"", "\"pass\"", "\"warn\"", "\"fail\"", "\"WARN\"", "\"\"",
];

fn thresholds_file(rng: &mut Rng) -> String {
    let mut s = String::new();
    for (table, keys) in TABLES {
        if rng.below(3) != 0 {
            continue;
        }
        if !table.is_empty() {
            s.push_str(&format!("[{table}]\n"));
        }
        let first = rng.below(keys.len());
        for key in keys.iter().cycle().skip(first).take(1 + rng.below(3)) {
            let severity = matches!(*key, "persistence" | "mig" | "compute_mode" | "consistency");
            let value = match (rng.below(8), severity) {
                (0, _) => rng.pick(HOSTILE_VALUES),
                (1, false) => rng.pick(WORDS),
                (_, true) => rng.pick(WORDS),
                (_, false) if *key == "published" => rng.pick(&["true", "false"]),
                (_, false) => rng.pick(NUMBERS),
            };
            s.push_str(&format!("{key} = {value}\n"));
        }
    }
    if rng.below(16) == 0 {
        s.push_str("[\"\\u001B[2Jsoak\"]\nx = 1\n");
    }
    s
}

impl Campaign for Thresholds {
    fn name(&self) -> &'static str {
        "thresholds"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let text = thresholds_file(rng);
        let file = dir.join("thresholds.toml");
        let _ = std::fs::write(&file, &text);
        let f = file.display().to_string();
        let args: Vec<String> = match rng.below(3) {
            0 => vec![
                "check".into(),
                "--catalog".into(),
                rng.pick(&["h200-2x-sxm", "dgx-h100"]).to_string(),
                "--thresholds".into(),
                f,
            ],
            1 => {
                let (_, bytes) = rng.pick(&self.soak);
                let soak = dir.join("soak.csv");
                let _ = std::fs::write(&soak, bytes);
                vec![
                    "check".into(),
                    "--soak-replay".into(),
                    soak.display().to_string(),
                    "--thresholds".into(),
                    f,
                ]
            }
            _ => {
                let nodes = dir.join("nodes");
                let base = self.root.join("assets/reports/h200-2x-sxm-2026-11-22.json");
                for i in 0..3 + rng.below(3) {
                    let node = nodes.join(format!("n{i}"));
                    let _ = std::fs::create_dir_all(&node);
                    let _ = std::fs::copy(&base, node.join("report.json"));
                }
                vec![
                    "fleet".into(),
                    "report".into(),
                    nodes.display().to_string(),
                    "--thresholds".into(),
                    f,
                    "--out".into(),
                    dir.join("out").display().to_string(),
                ]
            }
        };
        Case {
            args,
            input: text.into_bytes(),
            origin: "thresholds".into(),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        if o.code == Some(3) {
            return no_hang_panic_or_escape(o);
        }
        let _ = case;
        crate::contract(o)?;
        no_bad_figures(o)
    }
}

// ---------------------------------------------------------------------------------------------
// catalog

pub struct Catalog {
    catalog: Vec<(String, Vec<u8>)>,
    workloads: Vec<(String, Vec<u8>)>,
}

impl Catalog {
    pub fn new(root: &Path) -> Catalog {
        Catalog {
            catalog: corpus(&root.join("assets/hardware"), &["toml"]),
            workloads: corpus(&root.join("assets/workloads"), &["toml"]),
        }
    }
}

/// `text` with one to three `key = value` lines given a hostile value or a 100 KB string.
fn spoil(rng: &mut Rng, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(" = ") && !lines[i].trim_start().starts_with('#'))
        .collect();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for _ in 0..1 + rng.below(2) {
        if candidates.is_empty() {
            break;
        }
        let i = *rng.pick(&candidates);
        let key = out[i].split_once(" = ").map_or("x", |(k, _)| k).to_string();
        let string = out[i]
            .split_once(" = ")
            .is_some_and(|(_, v)| v.trim_start().starts_with('"'));
        out[i] = match (string, rng.below(4)) {
            (true, 0) => format!("{key} = \"{}\"", "W".repeat(100_000)),
            (true, 1) => format!("{key} = {}", rng.pick(HOSTILE_VALUES)),
            (true, _) => format!("{key} = {}", toml_string(TEXTS[rng.below(TEXTS.len())])),
            (false, 0) => format!("{key} = {}", rng.pick(HOSTILE_VALUES)),
            (false, _) => format!("{key} = {}", rng.pick(NUMBERS)),
        };
    }
    out.join("\n") + "\n"
}

/// `text` as a TOML basic string: controls escaped, the rest (bidi overrides, U+2028) as is.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Campaign for Catalog {
    fn name(&self) -> &'static str {
        "catalog"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let out = dir.join("out").display().to_string();
        if rng.below(3) == 0 {
            let (name, seed) = rng.pick(&self.workloads);
            let text = spoil(rng, &String::from_utf8_lossy(seed));
            let file = dir.join("workload.toml");
            let _ = std::fs::write(&file, &text);
            return Case {
                args: [
                    "bench",
                    "scaling",
                    "--modeled",
                    "--catalog",
                    "dgx-h100",
                    "--workload",
                    &file.display().to_string(),
                    "--price-per-gpu-hour",
                    "2.5",
                ]
                .map(String::from)
                .to_vec(),
                input: text.into_bytes(),
                origin: name.clone(),
                ..Case::default()
            };
        }
        let (name, seed) = rng.pick(&self.catalog);
        let text = spoil(rng, &String::from_utf8_lossy(seed));
        let file = dir.join("machine.toml");
        let _ = std::fs::write(&file, &text);
        let f = file.display().to_string();
        let args: Vec<String> = match rng.below(4) {
            0 => [
                "--bench",
                "--modeled",
                "--catalog",
                &f,
                "--suite",
                "topology,bandwidth",
                "--out",
                &out,
            ]
            .map(String::from)
            .to_vec(),
            1 => ["compare", "--catalog", &f, "--catalog", "h200-2x-sxm"]
                .map(String::from)
                .to_vec(),
            2 => ["check", "--catalog", &f].map(String::from).to_vec(),
            _ => ["topo", "--catalog", &f].map(String::from).to_vec(),
        };
        Case {
            args,
            input: text.into_bytes(),
            origin: name.clone(),
            ..Case::default()
        }
    }

    fn check(&self, _case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        if o.code == Some(3) {
            return no_hang_panic_or_escape(o);
        }
        crate::contract(o)?;
        no_bad_figures(o)
    }
}
