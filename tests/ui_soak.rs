//! The Soak view through egui_kittest: a snapshot of a two-GPU soak with a throughput dip, a
//! wrong GEMM result and phase changes, with its soak_* verdict; odd sections (no power read,
//! nothing read, non-finite times) drawn without a panic; and the Soak tab shown only where a
//! report holds a soak.
//!
//! Snapshots live in tests/snapshots/; after a deliberate change run
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui_soak` and look at the new PNGs.

mod common;

use common::ui::{app, app_harness, view_harness};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use scalescope::health::soak::SoakRule;
use scalescope::health::{Check, CheckId, Evidence, HealthReport, Subject, Thresholds, Verdict};
use scalescope::model::{
    SoakEvent, SoakEventKind, SoakLoad, SoakSample, SoakSection, Source, Topology,
};
use scalescope::report::Report;
use scalescope::ui::View;
use scalescope::ui::views::soak::SoakView;

/// The load running at `t` seconds of the test soak: GEMM for four minutes, then half a minute
/// each of device-memory and host copies.
fn phase(t: f64) -> SoakLoad {
    match t {
        t if t <= 240.0 => SoakLoad::Gemm,
        t if t <= 270.0 => SoakLoad::Memory,
        _ => SoakLoad::Pcie,
    }
}

/// Two GPUs × 300 one-second samples. GPU 1 dips from 700 to 450 TFLOP/s (and its clock from
/// 1,980 to 1,410 MHz) between 120 and 150 s; GPU 0's power was not read for five seconds; one
/// wrong GEMM result on GPU 1 at 200 s.
fn two_gpu_soak() -> SoakSection {
    let mut samples = Vec::new();
    for i in 1..=300 {
        let t = f64::from(i);
        let load = phase(t);
        for gpu in 0..2 {
            // A small deterministic wobble, different per GPU, so the lines do not coincide.
            let wobble =
                ((t * 0.37 + gpu as f64 * 1.3).sin() * 0.6 + (t * 0.051).cos() * 0.4) * 0.01;
            let dip = gpu == 1 && t > 120.0 && t <= 150.0;
            let rate = match load {
                SoakLoad::Gemm if dip => 450.0,
                SoakLoad::Gemm => 700.0 - 4.0 * gpu as f64,
                SoakLoad::Memory => 2_900.0,
                _ => 48.0,
            } * (1.0 + wobble);
            let power = match load {
                SoakLoad::Gemm if dip => 520.0,
                SoakLoad::Gemm => 690.0,
                SoakLoad::Memory => 480.0,
                _ => 260.0,
            } * (1.0 + wobble);
            let warm = 1.0 - (-t / 90.0).exp();
            samples.push(SoakSample {
                t_s: t,
                gpu,
                phase: Some(load),
                rate: Some(rate),
                sm_clock_mhz: Some(if dip { 1_410 } else { 1_980 - 15 * gpu as u32 }),
                mem_clock_mhz: Some(2_619),
                power_w: (gpu != 0 || !(90.0..95.0).contains(&t)).then_some(power),
                gpu_temp_c: Some(34.0 + 30.0 * warm + 3.0 * gpu as f64),
                mem_temp_c: Some(38.0 + 34.0 * warm + 2.0 * gpu as f64),
                fan_percent: None,
                util_percent: Some(100),
                checked: (load == SoakLoad::Gemm).then_some(4),
                mismatches: (load == SoakLoad::Gemm).then_some(u64::from(gpu == 1 && i == 200)),
                ..Default::default()
            });
        }
    }
    let phase_event = |t: f64, load: SoakLoad| SoakEvent {
        t_s: t,
        gpu: None,
        kind: SoakEventKind::Phase { load },
        text: format!("{load} phase began"),
    };
    SoakSection {
        duration_s: 300.0,
        elapsed_s: 300.0,
        interval_s: 1.0,
        loads: vec![SoakLoad::Gemm, SoakLoad::Memory, SoakLoad::Pcie],
        gpus: vec![0, 1],
        gemm: Some("cuBLAS GemmEx bf16 8192³, fp32 accumulate; every product compared with the GPU's first".into()),
        samples,
        events: vec![
            phase_event(0.0, SoakLoad::Gemm),
            SoakEvent {
                t_s: 200.0,
                gpu: Some(1),
                kind: SoakEventKind::Mismatch {
                    row: 12,
                    col: 4_087,
                    got: 0x3f81,
                    expected: 0x3f80,
                    wrong: 1,
                    against: "this GPU's first product".into(),
                },
                text: "1 element wrong: (12, 4087) 0x3f81, expected 0x3f80".into(),
            },
            phase_event(240.0, SoakLoad::Memory),
            phase_event(270.0, SoakLoad::Pcie),
        ],
        finished: true,
        // Not a replay.
        ..Default::default()
    }
}

/// The soak's verdict as the health report holds it, and a check of another kind that the
/// Soak view leaves to the Topology view.
fn verdict(topo: &Topology) -> HealthReport {
    let check = |rule, subject, verdict, detail: &str| {
        Check::new(
            CheckId::Soak(rule),
            subject,
            verdict,
            Source::Measured,
            detail,
        )
    };
    let checks = vec![
        check(
            SoakRule::Correctness,
            Subject::Gpu(1),
            Verdict::Fail,
            "1 wrong GEMM result of 960 checked, at 3:20",
        )
        .because_text(
            "the GPU computed a wrong result under load (memory or SM fault)".into(),
            "rerun the soak; if it repeats, take the GPU out of service and ask the vendor",
        ),
        check(
            SoakRule::Jitter,
            Subject::Gpu(1),
            Verdict::Warn,
            "gemm dipped to 450 TFLOP/s (64 % of its median 700) from 2:00 to 2:30",
        )
        .because_text(
            "clocks fell (1,410 MHz) while the GPU was not at its power limit".into(),
            "look at the SM clock and throttle reasons over that window",
        ),
        check(
            SoakRule::Xid,
            Subject::Machine,
            Verdict::Pass,
            "no Xid events",
        ),
        check(
            SoakRule::Temperature,
            Subject::Machine,
            Verdict::Pass,
            "GPU 64–67 °C, memory 72–74 °C at the end; 3 °C apart",
        ),
        Check::new(
            CheckId::PcieLink,
            Subject::Gpu(0),
            Verdict::Pass,
            Source::Measured,
            "PCIe Gen5 x16 under load",
        ),
    ];
    let evidence = Evidence {
        before: None,
        after: None,
        load: None,
    };
    HealthReport::new(
        topo,
        Source::Measured,
        checks,
        Thresholds::default(),
        evidence,
        Vec::new(),
    )
}

fn report_with(soak: SoakSection) -> Report {
    let topo = common::two_gpus();
    let mut report = Report::new(scalescope::job::machine_info(&topo, "test"), topo.clone());
    report.health = Some(verdict(&topo));
    report.soak = Some(soak);
    report
}

#[test]
fn snapshot_two_gpus_with_a_dip_and_a_wrong_result() {
    let report = report_with(two_gpu_soak());
    let mut view = SoakView::default();
    let mut harness = view_harness(egui::vec2(1400.0, 1320.0), move |ui| view.ui(ui, &report));
    harness.run();
    // The header, the soak_* checks (not the PCIe one), the event.
    assert!(harness.query_by_label("FINISHED").is_some());
    assert!(
        harness
            .query_by_label_contains("gemm, memory, pcie")
            .is_some()
    );
    assert!(harness.query_by_label("GPU 1 · soak_correctness").is_some());
    assert!(harness.query_by_label("GPU 1 · soak_jitter").is_some());
    assert!(harness.query_by_label("GPU 0 · pcie_link").is_none());
    assert!(harness.query_by_label_contains("1 element wrong").is_some());
    // No run settings on a report: its machine is not here.
    assert!(harness.query_by_label("Run settings").is_none());
    harness.snapshot("soak_two_gpus_dip_and_mismatch");
}

/// Draws `soak` in a report for a few frames, hovering over the plots, without rendering.
fn draw(soak: SoakSection) -> Harness<'static> {
    let report = report_with(soak);
    let mut view = SoakView::default();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1000.0, 1400.0))
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            egui::CentralPanel::default().show(ui, |ui| view.ui(ui, &report));
        });
    harness.run();
    for y in [300.0, 500.0, 700.0, 900.0] {
        harness.hover_at(egui::pos2(500.0, y));
        harness.run();
    }
    harness
}

#[test]
fn power_never_read_draws_without_a_panic() {
    let mut soak = two_gpu_soak();
    for s in &mut soak.samples {
        s.power_w = None;
    }
    let harness = draw(soak);
    assert!(harness.query_by_label("Power (W): no readings").is_some());
    assert!(harness.query_by_label("SM clock (MHz)").is_some());
}

#[test]
fn odd_sections_draw_without_a_panic() {
    // Nothing read at all, by a GPU the section does not list, at times out of order and not
    // finite; a duration and interval that are not numbers; events at odd times.
    let odd = SoakSection {
        duration_s: f64::NAN,
        elapsed_s: f64::INFINITY,
        interval_s: 0.0,
        gpus: vec![],
        samples: [5.0, 1.0, f64::NAN, f64::INFINITY, -3.0, 1e12]
            .iter()
            .map(|&t| SoakSample {
                t_s: t,
                gpu: 1023,
                ..Default::default()
            })
            .collect(),
        events: [f64::NAN, -1.0, 1e15]
            .iter()
            .map(|&t| SoakEvent {
                t_s: t,
                gpu: Some(7),
                kind: SoakEventKind::Xid { xid: 79 },
                text: "odd".into(),
            })
            .collect(),
        ..Default::default()
    };
    let harness = draw(odd);
    assert!(harness.query_by_label("STOPPED EARLY").is_some());
    assert!(harness.query_by_label("Throughput: no readings").is_some());
    // An empty section (a soak that has just begun) says so.
    let harness = draw(SoakSection::default());
    assert!(harness.query_by_label("No samples yet.").is_some());
    // One reading alone, and a throughput whose phase is unknown (no unit: not drawn).
    let one = SoakSection {
        samples: vec![SoakSample {
            t_s: 1.0,
            rate: Some(5.0),
            sm_clock_mhz: Some(1_000),
            ..Default::default()
        }],
        ..Default::default()
    };
    let harness = draw(one);
    assert!(harness.query_by_label("SM clock (MHz)").is_some());
}

/// A check that plays a recording back runs through the view as a live soak does: its samples
/// arrive as events, the view draws them, the verdict lands in the report's health.
#[test]
fn a_replayed_soak_arrives_through_the_view() {
    let recorded = two_gpu_soak();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("soak.csv");
    std::fs::write(
        &csv,
        scalescope::health::soak_csv::rows(&recorded.samples, &recorded.events, true),
    )
    .unwrap();
    let topo = common::two_gpus();
    let job = scalescope::job::Job::Check {
        target: scalescope::job::Target::Topology {
            topology: Box::new(topo.clone()),
        },
        options: scalescope::health::run::CheckOptions {
            soak: Some(scalescope::model::SoakOptions {
                replay: Some(csv.display().to_string()),
                replay_speed: Some(0.0),
                ..Default::default()
            }),
            ..Default::default()
        },
    };
    let state = std::rc::Rc::new(std::cell::RefCell::new((
        SoakView::default(),
        Report::new(scalescope::job::machine_info(&topo, "test"), topo),
        Some(job),
    )));
    let shared = state.clone();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1200.0, 1400.0))
        .build_ui(move |ui| {
            let (view, report, job) = &mut *shared.borrow_mut();
            if let Some(job) = job.take() {
                scalescope::ui::fonts::install(ui.ctx());
                view.start_job(ui.ctx(), job);
            }
            view.poll(report);
            egui::CentralPanel::default().show(ui, |ui| view.ui(ui, report));
        });
    for _ in 0..500 {
        harness.step();
        let (view, report, _) = &*state.borrow();
        if !view.panel().running() && report.soak.as_ref().is_some_and(|s| s.finished) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
    {
        let (view, report, _) = &*state.borrow();
        assert_eq!(view.panel().error(), None);
        let soak = report.soak.as_ref().expect("the soak arrived");
        assert_eq!(soak.samples.len(), recorded.samples.len());
        assert!(soak.finished);
        let health = report.health.as_ref().expect("its verdict arrived");
        assert!(
            health
                .checks
                .iter()
                .any(|c| c.check.id().starts_with("soak_"))
        );
    }
    assert!(harness.query_by_label("FINISHED").is_some());
    assert!(harness.query_by_label("GPU 1 · soak_correctness").is_some());
}

#[test]
fn the_soak_tab_shows_where_a_report_holds_a_soak() {
    let mut harness = app_harness(app());
    harness.run();
    if !scalescope::report::bundled::reports().is_empty() {
        assert!(!harness.state().tabs().contains(&View::Soak));
        assert!(harness.query_by_label("Soak").is_none());
    }
    harness
        .state_mut()
        .open_reports(vec![report_with(two_gpu_soak())]);
    harness.run();
    assert!(harness.state().tabs().contains(&View::Soak));
    // A report of a soak alone opens in the Soak view.
    assert_eq!(harness.state().settings().view, View::Soak);
    assert!(harness.query_by_label("GPU 1 · soak_correctness").is_some());
    // A report without a soak has no Soak tab: its Topology shows.
    let reports = harness.state().reports();
    if reports.len() > 1 {
        let title = scalescope::ui::report_view::list_name(&reports[0].report);
        harness.get_all_by_label(&title).next().unwrap().click();
        harness.run();
        assert!(!harness.state().tabs().contains(&View::Soak));
        assert_eq!(harness.state().settings().view, View::Topology);
    }
}

/// This machine with two GPUs, as NVML would read it (nothing is run on it here).
fn live_two_gpus() -> Topology {
    let mut live = common::two_gpus();
    live.source = scalescope::model::TopologySource::Live {
        hostname: Some("gpu-box-17".into()),
        driver_version: Some("580.65".into()),
        nvml_version: None,
        cuda_driver_version: Some(13000),
    };
    live
}

/// On this machine the Soak tab offers the check with a soak: its duration and loads, p2p and
/// nccl only while two GPUs are selected, the button saying what it runs. (Nothing is started:
/// on a GPU machine that would load its GPUs.)
#[test]
fn this_machine_offers_a_check_with_a_soak() {
    let app =
        scalescope::ui::App::new_with(Ok(live_two_gpus()), scalescope::ui::Startup::default());
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1024.0, 700.0))
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui_state(|ui, app: &mut scalescope::ui::App| app.show(ui), app);
    harness.run();
    assert!(harness.state().tabs().contains(&View::Soak));
    harness.get_by_label("Soak").click();
    harness.run();
    assert!(
        harness
            .query_by_label("▶ Check + soak 30 min on this machine")
            .is_some()
    );
    assert!(harness.query_by_label_contains("No soak yet").is_some());
    let enabled = |h: &Harness<'_, scalescope::ui::App>, label: &str| {
        !h.get_by_label(label).accesskit_node().is_disabled()
    };
    assert!(enabled(&harness, "p2p") && enabled(&harness, "nccl"));
    harness.snapshot("app_soak_run_settings_1024x700");
    // One GPU: the loads between GPUs are off.
    harness.get_by_label("GPU1").click();
    harness.run();
    assert!(!enabled(&harness, "p2p") && !enabled(&harness, "nccl"));
    assert!(enabled(&harness, "gemm"));
    // Off: the check alone; a custom duration that does not parse disables the button.
    harness.get_by_label("off").click();
    harness.run();
    assert!(harness.query_by_label("▶ Check on this machine").is_some());
    harness.get_by_label("custom").click();
    harness.run();
    assert!(
        harness
            .query_by_label("▶ Check + soak 1 h on this machine")
            .is_some()
    );
    for f in harness.state().panel_fits() {
        assert!(!f.overflows(), "{} panel overflows", f.panel);
    }
}

/// Save CSV… on the Soak view writes the samples as `check --soak-csv` does (a replay reads
/// them back); Save PNG… the report's soak page, as `--bench` writes it.
#[test]
fn saving_the_soak_view_writes_its_samples_and_its_picture() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    app.set_file_dialogs(scalescope::ui::FileDialogs::PathField("test".into()));
    let soak = two_gpu_soak();
    app.open_reports(vec![report_with(soak.clone())]);
    // A save's notice takes a few frames of animation to settle.
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut scalescope::ui::App| app.show(ui), app);
    h.run();
    // A report of a soak alone opens in the Soak view.
    assert_eq!(h.state().settings().view, View::Soak);
    let save = |h: &mut Harness<'static, scalescope::ui::App>, button: &str, name: &str| {
        h.get_by_label(button).click();
        h.run();
        assert!(h.state().path_field_open());
        let path = dir.path().join(name);
        common::ui::enter_path(h, &path.display().to_string());
        assert!(common::ui::wait_saved(h, &path), "no word of the save");
        path
    };
    let csv = save(&mut h, "Save CSV…", "soak.csv");
    assert_eq!(h.state().error(), None);
    let back = scalescope::health::soak_csv::read(&csv).expect("the CSV reads back");
    assert_eq!(back.samples.len(), soak.samples.len());
    let png = save(&mut h, "Save PNG…", "soak.png");
    assert_eq!(h.state().error(), None);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
}

/// The app opened on `paths` (as `scalescope PATH…` opens it), no driver, 1400×900.
fn app_opening(paths: Vec<std::path::PathBuf>) -> Harness<'static, scalescope::ui::App> {
    let app = scalescope::ui::App::new_with(
        Err("no NVIDIA driver found".into()),
        scalescope::ui::Startup {
            report_paths: paths,
            ..Default::default()
        },
    );
    let mut h = app_harness(app);
    h.run();
    h
}

/// The Soak view is reached without a GPU (issue X): a soak.csv, or the file `check
/// --soak-replay … --json` writes, opened as a report (command line, File → Open report…, a
/// drop: one reader) shows in the Soak view, judged as `check --soak-replay` judges it — the
/// same samples and the same soak_* checks.
#[test]
fn a_soak_csv_and_a_checks_json_open_in_the_soak_view() {
    let csv = common::crate_file("tests/data/soak-h100x2-2min.csv");
    let recorded = scalescope::health::soak_csv::read(&csv).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("check.json");
    let out = common::scalescope()
        .args(["check", "--soak-replay"])
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let soak_checks = |names: Vec<String>| -> Vec<String> {
        names
            .into_iter()
            .filter(|n| n.starts_with("soak_"))
            .collect()
    };
    let expected = soak_checks(
        written["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["check"].as_str().unwrap().to_string())
            .collect(),
    );
    assert!(!expected.is_empty());
    for path in [csv.clone(), json.clone()] {
        let h = app_opening(vec![path.clone()]);
        let app = h.state();
        assert_eq!(app.error(), None, "{}", path.display());
        assert_eq!(app.settings().view, View::Soak, "{}", path.display());
        assert!(app.tabs().contains(&View::Soak));
        let opened = &app.reports().last().unwrap().report;
        let soak = opened.soak.as_ref().unwrap();
        assert_eq!(soak.samples.len(), recorded.samples.len());
        assert_eq!(soak.gpus, recorded.gpus);
        let judged = soak_checks(
            opened
                .health
                .as_ref()
                .unwrap()
                .checks
                .iter()
                .map(|c| c.check.to_string())
                .collect(),
        );
        assert_eq!(judged, expected, "{}", path.display());
        // The view draws it: the verdict's soak checks are on screen.
        assert!(
            h.query_all_by_label_contains("soak_").next().is_some(),
            "{}: no soak check drawn",
            path.display()
        );
    }
    // A soak.csv that is not one is refused with one line naming the file, no report opened.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "not,a,soak\n1,2,3\n").unwrap();
    let h = app_opening(vec![bad.clone()]);
    let error = h.state().error().unwrap_or_default().to_string();
    assert!(error.contains("bad.csv"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
    assert_ne!(h.state().settings().view, View::Soak);
    // The command line checks them before a window opens: a soak file passes (then, here, no
    // display: exit 1), a bad one is bad input (exit 2), one line naming it.
    for (path, code, says) in [
        (&csv, 1, "no display"),
        (&json, 1, "no display"),
        (&bad, 2, "bad.csv"),
    ] {
        let out = common::scalescope()
            .arg(path)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{}: {err}", path.display());
        assert!(err.contains(says), "{}: {err}", path.display());
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
