//! The Compare view: two or more reports side by side — key figures with the difference in %,
//! link matrices, P2P bandwidth heatmaps, all-reduce busbw curves and scaling curves overlaid,
//! one color per machine. Pure drawing over [`Report`]s.

use eframe::egui::{self, Color32, RichText, Ui};
use egui_plot::{Line, LineStyle, MarkerShape, Plot, PlotPoints, Points};

use crate::model::{Algo, CollectiveOp, Source, Status, TestId};
use crate::report::Report;
use crate::report::compare::{self, Comparison, format_diff, format_figure};
use crate::scaling::cost::PriceFigures;
use crate::scaling::{Mode, RowSource};
use crate::ui::palette;
use crate::ui::views::topology;

/// The hover of a measured step that is a median (an earlier report's).
const MEDIAN_STEP_HOVER: &str = "the median of its timed steps: the report was written before \
     scalescope took the mean (2026-11-28), the figure a run's samples/s follow; on a host-bound \
     step the median reads up to about 5 % faster";

/// The color of the `i`-th machine, in report order (the colour-blind-safe series palette).
pub fn machine_color(i: usize) -> Color32 {
    palette::series_color(i)
}

/// Draws the comparison of `reports` (the first is the reference). `workload` picks the scaling
/// workload (default: the first one every report has).
pub fn show(ui: &mut Ui, reports: &[&Report], workload: Option<&str>, cost: &mut CostSettings) {
    if reports.len() < 2 {
        ui.label(
            RichText::new(
                "Open two or more reports (File → Open report…, drop .json files, or \
                 `scalescope A.json B.json`) to compare them here.",
            )
            .weak(),
        );
        if reports.is_empty() {
            return;
        }
    }
    let c = compare::compare(reports, workload);
    ui.label(RichText::new("Key figures").strong().size(16.0));
    key_table(ui, &c);
    ui.add_space(12.0);
    ui.label(RichText::new("All-reduce bus bandwidth (NCCL), GB/s vs size").strong());
    busbw_plot(ui, "cmp-busbw", reports, 260.0);
    if let Some(w) = &c.workload {
        ui.add_space(12.0);
        ui.label(RichText::new(format!("Scaling efficiency — {w}")).strong());
        ui.columns(2, |cols| {
            for (col, mode) in cols.iter_mut().zip(Mode::ALL) {
                col.label(RichText::new(format!("{mode} scaling")).italics());
                efficiency_plot(col, &format!("cmp-eff-{mode}"), reports, w, mode, 200.0);
            }
        });
        above_one_notes(ui, reports, w);
        scaling_table(ui, "cmp-scaling-table", reports, w);
        ui.add_space(12.0);
        purchase_ranking(ui, reports, w, cost);
    }
    ui.add_space(12.0);
    ui.label(RichText::new("Topology and P2P bandwidth").strong());
    egui::ScrollArea::horizontal()
        .id_salt("cmp-topo")
        .show(ui, |ui| {
            ui.horizontal_top(|ui| {
                for (i, (r, name)) in reports.iter().zip(&c.machines).enumerate() {
                    ui.vertical(|ui| {
                        machine_label(ui, i, name);
                        topology::connectivity_matrix(ui, &r.topology);
                        ui.add_space(6.0);
                        p2p_heatmap(ui, r);
                    });
                    ui.add_space(24.0);
                }
            });
        });
    ui.add_space(6.0);
    topology::link_legend(ui);
}

/// A colored square and the `i`-th report's name.
pub fn machine_label(ui: &mut Ui, i: usize, name: &str) {
    ui.horizontal(|ui| {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        ui.painter().rect_filled(rect, 2.0, machine_color(i));
        ui.label(RichText::new(name).strong());
    });
}

/// `add`'s content in a scroll area of its own where it is wider than the view: a wide table
/// scrolls by itself rather than widening the page (the notes under it then wrap to the
/// window, not to the table).
fn sideways(ui: &mut Ui, id: &str, add: impl FnOnce(&mut Ui)) {
    egui::ScrollArea::horizontal()
        .id_salt(id)
        .auto_shrink([true, true])
        .show(ui, add);
}

/// The key-figure table: one column per machine, the difference from the first in %.
pub fn key_table(ui: &mut Ui, c: &Comparison) {
    sideways(ui, "cmp-keys-scroll", |ui| key_grid(ui, c));
    key_notes(ui, c);
}

