//! Nothing lost, nothing absurd (issue K): result files survive interruptions (SIGINT, SIGTERM,
//! SIGHUP, SIGKILL, a second Ctrl-C) and a full disk; an `--out` folder is written by one run at
//! a time; every input is checked at the edge with a one-line error naming what and the
//! accepted range; importers and report parsing are bounded. Runs the real binary with real
//! signals; needs no GPU and no display.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::write;
use scalescope::report::{self, Report, StageInFlight};

use common::{headless as scalescope, run};

/// Expects exit `code` and exactly one non-empty stderr line, `Error: …`, containing every
/// needle; returns the line.
fn one_line_error(args: &[&str], code: i32, needles: &[&str]) -> String {
    common::one_line_error(args, Some(code), needles)
}

// ---------------------------------------------------------------------------------------------
// Interruptions

/// Starts a modeled quick `--bench` that sleeps `delay_ms` after every finished case.
fn start_bench(out: &Path, delay_ms: u32, suite: &str) -> Child {
    scalescope()
        .args([
            "--bench",
            "--modeled",
            "--quick",
            "--catalog",
            "h200-2x-sxm",
            "--suite",
            suite,
            "--out",
        ])
        .arg(out)
        .args(["--test-case-delay-ms", &delay_ms.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `file` has at least `rows` lines.
fn wait_for_rows(file: &Path, rows: usize) {
    let start = Instant::now();
    loop {
        let n = std::fs::read_to_string(file)
            .map(|t| t.lines().count())
            .unwrap_or(0);
        if n >= rows {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} never reached {rows} lines",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: the pid is our own child's.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// report.json and bandwidth.csv of `dir` are whole and agree: one CSV row per result.
fn consistent(dir: &Path) -> Report {
    let r = report::load(&dir.join("report.json")).expect("report.json is complete");
    let rows = r.bandwidth.as_ref().map_or(0, |b| b.results.len());
    let csv = std::fs::read_to_string(dir.join("bandwidth.csv")).expect("bandwidth.csv exists");
    let records: Vec<csv::StringRecord> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.expect("every CSV row is whole"))
        .collect();
    assert_eq!(records.len(), rows, "CSV rows vs report.json results");
    r
}

#[test]
fn sigterm_and_sighup_stop_like_ctrl_c_and_say_which_stage() {
    for (sig, code, name) in [
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGHUP, 129, "SIGHUP"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let child = start_bench(dir.path(), 150, "bandwidth,collectives");
        wait_for_rows(&dir.path().join("bandwidth.csv"), 2);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("interrupted ({name})")),
            "{stderr}"
        );
        let r = consistent(dir.path());
        assert!(r.cancelled, "{name}");
        assert_eq!(r.cancelled_by.as_deref(), Some(name));
        assert_eq!(
            r.stage_in_flight,
            Some(StageInFlight::Running(report::Stage::Bandwidth))
        );
        assert!(r.collectives.is_none(), "stopped before collectives");
    }
}

#[test]
fn a_second_ctrl_c_right_after_the_first_leaves_a_report_that_says_cancelled() {
    // Signals sent back to back may merge into one (POSIX does not queue them); whatever the
    // gap, the files must say cancelled. Where the second one surely arrives apart, it must also
    // end the run at once.
    for gap_ms in [0u64, 5, 150] {
        let dir = tempfile::tempdir().unwrap();
        // A long pause per case: the first Ctrl-C cannot be noticed by the runner before the
        // second arrives; the watcher thread records it at once.
        let child = start_bench(dir.path(), 4000, "bandwidth");
        wait_for_rows(&dir.path().join("bandwidth.csv"), 2);
        signal(&child, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(gap_ms));
        signal(&child, libc::SIGINT);
        let started = Instant::now();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "gap {gap_ms} ms");
        if gap_ms >= 150 {
            assert!(
                started.elapsed() < Duration::from_millis(2500),
                "the second Ctrl-C exits at once, not after the case in flight"
            );
        }
        let r = consistent(dir.path());
        assert!(r.cancelled, "gap {gap_ms} ms: report says cancelled");
        assert_eq!(
            r.stage_in_flight,
            Some(StageInFlight::Running(report::Stage::Bandwidth))
        );
        let leftovers: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with("-tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn sigkill_at_any_moment_leaves_whole_files() {
    // Kill at staggered moments; whatever is on disk is complete and consistent.
    for (i, after_ms) in [30u64, 90, 170, 260, 400].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let child = start_bench(dir.path(), (i % 2) as u32, "bandwidth,collectives,scaling");
        std::thread::sleep(Duration::from_millis(after_ms));
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        if dir.path().join("report.json").exists() {
            let r = report::load(&dir.path().join("report.json")).expect("whole report.json");
            if dir.path().join("bandwidth.csv").exists() {
                let text = std::fs::read_to_string(dir.path().join("bandwidth.csv")).unwrap();
                assert!(
                    text.starts_with("test,method,"),
                    "bandwidth.csv has its header"
                );
                let mut rd = csv::Reader::from_reader(text.as_bytes());
                let columns = rd.headers().unwrap().len();
                assert!(columns >= 25, "the energy columns are there: {columns}");
                for rec in rd.records() {
                    assert_eq!(rec.unwrap().len(), columns, "every row whole");
                }
            }
            assert!(!r.cancelled, "a killed run was not cancelled");
        }
    }
}

#[test]
fn one_run_at_a_time_per_out_folder_and_no_mixing() {
    let dir = tempfile::tempdir().unwrap();
    let first = start_bench(dir.path(), 200, "bandwidth");
    wait_for_rows(&dir.path().join("bandwidth.csv"), 2);
    let out = dir.path().to_str().unwrap();
    one_line_error(
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "h200-2x-sxm",
            "--out",
            out,
        ],
        1,
        &["is being written by", &format!("process {}", first.id())],
    );
    signal(&first, libc::SIGINT);
    let done = first.wait_with_output().unwrap();
    assert_eq!(done.status.code(), Some(130));
    // A later run with other stages replaces the earlier run's files, so nothing mixes.
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--suite",
        "collectives",
        "--out",
        out,
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("removed an earlier run's"),
        "{}",
        r.stderr
    );
    assert!(!dir.path().join("bandwidth.csv").exists());
    let rep = report::load(&dir.path().join("report.json")).unwrap();
    assert!(rep.bandwidth.is_none() && rep.collectives.is_some() && !rep.cancelled);
    assert_eq!(rep.stage_in_flight, None);
}

