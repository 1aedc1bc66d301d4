//! The Topology view: how a machine's GPUs and NICs are connected.
//!
//! Pure drawing: every function takes a [`Topology`] and draws it; nothing here reads files,
//! talks to NVML or keeps state. The App wraps [`show`] in a scroll area; the report renderer
//! (`snapshot.rs`) calls it directly. With a [`LiveFrame`] ([`show_live`]) the drawing,
//! the connectivity matrix and a table under the drawing show its traffic
//! ([`crate::ui::views::live::draw`]).

use eframe::egui::{
    self, Align, Align2, Color32, CornerRadius, FontId, Layout, Rect, RichText, Sense, Shape,
    Stroke, StrokeKind, Ui, Vec2, vec2,
};

use crate::document::machine::{
    self, Anchor, BoxKind, Font, Hover, Item, Label, LineKind, Side, Tone,
};
use crate::model::{Gpu, LinkKind, P2pCap, P2pStatus, Topology, TopologyNote, TopologySource};
use crate::report::Report;
use crate::ui::action::Action;
use crate::ui::palette::{self, SourceBadge};
use crate::ui::views::live::LiveView;
use crate::ui::views::live::draw::{self, LiveFrame};
use crate::ui::widgets::{Cell, Segment, badge, matrix, matrix_hovered, matrix_width};

/// The whole view: header, machine drawing, GPU cards, the three matrices and the notes.
pub fn show(ui: &mut Ui, topology: &Topology) {
    show_with_health(ui, topology, None);
}

/// [`show`], with a Health panel under the header when a health check is given: the verdict,
/// GPUs and links colored by verdict, and every finding with its cause and fix.
pub fn show_with_health(
    ui: &mut Ui,
    topology: &Topology,
    health: Option<&crate::health::HealthReport>,
) {
    show_as(ui, topology, health, None);
}

/// How the header names a topology that is not shown for its own sake (a report's): the
/// report's badge and machine name instead of the topology source's.
pub struct ShownAs {
    /// The badge (`example`, `report file`, `modeled`).
    pub badge: SourceBadge,
    /// The machine's name, e.g. `2× H200 SXM · vm`.
    pub name: String,
    /// The badge's meaning, shown under the name.
    pub text: String,
}

impl ShownAs {
    /// How the header names an opened recording's machine (`live` replays it): read where it
    /// was recorded, never here (its topology says `live`; the header must not say "measured
    /// here").
    pub fn recording(live: &LiveView, report: &Report) -> Option<ShownAs> {
        let name = live.recording_name()?;
        let h = &report.traffic.as_ref()?.header;
        Some(ShownAs {
            badge: SourceBadge::Recording,
            name: title(&report.topology),
            text: format!(
                "Traffic recording {name}: recorded {} on {} by scalescope {}; the machine as \
                 the recorder read it there, replayed here.",
                h.started_at,
                h.host.as_deref().unwrap_or("an unnamed host"),
                h.scalescope_version
            ),
        })
    }
}

/// The Topology view of `report` with its Live overlay `live`: the overlay's bar, then the
/// view (named as `shown_as` says, or as a recording) with the frame the overlay hands it
/// drawn while it is on.
pub fn show_report(
    ui: &mut Ui,
    report: &Report,
    live: &mut LiveView,
    shown_as: Option<ShownAs>,
    actions: &mut Vec<Action>,
) {
    live.bar(ui, report, actions);
    let shown_as = shown_as.or_else(|| ShownAs::recording(live, report));
    let frame = live.frame(report);
    show_live(
        ui,
        &report.topology,
        report.health.as_ref(),
        shown_as.as_ref(),
        frame.as_ref(),
    );
}

/// [`show_with_health`], with the header naming the topology as `shown_as` says.
pub fn show_as(
    ui: &mut Ui,
    topology: &Topology,
    health: Option<&crate::health::HealthReport>,
    shown_as: Option<&ShownAs>,
) {
    show_live(ui, topology, health, shown_as, None);
}

/// [`show_as`], with the traffic of `live` drawn on the machine and the connectivity matrix,
/// and the per-GPU table under the drawing.
pub fn show_live(
    ui: &mut Ui,
    topology: &Topology,
    health: Option<&crate::health::HealthReport>,
    shown_as: Option<&ShownAs>,
    live: Option<&LiveFrame>,
) {
    match shown_as {
        Some(s) => {
            ui.horizontal(|ui| {
                crate::ui::widgets::source_badge(ui, s.badge);
                ui.label(RichText::new(&s.name).size(22.0).strong());
            });
            ui.label(RichText::new(&s.text).weak());
            facts(ui, topology);
        }
        None => header(ui, topology),
    }
    ui.add_space(10.0);
    if let Some(h) = health {
        section(ui, "Health (scalescope check)");
        crate::ui::views::health::panel(ui, topology, h);
        ui.add_space(14.0);
    }
    section(ui, "Machine");
    // Eight GPUs need more width than a small window leaves: the drawing scrolls on its own
    // rather than widen the page (and every card and matrix under it).
    egui::ScrollArea::horizontal()
        .id_salt("machine-drawing")
        .show(ui, |ui| machine_drawing_live(ui, topology, live));
    if let Some(frame) = live {
        ui.add_space(8.0);
        egui::ScrollArea::horizontal()
            .id_salt("live-gpu-table")
            .show(ui, |ui| draw::gpu_table(ui, frame));
    }
    ui.add_space(14.0);
    gpus_section(ui, topology);
    ui.add_space(14.0);
    connectivity_section(ui, topology, live);
    ui.add_space(14.0);
    matrices(ui, topology);
    ui.add_space(14.0);
    notes(ui, topology);
}

/// The GPUs' cards; on a large machine one line per kind of GPU, the cards folded away.
fn gpus_section(ui: &mut Ui, topology: &Topology) {
    let n = topology.gpus.len();
    section(ui, "GPUs");
    if n > LARGE_MACHINE_GPUS {
        // Seventy-two cards would push everything else off the screen: one line per kind of
        // GPU, the cards a click away.
        gpu_kinds(ui, topology);
        egui::CollapsingHeader::new(format!("{n} GPU cards"))
            .id_salt("gpu-cards")
            .default_open(false)
            .show(ui, |ui| gpu_cards(ui, topology));
    } else {
        gpu_cards(ui, topology);
    }
}

