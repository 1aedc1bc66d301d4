//! The Bandwidth view: choose GPUs and tests, run them on a worker thread (real GPUs for this
//! machine, the modeled backend for catalog and imported machines), and read the results as
//! heatmaps (GB/s and % of line rate) and bandwidth-vs-size plots.

use std::collections::BTreeSet;

use eframe::egui::{self, Color32, RichText, Ui, vec2};
use egui_plot::{Line, Plot, PlotPoints, Points};

use crate::bench::{BandwidthOptions, Warning};
use crate::model::quantities::format_bytes;
use crate::model::{BandwidthResult, Endpoint, Source, Status, TestId, Topology, fullest_size};
use crate::report::{BandwidthSection, Report};
use crate::ui::job_panel::{JobPanel, Section, modeled_line};
use crate::ui::palette;
use crate::ui::widgets::{Cell, matrix};

/// The tests ticked by default: a quick, informative first run.
const DEFAULT_TESTS: [TestId; 8] = [
    TestId::H2d,
    TestId::D2h,
    TestId::P2pReadCe,
    TestId::P2pWriteCe,
    TestId::P2pBidirCe,
    TestId::P2pWriteSm,
    TestId::P2pWriteCeNopeer,
    TestId::LatencyD2d,
];

/// State of the Bandwidth view on one source: the choices of the next run, what the results
/// show, and the run itself. The results are the source report's bandwidth section.
pub struct BandwidthView {
    panel: JobPanel<BandwidthSection>,
    tests: BTreeSet<TestId>,
    sizes: String,
    samples: u32,
    iters: u32,
    shown_test: Option<TestId>,
    shown_bytes: Option<u64>,
}

impl Default for BandwidthView {
    fn default() -> Self {
        Self {
            panel: JobPanel::default(),
            tests: DEFAULT_TESTS.into_iter().collect(),
            sizes: "512M".to_string(),
            samples: crate::bench::plan::DEFAULT_SAMPLES,
            iters: crate::bench::plan::DEFAULT_ITERS,
            shown_test: None,
            shown_bytes: None,
        }
    }
}

impl BandwidthView {
    /// The run state: where runs go, the run in flight, its error and the overlay.
    pub fn panel(&self) -> &JobPanel<BandwidthSection> {
        &self.panel
    }

    /// The run state, to change it.
    pub fn panel_mut(&mut self) -> &mut JobPanel<BandwidthSection> {
        &mut self.panel
    }

    /// Sets the sizes field as if typed (for tests and scripted use).
    pub fn set_sizes(&mut self, sizes: &str) {
        self.sizes = sizes.to_string();
    }

    /// Draws the view of `report`'s machine and bandwidth section.
    pub fn ui(&mut self, ui: &mut Ui, report: &Report) {
        let topology = &report.topology;
        self.panel.sync_gpus(topology);
        let measured = self.panel.measures(topology);
        // Its own id: every tab and every report keeps its own scroll offset (another report
        // opens at its top, not where the last one was scrolled to).
        egui::ScrollArea::both()
            .id_salt(("bandwidth-view", report.name()))
            .auto_shrink([false; 2])
            .show(ui, |ui| {
                crate::ui::layout::run_settings(ui, |ui| self.controls(ui, report, measured));
                ui.add_space(8.0);
                if let Some(e) = self.panel.error() {
                    ui.colored_label(palette::P2P_REFUSED, e);
                }
                let Some(section) = &report.bandwidth else {
                    let nothing = self.panel.nothing_yet(measured, "GPUs and tests");
                    ui.label(RichText::new(nothing).weak());
                    return;
                };
                let cancelled = report.cancelled || self.panel.cancelled();
                self.results(ui, topology, section, &report.warnings, cancelled);
            });
    }

