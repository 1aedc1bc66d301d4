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
    let extra_w: f32 = extra_cols.iter().map(|(_, w, _)| *w).sum();
    let size = vec2(
        MATRIX_LABEL_W + cell_size.x * col_labels.len() as f32 + extra_w,
        MATRIX_HEADER_H + cell_size.y * row_labels.len() as f32,
    );
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let grid = Grid {
        painter: ui.painter_at(rect.expand(2.0)),
        visuals: ui.visuals().clone(),
        mono: FontId::monospace(12.5),
        origin: rect.min,
        cell_size,
    };
    grid.column_headers(col_labels);
    grid.extra_columns(col_labels.len(), extra_cols);
    let mut hovered = None;
    for (r, l) in row_labels.iter().enumerate() {
        grid.row_header(r, l);
        for c in 0..col_labels.len() {
            if let Some(cell) = cell(r, c) {
                let resp = grid.cell(ui, (id_salt, r, c), &cell);
                if resp.hovered() {
                    hovered = Some((r, c, resp.clone()));
                }
                if !cell.hover.is_empty() {
                    resp.on_hover_text(RichText::new(cell.hover));
                }
            }
        }
    }
    if let Some((r, c, _)) = &hovered {
        grid.underline_headers(*r, *c);
    }
    hovered
}

/// Height of a matrix's column-header row.
const MATRIX_HEADER_H: f32 = 22.0;

/// A [`matrix`] being painted: where it sits, its cells' size, the painter and fonts.
struct Grid {
    painter: egui::Painter,
    visuals: egui::Visuals,
    mono: FontId,
    origin: egui::Pos2,
    cell_size: Vec2,
}

impl Grid {
    /// The left edge of column `c` (fractional: 0.5 is the first column's middle).
    fn col_x(&self, c: f32) -> f32 {
        self.origin.x + MATRIX_LABEL_W + self.cell_size.x * c
    }

    /// The top edge of row `r` (fractional, as [`Grid::col_x`]).
    fn row_y(&self, r: f32) -> f32 {
        self.origin.y + MATRIX_HEADER_H + self.cell_size.y * r
    }

    fn column_headers(&self, labels: &[String]) {
        let text = self.visuals.text_color();
        for (c, l) in labels.iter().enumerate() {
            let at = pos2(
                self.col_x(c as f32 + 0.5),
                self.origin.y + MATRIX_HEADER_H / 2.0,
            );
            let font = self.mono.clone();
            self.painter.text(at, Align2::CENTER_CENTER, l, font, text);
        }
    }

    /// The text columns right of the `cols` cell columns: a title, then a value per row.
    fn extra_columns(&self, cols: usize, extra: &[(&str, f32, Vec<String>)]) {
        let (text, weak) = (self.visuals.text_color(), self.visuals.weak_text_color());
        let mut ex = self.col_x(cols as f32) + 14.0;
        for (title, w, values) in extra {
            let at = pos2(ex, self.origin.y + MATRIX_HEADER_H / 2.0);
            let font = FontId::proportional(12.0);
            self.painter
                .text(at, Align2::LEFT_CENTER, *title, font, weak);
            for (r, v) in values.iter().enumerate() {
                let at = pos2(ex, self.row_y(r as f32 + 0.5));
                let font = self.mono.clone();
                self.painter.text(at, Align2::LEFT_CENTER, v, font, text);
            }
            ex += *w;
        }
    }

    fn row_header(&self, r: usize, label: &str) {
        let at = pos2(
            self.origin.x + MATRIX_LABEL_W - 8.0,
            self.row_y(r as f32) + self.cell_size.y / 2.0,
        );
        let (font, text) = (self.mono.clone(), self.visuals.text_color());
        self.painter
            .text(at, Align2::RIGHT_CENTER, label, font, text);
    }

    /// Paints `cell` at row `r`, column `c` (`id`: salt, row, column) and returns its response,
    /// outlined while hovered.
    fn cell(&self, ui: &Ui, id: (&str, usize, usize), cell: &Cell) -> egui::Response {
        let (_, r, c) = id;
        let at = pos2(self.col_x(c as f32), self.row_y(r as f32));
        let cell_rect = Rect::from_min_size(at, self.cell_size).shrink(1.5);
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
            self.segment(seg_rect, seg);
        }
        let resp = ui.interact(cell_rect, ui.scope_id().with(id), Sense::hover());
        let label = cell.label.clone();
        resp.widget_info(|| WidgetInfo::labeled(egui::Role::Label, true, &label));
        if resp.hovered() {
            self.painter.rect_stroke(
                cell_rect.expand(1.0),
                CornerRadius::same(4),
                Stroke::new(2.0, self.visuals.text_color()),
                StrokeKind::Outside,
            );
        }
        resp
    }

    /// One coloured part of a cell, its text on it (weak where it has no colour).
    fn segment(&self, rect: Rect, seg: &Segment) {
        let fill = seg
            .fill
            .unwrap_or_else(|| palette::neutral_cell(&self.visuals));
        self.painter.rect_filled(rect, CornerRadius::same(3), fill);
        let color = if seg.fill.is_some() {
            palette::text_on(fill)
        } else {
            self.visuals.weak_text_color()
        };
        let font = self.mono.clone();
        self.painter
            .text(rect.center(), Align2::CENTER_CENTER, &seg.text, font, color);
    }

    /// Underlines the hovered cell's row and column headers so the pair is easy to read.
    fn underline_headers(&self, r: usize, c: usize) {
        let stroke = Stroke::new(2.0, self.visuals.text_color());
        let hx = self.col_x(c as f32 + 0.5);
        let hy = self.origin.y + MATRIX_HEADER_H - 3.0;
        let header = [pos2(hx - 12.0, hy), pos2(hx + 12.0, hy)];
        self.painter.line_segment(header, stroke);
        let ry = self.row_y(r as f32 + 1.0) - 4.0;
        let row = [
            pos2(self.origin.x + 6.0, ry),
            pos2(self.origin.x + MATRIX_LABEL_W - 8.0, ry),
        ];
        self.painter.line_segment(row, stroke);
    }
}
