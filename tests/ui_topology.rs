//! The Topology view and the app shell, through egui_kittest: snapshots of catalog machines and
//! interactions (switching sources, the no-driver banner, hover text on matrix cells).
//!
//! Snapshots live in tests/snapshots/; after a deliberate change run
//! `UPDATE_SNAPSHOTS=1 cargo test --test ui_topology` and look at the new PNGs.

mod common;

use common::ui::app_harness;
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use scalescope::model::Topology;
use scalescope::topology::catalog;
use scalescope::ui::views::topology as topology_view;
use scalescope::ui::{App, SourceKey, Startup, snapshot};

const NO_DRIVER: &str = "no NVIDIA driver found (cannot load libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file)";

/// A node's text, wherever AccessKit keeps it (labels keep it as their value).
fn text_of(node: &egui_kittest::Node<'_>) -> String {
    let n = node.accesskit_node();
    n.label().or_else(|| n.value()).unwrap_or_default()
}

fn load(id: &str) -> Topology {
    catalog::load(id).unwrap_or_else(|e| panic!("catalog {id}: {e}"))
}

fn view_harness(topology: Topology, height: f32) -> Harness<'static> {
    Harness::builder()
        .with_size(egui::vec2(1400.0, height))
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui(move |ui| {
            egui::CentralPanel::default().show(ui, |ui| {
                egui::ScrollArea::both().show(ui, |ui| topology_view::show(ui, &topology));
            });
        })
}

#[test]
fn snapshot_dgx_h100() {
    let mut harness = view_harness(load("dgx-h100"), 1700.0);
    harness.run();
    harness.snapshot("topology_dgx_h100");
}

#[test]
fn snapshot_l40s() {
    let mut harness = view_harness(load("l40s-8x-pcie"), 1700.0);
    harness.run();
    harness.snapshot("topology_l40s_8x_pcie");
}

#[test]
fn snapshot_two_gpus_nvlink_bridge() {
    let mut harness = view_harness(load("h100-pcie-2x-nvlink"), 1000.0);
    harness.run();
    harness.snapshot("topology_h100_pcie_2x_nvlink");
}

#[test]
fn snapshot_health_panel_of_a_degraded_capture() {
    use scalescope::health::run::{CheckOptions, check_described};
    let data = |n: &str| format!("{}/tests/data/{n}", env!("CARGO_MANIFEST_DIR"));
    let paths: Vec<String> = [
        "h200-2x-edited-gen4x8-smi-q.xml",
        "h200-2x-device-topo-m.txt",
        "h200-2x-device-topo-p2p.txt",
        "h200-2x-edited-nvlink-down-nvlink-s.txt",
    ]
    .iter()
    .map(|n| data(n))
    .collect();
    let m = scalescope::topology::machine_import::import_machine(&paths).unwrap();
    let mut topology = m.topology;
    // Fixed names and time: the snapshot must not depend on where the repository lives.
    topology.source = scalescope::model::TopologySource::Imported {
        paths: vec!["h200-2x-degraded (edited captures)".into()],
    };
    let mut health = check_described(
        &topology,
        m.inventory,
        m.after,
        &CheckOptions::default(),
        &scalescope::job::modeled_as_stated,
    );
    health.created_at = "2026-11-23T12:00:00Z".into();
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 1500.0))
        .with_theme(egui::Theme::Dark)
        .wgpu()
        .build_ui(move |ui| {
            egui::CentralPanel::default().show(ui, |ui| {
                egui::ScrollArea::both().show(ui, |ui| {
                    topology_view::show_with_health(ui, &topology, Some(&health))
                });
            });
        });
    harness.run();
    // GPU 1 (PCIe Gen4 x8, an NVLink down) fails; the pair's copies pass (modeled).
    assert!(harness.query_by_label("health GPU1 FAIL").is_some());
    assert!(harness.query_by_label("health GPU0–GPU1 PASS").is_some());
    harness.snapshot("topology_health_h200_degraded");
}

#[test]
fn side_panel_lists_catalog_entries() {
    let harness = app_harness(App::new_with(Err(NO_DRIVER.into()), Startup::default()));
    for entry in catalog::entries() {
        assert!(
            harness.query_all_by_label(&entry.name).next().is_some(),
            "side panel lacks catalog entry {}",
            entry.name
        );
    }
    assert!(harness.query_by_label("This machine").is_some());
    assert!(harness.query_by_label("Open nvidia-smi output…").is_some());
}