/// The key figures, one column per machine and one per difference from the first.
fn key_grid(ui: &mut Ui, c: &Comparison) {
    egui::Grid::new("cmp-keys")
        .striped(true)
        .num_columns(1 + c.machines.len() * 2)
        .spacing([18.0, 4.0])
        .show(ui, |ui| {
            ui.label(RichText::new("figure").strong());
            for (i, m) in c.machines.iter().enumerate() {
                ui.label(RichText::new(m).strong().color(machine_color(i)));
                if i > 0 {
                    ui.label(RichText::new("vs first").strong());
                }
            }
            ui.end_row();
            for row in &c.rows {
                ui.label(&row.name);
                for (i, f) in row.figures.iter().enumerate() {
                    let text = format_figure(f);
                    let mut rt = RichText::new(text).monospace();
                    if f.source == Some(Source::Modeled) {
                        rt = rt.italics();
                    }
                    if f.above_one.is_some() {
                        rt = rt.color(palette::UNKNOWN);
                    }
                    ui.label(rt).on_hover_text(format!(
                        "{}{}{}",
                        f.basis,
                        match f.source {
                            Some(Source::Modeled) => " (modeled)",
                            Some(Source::Measured) => " (measured)",
                            None => "",
                        },
                        f.above_one
                            .as_deref()
                            .map(|why| format!("\nabove 1.00: {why}"))
                            .unwrap_or_default()
                    ));
                    if i > 0 {
                        let d = row.diff_pct[i];
                        // Green/red only between like figures: two measured, at one GPU count.
                        let color = match d {
                            _ if !row.like_for_like(i) => palette::UNKNOWN,
                            Some(d) if d > 2.0 => palette::P2P_OK,
                            Some(d) if d < -2.0 => palette::P2P_REFUSED,
                            _ => ui.visuals().text_color(),
                        };
                        let label =
                            ui.label(RichText::new(format_diff(d)).monospace().color(color));
                        if let Some(why) = row.caveat() {
                            label.on_hover_text(why);
                        }
                    }
                }
                ui.end_row();
            }
        });
}

/// What the key figures' colors and dashes mean: reports of an older method, modeled figures,
/// rows not like for like, figures missing and efficiencies above 1 with their causes.
fn key_notes(ui: &mut Ui, c: &Comparison) {
    for (i, note) in &c.older {
        if let Some(m) = c.machines.get(*i) {
            ui.label(
                RichText::new(format!("{m}: {note}"))
                    .size(11.5)
                    .color(machine_color(*i)),
            );
        }
    }
    if c.rows
        .iter()
        .any(|r| r.figures.iter().any(|f| f.source == Some(Source::Modeled)))
    {
        ui.label(
            RichText::new("~ modeled: derived from line rates, not measured")
                .size(11.5)
                .weak(),
        );
    }
    for row in &c.rows {
        if let Some(why) = row.caveat() {
            ui.label(
                RichText::new(format!("{}: {why}", row.name))
                    .size(11.5)
                    .weak(),
            );
        }
    }
    // Why a figure is "—", as `scalescope compare` says under its table (also on hover).
    let name = |i: usize| {
        format!(
            "{}:",
            crate::model::validate::one_line(&c.machines.get(i).cloned().unwrap_or_default(), 60)
        )
    };
    for line in compare::missing_lines(c, name) {
        ui.label(RichText::new(line).size(11.5).weak());
    }
    for line in compare::above_one_lines(c, |i| c.machines.get(i).cloned().unwrap_or_default()) {
        ui.label(RichText::new(line).size(11.5).weak());
    }
}

/// NCCL all-reduce busbw vs size, one line per report (dashed when modeled).
pub fn busbw_plot(ui: &mut Ui, id: &str, reports: &[&Report], height: f32) {
    let mut entries = Vec::new();
    Plot::new(id)
        .height(height)
        .x_axis_label("size")
        .y_axis_label("busbw GB/s")
        .x_axis_formatter(crate::ui::plots::size_tick)
        .label_formatter(|pos| crate::ui::plots::size_hover(pos, "GB/s"))
        .include_y(0.0)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .show(ui, |p| {
            for (i, (r, name)) in reports.iter().zip(compare::titles(reports)).enumerate() {
                let Some(c) = &r.collectives else { continue };
                let rows: Vec<_> = c
                    .results
                    .iter()
                    .filter(|x| {
                        x.op == CollectiveOp::AllReduce
                            && x.algo == Algo::Nccl
                            && !x.in_place
                            && x.status == Status::Ok
                    })
                    .collect();
                let pts: Vec<[f64; 2]> = rows
                    .iter()
                    .filter_map(|x| Some([crate::ui::plots::size_x(x.bytes), x.busbw_gbps?]))
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let modeled = rows.iter().any(|x| x.source == Source::Modeled);
                let mut line =
                    Line::new(name.clone(), PlotPoints::from(pts.clone())).color(machine_color(i));
                if modeled {
                    line = line.style(LineStyle::dashed_loose());
                }
                p.line(line);
                p.points(
                    Points::new(name.clone(), PlotPoints::from(pts))
                        .radius(3.5)
                        .shape(palette::series_marker(i))
                        .color(machine_color(i)),
                );
                entries.push(crate::ui::plots::LegendEntry::series(i, name, modeled));
            }
        });
    // The legend under the plot, never over its data.
    crate::ui::plots::legend_below(ui, &entries, None);
}

