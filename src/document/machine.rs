//! The machine drawing as a pure layout: CPU sockets (one per NUMA group) with their GPUs and
//! NICs, PCIe switches, the socket interconnect and NVLink (an NVSwitch fabric as one bar,
//! direct bonds as arcs) — boxes, lines and labels with positions and classes, computed from a
//! [`Topology`]. Painters decide colours and fonts: [`svg`] here for the documents, the Topology
//! view's painter (egui) on screen.

use std::fmt::Write as _;

use super::chart::fit_text;
use super::fonts::{self, Face};
use super::html::escape;
pub use super::shapes::{
    Anchor, Bounds, BoxKind, Font, Hover, Item, Label, LineKind, MachineLayout, Point, Side, Tone,
};
use crate::model::{LinkKind, Topology};

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
    topology.common_nvlink_bond(&topology.gpu_indices())
}

/// True when the GPUs hang off an NVSwitch fabric rather than direct NVLinks.
///
/// Every pair NV#-connected with the same count could be a direct mesh (4-GPU HGX boards wire
/// NV6 to each of three peers) or a switch (DGX/HGX 8-GPU: NV18 to every peer). Through a
/// switch each pair's bond is all of a GPU's links, so the pair count equals the GPU's active
/// links; without per-GPU counts, more than four GPUs all-to-all means a switch. A switched
/// board with links down (`model::running::as_running`: `NV12` to a GPU with 12 of 18 up, a GPU
/// with none keeping `NV18` at rate 0) is still one: every pair NV-bonded, no GPU with more links
/// up than the largest bond and some with exactly that many — a direct mesh has each GPU's links
/// spread over its peers, more than any one bond. The largest bond is the fabric's.
fn nvswitch_fabric(topology: &Topology) -> Option<u32> {
    if topology.gpus.len() < 3 {
        return None;
    }
    let actives: Vec<Option<u32>> = topology.gpus.iter().map(|g| g.nvlinks_active).collect();
    if !actives.iter().all(Option::is_some) {
        let n = uniform_nvlinks(topology)?;
        return (topology.gpus.len() > 4).then_some(n);
    }
    let gpus = topology.gpu_indices();
    let mut n = 0;
    for (i, &a) in gpus.iter().enumerate() {
        for &b in &gpus[i + 1..] {
            n = n.max(topology.link(a, b)?.kind?.nvlinks()?);
        }
    }
    let fits = actives.iter().flatten().all(|&a| a <= n);
    (n > 0 && fits && actives.contains(&Some(n))).then_some(n)
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

/// A GPU's memory: `80 GiB`, `47.5 GiB`, or "—".
pub fn memory_text(gpu: &crate::model::Gpu) -> String {
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

/// Collects the items of a drawing.
struct Items(Vec<Item>);

impl Items {
    fn boxed(&mut self, at: Bounds, radius: f32, kind: BoxKind, hover: Option<Hover>) {
        self.0.push(Item::Box {
            at,
            radius,
            kind,
            hover,
        });
    }

    fn line(&mut self, from: Point, to: Point, width: f32, kind: LineKind) {
        self.0.push(Item::Line {
            from,
            to,
            width,
            kind,
        });
    }

    fn text(
        &mut self,
        at: Point,
        anchor: Anchor,
        text: String,
        font: Font,
        tone: Tone,
        max_width: Option<f32>,
    ) {
        self.0.push(Item::Text(Label {
            at,
            anchor,
            text,
            short: None,
            font,
            tone,
            max_width,
        }));
    }
}

/// The machine drawing's margin round everything.
const MARGIN: f32 = 10.0;
/// The gap between two NUMA groups' frames.
const GROUP_GAP: f32 = 70.0;
/// The padding inside a NUMA group's frame.
const GROUP_PAD: f32 = 12.0;
/// A CPU block's height, with its frame's padding.
const CPU_H: f32 = 46.0;
/// A NIC box's height.
const NIC_H: f32 = 22.0;
/// A GPU box's height.
const GPU_H: f32 = 66.0;
/// A PCIe switch bar's height.
const SWITCH_H: f32 = 18.0;
/// The top of the PCIe switch bars, under the CPU blocks.
const Y_SWITCH: f32 = MARGIN + CPU_H + 12.0;
/// The top of the NIC stacks, under the switch bars.
const Y_NIC: f32 = Y_SWITCH + SWITCH_H + 10.0;
/// The share of a GPU's slot a NIC on a CPU's own root port takes.
const HALF_SLOT: f32 = 0.75;

/// Where [`layout`] puts things, worked out once from the topology and the room: where each NIC
/// hangs, each group's width in slots, a slot's width and the rows' heights.
struct Plan<'a> {
    topology: &'a Topology,
    homes: Vec<NicHome>,
    /// Per group, the NICs on its CPU's own root ports.
    group_nics: Vec<Vec<usize>>,
    /// Per group, its width in slots: one per GPU, [`HALF_SLOT`] per NIC of its CPU.
    slots: Vec<f32>,
    slot_w: f32,
    /// The top of the GPU row (under the tallest NIC stack).
    y_gpu: f32,
    /// The bottom of the groups' frames.
    group_bottom: f32,
    /// The NICs far from every GPU, named in a line at the bottom.
    elsewhere: Vec<usize>,
    width: f32,
    height: f32,
}

/// The NICs of `homes` drawn next to GPU `gpu`.
fn nics_at_gpu(homes: &[NicHome], gpu: usize) -> Vec<usize> {
    homes
        .iter()
        .enumerate()
        .filter(|(_, h)| matches!(h, NicHome::Gpu(g, _) if *g == gpu))
        .map(|(i, _)| i)
        .collect()
}

/// The room under the groups: a bar for an NVSwitch `fabric`, else arcs as deep as the widest
/// NVLink pair needs, else a little.
fn room_below(topology: &Topology, fabric: bool) -> f32 {
    let nvlinked = |l: &&crate::model::GpuLink| l.kind.is_some_and(|k| k.nvlinks().is_some());
    if fabric {
        78.0
    } else if topology.links.iter().any(|l| nvlinked(&l)) {
        let max_span = topology
            .links
            .iter()
            .filter(nvlinked)
            .map(|l| l.b.abs_diff(l.a))
            .max()
            .unwrap_or(1) as f32;
        40.0 + 14.0 * max_span.min(7.0)
    } else {
        8.0
    }
}

impl<'a> Plan<'a> {
    /// The plan for drawing `groups` of `topology` in `avail_width` units, with room for an
    /// NVSwitch bar when `fabric`.
    fn new(
        topology: &'a Topology,
        groups: &[(Option<u32>, Vec<usize>)],
        fabric: bool,
        avail_width: f32,
    ) -> Self {
        let homes = nic_homes(topology, groups);
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
            .map(|((_, gpus), nics)| gpus.len() as f32 + HALF_SLOT * nics.len() as f32)
            .collect();
        let total_slots: f32 = slots.iter().sum();
        let fixed = 2.0 * MARGIN
            + GROUP_GAP * (groups.len().saturating_sub(1)) as f32
            + 2.0 * GROUP_PAD * groups.len() as f32;
        let avail = avail_width.max(400.0);
        let slot_w = ((avail - fixed) / total_slots).clamp(118.0, 180.0);

        // NICs stacked next to each GPU, or one row of them under a CPU.
        let cpu_nics = usize::from(group_nics.iter().any(|v| !v.is_empty()));
        let max_stack = topology
            .gpus
            .iter()
            .map(|g| nics_at_gpu(&homes, g.index).len())
            .max()
            .unwrap_or(0)
            .max(cpu_nics);
        let nic_area = if max_stack == 0 {
            0.0
        } else {
            max_stack as f32 * (NIC_H + 5.0) + 14.0
        };
        let elsewhere: Vec<usize> = homes
            .iter()
            .enumerate()
            .filter(|(_, h)| **h == NicHome::Elsewhere)
            .map(|(i, _)| i)
            .collect();
        let y_gpu = Y_NIC + nic_area + 14.0;
        let group_bottom = y_gpu + GPU_H + GROUP_PAD;
        let elsewhere_h = if elsewhere.is_empty() { 0.0 } else { 30.0 };
        Plan {
            topology,
            homes,
            group_nics,
            slots,
            slot_w,
            y_gpu,
            group_bottom,
            height: group_bottom + room_below(topology, fabric) + elsewhere_h + MARGIN,
            width: fixed + slot_w * total_slots,
            elsewhere,
        }
    }

    /// Group `gi` (a NUMA node and its GPUs) drawn from `x`: its frame, its CPU block, its GPUs
    /// under their PCIe switches (added to `gpu_rects`) and the NICs on the CPU's own root
    /// ports. Returns the CPU block and the group's width.
    fn group(
        &self,
        out: &mut Items,
        gpu_rects: &mut Vec<(usize, Bounds)>,
        x: f32,
        gi: usize,
        (node, gpus): &(Option<u32>, Vec<usize>),
    ) -> (Bounds, f32) {
        let gw = self.slot_w * self.slots[gi] + 2.0 * GROUP_PAD;
        out.boxed(
            Bounds::new(x, MARGIN - 4.0, gw, self.group_bottom - MARGIN + 4.0),
            10.0,
            BoxKind::Group,
            None,
        );
        let cpu = Bounds::new(
            x + GROUP_PAD,
            MARGIN + 4.0,
            gw - 2.0 * GROUP_PAD,
            CPU_H - 8.0,
        );
        cpu_block(out, self.topology, cpu, *node, gpus);
        let left = x + GROUP_PAD;
        let mut si = 0usize;
        for cluster in &switch_clusters(self.topology, gpus) {
            si = self.cluster(out, gpu_rects, left, si, cluster, cpu);
        }
        for (k, &ni) in self.group_nics[gi].iter().enumerate() {
            let slot_x = left + self.slot_w * (gpus.len() as f32 + HALF_SLOT * k as f32);
            self.cpu_nic(out, slot_x, ni, cpu);
        }
        (cpu, gw)
    }

    /// The GPUs of one PCIe cluster from slot `si` of a group whose slots start at `left` (added
    /// to `gpu_rects`), with the switch bar over them when they share one (several GPUs, or a
    /// GPU and its NICs). Returns the next free slot.
    fn cluster(
        &self,
        out: &mut Items,
        gpu_rects: &mut Vec<(usize, Bounds)>,
        left: f32,
        mut si: usize,
        cluster: &[usize],
        cpu: Bounds,
    ) -> usize {
        let first_x = left + self.slot_w * si as f32;
        let nics_here: usize = cluster
            .iter()
            .map(|&g| nics_at_gpu(&self.homes, g).len())
            .sum();
        let switched = cluster.len() > 1 || nics_here > 0;
        let top = if switched {
            Y_SWITCH + SWITCH_H
        } else {
            cpu.bottom()
        };
        for &gpu_index in cluster {
            let slot_x = left + self.slot_w * si as f32;
            si += 1;
            let gpu_rect = Bounds::new(slot_x + 6.0, self.y_gpu, self.slot_w - 12.0, GPU_H);
            self.gpu_with_nics(out, gpu_index, gpu_rect, top);
            gpu_rects.push((gpu_index, gpu_rect));
        }
        if switched {
            let last_x = left + self.slot_w * si as f32;
            let bar = Bounds::from_corners(
                (first_x + 6.0, Y_SWITCH),
                (last_x - 6.0, Y_SWITCH + SWITCH_H),
            );
            switch_bar(out, self.topology, cluster, bar, cpu);
        }
        si
    }

    /// GPU `gpu_index` in `gpu_rect`, its PCIe line up to `top`, and the NICs that share its
    /// switch stacked beside the line.
    fn gpu_with_nics(&self, out: &mut Items, gpu_index: usize, gpu_rect: Bounds, top: f32) {
        let line_x = gpu_rect.x + 22.0;
        out.line((line_x, top), (line_x, gpu_rect.y), 2.0, LineKind::Pcie);
        for (k, &ni) in nics_at_gpu(&self.homes, gpu_index).iter().enumerate() {
            let nic_rect = Bounds::new(
                line_x + 16.0,
                Y_NIC + k as f32 * (NIC_H + 5.0),
                (gpu_rect.right() - line_x - 16.0).max(60.0),
                NIC_H,
            );
            let kind = match self.homes[ni] {
                NicHome::Gpu(_, k) => k,
                _ => LinkKind::Pix,
            };
            let y = nic_rect.center().1;
            out.line((line_x, y), (nic_rect.x, y), 1.5, LineKind::Pcie);
            nic(out, self.topology, ni, nic_rect, kind);
        }
        if let Some(g) = self.topology.gpu(gpu_index) {
            gpu(out, g, gpu_rect);
        }
    }

    /// NIC `ni` on a CPU's own root port, in the slot at `slot_x`, its line up to `cpu`.
    fn cpu_nic(&self, out: &mut Items, slot_x: f32, ni: usize, cpu: Bounds) {
        let nic_rect = Bounds::new(slot_x + 6.0, Y_NIC, self.slot_w * HALF_SLOT - 8.0, NIC_H);
        out.line(
            (nic_rect.center().0, cpu.bottom()),
            nic_rect.center_top(),
            1.5,
            LineKind::Pcie,
        );
        let kind = match self.homes[ni] {
            NicHome::Group(_, k) => k,
            _ => LinkKind::Node,
        };
        nic(out, self.topology, ni, nic_rect, kind);
    }

    /// The line at the bottom naming the NICs far from every GPU, if any.
    fn elsewhere_note(&self, out: &mut Items) {
        if self.elsewhere.is_empty() {
            return;
        }
        let names: Vec<String> = self
            .elsewhere
            .iter()
            .map(|&i| self.topology.nic_label(i))
            .collect();
        out.text(
            (MARGIN, self.height - MARGIN - 4.0),
            Anchor::LeftBottom,
            format!(
                "NICs with no PCIe switch or host bridge shared with a GPU: {}",
                names.join(", ")
            ),
            Font::sans(11.5),
            Tone::Weak,
            Some(self.width - 2.0 * MARGIN),
        );
    }
}

/// The drawing of `topology` for `avail_width` units of room (boxes widen up to a limit, then
/// the drawing is narrower than the room; with many GPUs it is wider, and the painter scales or
/// scrolls). `None` when the topology has no GPU.
pub fn layout(topology: &Topology, avail_width: f32) -> Option<MachineLayout> {
    if topology.gpus.is_empty() {
        return None;
    }
    if drawn_as_rack(topology) {
        return Some(rack_layout(topology, avail_width));
    }
    let groups = topology.numa_groups();
    let fabric = nvswitch_fabric(topology);
    let plan = Plan::new(topology, &groups, fabric.is_some(), avail_width);
    let mut out = Items(Vec::new());
    let mut gpu_rects: Vec<(usize, Bounds)> = Vec::new();
    let mut cpu_rects: Vec<Bounds> = Vec::new();
    let mut x = MARGIN;
    for (gi, group) in groups.iter().enumerate() {
        let (cpu, gw) = plan.group(&mut out, &mut gpu_rects, x, gi, group);
        cpu_rects.push(cpu);
        x += gw + GROUP_GAP;
    }
    socket_links(&mut out, &cpu_rects);
    match fabric {
        Some(n) => nvswitch(&mut out, topology, &gpu_rects, plan.group_bottom, n),
        None => nvlink_arcs(&mut out, topology, &gpu_rects),
    }
    plan.elsewhere_note(&mut out);
    Some(MachineLayout {
        width: plan.width,
        height: plan.height,
        items: out.0,
    })
}

/// A NUMA node's CPU block at `cpu`: its title and, when known, the CPUs of its first GPU's
/// affinity.
fn cpu_block(out: &mut Items, topology: &Topology, cpu: Bounds, node: Option<u32>, gpus: &[usize]) {
    out.boxed(cpu, 6.0, BoxKind::Cpu, None);
    let cpu_title = match node {
        Some(n) => format!("CPU {n}  ·  NUMA node {n}"),
        None => "CPU / PCIe host".to_string(),
    };
    let (cx, _) = cpu.center();
    out.text(
        (cx, cpu.y + 5.0),
        Anchor::CenterTop,
        cpu_title,
        Font::sans(13.0),
        Tone::Text,
        Some(cpu.w - 8.0),
    );
    let cpus = gpus
        .first()
        .and_then(|g| topology.gpu(*g))
        .and_then(|g| g.cpu_affinity.clone());
    if let Some(cpus) = cpus {
        out.text(
            (cx, cpu.bottom() - 4.0),
            Anchor::CenterBottom,
            format!("CPUs {cpus}"),
            Font::mono(11.5),
            Tone::Weak,
            Some(cpu.w - 8.0),
        );
    }
}

/// The PCIe switch bar at `bar` over the GPUs of `cluster`, its line up to `cpu`.
fn switch_bar(out: &mut Items, topology: &Topology, cluster: &[usize], bar: Bounds, cpu: Bounds) {
    let kind = cluster_kind(topology, cluster);
    let multi = kind == LinkKind::Pxb;
    out.line(
        (bar.center().0, cpu.bottom()),
        bar.center_top(),
        2.5,
        LineKind::Pcie,
    );
    let list: Vec<String> = cluster.iter().map(|g| format!("GPU{g}")).collect();
    out.boxed(
        bar,
        4.0,
        BoxKind::Switch(kind),
        Some(Hover::Text(format!(
            "{kind}: {}\nGPUs behind it: {}",
            kind.legend(),
            list.join(", ")
        ))),
    );
    out.text(
        bar.center(),
        Anchor::CenterCenter,
        if multi {
            "PCIe switches"
        } else {
            "PCIe switch"
        }
        .to_string(),
        Font::sans(11.0),
        Tone::On(BoxKind::Switch(kind)),
        Some(bar.w - 4.0),
    );
}

/// The socket interconnect between neighbouring groups' CPU blocks.
fn socket_links(out: &mut Items, cpu_rects: &[Bounds]) {
    for pair in cpu_rects.windows(2) {
        let (l, r) = (pair[0], pair[1]);
        let y = l.center().1;
        let (a, b) = ((l.right(), y), (r.x, y));
        out.line(a, b, 4.0, LineKind::Socket);
        let mid = ((a.0 + b.0) / 2.0, y);
        out.text(
            (mid.0, mid.1 - 5.0),
            Anchor::CenterBottom,
            "UPI / xGMI".into(),
            Font::sans(11.5),
            Tone::Text,
            None,
        );
        out.text(
            (mid.0, mid.1 + 5.0),
            Anchor::CenterTop,
            "SYS".into(),
            Font::mono(11.5),
            Tone::Weak,
            None,
        );
    }
}

/// The NVSwitch fabric: one bar under every GPU, a drop from each.
fn nvswitch(out: &mut Items, topology: &Topology, gpus: &[(usize, Bounds)], top: f32, n: u32) {
    let left = gpus.iter().map(|(_, r)| r.x).fold(f32::INFINITY, f32::min);
    let right = gpus
        .iter()
        .map(|(_, r)| r.right())
        .fold(f32::NEG_INFINITY, f32::max);
    let bar = Bounds::from_corners((left, top + 30.0), (right, top + 64.0));
    for (_, r) in gpus {
        let (x, y) = r.center_bottom();
        out.line((x, y), (x, bar.y), 3.0, LineKind::Fabric);
    }
    // The fabric's pair rate: the fastest pair's (a pair whose GPU has every NVLink down reads
    // 0, `model::running::as_running`); those GPUs are named on the bar.
    let rate = topology
        .links
        .iter()
        .filter_map(|l| l.line_rate.as_ref())
        .max_by(|a, b| a.gbps.total_cmp(&b.gbps));
    // The GPUs with fewer links up than the fabric's bond (as they run: `as_running`).
    let short: Vec<String> = gpus
        .iter()
        .filter_map(|(g, _)| {
            let up = topology.gpu(*g)?.nvlinks_active.filter(|&a| a < n)?;
            Some(match up {
                0 => format!("no NVLink up on GPU {g}"),
                _ => format!("GPU {g}: {up} of {n} NVLinks up"),
            })
        })
        .collect();
    let down = if short.is_empty() {
        String::new()
    } else {
        format!("  ·  {}", crate::model::quantities::first_of(&short, 2))
    };
    let basis = rate.map_or(String::new(), |r| {
        format!(
            "\nPer GPU pair: {:.1} GB/s per direction ({})",
            r.gbps, r.basis
        )
    });
    out.boxed(
        bar,
        6.0,
        BoxKind::NvSwitch,
        Some(Hover::Text(format!(
            "Every GPU pair is connected by NV{n} through the NVSwitch fabric.{basis}"
        ))),
    );
    let rate = rate.map_or("line rate unknown".to_string(), |r| {
        format!("{:.0} GB/s/dir", r.gbps)
    });
    out.text(
        bar.center(),
        Anchor::CenterCenter,
        format!("NVSwitch fabric  ·  NV{n}  ·  {rate}{down}"),
        Font::sans(14.0),
        Tone::On(BoxKind::NvSwitch),
        Some(bar.w - 8.0),
    );
}

/// Direct NVLink bonds: an arc under each pair with its count and rate on a pill.
fn nvlink_arcs(out: &mut Items, topology: &Topology, gpus: &[(usize, Bounds)]) {
    let rect_of = |i: usize| gpus.iter().find(|(g, _)| *g == i).map(|(_, r)| *r);
    for link in &topology.links {
        let Some(n) = link.kind.and_then(|k| k.nvlinks()) else {
            continue;
        };
        let (Some(ra), Some(rb)) = (rect_of(link.a), rect_of(link.b)) else {
            continue;
        };
        let p0 = (ra.center_bottom().0 + 8.0, ra.bottom());
        let p2 = (rb.center_bottom().0 - 8.0, rb.bottom());
        let depth = 26.0 + 0.18 * (p2.0 - p0.0).abs();
        let c = ((p0.0 + p2.0) / 2.0, p0.1 + depth * 2.0 - 12.0);
        out.0.push(Item::Curve {
            points: [p0, c, p2],
            width: 1.5 + (n as f32 / 4.0).min(4.0),
            kind: LineKind::NvBond(n),
        });
        let mid = (
            0.25 * p0.0 + 0.5 * c.0 + 0.25 * p2.0,
            0.25 * p0.1 + 0.5 * c.1 + 0.25 * p2.1,
        );
        let label = match &link.line_rate {
            _ if link.no_nvlink_up() => format!("NV{n} · no link up"),
            Some(r) => format!("NV{n} · {:.0} GB/s/dir", r.gbps),
            None => format!("NV{n}"),
        };
        let (w, h) = (
            fonts::text_width(&label, 11.5, Face::Sans) as f32 + 10.0,
            11.5 * 1.2 + 4.0,
        );
        out.boxed(
            Bounds::new(mid.0 - w / 2.0, mid.1 - h / 2.0, w, h),
            7.0,
            BoxKind::NvPill(n),
            None,
        );
        out.text(
            mid,
            Anchor::CenterCenter,
            label,
            Font::sans(11.5),
            Tone::On(BoxKind::NvPill(n)),
            None,
        );
    }
}

/// A GPU's box: its index, name, memory and PCIe link.
fn gpu(out: &mut Items, g: &crate::model::Gpu, at: Bounds) {
    out.boxed(
        at,
        6.0,
        BoxKind::Gpu {
            nvlink: g.nvlinks_active.unwrap_or(0) > 0,
        },
        Some(Hover::Gpu(g.index)),
    );
    out.text(
        (at.x + 8.0, at.y + 6.0),
        Anchor::LeftTop,
        format!("GPU {}", g.index),
        Font::sans(14.0),
        Tone::Text,
        None,
    );
    let name = g
        .name
        .as_deref()
        .map_or("—", |n| n.strip_prefix("NVIDIA ").unwrap_or(n));
    out.text(
        (at.x + 8.0, at.y + 25.0),
        Anchor::LeftTop,
        name.to_string(),
        Font::sans(11.5),
        Tone::Text,
        Some(at.w - 14.0),
    );
    out.text(
        (at.x + 8.0, at.bottom() - 6.0),
        Anchor::LeftBottom,
        format!("{} · {}", memory_text(g), g.pcie.describe()),
        Font::sans(11.0),
        Tone::Weak,
        Some(at.w - 12.0),
    );
}

/// A NIC's box: its name, and its speed where both fit.
fn nic(out: &mut Items, topology: &Topology, i: usize, at: Bounds, kind: LinkKind) {
    let Some(n) = topology.nics.get(i) else {
        return;
    };
    let rate = n
        .line_rate_gbps
        .map_or("line rate unknown".to_string(), |g| {
            format!("{g:.1} GB/s per direction ({:.0} Gb/s)", g * 8.0)
        });
    out.boxed(
        at,
        4.0,
        BoxKind::Nic,
        Some(Hover::Text(format!(
            "{} ({})\n{rate}\nNearest GPU path: {kind} — {}",
            n.name,
            topology.nic_label(i),
            kind.legend()
        ))),
    );
    let speed = n
        .line_rate_gbps
        .map_or(String::new(), |g| format!(" {:.0}G", g * 8.0));
    out.0.push(Item::Text(Label {
        at: (at.x + 6.0, at.center().1),
        anchor: Anchor::LeftCenter,
        text: format!("{}{speed}", n.name),
        short: (!speed.is_empty()).then(|| n.name.clone()),
        font: Font::mono(11.0),
        tone: Tone::Strong,
        max_width: Some(at.w - 10.0),
    }));
}

/// Print colours of the drawing (the light theme's).
mod colors {
    use crate::model::LinkKind;

    pub const TEXT: &str = "#1b1f24";
    pub const WEAK: &str = "#6b7280";
    pub const STRONG: &str = "#000000";
    pub const GROUP: &str = "#eaeef2";
    pub const CPU: &str = "#cfdbea";
    pub const BOX: &str = "#f4f6f8";
    pub const BOX_STROKE: &str = "#a0a0a0";
    pub const NVLINK: &str = "#3fa34d";
    pub const PCIE: &str = "#5c9cd6";
    pub const SOCKET: &str = "#9a3f22";
    /// The NIC colour; boxes are filled with it at 35 % over white.
    pub const NIC: &str = "#8e6cc8";
    pub const NIC_FILL: &str = "#d7cbec";
    /// The health check's FAIL colour (a degraded GPU's outline).
    pub const FAIL: &str = "#c83a3a";

    /// An NVLink bond's colour: light green for one link to deep green for 18 (NVLink 4's
    /// full bond), by the square root of the count, as on screen.
    pub fn nvlink(n: u32) -> [u8; 3] {
        let t = (n.clamp(1, 18) as f32 / 18.0).sqrt();
        let (a, b) = ([0xb7, 0xe4, 0xa8], [0x1f, 0x7a, 0x3a]);
        let mix = |i: usize| (a[i] as f32 + (b[i] as f32 - a[i] as f32) * t).round() as u8;
        [mix(0), mix(1), mix(2)]
    }

    /// A PCIe path's colour, nearest (light blue) to farthest (dark rust).
    pub fn link(kind: LinkKind) -> [u8; 3] {
        match kind {
            LinkKind::Nv(n) => nvlink(n),
            LinkKind::Pix => [0xa9, 0xd3, 0xf0],
            LinkKind::Pxb => [0x5c, 0x9c, 0xd6],
            LinkKind::Phb => [0xe8, 0xbb, 0x5e],
            LinkKind::Node => [0xd8, 0x7a, 0x32],
            LinkKind::Sys => [0x9a, 0x3f, 0x22],
        }
    }

    pub fn hex(c: [u8; 3]) -> String {
        format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
    }

    /// Black or white, whichever reads better on `fill`.
    pub fn text_on(fill: [u8; 3]) -> &'static str {
        let lum =
            0.299 * f32::from(fill[0]) + 0.587 * f32::from(fill[1]) + 0.114 * f32::from(fill[2]);
        if lum > 150.0 { "#14181c" } else { "#ffffff" }
    }
}

