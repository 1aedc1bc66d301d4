//! The Fleet view: a fleet's nodes as `fleet report` judged them (its tab shows only while a
//! fleet is open). A header line (the fleet's verdict, the nodes by verdict, the drain list),
//! the heat table — a row per node, worst first, a column per key figure, each cell the node's
//! figure coloured by how much worse than the fleet's median it is under the `[fleet]` rule
//! ([`table`]) — and the selected node's findings with "Open report", which opens
//! its report.json as File → Open report does.
//!
//! The table paints only what is on screen (the rows and columns in the scroll area's
//! viewport), with the node columns and the figure headers kept in place while it scrolls, so
//! that a fleet of thousands of nodes and hundreds of figures scrolls as smoothly as ten.

pub mod table;

use std::path::PathBuf;

use eframe::egui::{
    self, Align2, Color32, CornerRadius, FontId, Rect, RichText, Sense, Stroke, StrokeKind, Ui,
    WidgetInfo, pos2, vec2,
};

use crate::fleet::judge::FleetOutcome;
use crate::health::Verdict;
use crate::ui::action::Action;
use crate::ui::palette;
use crate::ui::widgets::badge;
use table::{FigureFilter, Level};

/// Height of a table row.
const ROW_H: f32 = 22.0;
/// Height of the table's header (two lines: the test and unit, the GPU or pair).
const HEADER_H: f32 = 36.0;
/// Width of the Verdict column.
const VERDICT_W: f32 = 74.0;
/// Figure columns are at least and at most this wide (longer headers are cut, whole on hover).
const FIGURE_W: (f32, f32) = (58.0, 170.0);
/// The node-name and Differs columns are at most this wide.
const NAME_W_MAX: f32 = 220.0;
const DIFFERS_W_MAX: f32 = 240.0;
/// The figures' font.
const MONO: f32 = 12.5;
/// The header's font.
const SMALL: f32 = 11.5;

/// The Fleet view's state: the open fleet, if any.
#[derive(Default)]
pub struct FleetView {
    open: Option<Box<OpenFleet>>,
}

/// An open fleet and how it is shown.
struct OpenFleet {
    outcome: FleetOutcome,
    /// What was judged (folders or files).
    inputs: Vec<PathBuf>,
    /// The figures off the median (computed once: every node × figure).
    off: Vec<usize>,
    filter: FigureFilter,
    /// Only nodes whose name holds this.
    name_filter: String,
    /// The nodes listed, worst first, and the figures shown (indices into the outcome).
    rows: Vec<usize>,
    columns: Vec<usize>,
    /// The node whose findings show under the table.
    selected: Option<usize>,
    /// Column widths, measured with the fonts once the columns change.
    widths: Option<Widths>,
}

/// The table's column widths.
struct Widths {
    name: f32,
    differs: f32,
    /// Left edge of each figure column from the first one's, and the right edge of the last.
    x: Vec<f32>,
}

impl Widths {
    fn frozen(&self) -> f32 {
        self.name + VERDICT_W + self.differs
    }
}

impl OpenFleet {
    fn refresh(&mut self) {
        self.rows = table::rows(&self.outcome, &self.name_filter);
        self.columns = table::columns(&self.outcome, &self.filter, &self.off);
        self.widths = None;
    }
}

impl FleetView {
    /// Shows `outcome`, judged from `inputs`, in place of any fleet open before.
    pub fn open(&mut self, outcome: FleetOutcome, inputs: Vec<PathBuf>) {
        let off = table::off_figures(&outcome);
        let mut f = OpenFleet {
            outcome,
            inputs,
            off,
            filter: FigureFilter::default(),
            name_filter: String::new(),
            rows: Vec::new(),
            columns: Vec::new(),
            selected: None,
            widths: None,
        };
        f.refresh();
        // The worst node's findings show at once when a node is below PASS.
        f.selected = f
            .rows
            .first()
            .copied()
            .filter(|&i| f.outcome.nodes[i].verdict != Verdict::Pass);
        self.open = Some(Box::new(f));
    }

    /// Closes the fleet (its tab goes).
    pub fn close(&mut self) {
        self.open = None;
    }

    /// Whether a fleet is open.
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The open fleet's outcome.
    pub fn outcome(&self) -> Option<&FleetOutcome> {
        self.open.as_ref().map(|f| &f.outcome)
    }

