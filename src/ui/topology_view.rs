//! The Topology view: how a machine's GPUs and NICs are connected.
//!
//! Pure drawing: every function takes a [`Topology`] and draws it; nothing here reads files,
//! talks to NVML or keeps state. The App wraps [`show`] in a scroll area; the report renderer
//! ([`super::snapshot`]) calls it directly.

use eframe::egui::{
    self, Align, Align2, Color32, CornerRadius, FontId, Layout, Rect, RichText, Sense, Shape,
    Stroke, StrokeKind, Ui, Vec2, pos2, vec2,
};

use super::palette::{self, SourceBadge};
use super::widgets::{Cell, Segment, badge, matrix, matrix_width};
use crate::model::{Gpu, LinkKind, P2pCap, P2pStatus, Topology, TopologyNote, TopologySource};

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

/// [`show_with_health`], with the header naming the topology as `shown_as` says.
pub fn show_as(
    ui: &mut Ui,
    topology: &Topology,
    health: Option<&crate::health::HealthReport>,
    shown_as: Option<&ShownAs>,
) {
    match shown_as {
        Some(s) => {
            ui.horizontal(|ui| {
                super::widgets::source_badge(ui, s.badge);
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
        super::health_view::panel(ui, topology, h);
        ui.add_space(14.0);
    }
    section(ui, "Machine");
    // Eight GPUs need more width than a small window leaves: the drawing scrolls on its own
    // rather than widen the page (and every card and matrix under it).
    egui::ScrollArea::horizontal()
        .id_salt("machine-drawing")
        .show(ui, |ui| machine_drawing(ui, topology));
    ui.add_space(14.0);
    section(ui, "GPUs");
    gpu_cards(ui, topology);
    ui.add_space(14.0);
    section(ui, "Connectivity (nvidia-smi topo -m)");
    connectivity_matrix(ui, topology);
    ui.add_space(6.0);
    link_legend(ui);
    ui.add_space(14.0);
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
    let n = topology.gpus.len();
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
    ui.add_space(14.0);
    notes(ui, topology);
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
    super::widgets::source_badge(ui, SourceBadge::of_topology(source))
}

/// The machine's name (large), its source badge and one line of facts.
pub fn header(ui: &mut Ui, topology: &Topology) {
    ui.horizontal(|ui| {
        source_badge(ui, &topology.source);
        ui.label(RichText::new(title(topology)).size(22.0).strong());
    });
    facts(ui, topology);
}

/// One line of facts: GPUs, NICs, NUMA nodes, driver, when it was read.
fn facts(ui: &mut Ui, topology: &Topology) {
    let numa = topology
        .numa_groups()
        .iter()
        .filter(|(n, _)| n.is_some())
        .count();
    let mut facts = vec![
        plural(topology.gpus.len(), "GPU"),
        plural(topology.nics.len(), "NIC"),
    ];
    if numa > 0 {
        facts.push(plural(numa, "NUMA node"));
    }
    match &topology.source {
        TopologySource::Live {
            driver_version,
            cuda_driver_version,
            ..
        } => {
            facts.push(format!("driver {}", dash(driver_version.as_deref())));
            if let Some(v) = cuda_driver_version {
                facts.push(format!("CUDA {}.{}", v / 1000, (v % 1000) / 10));
            }
        }
        TopologySource::Imported { .. } => facts.push("parsed from nvidia-smi output".into()),
        TopologySource::Catalog { .. } => {
            facts.push("figures documented by the vendor, not measured".into());
        }
    }
    if let Some(at) = &topology.captured_at {
        facts.push(format!("captured {at}"));
    }
    ui.label(RichText::new(facts.join("  ·  ")).weak());
}

/// The name to show for a topology: the catalog name, the host name or the imported file names.
pub fn title(topology: &Topology) -> String {
    topology.title()
}

// ---------------------------------------------------------------------------------------------
// Machine drawing

/// Where a NIC is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum NicHome {
    /// Next to this GPU, sharing a PCIe switch (PIX or PXB).
    Gpu(usize, LinkKind),
    /// Directly under the CPU of this NUMA group (PHB or NODE to its nearest GPU).
    Group(usize, LinkKind),
    /// Far from every GPU (SYS) or not linked to any.
    Elsewhere,
}

fn path_rank(kind: LinkKind) -> u32 {
    match kind {
        LinkKind::Nv(_) => 0,
        LinkKind::Pix => 1,
        LinkKind::Pxb => 2,
        LinkKind::Phb => 3,
        LinkKind::Node => 4,
        LinkKind::Sys => 5,
    }
}

fn nic_homes(topology: &Topology, groups: &[(Option<u32>, Vec<usize>)]) -> Vec<NicHome> {
    topology
        .nics
        .iter()
        .map(|nic| {
            let best = topology
                .nic_links
                .iter()
                .filter(|l| l.nic == nic.index)
                .min_by_key(|l| (path_rank(l.kind), l.gpu));
            let group_of = |gpu: usize| groups.iter().position(|(_, g)| g.contains(&gpu));
            match best {
                Some(l) if matches!(l.kind, LinkKind::Pix | LinkKind::Pxb) => {
                    NicHome::Gpu(l.gpu, l.kind)
                }
                Some(l) if matches!(l.kind, LinkKind::Phb | LinkKind::Node) => {
                    group_of(l.gpu).map_or(NicHome::Elsewhere, |g| NicHome::Group(g, l.kind))
                }
                _ => NicHome::Elsewhere,
            }
        })
        .collect()
}

/// The NVLink count every GPU pair shares, when all pairs share the same non-zero count.
fn uniform_nvlinks(topology: &Topology) -> Option<u32> {
    let mut counts = topology
        .links
        .iter()
        .map(|l| l.kind.and_then(|k| k.nvlinks()));
    let first = counts.next()??;
    counts.all(|c| c == Some(first)).then_some(first)
}

/// True when the GPUs hang off an NVSwitch fabric rather than direct NVLinks.
///
/// Every pair NV#-connected with the same count could be a direct mesh (4-GPU HGX boards wire
/// NV6 to each of three peers) or a switch (DGX/HGX 8-GPU: NV18 to every peer). Through a
/// switch each pair's bond is all of a GPU's links, so the pair count equals the GPU's active
/// links; without per-GPU counts, more than four GPUs all-to-all means a switch.
fn nvswitch_fabric(topology: &Topology) -> Option<u32> {
    let n = uniform_nvlinks(topology)?;
    if topology.gpus.len() < 3 {
        return None;
    }
    let actives: Vec<Option<u32>> = topology.gpus.iter().map(|g| g.nvlinks_active).collect();
    let switched = if actives.iter().all(Option::is_some) {
        actives.iter().all(|a| *a == Some(n))
    } else {
        topology.gpus.len() > 4
    };
    switched.then_some(n)
}

/// GPUs of one NUMA group split into sets that share a PCIe switch (PIX or PXB between them),
/// in index order of each set's first GPU.
fn switch_clusters(topology: &Topology, gpus: &[usize]) -> Vec<Vec<usize>> {
    let behind_switch = |a: usize, b: usize| {
        topology.link(a, b).is_some_and(|l| {
            [l.kind, l.pcie_path]
                .iter()
                .flatten()
                .any(|k| matches!(k, LinkKind::Pix | LinkKind::Pxb))
        })
    };
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for &g in gpus {
        match clusters
            .iter_mut()
            .find(|c| c.iter().any(|&o| behind_switch(o, g)))
        {
            Some(c) => c.push(g),
            None => clusters.push(vec![g]),
        }
    }
    clusters
}

/// PXB when any pair (or GPU–NIC path) in the set crosses several bridges, PIX otherwise.
fn cluster_kind(topology: &Topology, cluster: &[usize]) -> LinkKind {
    let pxb_pair = cluster.iter().any(|&a| {
        cluster.iter().any(|&b| {
            a < b
                && topology.link(a, b).is_some_and(|l| {
                    l.kind == Some(LinkKind::Pxb) || l.pcie_path == Some(LinkKind::Pxb)
                })
        })
    });
    let pxb_nic = topology
        .nic_links
        .iter()
        .any(|l| cluster.contains(&l.gpu) && l.kind == LinkKind::Pxb);
    if pxb_pair || pxb_nic {
        LinkKind::Pxb
    } else {
        LinkKind::Pix
    }
}

/// A drawing of the machine: CPU sockets with their GPUs and NICs, PCIe, NVLink and the socket
/// interconnect.
pub fn machine_drawing(ui: &mut Ui, topology: &Topology) {
    if topology.gpus.is_empty() {
        ui.label(RichText::new("No GPUs in this topology.").weak());
        return;
    }
    let visuals = ui.visuals().clone();
    let text_color = visuals.text_color();
    let weak = visuals.weak_text_color();
    let groups = topology.numa_groups();
    let homes = nic_homes(topology, &groups);
    let fabric = nvswitch_fabric(topology);

    // Layout constants (points).
    let margin = 10.0;
    let group_gap = 70.0;
    let group_pad = 12.0;
    let cpu_h = 46.0;
    let nic_h = 22.0;
    let gpu_h = 66.0;
    let half_slot = 0.75;

    // Slots per group: one per GPU plus half a slot per NIC that hangs directly off the CPU.
    let group_nics: Vec<Vec<usize>> = (0..groups.len())
        .map(|g| {
            homes
                .iter()
                .enumerate()
                .filter(|(_, h)| matches!(h, NicHome::Group(gi, _) if *gi == g))
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    let slots: Vec<f32> = groups
        .iter()
        .zip(&group_nics)
        .map(|((_, gpus), nics)| gpus.len() as f32 + half_slot * nics.len() as f32)
        .collect();
    let total_slots: f32 = slots.iter().sum();
    let fixed = 2.0 * margin
        + group_gap * (groups.len().saturating_sub(1)) as f32
        + 2.0 * group_pad * groups.len() as f32;
    let avail = ui.available_width().max(400.0);
    let slot_w = ((avail - fixed) / total_slots).clamp(118.0, 180.0);

    // NICs stacked next to each GPU.
    let per_gpu = |gpu: usize| -> Vec<usize> {
        homes
            .iter()
            .enumerate()
            .filter(|(_, h)| matches!(h, NicHome::Gpu(g, _) if *g == gpu))
            .map(|(i, _)| i)
            .collect()
    };
    let cpu_nics = usize::from(group_nics.iter().any(|v| !v.is_empty()));
    let max_stack = topology
        .gpus
        .iter()
        .map(|g| per_gpu(g.index).len())
        .max()
        .unwrap_or(0)
        .max(cpu_nics);
    let nic_area = if max_stack == 0 {
        0.0
    } else {
        max_stack as f32 * (nic_h + 5.0) + 14.0
    };

    let elsewhere: Vec<usize> = homes
        .iter()
        .enumerate()
        .filter(|(_, h)| **h == NicHome::Elsewhere)
        .map(|(i, _)| i)
        .collect();

    // Pairwise NVLink arcs need room below the GPUs; a fabric needs a bar.
    let any_nv = topology
        .links
        .iter()
        .any(|l| l.kind.is_some_and(|k| k.nvlinks().is_some()));
    let below = if fabric.is_some() {
        78.0
    } else if any_nv {
        let max_span = topology
            .links
            .iter()
            .filter(|l| l.kind.is_some_and(|k| k.nvlinks().is_some()))
            .map(|l| l.b.abs_diff(l.a))
            .max()
            .unwrap_or(1) as f32;
        40.0 + 14.0 * max_span.min(7.0)
    } else {
        8.0
    };

    let y_cpu = margin;
    let sw_h = 18.0;
    let y_sw = y_cpu + cpu_h + 12.0;
    let y_nic = y_sw + sw_h + 10.0;
    let y_gpu = y_nic + nic_area + 14.0;
    let group_bottom = y_gpu + gpu_h + group_pad;
    let elsewhere_h = if elsewhere.is_empty() { 0.0 } else { 30.0 };
    let height = group_bottom + below + elsewhere_h + margin;
    let width = fixed + slot_w * total_slots;

    let (response, painter) = ui.allocate_painter(vec2(width, height), Sense::hover());
    let origin = response.rect.min;
    let at = |x: f32, y: f32| origin + vec2(x, y);
    let small = FontId::proportional(11.5);
    let mono = FontId::monospace(11.5);

    let mut gpu_rects: Vec<(usize, Rect)> = Vec::new();
    let mut cpu_rects: Vec<Rect> = Vec::new();
    let mut x = margin;
    for (gi, ((node, gpus), nics)) in groups.iter().zip(&group_nics).enumerate() {
        let gw = slot_w * slots[gi] + 2.0 * group_pad;
        let group_rect =
            Rect::from_min_size(at(x, y_cpu - 4.0), vec2(gw, group_bottom - y_cpu + 4.0));
        painter.rect(
            group_rect,
            CornerRadius::same(10),
            palette::group_fill(&visuals),
            Stroke::new(1.0, palette::box_stroke(&visuals).gamma_multiply(0.6)),
            StrokeKind::Inside,
        );
        // CPU / host bridge block.
        let cpu_rect = Rect::from_min_size(
            at(x + group_pad, y_cpu + 4.0),
            vec2(gw - 2.0 * group_pad, cpu_h - 8.0),
        );
        cpu_rects.push(cpu_rect);
        painter.rect(
            cpu_rect,
            CornerRadius::same(6),
            palette::cpu_fill(&visuals),
            Stroke::new(1.0, palette::box_stroke(&visuals)),
            StrokeKind::Inside,
        );
        let cpu_title = match node {
            Some(n) => format!("CPU {n}  ·  NUMA node {n}"),
            None => "CPU / PCIe host".to_string(),
        };
        let cpus = gpus
            .first()
            .and_then(|g| topology.gpu(*g))
            .and_then(|g| g.cpu_affinity.clone());
        painter.text(
            cpu_rect.center_top() + vec2(0.0, 5.0),
            Align2::CENTER_TOP,
            cpu_title,
            FontId::proportional(13.0),
            text_color,
        );
        if let Some(cpus) = cpus {
            painter.text(
                cpu_rect.center_bottom() - vec2(0.0, 4.0),
                Align2::CENTER_BOTTOM,
                format!("CPUs {cpus}"),
                mono.clone(),
                weak,
            );
        }

        // GPUs with their PCIe path up to the CPU, through a switch where GPUs (or a GPU and
        // its NICs) share one, and the NICs that hang off it.
        let clusters = switch_clusters(topology, gpus);
        let mut si = 0usize;
        for cluster in &clusters {
            let first_x = x + group_pad + slot_w * si as f32;
            let nics_here: usize = cluster.iter().map(|&g| per_gpu(g).len()).sum();
            let switched = cluster.len() > 1 || nics_here > 0;
            let mut line_xs = Vec::new();
            for &gpu_index in cluster {
                let slot_x = x + group_pad + slot_w * si as f32;
                si += 1;
                let gpu_rect =
                    Rect::from_min_size(at(slot_x + 6.0, y_gpu), vec2(slot_w - 12.0, gpu_h));
                let line_x = gpu_rect.left() + 22.0;
                line_xs.push(line_x);
                let top = if switched {
                    origin.y + y_sw + sw_h
                } else {
                    cpu_rect.bottom()
                };
                painter.line_segment(
                    [pos2(line_x, top), pos2(line_x, gpu_rect.top())],
                    Stroke::new(2.0, palette::PCIE_LINE),
                );
                for (k, &ni) in per_gpu(gpu_index).iter().enumerate() {
                    let nic_rect = Rect::from_min_size(
                        pos2(line_x + 16.0, origin.y + y_nic + k as f32 * (nic_h + 5.0)),
                        vec2((gpu_rect.right() - line_x - 16.0).max(60.0), nic_h),
                    );
                    let kind = match homes[ni] {
                        NicHome::Gpu(_, k) => k,
                        _ => LinkKind::Pix,
                    };
                    painter.line_segment(
                        [
                            pos2(line_x, nic_rect.center().y),
                            pos2(nic_rect.left(), nic_rect.center().y),
                        ],
                        Stroke::new(1.5, palette::PCIE_LINE),
                    );
                    draw_nic(ui, &painter, topology, ni, nic_rect, kind, &visuals);
                }
                if let Some(gpu) = topology.gpu(gpu_index) {
                    draw_gpu(ui, &painter, topology, gpu, gpu_rect, &visuals);
                }
                gpu_rects.push((gpu_index, gpu_rect));
            }
            if switched {
                let last_x = x + group_pad + slot_w * si as f32;
                let bar =
                    Rect::from_min_max(at(first_x + 6.0, y_sw), at(last_x - 6.0, y_sw + sw_h));
                let multi = cluster_kind(topology, cluster) == LinkKind::Pxb;
                let fill = palette::link_fill(if multi { LinkKind::Pxb } else { LinkKind::Pix });
                painter.line_segment(
                    [pos2(bar.center().x, cpu_rect.bottom()), bar.center_top()],
                    Stroke::new(2.5, palette::PCIE_LINE),
                );
                painter.rect_filled(bar, CornerRadius::same(4), fill);
                let label = if multi {
                    "PCIe switches"
                } else {
                    "PCIe switch"
                };
                painter.text(
                    bar.center(),
                    Align2::CENTER_CENTER,
                    label,
                    FontId::proportional(11.0),
                    palette::text_on(fill),
                );
                ui.interact(
                    bar,
                    ui.scope_id().with(("switch", cluster[0])),
                    Sense::hover(),
                )
                .on_hover_text(format!(
                    "{}: {}\nGPUs behind it: {}",
                    if multi { "PXB" } else { "PIX" },
                    if multi {
                        LinkKind::Pxb.legend()
                    } else {
                        LinkKind::Pix.legend()
                    },
                    cluster
                        .iter()
                        .map(|g| format!("GPU{g}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        // NICs on the CPU's own root ports.
        for (k, &ni) in nics.iter().enumerate() {
            let slot_x = x + group_pad + slot_w * (gpus.len() as f32 + half_slot * k as f32);
            let nic_rect = Rect::from_min_size(
                at(slot_x + 6.0, y_nic),
                vec2(slot_w * half_slot - 8.0, nic_h),
            );
            painter.line_segment(
                [
                    pos2(nic_rect.center().x, cpu_rect.bottom()),
                    nic_rect.center_top(),
                ],
                Stroke::new(1.5, palette::PCIE_LINE),
            );
            let kind = match homes[ni] {
                NicHome::Group(_, k) => k,
                _ => LinkKind::Node,
            };
            draw_nic(ui, &painter, topology, ni, nic_rect, kind, &visuals);
        }
        x += gw + group_gap;
    }

    // Socket interconnect between neighbouring groups.
    for pair in cpu_rects.windows(2) {
        let (l, r) = (pair[0], pair[1]);
        let y = l.center().y;
        let a = pos2(l.right(), y);
        let b = pos2(r.left(), y);
        painter.line_segment([a, b], Stroke::new(4.0, palette::SOCKET_LINK));
        let mid = pos2((a.x + b.x) / 2.0, y);
        painter.text(
            mid - vec2(0.0, 5.0),
            Align2::CENTER_BOTTOM,
            "UPI / xGMI",
            small.clone(),
            text_color,
        );
        painter.text(
            mid + vec2(0.0, 5.0),
            Align2::CENTER_TOP,
            "SYS",
            mono.clone(),
            weak,
        );
    }

    // NVLink.
    if let Some(n) = fabric {
        let left = gpu_rects
            .iter()
            .map(|(_, r)| r.left())
            .fold(f32::INFINITY, f32::min);
        let right = gpu_rects
            .iter()
            .map(|(_, r)| r.right())
            .fold(f32::NEG_INFINITY, f32::max);
        let bar = Rect::from_min_max(
            pos2(left, origin.y + group_bottom + 30.0),
            pos2(right, origin.y + group_bottom + 64.0),
        );
        for (_, r) in &gpu_rects {
            painter.line_segment(
                [r.center_bottom(), pos2(r.center().x, bar.top())],
                Stroke::new(3.0, palette::NVLINK),
            );
        }
        painter.rect(
            bar,
            CornerRadius::same(6),
            palette::NVLINK.gamma_multiply(0.9),
            Stroke::NONE,
            StrokeKind::Inside,
        );
        let rate = topology
            .links
            .first()
            .and_then(|l| l.line_rate.as_ref())
            .map_or("line rate unknown".to_string(), |r| {
                format!("{:.0} GB/s/dir", r.gbps)
            });
        painter.text(
            bar.center(),
            Align2::CENTER_CENTER,
            format!("NVSwitch fabric  ·  NV{n}  ·  {rate}"),
            FontId::proportional(14.0),
            Color32::WHITE,
        );
        let basis = topology
            .links
            .first()
            .and_then(|l| l.line_rate.as_ref())
            .map_or(String::new(), |r| {
                format!(
                    "\nPer GPU pair: {:.1} GB/s per direction ({})",
                    r.gbps, r.basis
                )
            });
        ui.interact(bar, ui.scope_id().with("nvswitch"), Sense::hover())
            .on_hover_text(format!(
                "Every GPU pair is connected by NV{n} through the NVSwitch fabric.{basis}"
            ));
    } else {
        let center_of = |i: usize| gpu_rects.iter().find(|(g, _)| *g == i).map(|(_, r)| *r);
        for link in &topology.links {
            let Some(n) = link.kind.and_then(|k| k.nvlinks()) else {
                continue;
            };
            let (Some(ra), Some(rb)) = (center_of(link.a), center_of(link.b)) else {
                continue;
            };
            let p0 = ra.center_bottom() + vec2(8.0, 0.0);
            let p2 = rb.center_bottom() - vec2(8.0, 0.0);
            let depth = 26.0 + 0.18 * (p2.x - p0.x).abs();
            let c = pos2((p0.x + p2.x) / 2.0, p0.y + depth * 2.0 - 12.0);
            let color = palette::link_fill(LinkKind::Nv(n));
            painter.add(Shape::QuadraticBezier(
                egui::epaint::QuadraticBezierShape::from_points_stroke(
                    [p0, c, p2],
                    false,
                    Color32::TRANSPARENT,
                    Stroke::new(1.5 + (n as f32 / 4.0).min(4.0), color),
                ),
            ));
            let mid = pos2(
                0.25 * p0.x + 0.5 * c.x + 0.25 * p2.x,
                0.25 * p0.y + 0.5 * c.y + 0.25 * p2.y,
            );
            let label = match &link.line_rate {
                Some(r) => format!("NV{n} · {:.0} GB/s", r.gbps),
                None => format!("NV{n}"),
            };
            let galley = painter.layout_no_wrap(label, small.clone(), palette::text_on(color));
            let pill = Rect::from_center_size(mid, galley.size() + vec2(10.0, 4.0));
            painter.rect_filled(pill, CornerRadius::same(7), color);
            painter.galley(pill.min + vec2(5.0, 2.0), galley, Color32::WHITE);
        }
    }

    if !elsewhere.is_empty() {
        let names: Vec<String> = elsewhere.iter().map(|&i| nic_label(topology, i)).collect();
        painter.text(
            at(margin, height - margin - 4.0),
            Align2::LEFT_BOTTOM,
            format!(
                "NICs with no PCIe switch or host bridge shared with a GPU: {}",
                names.join(", ")
            ),
            small,
            weak,
        );
    }
}

fn short_gpu_name(name: &str) -> &str {
    name.strip_prefix("NVIDIA ").unwrap_or(name)
}

fn draw_gpu(
    ui: &Ui,
    painter: &egui::Painter,
    topology: &Topology,
    gpu: &Gpu,
    rect: Rect,
    visuals: &egui::Visuals,
) {
    let accent = if gpu.nvlinks_active.unwrap_or(0) > 0 {
        palette::NVLINK
    } else {
        palette::PCIE_LINE
    };
    painter.rect(
        rect,
        CornerRadius::same(6),
        palette::box_fill(visuals),
        Stroke::new(1.5, accent),
        StrokeKind::Inside,
    );
    let text = visuals.text_color();
    let weak = visuals.weak_text_color();
    painter.text(
        rect.left_top() + vec2(8.0, 6.0),
        Align2::LEFT_TOP,
        format!("GPU {}", gpu.index),
        FontId::proportional(14.0),
        text,
    );
    let name = gpu.name.as_deref().map_or("—", short_gpu_name);
    let name_galley = painter.layout(
        name.to_string(),
        FontId::proportional(11.5),
        text,
        rect.width() - 14.0,
    );
    let name_rows = name_galley.rows.len();
    if name_rows <= 1 {
        painter.galley(rect.left_top() + vec2(8.0, 25.0), name_galley, text);
    } else {
        // Too long for one line: truncate rather than overflow the box.
        let job = egui::text::LayoutJob {
            wrap: egui::text::TextWrapping::truncate_at_width(rect.width() - 14.0),
            ..egui::text::LayoutJob::simple_singleline(
                name.to_string(),
                FontId::proportional(11.5),
                text,
            )
        };
        painter.galley(
            rect.left_top() + vec2(8.0, 25.0),
            painter.layout_job(job),
            text,
        );
    }
    let mem = memory_text(gpu);
    painter.text(
        rect.left_bottom() + vec2(8.0, -6.0),
        Align2::LEFT_BOTTOM,
        format!("{mem} · {}", gpu.pcie.describe()),
        FontId::proportional(11.0),
        weak,
    );
    let id = ui.scope_id().with(("gpu-box", gpu.index));
    ui.interact(rect, id, Sense::hover())
        .on_hover_ui(|ui| gpu_details(ui, topology, gpu));
}

fn nic_label(topology: &Topology, i: usize) -> String {
    topology.nics.get(i).map_or_else(
        || format!("NIC{i}"),
        |n| n.label.clone().unwrap_or_else(|| format!("NIC{}", n.index)),
    )
}

#[allow(clippy::too_many_arguments)]
fn draw_nic(
    ui: &Ui,
    painter: &egui::Painter,
    topology: &Topology,
    i: usize,
    rect: Rect,
    kind: LinkKind,
    visuals: &egui::Visuals,
) {
    let Some(nic) = topology.nics.get(i) else {
        return;
    };
    painter.rect(
        rect,
        CornerRadius::same(4),
        palette::NIC.gamma_multiply(if visuals.dark_mode { 0.55 } else { 0.35 }),
        Stroke::new(1.0, palette::NIC),
        StrokeKind::Inside,
    );
    let speed = nic
        .line_rate_gbps
        .map_or(String::new(), |g| format!(" {:.0}G", g * 8.0));
    // The speed goes when name and speed do not both fit; the hover text has both.
    let font = FontId::monospace(11.0);
    let color = visuals.strong_text_color();
    let mut galley = painter.layout_no_wrap(format!("{}{speed}", nic.name), font.clone(), color);
    if galley.size().x > rect.width() - 10.0 {
        galley = painter.layout_no_wrap(nic.name.clone(), font, color);
    }
    painter.galley(
        pos2(rect.left() + 6.0, rect.center().y - galley.size().y / 2.0),
        galley,
        color,
    );
    let rate = nic
        .line_rate_gbps
        .map_or("line rate unknown".to_string(), |g| {
            format!("{g:.1} GB/s per direction ({:.0} Gb/s)", g * 8.0)
        });
    ui.interact(rect, ui.scope_id().with(("nic-box", i)), Sense::hover())
        .on_hover_text(format!(
            "{} ({})\n{rate}\nNearest GPU path: {kind} — {}",
            nic.name,
            nic_label(topology, i),
            kind.legend()
        ));
}

// ---------------------------------------------------------------------------------------------
// GPU cards

fn dash(v: Option<&str>) -> String {
    v.map_or("—".to_string(), str::to_string)
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn memory_text(gpu: &Gpu) -> String {
    match gpu.memory_mib {
        Some(mib) => {
            let gib = mib as f64 / 1024.0;
            if (gib - gib.round()).abs() < 0.05 {
                format!("{gib:.0} GiB")
            } else {
                format!("{gib:.1} GiB")
            }
        }
        None => "—".to_string(),
    }
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
    let d = gpu.pcie.describe();
    match gpu.pcie.line_rate_gbps() {
        Some(r) => format!("{d} · {r:.1} GB/s"),
        None => d,
    }
}

fn gpu_rows(gpu: &Gpu) -> Vec<(&'static str, String)> {
    vec![
        ("Memory", memory_text(gpu)),
        ("PCIe", pcie_text(gpu)),
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
    let gpus = topology.gpu_indices();
    let nics: Vec<usize> = (0..topology.nics.len()).collect();
    let labels: Vec<String> = gpus
        .iter()
        .map(|&g| gpu_label(g))
        .chain(nics.iter().map(|&i| nic_label(topology, i)))
        .collect();
    let ng = gpus.len();
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
    let extra = [("CPU affinity", aff_w, affinity), ("NUMA", 50.0, numa)];
    let nic_name = |i: usize| {
        topology
            .nics
            .get(i)
            .map_or("?".to_string(), |n| n.name.clone())
    };
    matrix(
        ui,
        "topo",
        &labels,
        &labels,
        vec2(48.0, 24.0),
        &extra,
        |r, c| {
            let diag = Cell::single("X", None, format!("{} itself", labels[r]), String::new());
            match (r < ng, c < ng) {
                _ if r == c => Some(diag),
                (true, true) => {
                    let (a, b) = (gpus[r], gpus[c]);
                    let (kind, hover) = pair_hover(topology, a, b);
                    let text = kind.map_or("?".to_string(), |k| k.to_string());
                    Some(Cell::single(
                        text.clone(),
                        kind.map(palette::link_fill),
                        format!("GPU{a} GPU{b} {text}"),
                        hover,
                    ))
                }
                (true, false) | (false, true) => {
                    let (g, n) = if r < ng {
                        (gpus[r], nics[c - ng])
                    } else {
                        (gpus[c], nics[r - ng])
                    };
                    let nic_index = topology.nics.get(n).map_or(n, |x| x.index);
                    let kind = topology.nic_link(nic_index, g);
                    let text = kind.map_or("?".to_string(), |k| k.to_string());
                    let hover = match kind {
                        Some(k) => format!(
                            "GPU{g} – {} ({}): {k}\n{k} = {}",
                            nic_label(topology, n),
                            nic_name(n),
                            k.legend()
                        ),
                        None => format!("GPU{g} – {}: unknown", nic_label(topology, n)),
                    };
                    Some(Cell::single(
                        text.clone(),
                        kind.map(palette::link_fill),
                        format!("GPU{g} {} {text}", nic_label(topology, n)),
                        hover,
                    ))
                }
                (false, false) => None,
            }
        },
    );
    if !topology.nics.is_empty() {
        let legend: Vec<String> = topology
            .nics
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}: {}", nic_label(topology, i), n.name))
            .collect();
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

/// GPU × GPU per-direction line rates in GB/s; "—" where unknown, the basis on hover.
pub fn line_rate_matrix(ui: &mut Ui, topology: &Topology) {
    let gpus = topology.gpu_indices();
    let labels: Vec<String> = gpus.iter().map(|&g| gpu_label(g)).collect();
    matrix(ui, "rate", &labels, &labels, RATE_CELL, &[], |r, c| {
        if r == c {
            return Some(Cell::single(
                "X",
                None,
                format!("{} itself", labels[r]),
                String::new(),
            ));
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
            return Some(Cell::single(
                "X",
                None,
                format!("{} itself", labels[r]),
                String::new(),
            ));
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