/// Scaling efficiency (%) vs log₂ GPUs of `workload`, one color per report: the model dashed
/// (dotted where projected over nodes), real framework runs as filled circles, proxies as
/// hollow squares. The legend is drawn under the plot, never over the data.
pub fn efficiency_plot(
    ui: &mut Ui,
    id: &str,
    reports: &[&Report],
    workload: &str,
    mode: Mode,
    height: f32,
) {
    let names = compare::numbered(reports.iter().map(|r| r.name()));
    let max_n = reports
        .iter()
        .filter_map(|r| r.scaling.as_ref())
        .flat_map(|s| s.run.rows.iter())
        .filter(|x| x.workload == workload && x.efficiency.is_some())
        .map(|x| x.n_gpus)
        .max()
        .unwrap_or(2)
        .max(2);
    Plot::new(id)
        .height(height)
        .x_axis_label("GPUs (log₂)")
        .x_grid_spacer(crate::ui::plots::log2_grid)
        .y_axis_label("efficiency")
        .x_axis_formatter(|m, _| {
            if (m.value - m.value.round()).abs() < 1e-6 {
                format!("{}", 2f64.powf(m.value).round())
            } else {
                String::new()
            }
        })
        .y_axis_formatter(|m, _| format!("{:.0}%", m.value))
        .include_x(0.0)
        .include_x((max_n as f64).log2())
        .include_y(0.0)
        .include_y(105.0)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .show(ui, |p| {
            for (i, (r, name)) in reports.iter().zip(&names).enumerate() {
                let Some(s) = &r.scaling else { continue };
                let rows: Vec<&crate::scaling::ScalingPoint> = s
                    .run
                    .rows
                    .iter()
                    .filter(|x| x.workload == workload && x.mode == mode)
                    .collect();
                let pts = |f: &dyn Fn(&crate::scaling::ScalingPoint) -> bool| -> Vec<[f64; 2]> {
                    rows.iter()
                        .filter(|x| f(x))
                        .filter_map(|x| Some([(x.n_gpus as f64).log2(), x.efficiency? * 100.0]))
                        .collect()
                };
                let color = machine_color(i);
                let in_box = pts(&|x| x.source == RowSource::Modeled && !x.projected);
                let mut proj = in_box.last().copied().into_iter().collect::<Vec<_>>();
                proj.extend(pts(&|x| x.source == RowSource::Modeled && x.projected));
                p.line(
                    Line::new(format!("{name} (modeled)"), PlotPoints::from(in_box))
                        .color(color)
                        .style(LineStyle::dashed_loose()),
                );
                if proj.len() > 1 {
                    p.line(
                        Line::new(format!("{name} (projected)"), PlotPoints::from(proj))
                            .color(color)
                            .style(LineStyle::dotted_loose()),
                    );
                }
                for (src, shape, filled) in [
                    (RowSource::Framework, MarkerShape::Circle, true),
                    (RowSource::Proxy, MarkerShape::Square, false),
                ] {
                    let m = pts(&|x| x.source == src);
                    if !m.is_empty() {
                        p.points(
                            Points::new(format!("{name} ({src})"), PlotPoints::from(m))
                                .radius(4.5)
                                .shape(shape)
                                .filled(filled)
                                .color(color),
                        );
                    }
                }
            }
        });
    ui.horizontal_wrapped(|ui| {
        for (i, name) in names.iter().enumerate() {
            ui.label(RichText::new("■").color(machine_color(i)));
            ui.label(RichText::new(name).small());
        }
        ui.label(
            RichText::new("dashed: model · dotted: projected · ● real framework run · □ proxy")
                .small()
                .weak(),
        );
    });
}

