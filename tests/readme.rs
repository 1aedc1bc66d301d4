//! Every command line of the README runs as written (issue O, item 6): the `scalescope …` lines
//! of its `sh` blocks are run through `sh -c` with this build's binary first on PATH, in a
//! folder holding the files they name (captures from tests/data, the bundled reports, a
//! thresholds file, a catalog file with `[[state]]`).
//!
//! A line that needs what a test machine has not (a GPU, an ssh server, a display) is listed
//! in [`NOT_RUN`] with the reason; a README line neither run nor listed fails the test, and so
//! does a listed line the README no longer has, so the list cannot drift from the README.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{bin, crate_file, data};

/// README lines not run here, each with why. Matched against the command as written (before
/// its `#` comment).
const NOT_RUN: &[(&str, &str)] = &[
    ("scalescope --bench", "measures this machine's GPUs"),
    (
        "scalescope --bench --full --out h200-full",
        "measures this machine's GPUs",
    ),
    (
        "scalescope --bench --suite bandwidth,collectives --gpus 0,1 --nccl-lib /path/libnccl.so.2",
        "measures this machine's GPUs with the reader's NCCL",
    ),
    ("scalescope check", "checks this machine's GPUs"),
    (
        "scalescope bench collectives --ops all --sizes 8,128M,1G --nccl-lib /path/libnccl.so.2",
        "runs NCCL on this machine's GPUs with the reader's NCCL",
    ),
    (
        "scalescope bench collectives --algo nccl,ring,tree,host --sizes 64M..4G",
        "runs collectives on this machine's GPUs",
    ),
    (
        "scalescope fleet run --hosts gpu01,gpu02,gpu03 --out fleet-run/",
        "needs ssh hosts (tests/fleet_run.rs runs it through sshd on localhost)",
    ),
    (
        "scalescope fleet run --hosts-file hosts.txt --parallel 16 --remote-install --out fleet-run/",
        "needs ssh hosts (tests/fleet_run.rs runs it through sshd on localhost)",
    ),
    (
        "scalescope fleet run --hosts gpu01,gpu02 --ssh \"ssh -J bastion\" --catalog dgx-h100",
        "needs ssh hosts and a bastion (tests/fleet_run.rs runs it through sshd on localhost)",
    ),
    (
        "scalescope fleet report fleet-run/",
        "reads the folder of the fleet run above",
    ),
    (
        "scalescope check --quick --gpus 0,1",
        "checks this machine's GPUs",
    ),
    (
        "scalescope check --json check.json --csv check.csv",
        "checks this machine's GPUs",
    ),
    (
        "scalescope check --thresholds site.toml",
        "checks this machine's GPUs",
    ),
    ("scalescope check --soak 30m", "loads this machine's GPUs"),
    (
        "scalescope check --soak 2h --soak-load gemm,pcie",
        "loads this machine's GPUs",
    ),
    (
        "scalescope --bench --soak 1h --out run/",
        "loads this machine's GPUs",
    ),
    (
        "scalescope check --quick --json \"$out.json\" > \"$out.txt\" 2>&1",
        "a Slurm prolog: this machine's GPUs",
    ),
    ("scalescope watch", "watches this machine's GPUs"),
    (
        "scalescope watch --gpus 0,1 --interval 500ms --links --count 60",
        "watches this machine's GPUs",
    ),
    (
        "scalescope watch --record traffic.jsonl --csv traffic.csv",
        "watches this machine's GPUs",
    ),
    (
        "scalescope watch --prometheus 9400",
        "watches this machine's GPUs (and serves until Ctrl-C)",
    ),
    ("scalescope --remote gpu01 watch", "an ssh server"),
    ("scalescope --remote gpu01", "an ssh server and a display"),
    ("scalescope --remote me@gpu01 topo", "an ssh server"),
    (
        "scalescope --remote gpu01 --bench --out gpu01/",
        "an ssh server",
    ),
    (
        "scalescope --remote gpu01 check --json gpu01-check.json",
        "an ssh server",
    ),
    (
        "scalescope --remote gpu01 --ssh \"ssh -J bastion -p 2222\" bench bandwidth --gpus 0,1",
        "an ssh server behind a bastion",
    ),
    (
        "scalescope --remote gpu01 --remote-command \"/opt/scalescope/bin/scalescope agent\" topo",
        "an ssh server",
    ),
    (
        "scalescope --remote gpu01 --remote-install topo",
        "an ssh server",
    ),
    ("scalescope", "a display (the desktop app)"),
    ("scalescope topo", "this machine's GPUs"),
    (
        "scalescope topo --format csv --table gpus",
        "this machine's GPUs",
    ),
    ("scalescope bench bandwidth", "this machine's GPUs"),
    (
        "scalescope bench bandwidth --gpus 0,1 --tests p2p_read_ce,p2p_bidir_ce --sizes 4K..1G --csv bw.csv",
        "this machine's GPUs",
    ),
    (
        "scalescope bench bandwidth --pairs-per-link-kind --sizes 4K..1G",
        "this machine's GPUs",
    ),
    (
        "scalescope bench scaling --measure --workload resnet50 --workload gpt2-xl",
        "this machine's GPUs and PyTorch",
    ),
];

