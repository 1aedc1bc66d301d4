//! A report as pictures: the one-page summary (`report.png`) and each view rendered offscreen
//! with a report's data (`topology.png`, `bandwidth.png`, …), through [`super::snapshot`].

use eframe::egui::{self, RichText, Ui};

use super::bandwidth_view::BandwidthView;
use super::collectives_view::CollectivesView;
use super::palette::SourceBadge;
use super::scaling_view::ScalingView;
use super::{compare_view, palette, snapshot, topology_view, widgets};
use crate::health::HealthReport;
use crate::model::{Algo, CollectiveOp, Source, Topology};
use crate::report::Report;
use crate::report::compare;
use crate::report::summary::{self as report_summary, Provenance};
use crate::scaling::Mode;

/// Width of every rendered page, points.
pub const PAGE_WIDTH: u32 = 1400;
/// Least height of `report.png`, points.
const SUMMARY_HEIGHT: u32 = 900;
/// Workloads shown in `scaling.png`.
const SCALING_SHOWN: usize = 3;

/// A view with the report it draws, for a report's pages (and tests) that draw a view without
/// the app.
pub struct ViewPage<V> {
    /// The view's state (what it shows).
    pub view: V,
    /// The report whose sections it draws.
    pub report: Report,
}

impl ViewPage<BandwidthView> {
    /// The view as the app shows it (with its run controls).
    pub fn ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.ui(ui, &self.report);
    }

    /// The view as a page (no widgets). `_topology` is the report's own: the page renderer
    /// passes it.
    pub fn document_ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.document_ui(ui, &self.report);
    }
}

impl ViewPage<CollectivesView> {
    /// The view as the app shows it (with its run controls).
    pub fn ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.ui(ui, &self.report);
    }

    /// The view as a page (no widgets). `_topology` is the report's own: the page renderer
    /// passes it.
    pub fn document_ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.document_ui(ui, &self.report);
    }
}

impl ViewPage<ScalingView> {
    /// The view as the app shows it (with its controls).
    pub fn ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.ui(ui, &mut self.report);
    }

    /// The view as a page (no widgets). `_topology` is the report's own: the page renderer
    /// passes it.
    pub fn document_ui(&mut self, ui: &mut Ui, _topology: &Topology) {
        self.view.document_ui(ui, &self.report);
    }
}

/// The Bandwidth view of a report, when it has bandwidth results.
pub fn bandwidth_view(r: &Report) -> Option<ViewPage<BandwidthView>> {
    r.bandwidth.as_ref()?;
    Some(ViewPage {
        view: BandwidthView::default(),
        report: r.clone(),
    })
}

/// The Collectives view of a report, when it has collectives results.
pub fn collectives_view(r: &Report) -> Option<ViewPage<CollectivesView>> {
    r.collectives.as_ref()?;
    Some(ViewPage {
        view: CollectivesView::default(),
        report: r.clone(),
    })
}

/// The Scaling view of a report (its first `shown` workloads), when it has scaling results.
pub fn scaling_view(r: &Report, shown: usize) -> Option<ViewPage<ScalingView>> {
    r.scaling.as_ref()?;
    Some(ViewPage {
        view: ScalingView::for_report(r, shown),
        report: r.clone(),
    })
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

/// What an opened report shows, in the app's provenance vocabulary: a short badge (`example`,
/// `report file`, `modeled`) and the words behind it (`example (measured on 2× H200 SXM · vm,
/// 2026-11-22)`). Nothing in a report is "measured here": only this machine's own runs are.
pub struct Origin {
    /// The badge.
    pub badge: SourceBadge,
    /// The badge's meaning, for hover text and headers.
    pub text: String,
}

/// The [`Origin`] of `r`; `example` for the reports bundled with scalescope.
pub fn origin(r: &Report, example: bool) -> Origin {
    let machine = report_summary::machine_title(r);
    let modeled = [
        r.bandwidth.as_ref().map(|b| b.source),
        r.collectives.as_ref().map(|c| c.source),
    ]
    .contains(&Some(Source::Modeled));
    let what = if modeled {
        format!("modeled ({})", report_summary::efficiencies_from(r))
    } else {
        format!("measured on {machine}, {}", r.date())
    };
    if example {
        Origin {
            badge: SourceBadge::Example,
            text: format!("example ({what})"),
        }
    } else if modeled {
        Origin {
            badge: SourceBadge::Modeled,
            text: format!("{what} · {machine}"),
        }
    } else {
        Origin {
            badge: SourceBadge::ReportFile,
            text: format!("report file ({what})"),
        }
    }
}

/// The name of a report in the Sources list: `2× H200 SXM · vm · 2026-11-22`, with
/// `(modeled)` when any figure is.
pub fn list_name(r: &Report) -> String {
    let name = format!("{} · {}", report_summary::machine_title(r), r.date());
    if r.has_modeled() {
        format!("{name} (modeled)")
    } else {
        name
    }
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
        d(&report_summary::nccl_version(r))
    )
}