/// A box's fill and outline in print colours.
fn box_paint(kind: BoxKind) -> (String, Option<(&'static str, f32)>) {
    use colors::*;
    match kind {
        BoxKind::Group => (GROUP.into(), Some(("#c6c6c6", 1.0))),
        BoxKind::Cpu => (CPU.into(), Some((BOX_STROKE, 1.0))),
        BoxKind::Gpu { nvlink } => (BOX.into(), Some((if nvlink { NVLINK } else { PCIE }, 1.5))),
        BoxKind::GpuDegraded => (BOX.into(), Some((FAIL, 2.5))),
        BoxKind::Nic => (NIC_FILL.into(), Some((NIC, 1.0))),
        BoxKind::Switch(k) => (hex(link(k)), None),
        BoxKind::NvSwitch => (NVLINK.into(), None),
        BoxKind::NvPill(n) => (hex(nvlink(n)), None),
    }
}

/// The colour of a label of `tone`.
fn text_paint(tone: Tone) -> &'static str {
    match tone {
        Tone::Text => colors::TEXT,
        Tone::Weak => colors::WEAK,
        Tone::Strong => colors::STRONG,
        Tone::On(BoxKind::NvSwitch) => "#ffffff",
        Tone::On(BoxKind::Switch(k)) => colors::text_on(colors::link(k)),
        Tone::On(BoxKind::NvPill(n)) => colors::text_on(colors::nvlink(n)),
        Tone::On(_) => colors::TEXT,
    }
}

