//! The Collectives view: choose GPUs, ops and algorithms, run a size sweep on a worker thread
//! (NCCL and scalescope's own all-reduce on this machine, the model elsewhere), and compare busbw
//! and time against size, with the pair's line rate as a reference; the table underneath.

use std::borrow::Cow;
use std::collections::BTreeSet;

use eframe::egui::{self, Color32, RichText, Ui};
use egui_plot::{HLine, Line, Plot, PlotPoints, Points};

use crate::bench::Warning;
use crate::bench::collectives::CollectiveOptions;
use crate::model::published::Figure;
use crate::model::quantities::format_bytes;
use crate::model::{Algo, CollectiveOp, CollectiveResult, Source, Status, Topology};
use crate::report::published::{Beside, beside};
use crate::report::{CollectivesSection, Report};
use crate::ui::job_panel::{JobPanel, modeled_line};
use crate::ui::palette;
use crate::ui::plots::LegendEntry;

/// State of the Collectives view on one source: the choices of the next run, the series hidden,
/// and the run itself. The results are the source report's collectives section, with a model
/// run's series beside measured ones (dashed, named "(modeled)").
pub struct CollectivesView {
    panel: JobPanel<CollectivesSection>,
    ops: BTreeSet<CollectiveOp>,
    algos: BTreeSet<Algo>,
    sizes: String,
    /// Series hidden from the plots (by name), toggled in the legend.
    hidden: BTreeSet<String>,
}

impl Default for CollectivesView {
    fn default() -> Self {
        Self {
            panel: JobPanel::default(),
            ops: [CollectiveOp::AllReduce].into_iter().collect(),
            algos: [Algo::Nccl].into_iter().collect(),
            sizes: "1K..1G".to_string(),
            hidden: BTreeSet::new(),
        }
    }
}

impl CollectivesView {
    /// The run state: where runs go, the run in flight, its error and the overlay.
    pub fn panel(&self) -> &JobPanel<CollectivesSection> {
        &self.panel
    }

    /// The run state, to change it.
    pub fn panel_mut(&mut self) -> &mut JobPanel<CollectivesSection> {
        &mut self.panel
    }

    /// Draws the view of `report`'s machine and collectives section.
    pub fn ui(&mut self, ui: &mut Ui, report: &Report) {
        let topology = &report.topology;
        self.panel.sync_gpus(topology);
        let measured = self.panel.measures(topology);
        // Its own id: every tab and every report keeps its own scroll offset (another report
        // opens at its top, not where the last one was scrolled to).
        egui::ScrollArea::both()
            .id_salt(("collectives-view", report.name()))
            .auto_shrink([false; 2])
            .show(ui, |ui| {
                crate::ui::layout::run_settings(ui, |ui| self.controls(ui, report, measured));
                if let Some(e) = self.panel.error() {
                    ui.colored_label(palette::P2P_REFUSED, e);
                }
                match &report.collectives {
                    Some(section) => {
                        let shown = Shown::new(section, self.panel.overlay());
                        let warnings = self.panel.warnings();
                        results(ui, topology, &shown, warnings, &mut self.hidden);
                    }
                    None => {
                        let what = "GPUs, operations and algorithms";
                        let nothing = self.panel.nothing_yet(measured, what);
                        ui.label(RichText::new(nothing).weak());
                    }
                }
            });
    }

