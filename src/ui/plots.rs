//! Shared plot pieces: a buffer-size axis on a log2 scale and its hover label, the legend drawn
//! under plots (never over their data) with each series' colour and marker, and sections that
//! lose their widgets in documents.

use std::collections::BTreeSet;

use eframe::egui::{self, Color32, Pos2, Rect, RichText, Sense, Stroke, Ui, pos2, vec2};
use egui_plot::{GridMark, HoverPosition, MarkerShape};

use super::palette;

use crate::model::quantities::format_bytes;

/// x coordinate of a size on the log2 axis.
pub fn size_x(bytes: u64) -> f64 {
    (bytes as f64).log2()
}

/// Tick label for a log2 size axis: `4 KiB`, `1 GiB`.
pub fn size_tick(mark: GridMark, _range: &std::ops::RangeInclusive<f64>) -> String {
    format_bytes(2f64.powf(mark.value).round() as u64)
}

/// Hover label for a point on a log2 size axis: series name, size and value with its unit.
pub fn size_hover(pos: &HoverPosition<'_>, unit: &str) -> Option<String> {
    match pos {
        HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => Some(format!(
            "{plot_name}\n{} · {:.1} {unit}",
            format_bytes(2f64.powf(position.x).round() as u64),
            position.y
        )),
        HoverPosition::Elsewhere { .. } => None,
    }
}

/// Hover label for a point whose y is log10 of the value.
pub fn size_hover_log(pos: &HoverPosition<'_>, unit: &str) -> Option<String> {
    match pos {
        HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => Some(format!(
            "{plot_name}\n{} · {:.2} {unit}",
            format_bytes(2f64.powf(position.x).round() as u64),
            10f64.powf(position.y)
        )),
        HoverPosition::Elsewhere { .. } => None,
    }
}

/// Most series a legend lists; a plot with more leaves their names to hover.
pub const LEGEND_MAX: usize = 12;

/// One entry of a legend drawn beside a plot: the series' name, colour, marker and line.
#[derive(Clone, Debug, PartialEq)]
pub struct LegendEntry {
    pub name: String,
    pub color: Color32,
    /// The series' marker; `None`: a line without markers.
    pub marker: Option<MarkerShape>,
    /// Dashed line (modeled figures).
    pub dashed: bool,
}

impl LegendEntry {
    /// The `i`-th series of a plot: its colour and marker from [`palette`].
    pub fn series(i: usize, name: impl Into<String>, dashed: bool) -> Self {
        Self {
            name: name.into(),
            color: palette::series_color(i),
            marker: Some(palette::series_marker(i)),
            dashed,
        }
    }
}

/// A legend under a plot (never over its data): one swatch and name per entry, wrapping to
/// the available width. With `hidden`, each entry is a toggle that hides or shows its series
/// (a plot filter: it changes what is drawn, never what runs).
pub fn legend_below(
    ui: &mut Ui,
    entries: &[LegendEntry],
    mut hidden: Option<&mut BTreeSet<String>>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        for e in entries {
            let shown = hidden.as_ref().is_none_or(|h| !h.contains(&e.name));
            let text = if shown {
                RichText::new(&e.name).small()
            } else {
                RichText::new(&e.name).small().weak().strikethrough()
            };
            // Swatch and name are one widget, so that wrapping never parts them.
            let galley = egui::WidgetText::from(text).into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Small,
            );
            let swatch = vec2(26.0, 14.0);
            let size = vec2(
                swatch.x + 4.0 + galley.size().x,
                galley.size().y.max(swatch.y),
            );
            let sense = if hidden.is_some() {
                Sense::click()
            } else {
                Sense::hover()
            };
            let (rect, response) = ui.allocate_exact_size(size, sense);
            let kind = if hidden.is_some() {
                egui::Role::Button
            } else {
                egui::Role::Label
            };
            response.widget_info(|| egui::WidgetInfo::labeled(kind, true, &e.name));
            let swatch_rect =
                Rect::from_min_size(pos2(rect.left(), rect.center().y - swatch.y / 2.0), swatch);
            paint_swatch(ui.painter(), swatch_rect, e, shown);
            let text_pos = pos2(
                swatch_rect.right() + 4.0,
                rect.center().y - galley.size().y / 2.0,
            );
            let color = if response.hovered() && hidden.is_some() {
                ui.visuals().strong_text_color()
            } else {
                ui.visuals().text_color()
            };
            ui.painter().galley(text_pos, galley, color);
            if let Some(h) = hidden.as_deref_mut() {
                let response = response
                    .on_hover_cursor(egui::CursorIcon::PointingHand)
                    .on_hover_text(if shown {
                        "Click to hide this series"
                    } else {
                        "Click to show this series"
                    });
                if response.clicked() {
                    if shown {
                        h.insert(e.name.clone());
                    } else {
                        h.remove(&e.name);
                    }
                }
            }
            ui.add_space(10.0);
        }
    });
}

