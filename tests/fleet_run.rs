//! `scalescope fleet run --hosts …` through three real sshd on localhost (throwaway keys,
//! distinct ports, host aliases n1, n2, n3 in a generated ssh_config passed with `--ssh
//! "ssh -F cfg"`; tests/common/sshd.rs starts them, scripts/test.sh installs openssh-server
//! when missing). No GPU: every node checks the catalog's dgx-h100, modeled. n2's connection is
//! cut mid-run and n3's sshd is stopped before it: both unreachable, n1 done, exit 1. Bad input:
//! one line, exit 2.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::sshd::{Keys, Sshd};

const BIN: &str = env!("CARGO_BIN_EXE_scalescope");

/// Three sshd on 127.0.0.1 reached as n1, n2, n3 through `dir/ssh_config`.
struct Fleet {
    // Before the keys: the daemons are stopped before their folder goes.
    sshd: Vec<Sshd>,
    keys: Keys,
}

impl Fleet {
    fn ssh(&self) -> String {
        format!("ssh -F {}", self.keys.dir().join("ssh_config").display())
    }

    /// Stops node `i`'s sshd (0-based): it answers no more.
    fn stop(&mut self, i: usize) {
        self.sshd[i].stop();
    }
}

/// `None` (with the reason printed) where sshd or ssh-keygen is missing or cannot run here.
fn fleet() -> Option<Fleet> {
    let keys = common::sshd::keys()?;
    let mut sshd = Vec::new();
    let mut ssh_config = String::new();
    for n in 1..=3 {
        // n2's sessions carry FLEET_TEST_DROP: the node command below cuts them mid-run.
        let env = if n == 2 {
            "SetEnv FLEET_TEST_DROP=1\n"
        } else {
            ""
        };
        let daemon = keys.start(&format!("sshd{n}"), env)?;
        ssh_config.push_str(&keys.host_entry(&format!("n{n}"), daemon.port));
        sshd.push(daemon);
    }
    std::fs::write(keys.dir().join("ssh_config"), ssh_config).ok()?;
    let fleet = Fleet { sshd, keys };
    common::sshd::can_log_in(&fleet.ssh(), "n1").then_some(fleet)
}

/// What runs on each node: this build's agent. Where FLEET_TEST_DROP is set (n2), the agent's
/// input is held back 3 s while the session's sshd is killed after 1 s: the hello arrives, the
/// check's request does not, and the connection drops mid-run.
fn node_command() -> String {
    format!(
        "sh -c 'if [ -n \"$FLEET_TEST_DROP\" ]; then (sleep 1; kill -9 $PPID) & {{ sleep 3; cat; }} | {BIN} agent; else exec {BIN} agent; fi'"
    )
}