    fn controls(&mut self, ui: &mut Ui, report: &Report, measured: bool) {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("GPUs").strong());
            for g in report.topology.gpu_indices() {
                toggle(ui, &mut self.panel.gpus, g, &format!("GPU{g}"));
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Ops").strong());
            for op in CollectiveOp::ALL {
                toggle(ui, &mut self.ops, *op, op.id());
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Algorithms").strong());
            for a in Algo::ALL {
                toggle(ui, &mut self.algos, *a, a.id()).on_hover_text(match a {
                    Algo::Nccl => "NCCL (loaded at run time)",
                    Algo::Ring => "scalescope's ring all-reduce over P2P: reduce-scatter then all-gather, chunked",
                    Algo::Tree => "Caffe's scheme: pairs reduce up a binary tree, the root broadcasts down",
                    Algo::Host => "via host: copy to pinned memory, sum on the CPU, copy back (the floor)",
                });
            }
            ui.separator();
            let l = ui.label("Sizes");
            ui.add(egui::TextEdit::singleline(&mut self.sizes).desired_width(90.0))
                .labelled_by(l.id);
        });
        ui.horizontal(|ui| {
            let ok = self.panel.gpus.len() >= 2 && !self.ops.is_empty() && !self.algos.is_empty();
            if self.panel.run_row(ui, measured, ok) {
                self.start(ui.ctx(), report, measured);
            }
            if !measured {
                modeled_line(
                    ui,
                    "NCCL modeled from line rates; own algorithms need real GPUs",
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
        let opts = CollectiveOptions {
            gpus,
            ops: self.ops.iter().copied().collect(),
            algos: self.algos.iter().copied().collect(),
            sizes,
            ..Default::default()
        };
        let job = crate::job::Job::Collectives {
            target: self.panel.target(&report.topology, measured),
            options: opts,
            modeled: !measured,
            nccl_lib: None,
            energy_window_s: None,
        };
        let shown = report.collectives.as_ref();
        self.panel.start(ctx, "scalescope-collectives", job, shown);
    }

    /// How many modeled rows are shown beside measured ones ("Model this machine" over a
    /// measured run); 0 when none.
    pub fn modeled_overlay(&self) -> usize {
        self.panel.overlay().map_or(0, |o| o.results.len())
    }
}

/// What the view draws: the source's section, with a model run's rows after its own when one
/// is kept beside it.
struct Shown<'a> {
    rows: Cow<'a, [CollectiveResult]>,
    backend: Cow<'a, str>,
}

impl<'a> Shown<'a> {
    fn new(section: &'a CollectivesSection, overlay: Option<&'a CollectivesSection>) -> Self {
        match overlay {
            None => Self {
                rows: Cow::Borrowed(&section.results),
                backend: Cow::Borrowed(&section.backend),
            },
            Some(o) => Self {
                rows: section.results.iter().chain(&o.results).cloned().collect(),
                backend: Cow::Owned(format!(
                    "{} · with modeled series: {}",
                    section.backend, o.backend
                )),
            },
        }
    }
}

fn toggle<T: Ord + Copy>(ui: &mut Ui, set: &mut BTreeSet<T>, v: T, label: &str) -> egui::Response {
    let mut on = set.contains(&v);
    let r = ui.checkbox(&mut on, label);
    if r.changed() {
        if on {
            set.insert(v);
        } else {
            set.remove(&v);
        }
    }
    r
}

/// One series per op × algorithm × GPU set × placement.
fn series_key(r: &CollectiveResult) -> String {
    format!(
        "{} {} · GPU {}{}{}",
        r.op,
        r.algo,
        crate::model::quantities::gpu_set(&r.gpus),
        if r.in_place { " in-place" } else { "" },
        if r.source == Source::Modeled {
            " (modeled)"
        } else {
            ""
        }
    )
}

/// The slowest per-direction line rate among the GPUs of the results.
fn reference_rate(topology: &Topology, results: &[CollectiveResult]) -> Option<f64> {
    let gpus: BTreeSet<usize> = results
        .iter()
        .flat_map(|r| r.gpus.iter().copied())
        .collect();
    let gpus: Vec<usize> = gpus.into_iter().collect();
    let mut rate: Option<f64> = None;
    for (i, &a) in gpus.iter().enumerate() {
        for &b in &gpus[i + 1..] {
            let r = topology.link(a, b)?.line_rate.as_ref()?.gbps;
            rate = Some(rate.map_or(r, |x: f64| x.min(r)));
        }
    }
    rate
}

/// The plots, the legend (its entries hide and show series) and the table.
fn results(
    ui: &mut Ui,
    topology: &Topology,
    data: &Shown<'_>,
    warnings: &[Warning],
    hidden: &mut BTreeSet<String>,
) {
    ui.add_space(6.0);
    ui.label(RichText::new(data.backend.as_ref()).weak());
    // Nothing ran (one GPU, no NCCL): say why, in the rows' own words, in place of plots that
    // would have nothing to draw (an empty axis and a legend of series that do not exist).
    let none_ran = CollectivesSection::none_ran_in(&data.rows);
    if data.rows.is_empty() {
        ui.colored_label(
            palette::P2P_NS,
            "No results: the run has not reached its first size, or stopped before it.",
        );
    } else if none_ran {
        let mut reasons: Vec<&str> = data
            .rows
            .iter()
            .filter_map(|r| r.reason.as_deref())
            .collect();
        reasons.sort_unstable();
        reasons.dedup();
        ui.colored_label(
            palette::P2P_NS,
            format!(
                "None of the {} results ran: {}",
                data.rows.len(),
                if reasons.is_empty() {
                    "no reason recorded".to_string()
                } else {
                    reasons.join("; ")
                }
            ),
        );
    }
    if !none_ran {
        result_plots(ui, topology, data, hidden);
    }
    ui.add_space(6.0);
    egui::CollapsingHeader::new(format!("Table ({} rows)", data.rows.len()))
        .default_open(!none_ran)
        .show(ui, |ui| table(ui, &data.rows));
    for w in warnings {
        ui.colored_label(palette::P2P_NS, w.to_string());
    }
}

/// The two plots, with the legend (its entries hide and show series) and the published figures.
fn result_plots(ui: &mut Ui, topology: &Topology, data: &Shown<'_>, hidden: &mut BTreeSet<String>) {
    let plots = ResultPlots::new(topology, &data.rows, hidden);
    // The legend under the plots (under the first when they are stacked), never over their
    // data; its entries hide and show series.
    let entries = plots.legend_entries();
    let mut legend = |ui: &mut Ui| {
        crate::ui::layout::show_group(ui, |ui| {
            crate::ui::plots::legend_below(ui, &entries, Some(&mut *hidden));
        });
        published_list(ui, &plots.published);
    };
    // Side by side when each plot still gets a useful width, else one above the other.
    if ui.available_width() >= 900.0 {
        ui.columns(2, |cols| {
            plots.busbw(&mut cols[0]);
            plots.time(&mut cols[1]);
        });
        legend(ui);
    } else {
        plots.busbw(ui);
        legend(ui);
        ui.add_space(6.0);
        plots.time(ui);
    }
}

/// The two plots of a run's rows: their series, the line rate and the published figures.
struct ResultPlots<'a> {
    rows: &'a [CollectiveResult],
    /// Every series' key, in the order of the rows.
    keys: Vec<String>,
    /// The series not hidden, with their index in `keys` (their colour).
    shown: Vec<(usize, String)>,
    /// The line rate drawn as a dashed line, GB/s.
    line_rate: Option<f64>,
    /// Published busbw figures for machines like this one, for the operations shown.
    published: Vec<Beside>,
    /// Those of them at the rows' GPU count: the lines on the plot.
    drawn: Vec<Beside>,
    /// Published marks hidden from the legend, read before the legend may change them.
    hidden_marks: BTreeSet<String>,
}

impl<'a> ResultPlots<'a> {
    fn new(topology: &Topology, rows: &'a [CollectiveResult], hidden: &BTreeSet<String>) -> Self {
        let mut keys: Vec<String> = Vec::new();
        for r in rows {
            let k = series_key(r);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        // Drawn beside the rows only at their own GPU count: a figure of 8 GPUs is not a line
        // on a plot of 2 (the list under the legend still names it, with the difference).
        let here = rows
            .iter()
            .filter(|r| r.status == Status::Ok)
            .map(|r| r.gpus.len())
            .max();
        let published: Vec<Beside> = beside(topology, &[], rows)
            .into_iter()
            .filter(|b| match b.reference.figure {
                Figure::Collective(op) => rows.iter().any(|r| r.op == op),
                Figure::Copy(_) => false,
            })
            .collect();
        let drawn: Vec<Beside> = published
            .iter()
            .filter(|b| {
                here.is_some() && b.reference.conditions.gpus.is_none_or(|g| Some(g) == here)
            })
            .cloned()
            .collect();
        let shown = keys
            .iter()
            .enumerate()
            .filter(|(_, k)| !hidden.contains(*k))
            .map(|(i, k)| (i, k.clone()))
            .collect();
        let hidden_marks = published
            .iter()
            .map(published_name)
            .filter(|n| hidden.contains(n))
            .collect();
        Self {
            line_rate: reference_rate(topology, rows),
            rows,
            keys,
            shown,
            published,
            drawn,
            hidden_marks,
        }
    }

    /// The points of series `key`: size against what `f` reads of each row that ran.
    fn points(&self, f: &dyn Fn(&CollectiveResult) -> Option<f64>, key: &str) -> Vec<[f64; 2]> {
        self.rows
            .iter()
            .filter(|r| r.status == Status::Ok && series_key(r) == key)
            .filter_map(|r| Some([crate::ui::plots::size_x(r.bytes), f(r)?]))
            .collect()
    }

    fn busbw(&self, ui: &mut Ui) {
        ui.label(RichText::new("Bus bandwidth (GB/s) vs size").strong());
        plot(ui, "coll-busbw", "GB/s", |p| {
            if let Some(l) = self.line_rate {
                p.hline(
                    HLine::new(format!("line rate {l:.0} GB/s"), l)
                        .color(Color32::GRAY)
                        .style(egui_plot::LineStyle::dashed_dense()),
                );
            }
            for b in self
                .drawn
                .iter()
                .filter(|b| !self.hidden_marks.contains(&published_name(b)))
            {
                p.hline(
                    HLine::new(published_name(b), b.reference.value)
                        .color(palette::PUBLISHED)
                        .style(egui_plot::LineStyle::dotted_dense()),
                );
            }
            for (i, k) in &self.shown {
                add_series(p, *i, k, self.points(&|r| r.busbw_gbps, k));
            }
        });
    }

    fn time(&self, ui: &mut Ui) {
        ui.label(RichText::new("Time per operation (µs) vs size").strong());
        // Times span five decades: log10 scale.
        plot(ui, "coll-time", "µs (log)", |p| {
            for (i, k) in &self.shown {
                let log_time =
                    |r: &CollectiveResult| r.time_us.filter(|t| *t > 0.0).map(f64::log10);
                add_series(p, *i, k, self.points(&log_time, k));
            }
        });
    }

    /// The legend's entries: every series, the line rate, the published figures.
    fn legend_entries(&self) -> Vec<LegendEntry> {
        let mut entries: Vec<LegendEntry> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| LegendEntry::series(i, k.clone(), k.ends_with("(modeled)")))
            .collect();
        if let Some(l) = self.line_rate {
            entries.push(LegendEntry {
                name: format!("line rate {l:.0} GB/s"),
                color: Color32::GRAY,
                marker: None,
                dashed: true,
            });
        }
        for b in &self.drawn {
            entries.push(LegendEntry {
                name: published_name(b),
                color: palette::PUBLISHED,
                marker: None,
                dashed: true,
            });
        }
        entries
    }
}

/// A published figure's name on the plot and in the legend: `published all_reduce busbw 478.9
/// GB/s (measured, 8 GPUs)`.
fn published_name(b: &Beside) -> String {
    let r = b.reference;
    let gpus = r
        .conditions
        .gpus
        .map(|n| format!(", {n} GPUs"))
        .unwrap_or_default();
    format!(
        "published {} {:.1} {} ({}{gpus})",
        r.figure, r.value, r.unit, r.kind
    )
}

/// The published figures under the legend, closed at first: one line each, its source, ours
/// beside it and what differs on hover.
fn published_list(ui: &mut Ui, published: &[Beside]) {
    if published.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!(
        "Published figures ({}; drawn where taken at this run's GPU count)",
        published.len()
    ))
    .id_salt("coll-published")
    .default_open(false)
    .show(ui, |ui| {
        for b in published {
            let r = b.reference;
            let text = format!(
                "{} {:.1} {} {}{} — {}",
                r.figure,
                r.value,
                r.unit,
                r.kind,
                r.conditions
                    .gpus
                    .map(|n| format!(" ({n} GPUs)"))
                    .unwrap_or_default(),
                r.source.short()
            );
            let mut hover = b.line();
            if let Some(n) = &r.note {
                hover.push_str(&format!("\n{n}"));
            }
            ui.label(RichText::new(text).color(palette::PUBLISHED))
                .on_hover_text(hover);
        }
    });
}