/// A short line in the entry's colour (dashed when modeled) with its marker in the middle.
fn paint_swatch(painter: &egui::Painter, rect: Rect, e: &LegendEntry, shown: bool) {
    let color = if shown {
        e.color
    } else {
        e.color.gamma_multiply(0.3)
    };
    let y = rect.center().y;
    let stroke = Stroke::new(2.0, color);
    if e.dashed {
        painter.extend(egui::Shape::dashed_line(
            &[pos2(rect.left(), y), pos2(rect.right(), y)],
            stroke,
            4.0,
            3.0,
        ));
    } else {
        painter.line_segment([pos2(rect.left(), y), pos2(rect.right(), y)], stroke);
    }
    if let Some(m) = e.marker {
        paint_marker(painter, rect.center(), 4.5, m, color);
    }
}

/// Draws a plot marker the way egui_plot draws it (filled shapes, stroked crosses).
pub fn paint_marker(painter: &egui::Painter, c: Pos2, r: f32, shape: MarkerShape, color: Color32) {
    let stroke = Stroke::new(1.5, color);
    let poly = |pts: Vec<Pos2>| egui::Shape::convex_polygon(pts, color, Stroke::NONE);
    let (s, h) = (r * 0.866, r * 0.5);
    match shape {
        MarkerShape::Circle => {
            painter.circle_filled(c, r, color);
        }
        MarkerShape::Square => {
            painter.rect_filled(
                Rect::from_center_size(c, vec2(1.6 * r, 1.6 * r)),
                0.0,
                color,
            );
        }
        MarkerShape::Diamond => {
            painter.add(poly(vec![
                c + vec2(0.0, -r),
                c + vec2(r, 0.0),
                c + vec2(0.0, r),
                c + vec2(-r, 0.0),
            ]));
        }
        MarkerShape::Up => {
            painter.add(poly(vec![
                c + vec2(0.0, -r),
                c + vec2(s, h),
                c + vec2(-s, h),
            ]));
        }
        MarkerShape::Down => {
            painter.add(poly(vec![
                c + vec2(0.0, r),
                c + vec2(-s, -h),
                c + vec2(s, -h),
            ]));
        }
        MarkerShape::Left => {
            painter.add(poly(vec![
                c + vec2(-r, 0.0),
                c + vec2(h, -s),
                c + vec2(h, s),
            ]));
        }
        MarkerShape::Right => {
            painter.add(poly(vec![
                c + vec2(r, 0.0),
                c + vec2(-h, s),
                c + vec2(-h, -s),
            ]));
        }
        MarkerShape::Cross => {
            let d = r * 0.75;
            painter.line_segment([c + vec2(-d, -d), c + vec2(d, d)], stroke);
            painter.line_segment([c + vec2(-d, d), c + vec2(d, -d)], stroke);
        }
        MarkerShape::Plus => {
            painter.line_segment([c + vec2(-r, 0.0), c + vec2(r, 0.0)], stroke);
            painter.line_segment([c + vec2(0.0, -r), c + vec2(0.0, r)], stroke);
        }
        MarkerShape::Asterisk => {
            painter.line_segment([c + vec2(0.0, -r), c + vec2(0.0, r)], stroke);
            painter.line_segment([c + vec2(-s, -h), c + vec2(s, h)], stroke);
            painter.line_segment([c + vec2(-s, h), c + vec2(s, -h)], stroke);
        }
    }
}

/// Grid marks at every integer of a log₂ axis (1, 2, 4, … GPUs), thicker every fourth power.
pub fn log2_grid(input: egui_plot::GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 64.0 {
        return Vec::new();
    }
    (lo.ceil() as i64..=hi.floor() as i64)
        .map(|v| GridMark {
            value: v as f64,
            step_size: if v % 4 == 0 { 4.0 } else { 1.0 },
        })
        .collect()
}

/// A titled part of a view: a collapsing header, open at first.
pub fn section(ui: &mut Ui, title: &str, body: impl FnOnce(&mut Ui)) {
    egui::CollapsingHeader::new(title)
        .default_open(true)
        .show(ui, body);
}