/// The connectivity matrix (with `live`'s traffic) and its legend; on a large machine the
/// links by class, the matrix folded away.
fn connectivity_section(ui: &mut Ui, topology: &Topology, live: Option<&LiveFrame>) {
    let n = topology.gpus.len();
    section(ui, "Connectivity (nvidia-smi topo -m)");
    if let Some(frame) = live {
        ui.label(
            RichText::new(format!(
                "{}: NVLink GB/s and share of the line rate of directly joined pairs (the busier \
                 direction; both on hover)",
                frame.feed_word()
            ))
            .size(11.5)
            .weak(),
        );
    }
    if n > LARGE_MACHINE_GPUS {
        links_by_class(ui, topology);
        egui::CollapsingHeader::new(format!(
            "the full matrix ({n} GPUs, {} NICs)",
            topology.nics.len()
        ))
        .id_salt("connectivity-matrix")
        .default_open(false)
        .show(ui, |ui| connectivity_matrix_live(ui, topology, live));
    } else {
        connectivity_matrix_live(ui, topology, live);
    }
    ui.add_space(6.0);
    link_legend(ui);
}

/// The line-rate and P2P matrices: side by side when both fit, else stacked; folded away on a
/// large machine.
fn matrices(ui: &mut Ui, topology: &Topology) {
    let n = topology.gpus.len();
    if n > LARGE_MACHINE_GPUS {
        for (title, salt) in [
            ("Line rate, GB/s per direction", "rate-matrix"),
            ("P2P (read · write · nvlink · atomics)", "p2p-matrix"),
        ] {
            egui::CollapsingHeader::new(format!("{title}: the {n} × {n} matrix"))
                .id_salt(salt)
                .default_open(false)
                .show(ui, |ui| {
                    if salt == "rate-matrix" {
                        line_rate_matrix(ui, topology);
                    } else {
                        p2p_matrix(ui, topology);
                        ui.add_space(6.0);
                        p2p_legend(ui);
                    }
                });
        }
        return;
    }
    let rate = |ui: &mut Ui| {
        section(ui, "Line rate, GB/s per direction");
        line_rate_matrix(ui, topology);
    };
    let p2p = |ui: &mut Ui| {
        section(ui, "P2P (read · write · nvlink · atomics)");
        p2p_matrix(ui, topology);
        ui.add_space(6.0);
        p2p_legend(ui);
    };
    // Side by side when both fit (8 GPUs next to the Sources panel do not), else stacked.
    let gap = 32.0;
    let both = matrix_width(n, RATE_CELL.x)
        + gap
        + matrix_width(n, P2P_CELL.x)
        + 2.0 * ui.spacing().item_spacing.x;
    if both <= ui.available_width() {
        ui.horizontal_top(|ui| {
            ui.vertical(rate);
            ui.add_space(gap);
            ui.vertical(p2p);
        });
    } else {
        rate(ui);
        ui.add_space(14.0);
        p2p(ui);
    }
}

/// Above this many GPUs (a rack of 72) the view summarises: GPUs by kind, links by class, the
/// cards and matrices folded away.
pub const LARGE_MACHINE_GPUS: usize = 16;

/// One line per kind of GPU: how many, the model, memory, host link and NVLinks.
fn gpu_kinds(ui: &mut Ui, topology: &Topology) {
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for g in &topology.gpus {
        let line = format!(
            "{} · {} · {} · {}",
            dash(g.name.as_deref()),
            memory_text(g),
            pcie_text(g),
            nvlink_text(g)
        );
        match kinds.iter_mut().find(|(l, _)| *l == line) {
            Some((_, c)) => *c += 1,
            None => kinds.push((line, 1)),
        }
    }
    for (line, count) in kinds {
        ui.label(format!("{count} × {line}"));
    }
}

/// The GPU pairs and GPU↔NIC cells by kind of connection, with their line rates: what a matrix
/// of a rack shows, in a few rows.
fn links_by_class(ui: &mut Ui, topology: &Topology) {
    let mut gpu_pairs: Vec<(String, usize, Option<f64>, Option<f64>)> = Vec::new();
    for l in &topology.links {
        let kind = l.kind.map_or("unknown".to_string(), |k| k.to_string());
        let rate = l.line_rate.as_ref().map(|r| r.gbps);
        match gpu_pairs.iter_mut().find(|(k, ..)| *k == kind) {
            Some((_, c, lo, hi)) => {
                *c += 1;
                *lo = match (*lo, rate) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                *hi = match (*hi, rate) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
            None => gpu_pairs.push((kind, 1, rate, rate)),
        }
    }
    let mut nic_cells: Vec<(String, usize)> = Vec::new();
    for l in &topology.nic_links {
        let kind = l.kind.to_string();
        match nic_cells.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, c)) => *c += 1,
            None => nic_cells.push((kind, 1)),
        }
    }
    egui::Grid::new("links-by-class")
        .striped(true)
        .num_columns(3)
        .spacing([16.0, 3.0])
        .show(ui, |ui| {
            ui.label(RichText::new("connection").strong());
            ui.label(RichText::new("count").strong());
            ui.label(RichText::new("line rate, GB/s per direction").strong());
            ui.end_row();
            for (kind, count, lo, hi) in &gpu_pairs {
                ui.label(format!("GPU–GPU {kind}"));
                ui.label(format!("{count} pairs"));
                ui.label(match (lo, hi) {
                    (Some(a), Some(b)) if (a - b).abs() < 1e-9 => format!("{a:.1}"),
                    (Some(a), Some(b)) => format!("{a:.1}–{b:.1}"),
                    _ => "—".to_string(),
                });
                ui.end_row();
            }
            for (kind, count) in &nic_cells {
                ui.label(format!("GPU–NIC {kind}"));
                ui.label(format!("{count} cells"));
                ui.label("—");
                ui.end_row();
            }
        });
}

/// A section heading.
fn section(ui: &mut Ui, title: &str) {
    ui.label(RichText::new(title).strong().size(15.0));
    ui.add_space(4.0);
}

