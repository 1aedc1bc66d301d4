//! The Collectives view: choose GPUs, ops and algorithms, run a size sweep on a worker thread
//! (NCCL and scalescope's own all-reduce on this machine, the model elsewhere), and compare busbw
//! and time against size, with the pair's line rate as a reference; the table underneath.

use std::collections::BTreeSet;

use eframe::egui::{self, Color32, RichText, Ui};
use egui_plot::{HLine, Line, Plot, PlotPoints, Points};

use super::jobs::{RunState, spawn_job};
use super::palette;
use super::plots::LegendEntry;
use crate::bench::Warning;
use crate::bench::collectives::CollectiveOptions;
use crate::model::units::{format_bytes, parse_sizes};
use crate::model::{Algo, CollectiveOp, CollectiveResult, Source, Status, Topology};

/// Results of one run, as the view shows them.
#[derive(Clone, Debug, Default)]
pub struct CollectivesRunData {
    pub results: Vec<CollectiveResult>,
    pub warnings: Vec<Warning>,
    pub backend: String,
}

/// State of the Collectives view.
pub struct CollectivesView {
    run: RunState<CollectivesRunData>,
    ops: BTreeSet<CollectiveOp>,
    algos: BTreeSet<Algo>,
    sizes: String,
    /// Series hidden from the plots (by name), toggled in the legend.
    hidden: BTreeSet<String>,
    /// Measured results kept while "Model this machine" runs over them: the model's series are
    /// added beside them (dashed, named "(modeled)"), never in their place.
    measured: Option<CollectivesRunData>,
}

impl Default for CollectivesView {
    fn default() -> Self {
        Self {
            run: RunState::default(),
            ops: [CollectiveOp::AllReduce].into_iter().collect(),
            algos: [Algo::Nccl].into_iter().collect(),
            sizes: "1K..1G".to_string(),
            hidden: BTreeSet::new(),
            measured: None,
        }
    }
}

impl CollectivesView {
    /// Says whether the topology passed to `ui` is this machine (measured runs allowed) or
    /// another one (an opened report; runs are modeled).
    pub fn set_this_machine(&mut self, this_machine: bool) {
        self.run.set_this_machine(this_machine);
    }

    /// Sends runs to a server (`None`: this machine).
    pub fn set_runner(&mut self, runner: Option<(super::jobs::SharedRunner, String)>) {
        self.run.set_runner(runner);
    }

    /// A view showing finished results (for reports, screenshots and tests).
    pub fn with_results(topology: &Topology, data: CollectivesRunData) -> Self {
        let mut v = Self::default();
        v.run.sync_topology(topology);
        v.run.data = Some(data);
        v
    }

    /// The results on screen, if any.
    pub fn data(&self) -> Option<&CollectivesRunData> {
        self.run.data.as_ref()
    }

    /// True while a run is in flight.
    pub fn running(&self) -> bool {
        self.run.running()
    }

    /// Draws the view for `topology`.
    pub fn ui(&mut self, ui: &mut Ui, topology: &Topology) {
        self.run.sync_topology(topology);
        self.run.poll();
        if self.run.data.is_none() && !self.running() {
            // Another machine: nothing measured to keep.
            self.measured = None;
        }
        self.keep_measured();
        let measured = self.run.measures(topology);
        // Its own id: every tab keeps its own scroll offset.
        egui::ScrollArea::both()
            .id_salt("collectives-view")
            .auto_shrink([false; 2])
            .show(ui, |ui| {
                super::layout::run_settings(ui, |ui| self.controls(ui, topology, measured));
                if let Some(e) = &self.run.error {
                    ui.colored_label(palette::P2P_REFUSED, e);
                }
                match self.run.data.clone() {
                    Some(data) => results(ui, topology, &data, false, Some(&mut self.hidden)),
                    None => {
                        ui.label(
                            RichText::new(
                                "No results yet: pick GPUs, operations and algorithms, then Run.",
                            )
                            .weak(),
                        );
                    }
                }
            });
    }

    /// Draws the results as a document for a report's PNG: no run controls or other widgets,
    /// no scroll area, the plots and the largest size of each series (the full table is in
    /// collectives.csv and report.html).
    pub fn document_ui(&mut self, ui: &mut Ui, topology: &Topology) {
        match self.run.data.clone() {
            Some(data) => results(ui, topology, &data, true, None),
            None => {
                ui.label(RichText::new("No collectives results.").weak());
            }
        }
    }

