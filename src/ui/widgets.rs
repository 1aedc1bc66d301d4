//! Small widgets the views share: the coloured badge and the matrix of coloured cells (topology,
//! health verdicts, bandwidth heatmaps). Views use these; these use no view.

use eframe::egui::{
    self, Align2, Color32, CornerRadius, FontId, Rect, RichText, Sense, Stroke, StrokeKind, Ui,
    Vec2, WidgetInfo, pos2, vec2,
};

use super::palette::{self, SourceBadge};

/// A small colored pill with `text`.
pub fn badge(ui: &mut Ui, text: &str, fill: Color32) -> egui::Response {
    egui::Frame::new()
        .fill(fill)
        .corner_radius(CornerRadius::same(8))
        .inner_margin(egui::Margin::symmetric(7, 1))
        .show(ui, |ui| {
            ui.label(
                RichText::new(text.to_uppercase())
                    .size(10.5)
                    .strong()
                    .color(palette::text_on(fill)),
            )
        })
        .inner
}

/// The badge saying where something shown comes from, in its word and colour.
pub fn source_badge(ui: &mut Ui, kind: SourceBadge) -> egui::Response {
    badge(ui, kind.word(), kind.color())
}

/// One colored part of a matrix cell.
pub(crate) struct Segment {
    pub text: String,
    pub fill: Option<Color32>,
}

/// A matrix cell: one or more colored segments, an accessible label and hover text.
pub(crate) struct Cell {
    pub segments: Vec<Segment>,
    pub label: String,
    pub hover: String,
}

impl Cell {
    pub(crate) fn single(
        text: impl Into<String>,
        fill: Option<Color32>,
        label: String,
        hover: String,
    ) -> Self {
        Self {
            segments: vec![Segment {
                text: text.into(),
                fill,
            }],
            label,
            hover,
        }
    }
}

/// Width of a matrix's row-label column.
const MATRIX_LABEL_W: f32 = 60.0;

/// Width of a [`matrix`] of `cols` columns of `cell_w` without extra columns.
pub(crate) fn matrix_width(cols: usize, cell_w: f32) -> f32 {
    MATRIX_LABEL_W + cell_w * cols as f32
}

/// Draws a matrix of `rows × cols` cells with headers; extra text columns follow on the right.
pub(crate) fn matrix(
    ui: &mut Ui,
    id_salt: &str,
    col_labels: &[String],
    row_labels: &[String],
    cell_size: Vec2,
    extra_cols: &[(&str, f32, Vec<String>)],
    cell: impl FnMut(usize, usize) -> Option<Cell>,
) {
    matrix_hovered(
        ui, id_salt, col_labels, row_labels, cell_size, extra_cols, cell,
    );
}

