//! The app names what it shows for what it is (issue 40, "Sources mislabeled"), through
//! egui_kittest: a modeled report is badged modeled, "modeled for" its catalog entry, never
//! "measured on".
#![cfg(feature = "gui")]

mod common;

use common::ui::{app, app_harness};
use egui_kittest::kittest::Queryable;
use scalescope::job::Stage;

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