#[test]
fn no_driver_opens_on_the_example_or_dgx_h100_with_banner() {
    let harness = app_harness(App::new_with(Err(NO_DRIVER.into()), Startup::default()));
    let app = harness.state();
    assert_eq!(app.live_error(), Some(NO_DRIVER));
    let banner = harness.get_by_label_contains("No NVIDIA driver was found on this machine");
    let text = text_of(&banner);
    if scalescope::report::bundled::reports().is_empty() {
        // No bundled example: the catalog's DGX H100, named in the side panel and the header.
        assert_eq!(app.selected(), &SourceKey::Catalog("dgx-h100".into()));
        assert!(text.contains("not measured"), "{text}");
        assert_eq!(harness.query_all_by_label("NVIDIA DGX H100").count(), 2);
    } else {
        // The bundled example report, said to be one and measured elsewhere.
        assert!(
            matches!(app.selected(), SourceKey::Report(_)),
            "{:?}",
            app.selected()
        );
        assert!(text.contains("bundled example report"), "{text}");
        assert!(text.contains("not on this machine"), "{text}");
    }
}

/// The bundled example says what it is: an example measured elsewhere, named by its machine
/// ("2× H200 SXM"), never with a live or "measured here" badge.
#[test]
fn the_bundled_example_is_not_live_and_is_named_by_its_machine() {
    if scalescope::report::bundled::reports().is_empty() {
        return;
    }
    let mut harness = app_harness(App::new_with(Err(NO_DRIVER.into()), Startup::default()));
    // The two-GPU example.
    let i = harness
        .state()
        .reports()
        .iter()
        .position(|e| e.example && e.report.topology.gpus.len() == 2)
        .expect("the 2-GPU example");
    harness.state_mut().apply(
        &egui::Context::default(),
        scalescope::ui::Action::Select(SourceKey::Report(i)),
    );
    harness.run();
    assert!(harness.query_by_label("LIVE").is_none());
    assert!(harness.query_by_label("MEASURED HERE").is_none());
    assert!(harness.query_all_by_label("EXAMPLE").count() >= 2);
    assert!(
        harness
            .query_all_by_label_contains("2× H200 SXM · vm")
            .next()
            .is_some()
    );
    assert!(
        harness
            .query_by_label_contains("example (measured on 2× H200 SXM")
            .is_some()
    );
}

#[test]
fn banner_can_be_dismissed() {
    let mut harness = app_harness(App::new_with(Err(NO_DRIVER.into()), Startup::default()));
    harness.get_by_label("Dismiss").click();
    harness.run();
    assert!(
        harness
            .query_by_label_contains("No NVIDIA driver was found")
            .is_none()
    );
}

#[test]
fn live_topology_is_shown_without_banner() {
    let mut live = load("h200-2x-sxm");
    live.source = scalescope::model::TopologySource::Live {
        hostname: Some("gpu-box-17".into()),
        driver_version: Some("580.65".into()),
        nvml_version: None,
        cuda_driver_version: Some(13000),
    };
    let harness = app_harness(App::new_with(Ok(live), Startup::default()));
    assert_eq!(harness.state().selected(), &SourceKey::Live);
    assert!(harness.query_by_label("gpu-box-17").is_some());
    assert!(
        harness
            .query_by_label_contains("No NVIDIA driver was found")
            .is_none()
    );
}

#[test]
fn clicking_a_catalog_entry_switches_the_machine() {
    let mut harness = app_harness(App::new_with(Err(NO_DRIVER.into()), Startup::default()));
    let l40s = catalog::entries()
        .into_iter()
        .find(|e| e.id == "l40s-8x-pcie")
        .expect("catalog has l40s-8x-pcie");
    harness.get_by_label(&l40s.name).click();
    harness.run();
    let app = harness.state();
    assert_eq!(app.selected(), &SourceKey::Catalog("l40s-8x-pcie".into()));
    let shown = app.current_topology().expect("a topology is shown");
    assert_eq!(shown.gpus.len(), 8);
    // The name now appears twice: in the side panel and as the view's title.
    assert_eq!(harness.query_all_by_label(&l40s.name).count(), 2);
    // A PIX cell exists in the matrix now (the DGX H100 has none between GPUs).
    assert!(harness.query_by_label("GPU0 GPU1 PIX").is_some());
}

