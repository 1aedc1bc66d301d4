//! Every source is named for what it is, on the terminal and in the documents (issue 40, "Sources
//! mislabeled"): a soak replay is a replay of a soak.csv recording, never an import; a modeled
//! report never "measured on"; a fleet of modeled nodes `FAIL (modeled)` in fleet.html and
//! fleet.png as on the terminal (and a fleet failed by a measured node plain `FAIL`); GB200's
//! host copies unmodeled for want of an NVLink-C2C efficiency, not of captures. (The app's
//! words are tests/ui_sources.rs.)

mod common;

use std::path::Path;

use common::fleet::{slow_gpu, write_nodes};
use common::{data_path, run};
use scalescope::document::{Block, Document};
use scalescope::fleet::files::{Scope, document};
use scalescope::fleet::read_and_judge;
use scalescope::health::Thresholds;
use scalescope::model::Source;

/// `check --soak-replay` names its machine as the recording it is, on the terminal and in
/// `--json`, never as imported nvidia-smi output.
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

/// A modeled `--suite topology,health` report's documents say it is the catalog entry's,
/// documented and modeled: never "measured on".
#[test]
fn a_modeled_report_is_never_measured_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--suite",
        "topology,health",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("measured on"),
        "report.html says measured on"
    );
    assert!(html.contains("(catalog entry, not measured)"));
    assert!(html.contains("health modeled"));
}

/// The verdict word of a fleet document's head (`FAIL`, `FAIL (modeled)`).
fn verdict_word(d: &Document) -> &str {
    d.sections
        .iter()
        .flat_map(|s| &s.blocks)
        .find_map(|b| match b {
            Block::Verdict { word, .. } => Some(word.as_str()),
            _ => None,
        })
        .expect("a verdict block")
}

/// `fleet report` over `nodes`: the terminal's verdict line, fleet.html, and the verdict of
/// the one-page document fleet.png is typeset from.
fn fleet_words(nodes: &Path, out: &Path) -> (String, String, String) {
    let r = run(&[
        "fleet",
        "report",
        nodes.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("verdict: "))
        .expect("a verdict line")
        .to_string();
    let html = std::fs::read_to_string(out.join("fleet.html")).unwrap();
    let outcome = read_and_judge(&[nodes.to_path_buf()], &Thresholds::default()).unwrap();
    let png = verdict_word(&document(&outcome, Scope::OnePage)).to_string();
    (line, html, png)
}

/// A fleet of modeled nodes that fails is `FAIL (modeled)` on the terminal, in fleet.html (the
/// head, and every node's verdict and own check) and on fleet.png's page; one failed by a measured node is `FAIL`
/// in all three, its modeled nodes still `(modeled)` in their rows.
#[test]
fn fleet_documents_say_modeled_as_the_terminal_does() {
    let dir = tempfile::tempdir().unwrap();
    let modeled = dir.path().join("modeled");
    write_nodes(&modeled, 8, |i, r| {
        if i == 3 {
            slow_gpu(r, 3, 0.5);
        }
    });
    let (line, html, png) = fleet_words(&modeled, &dir.path().join("out-modeled"));
    assert!(
        line.starts_with("verdict: FAIL (modeled) — 8 nodes"),
        "{line}"
    );
    assert_eq!(png, "FAIL (modeled)");
    assert!(html.contains(">FAIL (modeled)<"), "the head's pill");
    assert!(html.contains(">PASS (modeled)<"), "a passing node's row");
    // Every node's verdict and own check is modeled: no bare PASS (a finding's FAIL is its
    // own, bare as on the terminal's finding lines).
    assert!(!html.contains(">PASS<"));

    let mixed = dir.path().join("mixed");
    write_nodes(&mixed, 8, |i, r| {
        if i == 3 {
            slow_gpu(r, 3, 0.5);
            r.health.as_mut().unwrap().source = Source::Measured;
        }
    });
    let (line, html, png) = fleet_words(&mixed, &dir.path().join("out-mixed"));
    assert!(line.starts_with("verdict: FAIL — 8 nodes"), "{line}");
    assert_eq!(png, "FAIL");
    assert!(!html.contains(">FAIL (modeled)<"));
    assert!(html.contains(">PASS (modeled)<"));
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
