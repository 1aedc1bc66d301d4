//! The app's layout from 1024×700 to 4K, through egui_kittest: snapshots of every view at
//! 1024×700 and 1920×1080, a check that no panel's content is wider or taller than its panel
//! (content that does not fit must sit in a scroll area), per-tab scroll offsets, the
//! collapsible Sources panel, the File menu and its shortcuts, one warning banner, and the path
//! field that stands in for file dialogs where the desktop has none.
//!
//! Snapshots live in tests/snapshots/; after a deliberate change run
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui_layout` and look at the new PNGs.

mod common;

use eframe::egui::{self, Modifiers, Pos2, Rect, Vec2, accesskit::Role, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use scalescope::ui::{App, FileDialogs, SourceKey, Startup, View};

const NO_DRIVER: &str = "no NVIDIA driver found (cannot load libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file); use --import FILE with `nvidia-smi topo -m` output, or --catalog NAME";

const SMALL: Vec2 = vec2(1024.0, 700.0);
const FULL_HD: Vec2 = vec2(1920.0, 1080.0);
const UHD: Vec2 = vec2(3840.0, 2160.0);

/// The app as it opens without a driver: on the newest bundled example report of today's
/// method.
fn app() -> App {
    assert!(
        !scalescope::report::bundled::reports().is_empty(),
        "these tests need the bundled example reports"
    );
    App::new_with(Err(NO_DRIVER.into()), Startup::default())
}

fn harness(app: App, size: Vec2, render: bool) -> Harness<'static, App> {
    let mut b = Harness::builder()
        .with_size(size)
        .with_theme(egui::Theme::Dark)
        // Opening a window and a menu takes a few frames of animation.
        .with_max_steps(16);
    if render {
        b = b.wgpu();
    }
    let mut h = b.build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h
}

/// Shows `view` of the `report`-th opened report.
fn show(h: &mut Harness<'static, App>, report: usize, view: View) {
    let title = scalescope::ui::report_view::list_name(&h.state().reports()[report].report);
    // The Sources panel's entry (Compare also names the machines).
    h.get_all_by_label(&title)
        .next()
        .expect("the report's entry")
        .click();
    h.run();
    h.get_by_label(view.label()).click();
    h.run();
    assert_eq!(h.state().settings().view, view);
    assert_eq!(h.state().selected(), &SourceKey::Report(report));
}

/// The view tabs the `report`-th opened report shows (Soak only where it holds a soak).
fn tabs_of(h: &mut Harness<'static, App>, report: usize) -> Vec<View> {
    show(h, report, View::Topology);
    h.state().tabs()
}

/// Every panel's content fits its panel and the window: what does not fit must be in a scroll
/// area (which then takes only the space it is given).
fn assert_fits(h: &Harness<'static, App>, what: &str, size: Vec2) {
    let screen = Rect::from_min_size(Pos2::ZERO, size).expand(0.5);
    let fits = h.state().panel_fits();
    assert!(
        fits.iter().any(|f| f.panel == "central"),
        "{what}: no central panel recorded"
    );
    for f in fits {
        assert!(
            !f.overflows(),
            "{what}: the {} panel's content {:?} reaches past the panel {:?} (cut off, no scroll area)",
            f.panel,
            f.used,
            f.available
        );
        assert!(
            screen.contains_rect(f.used),
            "{what}: the {} panel's content {:?} reaches past the window {size:?}",
            f.panel,
            f.used
        );
    }
}

#[test]
fn every_view_fits_from_1024x700_to_4k() {
    for size in [SMALL, FULL_HD, UHD] {
        let mut h = harness(app(), size, false);
        // Both bundled examples: 2 and 8 GPUs (the widest matrices and tables).
        for report in 0..h.state().reports().len().min(2) {
            for view in tabs_of(&mut h, report) {
                show(&mut h, report, view);
                assert_fits(
                    &h,
                    &format!("{view:?} of report {report} at {size:?}"),
                    size,
                );
            }
        }
    }
}

#[test]
fn every_view_fits_with_the_sources_panel_hidden() {
    let mut h = harness(app(), SMALL, false);
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::B);
    h.run();
    assert!(!h.state().settings().sidebar_open);
    assert!(h.query_by_label("Hardware catalog").is_none());
    for view in h.state().tabs() {
        h.get_by_label(view.label()).click();
        h.run();
        assert_fits(&h, &format!("{view:?}, no sidebar"), SMALL);
    }
    // The top bar's button brings it back.
    h.get_by_label("▶ Sources").click();
    h.run();
    assert!(h.state().settings().sidebar_open);
    assert!(h.query_by_label("Hardware catalog").is_some());
}

/// A catalog machine's modeled runs fill the measurement views with the widest results (8 GPUs
/// and the host); they must fit at 1024×700 too.
#[test]
fn modeled_results_of_an_8_gpu_machine_fit_at_1024x700() {
    let mut h = harness(app(), SMALL, false);
    h.get_by_label("NVIDIA DGX H100").click();
    h.run();
    for view in [View::Bandwidth, View::Collectives] {
        h.get_by_label(view.label()).click();
        h.run();
        h.get_by_label("▶ Model this machine").click();
        for _ in 0..400 {
            h.step();
            let (r, v) = (
                h.state().shown_report().unwrap(),
                h.state().views().unwrap(),
            );
            let done = match view {
                View::Bandwidth => r.bandwidth.is_some() && !v.bandwidth.panel().running(),
                _ => r.collectives.is_some() && !v.collectives.panel().running(),
            };
            if done {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        h.run();
        assert_fits(&h, &format!("modeled {view:?} of a DGX H100"), SMALL);
    }
}

/// Every view of the 8-GPU example (the widest content) at `size`.
fn snapshot_every_view(size: Vec2, tag: &str) {
    let mut h = harness(app(), size, true);
    for view in tabs_of(&mut h, 1) {
        show(&mut h, 1, view);
        h.snapshot(format!("app_{}_{tag}", view.label().to_lowercase()));
    }
}

#[test]
fn snapshots_of_every_view_at_1024x700() {
    snapshot_every_view(SMALL, "1024x700");
}

#[test]
fn snapshots_of_every_view_at_1920x1080() {
    snapshot_every_view(FULL_HD, "1920x1080");
}

/// Scrolling one tab leaves the others where they were.
#[test]
fn each_tab_keeps_its_own_scroll_offset() {
    let mut h = harness(app(), SMALL, false);
    show(&mut h, 1, View::Topology);
    let top_of = |h: &Harness<'static, App>, label: &str| h.get_by_label(label).rect().top();
    let machine_before = top_of(&h, "Machine");
    h.hover_at(pos2(700.0, 450.0));
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: vec2(0.0, -400.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: Modifiers::NONE,
    });
    h.run();
    let machine_scrolled = top_of(&h, "Machine");
    assert!(
        machine_scrolled < machine_before - 100.0,
        "the Topology tab did not scroll ({machine_before} → {machine_scrolled})"
    );
    // Bandwidth opens at its top: its run settings are on screen under the toolbar.
    h.get_by_label("Bandwidth").click();
    h.run();
    let settings = h.get_by_label("Run settings").rect();
    assert!(
        settings.top() > 60.0 && settings.bottom() < 350.0,
        "Bandwidth opened scrolled: Run settings at {settings:?}"
    );
    // Back on Topology, it is still where it was scrolled to.
    h.get_by_label("Topology").click();
    h.run();
    assert!(
        (top_of(&h, "Machine") - machine_scrolled).abs() < 1.0,
        "Topology lost its scroll offset"
    );
}

/// One warning banner, the same on every tab, in a plain sentence: the loader's message and
/// the command line's flags only under "details".
#[test]
fn one_plain_banner_with_details() {
    let mut h = harness(app(), SMALL, false);
    for view in h.state().tabs() {
        h.get_by_label(view.label()).click();
        h.run();
        let banners: Vec<_> = h
            .query_all_by_label_contains("No NVIDIA driver was found on this machine")
            .collect();
        assert_eq!(banners.len(), 1, "{view:?}: one banner");
        assert!(
            h.query_all_by_label_contains("libnvidia-ml")
                .next()
                .is_none(),
            "{view:?}: the raw loader message shows outside details"
        );
        assert!(h.query_all_by_label_contains("--catalog").next().is_none());
    }
    h.get_by_label("details").click();
    h.run();
    assert!(h.query_by_label_contains("libnvidia-ml.so.1").is_some());
}

#[test]
fn file_menu_lists_its_items_and_shortcuts() {
    let mut h = harness(app(), SMALL, false);
    h.get_by_label("File").click();
    h.run();
    for item in [
        "Open nvidia-smi output…",
        "Save PNG…",
        "Export report.html…",
    ] {
        assert!(
            h.query_all_by_label_contains(item).count() >= 1,
            "File menu lacks {item}"
        );
    }
    // Items show their shortcuts (Ctrl on Linux).
    for (item, key) in [("Open report…", "O"), ("Save CSV…", "S"), ("Quit", "Q")] {
        let shortcut = format!("Ctrl+{key}");
        assert!(
            h.query_all_by_label_contains(item).any(|n| n
                .accesskit_node()
                .label()
                .unwrap_or_default()
                .contains(&shortcut)),
            "{item} does not show {shortcut}"
        );
    }
}

/// A report to open: the first bundled example under another host name, so that it opens as
/// a new entry rather than selecting the bundled one.
fn write_report(dir: &std::path::Path) -> (std::path::PathBuf, String) {
    let (_, r) = scalescope::report::bundled::reports()
        .into_iter()
        .next()
        .expect("a bundled report");
    let mut r = r.expect("the bundled report parses");
    r.machine.label = "path-field-box".into();
    let path = dir.join("opened report.json");
    std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
    (path, r.title())
}

/// Replaces the path field's text with `text` and presses OK.
fn type_path_and_ok(h: &mut Harness<'static, App>, text: &str) {
    let field = h.get_by_role_and_label(Role::TextInput, "Path");
    field.click();
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::A);
    h.run();
    h.get_by_role_and_label(Role::TextInput, "Path")
        .type_text(text);
    h.run();
    h.get_by_label("OK").click();
    h.run();
}

/// Steps frames until `done` (worker threads answer over a channel).
fn wait_for(h: &mut Harness<'static, App>, done: impl FnMut(&App) -> bool) {
    common::ui::step_until(h, 300, done);
}

#[test]
fn without_a_dialog_backend_the_path_field_opens_a_report_and_saves_a_csv() {
    let dir = tempfile::tempdir().unwrap();
    let (report_path, title) = write_report(dir.path());
    let mut app = app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let before = app.reports().len();
    let mut h = harness(app, SMALL, false);

    // Ctrl+O: the path field, with the reason, instead of a dialog.
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::O);
    h.run();
    assert!(h.state().path_field_open());
    assert!(h.query_by_label_contains("no dialog here (test)").is_some());
    type_path_and_ok(&mut h, &report_path.display().to_string());
    wait_for(&mut h, |a| a.reports().len() > before);
    assert!(!h.state().path_field_open());
    assert_eq!(h.state().reports().len(), before + 1);
    assert_eq!(
        h.state().current_report().map(|r| r.title()),
        Some(title.clone()),
        "the opened report is shown"
    );
    assert!(h.state().error().is_none(), "{:?}", h.state().error());

    // File → Save CSV…: the path field again; the CSV is the opened report's links.
    h.get_by_label("File").click();
    h.run();
    h.get_all_by_label_contains("Save CSV…")
        .next()
        .unwrap()
        .click();
    h.run();
    assert!(h.state().path_field_open());
    let csv = dir.path().join("links.csv");
    type_path_and_ok(&mut h, &csv.display().to_string());
    assert!(common::ui::wait_saved(&mut h, &csv), "no word of the save");
    let text = std::fs::read_to_string(&csv).expect("the CSV was written");
    assert!(text.lines().count() > 1, "{text}");
    assert!(
        h.query_by_label_contains(&format!("Saved {}", csv.display()))
            .is_some()
    );

    // Saving over it asks first: the first OK only warns, the second replaces.
    std::fs::write(&csv, "old").unwrap();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::S);
    h.run();
    type_path_and_ok(&mut h, &csv.display().to_string());
    assert!(h.state().path_field_open());
    assert!(h.query_by_label_contains("press OK again").is_some());
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "old");
    h.get_by_label("Replace").click();
    h.run();
    wait_for(&mut h, |_| {
        std::fs::read_to_string(&csv).is_ok_and(|t| t != "old")
    });
    assert_ne!(std::fs::read_to_string(&csv).unwrap(), "old");
}

#[test]
fn the_path_field_reports_bad_paths_without_panicking() {
    let mut app = app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let mut h = harness(app, SMALL, false);
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::O);
    h.run();
    // A folder is not a file: the field stays open and says so.
    type_path_and_ok(&mut h, "/");
    assert!(h.state().path_field_open());
    assert!(
        h.query_by_label_contains("a folder is not enough")
            .is_some()
    );
    // A missing file: the field closes and the error line names it.
    type_path_and_ok(&mut h, "/nonexistent/scalescope/report.json");
    wait_for(&mut h, |a| a.error().is_some());
    let err = h.state().error().expect("an error line").to_string();
    assert!(err.contains("/nonexistent/scalescope/report.json"), "{err}");
    // Cancel closes the field and does nothing.
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::O);
    h.run();
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().path_field_open());
}

#[test]
fn file_export_writes_the_open_report_as_html() {
    let dir = tempfile::tempdir().unwrap();
    let (report_path, _) = write_report(dir.path());
    let mut app = app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let before = app.reports().len();
    let mut h = harness(app, SMALL, false);
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::O);
    h.run();
    type_path_and_ok(&mut h, &report_path.display().to_string());
    wait_for(&mut h, |a| a.reports().len() > before);
    let expected = scalescope::document::report_html(h.state().current_report().unwrap());

    h.get_by_label("File").click();
    h.run();
    h.get_all_by_label_contains("Export report.html…")
        .next()
        .unwrap()
        .click();
    h.run();
    assert!(h.state().path_field_open());
    let html = dir.path().join("exported.html");
    type_path_and_ok(&mut h, &html.display().to_string());
    assert!(common::ui::wait_saved(&mut h, &html), "no word of the save");
    let text = std::fs::read_to_string(&html).expect("report.html was written");
    assert_eq!(text, expected, "the file is the open report's HTML");
    assert!(text.starts_with("<!DOCTYPE html>") || text.starts_with("<!doctype html>"));
}

/// A report's machine can be renamed (right-click in Sources); the name shows wherever the
/// report is named, goes into its exported HTML, is kept in the settings for the next run, and
/// an empty name brings back the name from its GPUs.
#[test]
fn a_report_machine_can_be_renamed_and_the_name_is_kept() {
    if scalescope::report::bundled::reports().is_empty() {
        return;
    }
    let mut h = harness(app(), SMALL, false);
    let first = scalescope::ui::report_view::list_name(&h.state().reports()[0].report);
    // The entry in Sources (a button; the toolbar names the report too).
    let roles: Vec<Role> = h
        .get_all_by_label(&first)
        .map(|n| n.accesskit_node().role())
        .collect();
    h.get_all_by_label(&first)
        .find(|n| n.accesskit_node().role() == Role::Button)
        .unwrap_or_else(|| panic!("no button named {first}: {roles:?}"))
        .click_secondary();
    h.run();
    let field = h.get_by_role_and_label(Role::TextInput, "Machine name");
    field.click();
    h.run();
    h.key_press_modifiers(Modifiers::COMMAND, egui::Key::A);
    h.run();
    h.get_by_role_and_label(Role::TextInput, "Machine name")
        .type_text("Rack 7 box");
    h.run();
    h.get_by_label("Rename").click();
    h.run();
    let renamed = &h.state().reports()[0].report;
    assert_eq!(renamed.machine.display_name.as_deref(), Some("Rack 7 box"));
    let listed = scalescope::ui::report_view::list_name(renamed);
    assert!(listed.starts_with("Rack 7 box · "), "{listed}");
    assert!(
        h.query_all_by_label(&listed).next().is_some(),
        "Sources shows {listed}"
    );
    assert!(scalescope::document::report_html(renamed).contains("Rack 7 box"));

    // The next run (same settings) opens the example under that name.
    let settings = h.state().settings().clone();
    let again = App::new_with_settings(
        Err("no NVIDIA driver found".into()),
        Startup::default(),
        settings,
    );
    assert_eq!(
        again.reports()[0].report.machine.display_name.as_deref(),
        Some("Rack 7 box")
    );

    // An empty name: the name from its GPUs again, and forgotten.
    h.state_mut().rename_report(0, "  ");
    h.run();
    assert_eq!(h.state().reports()[0].report.machine.display_name, None);
    assert_eq!(
        scalescope::ui::report_view::list_name(&h.state().reports()[0].report),
        first
    );
    assert!(h.state().settings().machine_names.is_empty());
}