#[test]
fn out_must_be_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "taken", "x");
    one_line_error(
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "h200-2x-sxm",
            "--out",
            file.to_str().unwrap(),
        ],
        2,
        &["not a folder"],
    );
}

/// Mounts a small tmpfs (root only); `None` with the reason printed where that is not allowed.
fn small_tmpfs(size: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::piped())
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("skipped: cannot mount a tmpfs here (needs root and mount permission)");
        return None;
    }
    Some((dir, mnt))
}

struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
/// (The disk is 640 KiB: report.html, report.json and the CSVs of the first results fit, the whole run does not.)
fn a_full_disk_is_a_machine_error_that_keeps_the_last_complete_files() {
    let Some((_dir, mnt)) = small_tmpfs("640k") else {
        return;
    };
    let _unmount = Unmount(mnt.clone());
    let out = mnt.join("out");
    // 5 ms per case: several writes succeed before the disk fills.
    let o = scalescope()
        .args([
            "--bench",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--suite",
            "bandwidth",
            "--out",
        ])
        .arg(&out)
        .args(["--test-case-delay-ms", "5"])
        .output()
        .unwrap();
    let r = common::Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).to_string(),
        stderr: String::from_utf8_lossy(&o.stderr).to_string(),
        took: Default::default(),
    };
    assert_eq!(
        r.code,
        Some(1),
        "a full disk is the machine's: {}",
        r.stderr
    );
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("Error: "))
        .collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("No space left") && lines[0].contains("last complete files"),
        "{}",
        lines[0]
    );
    // What is there is whole: the last report.json that fitted, and the CSV that agrees with it.
    let rep = consistent(&out);
    assert!(!rep.cancelled);
    assert!(
        rep.bandwidth.is_some_and(|b| !b.results.is_empty()),
        "results finished before the disk filled are kept"
    );
    eprintln!("full disk: {}", lines[0]);
    let temps = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with("-tmp"))
        .count();
    assert_eq!(temps, 0, "no temporary file left behind");
}