    /// What the view shows, for the top bar (the Fleet view is about the fleet, never the
    /// source selected in the Sources panel): `fleet of 32 node reports in nodes (modeled)`;
    /// `None` while no fleet is open.
    pub fn source_label(&self) -> Option<String> {
        let f = self.open.as_ref()?;
        let nodes = &f.outcome.nodes;
        let modeled = nodes.iter().filter(|n| n.modeled()).count();
        let measured = nodes
            .iter()
            .filter(|n| n.source == Some(crate::model::Source::Measured))
            .count();
        let how = match (measured, modeled) {
            (0, 0) => String::new(),
            (0, _) if modeled == nodes.len() => " (modeled)".into(),
            (_, 0) if measured == nodes.len() => " (measured)".into(),
            (0, m) => format!(" ({m} modeled)"),
            (a, 0) => format!(" ({a} measured)"),
            (a, m) => format!(" ({a} measured, {m} modeled)"),
        };
        Some(format!(
            "fleet of {} node report{} in {}{how}",
            nodes.len(),
            if nodes.len() == 1 { "" } else { "s" },
            input_names(&f.inputs).join(", ")
        ))
    }

    /// The nodes' names as the table lists them (worst first).
    pub fn listed(&self) -> Vec<&str> {
        self.open.as_ref().map_or_else(Vec::new, |f| {
            f.rows
                .iter()
                .map(|&i| f.outcome.nodes[i].name.as_str())
                .collect()
        })
    }

    /// The figure ids the table shows as columns, in order.
    pub fn shown_figures(&self) -> Vec<&str> {
        self.open.as_ref().map_or_else(Vec::new, |f| {
            f.columns
                .iter()
                .map(|&c| f.outcome.figures[c].id.as_str())
                .collect()
        })
    }

    /// The selected node's name.
    pub fn selected(&self) -> Option<&str> {
        let f = self.open.as_ref()?;
        f.selected.map(|i| f.outcome.nodes[i].name.as_str())
    }

    /// Shows the figures `filter` picks.
    pub fn set_filter(&mut self, filter: FigureFilter) {
        if let Some(f) = &mut self.open {
            f.filter = filter;
            f.refresh();
        }
    }

    /// The view: header, the Show group, the heat table and the selected node's findings.
    pub fn ui(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let Some(f) = &mut self.open else {
            ui.label(RichText::new("No fleet is open (File → Open fleet…).").weak());
            return;
        };
        header(ui, f, actions);
        ui.add_space(4.0);
        show(ui, f);
        ui.add_space(4.0);
        let detail_h = if f.selected.is_some() {
            (ui.available_height() * 0.34).clamp(110.0, 240.0)
        } else {
            24.0
        };
        let table_h = (ui.available_height() - detail_h - 10.0).max(4.0 * ROW_H + HEADER_H);
        if f.rows.is_empty() {
            ui.label(RichText::new("No node's name holds that text.").weak());
        } else {
            heat_table(ui, f, table_h, actions);
        }
        ui.separator();
        detail(ui, f, actions);
    }
}

/// The folders (or files) a fleet was read from, by name.
fn input_names(inputs: &[PathBuf]) -> Vec<String> {
    inputs
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
        })
        .collect()
}

