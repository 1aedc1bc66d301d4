//! Time-series charts as SVG, for a burn-in: a linear time axis from the start (labelled in
//! seconds, minutes or hours, whichever the span reads best in), a linear y axis, one line per
//! series, light bands for the phases of the run and red vertical markers for events.
//!
//! A line breaks where a value is unknown or samples are missing: a gap, never a 0. A series
//! with more samples than the plot has pixel columns is drawn as each column's lowest and
//! highest value, so a week at one sample a second stays a few thousand points and a one-second
//! dip still shows.

use std::fmt::Write as _;

use super::Figure;
use super::chart::{
    COLORS, LEGEND, LegendSlot, PlotFrame, fit_text, legend_slots, nice_step, subpath, svg_figure,
    svg_open,
};
use super::fonts::{self, Face};
use super::html::escape;
use crate::model::decimate::MinMaxLine;

/// One line of a time chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The legend's text.
    pub name: String,
    /// (seconds since the start, value) in time order; `None` is a gap in the line.
    pub points: Vec<(f64, Option<f64>)>,
    /// Index into [`LINE_COLORS`] (a GPU keeps its colour on every chart).
    pub color: usize,
    /// Dashed (a second reading of the same GPU, e.g. its memory temperature).
    pub dashed: bool,
}

/// A stretch of time shaded behind the lines (a phase of the run), its label above the plot
/// where it fits.
#[derive(Clone, Debug, PartialEq)]
pub struct Band {
    /// Start, seconds.
    pub t0: f64,
    /// End, seconds.
    pub t1: f64,
    /// What ran (`gemm`, `memory`, …).
    pub label: String,
    /// Index into the band tints (the same load has the same tint everywhere).
    pub shade: usize,
}

/// A moment marked with a red vertical line and a label above the plot (a wrong result, an
/// Xid).
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// When, seconds.
    pub t: f64,
    /// Short label (`Xid 79 GPU1`).
    pub label: String,
}

/// What a time chart shows and how wide it is drawn.
#[derive(Clone, Debug)]
pub struct TimeChart<'a> {
    /// Element id of the figure.
    pub id: &'a str,
    /// The caption (also the SVG's accessible label).
    pub caption: &'a str,
    /// The y axis' label.
    pub y_label: &'a str,
    /// The lines.
    pub lines: &'a [Line],
    /// Shaded stretches behind the lines.
    pub bands: &'a [Band],
    /// Events marked on the time axis.
    pub markers: &'a [Marker],
    /// The time the axis spans at least (from 0), seconds: the run's length, so that every
    /// chart of one run shares its axis.
    pub span_s: f64,
    /// The longest step between two samples still joined by a line; a longer one is a gap.
    pub max_step_s: f64,
    /// The y axis starts at 0 (rates); otherwise it spans the values (clocks, temperatures).
    pub from_zero: bool,
    /// The SVG's width in its units (about CSS px); the height follows from the legend.
    pub width: f64,
}

/// The colour of event markers.
pub const EVENT_RED: &str = "#c81e1e";

/// Line colours: the charts' ([`COLORS`], Okabe & Ito's) and an eighth, olive from Paul Tol's
/// muted scheme (<https://personal.sron.nl/~pault/>), so that the eight GPUs of a common box
/// each have their own.
pub const LINE_COLORS: [&str; 8] = [
    COLORS[0], COLORS[1], COLORS[2], COLORS[3], COLORS[4], COLORS[5], COLORS[6], "#999933",
];

/// Band tints, very light, one per load.
const SHADES: [&str; 5] = ["#e8f0fa", "#f8eedd", "#e6f4ea", "#f6e9f3", "#eeeeee"];
/// Plot height, units.
const PLOT_H: f64 = 150.0;
/// Margins around the plot: left (y ticks and label), right, top, bottom (x ticks and label).
const MARGIN: (f64, f64, f64, f64) = (58.0, 14.0, 8.0, 42.0);
/// Marker labels: size, row height and how many rows above the plot.
const MARK_TEXT: f64 = 10.0;
const MARK_ROW: f64 = 13.0;
const MARK_ROWS: usize = 2;
/// Band labels: size and row height.
const BAND_TEXT: f64 = 9.5;
const BAND_ROW: f64 = 13.0;
/// Bands narrower than this (units) need no name: the end of a phase cut short.
const BAND_SLIVER: f64 = 8.0;
/// The narrowest bands shade on average, units.
const BAND_MIN: f64 = 3.0;
/// Pixel columns per unit of plot width a line keeps (two: half a unit).
const COLUMNS_PER_UNIT: f64 = 2.0;