// ---------------------------------------------------------------------------------------------
// Header

/// A small colored pill saying `measured here` (this machine), `imported` or `catalog`.
pub fn source_badge(ui: &mut Ui, source: &TopologySource) -> egui::Response {
    crate::ui::widgets::source_badge(ui, SourceBadge::of_topology(source))
}

/// The machine's name (large), its source badge and one line of facts.
pub fn header(ui: &mut Ui, topology: &Topology) {
    ui.horizontal(|ui| {
        source_badge(ui, &topology.source);
        ui.label(RichText::new(title(topology)).size(22.0).strong());
    });
    facts(ui, topology);
}

/// One line of facts: GPUs, NICs, NUMA nodes, driver, when it was read (the report's first
/// page says the same: [`Topology::facts`]).
fn facts(ui: &mut Ui, topology: &Topology) {
    ui.label(RichText::new(topology.facts().join("  ·  ")).weak());
}

/// The name to show for a topology: the catalog name, the host name or the imported file names.
pub fn title(topology: &Topology) -> String {
    topology.title()
}

// ---------------------------------------------------------------------------------------------
// Machine drawing

/// The machine's boxes, lines and labels ([`machine::layout`], the same layout the report
/// documents draw as SVG) painted in the theme's colours, with hover text on GPUs, NICs and
/// switches, and `live`'s traffic where given: each direct NVLink bond's width and colour by its
/// share of the line rate with its GB/s on the pill, each GPU's PCIe line by its share with
/// its in/out on the box, each drop to an NVSwitch fabric with the GPU's NVLink in/out; hover
/// cards with sparklines.
pub fn machine_drawing_live(ui: &mut Ui, topology: &Topology, live: Option<&LiveFrame>) {
    let Some(layout) = machine::layout(topology, ui.available_width()) else {
        ui.label(RichText::new("No GPUs in this topology.").weak());
        return;
    };
    let (response, painter) =
        ui.allocate_painter(vec2(layout.width, layout.height), Sense::hover());
    let mut d = Drawing {
        topology,
        live,
        visuals: ui.visuals().clone(),
        painter,
        origin: response.rect.min,
        // While live, lines and labels are told apart by the GPU box they touch.
        gpu_boxes: layout
            .items
            .iter()
            .filter_map(|item| match item {
                Item::Box {
                    at,
                    hover: Some(Hover::Gpu(g)),
                    ..
                } => Some((*g, *at)),
                _ => None,
            })
            .collect(),
        bond: None,
        drops: Vec::new(),
    };
    for (i, item) in layout.items.iter().enumerate() {
        match item {
            // While live, a bond's pill is its traffic's, drawn with the text that follows it.
            Item::Box {
                kind: BoxKind::NvPill(_),
                ..
            } if live.is_some() => {}
            Item::Box {
                at,
                radius,
                kind,
                hover,
            } => d.boxed(ui, i, (at, *radius), *kind, hover.as_ref()),
            Item::Line {
                from,
                to,
                width,
                kind,
            } => d.line(*from, *to, *width, *kind),
            Item::Curve {
                points,
                width,
                kind,
            } => d.curve(ui, *points, *width, *kind),
            Item::Text(Label {
                at: p,
                tone: Tone::On(BoxKind::NvPill(_)),
                ..
            }) if live.is_some() => {
                if let (Some(frame), Some((a, b))) = (live, d.bond) {
                    live_pill(ui, &d.painter, d.at(*p), frame, a, b);
                }
            }
            Item::Text(label) => d.text(label),
        }
    }
    if let Some(frame) = live {
        for &(g, mid) in &d.drops {
            drop_label(ui, &d.painter, mid, frame, g);
        }
    }
}

/// The machine drawing being painted: where it sits and, while live, the frame drawn on it.
struct Drawing<'a> {
    topology: &'a Topology,
    live: Option<&'a LiveFrame<'a>>,
    visuals: egui::Visuals,
    painter: egui::Painter,
    origin: egui::Pos2,
    /// Each GPU's box, by GPU index.
    gpu_boxes: Vec<(usize, machine::Bounds)>,
    /// The bond drawn last (its pill follows it).
    bond: Option<(usize, usize)>,
    /// The fabric drops' middles, by GPU (their labels are drawn on top, at the end).
    drops: Vec<(usize, egui::Pos2)>,
}