    fn controls(&mut self, ui: &mut Ui, report: &Report, measured: bool) {
        let topology = &report.topology;
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("GPUs").strong());
            for g in topology.gpu_indices() {
                let mut on = self.panel.gpus.contains(&g);
                if ui.checkbox(&mut on, format!("GPU{g}")).changed() {
                    if on {
                        self.panel.gpus.insert(g);
                    } else {
                        self.panel.gpus.remove(&g);
                    }
                }
            }
            ui.separator();
            let l = ui.label("Sizes");
            ui.add(egui::TextEdit::singleline(&mut self.sizes).desired_width(90.0))
                .labelled_by(l.id)
                .on_hover_text("One size (512M), a list (4K,1M,1G) or a doubling sweep (4K..1G)");
            let l = ui.label("Samples");
            ui.add(egui::DragValue::new(&mut self.samples).range(1..=100))
                .labelled_by(l.id);
            let l = ui.label("Copies/sample");
            ui.add(egui::DragValue::new(&mut self.iters).range(1..=1000))
                .labelled_by(l.id);
        });
        egui::CollapsingHeader::new(format!("Tests ({} selected)", self.tests.len()))
            .id_salt("bw-tests")
            .show(ui, |ui| {
                egui::Grid::new("bw-test-grid")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for t in TestId::ALL {
                            let mut on = self.tests.contains(t);
                            if ui
                                .checkbox(&mut on, RichText::new(t.id()).monospace())
                                .changed()
                            {
                                if on {
                                    self.tests.insert(*t);
                                } else {
                                    self.tests.remove(t);
                                }
                            }
                            ui.label(RichText::new(t.describe()).weak());
                            ui.end_row();
                        }
                    });
            });
        ui.horizontal(|ui| {
            let can_run = !self.panel.gpus.is_empty() && !self.tests.is_empty();
            if self.panel.run_row(ui, measured, can_run) {
                self.start(ui.ctx(), report, measured);
            }
            let shown_measured = report.bandwidth.as_ref().is_some_and(|b| b.has_measured());
            if measured {
                ui.label(RichText::new("measured on the GPUs, every copy verified").weak());
            } else if shown_measured {
                // The badge describes what is shown: measured figures, which a model run
                // overlays rather than replaces.
                ui.label(
                    RichText::new("shows measured figures; modeling adds its figures beside them")
                        .weak(),
                );
            } else {
                modeled_line(
                    ui,
                    "figures derived from line rates × typical efficiencies, not measured",
                );
            }
        });
    }

    fn start(&mut self, ctx: &egui::Context, report: &Report, measured: bool) {
        let Some(sizes) = self.panel.sizes(&self.sizes) else {
            return;
        };
        let Some(gpus) = self.panel.gpu_selection() else {
            return;
        };
        let opts = BandwidthOptions {
            gpus,
            tests: TestId::ALL
                .iter()
                .copied()
                .filter(|t| self.tests.contains(t))
                .collect(),
            sizes,
            iters: self.iters,
            samples: self.samples,
            ..Default::default()
        };
        let shown = report.bandwidth.as_ref();
        // A model run beside measured results keeps the test and size shown; a run that
        // replaces them starts from its own.
        if measured || !shown.is_some_and(|b| b.has_measured()) {
            self.shown_test = None;
            self.shown_bytes = None;
        }
        let job = crate::job::Job::Bandwidth {
            target: self.panel.target(&report.topology, measured),
            options: opts,
            modeled: !measured,
            pcie: None,
            energy_window_s: None,
        };
        self.panel.start(ctx, "scalescope-bench", job, shown);
    }

    /// The drop-downs choosing the test and size shown.
    fn pickers(&mut self, ui: &mut Ui, tests: &[TestId], test: TestId, sizes: &[u64], bytes: u64) {
        crate::ui::layout::show_group(ui, |ui| {
            let l = ui.label("Test");
            egui::ComboBox::from_id_salt("bw-shown-test")
                .selected_text(RichText::new(test.id()).monospace())
                .show_ui(ui, |ui| {
                    for t in tests {
                        if ui.selectable_label(*t == test, t.id()).clicked() {
                            self.shown_test = Some(*t);
                        }
                    }
                })
                .response
                .labelled_by(l.id);
            let l2 = ui.label("Size");
            egui::ComboBox::from_id_salt("bw-shown-size")
                .selected_text(format_bytes(bytes))
                .show_ui(ui, |ui| {
                    for &b in sizes {
                        if ui.selectable_label(b == bytes, format_bytes(b)).clicked() {
                            self.shown_bytes = Some(b);
                        }
                    }
                })
                .response
                .labelled_by(l2.id);
            ui.label(RichText::new(test.describe()).weak());
        });
    }

    fn results(
        &mut self,
        ui: &mut Ui,
        topology: &Topology,
        data: &BandwidthSection,
        warnings: &[Warning],
        cancelled: bool,
    ) {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(&data.backend).weak());
            if cancelled {
                ui.colored_label(palette::P2P_NS, "cancelled: showing what finished");
            }
        });
        let tests: Vec<TestId> = {
            let mut v: Vec<TestId> = data.results.iter().map(|r| r.test).collect();
            v.dedup();
            v.sort();
            v.dedup();
            v
        };
        if tests.is_empty() {
            return;
        }
        let test = self
            .shown_test
            .filter(|t| tests.contains(t))
            .unwrap_or(tests[0]);
        let sizes: Vec<u64> = data
            .results
            .iter()
            .filter(|r| r.test == test)
            .map(|r| r.bytes)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // By default the size with the most cells: sweeps over sizes may cover only a few pairs.
        let bytes = self
            .shown_bytes
            .filter(|b| sizes.contains(b))
            .or_else(|| fullest_size(&data.results, test))
            .unwrap_or(0);
        self.pickers(ui, &tests, test, &sizes, bytes);
        let rows: Vec<&BandwidthResult> = data
            .results
            .iter()
            .filter(|r| r.test == test && r.bytes == bytes)
            .collect();
        ui.add_space(4.0);
        modeled_note(ui, &rows);
        let unit = if test.is_latency() {
            "ns per access"
        } else {
            "GB/s"
        };
        let draw_gbps = |ui: &mut Ui| {
            ui.label(
                RichText::new(format!("{unit} (rows: source, columns: destination)")).strong(),
            );
            heatmap(ui, &rows, topology, false);
        };
        let draw_pct = |ui: &mut Ui| {
            ui.label(RichText::new("% of line rate").strong());
            heatmap(ui, &rows, topology, true);
        };
        // Side by side when both fit, else one above the other.
        let (_, cols) = endpoints(&rows, topology);
        let one_width = 70.0 + cols.len() as f32 * 68.0;
        if test.is_latency() {
            draw_gbps(ui);
        } else if ui.available_width() >= 2.0 * one_width + 24.0 {
            ui.horizontal_top(|ui| {
                ui.vertical(|ui| draw_gbps(ui));
                ui.add_space(24.0);
                ui.vertical(|ui| draw_pct(ui));
            });
        } else {
            draw_gbps(ui);
            ui.add_space(6.0);
            draw_pct(ui);
        }
        if let Some(o) = self.panel.overlay().cloned() {
            self.overlay_ui(ui, topology, &o, test, bytes);
        }
        if sizes.len() > 1 {
            size_plot(ui, &data.results, test);
        }
        summary_table(ui, topology, &data.results);
        if !warnings.is_empty() {
            ui.add_space(6.0);
            egui::CollapsingHeader::new(format!("Warnings ({})", warnings.len()))
                .default_open(true)
                .show(ui, |ui| {
                    for w in warnings {
                        ui.colored_label(palette::P2P_NS, w.to_string());
                    }
                });
        }
    }
}