/// The fleet's verdict, the nodes by verdict and the drain list; under it what was read and
/// the rule the cells follow.
fn header(ui: &mut Ui, f: &OpenFleet, actions: &mut Vec<Action>) {
    let o = &f.outcome;
    let c = &o.counts;
    ui.horizontal_wrapped(|ui| {
        ui.label(
            RichText::new(format!("Fleet of {} nodes", o.nodes.len()))
                .strong()
                .size(16.0),
        );
        badge(ui, &o.verdict_text(), palette::verdict_fill(o.verdict));
        ui.label(format!(
            "{} pass · {} warn · {} fail · {} unknown",
            c.pass, c.warn, c.fail, c.unknown
        ));
        ui.separator();
        if o.drain.is_empty() {
            ui.label("Drain: none");
        } else {
            const SHOWN: usize = 8;
            let mut text = o.drain[..o.drain.len().min(SHOWN)].join(", ");
            if o.drain.len() > SHOWN {
                text.push_str(&format!(" … and {} more", o.drain.len() - SHOWN));
            }
            ui.label(RichText::new(format!("Drain: {text}")).color(palette::VERDICT_FAIL))
                .on_hover_text(format!(
                    "The nodes that fail: send them back, or drain them.\n{}",
                    o.drain.join(", ")
                ));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .button("Close fleet")
                .on_hover_text("Close this fleet (its tab goes; opened node reports stay)")
                .clicked()
            {
                actions.push(Action::CloseFleet);
            }
        });
    });
    let rules = &o.thresholds;
    // The folders by name (whole on hover): the line stays short.
    let read = input_names(&f.inputs);
    let mut line = format!(
        "{} · a figure is off when worse than the fleet's median by more than {} × the scaled \
         MAD and {:.0} % (WARN) or {:.0} % (FAIL); a node that differs from the majority: {}",
        read.join(", "),
        rules.mad_k,
        rules.warn * 100.0,
        rules.fail * 100.0,
        rules.consistency.verdict().word()
    );
    let n = o.notes.len();
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        line.push_str(&format!(" · {n} note{s} (hover)"));
    }
    let mut tip: Vec<String> = f.inputs.iter().map(|p| p.display().to_string()).collect();
    tip.extend(o.notes.iter().cloned());
    ui.add(egui::Label::new(RichText::new(line).size(SMALL).weak()).truncate())
        .on_hover_text(tip.join("\n"));
    if !o.between.is_empty() {
        between(ui, &o.between);
    }
}

