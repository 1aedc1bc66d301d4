//! Line charts as SVG: a log2 x axis (buffer sizes or GPU counts), a linear y axis from 0, and
//! the legend under the plot, wrapped into as many rows as its entries need. The axes span every
//! finite point, so that the curve ends at the largest size measured and a curve of any number
//! of points stays inside its frame.

use std::fmt::Write as _;

use super::Figure;
use super::fonts::{self, Face};
use super::html::escape;
use crate::model::quantities::format_bytes;

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// (x, y) with x > 0; points that cannot be drawn (x ≤ 0, not finite) are left out.
    pub points: Vec<(f64, f64)>,
    /// Modeled lines are dashed.
    pub dashed: bool,
}

/// What the x axis counts; both are drawn in log2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Bytes, labelled `4 KiB`, `1 MiB`, …
    Bytes,
    /// GPUs, labelled `1`, `2`, `4`, …
    Gpus,
}

/// What a chart shows and how wide it is drawn.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// Element id of the figure.
    pub id: &'a str,
    /// The caption (also the SVG's accessible label).
    pub caption: &'a str,
    /// The x axis' label (`(log scale)` is added).
    pub x_label: &'a str,
    /// The y axis' label.
    pub y_label: &'a str,
    /// What x counts.
    pub axis: Axis,
    /// The lines.
    pub series: &'a [Series],
    /// The SVG's width in its units (about CSS px); the height follows from the legend.
    pub width: f64,
}

/// Colours of the series, in order: Okabe & Ito's colour-blind-safe palette ("Color Universal
/// Design", 2008, <https://jfly.uni-koeln.de/color/>) ordered for a white page (their yellow
/// left out: it is faint on white).
pub const COLORS: [&str; 7] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
];

/// Plot height, units.
const PLOT_H: f64 = 220.0;
/// Margins around the plot: left (y ticks and label), right, top, bottom (x ticks and label).
const MARGIN: (f64, f64, f64, f64) = (58.0, 14.0, 10.0, 42.0);
/// Tick label size.
pub(super) const TICK: f64 = 11.0;
/// Legend text size and row height.
pub(super) const LEGEND: f64 = 11.0;
pub(super) const LEGEND_ROW: f64 = 17.0;
/// Series with more points than this are drawn without markers (a line is clearer).
const MARKERS_UP_TO: usize = 48;

/// A "nice" step (1, 2 or 5 × 10ⁿ) for about `target` ticks over `span`.
pub fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// The points of `s` that can be drawn.
fn drawable(s: &Series) -> Vec<(f64, f64)> {
    s.points
        .iter()
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0)
        .collect()
}

/// Where a legend entry goes: its row, x offset and text (shortened to fit a row).
pub(super) struct LegendSlot {
    pub(super) row: usize,
    pub(super) x: f64,
    pub(super) text: String,
}

/// `text` cut with "…" to at most `max` wide in `face` at `size`.
pub fn fit_text(text: &str, size: f64, face: Face, max: f64) -> String {
    if fonts::text_width(text, size, face) <= max {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let s: String = chars.iter().collect::<String>() + "…";
        if fonts::text_width(&s, size, face) <= max {
            return s;
        }
    }
    String::new()
}

/// Legend entries laid out left to right, wrapping at `width`.
pub(super) fn legend_slots(names: &[&str], width: f64) -> Vec<LegendSlot> {
    let mut out = Vec::new();
    let (mut row, mut x) = (0usize, 0.0_f64);
    // A line sample (30) before the text, a gap (18) after it.
    let text_room = (width - 48.0).max(20.0);
    for name in names {
        let text = fit_text(name, LEGEND, Face::Sans, text_room);
        let w = 30.0 + fonts::text_width(&text, LEGEND, Face::Sans) + 18.0;
        if x > 0.0 && x + w > width {
            row += 1;
            x = 0.0;
        }
        out.push(LegendSlot { row, x, text });
        x += w;
    }
    out
}

/// Where a chart's plot sits in its SVG and what its y axis spans: the axes, grid, ticks and
/// legend entries both charts ([`chart`] and the time chart) write the same way.
pub(super) struct PlotFrame {
    /// Left edge of the plot (the y ticks and label are left of it), units.
    pub(super) left: f64,
    /// Top edge of the plot.
    pub(super) top: f64,
    /// The plot's width.
    pub(super) width: f64,
    /// The plot's height.
    pub(super) height: f64,
    /// The margin under the plot (x ticks and label), above the legend.
    pub(super) bottom: f64,
    /// The y axis' lowest and highest value.
    pub(super) y_range: (f64, f64),
}

