//! The Soak view's plots: one line per GPU over time — GEMM and copy throughput, SM clock,
//! power, temperature (memory dashed) — with the soak's events marked (wrong results and Xids
//! red, phase changes grey) and the time axes linked.
//!
//! Each frame draws the visible range of the series ([`super::series`]) decimated to the
//! pixel columns of the plot; a reading that is `None` is a gap in its line, never a zero.

use std::collections::{BTreeSet, HashMap};

use eframe::egui::{self, Align2, Color32, RichText, Ui};
use egui_plot::{GridInput, GridMark, HoverPosition, Line, MarkerShape, Plot, Points, Text, VLine};

use super::series::{Columns, Metric, decimate};
pub use crate::health::soak::clock;
use crate::model::{SoakEvent, SoakEventKind, SoakLoad, SoakSection};
use crate::ui::palette;
use crate::ui::plots::LegendEntry;

/// Height of each plot, points.
const PLOT_HEIGHT: f32 = 170.0;
/// Width of every plot's y axis, so that their time axes line up.
const Y_AXIS_WIDTH: f32 = 56.0;
/// Markers on each GPU's line (its colour alone repeats beyond seven GPUs).
const MARKERS_PER_LINE: usize = 8;
/// Events closer than this many pixels are marked (and hovered) as one.
const EVENT_GROUP_PX: f64 = 4.0;
/// Phase changes closer than this many pixels on average are not drawn (they would be a grey
/// carpet); closer than the second, not labelled.
const PHASE_LINE_MIN_PX: f64 = 4.0;
const PHASE_LABEL_MIN_PX: f64 = 56.0;

/// Legend entries that are not GPUs; clicking them hides what they name, like a GPU's.
const MEMORY_ENTRY: &str = "memory temperature";
const BAD_ENTRY: &str = "wrong result / Xid";
const PHASE_ENTRY: &str = "phase change";

/// One plot: its title, unit, figure (and a second one drawn dashed), and whether its y axis
/// starts at zero (figures whose dips should look as large as they are).
struct Spec {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    decimals: usize,
    metric: Metric,
    dashed: Option<Metric>,
    from_zero: bool,
}

const SPECS: [Spec; 5] = [
    Spec {
        id: "soak-gemm",
        title: "GEMM throughput (TFLOP/s)",
        unit: "TFLOP/s",
        decimals: 1,
        metric: Metric::GemmRate,
        dashed: None,
        from_zero: true,
    },
    Spec {
        id: "soak-copy",
        title: "Copy throughput (GB/s)",
        unit: "GB/s",
        decimals: 1,
        metric: Metric::CopyRate,
        dashed: None,
        from_zero: true,
    },
    Spec {
        id: "soak-clock",
        title: "SM clock (MHz)",
        unit: "MHz",
        decimals: 0,
        metric: Metric::SmClock,
        dashed: None,
        from_zero: false,
    },
    Spec {
        id: "soak-power",
        title: "Power (W)",
        unit: "W",
        decimals: 0,
        metric: Metric::Power,
        dashed: None,
        from_zero: true,
    },
    Spec {
        id: "soak-temp",
        title: "Temperature (°C): GPU solid, memory dashed",
        unit: "°C",
        decimals: 0,
        metric: Metric::GpuTemp,
        dashed: Some(Metric::MemTemp),
        from_zero: false,
    },
];

/// The plots' state on one source: the columns read so far and the series hidden.
#[derive(Default)]
pub struct SoakPlots {
    columns: Columns,
    /// Legend entries clicked off (`GPU 1`, [`MEMORY_ENTRY`], …).
    hidden: BTreeSet<String>,
    /// Each plot's lines as last decimated, by plot id: a frame that shows the same samples
    /// over the same range (hover, a repaint) draws them again without reading the samples.
    drawn: HashMap<&'static str, Drawn>,
}

/// One plot's decimated lines, and what they were decimated from.
struct Drawn {
    /// What they were decimated from.
    key: DrawnFrom,
    lines: Vec<Series>,
    /// The lowest and highest value drawn (infinite when none).
    lo: f64,
    hi: f64,
}

