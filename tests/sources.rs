//! Every source is named for what it is, on the terminal and in the documents (issue 40, "Sources
//! mislabeled"): a soak replay is a replay of a soak.csv recording, never an import; GB200's
//! host copies unmodeled for want of an NVLink-C2C efficiency, not of captures.

mod common;

use common::{data_path, run};

/// `check --soak-replay` names its machine as the recording it is, on the terminal and in
/// `--json`, never as imported nvidia-smi text.
#[test]
fn a_soak_replay_is_named_a_soak_recording() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("check.json");
    let csv = data_path("soak-h100x2-2min.csv");
    let r = run(&[
        "check",
        "--soak-replay",
        &csv,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let head = r
        .stdout
        .lines()
        .find(|l| l.starts_with("scalescope check — "))
        .expect("the check's header line");
    assert_eq!(
        head,
        format!("scalescope check — {csv} (replay of a soak.csv recording) (2 GPUs)")
    );
    assert!(!r.stdout.contains("imported"), "{}", r.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        v["machine"],
        format!("{csv} (replay of a soak.csv recording)")
    );
}

/// GB200 NVL72's host copies are not modeled because NVLink-C2C has no reference efficiency
/// yet, and its note says so — not that captures are missing (it is a catalog entry).
#[test]
fn gb200_host_copies_blame_the_missing_c2c_efficiency() {
    let r = run(&["check", "--catalog", "gb200-nvl72"]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let note = r
        .stdout
        .lines()
        .find(|l| l.starts_with("note: not modeled (h2d, d2h)"))
        .unwrap_or_else(|| panic!("no note on h2d, d2h: {}", r.stdout));
    assert!(
        note.ends_with("no reference efficiency for host copies over NVLink-C2C (the GPUs' link to their CPU, not PCIe) yet"),
        "{note}"
    );
    assert!(!r.stdout.contains("captures"), "{}", r.stdout);
}