/// A line's colour.
fn line_paint(kind: LineKind) -> String {
    match kind {
        LineKind::Pcie => colors::PCIE.into(),
        LineKind::Socket => colors::SOCKET.into(),
        LineKind::Fabric => colors::NVLINK.into(),
        LineKind::NvBond(n) => colors::hex(colors::nvlink(n)),
    }
}

/// The text a painter draws for a label that must fit `max_width`: the text, else the short
/// form, else the text cut with "…" — measured in `face` at `size`.
pub fn fitted(text: &str, short: Option<&str>, size: f64, face: Face, max: Option<f32>) -> String {
    let Some(max) = max.map(f64::from) else {
        return text.to_string();
    };
    if fonts::text_width(text, size, face) <= max {
        return text.to_string();
    }
    match short {
        Some(s) if fonts::text_width(s, size, face) <= max => s.to_string(),
        Some(s) => fit_text(s, size, face, max),
        None => fit_text(text, size, face, max),
    }
}

/// The drawing as an SVG document in print colours, its text in DejaVu Sans (Mono).
pub fn svg(l: &MachineLayout) -> String {
    let mut s = String::with_capacity(16 << 10);
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" \
         height=\"{h:.0}\" role=\"img\" aria-label=\"machine drawing\" font-family=\"{}\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#ffffff\"/>",
        fonts::SANS_FAMILY,
        w = l.width.ceil(),
        h = l.height.ceil(),
    );
    for item in &l.items {
        match item {
            Item::Box {
                at, radius, kind, ..
            } => {
                let (fill, stroke) = box_paint(*kind);
                let stroke = stroke.map_or(String::new(), |(c, w)| {
                    format!(" stroke=\"{c}\" stroke-width=\"{w}\"")
                });
                // Outlines are drawn inside the box, as on screen.
                let inset = if stroke.is_empty() { 0.0 } else { 0.5 };
                let _ = writeln!(
                    s,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"{radius}\" \
                     fill=\"{fill}\"{stroke}/>",
                    at.x + inset,
                    at.y + inset,
                    (at.w - 2.0 * inset).max(0.0),
                    (at.h - 2.0 * inset).max(0.0),
                );
            }
            Item::Line {
                from,
                to,
                width,
                kind,
            } => {
                let _ = writeln!(
                    s,
                    "<path d=\"M{:.1},{:.1} L{:.1},{:.1}\" stroke=\"{}\" stroke-width=\"{width}\" fill=\"none\"/>",
                    from.0,
                    from.1,
                    to.0,
                    to.1,
                    line_paint(*kind)
                );
            }
            Item::Curve {
                points: [a, c, b],
                width,
                kind,
            } => {
                let _ = writeln!(
                    s,
                    "<path d=\"M{:.1},{:.1} Q{:.1},{:.1} {:.1},{:.1}\" stroke=\"{}\" stroke-width=\"{width}\" fill=\"none\"/>",
                    a.0,
                    a.1,
                    c.0,
                    c.1,
                    b.0,
                    b.1,
                    line_paint(*kind)
                );
            }
            Item::Text(label) => svg_text(&mut s, label),
        }
    }
    s.push_str("</svg>\n");
    s
}