/// Grid steps a time axis uses, seconds: each a multiple of the one it is drawn under.
const TIME_STEPS: [f64; 17] = [
    1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 14400.0, 28800.0,
    86400.0, 172800.0, 604800.0,
];

/// Grid lines at round times (seconds, minutes, hours), the thinnest at least `base_step_size`
/// apart and each thicker step a multiple of the thinner.
fn time_grid(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Vec::new();
    }
    let Some(first) = TIME_STEPS.iter().position(|&s| s >= input.base_step_size) else {
        return Vec::new();
    };
    let mut steps: Vec<f64> = vec![TIME_STEPS[first]];
    for &s in &TIME_STEPS[first + 1..] {
        let last = steps[steps.len() - 1];
        if steps.len() < 3 && (s / last).fract() == 0.0 {
            steps.push(s);
        }
    }
    let smallest = steps[0];
    if (hi - lo) / smallest > 10_000.0 {
        return Vec::new();
    }
    let (first, last) = (
        (lo / smallest).ceil() as i64,
        (hi / smallest).floor() as i64,
    );
    (first..=last)
        .map(|k| {
            let value = k as f64 * smallest;
            let step_size = steps
                .iter()
                .rev()
                .find(|&&s| (value / s - (value / s).round()).abs() < 1e-9)
                .copied()
                .unwrap_or(smallest);
            GridMark { value, step_size }
        })
        .collect()
}

/// Grid lines at 1, 2 and 5 × 10ⁿ, the thinnest at least `base_step_size` apart and each
/// thicker step a multiple of the thinner: egui_plot's own steps of ten leave a 0–800 axis
/// with one label.
fn value_grid(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let base = input.base_step_size;
    if !(lo.is_finite() && hi.is_finite() && hi > lo && base.is_finite() && base > 0.0) {
        return Vec::new();
    }
    let nice = |x: f64| {
        let p = 10f64.powf(x.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * p)
            .find(|&s| s >= x * (1.0 - 1e-9))
            .unwrap_or(10.0 * p)
    };
    let s0 = nice(base);
    // The next steps of the 1-2-5 series that the thinner one divides.
    let next = |s: f64| {
        let n = nice(s * 1.5);
        if ((n / s) - (n / s).round()).abs() < 1e-9 {
            n
        } else {
            nice(n * 1.5)
        }
    };
    let s1 = next(s0);
    let s2 = next(s1);
    if (hi - lo) / s0 > 10_000.0 {
        return Vec::new();
    }
    let first = (lo / s0).ceil() as i64;
    let last = (hi / s0).floor() as i64;
    (first..=last)
        .map(|k| {
            let value = k as f64 * s0;
            let on = |s: f64| ((value / s) - (value / s).round()).abs() < 1e-6;
            let step_size = if on(s2) {
                s2
            } else if on(s1) {
                s1
            } else {
                s0
            };
            GridMark { value, step_size }
        })
        .collect()
}

/// The load running at `t`, from the section's phase events (in time order).
fn phase_at(phases: &[(f64, SoakLoad)], t: f64) -> Option<SoakLoad> {
    let i = phases.partition_point(|(at, _)| *at <= t);
    i.checked_sub(1).map(|i| phases[i].1)
}

/// A wrong result or an Xid, or several within a few pixels: where, and what hover says.
struct Mark {
    t: f64,
    text: String,
}

/// The red events of `events` within `[x0, x1]`, merged where they are closer than `near`.
fn bad_marks(events: &[SoakEvent], x0: f64, x1: f64, near: f64) -> Vec<Mark> {
    let mut bad: Vec<&SoakEvent> = events
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                SoakEventKind::Mismatch { .. } | SoakEventKind::Xid { .. }
            )
        })
        .filter(|e| e.t_s.is_finite() && e.t_s >= x0 && e.t_s <= x1)
        .collect();
    bad.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    let mut marks: Vec<(f64, Vec<&SoakEvent>)> = Vec::new();
    for e in bad {
        match marks.last_mut() {
            Some((t, group)) if e.t_s - *t < near => group.push(e),
            _ => marks.push((e.t_s, vec![e])),
        }
    }
    marks
        .into_iter()
        .map(|(t, group)| {
            let first = group[0];
            let gpu = first.gpu.map_or(String::new(), |g| format!(", GPU {g}"));
            let what = match first.kind {
                SoakEventKind::Xid { xid } => format!("Xid {xid}"),
                _ => "Wrong GEMM result".to_string(),
            };
            let mut text = format!("{what} at {}{gpu}: {}", clock(first.t_s), first.text);
            if group.len() > 1 {
                let last = group[group.len() - 1];
                text = format!(
                    "{} events from {} to {}; the first: {text}",
                    group.len(),
                    clock(first.t_s),
                    clock(last.t_s)
                );
            }
            Mark { t, text }
        })
        .collect()
}