impl BandwidthView {
    /// The modeled overlay beside the measured heatmap: the same test and size, labeled with
    /// where its efficiencies come from, and a button that clears it.
    fn overlay_ui(
        &mut self,
        ui: &mut Ui,
        topology: &Topology,
        overlay: &BandwidthSection,
        test: TestId,
        bytes: u64,
    ) {
        ui.add_space(8.0);
        ui.horizontal_wrapped(|ui| {
            crate::ui::widgets::source_badge(ui, palette::SourceBadge::ModeledOverlay);
            ui.label(
                RichText::new(format!(
                    "{test}, {} — beside the measured figures above",
                    format_bytes(bytes)
                ))
                .strong(),
            );
            if ui.button("Clear overlay").clicked() {
                self.panel.clear_overlay();
            }
        });
        let rows: Vec<&BandwidthResult> = overlay
            .results
            .iter()
            .filter(|r| r.test == test && r.bytes == bytes)
            .collect();
        if rows.is_empty() {
            ui.label(
                RichText::new("The modeled run has no figures for this test and size.").weak(),
            );
            return;
        }
        modeled_note(ui, &rows);
        ui.push_id("bw-overlay", |ui| heatmap(ui, &rows, topology, false));
    }
}

/// Above modeled figures: `modeled — efficiencies from nvbandwidth on H200 (CE read
/// efficiency)`, every distinct source of the figures shown; nothing for measured ones.
fn modeled_note(ui: &mut Ui, rows: &[&BandwidthResult]) {
    let mut sources: Vec<String> = rows
        .iter()
        .filter(|r| r.source == Source::Modeled && r.status == Status::Ok)
        .filter_map(|r| r.reason.as_deref())
        .filter_map(crate::report::summary::efficiency_source)
        .collect();
    sources.sort();
    sources.dedup();
    if sources.is_empty() {
        return;
    }
    ui.label(
        RichText::new(format!(
            "modeled — efficiencies from {}",
            sources.join("; ")
        ))
        .italics()
        .color(palette::SourceBadge::Modeled.color()),
    );
}

