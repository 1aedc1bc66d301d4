//! Hostile input at the surfaces issue X names (fleet run/report, soak replay, watch replay,
//! the Prometheus endpoint): nothing written outside `--out`, no terminal control from data,
//! no hang, no panic. Runs the real binary; needs no GPU, no Slurm and no display (Slurm's
//! `srun` and `scontrol` are scripts in a folder put first on PATH).

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{data_path, headless, one_line_error, run};
use scalescope::model::validate::unsafe_on_terminal;

/// Runs `cmd` to its end, or kills it after `limit`: its output, or a failure naming the hang.
fn within(mut cmd: Command, limit: Duration) -> std::process::Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    // Output is read as it comes (a full pipe would stop the child), on a thread of its own.
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("still running after {limit:?}");
        }
    }
}

fn printable(text: &str) -> bool {
    !text
        .chars()
        .any(|c| c != '\n' && c != '\t' && unsafe_on_terminal(c))
}

// ---------------------------------------------------------------------------------------------
// Writes outside --out

#[test]
fn a_node_folder_that_is_a_symbolic_link_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let (out, elsewhere) = (dir.path().join("fleet"), dir.path().join("elsewhere"));
    std::fs::create_dir_all(out.join("nodes")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("nodes").join("n1")).unwrap();
    let start = Instant::now();
    let mut cmd = headless();
    cmd.args(["fleet", "node", "--catalog", "dgx-h100", "--out"])
        .arg(&out)
        .env("SLURM_JOB_ID", "7")
        .env("SLURM_NNODES", "1")
        .env("SLURMD_NODENAME", "n1");
    let o = within(cmd, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("nodes/n1 is a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Refused before the check ran: nothing was measured to lose.
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn fleet_run_through_ssh_does_not_write_through_a_node_folder_that_is_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (out, elsewhere) = (dir.path().join("fleet"), dir.path().join("elsewhere"));
    std::fs::create_dir_all(out.join("nodes")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, out.join("nodes").join("h0")).unwrap();
    // A stand-in ssh that runs the remote command here: this build's agent.
    let ssh = common::write(
        dir.path(),
        "ssh",
        "#!/bin/sh\nfor last; do :; done; exec sh -c \"$last\"\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ssh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = headless();
    cmd.args([
        "fleet",
        "run",
        "--hosts",
        "h0,h1",
        "--catalog",
        "h200-2x-sxm",
        "--quick",
    ])
    .arg("--ssh")
    .arg(&ssh)
    .args([
        "--remote-command",
        &format!("{} agent", common::bin().display()),
    ])
    .arg("--out")
    .arg(&out);
    let o = within(cmd, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nodes/h0 is a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

// ---------------------------------------------------------------------------------------------
// Terminal control from data

#[test]
fn a_node_name_and_soak_events_reach_the_terminal_escaped() {
    use common::fleet::{slow_gpu, write_nodes};
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    write_nodes(&nodes, 6, |i, r| {
        if i == 2 {
            r.machine.hostname = Some("evil\u{202e}gnp.exe\u{2066}".into());
            slow_gpu(r, 3, 0.5);
        }
    });
    let out = dir.path().join("out");
    let r = run(&[
        "fleet",
        "report",
        nodes.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    let drain = r.stdout.lines().find(|l| l.starts_with("drain:")).unwrap();
    assert!(drain.contains("evil\\u{202e}gnp.exe\\u{2066}"), "{drain}");
    assert!(printable(&r.stdout) && printable(&r.stderr), "{}", r.stdout);
    let html = std::fs::read_to_string(out.join("fleet.html")).unwrap();
    assert!(!html.contains('\u{202e}'));

    let soak = dir.path().join("soak.csv");
    std::fs::write(
        &soak,
        "time_s,gpu,phase,rate,events\n1,0,gemm,700,\"\u{1b}]0;owned\u{7}\u{1b}[2J\u{202e}\"\n2,0,gemm,700,\n",
    )
    .unwrap();
    let r = run(&[
        "check",
        "--soak-replay",
        soak.to_str().unwrap(),
        "--soak-csv",
        dir.path().join("again.csv").to_str().unwrap(),
    ]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.stderr.contains("\\u{1b}]0;owned"), "{}", r.stderr);
    assert!(printable(&r.stdout) && printable(&r.stderr), "{}", r.stderr);
}

// ---------------------------------------------------------------------------------------------
// Hangs and panics

/// A folder with `srun` (exits at once, starting nothing) and `scontrol` (`body`) scripts.
fn fake_slurm(dir: &Path, scontrol: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [("srun", "exit 0"), ("scontrol", scontrol)] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn an_scontrol_that_never_answers_or_floods_is_not_waited_for() {
    for scontrol in [
        "exec sleep 600",
        // 64 MB, then silence: more than any node list, and no end.
        "head -c 67108864 /dev/zero | tr '\\0' 'n'; exec sleep 600",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = fake_slurm(dir.path(), scontrol);
        let mut cmd = headless();
        cmd.args(["fleet", "run", "--slurm", "--catalog", "dgx-h100", "--out"])
            .arg(dir.path().join("fleet"))
            .env("PATH", path)
            .env("SLURM_JOB_ID", "7")
            .env("SLURM_NNODES", "2")
            .env("SLURM_JOB_NODELIST", "n[1-2]")
            .env("SCALESCOPE_TEST_SCONTROL_LIMIT_MS", "1000");
        let o = within(cmd, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{scontrol}: {stderr}");
        assert!(stderr.contains("srun ended"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn an_scontrol_list_unlike_the_allocation_and_many_nodes_not_checked_stay_one_short_line() {
    // `n` names from scontrol for an allocation of `nnodes`; srun starts nothing.
    let fleet_run = |names: usize, nnodes: usize| {
        let dir = tempfile::tempdir().unwrap();
        let path = fake_slurm(
            dir.path(),
            &format!("i=0; while [ $i -lt {names} ]; do echo n$i; i=$((i+1)); done"),
        );
        let out = dir.path().join("fleet");
        let mut cmd = headless();
        cmd.args([
            "fleet",
            "run",
            "--slurm",
            "--catalog",
            "h200-2x-sxm",
            "--out",
        ])
        .arg(&out)
        .env("PATH", path)
        .env("SLURM_JOB_ID", "7")
        .env("SLURM_NNODES", nnodes.to_string())
        .env("SLURM_JOB_NODELIST", format!("n[0-{}]", nnodes - 1));
        let o = within(cmd, Duration::from_secs(120));
        let stderr = String::from_utf8_lossy(&o.stderr).to_string();
        let records = std::fs::read_dir(out.join("nodes")).map_or(0, |d| d.count());
        (o.status.code(), stderr, records, dir)
    };
    // 3,000 names for 2 nodes is not this allocation: no record for each of them.
    let (code, stderr, records, _dir) = fleet_run(3000, 2);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(records, 0, "{stderr:.500}");
    let last = stderr.lines().last().unwrap_or("");
    assert!(last.starts_with("Error: srun ended"), "{stderr:.500}");
    // 40 nodes not checked: each has its record, the error names the first few.
    let (code, stderr, records, _dir) = fleet_run(40, 40);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(records, 40);
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("Error: 40 node(s) not checked: n0, n1"),
        "{last}"
    );
    assert!(last.contains("and 30 more"), "{last}");
    assert!(last.chars().count() < 300, "{last}");
}

#[test]
fn a_soak_csv_fifo_without_a_reader_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let mut cmd = headless();
    cmd.args(["check", "--soak-replay", &data_path("soak-h100-5min.csv")])
        .arg("--soak-csv")
        .arg(&fifo);
    let o = within(cmd, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(c) if c != 0), "{stderr}");
    assert!(stderr.contains("no process reads"), "{stderr}");
}

#[test]
fn soak_csv_to_a_stream_has_one_header() {
    let mut cmd = headless();
    cmd.args([
        "check",
        "--soak-replay",
        &data_path("soak-h100x2-2min.csv"),
        "--replay-speed",
        "1000",
        "--soak-csv",
        "/dev/stdout",
    ]);
    let o = within(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("time_s,")).count(),
        1,
        "{stdout:.2000}"
    );
    let rows = stdout
        .lines()
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .count();
    let recorded = std::fs::read_to_string(data_path("soak-h100x2-2min.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(rows, recorded, "{stdout:.2000}");
}

#[test]
fn soak_replay_pace_and_steps_past_any_clock_are_refused() {
    one_line_error(
        &[
            "check",
            "--soak-replay",
            &data_path("soak-h100-5min.csv"),
            "--replay-speed",
            "1e-300",
        ],
        Some(2),
        &["--replay-speed 1e-300", "0.01 to 1000"],
    );
    let dir = tempfile::tempdir().unwrap();
    let soak = dir.path().join("soak.csv");
    std::fs::write(&soak, "time_s,gpu\n1,0\n1e20,0\n").unwrap();
    one_line_error(
        &[
            "check",
            "--soak-replay",
            soak.to_str().unwrap(),
            "--replay-speed",
            "1",
        ],
        Some(2),
        &["line 3, column time_s", "1e20"],
    );
}

#[test]
fn a_soak_replay_of_200000_rows_takes_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let soak = dir.path().join("soak.csv");
    let mut text = String::from("time_s,gpu,phase,rate,power_w,gpu_temp_c\n");
    for i in 0..200_000 {
        let phase = if i % 2 == 0 { "gemm" } else { "memory" };
        text.push_str(&format!("{},0,{phase},700,600,60\n", i + 1));
    }
    std::fs::write(&soak, text).unwrap();
    let mut cmd = headless();
    cmd.args(["check", "--soak-replay"]).arg(&soak);
    let start = Instant::now();
    let o = within(cmd, Duration::from_secs(120));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.code().is_some());
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_watch_recording_past_any_clock_or_of_millions_of_gpus_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data_path("watch-h100x2-nvlink.jsonl")).unwrap();
    let header = text.lines().next().unwrap();
    let far = dir.path().join("far.jsonl");
    std::fs::write(
        &far,
        format!("{header}\n{{\"t_s\":1e20,\"interval_s\":1,\"gpus\":[]}}\n"),
    )
    .unwrap();
    one_line_error(
        &["watch", "--replay", far.to_str().unwrap(), "--quiet"],
        Some(2),
        &["far.jsonl:2: t_s: 1e20 s is out of range"],
    );
    let many = dir.path().join("many.jsonl");
    let entries = vec!["{\"gpu\":0}"; 2_000_000].join(",");
    std::fs::write(
        &many,
        format!("{header}\n{{\"t_s\":1,\"interval_s\":1,\"gpus\":[{entries}]}}\n"),
    )
    .unwrap();
    let start = Instant::now();
    one_line_error(
        &["watch", "--replay", many.to_str().unwrap(), "--quiet"],
        Some(2),
        &["many.jsonl:2: gpus"],
    );
    assert!(start.elapsed() < Duration::from_secs(30));
}

// ---------------------------------------------------------------------------------------------
// Fleet reports: nothing lost, nothing absurd

/// `fleet report DIR --out DIR/out`: the run and fleet.json (`None` when not written).
fn fleet_report(dir: &Path) -> (common::Run, Option<serde_json::Value>) {
    let out = dir.join("out");
    let r = run(&[
        "fleet",
        "report",
        dir.join("nodes").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let json = std::fs::read_to_string(out.join("fleet.json"))
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (r, json)
}

#[test]
fn a_fleet_of_1300_unreachable_nodes_or_a_400_kb_gpu_name_keeps_its_fleet_json() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1300 {
        let node = dir.path().join("nodes").join(format!("n{i}"));
        std::fs::create_dir_all(&node).unwrap();
        std::fs::write(
            node.join("node.json"),
            format!(
                r#"{{"node":"n{i}","status":"unreachable","exit_code":1,"error":"ssh: connect to host n{i}: No route to host"}}"#
            ),
        )
        .unwrap();
    }
    let (r, json) = fleet_report(dir.path());
    let json = json.unwrap_or_else(|| panic!("no fleet.json: {}", r.stderr));
    assert_eq!(json["nodes"].as_array().unwrap().len(), 1300);
    assert!(dir.path().join("out/fleet.png").is_file(), "{}", r.stderr);

    let dir = tempfile::tempdir().unwrap();
    common::fleet::write_nodes(&dir.path().join("nodes"), 4, |i, r| {
        if i == 1 {
            r.machine.gpu_names = vec!["G".repeat(400_000); 8];
        }
    });
    let (r, json) = fleet_report(dir.path());
    let json = json.unwrap_or_else(|| panic!("no fleet.json: {}", r.stderr));
    let text = json.to_string();
    // 75 kB with one model; a second model is named in every figure's subject (cut to 40
    // characters): each of the ~1,700 figure names grows, the 400 kB name is never copied.
    assert!(text.len() < 200_000, "{} bytes", text.len());
    assert!(!text.contains(&"G".repeat(201)));
    assert!(r.stdout.len() < 20_000, "{}", r.stdout.len());
}

#[test]
fn absurd_figures_in_node_reports_and_between_records_are_named_not_judged() {
    let dir = tempfile::tempdir().unwrap();
    common::fleet::write_nodes(&dir.path().join("nodes"), 5, |i, r| {
        if i < 3 {
            common::fleet::slow_gpu(r, 0, 1e300);
        }
    });
    let (r, json) = fleet_report(dir.path());
    let json = json.unwrap();
    let n = common::fleet::node(&json, "node00");
    assert_eq!(n["verdict"], "fail", "{n}");
    let detail = n["findings"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("GB/s is out of range"), "{detail}");
    assert!(
        !r.stdout.contains("e308") && !r.stdout.contains("inf"),
        "{}",
        r.stdout
    );

    let dir = tempfile::tempdir().unwrap();
    common::fleet::write_nodes(&dir.path().join("nodes"), 3, |_, _| {});
    common::fleet::between_records(&dir.path().join("nodes"), 3, "node01", -1.0);
    let (r, json) = fleet_report(dir.path());
    let json = json.unwrap();
    assert!(
        !r.stdout.contains("-1.00 GB/s") && !r.stdout.contains("−1.00"),
        "{}",
        r.stdout
    );
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("busbw_gbps: -1 GB/s is out of range"),
        "{notes}"
    );
}

#[test]
fn a_report_of_100_million_zeros_is_refused_without_gigabytes() {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("nodes").join("n1");
    std::fs::create_dir_all(&node).unwrap();
    let mut zeros = Vec::with_capacity(200 << 20);
    zeros.push(b'[');
    for _ in 0..(100 << 20) - 1 {
        zeros.extend_from_slice(b"0,");
    }
    zeros.extend_from_slice(b"0]");
    std::fs::write(node.join("report.json"), zeros).unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!(
            "ulimit -v 2000000 && exec {} fleet report {} --out {}",
            common::bin().display(),
            dir.path().join("nodes").display(),
            dir.path().join("out").display()
        ),
    ]);
    let o = within(cmd, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("memory allocation"), "{stderr}");
    let json = std::fs::read_to_string(dir.path().join("out/fleet.json")).expect("fleet.json");
    assert!(json.contains("JSON values"), "{json:.2000}");
}

#[test]
fn a_fleet_of_1000_checked_nodes_is_judged_without_holding_every_report() {
    let dir = tempfile::tempdir().unwrap();
    // One checked node's report (the modeled suite, its health check included), 0.5 MB, as
    // 1,000 nodes' (hard links: the disk holds it once).
    let one = dir.path().join("one");
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--out",
        one.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let report = one.join("report.json");
    assert!(
        std::fs::read_to_string(&report)
            .unwrap()
            .contains("\"health\"")
    );
    for i in 0..1000 {
        let node = dir
            .path()
            .join("fleet")
            .join("nodes")
            .join(format!("n{i:04}"));
        std::fs::create_dir_all(&node).unwrap();
        std::fs::hard_link(&report, node.join("report.json")).unwrap();
    }
    // Every report held whole was ~450 MB here (16,000 nodes: 6.6 GB); one at a time per core,
    // ~70 MB. The address space is capped between the two.
    let out = dir.path().join("out");
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!(
            "ulimit -v 400000 && exec {} fleet report {} --out {}",
            common::bin().display(),
            dir.path().join("fleet").display(),
            out.display()
        ),
    ]);
    let o = within(cmd, Duration::from_secs(300));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(json["nodes"].as_array().map(Vec::len), Some(1000));
    assert_eq!(json["counts"]["pass"], 1000, "{:.2000}", json["notes"]);
}

/// A catalog entry of `n` GPUs, every pair NV18 (`[topology] all`), with a PCIe link each.
fn catalog_of(dir: &Path, n: usize) -> String {
    let text = format!(
        "[machine]\nid = \"big\"\nname = \"Big\"\nsummary = \"generated\"\nsource = \"tests/hostile.rs\"\n\n\
         [gpu]\nmodel = \"NVIDIA H100 80GB HBM3\"\ncount = {n}\nmemory_mib = 81920\npcie_gen = 5\n\
         pcie_width = 16\nnvlink_generation = 4\nnvlinks = 18\nnvlink_gbps_per_link = 26.562\n\n\
         [topology]\nall = \"NV18\"\n"
    );
    common::write(dir, "big.toml", &text).display().to_string()
}

#[test]
fn bench_bandwidth_of_512_gpus_plans_pairs_by_kind_and_bounds_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog_of(dir.path(), 512);
    let csv = dir.path().join("bw.csv");
    // Every ordered pair of 512 GPUs for every test was 2.2 million results and 3.3 GB; the
    // address space is capped well below that.
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        &format!(
            "ulimit -v 1500000 && exec {} bench bandwidth --modeled --catalog {catalog} --csv {}",
            common::bin().display(),
            csv.display()
        ),
    ]);
    let o = within(cmd, Duration::from_secs(120));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("first pair of each kind of connection"),
        "{stdout:.3000}"
    );
    // A row per GPU for the host tests, a few per pair test: linear in the GPUs, not square.
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert!((512..40 * 512).contains(&rows), "{rows} rows");

    // Every pair asked for by naming the GPUs: more cases than a run holds is refused at once.
    let all: Vec<String> = (0..512).map(|g| g.to_string()).collect();
    let line = one_line_error(
        &[
            "bench",
            "bandwidth",
            "--modeled",
            "--catalog",
            &catalog,
            "--gpus",
            &all.join(","),
        ],
        Some(2),
        &["copy cases planned", "--pairs-per-link-kind"],
    );
    assert!(line.chars().count() < 200, "{line}");
}