/// The plots of `section`, one under the other with their time axes linked, the legend above
/// them (its entries hide and show what they name).
pub fn show(ui: &mut Ui, section: &SoakSection, state: &mut SoakPlots) {
    state.columns.update(section);
    let cols = &state.columns;
    // Colours follow the soaked GPUs' order, so a GPU keeps its colour in every plot.
    let mut gpus: Vec<usize> = section.gpus.clone();
    gpus.extend(cols.gpus.keys().copied());
    gpus.sort_unstable();
    gpus.dedup();
    let slot = |g: usize| gpus.iter().position(|&x| x == g).unwrap_or(0);
    let mut entries: Vec<LegendEntry> = gpus
        .iter()
        .filter(|g| cols.gpus.contains_key(g))
        .map(|&g| LegendEntry::series(slot(g), format!("GPU {g}"), false))
        .collect();
    if entries.is_empty() {
        ui.label(RichText::new("No samples yet.").weak());
        return;
    }
    let grey = Color32::from_gray(140);
    if cols.has(Metric::MemTemp) {
        entries.push(LegendEntry {
            name: MEMORY_ENTRY.into(),
            color: grey,
            marker: None,
            dashed: true,
        });
    }
    entries.push(LegendEntry {
        name: BAD_ENTRY.into(),
        color: palette::VERDICT_FAIL,
        marker: Some(MarkerShape::Down),
        dashed: false,
    });
    entries.push(LegendEntry {
        name: PHASE_ENTRY.into(),
        color: grey,
        marker: None,
        dashed: false,
    });
    crate::ui::layout::show_group(ui, |ui| {
        crate::ui::plots::legend_below(ui, &entries, Some(&mut state.hidden));
    });
    let Some((t0, t1)) = cols.span() else {
        return;
    };
    // The whole duration asked for, so that a running soak shows how far it has come.
    let end = if section.duration_s.is_finite() && section.duration_s > t1 {
        section.duration_s
    } else {
        t1
    };
    let full = (t0.min(0.0), end);
    let phases = section.phase_starts();
    let link = ui.make_persistent_id("soak-time");
    for spec in &SPECS {
        let has = cols.has(spec.metric) || spec.dashed.is_some_and(|d| cols.has(d));
        let rate = matches!(spec.metric, Metric::GemmRate | Metric::CopyRate);
        if !has {
            // A throughput plot of a phase that did not run says nothing; a figure never read
            // says so.
            if !rate {
                ui.label(RichText::new(format!("{}: no readings", spec.title)).weak());
            }
            continue;
        }
        ui.add_space(4.0);
        let title = if spec.metric == Metric::CopyRate {
            copy_title(cols)
        } else {
            spec.title.to_string()
        };
        ui.label(RichText::new(title).strong());
        let draw = Draw {
            cols,
            spec,
            hidden: &state.hidden,
            slot: &slot,
            events: &section.events,
            phases: &phases,
            full,
            label_phases: rate,
        };
        draw.plot(ui, link, &mut state.drawn);
    }
    if !cols.has(Metric::GemmRate) && !cols.has(Metric::CopyRate) {
        ui.label(RichText::new("Throughput: no readings").weak());
    }
}

/// The copy plot's title, naming the copy phases that have readings (`memory and pcie phases`).
fn copy_title(cols: &Columns) -> String {
    let names: Vec<&str> = cols
        .rated_loads()
        .filter(|l| *l != SoakLoad::Gemm)
        .map(|l| l.id())
        .collect();
    match names.as_slice() {
        [] => "Copy throughput (GB/s)".into(),
        [one] => format!("Copy throughput (GB/s): the {one} phases"),
        [rest @ .., last] => format!(
            "Copy throughput (GB/s): the {} and {last} phases",
            rest.join(", ")
        ),
    }
}