/// A color from red (0) through amber to green (1).
fn scale(x: f64) -> Color32 {
    let x = x.clamp(0.0, 1.0) as f32;
    let (r, g) = if x < 0.5 {
        (0.80, 0.25 + 1.0 * x)
    } else {
        (0.80 - 1.2 * (x - 0.5), 0.75)
    };
    Color32::from_rgb((r * 255.0) as u8, (g * 255.0) as u8, (0.30 * 255.0) as u8)
}

fn endpoints(rows: &[&BandwidthResult], topology: &Topology) -> (Vec<Endpoint>, Vec<Endpoint>) {
    let mut srcs: Vec<Endpoint> = rows.iter().map(|r| r.src).collect();
    let mut dsts: Vec<Endpoint> = rows.iter().map(|r| r.dst).collect();
    let gpu_square =
        srcs.iter().chain(&dsts).all(|e| e.gpu().is_some()) && rows.iter().any(|r| r.src != r.dst);
    if gpu_square {
        let used: BTreeSet<usize> = srcs.iter().chain(&dsts).filter_map(|e| e.gpu()).collect();
        srcs = topology
            .gpu_indices()
            .into_iter()
            .filter(|g| used.contains(g))
            .map(Endpoint::Gpu)
            .collect();
        dsts = srcs.clone();
    }
    srcs.sort();
    srcs.dedup();
    dsts.sort();
    dsts.dedup();
    (srcs, dsts)
}

fn label(e: Endpoint) -> String {
    match e {
        Endpoint::Gpu(g) => format!("GPU{g}"),
        other => other.to_string(),
    }
}