impl PlotFrame {
    /// The SVG's height with `legend_rows` rows of legend under the plot.
    pub(super) fn height_with_legend(&self, legend_rows: usize) -> f64 {
        self.top + self.height + self.bottom + legend_rows as f64 * LEGEND_ROW + 6.0
    }

    /// Where value `v` is drawn, vertically.
    pub(super) fn y(&self, v: f64) -> f64 {
        let (ymin, ymax) = self.y_range;
        self.top + self.height - (v - ymin) / (ymax - ymin) * self.height
    }

    /// The y grid lines and tick labels, every `step` over the y range, with `decimals`.
    pub(super) fn y_grid(&self, s: &mut String, step: f64, decimals: usize) {
        let (ml, pw) = (self.left, self.width);
        let (ymin, ymax) = self.y_range;
        let mut k = (ymin / step).round() as i64;
        while (k as f64) * step <= ymax + step * 0.01 {
            let v = k as f64 * step;
            let py = self.y(v);
            let _ = writeln!(
                s,
                "<line x1=\"{ml:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#dde\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.decimals$}</text>",
                ml + pw,
                ml - 6.0,
                py + 4.0,
            );
            k += 1;
        }
    }

    /// An x grid line at `px` with its tick label under the plot.
    pub(super) fn x_tick(&self, s: &mut String, px: f64, label: &str) {
        let (mt, ph) = (self.top, self.height);
        let _ = writeln!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{mt:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#eef\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            mt + ph,
            mt + ph + 15.0,
            escape(label)
        );
    }

    /// The plot's outline and the two axis labels (the y label turned along its axis).
    pub(super) fn axes(&self, s: &mut String, x_label: &str, y_label: &str) {
        let (ml, mt, pw, ph) = (self.left, self.top, self.width, self.height);
        let _ = writeln!(
            s,
            "<rect x=\"{ml:.1}\" y=\"{mt:.1}\" width=\"{pw:.1}\" height=\"{ph:.1}\" fill=\"none\" stroke=\"#889\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
             <text x=\"14\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
            ml + pw / 2.0,
            mt + ph + 33.0,
            escape(x_label),
            mt + ph / 2.0,
            mt + ph / 2.0,
            escape(y_label)
        );
    }

    /// Where a legend entry's sample starts: its left edge and the middle of its row.
    pub(super) fn legend_at(&self, slot: &LegendSlot) -> (f64, f64) {
        let ly = self.top + self.height + self.bottom + slot.row as f64 * LEGEND_ROW + 8.0;
        (self.left + slot.x, ly)
    }

    /// A line's legend entry: a short stroke in its colour and dash, then its name.
    pub(super) fn legend_line(&self, s: &mut String, slot: &LegendSlot, color: &str, dash: &str) {
        let (lx0, ly) = self.legend_at(slot);
        let _ = writeln!(
            s,
            "<line x1=\"{lx0:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{LEGEND}\">{}</text>",
            lx0 + 24.0,
            lx0 + 30.0,
            ly + 4.0,
            escape(&slot.text)
        );
    }
}

/// The opening of a chart's SVG, `w` × `h` on white, labelled `caption` for screen readers.
pub(super) fn svg_open(s: &mut String, w: f64, h: f64, caption: &str) {
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" \
         height=\"{h:.0}\" role=\"img\" aria-label=\"{}\" font-family=\"{}\" font-size=\"{TICK}\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#ffffff\"/>\n",
        escape(caption),
        fonts::SANS_FAMILY
    );
}

/// The SVG `s` closed, as a figure `w` × `h` with its id and caption.
pub(super) fn svg_figure(mut s: String, id: &str, caption: &str, w: f64, h: f64) -> Figure {
    s.push_str("</svg>\n");
    Figure {
        id: id.to_string(),
        caption: Some(caption.to_string()),
        svg: s,
        width: w,
        height: h,
    }
}

/// Appends `points` (in SVG units) to a path's data as one subpath: ` Mx,y Lx,y …`.
pub(super) fn subpath(d: &mut String, points: impl IntoIterator<Item = (f64, f64)>) {
    for (j, (x, y)) in points.into_iter().enumerate() {
        let _ = write!(d, "{}{x:.1},{y:.1}", if j == 0 { " M" } else { " L" });
    }
}