/// What one plot needs.
struct Draw<'a> {
    cols: &'a Columns,
    spec: &'a Spec,
    hidden: &'a BTreeSet<String>,
    slot: &'a dyn Fn(usize) -> usize,
    events: &'a [SoakEvent],
    phases: &'a [(f64, SoakLoad)],
    /// The x range when the plot is not zoomed.
    full: (f64, f64),
    /// Write each phase's load at its line (the throughput plots).
    label_phases: bool,
}

impl Draw<'_> {
    fn plot(&self, ui: &mut Ui, link: egui::Id, drawn: &mut HashMap<&'static str, Drawn>) {
        let spec = self.spec;
        let (unit, decimals) = (spec.unit, spec.decimals);
        let phases = self.phases.to_vec();
        let width = (ui.available_width() - Y_AXIS_WIDTH).max(100.0) as f64;
        let mut plot = Plot::new(spec.id)
            .height(PLOT_HEIGHT)
            .link_axis(link, [true, false])
            .link_cursor(link, [true, false])
            .allow_scroll(false)
            .y_axis_min_width(Y_AXIS_WIDTH)
            .x_axis_formatter(|mark, _| clock(mark.value))
            .x_grid_spacer(time_grid)
            .y_grid_spacer(value_grid)
            .include_x(self.full.0)
            .include_x(self.full.1)
            .label_formatter(move |pos| hover(pos, &phases, unit, decimals));
        if spec.from_zero {
            plot = plot.include_y(0.0);
        }
        plot.show(ui, |p| {
            let b = p.plot_bounds();
            let zoomed = !p.auto_bounds().x && b.max()[0] > b.min()[0];
            let (x0, x1) = if !zoomed {
                self.full
            } else {
                (b.min()[0], b.max()[0])
            };
            let px = (x1 - x0) / width;
            let buckets = width as usize;
            let key = DrawnFrom {
                version: self.cols.version(),
                x_bits: (x0.to_bits(), x1.to_bits()),
                buckets,
                hidden: self.hidden.clone(),
            };
            let drawn = drawn.entry(spec.id).or_insert_with(|| Drawn {
                key: DrawnFrom {
                    version: u64::MAX,
                    x_bits: (0, 0),
                    buckets: 0,
                    hidden: BTreeSet::new(),
                },
                lines: Vec::new(),
                lo: f64::INFINITY,
                hi: f64::NEG_INFINITY,
            });
            if drawn.key != key {
                *drawn = decimated(self.cols, spec, self.slot, key);
            }
            let drawn: &Drawn = drawn;
            let lo = if spec.from_zero {
                drawn.lo.min(0.0)
            } else {
                drawn.lo
            };
            let hi = drawn.hi;
            // Room above the data for the event markers and phase names.
            let top = hi
                .is_finite()
                .then(|| hi + 0.12 * (hi - lo).max(hi.abs() * 0.05).max(1.0));
            self.events_under(p, x0, x1, px, top);
            let n = self.cols.gpus.len().max(1);
            for series in &drawn.lines {
                series.add(p, n);
            }
            if let Some(top) = top {
                self.events_over(p, x0, x1, px, top);
            }
        });
    }

    /// Phase changes: thin grey lines, named on the first plot where there is room.
    fn events_under(
        &self,
        p: &mut egui_plot::PlotUi<'_>,
        x0: f64,
        x1: f64,
        px: f64,
        top: Option<f64>,
    ) {
        if self.hidden.contains(PHASE_ENTRY) {
            return;
        }
        let shown: Vec<&(f64, SoakLoad)> = self
            .phases
            .iter()
            .filter(|(t, _)| *t >= x0 && *t <= x1)
            .collect();
        if shown.is_empty() {
            return;
        }
        let spacing = (x1 - x0) / shown.len() as f64 / px;
        if spacing < PHASE_LINE_MIN_PX {
            return;
        }
        let grey = Color32::from_gray(140).gamma_multiply(0.7);
        for (t, load) in &shown {
            p.vline(
                VLine::new(format!("{load} phase"), *t)
                    .color(grey)
                    .width(1.0)
                    .allow_hover(false),
            );
        }
        let Some(top) = top.filter(|_| self.label_phases && spacing >= PHASE_LABEL_MIN_PX) else {
            return;
        };
        for (t, load) in shown {
            p.text(
                Text::new(
                    format!("{load} phase label"),
                    egui_plot::PlotPoint::new(*t + 3.0 * px, top),
                    RichText::new(load.id())
                        .small()
                        .color(Color32::from_gray(150)),
                )
                .anchor(Align2::LEFT_TOP)
                .allow_hover(false),
            );
        }
    }

    /// Wrong results and Xids: red lines, with a marker at the top that hover explains.
    fn events_over(&self, p: &mut egui_plot::PlotUi<'_>, x0: f64, x1: f64, px: f64, top: f64) {
        if self.hidden.contains(BAD_ENTRY) {
            return;
        }
        for m in bad_marks(self.events, x0, x1, EVENT_GROUP_PX * px) {
            p.vline(
                VLine::new(m.text.clone(), m.t)
                    .color(palette::VERDICT_FAIL)
                    .width(1.5)
                    .allow_hover(false),
            );
            p.points(
                Points::new(m.text, vec![[m.t, top]])
                    .shape(MarkerShape::Down)
                    .radius(5.0)
                    .color(palette::VERDICT_FAIL),
            );
        }
    }
}