/// The unit the time axis is labelled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Seconds,
    Minutes,
    Hours,
}

impl Unit {
    /// Seconds up to 10 minutes, minutes up to 3 hours, hours beyond.
    fn of(span_s: f64) -> Unit {
        if span_s <= 600.0 {
            Unit::Seconds
        } else if span_s <= 3.0 * 3600.0 {
            Unit::Minutes
        } else {
            Unit::Hours
        }
    }

    fn seconds(self) -> f64 {
        match self {
            Unit::Seconds => 1.0,
            Unit::Minutes => 60.0,
            Unit::Hours => 3600.0,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Unit::Seconds => "time since the start (s)",
            Unit::Minutes => "time since the start (min)",
            Unit::Hours => "time since the start (h)",
        }
    }
}

/// Decimals for tick labels `step` apart.
fn decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(1.0, 6.0) as usize
    }
}

/// The drawable runs of `points`: the lowest and highest known value of each of `columns`
/// columns over `[t0, t1]`, in time order, joined to the column before unless a value was
/// unknown or a step longer than `max_step` came between them.
fn runs(
    points: &[(f64, Option<f64>)],
    (t0, t1): (f64, f64),
    columns: usize,
    max_step: f64,
) -> Vec<Vec<(f64, f64)>> {
    let span = (t1 - t0).max(f64::MIN_POSITIVE);
    let last = columns.saturating_sub(1);
    let mut line = MinMaxLine::default();
    let mut last_t = f64::NEG_INFINITY;
    for &(t, v) in points {
        if !t.is_finite() {
            continue;
        }
        let Some(v) = v.filter(|v| v.is_finite()) else {
            line.break_before_next_column();
            continue;
        };
        if t - last_t > max_step || t < last_t {
            line.break_before_next_column();
        }
        last_t = t;
        let index = (((t - t0) / span * columns as f64).floor().max(0.0) as usize).min(last);
        line.reading(index as i64, t, v);
    }
    line.finish_points()
}

/// Marker groups: markers closer than `min_px` drawn as one line, labelled with the first and
/// the count of the others. `(x, label)` in x order.
fn marker_groups(markers: &[(f64, &str)], min_px: f64) -> Vec<(f64, String)> {
    let mut sorted: Vec<(f64, &str)> = markers.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, String, usize)> = Vec::new();
    for (x, label) in sorted {
        match out.last_mut() {
            Some(g) if x - g.0 < min_px => g.2 += 1,
            _ => out.push((x, label.to_string(), 0)),
        }
    }
    out.into_iter()
        .map(|(x, label, more)| {
            if more == 0 {
                (x, label)
            } else {
                (x, format!("{label} +{more} more"))
            }
        })
        .collect()
}

/// Whether `bands` bands are shaded on a chart `width` wide: not when they would be narrower
/// than [`BAND_MIN`] on average (a week of five-minute cycles would be stripes finer than the
/// pixels, and tens of thousands of shapes).
pub fn bands_shaded(bands: usize, width: f64) -> bool {
    let plot = (width - MARGIN.0 - MARGIN.1).max(40.0);
    bands as f64 * BAND_MIN <= plot
}