impl Drawing<'_> {
    /// A layout point on screen.
    fn at(&self, p: machine::Point) -> egui::Pos2 {
        self.origin + vec2(p.0, p.1)
    }

    /// The GPU whose box `p` touches (a point of a line's end or a label).
    fn gpu_at(&self, p: machine::Point) -> Option<usize> {
        self.gpu_boxes
            .iter()
            .find(|(_, b)| {
                p.0 >= b.x - 1.0
                    && p.0 <= b.right() + 1.0
                    && p.1 >= b.y - 1.0
                    && p.1 <= b.bottom() + 1.0
            })
            .map(|(g, _)| *g)
    }

    /// Item `i`, a box (`b` and its corner radius), with its hover: a GPU's details (and its
    /// traffic while live) or a text.
    fn boxed(
        &self,
        ui: &mut Ui,
        i: usize,
        (b, radius): (&machine::Bounds, f32),
        kind: BoxKind,
        hover: Option<&Hover>,
    ) {
        let rect = Rect::from_min_size(self.at((b.x, b.y)), vec2(b.w, b.h));
        let (fill, stroke) = box_paint(kind, &self.visuals);
        let corners = CornerRadius::same(radius as u8);
        self.painter
            .rect(rect, corners, fill, stroke, StrokeKind::Inside);
        let id = ui.scope_id().with(("machine-item", i));
        match hover {
            Some(Hover::Gpu(index)) => {
                if let Some(gpu) = self.topology.gpu(*index) {
                    ui.interact(rect, id, Sense::hover()).on_hover_ui(|ui| {
                        gpu_details(ui, self.topology, gpu);
                        if let Some(frame) = self.live {
                            draw::gpu_hover(ui, frame, *index);
                        }
                    });
                }
            }
            Some(Hover::Text(text)) => {
                ui.interact(rect, id, Sense::hover())
                    .on_hover_text(text.as_str());
            }
            None => {}
        }
    }

    /// A straight line; while live a GPU's PCIe line and its drop to an NVSwitch fabric are
    /// drawn by their load (the drop's label is kept for the end).
    fn line(&mut self, from: machine::Point, to: machine::Point, width: f32, kind: LineKind) {
        let mut stroke = Stroke::new(width, line_paint(kind));
        if let Some(frame) = self.live {
            match kind {
                // A GPU's PCIe line ends on its box.
                LineKind::Pcie => {
                    if let Some(g) = self.gpu_at(to) {
                        stroke = draw::load_stroke(draw::pcie_share(frame, g));
                    }
                }
                // A drop to the NVSwitch fabric starts under its GPU.
                LineKind::Fabric => {
                    if let Some(g) = self.gpu_at(from) {
                        stroke = draw::load_stroke(draw::nvlink_totals(frame, g).2);
                        let mid = self.at(((from.0 + to.0) / 2.0, (from.1 + to.1) / 2.0));
                        self.drops.push((g, mid));
                    }
                }
                _ => {}
            }
        }
        self.painter
            .line_segment([self.at(from), self.at(to)], stroke);
    }

    /// A curve (an NVLink bond between two GPUs); while live drawn by its load, with the
    /// pair's hover card along it.
    fn curve(&mut self, ui: &mut Ui, [a, c, b]: [machine::Point; 3], width: f32, kind: LineKind) {
        let mut stroke = Stroke::new(width, line_paint(kind));
        self.bond = None;
        if let (Some(frame), LineKind::NvBond(_)) = (self.live, kind)
            && let (Some(ga), Some(gb)) = (self.gpu_at(a), self.gpu_at(b))
        {
            stroke = draw::load_stroke(draw::pair_share(frame, ga, gb));
            self.bond = Some((ga, gb));
            self.bond_sensors(ui, [a, c, b], frame, (ga, gb));
        }
        self.painter.add(Shape::QuadraticBezier(
            egui::epaint::QuadraticBezierShape::from_points_stroke(
                [self.at(a), self.at(c), self.at(b)],
                false,
                Color32::TRANSPARENT,
                stroke,
            ),
        ));
    }

    /// Hover anywhere along a live bond's arc: small sensors on it show the pair's card.
    fn bond_sensors(
        &self,
        ui: &mut Ui,
        [a, c, b]: [machine::Point; 3],
        frame: &LiveFrame,
        (ga, gb): (usize, usize),
    ) {
        for k in 1..10 {
            let t = k as f32 / 10.0;
            let u = 1.0 - t;
            let p = self.at((
                u * u * a.0 + 2.0 * u * t * c.0 + t * t * b.0,
                u * u * a.1 + 2.0 * u * t * c.1 + t * t * b.1,
            ));
            let sensor = Rect::from_center_size(p, vec2(16.0, 16.0));
            let id = ui.scope_id().with(("live-bond", ga, gb, k));
            ui.interact(sensor, id, Sense::hover())
                .on_hover_ui(|ui| draw::pair_hover(ui, frame, ga, gb));
        }
    }

    /// A label, anchored as the layout says; cut short where it has a width to keep.
    fn text(&self, label: &Label) {
        let Font { size, mono } = label.font;
        let font = if mono {
            FontId::monospace(size)
        } else {
            FontId::proportional(size)
        };
        let mut color = text_paint(label.tone, &self.visuals);
        let mut text = label.text.clone();
        // While live, a GPU box's last line (memory · PCIe link) gives its PCIe traffic.
        if let Some(frame) = self.live
            && label.anchor == Anchor::LeftBottom
            && label.tone == Tone::Weak
            && let Some(g) = self.gpu_at(label.at)
        {
            text = draw::gpu_box_text(frame, g);
            color = self.visuals.strong_text_color();
        }
        let mut galley = self
            .painter
            .layout_no_wrap(text.clone(), font.clone(), color);
        if let Some(max) = label.max_width
            && galley.size().x > max
        {
            // The short form where there is one (a NIC without its speed), else the text cut
            // at the width rather than overflowing its box.
            let job = egui::text::LayoutJob {
                wrap: egui::text::TextWrapping::truncate_at_width(max),
                ..egui::text::LayoutJob::simple_singleline(
                    label.short.clone().unwrap_or(text),
                    font,
                    color,
                )
            };
            galley = self.painter.layout_job(job);
        }
        let align = |side| match side {
            Side::Start => Align::Min,
            Side::Middle => Align::Center,
            Side::End => Align::Max,
        };
        let (across, down) = label.anchor.sides();
        let rect =
            Align2([align(across), align(down)]).anchor_size(self.at(label.at), galley.size());
        self.painter.galley(rect.min, galley, color);
    }
}

/// A live NVLink bond's pill at `center`: its GB/s and share, filled by the share; the pair's
/// hover card.
fn live_pill(
    ui: &Ui,
    painter: &egui::Painter,
    center: egui::Pos2,
    frame: &LiveFrame,
    a: usize,
    b: usize,
) {
    let share = draw::pair_share(frame, a, b);
    let fill = draw::heat(share);
    let galley = painter.layout_no_wrap(
        draw::pair_text(frame, a, b),
        FontId::proportional(12.0),
        palette::text_on(fill),
    );
    let rect = Rect::from_center_size(center, galley.size() + vec2(12.0, 5.0));
    painter.rect_filled(rect, CornerRadius::same(8), fill);
    painter.galley(rect.center() - galley.size() / 2.0, galley, Color32::WHITE);
    ui.interact(
        rect,
        ui.scope_id().with(("live-pill", a, b)),
        Sense::hover(),
    )
    .on_hover_ui(|ui| draw::pair_hover(ui, frame, a, b));
}

