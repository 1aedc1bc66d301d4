//! The app opens every capture the command line's `--import` reads (`nvidia-smi topo -m`, `-q`,
//! `-q -x`, `nvlink`, in any mix) through the same import entry, through egui_kittest: from
//! "Open nvidia-smi output…" (the path field standing in for the file dialog), dropped on the
//! window, and given at startup.

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::data;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use scalescope::ui::{App, FileDialogs, SourceKey, Startup};

const XML: &str = "h200-2x-device-smi-q.xml";
const TOPO_M: &str = "h200-2x-device-topo-m.txt";

fn harness(app: App) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 2400.0))
        // The path field's window takes a few frames of animation to open.
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut App| app.show(ui), app);
    h.run();
    h
}

/// Steps frames until the app shows an imported machine (the import runs on a worker thread).
fn wait_for_import(h: &mut Harness<'static, App>) {
    for _ in 0..300 {
        h.step();
        if matches!(h.state().selected(), SourceKey::Imported(_)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.run();
    assert!(h.state().error().is_none(), "{:?}", h.state().error());
    assert_eq!(h.state().selected(), &SourceKey::Imported(0));
}

/// The imported machine on screen: its 2 GPUs (cards), and what the state capture says about
/// them as a health check (modeled: captures are not a measurement).
fn assert_two_gpus_with_their_state(h: &Harness<'static, App>) {
    let topology = h.state().current_topology().expect("the imported machine");
    assert_eq!(topology.gpus.len(), 2);
    assert!(h.query_by_label("GPU 0").is_some());
    assert!(h.query_by_label("GPU 1").is_some());
    let health = h.state().shown_report().and_then(|r| r.health.as_ref());
    assert!(health.is_some(), "the capture's state is checked");
    assert!(h.query_by_label("Health (scalescope check)").is_some());
}

/// File → Open nvidia-smi output…, with the path field (no file dialog here): `paths` typed.
fn open_through_the_path_field(paths: &[PathBuf]) -> Harness<'static, App> {
    let mut app = common::ui::app();
    app.set_file_dialogs(FileDialogs::PathField("no dialog here (test)".into()));
    let mut h = harness(app);
    h.get_by_label("Open nvidia-smi output…").click();
    h.run();
    assert!(h.state().path_field_open());
    let typed: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    common::ui::enter_path(&mut h, &typed.join(";"));
    wait_for_import(&mut h);
    h
}

#[test]
fn the_app_opens_an_smi_q_xml_capture() {
    let h = open_through_the_path_field(&[data(XML)]);
    assert_two_gpus_with_their_state(&h);
}

#[test]
fn an_smi_q_xml_capture_and_its_topo_m_are_one_machine() {
    let h = open_through_the_path_field(&[data(XML), data(TOPO_M)]);
    assert_two_gpus_with_their_state(&h);
    // The links come from `topo -m`.
    assert!(h.query_by_label("GPU0 GPU1 NV18").is_some());
}

/// A file dropped on the window, as a desktop hands it over.
#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn captures_dropped_on_the_window_are_one_machine() {
    let app = common::ui::app();
    let mut h = harness(app);
    for name in [XML, TOPO_M] {
        h.input_mut()
            .dropped_files
            .push(Arc::new(Dropped(data(name))));
    }
    h.step();
    wait_for_import(&mut h);
    assert_two_gpus_with_their_state(&h);
    assert!(h.query_by_label("GPU0 GPU1 NV18").is_some());
}

#[test]
fn captures_given_at_startup_are_imported() {
    let startup = Startup {
        open_paths: vec![data(XML).display().to_string()],
        ..Default::default()
    };
    let h = harness(App::new_with(Err("no NVIDIA driver found".into()), startup));
    assert_eq!(h.state().selected(), &SourceKey::Imported(0));
    assert_two_gpus_with_their_state(&h);
}