/// An efficiency in % as the tables show it, one decimal: `107.0*` where it is above 1.00 (the
/// cause in a note under the table, [`above_one_notes`]); `—` where unknown.
pub fn eff_cell(r: Option<&crate::scaling::ScalingPoint>) -> String {
    match r.and_then(|x| x.efficiency).filter(|e| e.is_finite()) {
        None => "—".to_string(),
        // In % with one decimal: 100.3 reads above 100 where 1.00 would not.
        Some(e) if r.is_some_and(|x| crate::report::superlinear::above_at(x, 3)) => {
            format!("{:.1}{}", e * 100.0, crate::report::superlinear::MARK)
        }
        Some(e) => format!("{:.1}", e * 100.0),
    }
}

/// [`eff_cell`] as a label whose hover says why the efficiency reads above 1.00 (computed from
/// the row and its base among `rows`), where it does.
pub fn eff_label(
    ui: &mut Ui,
    r: Option<&crate::scaling::ScalingPoint>,
    rows: &[crate::scaling::ScalingPoint],
) {
    let label = ui.label(eff_cell(r));
    if let Some(cause) = r.and_then(|x| crate::report::superlinear::cause(x, rows)) {
        label.on_hover_text(cause);
    }
}

/// Under efficiencies of `workload`: each report's rows above 1.00 with their cause (GPUs do
/// not speed each other up), in the machine's color; nothing where none is.
pub fn above_one_notes(ui: &mut Ui, reports: &[&Report], workload: &str) {
    let names = compare::numbered(reports.iter().map(|r| r.name()));
    for (i, (r, name)) in reports.iter().zip(&names).enumerate() {
        let Some(s) = &r.scaling else { continue };
        for line in crate::report::superlinear::notes_at(&s.run.rows, Some(workload), None, 3) {
            ui.label(
                RichText::new(format!("{name}: {line}"))
                    .size(11.5)
                    .color(machine_color(i)),
            );
        }
    }
}

/// Measured and modeled side by side for `workload`: each report's measured GPU counts (and its
/// largest in-box count), step time and efficiency measured and modeled, and the model's error.
pub fn scaling_table(ui: &mut Ui, id: &str, reports: &[&Report], workload: &str) {
    let names = compare::numbered(reports.iter().map(|r| r.name()));
    let cell = |v: Option<f64>, d: usize| v.map_or("—".to_string(), |v| format!("{v:.d$}"));
    sideways(ui, &format!("{id}-scroll"), |ui| {
        egui::Grid::new(id).striped(true).show(ui, |ui| {
            for h in [
                "machine",
                "mode",
                "GPUs",
                "step ms meas.",
                "step ms model",
                "error",
                "eff. meas.",
                "eff. model",
                "memory GiB",
            ] {
                ui.label(RichText::new(h).strong().small());
            }
            ui.end_row();
            for (i, (r, name)) in reports.iter().zip(&names).enumerate() {
                let Some(s) = &r.scaling else { continue };
                for mode in Mode::ALL {
                    let rows: Vec<&crate::scaling::ScalingPoint> = s
                        .run
                        .rows
                        .iter()
                        .filter(|x| x.workload == workload && x.mode == mode)
                        .collect();
                    let mut counts: Vec<usize> = rows
                        .iter()
                        .filter(|x| x.source.is_measured())
                        .map(|x| x.n_gpus)
                        .collect();
                    counts.extend(
                        rows.iter()
                            .filter(|x| x.source == RowSource::Modeled && !x.projected)
                            .map(|x| x.n_gpus)
                            .max(),
                    );
                    counts.sort_unstable();
                    counts.dedup();
                    for n in counts {
                        let meas = rows
                            .iter()
                            .find(|x| x.n_gpus == n && x.source.is_measured());
                        let model = rows
                            .iter()
                            .find(|x| x.n_gpus == n && x.source == RowSource::Modeled);
                        ui.label(RichText::new(name).color(machine_color(i)));
                        ui.label(mode.id());
                        ui.label(n.to_string());
                        // An earlier report's step is the median of its timed steps, not the mean:
                        // the cell says so (the purchase ranking leaves it out among means).
                        let median = meas.and_then(|x| x.step_statistic())
                            == Some(crate::scaling::StepStatistic::Median);
                        let step = cell(meas.and_then(|x| x.step_time_ms), 1);
                        if median {
                            ui.label(format!("{step} (median)"))
                                .on_hover_text(MEDIAN_STEP_HOVER);
                        } else {
                            ui.label(step);
                        }
                        ui.label(cell(model.and_then(|x| x.step_time_ms), 1));
                        let error = ui.label(meas.map_or("—".to_string(), |x| x.error_cell()));
                        if meas.is_some_and(|x| x.calibration_point) {
                            error.on_hover_text(crate::scaling::CALIBRATION_POINT);
                        }
                        eff_label(ui, meas.copied(), &s.run.rows);
                        eff_label(ui, model.copied(), &s.run.rows);
                        let fits = model.and_then(|x| x.fits) == Some(false);
                        ui.label(format!(
                            "{}{}",
                            cell(
                                meas.and_then(|x| x.memory_gib_per_gpu)
                                    .or(model.and_then(|x| x.memory_gib_per_gpu)),
                                1
                            ),
                            if fits { " (does not fit)" } else { "" }
                        ));
                        ui.end_row();
                    }
                }
            }
        });
    });
}