/// [`matrix`], returning the hovered cell (row, column) and its response, for a caller that
/// shows more than text on hover (the Live overlay's sparkline).
pub(crate) fn matrix_hovered(
    ui: &mut Ui,
    id_salt: &str,
    col_labels: &[String],
    row_labels: &[String],
    cell_size: Vec2,
    extra_cols: &[(&str, f32, Vec<String>)],
    mut cell: impl FnMut(usize, usize) -> Option<Cell>,
) -> Option<(usize, usize, egui::Response)> {
    let visuals = ui.visuals().clone();
    let mono = FontId::monospace(12.5);
    let label_w = MATRIX_LABEL_W;
    let header_h = 22.0;
    let extra_w: f32 = extra_cols.iter().map(|(_, w, _)| *w).sum();
    let size = vec2(
        label_w + cell_size.x * col_labels.len() as f32 + extra_w,
        header_h + cell_size.y * row_labels.len() as f32,
    );
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect.expand(2.0));
    let text = visuals.text_color();
    let weak = visuals.weak_text_color();
    let origin = rect.min;
    for (c, l) in col_labels.iter().enumerate() {
        let x = origin.x + label_w + cell_size.x * (c as f32 + 0.5);
        painter.text(
            pos2(x, origin.y + header_h / 2.0),
            Align2::CENTER_CENTER,
            l,
            mono.clone(),
            text,
        );
    }
    let mut ex = origin.x + label_w + cell_size.x * col_labels.len() as f32 + 14.0;
    for (title, w, values) in extra_cols {
        painter.text(
            pos2(ex, origin.y + header_h / 2.0),
            Align2::LEFT_CENTER,
            *title,
            FontId::proportional(12.0),
            weak,
        );
        for (r, v) in values.iter().enumerate() {
            let y = origin.y + header_h + cell_size.y * (r as f32 + 0.5);
            painter.text(pos2(ex, y), Align2::LEFT_CENTER, v, mono.clone(), text);
        }
        ex += *w;
    }
    let mut hovered: Option<(usize, usize)> = None;
    let mut hovered_response = None;
    for (r, l) in row_labels.iter().enumerate() {
        let y = origin.y + header_h + cell_size.y * r as f32;
        painter.text(
            pos2(origin.x + label_w - 8.0, y + cell_size.y / 2.0),
            Align2::RIGHT_CENTER,
            l,
            mono.clone(),
            text,
        );
        for c in 0..col_labels.len() {
            let Some(cell) = cell(r, c) else {
                continue;
            };
            let x = origin.x + label_w + cell_size.x * c as f32;
            let cell_rect = Rect::from_min_size(pos2(x, y), cell_size).shrink(1.5);
            let n = cell.segments.len().max(1) as f32;
            let seg_w = cell_rect.width() / n;
            for (k, seg) in cell.segments.iter().enumerate() {
                let seg_rect = Rect::from_min_size(
                    pos2(cell_rect.left() + seg_w * k as f32, cell_rect.top()),
                    vec2(seg_w, cell_rect.height()),
                );
                let seg_rect = if n > 1.0 {
                    seg_rect.shrink2(vec2(0.75, 0.0))
                } else {
                    seg_rect
                };
                let fill = seg.fill.unwrap_or_else(|| palette::neutral_cell(&visuals));
                painter.rect_filled(seg_rect, CornerRadius::same(3), fill);
                let color = if seg.fill.is_some() {
                    palette::text_on(fill)
                } else {
                    weak
                };
                painter.text(
                    seg_rect.center(),
                    Align2::CENTER_CENTER,
                    &seg.text,
                    mono.clone(),
                    color,
                );
            }
            let id = ui.scope_id().with((id_salt, r, c));
            let resp = ui.interact(cell_rect, id, Sense::hover());
            let label = cell.label.clone();
            resp.widget_info(|| WidgetInfo::labeled(egui::Role::Label, true, &label));
            if resp.hovered() {
                hovered = Some((r, c));
                hovered_response = Some((r, c, resp.clone()));
                painter.rect_stroke(
                    cell_rect.expand(1.0),
                    CornerRadius::same(4),
                    Stroke::new(2.0, text),
                    StrokeKind::Outside,
                );
            }
            if !cell.hover.is_empty() {
                resp.on_hover_text(RichText::new(cell.hover));
            }
        }
    }
    // Underline the hovered cell's row and column headers so the pair is easy to read.
    if let Some((r, c)) = hovered {
        let hx = origin.x + label_w + cell_size.x * (c as f32 + 0.5);
        painter.line_segment(
            [
                pos2(hx - 12.0, origin.y + header_h - 3.0),
                pos2(hx + 12.0, origin.y + header_h - 3.0),
            ],
            Stroke::new(2.0, text),
        );
        let ry = origin.y + header_h + cell_size.y * (r as f32 + 1.0) - 4.0;
        painter.line_segment(
            [pos2(origin.x + 6.0, ry), pos2(origin.x + label_w - 8.0, ry)],
            Stroke::new(2.0, text),
        );
    }
    hovered_response
}
