//! Driving scalescope on another machine: `scalescope agent` through a real sshd on localhost
//! (started by the test on a free port with throwaway keys, tests/common/sshd.rs;
//! scripts/test.sh installs openssh-server when missing), and the agent protocol on malformed
//! input. No GPU needed: the jobs are modeled.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::sshd::{Keys, Sshd};

const BIN: &str = env!("CARGO_BIN_EXE_scalescope");

/// The test sshd on 127.0.0.1, which accepts the test's key for the current user, and the
/// `--ssh` command that logs in to it.
struct Server {
    _sshd: Sshd,
    _keys: Keys,
    ssh: String,
}

/// Starts one sshd for the whole test binary; `None` (with the reason printed) where sshd or
/// ssh is missing or cannot run here.
fn sshd() -> Option<&'static Server> {
    static SSHD: OnceLock<Option<Server>> = OnceLock::new();
    SSHD.get_or_init(|| {
        let keys = common::sshd::keys()?;
        let daemon = keys.start("sshd", "")?;
        let ssh = keys.ssh_command(daemon.port);
        // One real login, or skip.
        common::sshd::can_log_in(&ssh, "127.0.0.1").then_some(Server {
            _sshd: daemon,
            _keys: keys,
            ssh,
        })
    })
    .as_ref()
}

/// `scalescope --remote 127.0.0.1 …` through the test sshd, with `remote_command` (default: this
/// build's agent) run there.
fn remote(s: &Server, remote_command: Option<&str>, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(["--remote", "127.0.0.1", "--ssh", &s.ssh, "--remote-command"])
        .arg(remote_command.map_or_else(|| format!("{BIN} agent"), |r| r.to_string()))
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "");
    c
}

fn local(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap()
}