/// The P2P heatmap of one report: median GB/s of `p2p_write_ce` (else `p2p_read_ce`) at the
/// size that covers the most pairs (the largest on a tie), source rows × destination columns;
/// `~` marks modeled cells.
pub fn p2p_heatmap(ui: &mut Ui, r: &Report) {
    let Some(bw) = &r.bandwidth else {
        ui.label(RichText::new("no bandwidth results").weak());
        return;
    };
    let test = [TestId::P2pWriteCe, TestId::P2pReadCe]
        .into_iter()
        .find(|t| bw.results.iter().any(|x| x.test == *t));
    let Some(test) = test else {
        ui.label(RichText::new("no P2P copy-engine results").weak());
        return;
    };
    let rows: Vec<_> = bw.results.iter().filter(|x| x.test == test).collect();
    // The size with every pair: a --full run on many GPUs sweeps sizes on a few pairs only.
    let Some(bytes) = crate::model::fullest_size(rows.iter().copied(), test) else {
        return;
    };
    let gpus = r.topology.gpu_indices();
    let max = rows
        .iter()
        .filter_map(|x| x.median_gbps)
        .fold(0.0_f64, f64::max)
        .max(1.0);
    ui.label(
        RichText::new(format!(
            "{test}, {}, GB/s",
            crate::model::quantities::format_bytes(bytes)
        ))
        .weak(),
    );
    egui::Grid::new(format!("cmp-heat-{}", r.title()))
        .spacing([2.0, 2.0])
        .show(ui, |ui| {
            ui.label("");
            for &d in &gpus {
                ui.label(RichText::new(format!("GPU{d}")).size(11.0));
            }
            ui.end_row();
            for &s in &gpus {
                ui.label(RichText::new(format!("GPU{s}")).size(11.0));
                for &d in &gpus {
                    let cell = rows.iter().find(|x| {
                        x.bytes == bytes && x.src.gpu() == Some(s) && x.dst.gpu() == Some(d)
                    });
                    let (text, fill) = match cell {
                        _ if s == d => ("X".to_string(), palette::neutral_cell(ui.visuals())),
                        Some(x) if x.status == Status::Ok && x.median_gbps.is_some() => {
                            let v = x.median_gbps.unwrap_or_default();
                            let t = (v / max).clamp(0.0, 1.0) as f32;
                            let mark = if x.source == Source::Modeled { "~" } else { "" };
                            (
                                format!("{mark}{v:.0}"),
                                lerp(Color32::from_rgb(0x2b, 0x3a, 0x55), palette::NVLINK, t),
                            )
                        }
                        Some(x) => (x.status.to_string(), palette::UNKNOWN),
                        None => ("—".to_string(), palette::neutral_cell(ui.visuals())),
                    };
                    let (rect, _) =
                        ui.allocate_exact_size(egui::vec2(52.0, 24.0), egui::Sense::hover());
                    ui.painter().rect_filled(rect, 3.0, fill);
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        text,
                        egui::FontId::monospace(12.0),
                        palette::text_on(fill),
                    );
                }
                ui.end_row();
            }
        });
}

fn lerp(a: Color32, b: Color32, t: f32) -> Color32 {
    let m = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
    Color32::from_rgb(m(a.r(), b.r()), m(a.g(), b.g()), m(a.b(), b.b()))
}

/// The Cost panel's prices, remembered between runs: per machine ([`Report::machine_key`], so
/// that every report of one machine takes its price), rental or ownership. 0 = no price.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CostSettings {
    /// Ownership (capex, years, power price, PUE) instead of rental.
    pub ownership: bool,
    /// Rental price per GPU-hour, by machine ([`Report::machine_key`]).
    pub per_gpu_hour: std::collections::BTreeMap<String, f64>,
    /// Ownership: each node's price, by machine name.
    pub capex_per_node: std::collections::BTreeMap<String, f64>,
    pub years: f64,
    pub per_kwh: f64,
    pub pue: f64,
    /// Ownership: each node's power besides its GPUs, per GPU the node holds, W.
    pub overhead_w_per_gpu: f64,
    /// The ranking reads strong scaling (else weak).
    pub strong: bool,
    /// A training run of this many samples, whose time and cost the ranking shows (0: none).
    pub run_samples: f64,
}