/// A live drop to the NVSwitch fabric: GPU `g`'s NVLink in/out on it, as a pill centred on
/// its middle (narrower than a GPU's slot, so neighbours never meet); the GPU's hover card.
fn drop_label(ui: &Ui, painter: &egui::Painter, mid: egui::Pos2, frame: &LiveFrame, g: usize) {
    let visuals = ui.visuals();
    let galley = painter.layout_no_wrap(
        draw::fabric_text(frame, g),
        FontId::proportional(11.0),
        visuals.strong_text_color(),
    );
    let rect = Rect::from_center_size(mid, galley.size() + vec2(8.0, 2.0));
    painter.rect(
        rect,
        CornerRadius::same(4),
        palette::box_fill(visuals),
        Stroke::new(1.0, draw::heat(draw::nvlink_totals(frame, g).2)),
        StrokeKind::Inside,
    );
    painter.galley(rect.min + vec2(4.0, 1.0), galley, Color32::WHITE);
    ui.interact(rect, ui.scope_id().with(("live-drop", g)), Sense::hover())
        .on_hover_ui(|ui| {
            ui.label(RichText::new(format!("GPU {g}")).strong());
            draw::gpu_hover(ui, frame, g);
        });
}

/// A drawing box's fill and outline in the theme's colours.
fn box_paint(kind: BoxKind, visuals: &egui::Visuals) -> (Color32, Stroke) {
    match kind {
        BoxKind::Group => (
            palette::group_fill(visuals),
            Stroke::new(1.0, palette::box_stroke(visuals).gamma_multiply(0.6)),
        ),
        BoxKind::Cpu => (
            palette::cpu_fill(visuals),
            Stroke::new(1.0, palette::box_stroke(visuals)),
        ),
        BoxKind::GpuDegraded => (
            palette::box_fill(visuals),
            Stroke::new(2.5, palette::VERDICT_FAIL),
        ),
        BoxKind::Gpu { nvlink } => (
            palette::box_fill(visuals),
            Stroke::new(
                1.5,
                if nvlink {
                    palette::NVLINK
                } else {
                    palette::PCIE_LINE
                },
            ),
        ),
        BoxKind::Nic => (
            palette::NIC.gamma_multiply(if visuals.dark_mode { 0.55 } else { 0.35 }),
            Stroke::new(1.0, palette::NIC),
        ),
        BoxKind::Switch(k) => (palette::link_fill(k), Stroke::NONE),
        BoxKind::NvSwitch => (palette::NVLINK.gamma_multiply(0.9), Stroke::NONE),
        BoxKind::NvPill(n) => (palette::link_fill(LinkKind::Nv(n)), Stroke::NONE),
    }
}

/// A drawing line's colour.
fn line_paint(kind: LineKind) -> Color32 {
    match kind {
        LineKind::Pcie => palette::PCIE_LINE,
        LineKind::Socket => palette::SOCKET_LINK,
        LineKind::Fabric => palette::NVLINK,
        LineKind::NvBond(n) => palette::link_fill(LinkKind::Nv(n)),
    }
}

/// A drawing label's colour.
fn text_paint(tone: Tone, visuals: &egui::Visuals) -> Color32 {
    match tone {
        Tone::Text => visuals.text_color(),
        Tone::Weak => visuals.weak_text_color(),
        Tone::Strong => visuals.strong_text_color(),
        Tone::On(BoxKind::NvSwitch) => Color32::WHITE,
        Tone::On(kind) => palette::text_on(box_paint(kind, visuals).0),
    }
}

// ---------------------------------------------------------------------------------------------
// GPU cards

fn dash(v: Option<&str>) -> String {
    v.map_or("—".to_string(), str::to_string)
}

fn memory_text(gpu: &Gpu) -> String {
    machine::memory_text(gpu)
}

fn nvlink_text(gpu: &Gpu) -> String {
    match gpu.nvlinks_active {
        None => "—".to_string(),
        Some(0) => "none".to_string(),
        Some(n) => {
            let mut s = match gpu.nvlink_generation {
                Some(g) => format!("{n} × NVLink {g}"),
                None => format!("{n} active"),
            };
            if let Some(r) = gpu.nvlink_gbps_per_link {
                s.push_str(&format!(" · {r:.2} GB/s each"));
            }
            s
        }
    }
}

fn pcie_text(gpu: &Gpu) -> String {
    if let Some(h) = &gpu.host_link {
        return format!("{} · {:.0} GB/s", h.kind, h.gbps);
    }
    let d = gpu.pcie.describe();
    match gpu.pcie.line_rate_gbps() {
        Some(r) => format!("{d} · {r:.1} GB/s"),
        None => d,
    }
}

fn gpu_rows(gpu: &Gpu) -> Vec<(&'static str, String)> {
    vec![
        ("Memory", memory_text(gpu)),
        (
            if gpu.host_link.is_some() {
                "Host link"
            } else {
                "PCIe"
            },
            pcie_text(gpu),
        ),
        (
            "NUMA node",
            gpu.numa_node.map_or("—".into(), |n| n.to_string()),
        ),
        ("CPU affinity", dash(gpu.cpu_affinity.as_deref())),
        ("NVLinks", nvlink_text(gpu)),
        ("PCI bus", dash(gpu.pci_bus_id.as_deref())),
    ]
}

fn gpu_details(ui: &mut Ui, _topology: &Topology, gpu: &Gpu) {
    ui.label(RichText::new(format!("GPU {} · {}", gpu.index, dash(gpu.name.as_deref()))).strong());
    egui::Grid::new(("gpu-details", gpu.index))
        .num_columns(2)
        .spacing(vec2(12.0, 2.0))
        .show(ui, |ui| {
            for (k, v) in gpu_rows(gpu) {
                ui.label(RichText::new(k).weak());
                ui.label(v);
                ui.end_row();
            }
        });
}