/// The `i`-th series: a line (dashed when modeled) with the series' own marker and colour.
fn add_series(p: &mut egui_plot::PlotUi<'_>, i: usize, name: &str, pts: Vec<[f64; 2]>) {
    let color = palette::series_color(i);
    let mut line = Line::new(name.to_string(), PlotPoints::from(pts.clone())).color(color);
    if name.ends_with("(modeled)") {
        line = line.style(egui_plot::LineStyle::dashed_loose());
    }
    p.line(line);
    p.points(
        Points::new(name.to_string(), PlotPoints::from(pts))
            .radius(3.5)
            .shape(palette::series_marker(i))
            .color(color),
    );
}

fn plot(ui: &mut Ui, id: &str, unit: &'static str, build: impl FnOnce(&mut egui_plot::PlotUi<'_>)) {
    let log = unit.ends_with("(log)");
    let mut plot = Plot::new(id)
        .height(260.0)
        .x_axis_label("size")
        .y_axis_label(unit)
        .x_axis_formatter(crate::ui::plots::size_tick)
        .allow_scroll(false);
    plot = if log {
        plot.y_axis_formatter(|mark, _| log_tick(mark.value))
            .label_formatter(move |pos| crate::ui::plots::size_hover_log(pos, "µs"))
    } else {
        plot.include_y(0.0)
            .label_formatter(move |pos| crate::ui::plots::size_hover(pos, unit))
    };
    plot.show(ui, build);
}