/// The chart as an SVG figure; `None` when no line has a known value.
pub fn time_chart(c: &TimeChart) -> Option<Figure> {
    let known: Vec<(f64, f64)> = c
        .lines
        .iter()
        .flat_map(|l| l.points.iter())
        .filter_map(|&(t, v)| Some((t, v?)))
        .filter(|(t, v)| t.is_finite() && v.is_finite())
        .collect();
    if known.is_empty() {
        return None;
    }
    let (ml, mr, _, mb) = MARGIN;
    let w = c.width;
    let pw = (w - ml - mr).max(40.0);
    let (t0, t1) = time_span(c, &known);
    let sx = |t: f64| ml + (t - t0) / (t1 - t0) * pw;
    let (ystep, y_range) = y_axis(&known, c.from_zero);

    // Above the plot: the band labels' row, and the marker labels' rows above it.
    let bands = BandLayout::new(c, sx);
    let marks: Vec<(f64, &str)> = c
        .markers
        .iter()
        .filter(|m| m.t.is_finite())
        .map(|m| (sx(m.t), m.label.as_str()))
        .collect();
    let groups = marker_groups(&marks, 2.0);
    let mark_h = if groups.is_empty() {
        0.0
    } else {
        MARK_ROWS as f64 * MARK_ROW
    };
    let band_h = if bands.labelled { BAND_ROW } else { 0.0 };
    let frame = PlotFrame {
        left: ml,
        top: MARGIN.2 + mark_h + band_h,
        width: pw,
        height: PLOT_H,
        bottom: mb,
        y_range,
    };

    // The legend: the lines, then the tints on rows of their own.
    let names: Vec<&str> = c.lines.iter().map(|l| l.name.as_str()).collect();
    let slots = legend_slots(&names, pw);
    let line_rows = slots.last().map_or(0, |s| s.row + 1);
    let tint_names: Vec<&str> = bands.tints.iter().map(|t| t.0).collect();
    let mut tint_slots = legend_slots(&tint_names, pw);
    for t in &mut tint_slots {
        t.row += line_rows;
    }
    let h = frame.height_with_legend(tint_slots.last().map_or(line_rows, |s| s.row + 1));

    let mut s = String::with_capacity(16 << 10);
    svg_open(&mut s, w, h, c.caption);
    bands.draw(&mut s, &frame, t0, band_h, sx);
    frame.y_grid(&mut s, ystep, decimals(ystep));
    // x ticks in the unit, about one per 80 units of width.
    let unit = Unit::of(t1 - t0);
    let u = unit.seconds();
    let xstep = nice_step((t1 - t0) / u, (pw / 80.0).max(2.0));
    let xd = decimals(xstep);
    let mut k = (t0 / u / xstep).ceil() as i64;
    while (k as f64) * xstep <= t1 / u + xstep * 1e-6 {
        let v = k as f64 * xstep;
        frame.x_tick(&mut s, sx(v * u), &format!("{v:.xd$}"));
        k += 1;
    }
    let y_label = fit_text(c.y_label, 12.0, Face::Sans, frame.height + frame.top);
    frame.axes(&mut s, unit.label(), &y_label);

    // The lines.
    let columns = (pw * COLUMNS_PER_UNIT).ceil().max(1.0) as usize;
    let max_step = if c.max_step_s > 0.0 {
        c.max_step_s
    } else {
        f64::INFINITY
    };
    for (l, slot) in c.lines.iter().zip(&slots) {
        let runs = runs(&l.points, (t0, t1), columns, max_step);
        let (color, dash) = draw_line(&mut s, l, &runs, |(t, v)| (sx(t), frame.y(v)));
        frame.legend_line(&mut s, slot, color, dash);
    }
    bands.draw_tints(&mut s, &frame, &tint_slots);
    draw_markers(&mut s, &groups, &frame, band_h, w);
    Some(svg_figure(s, c.id, c.caption, w, h))
}

/// The time axis: from the start (or the earliest sample, if before it) to the run's end or
/// the last thing drawn.
fn time_span(c: &TimeChart, known: &[(f64, f64)]) -> (f64, f64) {
    let finite = |t: &f64| t.is_finite();
    let times = known
        .iter()
        .map(|p| p.0)
        .chain(c.markers.iter().map(|m| m.t).filter(finite))
        .chain(c.bands.iter().flat_map(|b| [b.t0, b.t1]).filter(finite));
    let (tmin, tmax) = times.fold((0.0_f64, f64::NEG_INFINITY), |(a, b), t| {
        (a.min(t), b.max(t))
    });
    let t0 = tmin;
    let t1 = tmax.max(if c.span_s.is_finite() { c.span_s } else { 0.0 });
    let t1 = if t1 - t0 < 1e-9 { t0 + 1.0 } else { t1 };
    (t0, t1)
}