/// A provenance as the page colors it: measured plain, modeled amber italics, projected violet.
fn provenance_text(p: &Provenance, size: f32) -> RichText {
    let t = RichText::new(p.text()).size(size);
    match p {
        Provenance::Measured => t.color(palette::P2P_OK),
        Provenance::Modeled(_) => t.italics().color(MODELED_TEXT),
        Provenance::Projected => t.italics().color(PROJECTED_TEXT),
        Provenance::None => t.weak(),
    }
}

/// Modeled figures' text: amber dark enough to read on white.
const MODELED_TEXT: egui::Color32 = egui::Color32::from_rgb(0x9a, 0x5b, 0x06);
/// Projected figures' text.
const PROJECTED_TEXT: egui::Color32 = egui::Color32::from_rgb(0x5b, 0x21, 0xb6);

/// A section heading of the page.
fn heading(ui: &mut Ui, text: &str) {
    ui.add_space(12.0);
    ui.label(RichText::new(text).size(17.0).strong());
    ui.separator();
}

/// The one-page report (`report.png`), made for print (drawn in the light theme, no widgets):
/// what the machine is, the health verdict, the key figures with their definitions and
/// provenance, the topology and bandwidth matrices, the all-reduce and scaling curves, the
/// scaling table, and the warnings counted with the worst named.
pub fn summary(ui: &mut Ui, r: &Report) {
    // Plots take the available width: keep it to the page.
    ui.set_max_width(ui.available_width());
    // Identity: what the machine is first, where it ran second.
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(report_summary::machine_name(r))
                .size(28.0)
                .strong(),
        );
        if r.has_modeled() {
            widgets::badge(ui, "contains modeled figures", SourceBadge::Modeled.color());
        }
    });
    if let Some(i) = report_summary::interconnect(r) {
        ui.label(RichText::new(format!("GPUs connected by {i}")).size(15.0));
    }
    ui.label(RichText::new(report_summary::identity_line(r)).size(13.0));
    ui.label(
        RichText::new(report_summary::origin_line(r))
            .size(12.0)
            .weak(),
    );
    if r.cancelled {
        ui.colored_label(
            palette::P2P_REFUSED,
            "Interrupted run: the figures are what finished.",
        );
    }
    verdict(ui, r);
    key_figures(ui, r);
    heading(ui, "Topology and P2P bandwidth");
    ui.columns(2, |cols| {
        cols[0].label(RichText::new("Connectivity (nvidia-smi topo -m)").strong());
        topology_view::connectivity_matrix(&mut cols[0], &r.topology);
        cols[1].label(
            RichText::new("P2P bandwidth, GB/s (rows: source, columns: destination)").strong(),
        );
        compare_view::p2p_heatmap(&mut cols[1], r);
    });
    if r.collectives.is_some() {
        heading(
            ui,
            "All-reduce bus bandwidth vs size (nccl-tests' busbw = algbw × 2(n−1)/n)",
        );
        // Where the curve comes from: a modeled run's rows name the efficiency they used.
        let row = r.collectives.as_ref().and_then(|c| {
            c.results
                .iter()
                .find(|x| x.op == CollectiveOp::AllReduce && x.algo == Algo::Nccl)
        });
        if let Some(x) = row {
            ui.label(provenance_text(
                &report_summary::result_provenance(x.source, x.reason.as_deref()),
                12.0,
            ));
        }
        compare_view::busbw_plot(ui, "summary-busbw", &[r], 220.0);
    }
    let c = compare::compare(&[r], None);
    if let Some(w) = &c.workload {
        heading(
            ui,
            &format!("Scaling efficiency — {w} (dashed: modeled; beyond the box: projected)"),
        );
        ui.columns(2, |cols| {
            for (col, mode) in cols.iter_mut().zip(Mode::ALL) {
                col.label(RichText::new(format!("{mode} scaling")).italics());
                compare_view::efficiency_plot(
                    col,
                    &format!("summary-eff-{mode}"),
                    &[r],
                    w,
                    mode,
                    170.0,
                );
            }
        });
        compare_view::scaling_table(ui, "summary-scaling-table", &[r], w);
    }
    heading(ui, &format!("Warnings: {}", r.warnings.len()));
    if r.warnings.is_empty() {
        ui.label("None.");
    } else {
        for w in report_summary::warnings_lines(r, 3) {
            ui.colored_label(MODELED_TEXT, w);
        }
        ui.label(
            RichText::new("Every warning: report.json and report.html.")
                .size(12.0)
                .weak(),
        );
    }
}