fn fleet_run(f: &Fleet, out: &Path, hosts: &str) -> std::process::Output {
    Command::new(BIN)
        .args(["fleet", "run", "--hosts", hosts, "--parallel", "2", "--out"])
        .arg(out)
        .args(["--ssh", &f.ssh(), "--remote-command", &node_command()])
        .args(["--catalog", "dgx-h100"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn record(out: &Path, node: &str) -> serde_json::Value {
    let p = out.join("nodes").join(node).join("node.json");
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

#[test]
fn every_host_gets_its_folder_and_a_lost_host_does_not_stop_the_others() {
    let Some(mut f) = fleet() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet");
    f.stop(2);
    let run = fleet_run(&f, &out, "n1,n2,n3");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    // A node not checked is the machine's problem: exit 1, one line naming them.
    assert_eq!(run.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("n1: check passed"), "{stdout}");
    assert!(stdout.contains("n2: unreachable — "), "{stdout}");
    assert!(stdout.contains("n3: unreachable — "), "{stdout}");
    assert!(stderr.contains("2 node(s) not checked: n2, n3"), "{stderr}");
    assert!(stderr.contains("scalescope fleet report"), "{stderr}");
    // The fleet report ran at the end, over the nodes checked and those not.
    let fleet: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report/fleet.json")).unwrap())
            .unwrap();
    let text = fleet.to_string();
    for n in ["n1", "n2", "n3"] {
        assert!(text.contains(&format!("\"{n}\"")), "{n}: {text}");
    }

    let n1 = record(&out, "n1");
    assert_eq!(n1["node"], "n1");
    assert_eq!(n1["via"], "ssh");
    assert_eq!(n1["host"], "n1");
    assert_eq!(n1["status"], "done");
    assert_eq!(n1["exit_code"], 0);
    assert!(n1["started"].as_str().unwrap().ends_with('Z'));
    assert!(n1.get("error").is_none());
    // The node's check is a report every reader of report.json takes, with its health section.
    let report = scalescope::report::load(&out.join("nodes/n1/report.json")).unwrap();
    assert!(report.health.is_some());

    let n2 = record(&out, "n2");
    assert_eq!(n2["status"], "unreachable");
    assert_eq!(n2["exit_code"], 1);
    // Cut after the hello: the connection was lost mid-run, not refused.
    assert!(
        n2["error"]
            .as_str()
            .unwrap()
            .contains("connection to n2 was lost"),
        "{n2}"
    );
    assert!(!out.join("nodes/n2/report.json").exists());
    let n3 = record(&out, "n3");
    assert_eq!(n3["status"], "unreachable");
    assert!(n3["error"].as_str().unwrap().contains("n3"), "{n3}");

    // Again: n1 is done and skipped; the others are tried again (and still unreachable).
    let again = fleet_run(&f, &out, "n1,n2,n3");
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stdout.contains("n1: done before (exit 0), skipped"),
        "{stdout}"
    );
    assert_eq!(record(&out, "n1")["started"], n1["started"]);
}

#[test]
fn a_hosts_file_with_comments_checks_each_host_once() {
    let Some(f) = fleet() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts");
    std::fs::write(&file, "# rack 1\nn1\nn3   # spare\n\nn1\n").unwrap();
    let out = dir.path().join("fleet");
    let run = Command::new(BIN)
        .args(["fleet", "run", "--hosts-file"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .args(["--ssh", &f.ssh(), "--remote-command", &node_command()])
        .args(["--catalog", "dgx-h100", "--quick"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(stdout.matches("check passed").count(), 2, "{stdout}");
    let mut nodes: Vec<String> = std::fs::read_dir(out.join("nodes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["n1", "n3"]);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    common::one_line_error(
        &["fleet", "run", "--hosts", "n1,-oProxyCommand=x", "--out", o],
        Some(2),
        &["--hosts", "is not a host name"],
    );
    common::one_line_error(
        &["fleet", "run", "--out", o],
        Some(2),
        &["--hosts LIST, --hosts-file FILE or --slurm"],
    );
    let file = dir.path().join("hosts");
    std::fs::write(&file, "n1\nbad/host\n").unwrap();
    common::one_line_error(
        &[
            "fleet",
            "run",
            "--hosts-file",
            file.to_str().unwrap(),
            "--out",
            o,
        ],
        Some(2),
        &["line 2:", "\"bad/host\""],
    );
    common::one_line_error(
        &[
            "fleet",
            "run",
            "--hosts",
            "n1",
            "--catalog",
            "no-such-machine",
            "--out",
            o,
        ],
        Some(2),
        &["--catalog"],
    );
    // --slurm outside an allocation.
    let run = Command::new(BIN)
        .args([
            "fleet",
            "run",
            "--slurm",
            "--out",
            o,
            "--catalog",
            "dgx-h100",
        ])
        .env_remove("SLURM_JOB_ID")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("not inside a Slurm allocation"), "{err}");
    // The ssh flags go with a server or a host list; --between with Slurm.
    common::one_line_error(
        &["--ssh", "ssh -p 2222", "topo"],
        Some(2),
        &["--ssh goes with --remote HOST"],
    );
    common::one_line_error(
        &["--remote-install", "check", "--catalog", "dgx-h100"],
        Some(2),
        &["--remote-install goes with --remote HOST"],
    );
    common::one_line_error(
        &[
            "--remote", "gpu01", "fleet", "run", "--hosts", "n1", "--out", o,
        ],
        Some(2),
        &["fleet run reaches its hosts itself"],
    );
    common::one_line_error(
        &["fleet", "run", "--hosts", "n1", "--between", "--out", o],
        Some(2),
        &["--between", "--slurm"],
    );
    common::one_line_error(
        &[
            "fleet",
            "run",
            "--hosts",
            "n1",
            "--between-sizes",
            "1G,2G",
            "--out",
            o,
        ],
        Some(2),
        &["go with --between"],
    );
    common::one_line_error(
        &[
            "fleet",
            "run",
            "--slurm",
            "--between",
            "--between-sizes",
            "lots",
            "--out",
            o,
        ],
        Some(2),
        &["--between-sizes"],
    );
}

#[test]
fn fleet_node_outside_slurm_writes_this_machine_s_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let run = Command::new(BIN)
        .args(["fleet", "node", "--out"])
        .arg(out)
        .args(["--catalog", "dgx-h100"])
        .env_remove("SLURM_JOB_ID")
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let nodes: Vec<_> = std::fs::read_dir(out.join("nodes")).unwrap().collect();
    assert_eq!(nodes.len(), 1);
    let node = nodes[0].as_ref().unwrap().path();
    let rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(node.join("node.json")).unwrap()).unwrap();
    assert_eq!(rec["via"], "local");
    assert_eq!(rec["status"], "done");
    assert!(node.join("report.json").exists());
}

#[test]
fn a_node_whose_check_fails_makes_the_run_exit_3() {
    let Some(f) = fleet() else { return };
    let dir = tempfile::tempdir().unwrap();
    // A catalog machine with one PCIe link trained low: its check fails (the file is read on
    // the node, here the same machine).
    let catalog = std::fs::read_to_string(common::crate_file("assets/hardware/h200-2x-sxm.toml"))
        .unwrap()
        .replace("id = \"h200-2x-sxm\"", "id = \"h200-2x-degraded\"");
    let toml = dir.path().join("degraded.toml");
    std::fs::write(
        &toml,
        format!("{catalog}\n[[state]]\ngpus = [1]\npcie_current_gen = 4\npcie_current_width = 8\n"),
    )
    .unwrap();
    let out = dir.path().join("fleet");
    let run = Command::new(BIN)
        .args(["fleet", "run", "--hosts", "n1,n3", "--out"])
        .arg(&out)
        .args(["--ssh", &f.ssh(), "--remote-command", &node_command()])
        .arg("--catalog")
        .arg(&toml)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert_eq!(run.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stdout.contains("n1: check FAILED (exit 3)"), "{stdout}");
    // The fleet report ran at the end and names the nodes to drain.
    assert!(
        stderr.contains("fleet report: 2 of 2 nodes fail; drain n1, n3"),
        "{stderr}"
    );
    assert!(out.join("report/fleet.json").exists());
    let n1 = record(&out, "n1");
    assert_eq!(n1["status"], "done");
    assert_eq!(n1["exit_code"], 3);
    assert!(out.join("nodes/n1/report.json").exists());
}
