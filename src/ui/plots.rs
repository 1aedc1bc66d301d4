//! Shared plot pieces: a buffer-size axis on a log2 scale and its hover label, series colors,
//! the legend of plots over size, and sections that lose their widgets in documents.

use eframe::egui::{self, Color32, RichText, Ui, ecolor::Hsva};
use egui_plot::{Corner, GridMark, HoverPosition, Legend};

use crate::model::units::format_bytes;

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

/// Distinct colors that read on the dark and the light theme (Tableau 10), for the first series.
const SERIES: [Color32; 10] = [
    Color32::from_rgb(0x4e, 0x79, 0xa7),
    Color32::from_rgb(0xf2, 0x8e, 0x2b),
    Color32::from_rgb(0xe1, 0x57, 0x59),
    Color32::from_rgb(0x76, 0xb7, 0xb2),
    Color32::from_rgb(0x59, 0xa1, 0x4f),
    Color32::from_rgb(0xed, 0xc9, 0x48),
    Color32::from_rgb(0xb0, 0x7a, 0xa1),
    Color32::from_rgb(0xff, 0x9d, 0xa7),
    Color32::from_rgb(0x9c, 0x75, 0x5f),
    Color32::from_rgb(0xba, 0xb0, 0xac),
];

/// The color of the `i`-th series of a plot. Set it on every item of the series (line and
/// markers): egui_plot colors each item on its own, and a legend entry whose items differ in
/// color is drawn grey.
pub fn series_color(i: usize) -> Color32 {
    match SERIES.get(i) {
        Some(c) => *c,
        // Beyond the palette: hues a golden angle apart, as egui_plot picks them.
        None => Hsva::new(i as f32 * 0.618_034 % 1.0, 0.75, 0.8, 1.0).into(),
    }
}

/// The legend of a plot over buffer size: top left, the corner that curves growing with size
/// leave empty.
pub fn size_legend() -> Legend {
    Legend::default().position(Corner::LeftTop)
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

/// A titled part of a view: a collapsing header on screen, a plain heading in a document (a
/// report's PNG shows no widgets).
pub fn section(ui: &mut Ui, title: &str, document: bool, body: impl FnOnce(&mut Ui)) {
    if document {
        ui.label(RichText::new(title).strong());
        body(ui);
    } else {
        egui::CollapsingHeader::new(title)
            .default_open(true)
            .show(ui, body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_colors_differ() {
        let colors: Vec<Color32> = (0..24).map(series_color).collect();
        for (i, a) in colors.iter().enumerate() {
            assert!(!colors[i + 1..].contains(a), "color {i} repeats");
        }
    }
}
