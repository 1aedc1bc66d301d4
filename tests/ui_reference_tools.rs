//! The app opens the reference tools' outputs (nvbandwidth's text and JSON, nccl-tests' tables
//! and JSON files: the device's, tests/data/reference-tools/) through the import entry the
//! command line uses, from "Open nvidia-smi output…" (the path field standing in for the file
//! dialog): one machine whose Bandwidth and Collectives views draw the tools' figures, with
//! the check that judges them.

mod common;

use common::{data, ui::step_until};

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::model::{CollectiveOp, Source, TestId};
use scalescope::ui::{App, FileDialogs, SourceKey};

fn open(paths: &[&str]) -> Harness<'static, App> {
    let mut app = common::ui::app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1400.0))
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h.get_by_label("Open nvidia-smi output…").click();
    h.run();
    let typed: Vec<String> = paths
        .iter()
        .map(|p| data(&format!("reference-tools/{p}")).display().to_string())
        .collect();
    common::ui::enter_path(&mut h, &typed.join(";"));
    let opened = step_until(&mut h, 300, |app| {
        matches!(app.selected(), SourceKey::Imported(_)) || app.error().is_some()
    });
    assert!(opened, "nothing opened");
    assert!(h.state().error().is_none(), "{:?}", h.state().error());
    h
}

#[test]
fn the_app_opens_nvbandwidth_and_nccl_tests_outputs_as_one_machine() {
    let mut h = open(&[
        "nvbandwidth-all.txt",
        "nccl-tests-all_reduce.txt",
        "nccl-tests-all_gather.json",
    ]);
    let report = h
        .state()
        .shown_report()
        .expect("the imported machine")
        .clone();
    assert_eq!(report.topology.gpus.len(), 2);
    let bw = report.bandwidth.as_ref().expect("nvbandwidth's figures");
    assert_eq!(bw.source, Source::Measured);
    assert!(
        bw.backend.starts_with("imported: nvbandwidth v0.8"),
        "{}",
        bw.backend
    );
    assert!(bw.results.iter().any(|r| r.test == TestId::P2pReadCe));
    let coll = report.collectives.as_ref().expect("nccl-tests' figures");
    for op in [CollectiveOp::AllReduce, CollectiveOp::AllGather] {
        assert!(coll.results.iter().any(|r| r.op == op), "{op}");
    }
    assert!(report.health.is_some(), "the figures are checked");
    // The views draw them.
    h.get_by_label("Bandwidth").click();
    h.run();
    assert!(h.query_by_label_contains("p2p_read_ce").is_some());
    h.get_by_label("Collectives").click();
    h.run();
    assert!(h.query_by_label_contains("imported: nccl-tests").is_some());
}

#[test]
fn a_tools_json_file_opens_alone() {
    let h = open(&["nvbandwidth.json"]);
    let report = h.state().shown_report().unwrap();
    assert!(
        report
            .bandwidth
            .as_ref()
            .is_some_and(|b| !b.results.is_empty())
    );
    assert!(report.collectives.is_none());
}