/// A tick of a log10 axis as the value it stands for, to three significant digits (`2.51`, not
/// `2.51188643150958`).
fn log_tick(log10: f64) -> String {
    let v = 10f64.powf(log10);
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        let decimals = (2 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        format!("{v:.decimals$}")
    }
}

fn table(ui: &mut Ui, results: &[CollectiveResult]) {
    egui::ScrollArea::vertical()
        .max_height(320.0)
        .show(ui, |ui| grid(ui, results));
}

/// Every row of `results`, as a grid.
fn grid(ui: &mut Ui, results: &[CollectiveResult]) {
    egui::Grid::new("coll-table")
        .striped(true)
        .num_columns(10)
        .show(ui, |ui| {
            for h in [
                "op",
                "algo",
                "GPUs",
                "size",
                "time (µs)",
                "algbw",
                "busbw",
                "#wrong",
                "status",
                "source",
            ] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            let f = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.2}"));
            for r in results {
                ui.label(RichText::new(r.op.id()).monospace());
                ui.label(r.algo.id());
                ui.label(crate::model::quantities::gpu_set(&r.gpus));
                ui.label(format_bytes(r.bytes));
                ui.label(f(r.time_us));
                ui.label(f(r.algbw_gbps));
                ui.label(f(r.busbw_gbps));
                ui.label(r.wrong.map_or("—".to_string(), |w| w.to_string()));
                let status = ui.label(r.status.to_string());
                if let Some(reason) = &r.reason {
                    status.on_hover_text(reason);
                }
                ui.label(if r.source == Source::Modeled {
                    RichText::new("modeled").italics()
                } else {
                    RichText::new("measured")
                });
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::log_tick;

    #[test]
    fn log_ticks_read_as_three_significant_digits() {
        assert_eq!(log_tick(0.4), "2.51");
        assert_eq!(log_tick(0.3), "2.00");
        assert_eq!(log_tick(2.0), "100");
        assert_eq!(log_tick(3.5), "3162");
        assert_eq!(log_tick(-1.0), "0.100");
    }
}