// ---------------------------------------------------------------------------------------------
// Figures no machine has

#[test]
fn ownership_over_1e_300_years_and_a_gpu_of_5e_324_watts_are_refused() {
    one_line_error(
        &[
            "compare",
            "--catalog",
            "dgx-b200",
            "--catalog",
            "dgx-h100",
            "--capex-per-node",
            "300000",
            "--years",
            "1e-300",
            "--power-price-per-kwh",
            "0.1",
            "--samples",
            "1e18",
        ],
        Some(2),
        &["--years", "1e-300"],
    );
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::crate_file("assets/workloads/resnet50.toml"))
        .unwrap()
        .replacen("watts = ", "watts = 5e-324 #", 1);
    let w = common::write(dir.path(), "w.toml", &text);
    one_line_error(
        &[
            "bench",
            "scaling",
            "--modeled",
            "--catalog",
            "dgx-h100",
            "--workload",
            w.to_str().unwrap(),
        ],
        Some(2),
        &["watts", "5e-324 W is out of range"],
    );
}

#[test]
fn a_recorded_pcie_rate_of_thousands_of_line_rates_is_refused() {
    let text = std::fs::read_to_string(data_path("watch-h100x2-nvlink.jsonl")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let mut sample: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    sample["gpus"][0]["pcie_rx_bytes_per_s"] = serde_json::json!(1e13);
    let dir = tempfile::tempdir().unwrap();
    let rec = common::write(dir.path(), "rec.jsonl", &format!("{header}\n{sample}\n"));
    one_line_error(
        &["watch", "--replay", rec.to_str().unwrap(), "--quiet"],
        Some(2),
        &[
            "pcie_rx_bytes_per_s",
            "1e13 B/s is out of range",
            "PCIe line rate",
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// The Prometheus endpoint

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A connection to 127.0.0.1:`port`, given up after 2 s (a server that accepts nothing
/// leaves a connect waiting for minutes).
fn connect(port: u16) -> std::io::Result<std::net::TcpStream> {
    let s = std::net::TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_secs(2),
    )?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_write_timeout(Some(Duration::from_secs(10)))?;
    Ok(s)
}

/// GET /metrics: the status line and how long it took, or the error.
fn scrape(port: u16) -> Result<(String, Duration), String> {
    let start = Instant::now();
    let mut s = connect(port).map_err(|e| e.to_string())?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut body = Vec::new();
    s.read_to_end(&mut body).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&body);
    Ok((
        text.lines().next().unwrap_or("").to_string(),
        start.elapsed(),
    ))
}

/// A child killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The measured 2-GPU recording as one of `n` GPUs (every pair NV18; each sample's GPU 0
/// repeated with its 18 NVLinks to the next GPU): a /metrics page of megabytes, more than a
/// socket's buffers hold for a client that never reads it.
fn wide_recording(dir: &Path, n: usize) -> std::path::PathBuf {
    let entry = format!(
        "[machine]\nid = \"wide\"\nname = \"Wide\"\nsummary = \"generated\"\nsource = \"tests/hostile.rs\"\n\n\
         [gpu]\nmodel = \"NVIDIA H100 80GB HBM3\"\ncount = {n}\nmemory_mib = 81920\npcie_gen = 5\n\
         pcie_width = 16\nnvlink_generation = 4\nnvlinks = 18\nnvlink_gbps_per_link = 26.562\n\n\
         [topology]\nall = \"NV18\"\n"
    );
    let topology = scalescope::topology::catalog::parse_entry("wide.toml", &entry).unwrap();
    let header = scalescope::model::traffic::WatchHeader::new(
        topology,
        (0..n).collect(),
        1.0,
        "2026-11-27T00:00:00Z".into(),
    );
    let mut out = serde_json::to_string(&header).unwrap() + "\n";
    let measured = std::fs::read_to_string(data_path("watch-h100x2-nvlink.jsonl")).unwrap();
    for line in measured.lines().skip(1).take(5) {
        let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
        let first = v["gpus"][0].clone();
        v["gpus"] = (0..n)
            .map(|g| {
                let mut e = first.clone();
                e["gpu"] = serde_json::json!(g);
                for l in e["nvlinks"].as_array_mut().unwrap() {
                    l["peer"] = serde_json::json!({"gpu": (g + 1) % n});
                }
                e
            })
            .collect();
        out.push_str(&v.to_string());
        out.push('\n');
    }
    common::write(dir, "wide.jsonl", &out)
}

#[test]
fn the_metrics_endpoint_serves_its_scraper_through_slowloris_and_slow_readers() {
    let dir = tempfile::tempdir().unwrap();
    let recording = wide_recording(dir.path(), 256);
    let port = free_port();
    // The server may open 256 files; the clients below hold 400 connections (the issue's 1,100
    // at the usual 1,024, scaled down so that the test itself stays within its own limit).
    let _watch = Killed(
        Command::new("sh")
            .args([
                "-c",
                &format!(
                    "ulimit -n 256 && exec {} watch --replay {} --replay-speed 0.01 --quiet --prometheus {port}",
                    common::bin().display(),
                    recording.display()
                ),
            ])
            .env("CUDA_VISIBLE_DEVICES", "")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    // Up once it answers 200 (before the first reading it says 503, starting).
    while !scrape(port).is_ok_and(|(status, _)| status.contains("200")) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the endpoint never came up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // 300 connections that send half a request and stop, and 100 that ask and never read.
    let mut held = Vec::new();
    let holding = Instant::now();
    for i in 0..400 {
        if holding.elapsed() > Duration::from_secs(20) {
            break;
        }
        let Ok(mut s) = connect(port) else {
            continue;
        };
        let _ = if i % 4 == 0 {
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        } else {
            s.write_all(b"GET /metr")
        };
        held.push(s);
    }
    let (status, took) = scrape(port).expect("a scrape while 400 connections hang");
    assert!(status.contains("200"), "{status}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    drop(held);
}

/// A pipe whose reader has gone (`scalescope … 2>&1 | head -1` after head exits): the write
/// end, for a child's standard error or output.
fn pipe_nobody_reads() -> Stdio {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe(2) fills two descriptors this test owns; the read end is closed at once and
    // the write end handed to the child as an OwnedFd.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(std::os::fd::OwnedFd::from_raw_fd(fds[1]))
    }
}

/// Bad input and a failed check with standard error a pipe nobody reads: their exit codes
/// (2, 3), never a panic's 101.
#[test]
fn a_closed_standard_error_keeps_the_exit_code() {
    let (topo, nvlink) = (
        data_path("gb200-nvl72-constructed-gpu5-nv12-topo-m.txt"),
        data_path("gb200-nvl72-constructed-gpu5-nvlink-s.txt"),
    );
    let cases: [(&[&str], i32); 2] = [
        (&["check", "--catalog", "dgx-h100", "--gpus", "99"], 2),
        (&["check", "--import", &topo, "--import", &nvlink], 3),
    ];
    for (args, code) in cases {
        let status = headless()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(pipe_nobody_reads())
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

/// `scalescope --bench | head -1`: the run goes on after its reader left and writes its
/// files (a panic at the second line would lose every measurement).
#[test]
fn a_run_whose_output_nobody_reads_still_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let status = headless()
        .args(["--bench", "--modeled", "--catalog", "dgx-h100", "--out"])
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(pipe_nobody_reads())
        .stderr(pipe_nobody_reads())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(out.join("report.json").is_file());
}