/// A label in SVG: shortened to fit its width, its baseline placed for its anchor.
fn svg_text(s: &mut String, label: &Label) {
    let Font { size, mono } = label.font;
    let face = if mono { Face::Mono } else { Face::Sans };
    let shown = fitted(
        &label.text,
        label.short.as_deref(),
        f64::from(size),
        face,
        label.max_width,
    );
    let (across, down) = label.anchor.sides();
    let text_anchor = match across {
        Side::Start => "start",
        Side::Middle => "middle",
        Side::End => "end",
    };
    let baseline = match down {
        Side::Start => 0.8,
        Side::Middle => 0.35,
        Side::End => -0.2,
    };
    let family = if mono {
        format!(" font-family=\"{}\"", fonts::MONO_FAMILY)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{size}\" text-anchor=\"{text_anchor}\" \
         fill=\"{}\"{family}>{}</text>",
        label.at.0,
        label.at.1 + baseline * size,
        text_paint(label.tone),
        escape(&shown)
    );
}

/// Rows of GPUs a rack-style drawing puts in one group when the topology states no trays.
const RACK_FALLBACK_GROUP: usize = 8;

/// Whether `topology` is drawn as a rack: trays stated by the catalog (`Topology::rack`), or
/// more than 16 GPUs all joined by NVLink (one drawing row of so many GPUs is unreadable).
fn drawn_as_rack(topology: &Topology) -> bool {
    topology.rack.is_some()
        || (topology.gpus.len() > 16
            && topology
                .links
                .iter()
                .all(|l| l.kind.is_some_and(|k| k.nvlinks().is_some())))
}