/// Exit codes other than 0 that a README line is meant to give.
const EXPECTED_EXIT: &[(&str, i32)] = &[
    // A machine as it runs with a Gen4 x8 link and two NVLinks down: the check fails it.
    ("scalescope check --catalog degraded.toml", 3),
    // Two different machines as a fleet: no majority for GPU model or count, both fail.
    ("scalescope fleet report h100/ h200/ --out fleet/", 3),
];

/// The commands of the README's `sh` blocks that start with `scalescope`, without their
/// trailing `#` comments.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(crate_file("README.md")).expect("README.md");
    let mut in_sh = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if in_sh && (t == "scalescope" || t.starts_with("scalescope ")) {
            out.push(without_comment(t).to_string());
        }
    }
    out
}

/// The command before a ` #` comment (the README quotes no `#` inside a command).
fn without_comment(line: &str) -> &str {
    line.split(" #").next().unwrap_or(line).trim()
}

/// A folder with every file the README's runnable lines name.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let copy = |from: &Path, to: &str| {
        let to = d.join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    };
    copy(&data("dgx-a100-topo-m.txt"), "capture.txt");
    copy(&data("h200-2x-device-smi-q.xml"), "smi-q.xml");
    copy(&data("h200-2x-device-topo-m.txt"), "topo-m.txt");
    copy(&data("h200-2x-device-nvlink-s.txt"), "nvlink-s.txt");
    copy(&data("h200-2x-device-nvlink-e.txt"), "nvlink-e.txt");
    copy(&data("soak-h100-5min.csv"), "soak.csv");
    // The reference tools' real outputs (tests/data/reference-tools) under the README's names.
    let tool = |f: &str| data(&format!("reference-tools/{f}"));
    copy(&tool("nvbandwidth-all.txt"), "nvbandwidth.txt");
    copy(&tool("nvbandwidth.json"), "nvbandwidth.json");
    copy(&tool("nccl-tests-all_reduce.json"), "all_reduce_perf.json");
    copy(&tool("nccl-tests-all_reduce.txt"), "all_reduce_perf.txt");
    copy(&tool("nvbandwidth-all.txt"), "node1/nvbandwidth.txt");
    copy(&tool("nvbandwidth-all.txt"), "node2/nvbandwidth.txt");
    copy(
        &tool("nccl-tests-all_reduce.txt"),
        "node2/all_reduce_perf.txt",
    );
    copy(&tool("nvbandwidth-all.txt"), "outputs/vm/nvbandwidth.txt");
    copy(
        &tool("nccl-tests-all_reduce.txt"),
        "outputs/vm/all_reduce_perf.txt",
    );
    copy(&data("watch-h100x2-nvlink.jsonl"), "traffic.jsonl");
    // Two reports to compare: the bundled examples stand in for the reader's own runs.
    copy(
        &crate_file("assets/reports/h200-2x-sxm-2026-11-22.json"),
        "h200/report.json",
    );
    copy(
        &crate_file("assets/reports/h200-8x-sxm-2026-11-22.json"),
        "h100/report.json",
    );
    std::fs::write(d.join("site.toml"), "pass = 0.9\nwarn = 0.75\n").unwrap();
    // The README's `[[state]]` example: a catalog machine with one link trained low and two
    // NVLinks down.
    let catalog = std::fs::read_to_string(crate_file("assets/hardware/h200-2x-sxm.toml"))
        .unwrap()
        .replace("id = \"h200-2x-sxm\"", "id = \"h200-2x-degraded\"");
    std::fs::write(
        d.join("degraded.toml"),
        format!(
            "{catalog}\n[[state]]\ngpus = [1]\npcie_current_gen = 4\npcie_current_width = 8\n\n\
             [[state]]\ngpus = [0]\nactive_nvlinks = 16\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn every_readme_command_is_run_or_says_why_not() {
    let commands = readme_commands();
    assert!(commands.len() > 30, "too few README commands: {commands:?}");
    for (listed, why) in NOT_RUN {
        assert!(
            commands.iter().any(|c| c == listed),
            "NOT_RUN lists `{listed}` ({why}), which the README no longer has"
        );
    }
    let dir = workspace();
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for cmd in &commands {
        if NOT_RUN.iter().any(|(c, _)| c == cmd) {
            continue;
        }
        let want = EXPECTED_EXIT
            .iter()
            .find(|(c, _)| c == cmd)
            .map_or(0, |&(_, code)| code);
        let start = Instant::now();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("CUDA_VISIBLE_DEVICES", "")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .expect("sh runs");
        let took = start.elapsed();
        assert_eq!(
            out.status.code(),
            Some(want),
            "README line `{cmd}` exited {:?} (want {want}; if it needs a GPU, ssh or a display, \
             list it in NOT_RUN with why): {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.stdout.is_empty() || want != 0,
            "README line `{cmd}` printed nothing"
        );
        assert!(
            took < Duration::from_secs(120),
            "README line `{cmd}` took {took:?}"
        );
        ran += 1;
    }
    assert!(ran >= 12, "only {ran} README lines ran");
    // The suite's files land where the README says.
    for f in ["report.json", "report.html", "links.csv"] {
        assert!(dir.path().join("dgx").join(f).is_file(), "dgx/{f} missing");
    }
    assert!(
        !dir.path().join("dgx/.scalescope.lock").exists(),
        "the lock file stays in --out after the run"
    );
}

/// The README puts `scalescope` on PATH before its first `scalescope` command and says how
/// long the first test run takes.
#[test]
fn readme_says_how_to_get_scalescope_on_path() {
    let text = std::fs::read_to_string(crate_file("README.md")).expect("README.md");
    let install = text
        .find("cargo install --locked --path .")
        .expect("README says cargo install --locked --path .");
    let first_use = text
        .find("```sh\nscalescope")
        .expect("a block of scalescope commands");
    assert!(
        install < first_use,
        "the install comes after the first command"
    );
    // The first test run's and build's durations as measured on a fresh 2-core clone (issue X:
    // "about 20 minutes" was 32).
    assert!(
        text.contains("on a fresh clone with 2 cores it took"),
        "first test run's duration"
    );
    assert!(!text.contains("about 20 minutes"), "the old figure");
}

/// The README's "Project layout" names, for each feature that spans folders, the one folder to
/// open first; that folder's module doc (`mod.rs`) names the feature and lists where the rest
/// lives, and every path it lists exists (issue W's newcomer test: a map that points nowhere
/// fails).
#[test]
fn the_project_layout_names_where_each_feature_starts() {
    let readme = std::fs::read_to_string(crate_file("README.md")).unwrap();
    let layout = &readme[readme
        .find("## Project layout")
        .expect("README has a Project layout section")..];
    for feature in ["soak", "watch", "energy and cost", "fleet"] {
        let row = layout
            .lines()
            .find(|l| l.starts_with(&format!("| {feature}")))
            .unwrap_or_else(|| panic!("Project layout names no folder for {feature}"));
        let first = row.split('`').nth(1).expect("a path in backticks");
        assert!(
            first.starts_with("src/") && first.ends_with('/'),
            "{feature}: the Project layout names {first}, not a folder of src/"
        );
        let module = format!("{first}mod.rs");
        let text = std::fs::read_to_string(crate_file(&module))
            .unwrap_or_else(|e| panic!("{feature}: {module}: {e}"));
        let doc: String = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            doc.to_lowercase().contains(feature),
            "{module}'s module doc does not name {feature}"
        );
        let listed: Vec<&str> = doc
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|p| (p.starts_with("src/") || p.starts_with("assets/")) && p.contains('.'))
            .collect();
        assert!(
            listed.len() >= 4,
            "{module}'s module doc lists {} files of {feature}: {listed:?}",
            listed.len()
        );
        for p in listed {
            assert!(
                crate_file(p).exists(),
                "{module} lists {p}, which does not exist"
            );
        }
    }
}

/// `scripts/run.sh` on a machine without a display says so at once and names the headless way
/// in, before any build (issue X: it built for 35 minutes, then exited "no display"); the
/// README says it before the command.
#[test]
fn run_sh_without_a_display_says_so_before_building() {
    let start = Instant::now();
    let out = std::process::Command::new("bash")
        .arg(crate_file("scripts/run.sh"))
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        // No cargo on its PATH: a build attempted anyway fails instead of taking minutes.
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("bash runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(start.elapsed() < Duration::from_secs(10), "{err}");
    for needle in ["no display", "--bench --modeled", "--no-default-features"] {
        assert!(err.contains(needle), "{needle:?}: {err}");
    }
    let readme = std::fs::read_to_string(crate_file("README.md")).expect("README.md");
    let before = readme.split("scripts/run.sh\n```").next().unwrap_or("");
    let setup = before.rsplit("## Set up and run").next().unwrap_or("");
    assert!(
        setup.contains("WAYLAND_DISPLAY") && setup.contains("--bench --modeled"),
        "README says nothing of the display before `scripts/run.sh`: {setup}"
    );
}