/// One card per GPU: name, memory, PCIe link, NUMA node, CPU affinity, NVLinks.
pub fn gpu_cards(ui: &mut Ui, topology: &Topology) {
    // Wide enough for the longest value ("18 × NVLink 4 · 26.56 GB/s each") untruncated.
    let min_w = 290.0;
    let spacing = 10.0;
    let avail = ui.available_width();
    let per_row = ((avail + spacing) / (min_w + spacing)).floor().max(1.0) as usize;
    // Stretch the cards to fill the row, up to a width that still reads as a card.
    let card_w = ((avail - spacing * (per_row as f32 - 1.0)) / per_row as f32).clamp(min_w, 360.0);
    let visuals = ui.visuals().clone();
    let frame = egui::Frame::new()
        .fill(palette::box_fill(&visuals))
        .stroke(Stroke::new(1.0, palette::box_stroke(&visuals)))
        .corner_radius(CornerRadius::same(8))
        .inner_margin(egui::Margin::same(10));
    // The card's outer width is card_w: its content is that less margins and stroke.
    let content_w = card_w - frame.total_margin().sum().x;
    for row in topology.gpus.chunks(per_row) {
        ui.horizontal_top(|ui| {
            ui.spacing_mut().item_spacing.x = spacing;
            for gpu in row {
                frame.show(ui, |ui| {
                    ui.set_width(content_w);
                    ui.vertical(|ui| gpu_card(ui, gpu, &visuals));
                });
            }
        });
        ui.add_space(spacing);
    }
}

fn gpu_card(ui: &mut Ui, gpu: &Gpu, visuals: &egui::Visuals) {
    ui.horizontal(|ui| {
        ui.label(
            RichText::new(format!("GPU {}", gpu.index))
                .strong()
                .size(15.0),
        );
        ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
            if let Some(n) = gpu.numa_node {
                badge(ui, &format!("NUMA {n}"), palette::cpu_fill(visuals));
            }
        });
    });
    ui.add(egui::Label::new(dash(gpu.name.as_deref())).truncate());
    ui.add_space(4.0);
    egui::Grid::new(("gpu-card", gpu.index))
        .num_columns(2)
        .spacing(vec2(10.0, 3.0))
        .show(ui, |ui| {
            for (k, v) in gpu_rows(gpu) {
                ui.label(RichText::new(k).weak());
                ui.add(egui::Label::new(v).truncate());
                ui.end_row();
            }
        });
}

// ---------------------------------------------------------------------------------------------
// Matrices

/// Cell of the line-rate matrix.
const RATE_CELL: Vec2 = vec2(58.0, 26.0);
/// Cell of the P2P matrix (four capability segments).
const P2P_CELL: Vec2 = vec2(66.0, 26.0);

fn gpu_label(i: usize) -> String {
    format!("GPU{i}")
}

/// The text shown when hovering the connection between two GPUs.
fn pair_hover(topology: &Topology, a: usize, b: usize) -> (Option<LinkKind>, String) {
    let link = topology.link(a, b);
    let kind = link.and_then(|l| l.kind);
    let mut s = format!("GPU{a} – GPU{b}: ");
    match kind {
        Some(k) => {
            s.push_str(&format!(
                "{k}\n{} = {}",
                k.code().replace("NV", "NV#"),
                k.legend()
            ));
            if let LinkKind::Nv(n) = k {
                s.push_str(&format!(" (here {n})"));
            }
        }
        None => s.push_str("unknown\nThe source did not say how this pair is connected."),
    }
    if let Some(p) = link.and_then(|l| l.pcie_path) {
        s.push_str(&format!("\nPCIe path: {p} — {}", p.legend()));
    }
    match link.and_then(|l| l.line_rate.as_ref()) {
        Some(r) => s.push_str(&format!(
            "\nLine rate: {:.1} GB/s per direction\nBasis: {}",
            r.gbps, r.basis
        )),
        None => s.push_str("\nLine rate: — (cannot be derived from what is known)"),
    }
    (kind, s)
}

/// The `nvidia-smi topo -m` grid: GPUs and NICs, colored by connection, with CPU and NUMA
/// affinity columns.
pub fn connectivity_matrix(ui: &mut Ui, topology: &Topology) {
    connectivity_matrix_live(ui, topology, None);
}

/// [`connectivity_matrix`]; with `live`, each directly joined GPU pair's cell gives its GB/s
/// and share of the line rate (the busier direction), coloured by the share, and a hover card
/// with both directions and a sparkline.
pub fn connectivity_matrix_live(ui: &mut Ui, topology: &Topology, live: Option<&LiveFrame>) {
    let gpus = topology.gpu_indices();
    let nics: Vec<usize> = (0..topology.nics.len()).collect();
    let labels: Vec<String> = gpus
        .iter()
        .map(|&g| gpu_label(g))
        .chain(nics.iter().map(|&i| topology.nic_label(i)))
        .collect();
    let ng = gpus.len();
    let extra = affinity_columns(topology);
    // Live cells hold `312 69%`.
    let cell = if live.is_some() {
        vec2(76.0, 24.0)
    } else {
        vec2(48.0, 24.0)
    };
    let hovered = matrix_hovered(ui, "topo", &labels, &labels, cell, &extra, |r, c| {
        let diag = itself(&labels[r]);
        match (r < ng, c < ng) {
            _ if r == c => Some(diag),
            (true, true) => Some(gpu_pair_cell(topology, live, gpus[r], gpus[c])),
            (true, false) => Some(gpu_nic_cell(topology, gpus[r], nics[c - ng])),
            (false, true) => Some(gpu_nic_cell(topology, gpus[c], nics[r - ng])),
            (false, false) => None,
        }
    });
    if let (Some(frame), Some((r, c, resp))) = (live, hovered)
        && r < ng
        && c < ng
        && r != c
        && frame.pair(gpus[r], gpus[c]).is_some()
    {
        resp.on_hover_ui(|ui| draw::pair_hover(ui, frame, gpus[r], gpus[c]));
    }
    if !topology.nics.is_empty() {
        nic_legend(ui, topology);
    }
}