/// The y axis' step and range: from 0 (rates) or around the values, to nice steps.
fn y_axis(known: &[(f64, f64)], from_zero: bool) -> (f64, (f64, f64)) {
    let lo = known.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = known.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if from_zero {
        (lo.min(0.0), hi.max(0.0))
    } else {
        (lo, hi)
    };
    let (lo, hi) = if hi - lo < 1e-9 {
        let pad = (hi.abs() * 0.05).max(1.0);
        (if from_zero { lo } else { lo - pad }, hi + pad)
    } else {
        (lo, hi)
    };
    let ystep = nice_step(hi - lo, 4.0);
    let ymin = (lo / ystep).floor() * ystep;
    let ymax = ((hi / ystep).ceil() * ystep).max(ymin + ystep);
    (ystep, (ymin, ymax))
}

/// The phase bands drawn, and whether they are named above the plot or by tints in the legend.
struct BandLayout<'a> {
    /// Each band shaded, with its width on the plot.
    shaded: Vec<(f64, &'a Band)>,
    /// Named above the plot.
    labelled: bool,
    /// Otherwise each load's name and tint, once, for the legend.
    tints: Vec<(&'a str, usize)>,
}

impl<'a> BandLayout<'a> {
    fn new(c: &TimeChart<'a>, sx: impl Fn(f64) -> f64) -> Self {
        let shaded: Vec<(f64, &Band)> = if bands_shaded(c.bands.len(), c.width) {
            c.bands
                .iter()
                .filter(|b| b.t0.is_finite() && b.t1.is_finite() && b.t1 > b.t0)
                .map(|b| (sx(b.t1) - sx(b.t0), b))
                .collect()
        } else {
            Vec::new()
        };
        // Bands are named above the plot where every one wide enough to read has room for its
        // name (some named and some not reads as a pattern that is not there); otherwise the
        // legend names the tints.
        let fits = |(bw, b): &(f64, &Band)| {
            fonts::text_width(&b.label, BAND_TEXT, Face::Sans) + 6.0 <= *bw
        };
        let labelled =
            shaded.iter().any(fits) && shaded.iter().filter(|(bw, _)| *bw >= BAND_SLIVER).all(fits);
        let mut tints: Vec<(&str, usize)> = Vec::new();
        if !labelled {
            for (_, b) in &shaded {
                if !tints.iter().any(|t| t.0 == b.label) {
                    tints.push((&b.label, b.shade));
                }
            }
        }
        Self {
            shaded,
            labelled,
            tints,
        }
    }

    /// Phase bands, a thin mark where each begins (from `band_h` above the plot), and its label
    /// where it fits.
    fn draw(
        &self,
        s: &mut String,
        frame: &PlotFrame,
        t0: f64,
        band_h: f64,
        sx: impl Fn(f64) -> f64,
    ) {
        let (ml, mt, pw, ph) = (frame.left, frame.top, frame.width, frame.height);
        for (_, b) in &self.shaded {
            let x = sx(b.t0).max(ml);
            let bw = (sx(b.t1).min(ml + pw) - x).max(0.0);
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{mt:.1}\" width=\"{bw:.1}\" height=\"{ph:.1}\" fill=\"{}\"/>",
                SHADES[b.shade % SHADES.len()]
            );
            if b.t0 > t0 {
                let _ = writeln!(
                    s,
                    "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#9aa3ad\" stroke-width=\"0.8\"/>",
                    mt - band_h,
                    mt + ph
                );
            }
            let tw = fonts::text_width(&b.label, BAND_TEXT, Face::Sans);
            if self.labelled && tw + 6.0 <= bw {
                let _ = writeln!(
                    s,
                    "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{BAND_TEXT}\" fill=\"#5a6470\">{}</text>",
                    x + 3.0,
                    mt - 3.0,
                    escape(&b.label)
                );
            }
        }
    }

    /// The tints' legend entries, where the bands are not named above the plot.
    fn draw_tints(&self, s: &mut String, frame: &PlotFrame, slots: &[LegendSlot]) {
        for ((_, shade), slot) in self.tints.iter().zip(slots) {
            let (lx0, ly) = frame.legend_at(slot);
            let _ = writeln!(
                s,
                "<rect x=\"{lx0:.1}\" y=\"{:.1}\" width=\"24\" height=\"10\" fill=\"{}\" stroke=\"#9aa3ad\" stroke-width=\"0.6\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{LEGEND}\">{}</text>",
                ly - 5.0,
                SHADES[shade % SHADES.len()],
                lx0 + 30.0,
                ly + 4.0,
                escape(&slot.text)
            );
        }
    }
}

