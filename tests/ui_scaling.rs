//! The Scaling view through egui_kittest: a snapshot of modeled plots, choosing workloads and
//! adding a custom one from the app, and the screenshots (ignored; run to regenerate).

mod common;

use common::ui::{app_on_catalog_machine, view_harness};
use eframe::egui;
use egui_kittest::kittest::Queryable;
use scalescope::report::{Report, ScalingSection};
use scalescope::scaling::RowSource;
use scalescope::scaling::workload;
use scalescope::topology::catalog;
use scalescope::ui::App;
use scalescope::ui::views::scaling::ScalingView;

#[test]
fn snapshot_modeled_resnet50_on_dgx_h100() {
    let topo = catalog::load("dgx-h100").unwrap();
    let mut report = Report::new(scalescope::job::machine_info(&topo, "test"), topo);
    let mut view = ScalingView::with_selection(&["resnet50"]);
    let mut harness = view_harness(egui::vec2(1400.0, 900.0), move |ui| {
        view.ui(ui, &mut report)
    });
    harness.run();
    assert!(harness.query_by_label("MODELED").is_some());
    assert!(harness.query_by_label_contains("weak scaling").is_some());
    harness.snapshot("scaling_resnet50_dgx_h100");
}

#[test]
fn picking_workloads_and_adding_a_custom_one() {
    // Without a driver the app opens on the bundled example report; pick a catalog machine.
    let mut harness = app_on_catalog_machine("NVIDIA DGX H100", "Scaling");
    // Select a second workload: both are modeled, every row labeled modeled.
    harness.get_by_label("gpt2-xl").click();
    harness.run();
    let view = &harness.state().views().unwrap().scaling;
    assert!(view.selected().contains("gpt2-xl") && view.selected().contains("resnet50"));
    let rows = |app: &App| {
        app.shown_report()
            .unwrap()
            .scaling
            .clone()
            .unwrap()
            .run
            .rows
    };
    let rows = rows(harness.state());
    assert!(rows.iter().any(|r| r.workload == "gpt2-xl"));
    assert!(rows.iter().all(|r| r.source == RowSource::Modeled));
    // A custom workload with a bad number is refused with the field named.
    fn scaling(app: &mut App) -> &mut ScalingView {
        &mut app.views_mut().unwrap().scaling
    }
    scaling(harness.state_mut()).form.utilization = "2".into();
    scaling(harness.state_mut()).add_from_form();
    harness.run();
    let err = scaling(harness.state_mut()).form.error.clone().unwrap();
    assert!(err.contains("utilization"), "{err}");
    // Fixed, it is added, selected and modeled.
    scaling(harness.state_mut()).form.utilization = "0.5".into();
    scaling(harness.state_mut()).add_from_form();
    harness.run();
    let view = &harness.state().views().unwrap().scaling;
    assert!(view.selected().contains("my-model"));
    let section = harness.state().shown_report().unwrap().scaling.as_ref();
    assert!(
        section
            .unwrap()
            .run
            .rows
            .iter()
            .any(|r| r.workload == "my-model" && r.step_time_ms.is_some())
    );
}

/// A rack of 72 GPUs in one NVLink domain is modeled and drawn to its own 72, not cut at the
/// view's default of 64.
#[test]
fn a_rack_is_modeled_to_its_own_gpu_count() {
    let harness = app_on_catalog_machine("NVIDIA GB200 NVL72", "Scaling");
    let rows = harness
        .state()
        .shown_report()
        .unwrap()
        .scaling
        .clone()
        .unwrap()
        .run
        .rows;
    // With the default of 64 the rows stopped at 64 GPUs, one short of the rack.
    assert!(
        rows.iter().any(|r| r.n_gpus == 72 && !r.projected),
        "no 72-GPU row"
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
        let mut report = Report::new(scalescope::job::machine_info(&topo, "app"), topo);
        let png = scalescope::ui::snapshot::render_png(1400, 760, egui::Theme::Dark, move |ui| {
            view.ui(ui, &mut report)
        })
        .unwrap();
        std::fs::write(dir.join(format!("scaling-{}.png", w.name)), png).unwrap();
    }
}

/// A run as `bench scaling --measure` makes it on 2× H200: real framework rows at 1 and 2 GPUs
/// beside the model calibrated by the 1-GPU step, speedup on a log scale and the table under
/// the plots with measured, modeled and the error.
#[test]
fn snapshot_framework_rows_beside_the_calibrated_model() {
    use scalescope::scaling::calibrate::{MeasuredStep, UnderDdp};
    use scalescope::scaling::run::ScalingRun;
    use scalescope::scaling::table::attach_errors;
    use scalescope::scaling::{Machine, Mode, ScalingPoint, model};

    let topo = catalog::load("h200-2x-sxm").unwrap();
    let w = workload::resolve("gpt2-xl").unwrap();
    let mut m = Machine::modeled(&topo);
    m.framework_steps = vec![MeasuredStep {
        workload: w.name.clone(),
        mode: Mode::Weak,
        per_gpu_batch: 8.0,
        step_ms: 380.0,
        optimizer_ms: 12.5,
        samples_ms: vec![379.0, 380.0, 381.0, 382.0, 380.5],
        matrix_share: Some(0.42),
        matrix_ms: None,
        other_ms: None,
        host_ms: None,
        host_probe_us: None,
        accumulate: None,
        // Timed under DDP on a group of one beside the plain step: its own row.
        wrapper_ms: Some(24.1),
        under_ddp: UnderDdp::new(Some(404.2), Some(380.1), Some(9.0)),
        basis: "test".into(),
    }];
    let mut rows = model(&w, &m, &Mode::ALL, 64);
    for (mode, n, per, ms) in [
        (Mode::Weak, 1, 8.0, 380.0),
        (Mode::Weak, 2, 8.0, 396.0),
        (Mode::Strong, 1, 64.0, 2985.0),
        (Mode::Strong, 2, 32.0, 1510.0),
    ] {
        let mut r = ScalingPoint::empty(&w, mode, RowSource::Framework, n);
        r.per_gpu_batch = per;
        r.global_batch = per * n as f64;
        // As the script reports them: micro-batches of 8, accumulated in strong scaling.
        r.micro_batch = Some(8.0);
        r.accumulate = Some((per / 8.0) as u64);
        r.step_time_ms = Some(ms);
        r.throughput = Some(r.global_batch / (ms * 1e-3));
        r.memory_gib_per_gpu = Some(89.7);
        r.fits = Some(true);
        rows.push(r);
    }
    scalescope::scaling::table::fill_speedup(&mut rows);
    attach_errors(&mut rows);
    let run = ScalingRun {
        machine: Some(m),
        workloads: vec![w],
        rows,
        ..Default::default()
    };
    let mut report = Report::new(scalescope::job::machine_info(&topo, "test"), topo);
    report.scaling = Some(ScalingSection {
        source: scalescope::model::Source::Measured,
        run,
    });
    let mut view = ScalingView::for_report(&report, 1);
    let mut harness = view_harness(egui::vec2(1400.0, 900.0), move |ui| {
        view.ui(ui, &mut report)
    });
    harness.run();
    assert!(harness.query_by_label("step ms meas.").is_some());
    assert!(harness.query_by_label("396.0").is_some());
    // The step under DDP at one GPU, below the plain one, with what the wrapper costs.
    assert!(
        harness
            .query_by_label("1 under DDP: +6.3 % vs the plain 380.1 ms beside it")
            .is_some()
    );
    assert!(harness.query_by_label("404.2").is_some());
    harness.snapshot("scaling_gpt2xl_framework_h200");
}