impl Default for CostSettings {
    fn default() -> Self {
        Self {
            ownership: false,
            per_gpu_hour: Default::default(),
            capex_per_node: Default::default(),
            years: 0.0,
            per_kwh: 0.0,
            pue: 1.0,
            overhead_w_per_gpu: crate::scaling::cost::DEFAULT_OVERHEAD_W_PER_GPU,
            strong: false,
            run_samples: 0.0,
        }
    }
}

impl CostSettings {
    /// The pricing of machine `r`, `None` where its prices are not all stated (or not valid:
    /// the fields keep them in bounds).
    pub fn pricing(&self, r: &Report) -> Option<crate::scaling::cost::Pricing> {
        let name = &r.machine_key();
        let given = |v: f64| (v > 0.0).then_some(v);
        let figures = if self.ownership {
            PriceFigures {
                capex_per_node: self.capex_per_node.get(name).copied().and_then(given),
                years: given(self.years),
                per_kwh: given(self.per_kwh),
                pue: Some(self.pue),
                node_overhead_w: Some(
                    self.overhead_w_per_gpu * r.topology.gpus.len().max(1) as f64,
                ),
                ..Default::default()
            }
        } else {
            PriceFigures {
                per_gpu_hour: self.per_gpu_hour.get(name).copied().and_then(given),
                ..Default::default()
            }
        };
        crate::scaling::cost::Pricing::new(figures).ok().flatten()
    }
}

/// The purchase ranking of `reports` for `workload`: the Cost panel (prices per machine,
/// remembered), a table per GPU count (measured and modeled ranked apart) and a plot of the
/// ranked figure against the GPU count.
pub fn purchase_ranking(ui: &mut Ui, reports: &[&Report], workload: &str, cost: &mut CostSettings) {
    use crate::report::ranking;
    let names = compare::numbered(reports.iter().map(|r| r.name()));
    ui.label(RichText::new(format!("Purchase ranking — {workload}")).strong());
    ui.horizontal(|ui| {
        ui.radio_value(&mut cost.strong, false, "weak scaling");
        ui.radio_value(&mut cost.strong, true, "strong scaling");
        ui.separator();
        ui.radio_value(&mut cost.ownership, false, "rent (per GPU-hour)");
        ui.radio_value(&mut cost.ownership, true, "own (per node)");
    });
    egui::CollapsingHeader::new("Cost: prices per machine")
        .id_salt("cmp-cost")
        .default_open(true)
        .show(ui, |ui| {
            egui::Grid::new("cmp-cost-grid")
                .num_columns(3)
                .spacing([12.0, 4.0])
                .show(ui, |ui| {
                    for (i, r) in reports.iter().enumerate() {
                        price_row(ui, r, (i, &names[i]), cost);
                    }
                    if cost.ownership {
                        ownership_rows(ui, cost);
                    }
                });
        });
    ui.horizontal(|ui| {
        let l = ui.label("a run of");
        ui.add(
            zero_is_unset(egui::DragValue::new(&mut cost.run_samples), 0)
                .range(0.0..=1e15)
                .speed(1e6),
        )
        .labelled_by(l.id);
        ui.label(RichText::new("samples: its time and cost per machine (—: none)").weak());
    });
    let mode = if cost.strong {
        Mode::Strong
    } else {
        Mode::Weak
    };
    let run = (cost.run_samples >= 1.0).then_some(cost.run_samples);
    let prices: Vec<_> = reports.iter().map(|r| cost.pricing(r)).collect();
    let counts = ranking::default_counts(reports, workload, mode);
    let rk = ranking::rank(reports, workload, mode, &counts, &prices);
    ui.label(RichText::new(format!("ranked by {}", rk.by.words())).italics());
    ranking_table(ui, &rk, &names, run);
    ui.label(
        RichText::new(
            "~ the model's figure (projections, catalog machines, modeled power), ranked apart \
             from measured ones · samples/J counts GPU energy only",
        )
        .size(11.5)
        .weak(),
    );
    // What is not ranked, and why: never dropped without a word.
    for x in ranking::left_out(&rk) {
        ui.label(
            RichText::new(x.line(&names[x.machine]))
                .size(11.5)
                .color(machine_color(x.machine)),
        );
    }
    ranking_plot(ui, &rk, &names);
}