/// The health verdict: PASS/WARN/FAIL with the counts and the worst findings, or why there is
/// none.
fn verdict(ui: &mut Ui, r: &Report) {
    heading(ui, "Health verdict (scalescope check)");
    let Some(h) = &r.health else {
        ui.label("No health check in this report (the stage was not run).");
        return;
    };
    ui.horizontal(|ui| {
        let word = if h.source == Source::Modeled {
            format!("{} (modeled)", h.verdict)
        } else {
            h.verdict.to_string()
        };
        widgets::badge(ui, &word, palette::verdict_fill(h.verdict));
        let c = &h.counts;
        ui.label(
            RichText::new(format!(
                "{} pass · {} warn · {} fail · {} unknown",
                c.pass, c.warn, c.fail, c.unknown
            ))
            .size(15.0),
        );
    });
    if h.source == Source::Modeled {
        ui.label(
            RichText::new(
                "Modeled: derived from the links as read or stated, not measured — not a PASS of a real machine.",
            )
            .italics()
            .color(MODELED_TEXT),
        );
    }
    let worst = report_summary::worst_findings(r, 4);
    if worst.is_empty() {
        ui.label(if h.source == Source::Modeled {
            "Every check passed, as modeled."
        } else {
            "Every check passed."
        });
    }
    for f in worst {
        ui.label(RichText::new(report_summary::finding_line(f)).size(12.5));
    }
}

/// The key figures: name, value, the definition it follows, provenance.
fn key_figures(ui: &mut Ui, r: &Report) {
    heading(ui, "Key figures");
    let width = ui.available_width();
    egui::Grid::new("summary-keys")
        .striped(true)
        .spacing([16.0, 5.0])
        .num_columns(4)
        .show(ui, |ui| {
            for h in ["figure", "value", "definition", "provenance"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for k in report_summary::key_figures(r) {
                ui.label(&k.name);
                let mut v = RichText::new(k.value_text())
                    .size(16.0)
                    .strong()
                    .monospace();
                if matches!(k.provenance, Provenance::Modeled(_)) {
                    v = v.italics();
                }
                ui.label(v);
                ui.vertical(|ui| {
                    // A fixed share of the page, so the definitions wrap into lines, not letters.
                    ui.set_width((width * 0.36).max(260.0));
                    ui.label(RichText::new(&k.definition).size(12.0));
                    if !k.detail.is_empty() && k.detail.starts_with("over all") {
                        ui.label(RichText::new(&k.detail).size(11.0).weak());
                    }
                });
                ui.scope(|ui| {
                    ui.set_max_width((width * 0.2).max(160.0));
                    ui.add(egui::Label::new(provenance_text(&k.provenance, 12.0)).wrap());
                });
                ui.end_row();
            }
        });
}

/// The pictures of a report: `(file name, PNG bytes or why not)` for report.png and one per view
/// that has data. Every page is drawn in the light theme, for print, as tall as its contents,
/// and the views without their run controls ([`BandwidthView::document_ui`] and its kin).
pub fn render_all(r: &Report) -> Vec<(&'static str, anyhow::Result<Vec<u8>>)> {
    let mut out = Vec::new();
    out.push((
        "report.png",
        render_page(SUMMARY_HEIGHT, || {
            let r = r.clone();
            move |ui: &mut Ui| summary(ui, &r)
        }),
    ));
    out.push((
        "topology.png",
        render_topology_with_health(&r.topology, r.health.as_ref()),
    ));
    if bandwidth_view(r).is_some() {
        out.push((
            "bandwidth.png",
            render_page(300, || {
                let (mut v, t) = (bandwidth_view(r), r.topology.clone());
                move |ui: &mut Ui| {
                    if let Some(v) = &mut v {
                        v.document_ui(ui, &t);
                    }
                }
            }),
        ));
    }
    if collectives_view(r).is_some() {
        out.push((
            "collectives.png",
            render_page(300, || {
                let (mut v, t) = (collectives_view(r), r.topology.clone());
                move |ui: &mut Ui| {
                    if let Some(v) = &mut v {
                        v.document_ui(ui, &t);
                    }
                }
            }),
        ));
    }
    if scaling_view(r, SCALING_SHOWN).is_some() {
        out.push((
            "scaling.png",
            render_page(300, || {
                let (mut v, t) = (scaling_view(r, SCALING_SHOWN), r.topology.clone());
                move |ui: &mut Ui| {
                    if let Some(v) = &mut v {
                        v.document_ui(ui, &t);
                    }
                }
            }),
        ));
    }
    out
}

/// Renders what `make()` draws on a light page [`PAGE_WIDTH`] wide and as tall as it draws (at
/// least `least`, at most 8192 points): once laid out to measure, once rendered.
fn render_page<F: FnMut(&mut Ui) + 'static>(
    least: u32,
    make: impl Fn() -> F,
) -> anyhow::Result<Vec<u8>> {
    let mut measure = make();
    let h = snapshot::fit_height(PAGE_WIDTH, |ui| measure(ui))
        .unwrap_or(least)
        .clamp(least, 8192);
    let mut draw = make();
    snapshot::render_png(PAGE_WIDTH, h, egui::Theme::Light, move |ui| draw(ui))
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
    snapshot::render_png(PAGE_WIDTH, height, egui::Theme::Light, move |ui| {
        topology_view::show_with_health(ui, &t, h.as_ref())
    })
}