/// The rack drawing's gap between trays.
const RACK_GAP: f32 = 14.0;
/// The padding inside a tray of the rack drawing.
const RACK_PAD: f32 = 8.0;
/// The height of a tray's heading in the rack drawing.
const RACK_HEAD_H: f32 = 22.0;
/// A GPU box's height in the rack drawing.
const RACK_GPU_H: f32 = 40.0;
/// A compute tray's height: heading, GPU row, padding.
const RACK_TRAY_H: f32 = RACK_HEAD_H + RACK_GPU_H + 2.0 * RACK_PAD;
/// The switch trays' bar's height.
const RACK_BAR_H: f32 = 34.0;

/// A rack-scale NVLink domain: the switch trays as one bar (every GPU reaches every other through
/// them), the compute trays in a grid under it, each with its GPUs. A GPU with fewer NVLinks
/// active than the most any GPU has is marked (`12 of 18 links`). Without stated trays, the
/// GPUs are grouped by [`RACK_FALLBACK_GROUP`] in index order and the groups say so.
fn rack_layout(topology: &Topology, avail_width: f32) -> MachineLayout {
    let width = avail_width.clamp(700.0, 1400.0);
    let per = topology
        .rack
        .map_or(RACK_FALLBACK_GROUP, |r| r.gpus_per_tray as usize)
        .max(1);
    // As many trays a row as leave each GPU box 90 units (its index and link count legible).
    let tray_min = per as f32 * 96.0 + 2.0 * RACK_PAD;
    let cols = (((width - 2.0 * MARGIN + RACK_GAP) / (tray_min + RACK_GAP)) as usize).clamp(1, 6);
    let tray_w = (width - 2.0 * MARGIN - RACK_GAP * (cols - 1) as f32) / cols as f32;
    let trays: Vec<&[crate::model::Gpu]> = topology.gpus.chunks(per).collect();
    let rows = trays.len().div_ceil(cols);
    let mut out = Items(Vec::new());
    let most = topology.gpus.iter().filter_map(|g| g.nvlinks_active).max();
    rack_switch_bar(&mut out, topology, width, most);
    let top = MARGIN + RACK_BAR_H + RACK_GAP;
    for (t, gpus) in trays.iter().enumerate() {
        let (col, row) = (t % cols, t / cols);
        let at = Bounds::new(
            MARGIN + col as f32 * (tray_w + RACK_GAP),
            top + row as f32 * (RACK_TRAY_H + RACK_GAP),
            tray_w,
            RACK_TRAY_H,
        );
        let head = tray_heading(topology.rack, t, gpus);
        rack_tray(&mut out, at, head, gpus, most);
    }
    MachineLayout {
        width,
        height: top + rows as f32 * (RACK_TRAY_H + RACK_GAP) - RACK_GAP + MARGIN,
        items: out.0,
    }
}

