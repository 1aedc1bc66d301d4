//! The Bandwidth view through egui_kittest: a snapshot of modeled results, and a run started from
//! the app on a catalog machine (the modeled backend, on a worker thread) that fills the view.

mod common;

use std::sync::atomic::AtomicBool;

use common::ui::{app_on_catalog_machine, app_on_example_report, step_until, view_harness};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::bench::modeled::{Assumptions, ModeledBackend};
use scalescope::bench::{Backend, BandwidthOptions, Plan, run_bandwidth};
use scalescope::model::{Source, TestId, Topology};
use scalescope::report::{BandwidthSection, Report};
use scalescope::topology::catalog;
use scalescope::ui::App;
use scalescope::ui::views::bandwidth::BandwidthView;

/// A report of `topo` holding a modeled run of `tests` at `sizes`.
fn modeled_run(topo: &Topology, tests: Vec<TestId>, sizes: Vec<u64>) -> Report {
    let (mut backend, warnings) = ModeledBackend::new(topo, Assumptions::default());
    let plan = Plan::new(
        topo,
        &BandwidthOptions {
            tests,
            sizes,
            ..Default::default()
        },
    )
    .unwrap();
    let out = run_bandwidth(
        topo,
        &plan,
        &mut backend,
        &AtomicBool::new(false),
        &mut |_, _| {},
    );
    let mut report = Report::new(scalescope::job::machine_info(topo, "test"), topo.clone());
    report.bandwidth = Some(BandwidthSection {
        source: Source::Modeled,
        backend: backend.describe(),
        results: out.results,
    });
    report.warnings = warnings;
    report
}

#[test]
fn snapshot_modeled_dgx_h100_sweep() {
    let topo = catalog::load("dgx-h100").unwrap();
    let report = modeled_run(
        &topo,
        vec![TestId::P2pWriteCe, TestId::H2d],
        vec![1 << 20, 64 << 20, 512 << 20],
    );
    let data = report.bandwidth.as_ref().unwrap();
    assert!(data.results.iter().all(|r| r.source == Source::Modeled));
    let mut view = BandwidthView::default();
    let mut harness = view_harness(egui::vec2(1400.0, 1300.0), move |ui| view.ui(ui, &report));
    harness.run();
    // The heatmaps label modeled cells with "~" and the view says MODELED.
    assert!(harness.query_by_label("MODELED").is_some());
    harness.snapshot("bandwidth_dgx_h100_modeled");
}

#[test]
fn running_from_the_app_fills_the_view_with_labeled_modeled_results() {
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    let mut harness = app_on_catalog_machine("NVIDIA DGX H100", "Bandwidth");
    harness.get_by_label("▶ Model this machine").click();
    // The worker thread runs the modeled backend; step frames until it reports back.
    step_until(&mut harness, 200, |app| {
        app.shown_report().unwrap().bandwidth.is_some()
            && !app.views().unwrap().bandwidth.panel().running()
    });
    let data = harness.state().shown_report().unwrap().bandwidth.as_ref();
    let data = data.expect("results arrived");
    assert!(!data.results.is_empty());
    assert!(data.results.iter().all(|r| r.source == Source::Modeled));
    assert!(data.backend.contains("modeled"), "{}", data.backend);
    // The summary lists every test that ran, each marked modeled.
    assert!(harness.query_all_by_label("p2p_read_ce").next().is_some());
    assert!(
        harness
            .query_all_by_label_contains("(modeled)")
            .next()
            .is_some()
    );
}

#[test]
fn bad_sizes_show_an_error_instead_of_running() {
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    let mut harness = app_on_catalog_machine("NVIDIA DGX H100", "Bandwidth");
    harness
        .state_mut()
        .views_mut()
        .unwrap()
        .bandwidth
        .set_sizes("12Q");
    harness.run();
    harness.get_by_label("▶ Model this machine").click();
    harness.run();
    assert!(harness.query_by_label_contains("Sizes:").is_some());
    assert!(!harness.state().views().unwrap().bandwidth.panel().running());
}

/// An opened report (here the bundled example, which the app opens on without a driver) shows
/// another machine: the view offers to model it, never to measure it on this machine's GPUs.
#[test]
fn a_report_is_modeled_not_measured_here() {
    let Some((harness, _)) = app_on_example_report("Bandwidth", egui::vec2(1400.0, 900.0)) else {
        return;
    };
    assert!(harness.query_by_label("▶ Model this machine").is_some());
    assert!(harness.query_by_label("▶ Run on this machine").is_none());
    // The example's measured results fill the view (its summary lists the tests it ran).
    assert!(harness.query_all_by_label("p2p_write_ce").next().is_some());
}

/// "Model this machine" on a measured report overlays the model beside the measured figures:
/// every measured row stays, the modeled run is kept apart (and says where its efficiencies
/// come from), and clearing the overlay leaves the measured rows as they were.
#[test]
fn modeling_a_report_keeps_its_measured_rows_and_adds_an_overlay() {
    let Some((mut harness, i)) = app_on_example_report("Bandwidth", egui::vec2(1400.0, 4000.0))
    else {
        return;
    };
    let view = |h: &Harness<'_, App>| {
        h.state().reports()[i]
            .report
            .bandwidth
            .as_ref()
            .expect("the example has bandwidth results")
            .results
            .clone()
    };
    fn view_of<'a>(h: &'a Harness<'_, App>, i: usize) -> &'a BandwidthView {
        &h.state().reports()[i].views().bandwidth
    }
    let before = view(&harness);
    assert!(before.iter().any(|r| r.source == Source::Measured));
    harness.get_by_label("▶ Model this machine").click();
    step_until(&mut harness, 500, |app| {
        let v = &app.reports()[i].views().bandwidth;
        v.panel().overlay().is_some() && !v.panel().running()
    });
    let after = view(&harness);
    assert_eq!(before.len(), after.len());
    assert_eq!(before, after, "the measured rows are untouched");
    let overlay = view_of(&harness, i)
        .panel()
        .overlay()
        .expect("the modeled overlay")
        .results
        .clone();
    assert!(!overlay.is_empty());
    assert!(overlay.iter().all(|r| r.source == Source::Modeled));
    assert!(
        harness
            .query_all_by_label_contains("MODELED OVERLAY")
            .next()
            .is_some()
    );
    harness.get_by_label("Clear overlay").click();
    harness.run();
    assert!(view_of(&harness, i).panel().overlay().is_none());
    assert_eq!(view(&harness), before);
}