/// The Cost grid's row of one machine (`machine`: its index and numbered name): its price per
/// GPU-hour or per node, and whether it has one.
fn price_row(ui: &mut Ui, r: &Report, machine: (usize, &str), cost: &mut CostSettings) {
    use crate::scaling::cost::PriceFigure;
    let (i, name) = machine;
    let label = ui.label(RichText::new(name).color(machine_color(i)));
    let (map, unit, max) = if cost.ownership {
        (
            &mut cost.capex_per_node,
            "per node",
            PriceFigure::CapexPerNode.bounds().max,
        )
    } else {
        (
            &mut cost.per_gpu_hour,
            "per GPU-hour",
            PriceFigure::PerGpuHour.bounds().max,
        )
    };
    let v = map.entry(r.machine_key()).or_insert(0.0);
    ui.add(
        zero_is_unset(egui::DragValue::new(v), 2)
            .range(0.0..=max)
            .speed(if cost.ownership { 1000.0 } else { 0.05 }),
    )
    .labelled_by(label.id);
    let priced = cost.pricing(r).is_some();
    ui.label(
        RichText::new(if priced {
            unit.to_string()
        } else {
            format!("{unit}: no price yet (drag or type one)")
        })
        .weak(),
    );
    ui.end_row();
}

/// `v` showing "—" where it holds 0, the Cost panel's "not given" (a price or a run nobody
/// entered is not a price of 0): "—", "-" or nothing typed set it back to 0.
fn zero_is_unset(v: egui::DragValue<'_>, decimals: usize) -> egui::DragValue<'_> {
    v.custom_formatter(move |x, _| {
        if x == 0.0 {
            "—".to_string()
        } else {
            format!("{x:.decimals$}")
        }
    })
    .custom_parser(parse_amount)
}

/// An amount as typed: "—", "-" or nothing is none (0); spaces and `_` are dropped; a comma only
/// as a thousands separator (`1,000,000.5`), so that a decimal comma (`2,50`) is refused rather
/// than read as 250. Refused text leaves the field as it was.
fn parse_amount(text: &str) -> Option<f64> {
    let t: String = text
        .trim()
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .collect();
    if matches!(t.as_str(), "" | "—" | "-") {
        return Some(0.0);
    }
    if t.contains(',') {
        let whole = t.split('.').next().unwrap_or_default();
        let groups: Vec<&str> = whole.split(',').collect();
        let grouped = (1..=3).contains(&groups[0].len())
            && groups[1..].iter().all(|g| g.len() == 3)
            && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()));
        if !grouped {
            return None;
        }
    }
    t.replace(',', "")
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// The Cost grid's rows of owning (not renting): years, power price, PUE, node power.
fn ownership_rows(ui: &mut Ui, cost: &mut CostSettings) {
    use crate::scaling::cost::PriceFigure;
    for (label, v, figure, speed) in [
        ("years", &mut cost.years, PriceFigure::Years, 0.1),
        (
            "power price per kWh",
            &mut cost.per_kwh,
            PriceFigure::PerKwh,
            0.01,
        ),
    ] {
        let l = ui.label(label);
        let max = figure.bounds().max;
        ui.add(egui::DragValue::new(v).range(0.0..=max).speed(speed))
            .labelled_by(l.id);
        ui.label("");
        ui.end_row();
    }
    const PUE: crate::model::validate::Bounds = PriceFigure::Pue.bounds();
    let l = ui.label("PUE");
    ui.add(
        egui::DragValue::new(&mut cost.pue)
            .range(PUE.min..=PUE.max)
            .speed(0.01),
    )
    .labelled_by(l.id);
    ui.label(RichText::new("energy × PUE").weak());
    ui.end_row();
    let l = ui.label("node power besides GPUs");
    ui.add(
        egui::DragValue::new(&mut cost.overhead_w_per_gpu)
            .range(0.0..=10_000.0)
            .speed(5.0)
            .max_decimals(0),
    )
    .labelled_by(l.id);
    ui.label(RichText::new("W per GPU in the node (CPUs, NICs, fans; DGX H100: 575)").weak());
    ui.end_row();
}

/// The ranking as a table: a group per GPU count, each candidate's rank, machine (`names`),
/// source and figures, and with a run of `run` samples its time and cost.
fn ranking_table(
    ui: &mut Ui,
    rk: &crate::report::ranking::Ranking,
    names: &[String],
    run: Option<f64>,
) {
    sideways(ui, "cmp-ranking-scroll", |ui| {
        ranking_grid(ui, rk, names, run)
    });
}

