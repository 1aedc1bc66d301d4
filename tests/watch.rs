//! `scalescope watch` without a GPU: recordings taken on GPU machines played back (lines, CSV,
//! re-recording), `/metrics` checked by Prometheus' own tools — `promtool check metrics` and a
//! Prometheus server scraping it — a counter missing from a recording, malformed recordings and
//! bad flags as one-line errors, and the agent's `watch` request.
//!
//! `promtool` and `prometheus` come from Debian's `prometheus` package (scripts/test.sh installs
//! it). Without them the test says so and checks the text itself, unless `SCALESCOPE_PROMETHEUS`
//! names the server (scripts/test.sh sets it): then a tool that does not work fails the test.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{data_path, one_line_error, run};
use scalescope::model::traffic::{TrafficRecording, parse_recording};

/// A single H100 (PCIe only): host->GPU, GPU->host and both, recorded while
/// scripts/watch_copy.py copied (docs/VERIFIED.md, "Live traffic").
const PCIE: &str = "watch-h100-pcie.jsonl";
/// Two H100 SXM joined by NV18: GPU->GPU copies each way and both ways.
const NVLINK: &str = "watch-h100x2-nvlink.jsonl";

fn recording(name: &str) -> TrafficRecording {
    parse_recording(&common::read_data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `scalescope watch ARGS` running in the background, its standard error read line by line.
struct Watch {
    child: Child,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl Watch {
    fn start(args: &[&str]) -> Watch {
        let mut child = common::headless()
            .arg("watch")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starts");
        let err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Watch { child, stderr: rx }
    }

    /// Waits for a stderr line containing `needle`; returns it.
    fn line_with(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(l) = self.stderr.recv_timeout(Duration::from_millis(100)) {
                if l.contains(needle) {
                    return l;
                }
                seen.push(l);
            }
        }
        panic!("no line with {needle:?} on stderr; got {seen:?}");
    }

    /// The port `--prometheus 127.0.0.1:0` was given.
    fn port(&self) -> u16 {
        let l = self.line_with("serving http://");
        l.rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches("/metrics").parse().ok())
            .unwrap_or_else(|| panic!("no port in {l:?}"))
    }

    /// Ctrl-C; the exit code.
    fn interrupt(mut self) -> Option<i32> {
        // SAFETY: kill(2) on a child this test started.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGINT);
        }
        self.child.wait().unwrap().code()
    }
}

/// GET `path` on 127.0.0.1:`port` (HTTP/1.0: the body comes whole, never chunked): (status
/// line, headers, body).
fn get(port: u16, path: &str) -> (String, String, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (
        status.to_string(),
        headers.to_ascii_lowercase(),
        body.to_string(),
    )
}

