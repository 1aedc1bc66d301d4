//! Shared plot pieces: a buffer-size axis on a log2 scale and its hover label.

use egui_plot::{GridMark, HoverPosition};

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