    fn controls(&mut self, ui: &mut Ui, topology: &Topology, measured: bool) {
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("GPUs").strong());
            for g in topology.gpu_indices() {
                toggle(ui, &mut self.run.gpus, g, &format!("GPU{g}"));
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
            if self.running() {
                if ui.button("■ Cancel").clicked()
                    && let Some(j) = &self.run.job
                {
                    j.cancel();
                }
                if let Some(j) = &self.run.job {
                    let (done, total, _) = &j.progress;
                    let frac = if *total > 0 {
                        *done as f32 / *total as f32
                    } else {
                        0.0
                    };
                    ui.add(
                        egui::ProgressBar::new(frac)
                            .desired_width(320.0)
                            .text(format!("{done}/{total}")),
                    );
                }
            } else {
                let label = if measured {
                    format!("▶ Run on {}", self.run.where_label())
                } else {
                    "▶ Model this machine".to_string()
                };
                let ok = self.run.gpus.len() >= 2 && !self.ops.is_empty() && !self.algos.is_empty();
                if ui.add_enabled(ok, egui::Button::new(label)).clicked() {
                    self.start(ui.ctx(), topology, measured);
                }
            }
            if !measured {
                super::widgets::source_badge(ui, palette::SourceBadge::Modeled);
                ui.label(
                    RichText::new("NCCL modeled from line rates; own algorithms need real GPUs")
                        .weak(),
                );
            }
        });
    }

    fn start(&mut self, ctx: &egui::Context, topology: &Topology, measured: bool) {
        let sizes = match parse_sizes(&self.sizes) {
            Ok(s) => s,
            Err(e) => {
                self.run.error = Some(format!("Sizes: {e}"));
                return;
            }
        };
        let opts = CollectiveOptions {
            gpus: self.run.gpus.iter().copied().collect(),
            ops: self.ops.iter().copied().collect(),
            algos: self.algos.iter().copied().collect(),
            sizes,
            ..Default::default()
        };
        let topo = topology.clone();
        self.run.error = None;
        // Modeling over measured results keeps them; the model's series join them when the
        // job is done (`keep_measured`).
        self.measured = match &self.run.data {
            Some(d) if !measured && has_measured(d) => Some(CollectivesRunData {
                results: d
                    .results
                    .iter()
                    .filter(|r| r.source != Source::Modeled)
                    .cloned()
                    .collect(),
                ..d.clone()
            }),
            _ => None,
        };
        let job = crate::job::Job::Collectives {
            target: self.run.target(&topo, measured),
            options: opts,
            modeled: !measured,
            nccl_lib: None,
        };
        self.run.job = Some(spawn_job(
            ctx,
            "scalescope-collectives",
            self.run.runner.clone(),
            job,
            run_data,
        ));
    }

    /// While measured results are kept, shows them with the model's series beside them: the
    /// job delivers modeled rows only, and each time they arrive the measured rows are put back
    /// in front of them.
    fn keep_measured(&mut self) {
        let Some(kept) = &self.measured else {
            return;
        };
        match &self.run.data {
            Some(d) if has_measured(d) => {}
            Some(modeled) => {
                let mut merged = kept.clone();
                merged.results.extend(modeled.results.iter().cloned());
                merged.warnings.extend(modeled.warnings.iter().cloned());
                merged.backend = format!(
                    "{} · with modeled series: {}",
                    kept.backend, modeled.backend
                );
                self.run.data = Some(merged);
            }
            None => self.run.data = Some(kept.clone()),
        }
    }

    /// How many modeled rows are shown beside kept measured ones ("Model this machine" over
    /// a measured run); 0 when none.
    pub fn modeled_overlay(&self) -> usize {
        match (&self.measured, &self.run.data) {
            (Some(_), Some(d)) => d
                .results
                .iter()
                .filter(|r| r.source == Source::Modeled)
                .count(),
            _ => 0,
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

/// True when any result was measured (not modeled).
fn has_measured(d: &CollectivesRunData) -> bool {
    d.results.iter().any(|r| r.source != Source::Modeled)
}

/// The view's data from a job's report.
fn run_data(r: &crate::report::Report) -> CollectivesRunData {
    let c = r.collectives.as_ref();
    CollectivesRunData {
        results: c.map(|c| c.results.clone()).unwrap_or_default(),
        warnings: r.warnings.clone(),
        backend: c.map(|c| c.backend.clone()).unwrap_or_default(),
    }
}

/// One series per op × algorithm × GPU set × placement.
fn series_key(r: &CollectiveResult) -> String {
    format!(
        "{} {} · GPU {}{}{}",
        r.op,
        r.algo,
        gpu_set(&r.gpus),
        if r.in_place { " in-place" } else { "" },
        if r.source == Source::Modeled {
            " (modeled)"
        } else {
            ""
        }
    )
}

/// GPU indices with consecutive runs shortened: `0–7`, `0,1`, `0–3,6`.
fn gpu_set(gpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < gpus.len() {
        let mut j = i;
        while j + 1 < gpus.len() && gpus[j + 1] == gpus[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => gpus[i].to_string(),
            1 => format!("{},{}", gpus[i], gpus[j]),
            _ => format!("{}–{}", gpus[i], gpus[j]),
        });
        i = j + 1;
    }
    parts.join(",")
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

fn results(
    ui: &mut Ui,
    topology: &Topology,
    data: &CollectivesRunData,
    document: bool,
    mut hidden: Option<&mut BTreeSet<String>>,
) {
    ui.add_space(6.0);
    ui.label(RichText::new(&data.backend).weak());
    let mut keys: Vec<String> = Vec::new();
    for r in &data.results {
        let k = series_key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let points = |f: &dyn Fn(&CollectiveResult) -> Option<f64>, key: &str| -> Vec<[f64; 2]> {
        data.results
            .iter()
            .filter(|r| r.status == Status::Ok && series_key(r) == key)
            .filter_map(|r| Some([super::plots::size_x(r.bytes), f(r)?]))
            .collect()
    };
    let line_rate = reference_rate(topology, &data.results);
    let shown: Vec<(usize, &String)> = keys
        .iter()
        .enumerate()
        .filter(|(_, k)| !hidden.as_ref().is_some_and(|h| h.contains(*k)))
        .collect();
    // Side by side when each plot still gets a useful width, else one above the other.
    let side_by_side = ui.available_width() >= 900.0;
    let busbw = |ui: &mut Ui| {
        ui.label(RichText::new("Bus bandwidth (GB/s) vs size").strong());
        plot(ui, "coll-busbw", "GB/s", |p| {
            if let Some(l) = line_rate {
                p.hline(
                    HLine::new(format!("line rate {l:.0} GB/s"), l)
                        .color(Color32::GRAY)
                        .style(egui_plot::LineStyle::dashed_dense()),
                );
            }
            for (i, k) in &shown {
                add_series(p, *i, k, points(&|r| r.busbw_gbps, k));
            }
        });
    };
    let time = |ui: &mut Ui| {
        ui.label(RichText::new("Time per operation (µs) vs size").strong());
        // Times span five decades: log10 scale.
        plot(ui, "coll-time", "µs (log)", |p| {
            for (i, k) in &shown {
                add_series(
                    p,
                    *i,
                    k,
                    points(&|r| r.time_us.filter(|t| *t > 0.0).map(f64::log10), k),
                );
            }
        });
    };
    // The legend under the plots (under the first when they are stacked), never over their
    // data; its entries hide and show series.
    let mut entries: Vec<LegendEntry> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| LegendEntry::series(i, k.clone(), k.ends_with("(modeled)")))
        .collect();
    if let Some(l) = line_rate {
        entries.push(LegendEntry {
            name: format!("line rate {l:.0} GB/s"),
            color: Color32::GRAY,
            marker: None,
            dashed: true,
        });
    }
    let mut legend = |ui: &mut Ui| {
        super::layout::show_group(ui, |ui| {
            super::plots::legend_below(ui, &entries, hidden.as_deref_mut());
        });
    };
    if side_by_side {
        ui.columns(2, |cols| {
            busbw(&mut cols[0]);
            time(&mut cols[1]);
        });
        legend(ui);
    } else {
        busbw(ui);
        legend(ui);
        ui.add_space(6.0);
        time(ui);
    }
    ui.add_space(6.0);
    if document {
        // Each series at its largest size: a page, not hundreds of rows.
        let mut largest: Vec<CollectiveResult> = Vec::new();
        for r in &data.results {
            match largest.iter_mut().find(|x| series_key(x) == series_key(r)) {
                Some(x) if x.bytes < r.bytes => *x = r.clone(),
                Some(_) => {}
                None => largest.push(r.clone()),
            }
        }
        super::plots::section(
            ui,
            &format!(
                "Each series at its largest size ({} of {} rows; every row in collectives.csv)",
                largest.len(),
                data.results.len()
            ),
            true,
            |ui| grid(ui, &largest),
        );
        for w in crate::bench::warning::summarize(&data.warnings, 1)
            .into_iter()
            .take(3)
        {
            ui.colored_label(palette::P2P_NS, w);
        }
    } else {
        egui::CollapsingHeader::new(format!("Table ({} rows)", data.results.len()))
            .default_open(true)
            .show(ui, |ui| table(ui, &data.results));
        for w in &data.warnings {
            ui.colored_label(palette::P2P_NS, w.to_string());
        }
    }
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
        .x_axis_formatter(super::plots::size_tick)
        .allow_scroll(false);
    plot = if log {
        plot.y_axis_formatter(|mark, _| format!("{}", 10f64.powf(mark.value)))
            .label_formatter(move |pos| super::plots::size_hover_log(pos, "µs"))
    } else {
        plot.label_formatter(move |pos| super::plots::size_hover(pos, unit))
    };
    plot.show(ui, build);
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
                ui.label(gpu_set(&r.gpus));
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
    use super::gpu_set;

    #[test]
    fn gpu_sets_shorten_runs() {
        assert_eq!(gpu_set(&[0, 1, 2, 3, 4, 5, 6, 7]), "0–7");
        assert_eq!(gpu_set(&[0, 1]), "0,1");
        assert_eq!(gpu_set(&[0, 1, 2, 3, 6]), "0–3,6");
        assert_eq!(gpu_set(&[1, 3, 5]), "1,3,5");
        assert_eq!(gpu_set(&[]), "");
    }
}
