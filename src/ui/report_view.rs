//! A report as pictures: the one-page summary (`report.png`) and each view rendered offscreen
//! with a report's data (`topology.png`, `bandwidth.png`, …), through [`super::snapshot`].

use eframe::egui::{self, RichText, Ui};

use super::bandwidth_view::{BandwidthRunData, BandwidthView};
use super::collectives_view::{CollectivesRunData, CollectivesView};
use super::scaling_view::ScalingView;
use super::{compare_view, palette, snapshot, topology_view};
use crate::health::HealthReport;
use crate::model::{Source, Topology};
use crate::report::Report;
use crate::report::compare;
use crate::scaling::Mode;

/// Width of every rendered page, points.
pub const PAGE_WIDTH: u32 = 1400;
/// Least height of `report.png`, points.
const SUMMARY_HEIGHT: u32 = 1150;
/// Workloads shown in `scaling.png`.
const SCALING_SHOWN: usize = 3;

/// The Bandwidth view filled with a report's results.
pub fn bandwidth_view(r: &Report) -> Option<BandwidthView> {
    let b = r.bandwidth.as_ref()?;
    Some(BandwidthView::with_results(
        &r.topology,
        BandwidthRunData {
            results: b.results.clone(),
            warnings: r.warnings.clone(),
            backend: b.backend.clone(),
            cancelled: r.cancelled,
        },
    ))
}

/// The Collectives view filled with a report's results.
pub fn collectives_view(r: &Report) -> Option<CollectivesView> {
    let c = r.collectives.as_ref()?;
    Some(CollectivesView::with_results(
        &r.topology,
        CollectivesRunData {
            results: c.results.clone(),
            warnings: Vec::new(),
            backend: c.backend.clone(),
        },
    ))
}

/// The Scaling view showing a report's run as it was produced.
pub fn scaling_view(r: &Report, shown: usize) -> Option<ScalingView> {
    let s = r.scaling.as_ref()?;
    Some(ScalingView::with_report(s.run.clone(), shown))
}

/// One line naming the report and where its figures come from, for banners and page headers.
pub fn provenance(r: &Report) -> String {
    let src = |s: Option<Source>| s.map_or("—".to_string(), |s| s.to_string());
    [
        r.title(),
        format!(
            "bandwidth {}, collectives {}, scaling {}",
            src(r.bandwidth.as_ref().map(|b| b.source)),
            src(r.collectives.as_ref().map(|c| c.source)),
            src(r.scaling.as_ref().map(|s| s.source)),
        ),
        format!("scalescope {}", r.machine.scalescope_version),
    ]
    .join("  ·  ")
}

/// The facts line: GPUs, driver, CUDA, NCCL.
pub fn facts(r: &Report) -> String {
    let m = &r.machine;
    let d = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    format!(
        "{}  ·  driver {}  ·  CUDA {}  ·  NCCL {}",
        r.gpu_summary().unwrap_or_else(|| "0 GPUs".into()),
        d(&m.driver_version),
        d(&m.cuda_version),
        d(&m.nccl_version)
    )
}