/// Hover text: median, min, max, samples, cv, wrong, status.
fn detail(r: &BandwidthResult) -> String {
    let f = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.1}"));
    let mut s = format!(
        "{} {}→{} · {}\n",
        r.test,
        r.src,
        r.dst,
        format_bytes(r.bytes)
    );
    if r.test.is_latency() {
        s.push_str(&format!("median {} ns per access\n", f(r.latency_ns)));
    } else {
        s.push_str(&format!(
            "median {} GB/s (min {}, max {})\n",
            f(r.median_gbps),
            f(r.min_gbps),
            f(r.max_gbps)
        ));
    }
    if let (Some(a), Some(b)) = (r.fwd_gbps, r.rev_gbps) {
        s.push_str(&format!("each direction: {a:.1} + {b:.1} GB/s\n"));
    }
    if !r.sample_values.is_empty() {
        let samples: Vec<String> = r.sample_values.iter().map(|v| format!("{v:.1}")).collect();
        s.push_str(&format!("samples: {}\n", samples.join(", ")));
    }
    if let Some(cv) = r.cv {
        s.push_str(&format!("cv {:.2}%\n", cv * 100.0));
    }
    if let (Some(l), Some(e)) = (r.line_rate_gbps, r.efficiency) {
        s.push_str(&format!("{:.0}% of {l:.1} GB/s line rate\n", e * 100.0));
    }
    s.push_str(&format!(
        "wrong elements: {}\nstatus: {} · {}",
        r.wrong.map_or("not checked".to_string(), |w| w.to_string()),
        r.status,
        r.source
    ));
    if let Some(reason) = &r.reason {
        s.push_str(&format!("\n{reason}"));
    }
    s
}

fn heatmap(ui: &mut Ui, rows: &[&BandwidthResult], topology: &Topology, percent: bool) {
    let (srcs, dsts) = endpoints(rows, topology);
    let max = rows
        .iter()
        .filter_map(|r| {
            if r.test.is_latency() {
                r.latency_ns
            } else {
                r.median_gbps
            }
        })
        .fold(0.0_f64, f64::max);
    let col_labels: Vec<String> = dsts.iter().map(|e| label(*e)).collect();
    let row_labels: Vec<String> = srcs.iter().map(|e| label(*e)).collect();
    let kind = if percent { "pct" } else { "gbps" };
    matrix(
        ui,
        &format!("bw-{kind}"),
        &col_labels,
        &row_labels,
        vec2(64.0, 26.0),
        &[],
        |ri, ci| {
            let (s, d) = (srcs[ri], dsts[ci]);
            let Some(r) = rows.iter().find(|r| r.src == s && r.dst == d) else {
                let text = if s == d { "X" } else { "—" };
                return Some(Cell::single(
                    text,
                    None,
                    format!("{kind} {s} {d} none"),
                    String::new(),
                ));
            };
            let modeled = r.source == Source::Modeled;
            let (text, fill) = match r.status {
                Status::Ok => {
                    let (v, frac) = if percent {
                        (r.efficiency.map(|e| e * 100.0), r.efficiency)
                    } else if r.test.is_latency() {
                        (
                            r.latency_ns,
                            r.latency_ns.map(|v| 1.0 - v / max.max(1.0) * 0.5),
                        )
                    } else {
                        (r.median_gbps, r.median_gbps.map(|v| v / max.max(1e-9)))
                    };
                    let text = v.map_or("—".to_string(), |v| {
                        let t = if v >= 100.0 {
                            format!("{v:.0}")
                        } else {
                            format!("{v:.1}")
                        };
                        if percent { format!("{t}%") } else { t }
                    });
                    let text = if modeled { format!("~{text}") } else { text };
                    (text, frac.map(scale))
                }
                other => (other.to_string(), Some(palette::UNKNOWN)),
            };
            Some(Cell::single(
                text.clone(),
                fill,
                format!("{kind} {s} {d} {text}"),
                detail(r),
            ))
        },
    );
}