/// The connectivity matrix's columns right of the cells: each GPU's CPU affinity and NUMA node.
fn affinity_columns(topology: &Topology) -> [(&'static str, f32, Vec<String>); 2] {
    let affinity: Vec<String> = topology
        .gpus
        .iter()
        .map(|g| dash(g.cpu_affinity.as_deref()))
        .collect();
    let numa: Vec<String> = topology
        .gpus
        .iter()
        .map(|g| g.numa_node.map_or("—".into(), |n| n.to_string()))
        .collect();
    let aff_w = affinity.iter().map(|a| a.len()).max().unwrap_or(4).max(12) as f32 * 7.8 + 20.0;
    [("CPU affinity", aff_w, affinity), ("NUMA", 50.0, numa)]
}

/// The cell of GPUs `a` and `b`: how they are joined; while live, a directly joined pair's
/// traffic instead (its hover card, with a sparkline, is added by the caller).
fn gpu_pair_cell(topology: &Topology, live: Option<&LiveFrame>, a: usize, b: usize) -> Cell {
    let (kind, mut hover) = pair_hover(topology, a, b);
    if let Some(frame) = live {
        if let Some(text) = draw::cell_text(frame, a, b) {
            return Cell::single(
                text.clone(),
                Some(draw::heat(draw::pair_share(frame, a, b))),
                format!("GPU{a} GPU{b} {} {text}", frame.feed_word()),
                String::new(),
            );
        }
        if let Some(note) = draw::cell_note(frame, a, b) {
            hover.push_str(&format!("\n\n{note}"));
        }
    }
    let text = kind.map_or("?".to_string(), |k| k.to_string());
    Cell::single(
        text.clone(),
        kind.map(palette::link_fill),
        format!("GPU{a} GPU{b} {text}"),
        hover,
    )
}

/// The cell of GPU `g` and the `n`-th NIC: how they are joined.
fn gpu_nic_cell(topology: &Topology, g: usize, n: usize) -> Cell {
    let nic_index = topology.nics.get(n).map_or(n, |x| x.index);
    let kind = topology.nic_link(nic_index, g);
    let text = kind.map_or("?".to_string(), |k| k.to_string());
    let nic_name = topology
        .nics
        .get(n)
        .map_or("?".to_string(), |n| n.name.clone());
    let hover = match kind {
        Some(k) => format!(
            "GPU{g} – {} ({nic_name}): {k}\n{k} = {}",
            topology.nic_label(n),
            k.legend()
        ),
        None => format!("GPU{g} – {}: unknown", topology.nic_label(n)),
    };
    Cell::single(
        text.clone(),
        kind.map(palette::link_fill),
        format!("GPU{g} {} {text}", topology.nic_label(n)),
        hover,
    )
}

/// Each NIC's short label and its name, under the matrix.
fn nic_legend(ui: &mut Ui, topology: &Topology) {
    let legend = topology.nic_legend();
    if legend.is_empty() {
        return;
    }
    ui.add(
        egui::Label::new(
            RichText::new(format!("NIC legend  {}", legend.join("   ")))
                .monospace()
                .size(11.5)
                .weak(),
        )
        .wrap(),
    );
}

/// Swatches for every connection kind with nvidia-smi's legend text on hover.
pub fn link_legend(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        let entries = [
            (LinkKind::Nv(18), "NV18"),
            (LinkKind::Nv(12), "NV12"),
            (LinkKind::Nv(4), "NV4"),
            (LinkKind::Pix, "PIX"),
            (LinkKind::Pxb, "PXB"),
            (LinkKind::Phb, "PHB"),
            (LinkKind::Node, "NODE"),
            (LinkKind::Sys, "SYS"),
        ];
        for (kind, text) in entries {
            let short = match kind {
                LinkKind::Nv(_) => "NVLink bond",
                LinkKind::Pix => "one PCIe bridge",
                LinkKind::Pxb => "PCIe bridges",
                LinkKind::Phb => "host bridge",
                LinkKind::Node => "within NUMA node",
                LinkKind::Sys => "across sockets",
            };
            swatch(ui, text, palette::link_fill(kind)).on_hover_text(format!(
                "{} = {}",
                kind.code().replace("NV", "NV#"),
                kind.legend()
            ));
            if !matches!(kind, LinkKind::Nv(18) | LinkKind::Nv(12)) {
                ui.label(RichText::new(short).size(11.5).weak());
                ui.add_space(8.0);
            }
        }
    });
}

fn swatch(ui: &mut Ui, text: &str, fill: Color32) -> egui::Response {
    let galley = ui.painter().layout_no_wrap(
        text.to_string(),
        FontId::monospace(11.5),
        palette::text_on(fill),
    );
    let size = galley.size() + vec2(12.0, 6.0);
    let (rect, resp) = ui.allocate_exact_size(size, Sense::hover());
    ui.painter().rect_filled(rect, CornerRadius::same(3), fill);
    ui.painter()
        .galley(rect.center() - galley.size() / 2.0, galley, Color32::WHITE);
    resp
}

/// A matrix's diagonal cell: "X", the GPU (or NIC) itself.
fn itself(label: &str) -> Cell {
    Cell::single("X", None, format!("{label} itself"), String::new())
}

/// GPU × GPU per-direction line rates in GB/s; "—" where unknown, the basis on hover.
pub fn line_rate_matrix(ui: &mut Ui, topology: &Topology) {
    let gpus = topology.gpu_indices();
    let labels: Vec<String> = gpus.iter().map(|&g| gpu_label(g)).collect();
    matrix(ui, "rate", &labels, &labels, RATE_CELL, &[], |r, c| {
        if r == c {
            return Some(itself(&labels[r]));
        }
        let (a, b) = (gpus[r], gpus[c]);
        let link = topology.link(a, b);
        let kind = link.and_then(|l| l.kind);
        Some(match link.and_then(|l| l.line_rate.as_ref()) {
            Some(rate) => {
                let text = if rate.gbps >= 100.0 {
                    format!("{:.0}", rate.gbps)
                } else {
                    format!("{:.1}", rate.gbps)
                };
                Cell::single(
                    text.clone(),
                    kind.map(palette::link_fill),
                    format!("rate GPU{a} GPU{b} {text}"),
                    format!(
                        "GPU{a} → GPU{b}: {:.1} GB/s per direction\nBasis: {}\nConnection: {}",
                        rate.gbps,
                        rate.basis,
                        kind.map_or("unknown".to_string(), |k| k.to_string())
                    ),
                )
            }
            None => Cell::single(
                "—",
                None,
                format!("rate GPU{a} GPU{b} unknown"),
                format!(
                    "GPU{a} → GPU{b}: line rate unknown (no link generation, width or speed known)"
                ),
            ),
        })
    });
}