#[test]
fn bad_import_shows_a_dismissible_error() {
    let startup = Startup {
        open_paths: vec!["/nonexistent/scalescope-topo.txt".into()],
        ..Default::default()
    };
    let mut harness = app_harness(App::new_with(Err(NO_DRIVER.into()), startup));
    assert!(harness.state().error().is_some());
    assert!(harness.query_by_label_contains("Import failed").is_some());
    // Two Dismiss buttons (error line, banner): the error line comes first.
    harness
        .get_all_by_label("Dismiss")
        .next()
        .expect("a dismiss button")
        .click();
    harness.run();
    assert!(harness.state().error().is_none());
}

#[test]
fn hovering_a_matrix_cell_shows_the_legend() {
    let topology = load("l40s-8x-pcie");
    let mut harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 1700.0))
        .build_ui(move |ui| {
            egui::CentralPanel::default().show(ui, |ui| topology_view::show(ui, &topology));
        });
    harness.get_by_label("GPU0 GPU4 SYS").hover();
    harness.run();
    let tip = harness.get_by_label_contains("SYS = Connection traversing PCIe as well as the SMP");
    let text = text_of(&tip);
    assert!(
        text.contains("Line rate: 31.5 GB/s per direction"),
        "{text}"
    );
    assert!(text.contains("PCIe Gen4 x16"), "{text}");
}

#[test]
fn unknown_values_show_a_dash_not_zero() {
    let mut t = load("l40s-8x-pcie");
    for g in &mut t.gpus {
        g.memory_mib = None;
        g.numa_node = None;
    }
    for l in &mut t.links {
        l.line_rate = None;
    }
    let harness = Harness::builder()
        .with_size(egui::vec2(1400.0, 1700.0))
        .build_ui(move |ui| {
            egui::CentralPanel::default().show(ui, |ui| topology_view::show(ui, &t));
        });
    assert!(harness.query_by_label("rate GPU0 GPU1 unknown").is_some());
    assert!(harness.query_all_by_label("0 GiB").next().is_none());
}

#[test]
fn render_topology_png_gives_png_bytes() {
    let png = snapshot::render_topology_png(&load("h200-2x-sxm"), 900, 700).expect("render");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

/// Writes screenshots/topology-*.png through `render_topology_png`.
/// Run with `cargo test --test ui_topology -- --ignored regenerate_screenshots`.
#[test]
#[ignore]
fn regenerate_screenshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots");
    std::fs::create_dir_all(&dir).expect("create screenshots/");
    for (id, file) in [
        ("dgx-h100", "topology-dgx-h100.png"),
        ("l40s-8x-pcie", "topology-l40s.png"),
        ("h100-pcie-2x-nvlink", "topology-h100-pcie-2x-nvlink.png"),
    ] {
        let t = load(id);
        let width = 1400;
        let height = snapshot::topology_height(&t, width).expect("measure");
        let png = snapshot::render_topology_png(&t, width, height).expect("render");
        std::fs::write(dir.join(file), png).expect("write screenshot");
    }
}

/// A rack of 72 GPUs (issue Q): the drawing shows the switch trays and 18 compute trays of 4
/// GPUs; the top of the view is what a user sees first.
#[test]
fn snapshot_gb200_nvl72() {
    let mut harness = view_harness(load("gb200-nvl72"), 1300.0);
    harness.run();
    harness.snapshot("topology_gb200_nvl72");
}

/// A constructed 72-GPU capture with GPU 5 at 12 of 18 NVLinks: the drawing marks that GPU.
#[test]
fn snapshot_72_gpus_one_degraded() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let paths = [
        format!("{dir}/tests/data/gb200-nvl72-constructed-gpu5-nv12-topo-m.txt"),
        format!("{dir}/tests/data/gb200-nvl72-constructed-gpu5-nvlink-s.txt"),
    ];
    // Drawn as the app opens an import: the machine as it runs (`--import` loads the same).
    let topology = scalescope::topology::machine_import::import_machine(&paths)
        .unwrap()
        .running();
    assert_eq!(topology.gpus[5].nvlinks_active, Some(12));
    assert_eq!(topology.gpus[4].nvlinks_active, Some(18));
    let mut harness = view_harness(topology, 700.0);
    harness.run();
    harness.snapshot("topology_72_gpus_gpu5_degraded");
}