/// `test` against buffer size, one curve per endpoint pair measured at more than one size
/// (x = log2(bytes), labeled in KiB/MiB/GiB), under its heading; nothing when no pair was.
fn size_plot(ui: &mut Ui, results: &[BandwidthResult], test: TestId) {
    type Series = ((Endpoint, Endpoint), Vec<[f64; 2]>);
    let mut series: Vec<Series> = Vec::new();
    for r in results
        .iter()
        .filter(|r| r.test == test && r.status == Status::Ok)
    {
        let y = if test.is_latency() {
            r.latency_ns
        } else {
            r.median_gbps
        };
        let Some(y) = y else { continue };
        let key = (r.src, r.dst);
        let p = [crate::ui::plots::size_x(r.bytes), y];
        match series.iter_mut().find(|(k, _)| *k == key) {
            // A size measured twice (a sweep and the one-size pass over every pair) keeps its
            // first figure, as the matrix does; two points at one x would fold the line back.
            Some((_, v)) if v.iter().any(|q| q[0] == p[0]) => {}
            Some((_, v)) => v.push(p),
            None => series.push((key, vec![p])),
        }
    }
    let pairs = series.len();
    // A pair measured at one size is a matrix cell, not a curve.
    series.retain(|(_, v)| v.len() > 1);
    if series.is_empty() {
        return;
    }
    ui.add_space(8.0);
    ui.label(RichText::new(format!("{test} vs buffer size")).strong());
    let mut notes = Vec::new();
    if series.len() < pairs {
        notes.push(format!(
            "{} of {pairs} pairs measured over sizes; the others at one size (see the matrix)",
            series.len()
        ));
    }
    let legend = series.len() <= crate::ui::plots::LEGEND_MAX;
    if !legend {
        notes.push("hover a line to name its pair".to_string());
    }
    if !notes.is_empty() {
        ui.label(RichText::new(notes.join("; ")).size(11.5).weak());
    }
    let modeled = results
        .iter()
        .any(|r| r.test == test && r.source == Source::Modeled);
    let unit = if test.is_latency() { "ns" } else { "GB/s" };
    let name =
        |s: &Endpoint, d: &Endpoint| format!("{s}→{d}{}", if modeled { " (modeled)" } else { "" });
    let entries: Vec<crate::ui::plots::LegendEntry> = series
        .iter()
        .enumerate()
        .map(|(i, ((s, d), _))| crate::ui::plots::LegendEntry::series(i, name(s, d), modeled))
        .collect();
    // From zero: a flat (modeled) line read as a steep ramp on an axis of 55.29–55.39 GB/s.
    Plot::new(format!("bw-size-{test}"))
        .height(260.0)
        .include_y(0.0)
        .x_axis_label("buffer size")
        .y_axis_label(unit)
        .x_axis_formatter(crate::ui::plots::size_tick)
        .label_formatter(move |pos| crate::ui::plots::size_hover(pos, unit))
        .allow_scroll(false)
        .show(ui, |plot| {
            for (i, ((s, d), mut pts)) in series.into_iter().enumerate() {
                pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
                let color = palette::series_color(i);
                let name = name(&s, &d);
                let mut line = Line::new(name.clone(), PlotPoints::from(pts.clone())).color(color);
                if modeled {
                    line = line.style(egui_plot::LineStyle::dashed_loose());
                }
                plot.line(line);
                plot.points(
                    Points::new(name, PlotPoints::from(pts))
                        .radius(3.5)
                        .shape(palette::series_marker(i))
                        .color(color),
                );
            }
        });
    // The legend under the plot, never over its data.
    if legend {
        crate::ui::plots::legend_below(ui, &entries, None);
    }
}