/// The switch trays' bar across the top of a rack drawing `width` wide, saying how the GPUs
/// are joined (`most`: the most NVLinks any GPU has active).
fn rack_switch_bar(out: &mut Items, topology: &Topology, width: f32, most: Option<u32>) {
    let bar = Bounds::new(MARGIN, MARGIN, width - 2.0 * MARGIN, RACK_BAR_H);
    out.boxed(bar, 6.0, BoxKind::NvSwitch, None);
    let what = match topology.rack {
        Some(r) => format!("NVLink switch trays × {}", r.switch_trays),
        None => "NVLink fabric".to_string(),
    };
    let every = match uniform_nvlinks(topology) {
        Some(b) => format!(
            "one NVLink domain: every GPU NV{b} to all {} peers",
            topology.gpus.len() - 1
        ),
        None => match most {
            Some(m) => format!(
                "{} GPUs joined by NVLink, up to {m} links each: GPUs with fewer are marked",
                topology.gpus.len()
            ),
            None => format!("{} GPUs joined by NVLink", topology.gpus.len()),
        },
    };
    out.text(
        bar.center(),
        Anchor::CenterCenter,
        format!("{what} — {every}"),
        Font::sans(13.0),
        Tone::On(BoxKind::NvSwitch),
        Some(bar.w - 12.0),
    );
}