/// The all-reduce runs between nodes (`fleet run --between`): one line, every run on hover.
fn between(ui: &mut Ui, runs: &[crate::fleet::between::BetweenSummary]) {
    use crate::fleet::finding::figure_text;
    let bad = runs
        .iter()
        .any(|r| r.verdict.is_some_and(|v| v > crate::health::Verdict::Pass));
    let text = format!(
        "Between nodes: {}",
        crate::fleet::between::summary_line(runs)
    );
    let text = if bad {
        RichText::new(text).color(palette::VERDICT_FAIL)
    } else {
        RichText::new(text).weak()
    };
    // Every run on hover, written only while hovered.
    let every_run = || -> String {
        runs.iter()
            .map(|r| {
                let figure = r.busbw_gbps.map_or_else(
                    || format!("{} — {}", r.status, r.reason.as_deref().unwrap_or("")),
                    |b| {
                        format!(
                            "{} GB/s{}",
                            figure_text(b),
                            r.deviation_percent
                                .map(|d| format!(" ({d:+.1} %)"))
                                .unwrap_or_default()
                        )
                    },
                );
                format!(
                    "{}  {}  {}  {}{}",
                    r.name,
                    r.nodes.join(", "),
                    figure,
                    r.transport.as_deref().unwrap_or("—"),
                    r.verdict
                        .map(|v| format!("  {}", v.word()))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    ui.add(egui::Label::new(text.size(SMALL)).truncate())
        .on_hover_ui(|ui| {
            ui.label(every_run());
        });
}

/// The Show group: which figures are columns, and a filter of node names.
fn show(ui: &mut Ui, f: &mut OpenFleet) {
    let mut changed = false;
    crate::ui::layout::show_group(ui, |ui| {
        ui.label("Figures");
        let o = &f.outcome;
        let mut filter = f.filter.clone();
        egui::ComboBox::from_id_salt("fleet-figures")
            .selected_text(filter.label(o, &f.off))
            .width(190.0)
            .show_ui(ui, |ui| {
                let mut choices = vec![FigureFilter::Off, FigureFilter::All];
                choices.extend(
                    table::groups(o)
                        .into_iter()
                        .map(|g| FigureFilter::Group(g.to_string())),
                );
                for choice in choices {
                    let text = choice.label(o, &f.off);
                    ui.selectable_value(&mut filter, choice, text);
                }
            })
            .response
            .on_hover_text(
                "Which key figures are columns: those where a node is off the fleet's median \
                 (every figure when none is), every figure, or one test's",
            );
        if filter != f.filter {
            f.filter = filter;
            changed = true;
        }
        ui.add_space(10.0);
        let l = ui.label("Node");
        let edit = egui::TextEdit::singleline(&mut f.name_filter)
            .hint_text("name holds…")
            .desired_width(140.0);
        changed |= ui.add(edit).labelled_by(l.id).changed();
        ui.add_space(10.0);
        legend(ui);
    });
    if changed {
        f.refresh();
    }
}

/// What the cell colours mean.
fn legend(ui: &mut Ui) {
    let neutral = palette::neutral_cell(ui.visuals());
    for (fill, text) in [
        (neutral, "within"),
        (palette::VERDICT_WARN, "WARN"),
        (palette::VERDICT_FAIL, "FAIL"),
    ] {
        let (rect, _) = ui.allocate_exact_size(vec2(12.0, 12.0), Sense::hover());
        ui.painter().rect_filled(rect, CornerRadius::same(2), fill);
        ui.label(RichText::new(text).size(SMALL));
    }
    ui.label(RichText::new("— not in the report").size(SMALL).weak());
}

/// Measures the columns: node names and Differs by their longest text, figures by their
/// header and a figure's width.
fn measure(ui: &Ui, f: &OpenFleet) -> Widths {
    let painter = ui.painter();
    let width = |text: &str, size: f32, mono: bool| {
        let font = if mono {
            FontId::monospace(size)
        } else {
            FontId::proportional(size)
        };
        painter
            .layout_no_wrap(text.to_string(), font, Color32::WHITE)
            .size()
            .x
    };
    let o = &f.outcome;
    let name = o
        .nodes
        .iter()
        .map(|n| width(&n.name, 13.0, false))
        .fold(width("Node", SMALL, false), f32::max);
    let differs = o
        .nodes
        .iter()
        .map(|n| width(&table::differs(n), SMALL, false))
        .fold(width("Differs", SMALL, false), f32::max);
    let mut x = vec![0.0];
    for &c in &f.columns {
        let fig = &o.figures[c];
        let top = format!("{} {}", table::group(&fig.id), fig.unit);
        let w = width(&top, SMALL, false)
            .max(width(table::subject(&fig.id), SMALL, false))
            .max(width("88888", MONO, true));
        let w = (w + 14.0).clamp(FIGURE_W.0, FIGURE_W.1);
        x.push(x.last().copied().unwrap_or(0.0) + w);
    }
    Widths {
        name: (name + 18.0).min(NAME_W_MAX),
        differs: (differs + 14.0).clamp(64.0, DIFFERS_W_MAX),
        x,
    }
}

/// `text` in one line no wider than `max_w` (cut with "…").
fn fitted(
    painter: &egui::Painter,
    text: &str,
    font: FontId,
    color: Color32,
    max_w: f32,
) -> std::sync::Arc<egui::Galley> {
    let mut job = egui::text::LayoutJob::simple_singleline(text.to_string(), font, color);
    job.wrap = egui::text::TextWrapping::truncate_at_width(max_w.max(8.0));
    painter.layout_job(job)
}

/// The heat table, `height` tall: only the rows and columns in view are painted and answer the
/// pointer; the node columns and the header stay put while the figures scroll under them.
fn heat_table(ui: &mut Ui, f: &mut OpenFleet, height: f32, actions: &mut Vec<Action>) {
    if f.widths.is_none() {
        f.widths = Some(measure(ui, f));
    }
    let Some(w) = f.widths.as_ref() else { return };
    let frozen = w.frozen();
    let figures_w = w.x.last().copied().unwrap_or(0.0);
    let total = vec2(frozen + figures_w, HEADER_H + ROW_H * f.rows.len() as f32);
    let mut clicked: Option<(usize, bool)> = None;
    egui::ScrollArea::both()
        .id_salt("fleet-table")
        .auto_shrink([false, false])
        .max_height(height)
        .content_margin(0.0)
        .show_viewport(ui, |ui, viewport| {
            ui.set_min_size(total);
            let origin = ui.max_rect().min;
            let view = Rect::from_min_size(origin + viewport.min.to_vec2(), viewport.size())
                .intersect(ui.clip_rect());
            let g = Grid {
                origin,
                view,
                frozen,
                widths: w,
            };
            clicked = g.paint(ui, f);
        });
    if let Some((row, open)) = clicked {
        let node = f.rows[row];
        f.selected = Some(node);
        // A node whose report could not be read has none to open (its finding says why).
        if open && f.outcome.nodes[node].readable() {
            actions.push(Action::OpenFleetNode(PathBuf::from(
                &f.outcome.nodes[node].file,
            )));
        }
    }
}

/// Where the table lies on screen this frame.
struct Grid<'a> {
    /// The content's top-left corner on screen (scrolled).
    origin: egui::Pos2,
    /// The visible part on screen.
    view: Rect,
    /// Width of the node columns (name, verdict, Differs).
    frozen: f32,
    widths: &'a Widths,
}

impl Grid<'_> {
    /// Paints the rows and columns in view; the row clicked (and whether twice, to open it).
    fn paint(&self, ui: &mut Ui, f: &OpenFleet) -> Option<(usize, bool)> {
        let p = InView::new(ui, self, f);
        let mut clicked = None;
        let hovered_row = p.figure_cells(ui, f, &mut clicked);
        p.node_columns(ui, f, hovered_row, &mut clicked);
        p.header(ui, f);
        clicked
    }
}

/// The part of the table in view this frame, and what paints it.
struct InView<'a> {
    grid: &'a Grid<'a>,
    painter: egui::Painter,
    visuals: egui::Visuals,
    /// The rows in view.
    rows: std::ops::Range<usize>,
    /// The figure columns in view.
    cols: std::ops::Range<usize>,
    /// Where the figure cells show (under the header, right of the node columns).
    body: Rect,
    /// Where the node columns' rows show (under the header).
    names: Rect,
    selected_fill: Color32,
}

impl<'a> InView<'a> {
    fn new(ui: &Ui, grid: &'a Grid<'a>, f: &OpenFleet) -> Self {
        let (view, origin, w) = (grid.view, grid.origin, grid.widths);
        // Rows in view: row r spans HEADER_H + r·ROW_H … in content coordinates; the header
        // covers the top HEADER_H of the view.
        let top = view.min.y - origin.y;
        let first = (top / ROW_H).floor().max(0.0) as usize;
        let last = (((view.max.y - origin.y - HEADER_H) / ROW_H).ceil().max(0.0) as usize)
            .min(f.rows.len());
        // Figure columns in view: column c spans frozen + x[c] … frozen + x[c+1].
        let left = view.min.x - origin.x;
        let right = view.max.x - origin.x - grid.frozen;
        let c0 = w.x.partition_point(|&x| x <= left).saturating_sub(1);
        let c1 = w.x.partition_point(|&x| x < right).min(f.columns.len());
        let visuals = ui.visuals().clone();
        Self {
            grid,
            painter: ui.painter_at(view),
            body: Rect::from_min_max(
                pos2(view.min.x + grid.frozen, view.min.y + HEADER_H),
                view.max,
            ),
            names: Rect::from_min_max(pos2(view.min.x, view.min.y + HEADER_H), view.max),
            rows: first..last.max(first),
            cols: c0..c1.max(c0),
            selected_fill: visuals.selection.bg_fill.gamma_multiply(0.35),
            visuals,
        }
    }

    /// The top of row `r` on screen.
    fn row_y(&self, r: usize) -> f32 {
        self.grid.origin.y + HEADER_H + ROW_H * r as f32
    }

    /// The left and right edges of figure column `k` on screen.
    fn col_x(&self, k: usize) -> (f32, f32) {
        let (g, w) = (self.grid, self.grid.widths);
        (
            g.origin.x + g.frozen + w.x[k],
            g.origin.x + g.frozen + w.x[k + 1],
        )
    }

    /// The figure cells in view; the row hovered.
    fn figure_cells(
        &self,
        ui: &mut Ui,
        f: &OpenFleet,
        clicked: &mut Option<(usize, bool)>,
    ) -> Option<usize> {
        let mut hovered_row = None;
        for r in self.rows.clone() {
            let y = self.row_y(r);
            if f.selected == Some(f.rows[r]) {
                let band =
                    Rect::from_min_max(pos2(self.body.min.x, y), pos2(self.body.max.x, y + ROW_H));
                self.painter.rect_filled(band, 0.0, self.selected_fill);
            }
            for k in self.cols.clone() {
                let (x0, x1) = self.col_x(k);
                let rect = Rect::from_min_max(pos2(x0, y), pos2(x1, y + ROW_H));
                if let Some(resp) = self.figure_cell(ui, f, (r, f.columns[k]), rect) {
                    if resp.hovered() {
                        hovered_row = Some(r);
                    }
                    if resp.clicked() || resp.double_clicked() {
                        *clicked = Some((r, resp.double_clicked()));
                    }
                    if resp.hovered() {
                        let (o, node) = (&f.outcome, &f.outcome.nodes[f.rows[r]]);
                        resp.on_hover_text(table::cell_hover(o, node, f.columns[k]));
                    }
                }
            }
        }
        hovered_row
    }

    /// The cell of row `r` and figure `fig` in `rect`: its value coloured by its level; its
    /// response where it is in view, outlined while hovered.
    fn figure_cell(
        &self,
        ui: &mut Ui,
        f: &OpenFleet,
        (r, fig): (usize, usize),
        rect: Rect,
    ) -> Option<egui::Response> {
        let (o, node) = (&f.outcome, &f.outcome.nodes[f.rows[r]]);
        let text = self.visuals.text_color();
        let cell = table::cell(o, node, fig);
        let inner = rect.shrink(1.5);
        let (fill, color) = match cell.level {
            Level::Within => (Some(palette::neutral_cell(&self.visuals)), text),
            Level::Warn => (
                Some(palette::VERDICT_WARN),
                palette::text_on(palette::VERDICT_WARN),
            ),
            Level::Fail => (
                Some(palette::VERDICT_FAIL),
                palette::text_on(palette::VERDICT_FAIL),
            ),
            Level::Missing => (None, palette::UNKNOWN),
        };
        if let Some(fill) = fill {
            self.painter.rect_filled(inner, CornerRadius::same(3), fill);
        }
        self.painter.text(
            pos2(inner.max.x - 5.0, inner.center().y),
            Align2::RIGHT_CENTER,
            &cell.text,
            FontId::monospace(MONO),
            color,
        );
        let hit = rect.intersect(self.body);
        if !hit.is_positive() {
            return None;
        }
        let id = ui.scope_id().with(("fleet-cell", f.rows[r], fig));
        let resp = ui.interact(hit, id, Sense::click());
        let label = format!("{} {}: {}", node.name, o.figures[fig].id, cell.text);
        resp.widget_info(|| WidgetInfo::labeled(egui::Role::Label, true, &label));
        if resp.hovered() {
            self.painter.rect_stroke(
                inner.expand(1.0),
                CornerRadius::same(4),
                Stroke::new(2.0, text),
                StrokeKind::Outside,
            );
        }
        Some(resp)
    }

    /// The node columns (name, verdict, Differs), over the figures that scroll under them.
    fn node_columns(
        &self,
        ui: &mut Ui,
        f: &OpenFleet,
        hovered_row: Option<usize>,
        clicked: &mut Option<(usize, bool)>,
    ) {
        let (view, frozen) = (self.grid.view, self.grid.frozen);
        let frozen_rect = Rect::from_min_max(
            pos2(view.min.x, view.min.y),
            pos2((view.min.x + frozen).min(view.max.x), view.max.y),
        );
        self.painter
            .rect_filled(frozen_rect, 0.0, self.visuals.panel_fill);
        for r in self.rows.clone() {
            let (i, y) = (f.rows[r], self.row_y(r));
            let row = Rect::from_min_max(pos2(view.min.x, y), pos2(view.min.x + frozen, y + ROW_H));
            if f.selected == Some(i) {
                self.painter.rect_filled(row, 0.0, self.selected_fill);
            } else if hovered_row == Some(r) {
                let hovered = self.visuals.widgets.hovered.weak_bg_fill;
                self.painter
                    .rect_filled(row, 0.0, hovered.gamma_multiply(0.5));
            }
            let differs = self.node_cells(&f.outcome.nodes[i], row);
            let hit = row.intersect(self.names);
            if !hit.is_positive() {
                continue;
            }
            let resp = ui.interact(hit, ui.scope_id().with(("fleet-node", i)), Sense::click());
            let node = &f.outcome.nodes[i];
            let selected = f.selected == Some(i);
            let name = node.name.clone();
            resp.widget_info(|| WidgetInfo::selected(egui::Role::Button, true, selected, &name));
            if resp.clicked() || resp.double_clicked() {
                *clicked = Some((r, resp.double_clicked()));
            }
            resp.on_hover_text(node_tip(node, &differs));
        }
    }

    /// One node's name, verdict pill and what differs, in its `row`; what differs.
    fn node_cells(&self, node: &crate::fleet::judge::NodeOutcome, row: Rect) -> String {
        let (w, y) = (self.grid.widths, row.min.y);
        let text = self.visuals.text_color();
        let name_rect = Rect::from_min_size(row.min, vec2(w.name, ROW_H));
        let font = FontId::proportional(13.0);
        let galley = fitted(&self.painter, &node.name, font, text, w.name - 14.0);
        let at = pos2(
            name_rect.min.x + 8.0,
            name_rect.center().y - galley.size().y / 2.0,
        );
        self.painter.galley(at, galley, text);
        let vrect = Rect::from_min_size(pos2(name_rect.max.x, y), vec2(VERDICT_W, ROW_H))
            .shrink2(vec2(4.0, 3.0));
        let vfill = palette::verdict_fill(node.verdict);
        self.painter
            .rect_filled(vrect, CornerRadius::same(8), vfill);
        self.painter.text(
            vrect.center(),
            Align2::CENTER_CENTER,
            node.verdict.word(),
            FontId::proportional(10.5),
            palette::text_on(vfill),
        );
        let differs = table::differs(node);
        let drect = Rect::from_min_max(pos2(vrect.max.x + 4.0, y), pos2(row.max.x, y + ROW_H));
        if !differs.is_empty() {
            let galley = fitted(
                &self.painter,
                &differs,
                FontId::proportional(SMALL),
                palette::warn_text(&self.visuals),
                drect.width() - 10.0,
            );
            let at = pos2(drect.min.x + 4.0, drect.center().y - galley.size().y / 2.0);
            self.painter.galley(at, galley, text);
        }
        differs
    }

    /// The header, over the rows that scroll under it: the figures' names in view, then the
    /// node columns' titles.
    fn header(&self, ui: &mut Ui, f: &OpenFleet) {
        let view = self.grid.view;
        let header = Rect::from_min_max(view.min, pos2(view.max.x, view.min.y + HEADER_H));
        let panel = self.visuals.panel_fill;
        self.painter.rect_filled(header, 0.0, panel);
        let line = Stroke::new(1.0, self.visuals.widgets.noninteractive.bg_stroke.color);
        self.painter.line_segment(
            [
                pos2(header.min.x, header.max.y - 0.5),
                pos2(header.max.x, header.max.y - 0.5),
            ],
            line,
        );
        for k in self.cols.clone() {
            self.figure_header(ui, f, k, header);
        }
        let frozen = self.grid.frozen;
        self.painter.rect_filled(
            Rect::from_min_max(
                view.min,
                pos2((view.min.x + frozen).min(view.max.x), header.max.y - 1.0),
            ),
            0.0,
            panel,
        );
        let (w, weak) = (self.grid.widths, self.visuals.weak_text_color());
        for (x, title) in [
            (view.min.x + 8.0, "Node"),
            (view.min.x + w.name + 4.0, "Verdict"),
            (view.min.x + w.name + VERDICT_W + 8.0, "Differs"),
        ] {
            self.painter.text(
                pos2(x, header.max.y - 10.0),
                Align2::LEFT_CENTER,
                title,
                FontId::proportional(12.5),
                weak,
            );
        }
        if f.columns.is_empty() {
            self.painter.text(
                pos2(view.min.x + frozen + 10.0, header.max.y - 10.0),
                Align2::LEFT_CENTER,
                "no key figure in these reports",
                FontId::proportional(SMALL),
                weak,
            );
        }
    }

    /// Figure column `k`'s header in the `header` band: its test and unit over its GPU or
    /// pair, the fleet's median and spread on hover.
    fn figure_header(&self, ui: &mut Ui, f: &OpenFleet, k: usize, header: Rect) {
        let fig = f.columns[k];
        let s = &f.outcome.figures[fig];
        let (text, weak) = (self.visuals.text_color(), self.visuals.weak_text_color());
        let small = FontId::proportional(SMALL);
        let (x0, x1) = self.col_x(k);
        let col = Rect::from_min_max(pos2(x0, header.min.y), pos2(x1, header.max.y));
        let max_w = col.width() - 8.0;
        let group = format!("{} {}", table::group(&s.id), s.unit);
        let top = fitted(&self.painter, &group, small.clone(), weak, max_w);
        let sub = fitted(&self.painter, table::subject(&s.id), small, text, max_w);
        let at = pos2(col.max.x - 5.0 - top.size().x, col.min.y + 3.0);
        self.painter.galley(at, top, weak);
        let at = pos2(col.max.x - 5.0 - sub.size().x, col.min.y + 18.0);
        self.painter.galley(at, sub, text);
        let hit = col.intersect(Rect::from_min_max(
            pos2(self.grid.view.min.x + self.grid.frozen, header.min.y),
            header.max,
        ));
        if !hit.is_positive() {
            return;
        }
        let resp = ui.interact(hit, ui.scope_id().with(("fleet-col", fig)), Sense::hover());
        if resp.hovered() {
            resp.on_hover_text(format!(
                "{} ({}; {} is better)\nfleet median {} {} over {} nodes; scaled MAD {}",
                s.id,
                s.unit,
                if s.higher_is_better {
                    "higher"
                } else {
                    "lower"
                },
                crate::fleet::finding::figure_text(s.median),
                s.unit,
                s.nodes,
                crate::fleet::finding::figure_text(s.scaled_mad),
            ));
        }
    }
}

/// A node's hover text: its verdict and own check, what differs, its file and what a click
/// does.
fn node_tip(node: &crate::fleet::judge::NodeOutcome, differs: &str) -> String {
    let mut tip = format!("{} — {}", node.name, node.verdict.word());
    if let Some(h) = node.health {
        tip.push_str(&format!(" (own check {})", h.word()));
    }
    if !differs.is_empty() {
        tip.push_str(&format!("\ndiffers from the fleet: {differs}"));
    }
    tip.push_str(&format!(
        "\n{}\nclick: its findings · double-click: open its report",
        node.file
    ));
    tip
}

/// The selected node: verdict, own check, suspect GPU, its report's path and Open report, then
/// every finding.
fn detail(ui: &mut Ui, f: &OpenFleet, actions: &mut Vec<Action>) {
    let Some(i) = f.selected else {
        ui.label(
            RichText::new("Click a node to see its findings; double-click opens its report.")
                .weak(),
        );
        return;
    };
    let node = &f.outcome.nodes[i];
    ui.horizontal_wrapped(|ui| {
        ui.label(
            RichText::new(format!("Node {}", node.name))
                .strong()
                .size(15.0),
        );
        badge(ui, node.verdict.word(), palette::verdict_fill(node.verdict));
        if let Some(h) = node.health {
            ui.label(RichText::new(format!("own check {}", h.word())).weak());
        }
        if let Some(g) = node.suspect_gpu {
            ui.label(
                RichText::new(format!("suspect GPU {g} (in every outlier)"))
                    .color(palette::VERDICT_FAIL),
            );
        }
        if let Some(job) = &node.slurm_job {
            ui.label(RichText::new(format!("Slurm job {job}")).weak());
        }
        let open = ui
            .add_enabled(node.readable(), egui::Button::new("Open report"))
            .on_hover_text(format!(
                "Open {} as File → Open report does, and show it",
                node.file
            ))
            .on_disabled_hover_text("Its report could not be read (see its finding)");
        if open.clicked() {
            actions.push(Action::OpenFleetNode(PathBuf::from(&node.file)));
        }
    });
    // The report's path within the fleet's folder (whole on hover).
    let within = f
        .inputs
        .iter()
        .find_map(|dir| std::path::Path::new(&node.file).strip_prefix(dir).ok())
        .map_or_else(|| node.file.clone(), |p| p.display().to_string());
    ui.add(egui::Label::new(RichText::new(within).size(SMALL).weak()).truncate())
        .on_hover_text(&node.file);
    egui::ScrollArea::vertical()
        .id_salt("fleet-findings")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            if node.findings.is_empty() {
                ui.label(RichText::new("No finding: this node agrees with the fleet.").weak());
            }
            for x in &node.findings {
                ui.horizontal_wrapped(|ui| {
                    badge(ui, x.verdict.word(), palette::verdict_fill(x.verdict));
                    ui.label(RichText::new(x.kind.word()).weak());
                    ui.label(&x.detail);
                });
            }
        });
}