/// The x tick positions, as powers of two: every power for GPU counts, every `k`-th for bytes
/// (k = 1, 2, 5, 10, 20 …: the fewest that leave room for the labels).
fn x_ticks(axis: Axis, x0: f64, x1: f64, plot_w: f64) -> Vec<i32> {
    let (k0, k1) = (x0.ceil() as i32, x1.floor() as i32);
    let room = (plot_w / 56.0).max(2.0);
    let span = f64::from((k1 - k0).max(1));
    let every = [1i32, 2, 5, 10, 20, 30, 40, 60]
        .into_iter()
        .find(|&e| span / f64::from(e) <= room)
        .unwrap_or(60);
    let every = match axis {
        // Powers of 1024 read best: 1 KiB, 1 MiB, 1 GiB when there are many.
        Axis::Bytes if every > 5 => (every.max(10) + 9) / 10 * 10,
        _ => every,
    };
    (k0..=k1).filter(|k| k.rem_euclid(every) == 0).collect()
}

/// The chart as an SVG figure; `None` when no series has a point that can be drawn.
pub fn chart(c: &Chart) -> Option<Figure> {
    let series: Vec<(&Series, Vec<(f64, f64)>)> = c
        .series
        .iter()
        .map(|s| (s, drawable(s)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    let pts: Vec<(f64, f64)> = series.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    if pts.is_empty() {
        return None;
    }
    let (ml, mr, mt, mb) = MARGIN;
    let w = c.width;
    let pw = w - ml - mr;
    let (x0, x1) = log2_span(&pts);
    let (ystep, y_range) = y_from_zero(&pts);
    let frame = PlotFrame {
        left: ml,
        top: mt,
        width: pw,
        height: PLOT_H,
        bottom: mb,
        y_range,
    };
    let names: Vec<&str> = series.iter().map(|(s, _)| s.name.as_str()).collect();
    let slots = legend_slots(&names, pw);
    let h = frame.height_with_legend(slots.last().map_or(0, |s| s.row + 1));
    let sx = |x: f64| ml + (x.log2() - x0) / (x1 - x0) * pw;

    let mut s = String::with_capacity(8 << 10);
    svg_open(&mut s, w, h, c.caption);
    let decimals = if ystep < 0.1 {
        2
    } else if ystep < 1.0 {
        1
    } else {
        0
    };
    frame.y_grid(&mut s, ystep, decimals);
    for k in x_ticks(c.axis, x0, x1, pw) {
        let v = 2f64.powi(k);
        let label = match c.axis {
            Axis::Gpus => format!("{v:.0}"),
            Axis::Bytes => format_bytes(v as u64),
        };
        frame.x_tick(&mut s, sx(v), &label);
    }
    frame.axes(&mut s, &format!("{} (log scale)", c.x_label), c.y_label);
    for (i, ((se, p), slot)) in series.iter().zip(&slots).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let dash = if se.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let mut d = String::with_capacity(p.len() * 16);
        subpath(&mut d, p.iter().map(|&(x, y)| (sx(x), frame.y(y))));
        let _ = writeln!(
            s,
            "<path d=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            d.trim_start()
        );
        if p.len() <= MARKERS_UP_TO {
            for (x, y) in p {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\"/>",
                    sx(*x),
                    frame.y(*y)
                );
            }
            s.push('\n');
        }
        frame.legend_line(&mut s, slot, color, dash);
    }
    Some(svg_figure(s, c.id, c.caption, w, h))
}

/// The log2 x axis' span over every point, padded so that markers sit inside the frame.
fn log2_span(pts: &[(f64, f64)]) -> (f64, f64) {
    let lx: Vec<f64> = pts.iter().map(|p| p.0.log2()).collect();
    let mut x0 = lx.iter().copied().fold(f64::INFINITY, f64::min);
    let mut x1 = lx.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if x1 - x0 < 1e-9 {
        x0 -= 0.5;
        x1 += 0.5;
    }
    let pad = (x1 - x0) * 0.02;
    (x0 - pad, x1 + pad)
}

