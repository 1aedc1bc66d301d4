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
use scalescope::model::{CollectiveOp, GpuSelection, Source};
use scalescope::report::{CollectivesSection, Report};
use scalescope::topology::catalog;
use scalescope::ui::App;
use scalescope::ui::views::collectives::CollectivesView;

#[test]
fn snapshot_modeled_all_reduce_and_all_gather() {
    let topo = catalog::load("hgx-a100").unwrap();
    let opts = CollectiveOptions {
        gpus: GpuSelection::new(vec![0, 1, 2, 3, 4, 5, 6, 7]).unwrap(),
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
    let mut harness = view_harness(egui::vec2(1400.0, 1000.0), move |ui| view.ui(ui, &report));
    harness.run();
    assert!(harness.query_by_label("MODELED").is_some());
    harness.snapshot("collectives_hgx_a100_modeled");
}

#[test]
fn running_from_the_app_models_nccl_on_a_catalog_machine() {
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    let mut harness = app_on_catalog_machine("NVIDIA DGX H100", "Collectives");
    // A catalog entry cannot be run: the empty view names the button it has.
    assert!(
        harness
            .query_by_label_contains("then Model this machine.")
            .is_some()
    );
    harness.get_by_label("▶ Model this machine").click();
    step_until(&mut harness, 300, |app| {
        !app.views().unwrap().collectives.panel().running()
            && app.shown_report().unwrap().collectives.is_some()
    });
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
    let Some((mut harness, i)) = app_on_example_report("Collectives", egui::vec2(1400.0, 4000.0))
    else {
        return;
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
    step_until(&mut harness, 500, |app| {
        let v = &app.reports()[i].views().collectives;
        v.modeled_overlay() > 0 && !v.panel().running()
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
            .views()
            .collectives
            .modeled_overlay(),
        modeled
    );
}

/// The example report the app opens on (2× H200) is listed beside the HGX H200's published
/// all-reduce figures, each with its source, and hovering an item shows ours beside it and what
/// differs; they were taken on 8 GPUs, so none is a line on its plot of 2 (they were, above its
/// line rate).
#[test]
fn published_figures_are_marked_and_listed_with_their_sources() {
    let Some((mut harness, _)) = app_on_example_report("Collectives", egui::vec2(1400.0, 4000.0))
    else {
        return;
    };
    assert!(
        harness
            .query_by_label_contains("published all_reduce busbw 480.0 GB/s")
            .is_none(),
        "an 8-GPU figure drawn on a 2-GPU plot"
    );
    harness
        .get_by_label("Published figures (3; drawn where taken at this run's GPU count)")
        .click();
    harness.run();
    assert!(
        harness
            .query_by_label_contains("480.0 GB/s measured (8 GPUs)")
            .is_some()
    );
    let item = harness
        .get_by_label_contains("Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md");
    item.hover();
    // Tooltips wait half a second by default; the harness's frames are shorter.
    harness
        .ctx
        .all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    for _ in 0..5 {
        harness.step();
    }
    assert!(
        harness
            .query_by_label_contains("NVLS on there, not known here")
            .is_some()
    );
}

/// The 1× H200 example's collectives were all waived (one GPU): the view says so, with the
/// reason the report holds, in place of plots with nothing to draw.
#[test]
fn a_run_where_nothing_ran_says_why() {
    let Some((mut harness, _)) = app_on_example_report("Collectives", egui::vec2(1400.0, 1200.0))
    else {
        return;
    };
    harness.get_by_label("1× H200 · vm · 2026-11-28").click();
    harness.run();
    assert!(
        harness
            .query_by_label_contains(
                "None of the 232 results ran: a collective needs at least two GPUs"
            )
            .is_some()
    );
    assert!(
        harness
            .query_by_label("Bus bandwidth (GB/s) vs size")
            .is_none(),
        "no empty plot where nothing ran"
    );
    assert!(
        harness
            .query_by_label_contains("Table (232 rows)")
            .is_some()
    );
}