/// What a plot's lines are decimated from: the columns' version, the x range shown (as bits:
/// any change draws them again), the time slices and the series hidden.
#[derive(PartialEq)]
struct DrawnFrom {
    version: u64,
    x_bits: (u64, u64),
    buckets: usize,
    hidden: BTreeSet<String>,
}

/// Every shown GPU's line over the key's x range in its time slices, and the range of their
/// values.
fn decimated(cols: &Columns, spec: &Spec, slot: &dyn Fn(usize) -> usize, key: DrawnFrom) -> Drawn {
    let (x0, x1) = (f64::from_bits(key.x_bits.0), f64::from_bits(key.x_bits.1));
    let (buckets, hidden) = (key.buckets, &key.hidden);
    let mut lines: Vec<Series> = Vec::new();
    for (&gpu, col) in &cols.gpus {
        if hidden.contains(&format!("GPU {gpu}")) {
            continue;
        }
        let slot = slot(gpu);
        let series = |m, dashed| Series {
            gpu,
            slot,
            dashed,
            runs: decimate(col, m, x0, x1, buckets)
                .into_iter()
                .map(|r| r.into_iter().map(egui_plot::PlotPoint::from).collect())
                .collect(),
        };
        lines.push(series(spec.metric, false));
        if let Some(d) = spec.dashed.filter(|_| !hidden.contains(MEMORY_ENTRY)) {
            lines.push(series(d, true));
        }
    }
    let ys = lines
        .iter()
        .flat_map(|l| l.runs.iter().flatten().map(|p| p.y));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
        (a.min(y), b.max(y))
    });
    Drawn { key, lines, lo, hi }
}

/// One GPU's line in one plot, decimated.
struct Series {
    gpu: usize,
    /// Its place among the soaked GPUs: colour and marker.
    slot: usize,
    /// The memory temperature (dashed, lighter).
    dashed: bool,
    runs: Vec<Vec<egui_plot::PlotPoint>>,
}