/// The one-page summary: title, provenance, key figures, connectivity, P2P heatmap, the busbw
/// curve and scaling efficiency.
pub fn summary(ui: &mut Ui, r: &Report) {
    // Plots take the available width: keep it to the page.
    ui.set_max_width(ui.available_width());
    ui.horizontal(|ui| {
        topology_view::source_badge(ui, &r.topology.source);
        if r.has_modeled() {
            topology_view::badge(ui, "MODELED", palette::source_badge("catalog"));
        }
        ui.label(
            RichText::new(format!(
                "{} — GPU interconnect report",
                topology_view::title(&r.topology)
            ))
            .size(24.0)
            .strong(),
        );
    });
    ui.label(RichText::new(facts(r)).size(14.0));
    ui.label(RichText::new(provenance(r)).weak());
    if r.cancelled {
        ui.colored_label(
            palette::P2P_NS,
            "Interrupted run: the figures are what finished.",
        );
    }
    if let Some(h) = &r.health {
        ui.add_space(8.0);
        super::health_view::summary_line(ui, h);
    }
    ui.add_space(10.0);
    let c = compare::compare(&[r], None);
    ui.columns(2, |cols| {
        cols[0].label(RichText::new("Key figures").strong().size(16.0));
        egui::Grid::new("summary-keys")
            .striped(true)
            .spacing([18.0, 6.0])
            .show(&mut cols[0], |ui| {
                for row in &c.rows {
                    let f = &row.figures[0];
                    ui.label(&row.name);
                    let mut t = RichText::new(compare::format_figure(f))
                        .size(18.0)
                        .strong()
                        .monospace();
                    if f.source == Some(Source::Modeled) {
                        t = t.italics();
                    }
                    ui.label(t);
                    ui.label(RichText::new(&f.basis).size(11.0).weak());
                    ui.end_row();
                }
            });
        if c.rows
            .iter()
            .any(|row| row.figures[0].source == Some(Source::Modeled))
        {
            cols[0].label(
                RichText::new("~ modeled: derived from line rates, not measured")
                    .size(11.5)
                    .weak(),
            );
        }
        cols[1].label(RichText::new("P2P bandwidth").strong());
        compare_view::p2p_heatmap(&mut cols[1], r);
    });
    ui.add_space(10.0);
    ui.label(RichText::new("Connectivity (nvidia-smi topo -m)").strong());
    topology_view::connectivity_matrix(ui, &r.topology);
    ui.add_space(10.0);
    ui.label(RichText::new("All-reduce bus bandwidth (NCCL), GB/s vs size").strong());
    compare_view::busbw_plot(ui, "summary-busbw", &[r], 240.0);
    if let Some(w) = &c.workload {
        ui.add_space(8.0);
        ui.label(RichText::new(format!("Scaling efficiency — {w}")).strong());
        ui.columns(2, |cols| {
            for (col, mode) in cols.iter_mut().zip(Mode::ALL) {
                col.label(RichText::new(format!("{mode} scaling")).italics());
                compare_view::efficiency_plot(
                    col,
                    &format!("summary-eff-{mode}"),
                    &[r],
                    w,
                    mode,
                    180.0,
                );
            }
        });
        compare_view::scaling_table(ui, "summary-scaling-table", &[r], w);
    }
    if !r.warnings.is_empty() {
        ui.add_space(6.0);
        ui.label(RichText::new(format!("{} warning(s)", r.warnings.len())).strong());
        for w in r.warnings.iter().take(6) {
            ui.colored_label(palette::P2P_NS, w.to_string());
        }
    }
}

/// The pictures of a report: `(file name, PNG bytes or why not)` for report.png and one per view
/// that has data.
pub fn render_all(r: &Report) -> Vec<(&'static str, anyhow::Result<Vec<u8>>)> {
    let mut out = Vec::new();
    let rep = r.clone();
    // As tall as the summary (8 GPUs make the heatmap and matrix taller), at least a page.
    let h = snapshot::fit_height(PAGE_WIDTH, |ui| summary(ui, r))
        .unwrap_or(SUMMARY_HEIGHT)
        .clamp(SUMMARY_HEIGHT, 8192);
    out.push((
        "report.png",
        snapshot::render_png(PAGE_WIDTH, h, egui::Theme::Dark, move |ui| {
            summary(ui, &rep)
        }),
    ));
    out.push((
        "topology.png",
        render_topology_with_health(&r.topology, r.health.as_ref()),
    ));
    if let Some(mut v) = bandwidth_view(r) {
        let t = r.topology.clone();
        out.push((
            "bandwidth.png",
            snapshot::render_png(PAGE_WIDTH, 1400, egui::Theme::Dark, move |ui| v.ui(ui, &t)),
        ));
    }
    if let Some(mut v) = collectives_view(r) {
        let t = r.topology.clone();
        out.push((
            "collectives.png",
            snapshot::render_png(PAGE_WIDTH, 1100, egui::Theme::Dark, move |ui| v.ui(ui, &t)),
        ));
    }
    if let Some(mut v) = scaling_view(r, SCALING_SHOWN) {
        let t = r.topology.clone();
        let h = 420 + 620 * SCALING_SHOWN as u32;
        out.push((
            "scaling.png",
            snapshot::render_png(PAGE_WIDTH, h, egui::Theme::Dark, move |ui| v.ui(ui, &t)),
        ));
    }
    out
}

/// The Topology view of `topology`, as tall as it needs.
pub fn render_topology(topology: &Topology) -> anyhow::Result<Vec<u8>> {
    render_topology_with_health(topology, None)
}

/// The Topology view of `topology` with its Health panel when a check is given.
pub fn render_topology_with_health(
    topology: &Topology,
    health: Option<&HealthReport>,
) -> anyhow::Result<Vec<u8>> {
    let (t, h) = (topology.clone(), health.cloned());
    let height = snapshot::fit_height(PAGE_WIDTH, |ui| {
        topology_view::show_with_health(ui, &t, h.as_ref())
    })?
    .min(8192);
    let (t, h) = (topology.clone(), health.cloned());
    snapshot::render_png(PAGE_WIDTH, height, egui::Theme::Dark, move |ui| {
        topology_view::show_with_health(ui, &t, h.as_ref())
    })
}
