//! The Collectives view through egui_kittest: a snapshot of modeled NCCL curves on a catalog
//! machine, and a run started from the app that fills the view with labeled modeled rows.

mod common;

use std::sync::atomic::AtomicBool;

use common::ui::{app_on_catalog_machine, app_on_example_report, step_until, view_harness};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::bench::collectives::{
    CollectiveBackend, CollectiveOptions, ModeledCollectives, plan, run_collectives,
};
use scalescope::model::{CollectiveOp, Source};
use scalescope::topology::catalog;
use scalescope::ui::App;
use scalescope::ui::collectives_view::{CollectivesRunData, CollectivesView};

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
    let data = CollectivesRunData {
        results,
        warnings: Vec::new(),
        backend: backend.describe(),
    };
    let mut view = CollectivesView::with_results(&topo, data);
    let mut harness = view_harness(egui::vec2(1400.0, 1000.0), move |ui| view.ui(ui, &topo));
    harness.run();
    assert!(harness.query_by_label("MODELED").is_some());
    harness.snapshot("collectives_hgx_a100_modeled");
}

#[test]
fn running_from_the_app_models_nccl_on_a_catalog_machine() {
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    let mut harness = app_on_catalog_machine("NVIDIA DGX H100", "Collectives");
    harness.get_by_label("▶ Model this machine").click();
    step_until(&mut harness, 300, |app| {
        !app.collectives.running() && app.collectives.data().is_some()
    });
    let data = harness.state().collectives.data().expect("results arrived");
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
    let Some((mut harness, i)) = app_on_example_report("Collectives", egui::vec2(1400.0, 4000.0))
    else {
        return;
    };
    let rows = |h: &Harness<'_, App>| {
        h.state().reports()[i]
            .collectives()
            .expect("the example has collectives")
            .data()
            .expect("rows")
            .results
            .clone()
    };
    let before = rows(&harness);
    assert!(before.iter().all(|r| r.source == Source::Measured));
    harness.get_by_label("▶ Model this machine").click();
    step_until(&mut harness, 500, |app| {
        let v = app.reports()[i].collectives().unwrap();
        v.modeled_overlay() > 0 && !v.running()
    });
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
            .collectives()
            .unwrap()
            .modeled_overlay(),
        modeled
    );
}