fn tool(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `promtool check metrics` on `body`: Prometheus' own parser and linter.
fn promtool_accepts(body: &str) {
    let Some(promtool) = tool("SCALESCOPE_PROMTOOL", "promtool") else {
        eprintln!("no promtool (Debian's prometheus package): /metrics checked by this test only");
        return;
    };
    let mut child = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", promtool.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool check metrics refused /metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Prometheus server scraping 127.0.0.1:`port` every second; returns the result of the
/// instant query `query` once it has any series (or panics after 30 s).
fn prometheus_scrapes(port: u16, query: &str, dir: &Path) -> Option<serde_json::Value> {
    let Some(server) = tool("SCALESCOPE_PROMETHEUS", "prometheus") else {
        eprintln!("no prometheus server (Debian's prometheus package): scraping not checked");
        return None;
    };
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: scalescope\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(&server)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg("--web.listen-address=127.0.0.1:0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", server.display()));
    // Prometheus logs the address it listens on ("Listening on" address=127.0.0.1:PORT).
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut web = None;
    let mut log = Vec::new();
    while web.is_none() && Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            if l.contains("Listening on") {
                web = l
                    .rsplit("address=")
                    .next()
                    .and_then(|a| a.split_whitespace().next())
                    .and_then(|a| a.rsplit(':').next())
                    .and_then(|p| p.parse::<u16>().ok());
            }
            log.push(l);
        }
    }
    let web = web.unwrap_or_else(|| {
        let _ = child.kill();
        panic!("prometheus did not say where it listens: {log:?}")
    });
    let mut answer = None;
    while Instant::now() < deadline {
        let (_, _, body) = get(web, &format!("/api/v1/query?query={query}"));
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&body)
            && v["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
        {
            answer = Some(v);
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let _ = child.kill();
    let _ = child.wait();
    Some(answer.unwrap_or_else(|| panic!("prometheus never scraped {query}: {log:?}")))
}

#[test]
fn metrics_of_a_replay_are_accepted_by_promtool_and_scraped_by_prometheus() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recording(NVLINK);
    let w = Watch::start(&[
        "--replay",
        &data_path(NVLINK),
        "--replay-speed",
        "1000",
        "--prometheus",
        "127.0.0.1:0",
        "--quiet",
    ]);
    let port = w.port();
    w.line_with("replay ended");
    let (status, headers, body) = get(port, "/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(
        headers.contains("content-type: text/plain; version=0.0.4"),
        "{headers}"
    );
    // The last sample's figures, per GPU and per link, with their labels.
    let last = rec.samples.last().unwrap();
    for g in &last.gpus {
        if let Some(rx) = g.pcie_rx_bytes_per_s {
            let series = format!(
                "scalescope_pcie_link_bytes_per_second{{gpu=\"{}\",direction=\"rx\"}} ",
                g.gpu
            );
            let line = body
                .lines()
                .find(|l| l.starts_with(&series))
                .unwrap_or_else(|| panic!("no {series} in {body}"));
            let v: f64 = line[series.len()..].parse().unwrap();
            assert!((v - rx).abs() <= 1e-6 * rx.max(1.0), "{line} vs {rx}");
        }
        for l in &g.nvlinks {
            if l.tx_bytes_per_s.is_some() {
                let series = format!(
                    "scalescope_nvlink_bytes_per_second{{gpu=\"{}\",link=\"{}\",peer=\"{}\",direction=\"tx\"}} ",
                    g.gpu,
                    l.link,
                    l.peer.label()
                );
                assert!(body.contains(&series), "no {series} in {body}");
            }
        }
    }
    assert!(body.contains("mode=\"replay\""), "{body}");
    promtool_accepts(&body);
    if let Some(v) = prometheus_scrapes(port, "scalescope_nvlink_bytes_per_second", dir.path()) {
        let series = v["data"]["result"].as_array().unwrap();
        let links: usize = last.gpus.iter().map(|g| g.nvlinks.len()).sum();
        assert!(
            series.len() >= links,
            "{} series scraped for {links} links: {v}",
            series.len()
        );
        let m = &series[0]["metric"];
        for label in ["gpu", "link", "peer", "direction"] {
            assert!(m[label].is_string(), "{label} missing in {m}");
        }
    }
    let (status, _, _) = get(port, "/nothing");
    assert!(status.contains("404"), "{status}");
    assert_eq!(w.interrupt(), Some(0));
}