/// The heading of tray `t` holding `gpus`: the compute tray and its CPUs when `rack` states
/// them, else the range of GPU indices.
fn tray_heading(rack: Option<crate::model::Rack>, t: usize, gpus: &[crate::model::Gpu]) -> String {
    let (first, last) = (
        gpus.first().map_or(0, |g| g.index),
        gpus.last().map_or(0, |g| g.index),
    );
    let host = gpus
        .first()
        .and_then(|g| g.host_link.as_ref())
        .map(|h| format!(" · {}", h.kind))
        .unwrap_or_default();
    match rack {
        Some(r) => format!("Compute tray {} · {} CPUs{host}", t + 1, r.cpus_per_tray),
        None => format!("GPUs {first}–{last}"),
    }
}

/// One tray of the rack drawing at `at`: its frame, its heading and its GPUs in a row.
fn rack_tray(
    out: &mut Items,
    at: Bounds,
    head: String,
    gpus: &[crate::model::Gpu],
    most: Option<u32>,
) {
    out.boxed(at, 8.0, BoxKind::Group, None);
    out.text(
        (at.x + RACK_PAD, at.y + 5.0),
        Anchor::LeftTop,
        head,
        Font::sans(11.5),
        Tone::Weak,
        Some(at.w - 2.0 * RACK_PAD),
    );
    let n = gpus.len().max(1) as f32;
    let gw = (at.w - 2.0 * RACK_PAD - (n - 1.0) * 6.0) / n;
    for (k, g) in gpus.iter().enumerate() {
        let gb = Bounds::new(
            at.x + RACK_PAD + k as f32 * (gw + 6.0),
            at.y + RACK_HEAD_H + RACK_PAD,
            gw,
            RACK_GPU_H,
        );
        rack_gpu(out, g, gb, most);
    }
}

