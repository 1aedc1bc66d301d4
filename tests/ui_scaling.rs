//! The Scaling view through egui_kittest: a snapshot of modeled plots, choosing workloads and
//! adding a custom one from the app, and the screenshots (ignored; run to regenerate).

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::scaling::RowSource;
use scalescope::scaling::workload;
use scalescope::topology::catalog;
use scalescope::ui::scaling_view::ScalingView;
use scalescope::ui::{App, Startup};

#[test]
fn snapshot_modeled_resnet50_on_dgx_h100() {
    let topo = catalog::load("dgx-h100").unwrap();
    let mut view = ScalingView::with_selection(&["resnet50"]);
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            egui::CentralPanel::default().show(ui, |ui| view.ui(ui, &topo));
        });
    harness.run();
    assert!(harness.query_by_label("MODELED").is_some());
    assert!(harness.query_by_label_contains("weak scaling").is_some());
    harness.snapshot("scaling_resnet50_dgx_h100");
}

#[test]
fn picking_workloads_and_adding_a_custom_one() {
    let app = App::new_with(Err("no NVIDIA driver found".into()), Startup::default());
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    harness.get_by_label("NVIDIA DGX H100").click();
    harness.run();
    harness.get_by_label("Scaling").click();
    harness.run();
    // Select a second workload: both are modeled, every row labeled modeled.
    harness.get_by_label("gpt2-xl").click();
    harness.run();
    let view = &harness.state().scaling;
    assert!(view.selected().contains("gpt2-xl") && view.selected().contains("resnet50"));
    let rows = view.rows();
    assert!(rows.iter().any(|r| r.workload == "gpt2-xl"));
    assert!(rows.iter().all(|r| r.source == RowSource::Modeled));
    // A custom workload with a bad number is refused with the field named.
    harness.state_mut().scaling.form.utilization = "2".into();
    harness.state_mut().scaling.add_from_form();
    harness.run();
    let err = harness.state().scaling.form.error.clone().unwrap();
    assert!(err.contains("utilization"), "{err}");
    // Fixed, it is added, selected and modeled.
    harness.state_mut().scaling.form.utilization = "0.5".into();
    harness.state_mut().scaling.add_from_form();
    harness.run();
    let view = &harness.state().scaling;
    assert!(view.selected().contains("my-model"));
    assert!(
        view.rows()
            .iter()
            .any(|r| r.workload == "my-model" && r.step_time_ms.is_some())
    );
}

/// Writes screenshots/scaling-<workload>.png for every catalog workload (each pattern has one),
/// on the catalog machine that suits it.
#[test]
#[ignore = "writes screenshots/; run with --ignored to regenerate"]
fn regenerate_scaling_screenshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots");
    for w in workload::catalog() {
        let machine = "dgx-h100";
        let topo = catalog::load(machine).unwrap();
        let name = w.name.clone();
        let mut view = ScalingView::with_selection(&[name.as_str()]);
        let png = scalescope::ui::snapshot::render_png(1400, 760, egui::Theme::Dark, move |ui| {
            view.ui(ui, &topo)
        })
        .unwrap();
        std::fs::write(dir.join(format!("scaling-{}.png", w.name)), png).unwrap();
    }
}