/// One line per test, read at ONE size ([`crate::model::headline`]: 512 MiB, nvbandwidth's
/// default, where the test ran at it, else the size with the most cells): the median over the
/// cells there and their efficiency; wrong elements and rows not ok over every size.
/// The last column gives the figures published for machines with this GPU (the catalog's
/// `[[reference]]`), their sources and what differs on hover.
fn summary_table(ui: &mut Ui, topology: &Topology, results: &[BandwidthResult]) {
    let published = crate::report::published::beside(topology, results, &[]);
    ui.add_space(8.0);
    crate::ui::plots::section(ui, "Summary per test", |ui| {
        ui.label(
            RichText::new(
                "Each test at one size: 512 MiB (nvbandwidth's default) where it ran there, \
                 else the size with the most cells, marked. % of line rate: of the links the \
                 figure crosses — one link for pairs (×2 bidirectional), the GPU's PCIe for \
                 host tests (per GPU), the centre GPU's links together for all_to_one, \
                 one_to_all and all_pairs (totals).",
            )
            .size(11.5)
            .weak(),
        );
        egui::Grid::new("bw-summary")
            .striped(true)
            .num_columns(8)
            .show(ui, |ui| {
                for h in [
                    "test",
                    "size",
                    "median",
                    "cells",
                    "% of line rate",
                    "wrong (all sizes)",
                    "not ok",
                    "published",
                ] {
                    ui.label(RichText::new(h).strong());
                }
                ui.end_row();
                let mut tests: Vec<TestId> = results.iter().map(|r| r.test).collect();
                tests.sort();
                tests.dedup();
                for t in tests {
                    let rows: Vec<&BandwidthResult> =
                        results.iter().filter(|r| r.test == t).collect();
                    let not_ok = rows.iter().filter(|r| r.status != Status::Ok).count();
                    let head = crate::model::headline(results, t);
                    ui.label(RichText::new(t.id()).monospace());
                    match &head {
                        Some(h) if h.at_default_size() => {
                            ui.label(crate::model::quantities::format_bytes(h.bytes))
                        }
                        Some(h) => ui
                            .label(format!(
                                "{} (no 512 MiB)",
                                crate::model::quantities::format_bytes(h.bytes)
                            ))
                            .on_hover_text(
                                "the test did not run at 512 MiB: read at the size with the \
                                 most cells (the largest on a tie)",
                            ),
                        None => ui.label("—"),
                    };
                    let unit = if t.is_latency() { "ns" } else { "GB/s" };
                    let med = head
                        .as_ref()
                        .map_or("—".to_string(), |h| format!("{:.1} {unit}", h.median));
                    ui.label(if head.as_ref().is_some_and(|h| h.modeled) {
                        RichText::new(format!("{med} (modeled)")).italics()
                    } else {
                        RichText::new(med)
                    });
                    ui.label(
                        head.as_ref()
                            .map_or("0".to_string(), |h| h.cells.to_string()),
                    );
                    match head.as_ref().and_then(|h| Some((h, h.efficiency?))) {
                        Some((h, e)) if h.above_line_rate > 0 => {
                            ui.label(
                                RichText::new(format!("{:.0}% — above line rate", e * 100.0))
                                    .color(palette::VERDICT_WARN),
                            )
                            .on_hover_text(format!(
                                "{} of {} cell(s) above {:.0}% of the line rate, which a \
                                 correct measurement cannot exceed: distrust this figure",
                                h.above_line_rate,
                                h.cells,
                                crate::model::PLAUSIBLE_EFFICIENCY * 100.0
                            ));
                        }
                        Some((_, e)) => {
                            ui.label(format!("{:.0}%", e * 100.0));
                        }
                        None => {
                            ui.label("—");
                        }
                    }
                    let wrong: Option<u64> =
                        rows.iter().filter_map(|r| r.wrong).reduce(|a, b| a + b);
                    ui.label(wrong.map_or("—".to_string(), |w| w.to_string()));
                    ui.label(not_ok.to_string());
                    published_cell(ui, &published, t);
                    ui.end_row();
                }
            });
    });
}

/// The published figures of test `t`, short (`48 threshold · 51 measured`), each one's line —
/// conditions, source, ours, what differs — on hover; `—` where none is published.
fn published_cell(ui: &mut Ui, published: &[crate::report::published::Beside], t: TestId) {
    let of_test: Vec<&crate::report::published::Beside> = published
        .iter()
        .filter(|b| b.reference.figure == crate::model::published::Figure::Copy(t))
        .collect();
    if of_test.is_empty() {
        ui.label("—");
        return;
    }
    let short: Vec<String> = of_test
        .iter()
        .map(|b| format!("{:.0} {}", b.reference.value, b.reference.kind))
        .collect();
    let lines: Vec<String> = of_test.iter().map(|b| b.line()).collect();
    ui.label(RichText::new(short.join(" · ")).color(palette::PUBLISHED))
        .on_hover_text(lines.join("\n"));
}