fn status_text(s: Option<P2pStatus>) -> String {
    match s {
        Some(s) => format!("{} ({})", s.code(), s.legend()),
        None => "— (not known)".to_string(),
    }
}

/// Ordered GPU pairs × the four P2P capabilities, OK in green and the rest in orange/red.
pub fn p2p_matrix(ui: &mut Ui, topology: &Topology) {
    let gpus = topology.gpu_indices();
    let labels: Vec<String> = gpus.iter().map(|&g| gpu_label(g)).collect();
    matrix(ui, "p2p", &labels, &labels, P2P_CELL, &[], |r, c| {
        if r == c {
            return Some(itself(&labels[r]));
        }
        let (a, b) = (gpus[r], gpus[c]);
        let pair = topology.p2p(a, b);
        let caps = pair.map(|p| p.caps).unwrap_or_default();
        let segments = P2pCap::ALL
            .iter()
            .map(|cap| {
                let st = caps.get(*cap);
                Segment {
                    text: cap.letter().to_string(),
                    fill: st.map(|s| palette::p2p_fill(Some(s))),
                }
            })
            .collect();
        let mut hover = format!("GPU{a} → GPU{b}");
        for cap in P2pCap::ALL {
            hover.push_str(&format!(
                "\n{:<8} {}",
                cap.name(),
                status_text(caps.get(cap))
            ));
        }
        let peer = pair.and_then(|p| p.cuda_can_access_peer);
        hover.push_str(&format!(
            "\nCUDA can access peer: {}",
            peer.map_or("—", |p| if p { "yes" } else { "no" })
        ));
        hover.push_str(&format!(
            "\nCUDA P2P perf rank: {}",
            pair.and_then(|p| p.cuda_perf_rank)
                .map_or("—".to_string(), |r| r.to_string())
        ));
        let codes: Vec<&str> = P2pCap::ALL
            .iter()
            .map(|cap| caps.get(*cap).map_or("-", |s| s.code()))
            .collect();
        Some(Cell {
            segments,
            label: format!("p2p GPU{a} GPU{b} {}", codes.join(" ")),
            hover,
        })
    });
}

/// What the P2P colors mean.
pub fn p2p_legend(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        ui.label(
            RichText::new("r w n a = read, write, nvlink, atomics")
                .size(11.5)
                .weak(),
        );
        ui.add_space(8.0);
        for (st, text) in [
            (Some(P2pStatus::Ok), "OK"),
            (Some(P2pStatus::Ns), "NS"),
            (Some(P2pStatus::Tns), "CNS GNS TNS"),
            (Some(P2pStatus::U), "U"),
        ] {
            let hover = match st {
                Some(P2pStatus::Tns) => [P2pStatus::Cns, P2pStatus::Gns, P2pStatus::Tns]
                    .iter()
                    .map(|s| format!("{} = {}", s.code(), s.legend()))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Some(s) => format!("{} = {}", s.code(), s.legend()),
                None => String::new(),
            };
            swatch(ui, text, palette::p2p_fill(st)).on_hover_text(hover);
        }
        swatch(ui, "·", palette::neutral_cell(ui.visuals())).on_hover_text("Not known");
        ui.label(RichText::new("not known").size(11.5).weak());
    });
}

/// The topology's notes in a collapsible section.
pub fn notes(ui: &mut Ui, topology: &Topology) {
    if topology.notes.is_empty() {
        return;
    }
    let notes = grouped_notes(&topology.notes, topology.gpus.len());
    egui::CollapsingHeader::new(RichText::new(format!("Notes ({})", notes.len())).strong())
        .id_salt("topology-notes")
        .default_open(true)
        .show(ui, |ui| {
            for n in &notes {
                ui.horizontal_top(|ui| {
                    ui.label(RichText::new("•").weak());
                    ui.add(egui::Label::new(RichText::new(n).size(12.5)).wrap());
                });
            }
        });
}

/// Notes as shown: notes about GPU pairs that say the same thing become one line naming the
/// pairs (on 8 GPUs one note per pair is 28 alike lines); the order of first appearance stays.
fn grouped_notes(notes: &[TopologyNote], gpus: usize) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<(usize, usize)>)> = Vec::new();
    let mut out: Vec<Option<String>> = Vec::new();
    let mut slot: Vec<usize> = Vec::new();
    for n in notes {
        match n.pair {
            Some(pair) => match groups.iter_mut().position(|(r, _)| *r == n.text) {
                Some(g) => groups[g].1.push(pair),
                None => {
                    groups.push((&n.text, vec![pair]));
                    slot.push(out.len());
                    out.push(None);
                }
            },
            None => out.push(Some(n.text.clone())),
        }
    }
    let all_pairs = gpus * gpus.saturating_sub(1) / 2;
    for ((rest, pairs), at) in groups.into_iter().zip(slot) {
        out[at] = Some(match pairs.as_slice() {
            [(a, b)] => format!("GPU {a}–GPU {b}: {rest}"),
            _ if pairs.len() == all_pairs => format!("Every GPU pair ({all_pairs}): {rest}"),
            _ => {
                let list: Vec<String> = pairs.iter().map(|(a, b)| format!("{a}–{b}")).collect();
                format!("GPU pairs {}: {rest}", list.join(", "))
            }
        });
    }
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::grouped_notes;
    use crate::model::TopologyNote;

    #[test]
    fn pair_notes_that_say_the_same_are_grouped() {
        let same = "NVLink remote devices not identifiable; NV18 inferred";
        let mut notes = vec![TopologyNote::new("NVLink speed per link from NVML")];
        for (a, b) in [(0, 1), (0, 2), (1, 2)] {
            notes.push(TopologyNote::about_pair(a, b, same));
        }
        notes.push(TopologyNote::about_pair(0, 2, "something else"));
        assert_eq!(
            grouped_notes(&notes, 3),
            vec![
                "NVLink speed per link from NVML".to_string(),
                format!("Every GPU pair (3): {same}"),
                "GPU 0–GPU 2: something else".to_string(),
            ]
        );
        assert_eq!(
            grouped_notes(&notes, 4)[1],
            format!("GPU pairs 0–1, 0–2, 1–2: {same}")
        );
    }
}