impl Series {
    /// Adds the line to the plot (`n` GPUs in all): one line per run, a dot for a reading
    /// alone between gaps, and a few markers.
    fn add<'a>(&'a self, p: &mut egui_plot::PlotUi<'a>, n: usize) {
        let (g, slot, dashed) = (self.gpu, self.slot, self.dashed);
        let mut color = palette::series_color(slot);
        let name = if dashed {
            color = color.gamma_multiply(0.7);
            format!("GPU {g} memory")
        } else {
            format!("GPU {g}")
        };
        let points = || self.runs.iter().flatten().map(|q| [q.x, q.y]);
        if !dashed {
            // A few markers on each line, staggered between GPUs: beyond seven GPUs colours
            // repeat, markers do not.
            let step = (points().count() / MARKERS_PER_LINE).max(1);
            let offset = slot % n * step / n;
            let marks: Vec<[f64; 2]> = points().skip(offset).step_by(step).collect();
            p.points(
                Points::new(name.clone(), marks)
                    .radius(3.0)
                    .shape(palette::series_marker(slot))
                    .color(color),
            );
        }
        let dots: Vec<[f64; 2]> = self
            .runs
            .iter()
            .filter(|r| r.len() == 1)
            .map(|r| [r[0].x, r[0].y])
            .collect();
        if !dots.is_empty() {
            p.points(Points::new(name.clone(), dots).radius(1.5).color(color));
        }
        for run in self.runs.iter().filter(|r| r.len() > 1) {
            let mut line = Line::new(name.clone(), run.as_slice())
                .color(color)
                .width(1.5);
            if dashed {
                line = line.style(egui_plot::LineStyle::Dashed { length: 6.0 });
            }
            p.line(line);
        }
    }
}

/// What hover says: a GPU's line — GPU, load, time, value —, or an event marker's text.
fn hover(
    pos: &HoverPosition<'_>,
    phases: &[(f64, SoakLoad)],
    unit: &str,
    decimals: usize,
) -> Option<String> {
    let HoverPosition::NearDataPoint {
        plot_name,
        position,
        ..
    } = pos
    else {
        return None;
    };
    if !plot_name.starts_with("GPU ") {
        return Some(plot_name.to_string());
    }
    let phase = phase_at(phases, position.x).map_or(String::new(), |l| format!(" · {l}"));
    Some(format!(
        "{plot_name}{phase}\nt = {} ({:.0} s)\n{:.decimals$} {unit}",
        clock(position.x),
        position.x,
        position.y
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_and_time_grid() {
        assert_eq!(clock(0.0), "0:00");
        assert_eq!(clock(125.0), "2:05");
        assert_eq!(clock(3723.0), "1:02:03");
        assert_eq!(clock(f64::NAN), "—");
        let marks = time_grid(GridInput {
            bounds: (0.0, 300.0),
            base_step_size: 7.0,
        });
        assert!(marks.iter().all(|m| m.value % 10.0 == 0.0));
        assert!(marks.iter().any(|m| m.value == 60.0 && m.step_size >= 60.0));
        assert!(
            time_grid(GridInput {
                bounds: (0.0, f64::INFINITY),
                base_step_size: 1.0,
            })
            .is_empty()
        );
    }

    #[test]
    fn value_grid_steps_by_one_two_five() {
        let marks = value_grid(GridInput {
            bounds: (0.0, 800.0),
            base_step_size: 45.0,
        });
        let steps: Vec<f64> = marks.iter().map(|m| m.value).collect();
        assert_eq!(
            steps,
            vec![
                0.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0, 350.0, 400.0, 450.0, 500.0, 550.0,
                600.0, 650.0, 700.0, 750.0, 800.0
            ]
        );
        let at = |v: f64| marks.iter().find(|m| m.value == v).unwrap().step_size;
        assert_eq!(
            (at(50.0), at(100.0), at(400.0), at(500.0)),
            (50.0, 100.0, 200.0, 100.0)
        );
        assert!(
            value_grid(GridInput {
                bounds: (0.0, 1.0),
                base_step_size: 0.0,
            })
            .is_empty()
        );
    }

    #[test]
    fn nearby_bad_events_are_one_mark() {
        let ev = |t: f64| SoakEvent {
            t_s: t,
            gpu: Some(1),
            kind: SoakEventKind::Xid { xid: 79 },
            text: "fallen off the bus".into(),
        };
        let marks = bad_marks(&[ev(10.0), ev(10.5), ev(50.0)], 0.0, 100.0, 2.0);
        assert_eq!(marks.len(), 2);
        assert!(marks[0].text.starts_with("2 events"), "{}", marks[0].text);
        assert!(
            marks[1].text.starts_with("Xid 79 at 0:50, GPU 1"),
            "{}",
            marks[1].text
        );
    }
}
