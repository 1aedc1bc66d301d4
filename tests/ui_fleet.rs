//! The Fleet view through egui_kittest, on a fleet of 32 modeled node reports as
//! tests/fleet_report.rs makes them (one `--bench --modeled --catalog dgx-h100 --suite
//! health,bandwidth` report copied into 32 node folders; node07's GPU 3 copies 20 % slow,
//! node19 on another driver): its tab only while a fleet is open, the two failing nodes listed
//! first with their cells, a snapshot, a click through to a node's report; opened from the
//! command line's folder, a dropped fleet.json and File → Open fleet…; a folder without reports
//! a one-line error.
//!
//! Snapshots live in tests/snapshots/; after a deliberate change run
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui_fleet` and look at the new PNGs.
#![cfg(feature = "gui")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::ui::{app, step_until};
use eframe::egui::{self, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::fleet::finding::figure_text;
use scalescope::health::Verdict;
use scalescope::model::Endpoint;
use scalescope::ui::views::fleet::table::{self as fleet_table, FigureFilter, Level};
use scalescope::ui::{App, FileDialogs, SourceKey, Startup, View};

use common::fleet::{DRIVER, ODD_DRIVER, base, slow_gpu};

/// A fleet folder as `fleet run` leaves one: `dir/rack-a/nodes/nodeNN/report.json` for 32
/// nodes, node07 with GPU 3's copies 20 % slow and node19 on another driver. Returns the folder
/// (named so that the snapshot does not show the temporary folder's random name).
fn fleet(dir: &Path) -> PathBuf {
    let dir = dir.join("rack-a");
    for i in 0..32 {
        let mut r = base().clone();
        r.machine.hostname = Some(format!("node{i:02}"));
        r.machine.driver_version = Some(DRIVER.into());
        match i {
            7 => slow_gpu(&mut r, 3, 0.8),
            19 => r.machine.driver_version = Some(ODD_DRIVER.into()),
            _ => {}
        }
        let folder = dir.join("nodes").join(format!("node{i:02}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("report.json"), serde_json::to_vec(&r).unwrap()).unwrap();
    }
    dir
}

/// The h2d figure of GPU `gpu` in the base report at its largest size (GB/s).
fn base_h2d(gpu: usize) -> f64 {
    let b = base().bandwidth.as_ref().unwrap();
    b.results
        .iter()
        .filter(|r| r.test.id() == "h2d" && r.dst == Endpoint::Gpu(gpu))
        .max_by_key(|r| r.bytes)
        .and_then(|r| r.median_gbps)
        .unwrap()
}

/// The app in a rendered 1400×900 dark harness.
fn harness(app: App) -> Harness<'static, App> {
    harness_stepped(app, 0.25)
}

/// [`harness`] whose frames are `dt` seconds apart (kittest's 0.25 s is too slow for two
/// clicks to make a double-click).
fn harness_stepped(app: App, dt: f32) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_step_dt(dt)
        .with_theme(egui::Theme::Dark)
        // The path field's window takes a few frames of animation to open.
        .with_max_steps(16)
        .wgpu()
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h
}

/// The app opened on `paths` as the command line gives them (a folder is a fleet).
fn app_with(paths: Vec<PathBuf>) -> App {
    let startup = Startup {
        report_paths: paths,
        ..Default::default()
    };
    App::new_with(Err("no NVIDIA driver found".into()), startup)
}

#[test]
fn the_fleet_tab_lists_the_failing_nodes_first_with_their_cells() {
    // No fleet, no tab.
    let h = harness(app());
    assert!(!h.state().tabs().contains(&View::Fleet));
    assert!(h.query_by_label("Fleet").is_none());

    let dir = tempfile::tempdir().unwrap();
    let mut h = harness(app_with(vec![fleet(dir.path())]));
    assert!(h.state().error().is_none(), "{:?}", h.state().error());
    assert!(h.state().tabs().contains(&View::Fleet));
    assert_eq!(h.state().settings().view, View::Fleet);
    assert!(h.query_by_label("Fleet").is_some());
    assert!(h.query_by_label_contains("Drain: node07, node19").is_some());

    let fleet = h.state().fleet();
    let o = fleet.outcome().unwrap();
    assert_eq!(o.nodes.len(), 32);
    assert_eq!(&fleet.listed()[..2], ["node07", "node19"]);
    let node = |name: &str| o.nodes.iter().find(|n| n.name == name).unwrap();
    assert_eq!(node("node07").verdict, Verdict::Fail);
    assert_eq!(node("node19").verdict, Verdict::Fail);
    assert!(
        fleet.listed()[2..]
            .iter()
            .all(|n| node(n).verdict == Verdict::Pass)
    );
    // node07's h2d GPU 3 cell: its figure, 20 % below the median, red; GPU 2's is within.
    let fig = |id: &str| o.figures.iter().position(|f| f.id == id).unwrap();
    let slow = fleet_table::cell(o, node("node07"), fig("h2d GPU 3"));
    let want = base_h2d(3) * 0.8;
    assert!((slow.value.unwrap() - want).abs() < 1e-9, "{slow:?}");
    assert_eq!(slow.text, figure_text(want));
    assert_eq!(slow.level, Level::Fail);
    assert!(
        (slow.deviation_percent.unwrap() + 20.0).abs() < 0.01,
        "{slow:?}"
    );
    let fine = fleet_table::cell(o, node("node07"), fig("h2d GPU 2"));
    assert_eq!(fine.level, Level::Within);
    let hover = fleet_table::cell_hover(o, node("node07"), fig("h2d GPU 3"));
    assert!(
        hover.contains("-20.0 %") && hover.contains("fleet median"),
        "{hover}"
    );
    assert!(hover.contains("FAIL: h2d GPU 3"), "{hover}");
    // node19's figures are the fleet's; its driver is what differs.
    let odd = fleet_table::cell(o, node("node19"), fig("h2d GPU 3"));
    assert_eq!(odd.level, Level::Within);
    assert_eq!(
        fleet_table::differs(node("node19")),
        format!("driver {ODD_DRIVER}")
    );
    // Off the median by default: every column a figure of GPU 3.
    let shown = fleet.shown_figures();
    assert!(
        !shown.is_empty() && shown.iter().all(|id| id.contains('3')),
        "{shown:?}"
    );

    // The cells on screen read so too (the h2d columns, to have GPU 3 in view).
    h.state_mut()
        .fleet_mut()
        .set_filter(FigureFilter::Group("h2d".into()));
    h.run();
    let text = figure_text(want);
    assert!(
        h.query_by_label(&format!("node07 h2d GPU 3: {text}"))
            .is_some(),
        "node07's cell"
    );
    let median = figure_text(base_h2d(3));
    assert!(
        h.query_by_label(&format!("node19 h2d GPU 3: {median}"))
            .is_some()
    );
    assert!(
        h.query_by_label(&format!("node00 h2d GPU 3: {median}"))
            .is_some()
    );

    h.state_mut().fleet_mut().set_filter(FigureFilter::Off);
    h.run();
    // Nothing cut off: the table and the findings scroll inside the central panel.
    for fit in h.state().panel_fits() {
        assert!(!fit.overflows(), "{fit:?}");
    }
    h.snapshot("fleet_32_nodes");
}

#[test]
fn clicking_a_node_then_open_report_shows_its_report_and_keeps_the_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = harness_stepped(app_with(vec![fleet(dir.path())]), 1.0 / 60.0);
    let before = h.state().reports().len();
    // Hovering a cell tells its figure against the fleet's, and the finding.
    h.state_mut()
        .fleet_mut()
        .set_filter(FigureFilter::Group("d2h".into()));
    h.run();
    h.get_by_label_contains("node07 d2h GPU 3: ").hover();
    for _ in 0..45 {
        h.step();
    }
    assert!(
        h.query_by_label_contains("-20.0 % from the median")
            .is_some()
    );
    assert!(h.query_by_label_contains("FAIL: d2h GPU 3: ").is_some());
    h.get_by_label("node19").click();
    h.run();
    assert_eq!(h.state().fleet().selected(), Some("node19"));
    assert!(
        h.query_by_label_contains(&format!("driver: {ODD_DRIVER}"))
            .is_some()
    );
    h.get_by_label("Open report").click();
    h.run();
    let opened = step_until(&mut h, 300, |a| a.reports().len() > before);
    assert!(opened, "{:?}", h.state().error());
    assert_eq!(h.state().selected(), &SourceKey::Report(before));
    let shown = h.state().current_report().unwrap();
    assert_eq!(shown.machine.hostname.as_deref(), Some("node19"));
    assert_eq!(shown.machine.driver_version.as_deref(), Some(ODD_DRIVER));
    assert_eq!(h.state().settings().view, View::Topology);
    // The fleet stays open: its tab takes the user back.
    assert!(h.state().tabs().contains(&View::Fleet));
    h.get_by_label("Fleet").click();
    h.run();
    assert_eq!(h.state().settings().view, View::Fleet);
    assert_eq!(h.state().fleet().selected(), Some("node19"));
    // A double-click on a row opens its report straight away (half a second after the clicks
    // above, so that it is not taken for a triple-click).
    for _ in 0..40 {
        h.step();
    }
    let node07 = h.get_by_label("node07");
    node07.click();
    node07.click();
    h.run();
    let opened = step_until(&mut h, 300, |a| a.reports().len() > before + 1);
    assert!(opened, "{:?}", h.state().error());
    let shown = h.state().current_report().unwrap();
    assert_eq!(shown.machine.hostname.as_deref(), Some("node07"));
    assert_eq!(h.state().settings().view, View::Topology);
}

/// A file dropped on the window, as a desktop hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn a_dropped_fleet_json_opens_its_fleet() {
    let dir = tempfile::tempdir().unwrap();
    let root = fleet(dir.path());
    // `fleet run` writes its fleet report into OUT/report/, beside OUT/nodes/.
    let json = root.join("report").join("fleet.json");
    std::fs::create_dir_all(json.parent().unwrap()).unwrap();
    std::fs::write(&json, "{}").unwrap();
    let mut h = harness(app());
    h.input_mut().dropped_files.push(Arc::new(Dropped(json)));
    h.step();
    let opened = step_until(&mut h, 500, |a| a.fleet().is_open());
    assert!(opened, "{:?}", h.state().error());
    assert_eq!(h.state().fleet().outcome().unwrap().nodes.len(), 32);
    assert_eq!(h.state().settings().view, View::Fleet);
}

/// File → Open fleet…, with the path field standing in for the folder dialog: `path` typed.
fn open_through_the_path_field(path: &Path) -> Harness<'static, App> {
    let mut app = app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let mut h = harness(app);
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Open fleet…").click();
    h.run();
    assert!(h.state().path_field_open());
    common::ui::enter_path(&mut h, &path.display().to_string());
    h
}

#[test]
fn open_fleet_takes_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = fleet(dir.path());
    let mut h = open_through_the_path_field(&root);
    let opened = step_until(&mut h, 500, |a| a.fleet().is_open());
    assert!(opened, "{:?}", h.state().error());
    assert_eq!(&h.state().fleet().listed()[..2], ["node07", "node19"]);
    // Save CSV… in the Fleet view writes fleet.csv, as `fleet report` does.
    h.get_by_label("Save CSV…").click();
    h.run();
    assert!(h.state().path_field_open());
    let csv = dir.path().join("saved.csv");
    common::ui::enter_path(&mut h, &csv.display().to_string());
    // Written on the save thread: wait for the last node's row.
    let whole = |p: &Path| std::fs::read_to_string(p).is_ok_and(|t| t.contains("node31"));
    assert!(step_until(&mut h, 300, |_| whole(&csv)));
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = scalescope::fleet::files::CSV_COLUMNS.join(",");
    assert!(text.starts_with(&header), "{text}");
    assert!(text.contains("node07,FAIL"), "{text}");
}

#[test]
fn a_folder_without_reports_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut h = open_through_the_path_field(&empty);
    let answered = step_until(&mut h, 300, |a| a.error().is_some());
    assert!(answered);
    let error = h.state().error().unwrap();
    assert!(
        error.starts_with("Cannot open fleet: no node reports found"),
        "{error}"
    );
    assert!(!error.contains('\n'), "{error}");
    assert!(!h.state().fleet().is_open());
    assert!(!h.state().tabs().contains(&View::Fleet));
    // The same from the command line.
    let h = harness(app_with(vec![empty]));
    assert!(h.state().error().unwrap().contains("no node reports found"));
    assert!(!h.state().tabs().contains(&View::Fleet));
}

/// A fleet of 1,000 nodes (the 32 judged, repeated under new names) with its 276 figures: only
/// the rows and columns in view become widgets, and a frame stays cheap.
#[test]
fn a_thousand_nodes_paint_only_what_is_in_view() {
    let dir = tempfile::tempdir().unwrap();
    let small = scalescope::ui::read_fleet(&[fleet(dir.path())]).unwrap();
    let mut outcome = small.outcome;
    let template = outcome.nodes.clone();
    outcome.nodes = (0..1000)
        .map(|i| {
            let mut n = template[i % template.len()].clone();
            n.name = format!("n{i:04}");
            n
        })
        .collect();
    let mut app = app();
    app.fleet_mut().open(outcome, vec![]);
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .with_max_steps(32)
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h.get_by_label("Fleet").click();
    h.run();
    h.state_mut().fleet_mut().set_filter(FigureFilter::All);
    h.run();
    assert_eq!(h.state().fleet().listed().len(), 1000);
    assert_eq!(h.state().fleet().shown_figures().len(), 276);
    let cells = h.query_all_by_label_contains(" GPU ").count();
    assert!(cells > 50 && cells < 1500, "{cells} cells are widgets");
    // Scrolled to the end: the last node is in view, the first no longer.
    let (first, last) = {
        let listed = h.state().fleet().listed();
        (listed[0].to_string(), listed[999].to_string())
    };
    assert!(h.query_by_label(&first).is_some() && h.query_by_label(&last).is_none());
    h.get_by_label(&first).hover();
    h.run();
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -100_000.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: Modifiers::NONE,
    });
    h.run();
    assert!(h.query_by_label(&last).is_some() && h.query_by_label(&first).is_none());
    let start = std::time::Instant::now();
    for _ in 0..20 {
        h.step();
    }
    let per_frame = start.elapsed() / 20;
    eprintln!("1,000 nodes × 276 figures: {per_frame:?} a frame (debug build, not rendered)");
}

/// A fleet with `fleet run --between`'s records: the header says how the runs between nodes
/// went and names the bad pairs; the node whose every pair is slow fails, with that finding.
#[test]
fn the_runs_between_nodes_are_summed_up_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let fleet_dir = dir.path().join("rack-b");
    common::fleet::write_nodes(&fleet_dir.join("nodes"), 8, |_, _| {});
    common::fleet::between_records(&fleet_dir, 8, "node05", 120.0);
    let mut h = harness(app_with(vec![fleet_dir]));
    assert!(step_until(&mut h, 100, |app| app.fleet().is_open()));
    let o = h.state().fleet().outcome().unwrap();
    assert_eq!(o.drain, ["node05"]);
    assert_eq!(o.between.len(), 1 + 8 + 2);
    assert!(
        h.query_by_label_contains(
            "Between nodes: 11 of 11 all-reduce run(s) ran, 2 pair(s) bad (node04+node05 -33"
        )
        .is_some(),
        "the between line"
    );
    let failing = &o
        .nodes
        .iter()
        .find(|n| n.name == "node05")
        .unwrap()
        .findings;
    assert_eq!(
        failing[0].kind,
        scalescope::fleet::finding::FindingKind::Between
    );
}
