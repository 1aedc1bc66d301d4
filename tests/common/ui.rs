//! egui_kittest harnesses: the app as it opens on a machine without a driver, stepping it until
//! a worker thread has answered, and a view drawn alone as the snapshots show it.

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::ui::{App, SourceKey, Startup};

/// The app as it opens without a driver: on the bundled example report.
pub fn app() -> App {
    App::new_with(Err("no NVIDIA driver found".into()), Startup::default())
}

/// `app` in a 1400×900 harness (not rendered).
pub fn app_harness(app: App) -> Harness<'static, App> {
    app_harness_sized(app, egui::vec2(1400.0, 900.0))
}

/// `app` in a harness of `size` (not rendered).
pub fn app_harness_sized(app: App, size: egui::Vec2) -> Harness<'static, App> {
    Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, app: &mut App| app.show(ui), app)
}

/// The app without a driver, 1400×900, switched to catalog machine `machine` (its name in the
/// Sources panel) and then to the view tab `view`.
pub fn app_on_catalog_machine(machine: &str, view: &str) -> Harness<'static, App> {
    let mut harness = app_harness(app());
    harness.get_by_label(machine).click();
    harness.run();
    harness.get_by_label(view).click();
    harness.run();
    harness
}

/// The app without a driver, `size`, on the bundled example report it opens on, switched to the
/// view tab `view`; with the example's index among the opened reports. `None` when the build
/// bundles no report.
pub fn app_on_example_report(
    view: &str,
    size: egui::Vec2,
) -> Option<(Harness<'static, App>, usize)> {
    if scalescope::report::bundled::reports().is_empty() {
        return None;
    }
    let mut harness = app_harness_sized(app(), size);
    harness.get_by_label(view).click();
    harness.run();
    let i = match harness.state().selected() {
        SourceKey::Report(i) => *i,
        other => panic!("opens on {other:?}, not the example"),
    };
    Some((harness, i))
}

/// Steps frames 10 ms apart until `done` holds (workers answer from their own threads) or
/// `frames` have passed, then runs the harness to rest; whether `done` held.
pub fn step_until(
    harness: &mut Harness<'_, App>,
    frames: usize,
    mut done: impl FnMut(&App) -> bool,
) -> bool {
    let mut held = false;
    for _ in 0..frames {
        harness.step();
        if done(harness.state()) {
            held = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
    held
}

/// Steps until the app says where a save to `path` went ("Saved PATH") or why it failed: a
/// file on disk is not enough, as the worker's word (and the notice that moves the layout)
/// arrives a frame or more after the file. Whether either came.
pub fn wait_saved(harness: &mut Harness<'_, App>, path: &std::path::Path) -> bool {
    let saved = format!("Saved {}", path.display());
    step_until(harness, 1000, |a| {
        a.error().is_some() || a.status() == Some(saved.as_str())
    })
}

/// A view drawn alone as the snapshots show it: `size`, dark theme, rendered (wgpu), the app's
/// fonts, inside a central panel.
pub fn view_harness(
    size: egui::Vec2,
    mut draw: impl FnMut(&mut egui::Ui) + 'static,
) -> Harness<'static> {
    Harness::builder()
        .with_size(size)
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui(move |ui| {
            scalescope::ui::fonts::install(ui.ctx());
            egui::CentralPanel::default().show(ui, |ui| draw(ui));
        })
}

/// Types `text` into the open path field (the stand-in for a file dialog), replacing what it
/// holds, and presses OK.
pub fn enter_path(h: &mut Harness<'_, App>, text: &str) {
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Path")
        .click();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run();
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Path")
        .type_text(text);
    h.run();
    h.get_by_label("OK").click();
    h.run();
}
