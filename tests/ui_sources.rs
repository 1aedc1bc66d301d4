//! The app names what it shows for what it is (issue 40, "Sources mislabeled"), through
//! egui_kittest: a recording replayed is a replay of its file (its topology says `live`, on the
//! host it was recorded on), never that host "measured live"; the Fleet view's top bar names
//! the fleet, not the source selected under it; a modeled report is badged modeled, "modeled
//! for" its catalog entry, never "measured on".
#![cfg(feature = "gui")]

mod common;

use common::ui::{app, app_harness};
use egui_kittest::kittest::Queryable;
use scalescope::job::Stage;
use scalescope::model::TopologySource;
use scalescope::model::traffic::{TrafficRecording, parse_recording};
use scalescope::ui::{App, SourceKey, Startup, View};

/// Recorded by `watch --record` on an H200 VM whose host name is `vm`.
const RECORDING: &str = "watch-h100x2-nvlink.jsonl";
const REPLAY: &str = "replay of watch-h100x2-nvlink.jsonl, recorded 2026-11-26T19:16:14Z on vm";

fn recording() -> TrafficRecording {
    parse_recording(&common::read_data(RECORDING)).expect("the test recording parses")
}

/// The app on a machine read live whose host is also called `vm` (as in the issue: the
/// recording's machine and this one share a name).
fn app_on_vm() -> App {
    let mut t = recording().header.topology;
    t.source = TopologySource::Live {
        hostname: Some("vm".into()),
        driver_version: None,
        nvml_version: None,
        cuda_driver_version: None,
    };
    App::new_with(Ok(t), Startup::default())
}

/// A recording opened in the app: the top bar says it is a replay of that file, from where and
/// when it was recorded; nothing on screen says "measured live"; this machine still is.
#[test]
fn a_replayed_recording_is_named_a_replay_of_its_file() {
    let mut app = app_on_vm();
    assert_eq!(app.shown_label().as_deref(), Some("vm (measured live)"));
    app.open_recording(recording(), RECORDING);
    let mut h = app_harness(app);
    h.run();
    assert!(matches!(h.state().selected(), SourceKey::Imported(_)));
    assert_eq!(h.state().shown_label().as_deref(), Some(REPLAY));
    // The top bar's label, whole; the Live bar's status begins with the same words.
    assert!(h.query_by_label(REPLAY).is_some());
    assert!(h.query_by_label_contains("measured live").is_none());
    // A recording, not an import: the Sources list's badge and the Topology view header's.
    assert_eq!(h.query_all_by_label("RECORDING").count(), 2);
    assert!(h.query_by_label("IMPORTED").is_none());
    // Back on this machine, the label is its own again.
    h.get_by_label("This machine").click();
    h.run();
    assert_eq!(
        h.state().shown_label().as_deref(),
        Some("vm (measured live)")
    );
}

/// With a fleet open, its view's top bar names the fleet (its nodes, folder, and that they are
/// modeled), whatever is selected under it — here a recording; the other views name the
/// selection again.
#[test]
fn the_fleet_view_names_the_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("rack-a");
    common::fleet::write_nodes(&fleet, 4, |_, _| {});
    let mut app = App::new_with(
        Err("no NVIDIA driver found".into()),
        Startup {
            report_paths: vec![fleet.clone()],
            ..Default::default()
        },
    );
    app.open_recording(recording(), RECORDING);
    let mut h = app_harness(app);
    h.run();
    h.get_by_label("Fleet").click();
    h.run();
    assert_eq!(h.state().settings().view, View::Fleet);
    let label = "fleet of 4 node reports in rack-a (modeled)";
    assert_eq!(h.state().shown_label().as_deref(), Some(label));
    assert!(h.query_by_label(label).is_some());
    assert!(h.query_by_label_contains("replay of").is_none());
    assert!(h.query_by_label_contains("measured live").is_none());
    // The fleet's verdict says it is modeled, as the terminal's does.
    assert!(h.query_by_label("PASS (MODELED)").is_some());
    h.get_by_label("Topology").click();
    h.run();
    assert_eq!(h.state().shown_label().as_deref(), Some(REPLAY));
}

/// A modeled `--suite topology,health` report of a catalog machine, opened: badged modeled
/// (in the Sources list and the Topology view's header), "modeled for" the catalog entry,
/// never "measured on" nor a report file's badge.
#[test]
fn a_modeled_report_is_never_measured_on() {
    let report = common::modeled_stages("h200-2x-sxm", vec![Stage::Topology, Stage::Health]);
    assert!(report.bandwidth.is_none() && report.collectives.is_none());
    let mut app = app();
    app.open_reports(vec![report]);
    let mut h = app_harness(app);
    h.run();
    h.get_by_label("Topology").click();
    h.run();
    let words = h
        .query_all_by_label_contains("modeled for 2× H200 SXM 141 GB")
        .count();
    assert_eq!(words, 1, "the header's line");
    assert!(
        h.query_by_label_contains("catalog entry h200-2x-sxm")
            .is_some()
    );
    assert!(h.query_by_label_contains("measured on").is_none());
    assert!(h.query_by_label("REPORT FILE").is_none());
    // Two MODELED badges: the Sources list's and the header's.
    assert_eq!(h.query_all_by_label("MODELED").count(), 2);
}