#[test]
fn a_reading_missing_from_the_recording_is_absent_from_metrics_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut rec = recording(PCIE);
    for s in &mut rec.samples {
        for g in &mut s.gpus {
            g.pcie_tx_bytes_per_s = None;
            g.pcie_source = g.pcie_rx_bytes_per_s.and(g.pcie_source);
            g.power_w = None;
            g.power_source = None;
        }
    }
    let path = dir.path().join("missing.jsonl");
    std::fs::write(&path, rec.to_jsonl()).unwrap();
    let p = path.display().to_string();
    let w = Watch::start(&[
        "--replay",
        &p,
        "--replay-speed",
        "1000",
        "--prometheus",
        "127.0.0.1:0",
        "--quiet",
    ]);
    let port = w.port();
    w.line_with("replay ended");
    let (_, _, body) = get(port, "/metrics");
    assert!(
        body.contains("scalescope_pcie_link_bytes_per_second{gpu=\"0\",direction=\"rx\"}"),
        "{body}"
    );
    assert!(!body.contains("direction=\"tx\"} "), "{body}");
    assert!(
        !body
            .lines()
            .any(|l| l.starts_with("scalescope_power_watts")),
        "{body}"
    );
    promtool_accepts(&body);
    assert_eq!(w.interrupt(), Some(0));

    // On the terminal: a dash, never 0.
    let r = run(&[
        "watch",
        "--replay",
        &p,
        "--replay-speed",
        "1000",
        "--count",
        "2",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let first = r.stdout.lines().find(|l| !l.starts_with('#')).unwrap();
    let cells: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(cells[3], "—", "pcie_tx: {first}");
    assert_eq!(cells[8], "—", "power: {first}");
}

#[test]
fn a_replay_prints_writes_csv_and_records_again() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recording(NVLINK);
    let csv = dir.path().join("w.csv");
    let again = dir.path().join("again.jsonl");
    let r = run(&[
        "watch",
        "--replay",
        &data_path(NVLINK),
        "--replay-speed",
        "1000",
        "--count",
        "3",
        "--csv",
        &csv.display().to_string(),
        "--record",
        &again.display().to_string(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // The app's words for a replay: the file, when and where it was recorded.
    let head = format!("# watch {}: ", rec.header.replay_label(&data_path(NVLINK)));
    assert!(r.stdout.starts_with(&head), "{}", r.stdout);
    assert!(!r.stdout.lines().next().unwrap().contains("live"));
    let gpu_lines = r
        .stdout
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains("pair"))
        .count();
    assert_eq!(gpu_lines, 3 * rec.header.gpus.len(), "{}", r.stdout);
    let back = parse_recording(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(back.header, rec.header);
    assert_eq!(back.samples[..], rec.samples[..3]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let headers = rows.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        scalescope::export::traffic_csv::COLUMNS
    );
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let links: usize = rec.samples[..3]
        .iter()
        .flat_map(|s| &s.gpus)
        .map(|g| 1 + g.nvlinks.len())
        .sum();
    assert_eq!(rows.len(), links);

    // Traffic between the GPUs shows as pair lines with the share of the line rate.
    let busy = run(&[
        "watch",
        "--replay",
        &data_path(NVLINK),
        "--replay-speed",
        "1000",
    ]);
    assert_eq!(busy.code, Some(0), "{}", busy.stderr);
    assert!(
        busy.stdout
            .lines()
            .any(|l| l.contains("pair 0-1 NV18: 0→1") && l.contains("% of line rate")),
        "{}",
        busy.stdout
    );

    // --gpus keeps that GPU's readings only.
    let one = run(&[
        "watch",
        "--replay",
        &data_path(NVLINK),
        "--replay-speed",
        "1000",
        "--count",
        "2",
        "--gpus",
        "1",
    ]);
    assert_eq!(one.code, Some(0), "{}", one.stderr);
    assert!(
        one.stdout
            .lines()
            .filter(|l| !l.starts_with('#'))
            .all(|l| l.split_whitespace().nth(1) == Some("1") || l.contains("pair")),
        "{}",
        one.stdout
    );
}

#[test]
fn malformed_recordings_are_one_line_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = common::read_data(PCIE);
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let write = |name: &str, text: &str| common::write(dir.path(), name, text);

    lines[2] = "{\"t_s\": 3.0, \"interval_s\": 1.0, \"gpus\": [".into();
    let p = write("cut.jsonl", &(lines.join("\n") + "\n"));
    one_line_error(
        &["watch", "--replay", &p.display().to_string()],
        Some(2),
        &["cut.jsonl:3:"],
    );
    let p = write(
        "negative.jsonl",
        &good.replacen(
            "\"pcie_rx_bytes_per_s\":",
            "\"pcie_rx_bytes_per_s\":-1,\"x\":",
            1,
        ),
    );
    one_line_error(
        &["watch", "--replay", &p.display().to_string()],
        Some(2),
        &["negative.jsonl:2:", "pcie_rx_bytes_per_s", "out of range"],
    );
    let p = write("other.jsonl", "{\"format\":\"something else\"}\n");
    one_line_error(
        &["watch", "--replay", &p.display().to_string()],
        Some(2),
        &["other.jsonl:1:", "not a scalescope watch recording"],
    );
    let p = write("empty.jsonl", "");
    one_line_error(
        &["watch", "--replay", &p.display().to_string()],
        Some(2),
        &["empty.jsonl", "empty"],
    );
    one_line_error(
        &["watch", "--replay", "/nonexistent/rec.jsonl"],
        Some(2),
        &["/nonexistent/rec.jsonl"],
    );
}

#[test]
fn bad_flags_are_one_line_errors() {
    let rec = data_path(PCIE);
    for (args, needles) in [
        (
            vec!["watch", "--interval", "0"],
            vec!["--interval", "out of range"],
        ),
        (
            vec!["watch", "--interval", "fast"],
            vec!["--interval", "\"fast\""],
        ),
        (vec!["watch", "--interval", "2h"], vec!["--interval"]),
        (vec!["watch", "--count", "0"], vec!["--count"]),
        (
            vec!["watch", "--prometheus", "localhost"],
            vec!["--prometheus"],
        ),
        (
            vec!["watch", "--replay", &rec, "--replay-speed", "0"],
            vec!["--replay-speed"],
        ),
        (
            vec!["watch", "--replay", &rec, "--gpus", "5"],
            vec!["GPU 5"],
        ),
        (
            vec!["watch", "--replay", &rec, "--record", &rec],
            vec!["being replayed"],
        ),
        (
            vec!["watch", "--replay", &rec, "--interval", "1s"],
            vec!["--interval"],
        ),
    ] {
        one_line_error(&args, Some(2), &needles);
    }
    // A port someone else holds.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    one_line_error(
        &["watch", "--replay", &rec, "--prometheus", &port],
        Some(2),
        &["cannot listen"],
    );
}

#[test]
fn watching_without_a_driver_says_so_and_the_agent_answers_watch_requests() {
    if !common::no_driver() {
        return;
    }
    // The advice is what watch takes (issue X): a recording, not --import/--catalog.
    let e = one_line_error(
        &["watch", "--count", "1"],
        Some(1),
        &["libnvidia-ml.so.1", "watch --replay FILE"],
    );
    assert!(!e.contains("--import") && !e.contains("--catalog"), "{e}");

    // The agent: its hello offers watch; a bad interval is the request's fault (2), no driver
    // the machine's (1); an unknown request lists watch among the known ones.
    let mut agent = common::headless()
        .arg("agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = agent.stdin.take().unwrap();
    for request in [
        r#"{"type":"watch","id":1,"request":{"interval_s":0}}"#,
        r#"{"type":"watch","id":2,"request":{"interval_s":1.0,"gpus":[0]}}"#,
        r#"{"type":"dance","id":3}"#,
    ] {
        writeln!(input, "{request}").unwrap();
    }
    let out = BufReader::new(agent.stdout.take().unwrap());
    let mut answers = Vec::new();
    for line in out.lines().map_while(Result::ok) {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        answers.push(v);
        if answers.len() == 4 {
            break;
        }
    }
    drop(input);
    let _ = agent.wait();
    let hello = &answers[0];
    assert!(
        hello["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j == "watch"),
        "{hello}"
    );
    let by_id = |id: i64| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {answers:?}"))
    };
    assert_eq!(by_id(1)["type"], "failed");
    assert_eq!(by_id(1)["code"], 2);
    assert!(by_id(1)["error"].as_str().unwrap().contains("interval"));
    assert_eq!(by_id(2)["type"], "failed", "{answers:?}");
    assert_eq!(by_id(2)["code"], 1);
    assert!(
        by_id(2)["error"]
            .as_str()
            .unwrap()
            .contains("libnvidia-ml.so.1")
    );
    assert!(by_id(3)["error"].as_str().unwrap().contains("watch"));
}

/// On a GPU machine (scripts/gpu-check.sh): two samples of this machine's traffic, every GPU
/// read, PCIe from GPM on Hopper and later.
#[test]
#[ignore = "needs GPU"]
fn watching_this_machine_reads_every_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("live.jsonl");
    let out = std::process::Command::new(common::bin())
        .args(["watch", "--interval", "500ms", "--count", "2", "--record"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec = parse_recording(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    assert_eq!(rec.samples.len(), 2);
    for s in &rec.samples {
        assert_eq!(s.gpus.len(), rec.header.gpus.len());
        assert!((0.3..2.0).contains(&s.interval_s), "{}", s.interval_s);
        for g in &s.gpus {
            assert!(g.power_w.is_some(), "GPU {}: no power", g.gpu);
            let name = rec.header.topology.gpus[g.gpu]
                .name
                .clone()
                .unwrap_or_default();
            if ["H100", "H200", "B200", "GB200", "B300"]
                .iter()
                .any(|n| name.contains(n))
            {
                assert_eq!(
                    g.pcie_source,
                    Some(scalescope::model::traffic::ReadingSource::Gpm),
                    "GPU {} ({name}): {:?}",
                    g.gpu,
                    rec.header.notes
                );
            }
        }
    }
}

#[test]
fn a_source_that_does_not_start_leaves_no_empty_files() {
    if !common::no_driver() {
        return;
    }
    // No driver: watch's --record and --csv, bench bandwidth's and collectives' --csv/--json
    // were left behind empty (a 0-byte recording, header-only CSVs) by a run that measured
    // nothing. The error stays; the folder stays empty.
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    for args in [
        vec![
            "watch",
            "--count",
            "1",
            "--record",
            &p("t.jsonl"),
            "--csv",
            &p("t.csv"),
        ],
        vec![
            "bench",
            "bandwidth",
            "--csv",
            &p("b.csv"),
            "--json",
            &p("b.json"),
        ],
        vec![
            "bench",
            "collectives",
            "--csv",
            &p("c.csv"),
            "--json",
            &p("c.json"),
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.stderr);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}