// ---------------------------------------------------------------------------------------------
// Inputs checked at the edge

#[test]
fn max_gpus_is_range_checked_and_huge_values_end_at_once() {
    let start = Instant::now();
    let e = one_line_error(
        &[
            "bench",
            "scaling",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--max-gpus",
            "9223372036854775808",
        ],
        2,
        &["--max-gpus", "1 to 1048576"],
    );
    assert!(start.elapsed() < Duration::from_secs(10), "{e}");
    one_line_error(
        &[
            "bench",
            "scaling",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--max-gpus",
            "0",
        ],
        2,
        &["--max-gpus"],
    );
    let ok = run(&[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--workload",
        "resnet50",
        "--max-gpus",
        "1048576",
    ]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert!(
        ok.stdout.contains("1048576"),
        "the largest count is modeled"
    );
}

#[test]
fn workload_values_out_of_range_name_file_line_field_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let carla = include_str!("../assets/workloads/carla-multisensor.toml");
    let offload = include_str!("../assets/workloads/remote-offload-llm.toml");
    let resnet = include_str!("../assets/workloads/resnet50.toml");
    for (name, base, from, to, field, range) in [
        (
            "zero-link.toml",
            carla,
            "link_gbps = 5.0",
            "link_gbps = 0",
            "link_gbps",
            "0.001 to 1e5 GB/s",
        ),
        (
            "neg-rtt.toml",
            offload,
            "rtt_ms = 0.2",
            "rtt_ms = -5.0",
            "rtt_ms",
            "0 to 1e5 ms",
        ),
        (
            "neg-link.toml",
            offload,
            "link_gbps = 3.125",
            "link_gbps = -3.0",
            "link_gbps",
            "GB/s",
        ),
        (
            "huge-batch.toml",
            resnet,
            "per_gpu_batch = 256",
            "per_gpu_batch = 1e308",
            "per_gpu_batch",
            "1 to 1e9 samples",
        ),
        (
            "tiny-flops.toml",
            resnet,
            "flops_per_sample = 24.6e9",
            "flops_per_sample = 5e-324",
            "flops_per_sample",
            "1 to 1e20 FLOPs",
        ),
    ] {
        let text = base.replace(from, to);
        assert_ne!(text, base, "{name}: {from} not found");
        let line = text.lines().position(|l| l.starts_with(to)).unwrap() + 1;
        let p = write(dir.path(), name, &text);
        let e = one_line_error(
            &[
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--workload",
                p.to_str().unwrap(),
            ],
            2,
            &[&format!("{name}:{line}: {field}:"), range],
        );
        assert!(!e.contains("NaN") && e.len() < 300, "{e}");
    }
}

