//! The Collectives view through egui_kittest: a snapshot of modeled NCCL curves on a catalog
//! machine, and a run started from the app that fills the view with labeled modeled rows.

use std::sync::atomic::AtomicBool;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::bench::collectives::{
    CollectiveBackend, CollectiveOptions, ModeledCollectives, plan, run_collectives,
};
use scalescope::model::{CollectiveOp, Source};
use scalescope::report::{CollectivesSection, Report};
use scalescope::topology::catalog;
use scalescope::ui::collectives_view::CollectivesView;
use scalescope::ui::{App, Startup};

#[test]
fn snapshot_modeled_all_reduce_and_all_gather() {
    let topo = catalog::load("hgx-a100").unwrap();
    let opts = CollectiveOptions {
        gpus: vec![0, 1, 2, 3, 4, 5, 6, 7],
        ops: vec![CollectiveOp::AllReduce, CollectiveOp::AllGather],
        sizes: (10..=30).step_by(2).map(|p| 1u64 << p).collect(),
        ..Default::default()
    };
    let (_, cases) = plan(&topo, &opts).unwrap();
    let mut backend = ModeledCollectives::new(&topo);
    let (results, _) = run_collectives(
        &cases,
        &mut backend,
        &AtomicBool::new(false),
        &mut Vec::new(),
        &mut |_, _, _| {},
    );
    assert!(results.iter().all(|r| r.source == Source::Modeled));
    let mut report = Report::new(scalescope::job::machine_info(&topo, "test"), topo.clone());
    report.collectives = Some(CollectivesSection {
        source: Source::Modeled,
        backend: backend.describe(),
        results,
    });
    let mut view = CollectivesView::default();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            egui::CentralPanel::default().show(ui, |ui| view.ui(ui, &report));
        });
    harness.run();
    assert!(harness.query_by_label("MODELED").is_some());
    harness.snapshot("collectives_hgx_a100_modeled");
}

#[test]
fn running_from_the_app_models_nccl_on_a_catalog_machine() {
    let app = App::new_with(Err("no NVIDIA driver found".into()), Startup::default());
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    harness.get_by_label("NVIDIA DGX H100").click();
    harness.run();
    harness.get_by_label("Collectives").click();
    harness.run();
    harness.get_by_label("▶ Model this machine").click();
    for _ in 0..300 {
        harness.step();
        let app = harness.state();
        if !app.views().unwrap().collectives.panel().running()
            && app.shown_report().unwrap().collectives.is_some()
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
    let data = harness.state().shown_report().unwrap().collectives.as_ref();
    let data = data.expect("results arrived");
    assert!(!data.results.is_empty());
    assert!(
        data.results
            .iter()
            .all(|r| r.source == Source::Modeled && r.op == CollectiveOp::AllReduce)
    );
    // The table lists the op and marks rows modeled.
    assert!(harness.query_all_by_label("all_reduce").next().is_some());
    assert!(harness.query_all_by_label("modeled").next().is_some());
}

/// "Model this machine" on a measured report adds the model's series beside the measured ones
/// (dashed, named "(modeled)") and keeps every measured row.
#[test]
fn modeling_a_report_keeps_its_measured_rows_and_adds_modeled_series() {
    if scalescope::report::bundled::reports().is_empty() {
        return;
    }
    let app = App::new_with(Err("no NVIDIA driver found".into()), Startup::default());
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 4000.0))
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    harness.get_by_label("Collectives").click();
    harness.run();
    let i = match harness.state().selected() {
        scalescope::ui::SourceKey::Report(i) => *i,
        other => panic!("opens on {other:?}, not the example"),
    };
    // The report's rows, then the model's drawn beside them.
    let rows = |h: &Harness<'_, App>| {
        let e = &h.state().reports()[i];
        let shown = e.report.collectives.as_ref();
        let overlay = e.views().collectives.panel().overlay();
        let mut rows = shown.expect("the example has collectives").results.clone();
        rows.extend(overlay.iter().flat_map(|o| o.results.iter().cloned()));
        rows
    };
    let before = rows(&harness);
    assert!(before.iter().all(|r| r.source == Source::Measured));
    harness.get_by_label("▶ Model this machine").click();
    for _ in 0..500 {
        harness.step();
        let v = &harness.state().reports()[i].views().collectives;
        if v.modeled_overlay() > 0 && !v.panel().running() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
    let after = rows(&harness);
    let measured: Vec<_> = after
        .iter()
        .filter(|r| r.source == Source::Measured)
        .cloned()
        .collect();
    assert_eq!(measured, before, "every measured row is kept, unchanged");
    let modeled = after.len() - measured.len();
    assert!(modeled > 0, "the model's series are added");
    assert_eq!(
        harness.state().reports()[i]
            .views()
            .collectives
            .modeled_overlay(),
        modeled
    );
}