fn ranking_grid(
    ui: &mut Ui,
    rk: &crate::report::ranking::Ranking,
    names: &[String],
    run: Option<f64>,
) {
    egui::Grid::new("cmp-ranking")
        .striped(true)
        .num_columns(if run.is_some() { 10 } else { 8 })
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for h in std::iter::once("GPUs").chain(crate::report::ranking::COLUMNS) {
                ui.label(RichText::new(h).strong());
            }
            if run.is_some() {
                ui.label(RichText::new("time of the run").strong());
                ui.label(RichText::new("cost of the run").strong());
            }
            ui.end_row();
            for g in &rk.groups {
                for (k, c) in g.candidates.iter().enumerate() {
                    ui.label(if k == 0 {
                        g.n_gpus.to_string()
                    } else {
                        String::new()
                    });
                    ui.label(RichText::new(c.rank_cell()).monospace());
                    ui.label(RichText::new(&names[c.machine]).color(machine_color(c.machine)));
                    let src = ui.label(c.source_word());
                    if !c.note.is_empty() {
                        src.on_hover_text(&c.note);
                    }
                    let mut cells = c.cells().to_vec();
                    if let Some(n) = run {
                        cells.extend(c.run_cells(n));
                    }
                    for v in cells {
                        let mut t = RichText::new(v.clone()).monospace();
                        if v.starts_with('~') {
                            t = t.italics();
                        }
                        ui.label(t);
                    }
                    ui.end_row();
                }
            }
        });
}

/// The ranked figure against the GPU count (log₂), a line of modeled and points of measured
/// candidates per machine.
fn ranking_plot(ui: &mut Ui, rk: &crate::report::ranking::Ranking, names: &[String]) {
    use crate::report::ranking::{Candidate, RankBy};
    let label = match rk.by {
        RankBy::Cost => "cost per million samples",
        RankBy::SamplesPerJoule => "samples per joule",
        RankBy::Throughput => "samples/s",
    };
    // What is ranked by, as the table ranks: a figure that rests on power that is only its
    // upper bound is not drawn among estimates.
    let by = rk.by;
    let get = move |c: &Candidate| c.key(by);
    Plot::new("cmp-ranking-plot")
        .height(200.0)
        .x_axis_label("GPUs (log₂)")
        .x_grid_spacer(crate::ui::plots::log2_grid)
        .y_axis_label(label)
        .x_axis_formatter(|m, _| {
            if (m.value - m.value.round()).abs() < 1e-6 {
                format!("{}", 2f64.powf(m.value).round())
            } else {
                String::new()
            }
        })
        .include_y(0.0)
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .show(ui, |p| {
            for (i, name) in names.iter().enumerate() {
                let pts = |measured: bool| -> Vec<[f64; 2]> {
                    rk.groups
                        .iter()
                        .flat_map(|g| g.candidates.iter())
                        .filter(|c| c.machine == i && c.measured() == measured)
                        .filter_map(|c| Some([(c.n_gpus as f64).log2(), get(c)?]))
                        .collect()
                };
                let modeled = pts(false);
                if !modeled.is_empty() {
                    p.line(
                        Line::new(format!("{name} (modeled)"), PlotPoints::from(modeled))
                            .color(machine_color(i))
                            .style(LineStyle::dashed_loose()),
                    );
                }
                let measured = pts(true);
                if !measured.is_empty() {
                    p.points(
                        Points::new(format!("{name} (measured)"), PlotPoints::from(measured))
                            .radius(4.5)
                            .shape(MarkerShape::Circle)
                            .filled(true)
                            .color(machine_color(i)),
                    );
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::parse_amount;

    #[test]
    fn amounts_are_read_as_typed_and_a_decimal_comma_is_refused() {
        assert_eq!(parse_amount("2.50"), Some(2.5));
        assert_eq!(parse_amount(" 1 000 000 "), Some(1e6));
        assert_eq!(parse_amount("1,000,000.5"), Some(1_000_000.5));
        assert_eq!(parse_amount("1_200"), Some(1200.0));
        assert_eq!(parse_amount("—"), Some(0.0));
        assert_eq!(parse_amount(""), Some(0.0));
        // Not 250 or 15: a decimal comma is not guessed at.
        assert_eq!(parse_amount("2,50"), None);
        assert_eq!(parse_amount("1,5"), None);
        assert_eq!(parse_amount("$2.50"), None);
        assert_eq!(parse_amount("-3"), None);
    }
}