/// The y axis' step and range: from 0 (or a step below the lowest point, when one is
/// negative) to a nice step above the largest point.
fn y_from_zero(pts: &[(f64, f64)]) -> (f64, (f64, f64)) {
    let ymax_data = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max);
    let ystep = nice_step(if ymax_data > 0.0 { ymax_data } else { 1.0 }, 5.0);
    let ymax = ((ymax_data / ystep).ceil() * ystep).max(ystep);
    let ymin = pts.iter().map(|p| p.1).fold(0.0_f64, f64::min);
    let ymin = if ymin < 0.0 {
        (ymin / ystep).floor() * ystep
    } else {
        0.0
    };
    (ystep, (ymin, ymax))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(series: &'a [Series], axis: Axis, width: f64) -> Chart<'a> {
        Chart {
            id: "c",
            caption: "c",
            x_label: "x",
            y_label: "y",
            axis,
            series,
            width,
        }
    }

    /// Every number pair of the paths' `M x,y L x,y` commands and the circles' centres.
    fn drawn_points(svg: &str) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        for path in svg.split("<path d=\"").skip(1) {
            let d = &path[..path.find('"').unwrap()];
            for pair in d.split(['M', 'L']).map(str::trim).filter(|p| !p.is_empty()) {
                let (x, y) = pair.split_once(',').unwrap();
                out.push((x.parse().unwrap(), y.parse().unwrap()));
            }
        }
        for c in svg.split("<circle cx=\"").skip(1) {
            let x: f64 = c[..c.find('"').unwrap()].parse().unwrap();
            let rest = &c[c.find("cy=\"").unwrap() + 4..];
            let y: f64 = rest[..rest.find('"').unwrap()].parse().unwrap();
            out.push((x, y));
        }
        out
    }

    #[test]
    fn points_that_cannot_be_drawn_are_left_out() {
        let s = Series {
            name: "x".into(),
            points: vec![(0.0, 1.0), (f64::NAN, 2.0), (4.0, f64::INFINITY)],
            dashed: false,
        };
        assert_eq!(chart(&spec(&[s], Axis::Bytes, 700.0)), None);
        let s = Series {
            name: "x".into(),
            points: vec![(4096.0, 1.0)],
            dashed: true,
        };
        let svg = chart(&spec(&[s], Axis::Bytes, 700.0)).unwrap().svg;
        assert!(svg.contains("<circle") && svg.contains("stroke-dasharray"));
    }

    /// A 1,024-point curve from 4 B to 16 GiB fits its frame, and the axis reaches the largest
    /// size: the curve ends at the frame's right edge, past the 1 GiB tick (not cut at 8 MiB).
    #[test]
    fn a_1024_point_curve_fits_its_axis() {
        let points: Vec<(f64, f64)> = (0..1024)
            .map(|i| {
                let x = 4.0 * 2f64.powf(i as f64 * 32.0 / 1023.0);
                (x, 400.0 * (1.0 - (-x / 1e8).exp()))
            })
            .collect();
        let series = [Series {
            name: "all_reduce nccl, 8 GPUs (modeled)".into(),
            points,
            dashed: true,
        }];
        let f = chart(&spec(&series, Axis::Bytes, 700.0)).unwrap();
        let (ml, mr, mt, _) = MARGIN;
        let drawn = drawn_points(&f.svg);
        assert!(drawn.len() >= 1024, "{}", drawn.len());
        for &(x, y) in &drawn {
            assert!(
                x >= ml - 0.05 && x <= 700.0 - mr + 0.05,
                "x {x} outside the plot"
            );
            assert!(
                y >= mt - 0.05 && y <= mt + PLOT_H + 0.05,
                "y {y} outside the plot"
            );
        }
        let plot_w = 700.0 - ml - mr;
        let last = drawn.iter().map(|p| p.0).fold(0.0, f64::max);
        assert!(
            last > 700.0 - mr - 0.05 * plot_w,
            "the curve ends at {last}"
        );
        assert!(f.svg.contains(">1 GiB</text>"), "no tick at 1 GiB");
        // Tick labels do not run into each other.
        let ticks = f.svg.matches("text-anchor=\"middle\">").count();
        assert!(ticks <= 12, "{ticks} x ticks");
    }

    #[test]
    fn the_legend_wraps_instead_of_running_off_the_chart() {
        let series: Vec<Series> = (0..12)
            .map(|i| Series {
                name: format!("all_reduce nccl, {i} GPUs, a long series name (modeled)"),
                points: vec![(1.0, 1.0), (2.0, i as f64)],
                dashed: i % 2 == 0,
            })
            .collect();
        let f = chart(&spec(&series, Axis::Gpus, 380.0)).unwrap();
        for t in f.svg.split("<text x=\"").skip(1) {
            let x: f64 = t[..t.find('"').unwrap()].parse().unwrap();
            let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            let anchor_end = t[..t.find('>').unwrap()].contains("text-anchor=\"end\"");
            let anchor_mid = t[..t.find('>').unwrap()].contains("text-anchor=\"middle\"");
            let w = fonts::text_width(text, LEGEND, Face::Sans);
            let right = if anchor_end {
                x
            } else if anchor_mid {
                x + w / 2.0
            } else {
                x + w
            };
            assert!(
                right <= f.width + 0.5,
                "{text:?} ends at {right} of {}",
                f.width
            );
        }
        assert!(f.height > MARGIN.2 + PLOT_H + MARGIN.3 + 6.0 * LEGEND_ROW);
    }
}