/// One line's runs, placed by `at`: a path, and a dot for a reading alone between gaps. Its
/// colour and dash, for the legend.
fn draw_line(
    s: &mut String,
    l: &Line,
    runs: &[Vec<(f64, f64)>],
    at: impl Fn((f64, f64)) -> (f64, f64),
) -> (&'static str, &'static str) {
    let color = LINE_COLORS[l.color % LINE_COLORS.len()];
    let dash = if l.dashed {
        " stroke-dasharray=\"5 3\""
    } else {
        ""
    };
    let mut d = String::new();
    for run in runs {
        match run.as_slice() {
            [] => {}
            [p] => {
                let (x, y) = at(*p);
                let _ = write!(
                    s,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"1.6\" fill=\"{color}\"/>"
                );
            }
            _ => subpath(&mut d, run.iter().map(|p| at(*p))),
        }
    }
    if !d.is_empty() {
        let _ = write!(
            s,
            "\n<path d=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.6\" \
             stroke-linejoin=\"round\"{dash}/>",
            d.trim_start()
        );
    }
    s.push('\n');
    (color, dash)
}

/// Events over the lines: a red line through the plot (from `band_h` above it), the label in
/// the rows above, in the first row where it does not run into another (none where every row
/// is taken: the events table lists them all).
fn draw_markers(s: &mut String, groups: &[(f64, String)], frame: &PlotFrame, band_h: f64, w: f64) {
    let (mt, ph) = (frame.top, frame.height);
    let mut row_right = [f64::NEG_INFINITY; MARK_ROWS];
    for (x, label) in groups {
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"{EVENT_RED}\" stroke-width=\"1.3\"/>",
            mt - band_h,
            mt + ph
        );
        let text = fit_text(label, MARK_TEXT, Face::Sans, w - 4.0);
        let tw = fonts::text_width(&text, MARK_TEXT, Face::Sans);
        let left = (x - tw / 2.0).clamp(2.0, (w - tw - 2.0).max(2.0));
        if let Some(row) = (0..MARK_ROWS).find(|&r| row_right[r] + 6.0 <= left) {
            row_right[row] = left + tw;
            let y = MARGIN.2 + row as f64 * MARK_ROW + MARK_TEXT;
            let _ = writeln!(
                s,
                "<text x=\"{left:.1}\" y=\"{y:.1}\" font-size=\"{MARK_TEXT}\" fill=\"{EVENT_RED}\">{}</text>",
                escape(&text)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(lines: &'a [Line], markers: &'a [Marker], bands: &'a [Band]) -> TimeChart<'a> {
        TimeChart {
            id: "t",
            caption: "t",
            y_label: "TFLOP/s",
            lines,
            bands,
            markers,
            span_s: 300.0,
            max_step_s: 2.5,
            from_zero: true,
            width: 760.0,
        }
    }

    fn line(points: Vec<(f64, Option<f64>)>) -> Line {
        Line {
            name: "GPU 0".into(),
            points,
            color: 0,
            dashed: false,
        }
    }

    /// The (x, y) pairs of every path.
    fn path_points(svg: &str) -> Vec<Vec<(f64, f64)>> {
        let mut out = Vec::new();
        for path in svg.split("<path d=\"").skip(1) {
            let d = &path[..path.find('"').unwrap()];
            for run in d.split('M').map(str::trim).filter(|r| !r.is_empty()) {
                out.push(
                    run.split('L')
                        .map(|p| {
                            let (x, y) = p.trim().split_once(',').unwrap();
                            (x.parse().unwrap(), y.parse().unwrap())
                        })
                        .collect(),
                );
            }
        }
        out
    }

    #[test]
    fn nothing_known_draws_nothing() {
        assert_eq!(time_chart(&spec(&[], &[], &[])), None);
        let l = [line(vec![(1.0, None), (2.0, None)])];
        assert_eq!(time_chart(&spec(&l, &[], &[])), None);
    }

    #[test]
    fn an_unknown_value_or_a_missing_stretch_is_a_gap_not_a_zero() {
        let mut pts: Vec<(f64, Option<f64>)> = (1..=100).map(|t| (t as f64, Some(500.0))).collect();
        pts[49].1 = None; // t = 50
        pts.retain(|p| !(70.0..80.0).contains(&p.0)); // ten seconds with no sample
        let f = time_chart(&spec(&[line(pts)], &[], &[])).unwrap();
        let runs = path_points(&f.svg);
        assert_eq!(runs.len(), 3, "{runs:?}");
        // Every drawn point is at 500, none at 0 (the plot's bottom).
        let ys: Vec<f64> = runs.iter().flatten().map(|p| p.1).collect();
        assert!(ys.windows(2).all(|w| (w[0] - w[1]).abs() < 0.05), "{ys:?}");
    }

    #[test]
    fn a_reading_alone_is_a_dot_and_one_sample_draws() {
        let f = time_chart(&spec(&[line(vec![(0.0, Some(3.0))])], &[], &[])).unwrap();
        assert!(f.svg.contains("<circle"), "{}", f.svg);
        let f = time_chart(&spec(
            &[line(vec![(5.0, Some(1.0)), (6.0, None), (7.0, Some(2.0))])],
            &[],
            &[],
        ))
        .unwrap();
        assert_eq!(f.svg.matches("<circle").count(), 2);
    }

    /// A week at one sample a second is a few thousand points, and a one-second dip in it shows.
    #[test]
    fn a_long_series_is_thinned_and_keeps_its_dips() {
        let n = 7 * 24 * 3600;
        let pts: Vec<(f64, Option<f64>)> = (0..n)
            .map(|t| (t as f64, Some(if t == 400_000 { 100.0 } else { 600.0 })))
            .collect();
        let mut c = spec(&[], &[], &[]);
        let lines = [line(pts)];
        c.lines = &lines;
        c.span_s = n as f64;
        let f = time_chart(&c).unwrap();
        let drawn: usize = path_points(&f.svg).iter().map(Vec::len).sum();
        assert!(drawn < 4000, "{drawn} points");
        let ys: Vec<f64> = path_points(&f.svg)
            .into_iter()
            .flatten()
            .map(|p| p.1)
            .collect();
        let (top, bottom) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(0.0, f64::max),
        );
        assert!(bottom - top > 80.0, "the dip is lost: {top}..{bottom}");
        assert!(f.svg.contains("time since the start (h)"));
    }

    #[test]
    fn markers_are_red_lines_with_labels_that_do_not_collide() {
        let l = [line((0..300).map(|t| (t as f64, Some(1.0))).collect())];
        let markers: Vec<Marker> = [100.0, 101.0, 103.0, 200.0, 299.5]
            .into_iter()
            .map(|t| Marker {
                t,
                label: format!("Xid 79 GPU1 at {t}"),
            })
            .collect();
        let bands = [
            Band {
                t0: 0.0,
                t1: 150.0,
                label: "gemm".into(),
                shade: 0,
            },
            Band {
                t0: 150.0,
                t1: 300.0,
                label: "memory".into(),
                shade: 1,
            },
        ];
        let f = time_chart(&spec(&l, &markers, &bands)).unwrap();
        assert_eq!(f.svg.matches(&format!("stroke=\"{EVENT_RED}\"")).count(), 5);
        assert!(f.svg.contains(">gemm</text>") && f.svg.contains(">memory</text>"));
        // Labels in one row never overlap, and none passes the figure's edges.
        let mut boxes: Vec<(f64, f64, f64)> = Vec::new();
        for t in f.svg.split("<text x=\"").skip(1) {
            if !t[..t.find('>').unwrap()].contains(EVENT_RED) {
                continue;
            }
            let x: f64 = t[..t.find('"').unwrap()].parse().unwrap();
            let rest = &t[t.find("y=\"").unwrap() + 3..];
            let y: f64 = rest[..rest.find('"').unwrap()].parse().unwrap();
            let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let w = fonts::text_width(text, MARK_TEXT, Face::Sans);
            assert!(x >= 0.0 && x + w <= f.width + 0.5, "{text} at {x}");
            boxes.push((y, x, x + w));
        }
        assert!(boxes.len() >= 3, "{boxes:?}");
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(
                    a.0 != b.0 || a.2 <= b.1 || b.2 <= a.1,
                    "labels overlap: {a:?} {b:?}"
                );
            }
        }
    }

    /// Bands too narrow for their names are named in the legend instead, all of them: some
    /// named above the plot and some not would read as a pattern that is not there.
    #[test]
    fn narrow_bands_are_named_in_the_legend() {
        let l = [line((0..1800).map(|t| (t as f64, Some(1.0))).collect())];
        let loads = ["gemm", "memory", "pcie"];
        let bands: Vec<Band> = (0..25)
            .map(|i| Band {
                t0: i as f64 * 72.0,
                t1: (i + 1) as f64 * 72.0,
                label: loads[i % 3].into(),
                shade: i % 3,
            })
            .collect();
        let mut c = spec(&l, &[], &bands);
        c.span_s = 1800.0;
        let f = time_chart(&c).unwrap();
        for name in loads {
            assert_eq!(
                f.svg.matches(&format!(">{name}</text>")).count(),
                1,
                "{name}"
            );
        }
        assert_eq!(
            f.svg.matches("height=\"10\" fill=").count(),
            3,
            "three swatches"
        );
        assert!(f.svg.contains("time since the start (min)"));
    }

    /// A week of five-minute phase cycles is not shaded: stripes finer than the pixels.
    #[test]
    fn bands_finer_than_the_pixels_are_not_drawn() {
        let l = [line(vec![(0.0, Some(1.0)), (604_800.0, Some(1.0))])];
        let bands: Vec<Band> = (0..10_000)
            .map(|i| Band {
                t0: i as f64 * 60.0,
                t1: (i + 1) as f64 * 60.0,
                label: "gemm".into(),
                shade: 0,
            })
            .collect();
        let mut c = spec(&l, &[], &bands);
        c.span_s = 604_800.0;
        let f = time_chart(&c).unwrap();
        assert!(!f.svg.contains(SHADES[0]), "bands drawn");
        assert!(f.svg.len() < 20_000, "{} bytes", f.svg.len());
        assert!(bands_shaded(25, 760.0) && !bands_shaded(10_000, 760.0));
    }

    #[test]
    fn eight_gpus_have_eight_colours() {
        let lines: Vec<Line> = (0..8)
            .map(|i| Line {
                name: format!("GPU {i}"),
                points: vec![(1.0, Some(i as f64)), (2.0, Some(i as f64))],
                color: i,
                dashed: false,
            })
            .collect();
        let f = time_chart(&spec(&lines, &[], &[])).unwrap();
        let mut used: Vec<&str> = f
            .svg
            .split("<path d=\"")
            .skip(1)
            .map(|p| {
                let at = p.find("stroke=\"").unwrap() + 8;
                &p[at..at + 7]
            })
            .collect();
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), 8, "{used:?}");
    }

    #[test]
    fn a_fitted_axis_spans_the_values() {
        let mut c = spec(&[], &[], &[]);
        let lines = [line(vec![(0.0, Some(1980.0)), (1.0, Some(1755.0))])];
        c.lines = &lines;
        c.from_zero = false;
        let f = time_chart(&c).unwrap();
        assert!(!f.svg.contains("text-anchor=\"end\">0</text>"), "{}", f.svg);
        // A constant reading has an axis too.
        let lines = [line(vec![(0.0, Some(70.0)), (1.0, Some(70.0))])];
        c.lines = &lines;
        assert!(time_chart(&c).is_some());
    }
}