/// GPU `g` of a rack drawing at `gb`: marked, with its link count, when it has fewer NVLinks
/// active than `most`.
fn rack_gpu(out: &mut Items, g: &crate::model::Gpu, gb: Bounds, most: Option<u32>) {
    let degraded = matches!((g.nvlinks_active, most), (Some(a), Some(m)) if a < m);
    let kind = if degraded {
        BoxKind::GpuDegraded
    } else {
        BoxKind::Gpu {
            nvlink: g.nvlinks_active.unwrap_or(0) > 0,
        }
    };
    out.boxed(gb, 5.0, kind, Some(Hover::Gpu(g.index)));
    out.text(
        (gb.x + 6.0, gb.y + 4.0),
        Anchor::LeftTop,
        format!("GPU {}", g.index),
        Font::sans(12.5),
        Tone::Text,
        Some(gb.w - 8.0),
    );
    let (links, tone) = match (g.nvlinks_active, most) {
        (Some(a), Some(m)) if a < m => (format!("{a} of {m} links"), Tone::Strong),
        (Some(a), _) if g.memory_mib.is_some() => {
            (format!("NV{a} · {}", memory_text(g)), Tone::Weak)
        }
        (Some(a), _) => (format!("NV{a}"), Tone::Weak),
        (None, _) => (memory_text(g), Tone::Weak),
    };
    out.text(
        (gb.x + 6.0, gb.bottom() - 4.0),
        Anchor::LeftBottom,
        links,
        Font::sans(10.5),
        tone,
        Some(gb.w - 8.0),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(id: &str) -> Topology {
        crate::topology::catalog::load(id).unwrap()
    }

    fn overlaps(a: &Bounds, b: &Bounds) -> bool {
        a.x < b.right() - 0.5
            && b.x < a.right() - 0.5
            && a.y < b.bottom() - 0.5
            && b.y < a.bottom() - 0.5
    }

    /// On every catalog machine: everything lies inside the drawing, GPU boxes and NIC boxes do
    /// not overlap one another, and every GPU and NIC is drawn.
    #[test]
    fn every_catalog_machine_is_laid_out_without_overlaps() {
        for entry in crate::topology::catalog::entries() {
            let t = catalog(&entry.id);
            let l = layout(&t, 1000.0).expect("GPUs");
            let boxes: Vec<(BoxKind, Bounds)> = l
                .items
                .iter()
                .filter_map(|i| match i {
                    Item::Box { at, kind, .. } => Some((*kind, *at)),
                    _ => None,
                })
                .collect();
            for (_, b) in &boxes {
                assert!(b.x >= 0.0 && b.y >= 0.0, "{}: {b:?}", entry.id);
                assert!(
                    b.right() <= l.width + 0.5 && b.bottom() <= l.height + 0.5,
                    "{}: {b:?}",
                    entry.id
                );
            }
            let solid: Vec<&Bounds> = boxes
                .iter()
                .filter(|(k, _)| {
                    matches!(k, BoxKind::Gpu { .. } | BoxKind::GpuDegraded | BoxKind::Nic)
                })
                .map(|(_, b)| b)
                .collect();
            for (i, a) in solid.iter().enumerate() {
                for b in &solid[i + 1..] {
                    assert!(!overlaps(a, b), "{}: {a:?} overlaps {b:?}", entry.id);
                }
            }
            let gpus = boxes
                .iter()
                .filter(|(k, _)| matches!(k, BoxKind::Gpu { .. } | BoxKind::GpuDegraded))
                .count();
            assert_eq!(gpus, t.gpus.len(), "{}", entry.id);
            let svg = svg(&l);
            // A rack is drawn as trays under the switch bar, without link lines.
            if !drawn_as_rack(&t) {
                assert!(svg.contains("<path d=\"M"), "{}", entry.id);
            }
            assert!(svg.contains(">GPU 0</text>"), "{}", entry.id);
        }
    }

    #[test]
    fn an_nvswitch_box_is_one_fabric_bar_and_pairs_get_arcs() {
        let dgx = layout(&catalog("dgx-h100"), 1000.0).unwrap();
        assert!(dgx.items.iter().any(|i| matches!(
            i,
            Item::Box {
                kind: BoxKind::NvSwitch,
                ..
            }
        )));
        assert!(!dgx.items.iter().any(|i| matches!(i, Item::Curve { .. })));
        let two = layout(&catalog("h100-pcie-2x-nvlink"), 1000.0).unwrap();
        assert!(two.items.iter().any(|i| matches!(i, Item::Curve { .. })));
    }

    /// A bond with every link down reads "no link up", never "0 GB/s/dir"; behind a switch the
    /// fabric bar names the GPU with no NVLink up and keeps the healthy pairs' rate.
    #[test]
    fn a_bond_with_no_link_up_says_so() {
        let texts = |t: &Topology| -> Vec<String> {
            layout(t, 1000.0)
                .unwrap()
                .items
                .into_iter()
                .filter_map(|i| match i {
                    Item::Text(l) => Some(l.text),
                    _ => None,
                })
                .collect()
        };
        let mut two = catalog("h100-pcie-2x-nvlink");
        two.link_mut(0, 1).unwrap().line_rate.as_mut().unwrap().gbps = 0.0;
        let labels = texts(&two);
        assert!(
            labels.iter().any(|l| l.ends_with("· no link up")),
            "{labels:?}"
        );
        assert!(!labels.iter().any(|l| l.contains(" 0 GB/s")), "{labels:?}");
        let mut dgx = catalog("dgx-h100");
        dgx.gpus[3].nvlinks_active = Some(0);
        for b in 0..dgx.gpus.len() {
            if let Some(l) = dgx.link_mut(3, b).filter(|_| b != 3) {
                l.line_rate.as_mut().unwrap().gbps = 0.0;
            }
        }
        let bar = texts(&dgx)
            .into_iter()
            .find(|l| l.starts_with("NVSwitch fabric"))
            .unwrap_or_else(|| panic!("{:?}", texts(&dgx)));
        assert!(bar.ends_with("no NVLink up on GPU 3"), "{bar}");
        assert!(bar.contains("NV18  ·  478 GB/s/dir"), "{bar}");
        // Twelve of GPU 5's 18 links up: still the fabric, the GPU named.
        let mut part = catalog("dgx-h100");
        part.gpus[5].nvlinks_active = Some(12);
        for b in (0..part.gpus.len()).filter(|&b| b != 5) {
            part.link_mut(5, b).unwrap().kind = Some(crate::model::LinkKind::Nv(12));
        }
        let bar = texts(&part)
            .into_iter()
            .find(|l| l.starts_with("NVSwitch fabric"))
            .unwrap_or_else(|| panic!("{:?}", texts(&part)));
        assert!(bar.ends_with("GPU 5: 12 of 18 NVLinks up"), "{bar}");
        // A direct mesh is not a fabric: four GPUs, NV6 to each of three peers (18 links each).
        let mut mesh = catalog("dgx-h100");
        mesh.gpus.truncate(4);
        mesh.normalize();
        for g in &mut mesh.gpus {
            g.nvlinks_active = Some(18);
        }
        for (a, b) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
            mesh.link_mut(a, b).unwrap().kind = Some(crate::model::LinkKind::Nv(6));
        }
        assert_eq!(nvswitch_fabric(&mesh), None);
    }

    #[test]
    fn labels_that_do_not_fit_are_shortened() {
        assert_eq!(
            fitted("mlx5_0 400G", Some("mlx5_0"), 11.0, Face::Mono, Some(50.0)),
            "mlx5_0"
        );
        let cut = fitted(
            "NVIDIA H100 80GB HBM3 with a very long name",
            None,
            11.5,
            Face::Sans,
            Some(80.0),
        );
        assert!(
            cut.ends_with('…') && fonts::text_width(&cut, 11.5, Face::Sans) <= 80.0,
            "{cut}"
        );
    }

    #[test]
    fn a_rack_is_drawn_in_trays_and_a_gpu_short_of_links_is_marked() {
        use crate::model::{Gpu, GpuLink, Rack, TopologySource};
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..24)
            .map(|index| Gpu {
                index,
                nvlinks_active: Some(if index == 5 { 12 } else { 18 }),
                ..Default::default()
            })
            .collect();
        for a in 0..24 {
            for b in a + 1..24 {
                let mut l = GpuLink::unknown(a, b);
                l.kind = Some(LinkKind::Nv(if a == 5 || b == 5 { 12 } else { 18 }));
                t.links.push(l);
            }
        }
        t.normalize();
        let boxes = |l: &MachineLayout, kind: BoxKind| {
            l.items
                .iter()
                .filter(|i| matches!(i, Item::Box { kind: k, .. } if *k == kind))
                .count()
        };
        // No trays stated: groups of eight, GPU 5 outlined as degraded, the others not.
        let l = layout(&t, 1200.0).unwrap();
        assert_eq!(boxes(&l, BoxKind::Group), 3);
        assert_eq!(boxes(&l, BoxKind::GpuDegraded), 1);
        assert_eq!(boxes(&l, BoxKind::Gpu { nvlink: true }), 23);
        let texts: Vec<&str> = l
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Text(l) => Some(l.text.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.contains(&"12 of 18 links"), "{texts:?}");
        // Trays of four stated: six trays, each naming its CPUs.
        t.rack = Some(Rack {
            gpus_per_tray: 4,
            cpus_per_tray: 2,
            switch_trays: 9,
        });
        let l = layout(&t, 1200.0).unwrap();
        assert_eq!(boxes(&l, BoxKind::Group), 6);
        assert!(
            l.items.iter().any(
                |i| matches!(i, Item::Text(l) if l.text.starts_with("Compute tray 6 · 2 CPUs"))
            )
        );
        assert!(l.width <= 1200.0);
    }
}