#[test]
fn empty_or_meaningless_selections_are_refused() {
    let m = ["--modeled", "--catalog", "dgx-h100"];
    let with = |extra: &[&str], base: &[&str]| -> Vec<String> {
        base.iter()
            .chain(m.iter())
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    for (args, needle) in [
        (with(&["--gpus", ""], &["bench", "bandwidth"]), "--gpus"),
        (
            with(&["--tests", " , "], &["bench", "bandwidth"]),
            "--tests",
        ),
        (with(&["--ops", ""], &["bench", "collectives"]), "--ops"),
        (with(&["--algo", ""], &["bench", "collectives"]), "--algo"),
        (
            with(&["--sizes", "1"], &["bench", "collectives"]),
            "--sizes",
        ),
        (
            with(
                &["--algo", "ring", "--ops", "all_gather"],
                &["bench", "collectives"],
            ),
            "all_reduce only",
        ),
        (with(&["--suite", ""], &["--bench"]), "--suite"),
        (with(&["--gpus", ""], &["--bench"]), "--gpus"),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        one_line_error(&a, 2, &[needle]);
    }
    let capture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dgx-a100-topo-m.txt");
    one_line_error(
        &[
            "--bench",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--import",
            capture.to_str().unwrap(),
        ],
        2,
        &["--catalog and --import"],
    );
}

#[test]
fn the_app_checks_arguments_and_reports_before_any_window() {
    // No display here: a mistyped subcommand, a missing report and a bad report are one-line
    // errors (exit 2), never a windowing library's message.
    let e = one_line_error(&["frobnicate"], 2, &["unknown command", "frobnicate"]);
    assert!(!e.contains("winit") && !e.contains(".cargo"), "{e}");
    one_line_error(&["/no/such/report.json"], 2, &["no such report"]);
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.json", "{\"kind\": \"scalescope-report\"");
    one_line_error(&[bad.to_str().unwrap()], 2, &["truncated", "bad.json"]);
    // A good report, but no display: says so (exit 1), without source paths.
    let good =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/reports/h200-2x-sxm-2026-11-22.json");
    let e = one_line_error(&[good.to_str().unwrap()], 1, &["no display"]);
    assert!(!e.contains(".cargo"), "{e}");
    one_line_error(&[], 1, &["no display"]);
    // clap's errors are one line too, with its hint kept.
    one_line_error(&["topo", "--format", "xml"], 2, &["xml", "possible values"]);
}

#[test]
fn modeled_figures_never_claim_to_be_measured() {
    let r = run(&[
        "bench",
        "collectives",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--sizes",
        "1M,1G",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stdout.contains("0 wrong"), "{}", r.stdout);
    assert!(
        r.stdout.contains("modeled: no data was checked"),
        "{}",
        r.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("bw.csv");
    let r = run(&[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "dgx-h100",
        "--tests",
        "h2d,local_copy",
        "--csv",
        csv_path.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(&csv_path).unwrap();
    for rec in csv::Reader::from_reader(text.as_bytes()).records() {
        let rec = rec.unwrap();
        assert_eq!(
            &rec[5], "",
            "samples of a modeled row is empty, never 0: {rec:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Bounded importers

/// `nvidia-smi topo -m` text for `n` GPUs on an NVSwitch (NV18 everywhere).
fn capture(n: usize) -> String {
    let mut s = String::from("\t");
    for i in 0..n {
        s.push_str(&format!("GPU{i}\t"));
    }
    s.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for i in 0..n {
        s.push_str(&format!("GPU{i}"));
        for j in 0..n {
            s.push_str(if i == j { "\t X " } else { "\tNV18" });
        }
        s.push_str("\t0-55\t0\t\tN/A\n");
    }
    s
}

#[test]
fn a_1000_gpu_capture_imports_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big.txt", &capture(1000));
    let start = Instant::now();
    let out = scalescope()
        .args(["topo", "--import", p.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // n⁴ took over 300 s; a debug build on a busy CI core stays well under this.
    assert!(took < Duration::from_secs(60), "{took:?}");
    let t: scalescope::model::Topology = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(t.gpus.len(), 1000);
    assert_eq!(t.links.len(), 1000 * 999 / 2);
}

#[test]
fn oversized_and_endless_inputs_are_refused() {
    one_line_error(
        &["topo", "--import", "/dev/zero"],
        2,
        &["/dev/zero", "larger than 64 MiB"],
    );
    one_line_error(&["compare", "/dev/zero", "/dev/zero"], 2, &["larger than"]);
    // 50 MB on one line: read, refused, quickly, without echoing it.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "line.txt", &"NV18".repeat(12 << 20));
    let start = Instant::now();
    let e = one_line_error(
        &["topo", "--import", p.to_str().unwrap()],
        2,
        &["line.txt:1:"],
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(e.len() < 400, "{} characters", e.len());
    // A 100 KB word in a flag (the most one argument may hold is 128 KiB) is not echoed whole.
    let word = "w".repeat(100_000);
    let e = one_line_error(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--tests",
            &word,
        ],
        2,
        &["--tests", "more bytes"],
    );
    assert!(e.len() < 2000, "{} characters", e.len());
}

// ---------------------------------------------------------------------------------------------
// Reports

fn report_text() -> String {
    include_str!("../assets/reports/h200-2x-sxm-2026-11-22.json").to_string()
}

#[test]
fn report_errors_name_the_json_path_and_escape_what_they_quote() {
    let dir = tempfile::tempdir().unwrap();
    let reference =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/reports/h200-2x-sxm-2026-11-22.json");
    let reference = reference.to_str().unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&report_text()).unwrap();
    v["machine"]["label"] = serde_json::Value::Null;
    let p = write(dir.path(), "null.json", &v.to_string());
    one_line_error(
        &["compare", p.to_str().unwrap(), reference],
        2,
        &["machine.label"],
    );

    let mut v: serde_json::Value = serde_json::from_str(&report_text()).unwrap();
    v["bandwidth"]["results"][3]["test"] = serde_json::json!("warp\n\u{1b}[2Jdrive");
    let p = write(dir.path(), "escape.json", &v.to_string());
    let e = one_line_error(
        &["compare", p.to_str().unwrap(), reference],
        2,
        &["bandwidth.results[3].test", "\\n", "\\u{1b}"],
    );
    assert!(!e.contains('\u{1b}'), "{e}");

    let mut v: serde_json::Value = serde_json::from_str(&report_text()).unwrap();
    v["bandwidth"]["results"][5]["median_gbps"] = serde_json::json!(-394.0);
    let p = write(dir.path(), "negative.json", &v.to_string());
    one_line_error(
        &["compare", p.to_str().unwrap(), reference],
        2,
        &["bandwidth.results[5].median_gbps", "-394", "not negative"],
    );

    let text = report_text().replacen("\"median_gbps\": ", "\"median_gbps\": 1e999", 1);
    let p = write(dir.path(), "inf.json", &text);
    one_line_error(
        &["compare", p.to_str().unwrap(), reference],
        2,
        &["inf.json"],
    );
}

#[test]
fn compare_prints_no_inf_or_nan_from_absurd_values() {
    let dir = tempfile::tempdir().unwrap();
    let reference =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/reports/h200-2x-sxm-2026-11-22.json");
    let mut v: serde_json::Value = serde_json::from_str(&report_text()).unwrap();
    for r in v["collectives"]["results"].as_array_mut().unwrap() {
        if r["busbw_gbps"].is_number() {
            r["busbw_gbps"] = serde_json::json!(1e-300);
        }
    }
    let tiny = write(dir.path(), "tiny.json", &v.to_string());
    // A bandwidth of 1.7e308 GB/s is no measurement: refused, naming the field (issue X).
    for r in v["bandwidth"]["results"].as_array_mut().unwrap() {
        if r["median_gbps"].is_number() {
            r["median_gbps"] = serde_json::json!(1.7e308);
        }
    }
    let huge = write(dir.path(), "absurd.json", &v.to_string());
    one_line_error(
        &[
            "compare",
            reference.to_str().unwrap(),
            huge.to_str().unwrap(),
        ],
        2,
        &["median_gbps: 1.7e308 GB/s is out of range", "absurd.json"],
    );
    for args in [
        vec![
            "compare",
            reference.to_str().unwrap(),
            tiny.to_str().unwrap(),
        ],
        vec![
            "compare",
            tiny.to_str().unwrap(),
            reference.to_str().unwrap(),
        ],
    ] {
        let r = run(&args);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        for bad in ["inf", "NaN"] {
            assert!(!r.stdout.contains(bad), "{bad} in:\n{}", r.stdout);
        }
        assert!(r.stdout.lines().all(|l| l.len() < 200), "{}", r.stdout);
    }
    one_line_error(
        &[
            "compare",
            reference.to_str().unwrap(),
            tiny.to_str().unwrap(),
            "--workload",
            "nope",
        ],
        2,
        &["--workload", "\"nope\"", "resnet50"],
    );
}

// ---------------------------------------------------------------------------------------------
// Smaller

#[test]
fn each_cause_is_said_once() {
    let e = one_line_error(
        &["topo", "--import", "/no/such/file.txt"],
        2,
        &["/no/such/file.txt"],
    );
    assert_eq!(e.matches("No such file").count(), 1, "{e}");
}