#[test]
fn topology_and_a_modeled_bandwidth_job_stream_through_ssh() {
    let Some(s) = sshd() else { return };
    let out = remote(
        s,
        None,
        &["topo", "--catalog", "dgx-h100", "--format", "csv"],
    )
    .output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let here = local(&["topo", "--catalog", "dgx-h100", "--format", "csv"]);
    assert_eq!(out.stdout, here.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connected to 127.0.0.1"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("remote.csv"), dir.path().join("local.csv"));
    let args = |csv: &Path| {
        vec![
            "bench".to_string(),
            "bandwidth".into(),
            "--modeled".into(),
            "--catalog".into(),
            "h200-2x-sxm".into(),
            "--tests".into(),
            "p2p_read_ce,h2d,latency_d2d".into(),
            "--sizes".into(),
            "4K..1M".into(),
            "--csv".into(),
            csv.display().to_string(),
        ]
    };
    let ra: Vec<String> = args(&a);
    let out = remote(s, None, &ra.iter().map(String::as_str).collect::<Vec<_>>())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let la: Vec<String> = args(&b);
    let here = local(&la.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(here.status.success());
    // The same figures, the same table: the server's rows arrived whole.
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(out.stdout, here.stdout);
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

/// Waits until `path` has more than `n` lines (or fails after 60 s).
fn wait_for_lines(path: &Path, n: usize) {
    let start = Instant::now();
    while lines(path) <= n {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{path:?} stayed short"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_cancels_the_job_on_the_server_and_keeps_what_arrived() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let agent = format!("{BIN} agent --test-case-delay-ms 40");
    let mut child = remote(
        s,
        Some(&agent),
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "hgx-h200",
            "--suite",
            "bandwidth",
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for_lines(&out.join("bandwidth.csv"), 5);
    // SAFETY: kill(2) on our own child's pid; no memory is touched.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
    assert_eq!(status.code(), Some(130), "{err}");
    let r = report(&out);
    assert_eq!(r["cancelled"], true, "{err}");
    let rows = r["bandwidth"]["results"].as_array().unwrap().len();
    assert!(rows > 0, "{err}");
    // Far fewer than the whole run: the server stopped.
    let whole = local(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "hgx-h200",
        "--tests",
        "h2d,d2h,p2p_write_ce,p2p_read_ce,p2p_bidir_ce,p2p_write_sm,latency_d2d",
        "--sizes",
        "64M,512M",
        "--csv",
        dir.path().join("whole.csv").to_str().unwrap(),
    ]);
    assert!(whole.status.success());
    assert!(
        rows + 1 < lines(&dir.path().join("whole.csv")),
        "{rows} rows"
    );
}

#[test]
fn a_lost_connection_keeps_what_arrived_and_says_so() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // The agent is killed 3 s into a job that takes longer: the connection drops mid-job.
    let agent = format!("timeout -s KILL 3 {BIN} agent --test-case-delay-ms 40");
    let o = remote(
        s,
        Some(&agent),
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "hgx-h200",
            "--suite",
            "bandwidth",
            "--out",
            out.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("connection to 127.0.0.1 was lost") && err.contains("are kept"),
        "{err}"
    );
    assert_eq!(err.lines().filter(|l| l.starts_with("Error:")).count(), 1);
    let r = report(&out);
    assert!(!r["bandwidth"]["results"].as_array().unwrap().is_empty());
    assert!(lines(&out.join("bandwidth.csv")) > 1);
}

#[test]
fn a_server_without_scalescope_is_named_with_the_way_out() {
    let Some(s) = sshd() else { return };
    let o = remote(
        s,
        Some("sh -c 'echo scalescope: not found >&2; exit 127'"),
        &["topo"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not installed on 127.0.0.1") && err.contains("--remote-install"),
        "{err}"
    );
    // ssh's own failure (nothing listens) is an ssh error, not a missing scalescope.
    let o = Command::new(BIN)
        .args([
            "--remote",
            "127.0.0.1",
            "--ssh",
            "ssh -p 1 -o ConnectTimeout=5 -o StrictHostKeyChecking=no",
            "topo",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("ssh to 127.0.0.1 failed"), "{err}");
}

#[test]
fn remote_install_copies_this_binary_and_then_runs_it() {
    let Some(s) = sshd() else { return };
    let home = std::env::var("HOME").unwrap_or_default();
    let installed = Path::new(&home).join(".cache/scalescope/scalescope");
    let on_path = Command::new("sh")
        .args([
            "-c",
            &format!("{} 127.0.0.1 'command -v scalescope'", s.ssh),
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if installed.exists() || on_path {
        eprintln!("skipped: scalescope is already installed for this user ({installed:?})");
        return;
    }
    // The default remote command: scalescope is neither on the server's PATH nor installed.
    let mut c = Command::new(BIN);
    c.args([
        "--remote",
        "127.0.0.1",
        "--ssh",
        &s.ssh,
        "topo",
        "--catalog",
        "dgx-h100",
    ]);
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--remote-install"));
    let mut c = Command::new(BIN);
    c.args([
        "--remote",
        "127.0.0.1",
        "--ssh",
        &s.ssh,
        "--remote-install",
        "topo",
        "--catalog",
        "dgx-h100",
    ]);
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let cleanup = || {
        let _ = std::fs::remove_file(&installed);
    };
    if !o.status.success() {
        cleanup();
        panic!("{err}");
    }
    assert!(
        err.contains("copied") && err.contains(".cache/scalescope"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("NV18"));
    cleanup();
}

/// Talks to `scalescope agent` directly: sends `requests`, closes its input, and returns every
/// line it wrote (each parsed) and its exit status.
fn agent_session(requests: &[String], args: &[&str]) -> (Vec<serde_json::Value>, bool) {
    let mut cmd = Command::new(BIN);
    cmd.arg("agent")
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let reqs = requests.to_vec();
    let writer = std::thread::spawn(move || {
        for r in reqs {
            let _ = stdin.write_all(r.as_bytes());
            let _ = stdin.write_all(b"\n");
            std::thread::sleep(Duration::from_millis(30));
        }
    });
    let mut out = Vec::new();
    for l in BufReader::new(child.stdout.take().unwrap()).lines() {
        let l = l.unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
        out.push(v);
    }
    writer.join().unwrap();
    (out, child.wait().unwrap().success())
}

fn job(kind: &str) -> String {
    format!(
        r#"{{"kind":"{kind}","target":{{"kind":"catalog","name":"h200-2x-sxm"}},"options":{{"gpus":[],"tests":["p2p_read_ce"],"sizes":[1048576],"iters":4,"samples":3}},"modeled":true}}"#
    )
}

#[test]
fn the_agent_answers_bad_requests_and_keeps_serving() {
    let requests = vec![
        "this is not json".to_string(),
        r#"{"type":"frobnicate","id":1}"#.into(),
        r#"{"id":3}"#.into(),
        r#"{"type":"run","id":2}"#.into(),
        r#"{"type":"run"}"#.into(),
        r#"{"type":"cancel","id":99}"#.into(),
        format!(r#"{{"type":"run","id":"b","job":{}}}"#, job("bandwidth")),
        r#"{"type":"topology","id":5,"target":{"kind":"catalog","name":"dgx-h100"}}"#.into(),
        r#"{"type":"topology","id":6,"target":{"kind":"catalog","name":"no-such-machine"}}"#.into(),
        format!(
            "{{\"type\":\"run\",\"id\":7,\"pad\":\"{}\"}}",
            "x".repeat(17 << 20)
        ),
        "\u{1b}[31m{".into(),
    ];
    let (out, ok) = agent_session(&requests, &[]);
    assert!(ok, "the agent ends with 0 at end of input");
    assert_eq!(out[0]["type"], "hello");
    assert_eq!(out[0]["protocol"], 2);
    let errors: Vec<&serde_json::Value> = out.iter().filter(|m| m["type"] == "error").collect();
    let texts: Vec<String> = errors
        .iter()
        .map(|e| e["error"].as_str().unwrap().to_string())
        .collect();
    let has = |s: &str| texts.iter().any(|t| t.contains(s));
    assert!(has("not JSON"), "{texts:?}");
    assert!(has("unknown request type \"frobnicate\""), "{texts:?}");
    assert!(
        has("a request is a JSON object with a \"type\""),
        "{texts:?}"
    );
    assert!(has("bad run request"), "{texts:?}");
    assert!(has("needs an \"id\""), "{texts:?}");
    assert!(has("no job with this id"), "{texts:?}");
    assert!(has("no-such-machine"), "{texts:?}");
    assert!(has("longer than 16 MiB"), "{texts:?}");
    // Every error is one line of JSON with no raw control character.
    for t in &texts {
        assert!(!t.contains('\u{1b}') && !t.contains('\n'), "{t:?}");
    }
    // The good requests were served between the bad ones.
    let done = out
        .iter()
        .find(|m| m["type"] == "done" && m["id"] == "b")
        .expect("the bandwidth job finished");
    assert!(
        !done["report"]["bandwidth"]["results"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(out.iter().any(|m| m["type"] == "event" && m["id"] == "b"));
    assert!(out.iter().any(|m| m["type"] == "topology" && m["id"] == 5));
}

#[test]
fn one_job_at_a_time_and_cancel_stops_it() {
    let requests = vec![
        format!(
            r#"{{"type":"run","id":1,"job":{{"kind":"suite","target":{{"kind":"catalog","name":"hgx-h200"}},"options":{{"stages":["topology","bandwidth"],"modeled":true}}}}}}"#
        ),
        format!(r#"{{"type":"run","id":2,"job":{}}}"#, job("bandwidth")),
        r#"{"type":"cancel","id":1}"#.into(),
    ];
    let (out, ok) = agent_session(&requests, &["--test-case-delay-ms", "30"]);
    assert!(ok);
    assert!(
        out.iter().any(|m| m["type"] == "error"
            && m["id"] == 2
            && m["error"].as_str().unwrap().starts_with("busy")),
        "{out:?}"
    );
    let end = out
        .iter()
        .find(|m| m["id"] == 1 && (m["type"] == "cancelled" || m["type"] == "done"))
        .expect("job 1 ended");
    assert_eq!(end["type"], "cancelled");
    assert_eq!(end["report"]["cancelled"], true);
}

#[test]
fn the_agent_runs_nothing_the_command_line_would_refuse() {
    use scalescope::job::{Job, Target};
    use scalescope::scaling::table::Mode;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    // Workloads a workload file could not hold (issue O item 3).
    let base = scalescope::scaling::workload::catalog().remove(0);
    let bad: Vec<(&str, scalescope::scaling::Workload)> = vec![
        ("per_gpu_batch", {
            let mut w = base.clone();
            w.per_gpu_batch = 1e300;
            w
        }),
        ("params", {
            let mut w = base.clone();
            w.params = -7e9;
            w
        }),
        ("utilization", {
            let mut w = base.clone();
            w.utilization = -0.4;
            w
        }),
        ("flops_per_sample", {
            let mut w = base.clone();
            w.flops_per_sample = 0.0;
            w
        }),
    ];
    let mut requests = Vec::new();
    for (i, (_, w)) in bad.iter().enumerate() {
        let job = Job::Scaling {
            target: Target::Catalog {
                name: "h200-2x-sxm".into(),
            },
            gpus: Default::default(),
            workloads: vec![w.clone()],
            modes: vec![Mode::Weak],
            max_gpus: 8,
            measure: None,
            pricing: None,
        };
        requests.push(format!(
            r#"{{"type":"run","id":{i},"job":{}}}"#,
            serde_json::to_string(&job).unwrap()
        ));
    }
    // Standard input and a FIFO as captures to import, as a run and as a topology request.
    for (id, path) in [
        ("dash", "-".to_string()),
        ("fifo", fifo.display().to_string()),
    ] {
        let target = format!(
            r#"{{"kind":"import","paths":[{}]}}"#,
            serde_json::json!(path)
        );
        requests.push(format!(
            r#"{{"type":"run","id":"{id}","job":{{"kind":"topology","target":{target}}}}}"#
        ));
        requests.push(format!(
            r#"{{"type":"topology","id":"{id}-t","target":{target}}}"#
        ));
    }
    // Options outside the command line's ranges.
    requests.push(
        r#"{"type":"run","id":"iters","job":{"kind":"bandwidth","target":{"kind":"catalog","name":"h200-2x-sxm"},"options":{"gpus":[],"tests":[],"sizes":[0],"iters":0,"samples":3},"modeled":true}}"#.into(),
    );
    // And a good job after them: the agent still serves.
    requests.push(format!(
        r#"{{"type":"run","id":"ok","job":{}}}"#,
        job("bandwidth")
    ));
    let start = Instant::now();
    let (out, ok) = agent_session(&requests, &[]);
    assert!(ok);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    let answer = |id: serde_json::Value| {
        out.iter()
            .find(|m| m["id"] == id && m["type"] != "event" && m["type"] != "alive")
            .unwrap_or_else(|| panic!("no answer to {id}: {out:?}"))
            .clone()
    };
    for (i, (field, _)) in bad.iter().enumerate() {
        let a = answer(serde_json::json!(i));
        assert_eq!(a["type"], "failed", "{a}");
        assert_eq!(a["code"], 2, "{a}");
        assert!(a["error"].as_str().unwrap().contains(field), "{a}");
    }
    for id in ["dash", "dash-t"] {
        let a = answer(serde_json::json!(id));
        assert_eq!(a["type"], "error", "{a}");
        assert!(
            a["error"].as_str().unwrap().contains("protocol stream"),
            "{a}"
        );
    }
    for id in ["fifo", "fifo-t"] {
        let a = answer(serde_json::json!(id));
        assert_eq!(a["type"], "error", "{a}");
        assert!(
            a["error"].as_str().unwrap().contains("not a regular file"),
            "{a}"
        );
    }
    let a = answer(serde_json::json!("iters"));
    assert_eq!(a["type"], "failed", "{a}");
    assert!(a["error"].as_str().unwrap().starts_with("iters: 0"), "{a}");
    assert_eq!(answer(serde_json::json!("ok"))["type"], "done");
}

/// Each value is checked in one place, its type: GPUs listed twice, a bad interval and a bad
/// price sent over the agent protocol get the command line's one-line error, under the field's
/// name instead of the flag's, as `failed` with code 2 (the input's fault).
#[test]
fn the_agent_refuses_values_with_the_command_lines_words() {
    let catalog = r#"{"kind":"catalog","name":"h200-2x-sxm"}"#;
    let cases: [(&str, String, Vec<&str>, &str, &str); 3] = [
        (
            "gpus",
            format!(
                r#"{{"type":"run","id":"gpus","job":{{"kind":"bandwidth","target":{catalog},"options":{{"gpus":[0,0],"tests":[],"sizes":[],"iters":4,"samples":3}},"modeled":true}}}}"#
            ),
            vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--gpus",
                "0,0",
            ],
            "--gpus",
            "gpus",
        ),
        (
            "interval",
            r#"{"type":"watch","id":"interval","request":{"interval_s":0}}"#.to_string(),
            vec!["watch", "--interval", "0"],
            "--interval",
            "interval_s",
        ),
        (
            "price",
            format!(
                r#"{{"type":"run","id":"price","job":{{"kind":"scaling","target":{catalog},"workloads":[],"modes":["weak"],"max_gpus":8,"pricing":{{"kind":"rental","per_gpu_hour":-1}}}}}}"#
            ),
            vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--price-per-gpu-hour",
                "-1",
            ],
            "--price-per-gpu-hour",
            "pricing: per_gpu_hour",
        ),
    ];
    let requests: Vec<String> = cases.iter().map(|c| c.1.clone()).collect();
    let (out, ok) = agent_session(&requests, &[]);
    assert!(ok);
    for (id, _, args, flag, field) in &cases {
        let cli = local(args);
        assert_eq!(cli.status.code(), Some(2), "{args:?}");
        let cli = String::from_utf8(cli.stderr).unwrap();
        let cli = cli.trim_end();
        let answer = out
            .iter()
            .find(|m| m["id"] == *id)
            .unwrap_or_else(|| panic!("no answer to {id}: {out:?}"));
        assert_eq!(answer["type"], "failed", "{answer}");
        assert_eq!(answer["code"], 2, "{answer}");
        let agent = answer["error"].as_str().unwrap();
        let said = agent
            .strip_prefix(field)
            .unwrap_or_else(|| panic!("{agent:?} should start with {field:?}"));
        assert_eq!(cli, format!("Error: {flag}{said}"), "{id}");
        assert!(!cli.contains('\n'), "{cli}");
    }
}

/// `watch` on a server: its samples stream through ssh into the lines and the CSV here (the
/// agent plays a recording from an H100 pair through its hidden `--test-watch-replay` hook, as
/// this machine has no GPU), `--count` stops the server's watch; without the hook the server's
/// missing driver is one line naming it.
#[test]
fn watch_streams_a_servers_samples_through_ssh() {
    let Some(s) = sshd() else { return };
    let rec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/watch-h100x2-nvlink.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("watch.csv");
    let agent = format!("{BIN} agent --test-watch-replay {}", rec.display());
    let out = remote(
        s,
        Some(&agent),
        &["watch", "--count", "3", "--csv", &csv.display().to_string()],
    )
    .output()
    .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("connected to 127.0.0.1"), "{stderr}");
    assert!(
        stdout.starts_with("# watch vm (live): GPUs 0,1"),
        "{stdout}"
    );
    let gpu_lines = stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("pair"))
        .count();
    assert_eq!(gpu_lines, 6, "{stdout}");
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
    // A header, then per sample and GPU one row and 18 link rows.
    assert_eq!(rows, 1 + 3 * 2 * 19);

    let out = remote(s, None, &["watch", "--count", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("on 127.0.0.1") && errors[0].contains("libnvidia-ml.so.1"),
        "{stderr}"
    );
}
