//! The topology: the machine drawing, the `nvidia-smi topo -m` matrix with NICs, line rates,
//! P2P capabilities, the GPUs and how the topology was read.

use super::{
    MATRIX_MAX_GPUS, capped, diag, gpu_matrix, gpu_matrix_blocks, health, matrix_left_out,
};
use crate::document::machine::{self, memory_text};
use crate::document::{
    Block, Cell, Class, Column, Figure, Matrix, MatrixRow, Paragraph, Part, Section, Table,
};
use crate::model::{
    BandwidthResult, LinkKind, P2pCap, P2pStatus, Source, Status, TestId, Topology, TopologySource,
};
use crate::report::Report;
use crate::report::summary;

/// The width the machine drawing is laid out for in documents, in SVG units: room for a NIC's
/// name and speed beside each of eight GPUs.
const DRAWING_WIDTH: f32 = 1300.0;

/// The class of a link kind.
pub(super) fn link_class(kind: Option<LinkKind>) -> Class {
    match kind {
        Some(LinkKind::Nv(_)) => Class::Nv,
        Some(LinkKind::Pix) => Class::Pix,
        Some(LinkKind::Pxb) => Class::Pxb,
        Some(LinkKind::Phb) => Class::Phb,
        Some(LinkKind::Node) => Class::Node,
        Some(LinkKind::Sys) => Class::Sys,
        None => Class::None,
    }
}

/// How the topology was read, in words.
fn source_note(t: &Topology) -> String {
    format!(
        "{} · {}",
        t.source.label(),
        match t.source {
            TopologySource::Live { .. } => "read live through NVML",
            TopologySource::Catalog { .. } => "documented by the vendor, not measured",
            TopologySource::Imported { .. } => "parsed from nvidia-smi captures",
            TopologySource::SoakRecording { .. } => "what a soak recorded then, replayed",
            TopologySource::ToolOutput { .. } =>
                "the GPUs nvbandwidth/nccl-tests output names; how they connect is not known",
        }
    )
}

/// The `nvidia-smi topo -m` grid: GPUs and NICs, each cell coloured by its connection.
fn connectivity(t: &Topology) -> Matrix {
    let gpus = t.gpu_indices();
    let ng = gpus.len();
    let labels: Vec<String> = gpus
        .iter()
        .map(|g| format!("GPU{g}"))
        .chain(t.nics.iter().map(|n| n.column_label().to_string()))
        .collect();
    let rows = (0..labels.len())
        .map(|r| MatrixRow {
            head: labels[r].clone(),
            cells: (0..labels.len())
                .map(|c| {
                    if r == c {
                        return diag();
                    }
                    let kind = match (r < ng, c < ng) {
                        (true, true) => t.link(gpus[r], gpus[c]).and_then(|l| l.kind),
                        (true, false) | (false, true) => {
                            let (g, n) = if r < ng { (r, c - ng) } else { (c, r - ng) };
                            let nic = t.nics.get(n).map_or(n, |x| x.index);
                            t.nic_link(nic, gpus[g])
                        }
                        // nvidia-smi's NIC × NIC cells say nothing about the GPUs.
                        (false, false) => return Cell::of(Class::None, ""),
                    };
                    match kind {
                        Some(k) => Cell::of(link_class(Some(k)), k.to_string())
                            .titled(format!("{k}: {}", k.legend())),
                        None => Cell::of(Class::None, "—"),
                    }
                })
                .collect(),
        })
        .collect();
    Matrix {
        id: Some("topology-matrix".into()),
        columns: labels,
        rows,
    }
}

/// The connectivity of a machine above [`MATRIX_MAX_GPUS`]: one row per kind of connection
/// (as `nvidia-smi topo -m` names it) with its GPU pairs, line rates and the P2P capability of
/// its first pair, in place of the matrices.
fn connections_by_kind(t: &Topology) -> Vec<Block> {
    struct Kind {
        name: String,
        class: Class,
        pairs: usize,
        first: (usize, usize),
        rates: Option<(f64, f64)>,
    }
    let mut kinds: Vec<Kind> = Vec::new();
    for l in &t.links {
        let name = l.kind.map_or("unknown".to_string(), |k| k.to_string());
        let rate = l
            .line_rate
            .as_ref()
            .map(|r| r.gbps)
            .filter(|g| g.is_finite());
        let at = match kinds.iter().position(|k| k.name == name) {
            Some(i) => i,
            None => {
                kinds.push(Kind {
                    name,
                    class: link_class(l.kind),
                    pairs: 0,
                    first: (l.a, l.b),
                    rates: None,
                });
                kinds.len() - 1
            }
        };
        let k = &mut kinds[at];
        k.pairs += 1;
        if let Some(g) = rate {
            k.rates = Some(k.rates.map_or((g, g), |(lo, hi)| (lo.min(g), hi.max(g))));
        }
    }
    let rate_text = |r: Option<(f64, f64)>| match r {
        None => "—".to_string(),
        Some((lo, hi)) if (hi - lo).abs() < 0.05 => format!("{lo:.1}"),
        Some((lo, hi)) => format!("{lo:.1}–{hi:.1}"),
    };
    let table = Table {
        id: Some("connections-by-kind".into()),
        columns: vec![
            Column::text("connection"),
            Column::figures("GPU pairs"),
            Column::figures("line rate, GB/s per direction"),
            Column::text("first pair"),
            Column::text("its P2P (read · write · nvlink · atomics)"),
        ],
        rows: kinds
            .iter()
            .map(|k| {
                let (a, b) = k.first;
                let caps = t.p2p(a, b).map(|p| p.caps).unwrap_or_default();
                let p2p: Vec<String> = P2pCap::ALL
                    .iter()
                    .map(|c| format!("{} {}", c.letter(), caps.get(*c).map_or("—", |s| s.code())))
                    .collect();
                vec![
                    Cell::of(k.class, k.name.clone()),
                    Cell::plain(k.pairs.to_string()),
                    Cell::plain(rate_text(k.rates)),
                    Cell::plain(format!("GPU{a}–GPU{b}")),
                    Cell::plain(p2p.join(" · ")),
                ]
            })
            .collect(),
    };
    let left_out = if t.gpus.len() > MATRIX_MAX_GPUS {
        matrix_left_out(
            t.gpus.len(),
            "Connectivity, line rates and P2P capability",
            "links.csv",
        )
    } else {
        Paragraph::note(format!(
            "Connectivity: the matrix of {} GPUs and {} NICs ({} columns) is wider than a page; \
             links.csv holds every GPU pair, the app's Topology view every cell.",
            t.gpus.len(),
            t.nics.len(),
            t.gpus.len() + t.nics.len()
        ))
        .into()
    };
    vec![Block::Table(table), left_out]
}

/// The connectivity as a matrix, or by kind above [`MATRIX_MAX_GPUS`].
fn connectivity_blocks(t: &Topology) -> Vec<Block> {
    // The matrix has a column per GPU and per NIC: a rack of 72 GPUs with a NIC each would be
    // 144 columns, wider than any page.
    if t.gpus.len() + t.nics.len() > MATRIX_MAX_GPUS {
        connections_by_kind(t)
    } else {
        vec![Block::Matrix(connectivity(t))]
    }
}

/// What the connectivity colours and the NIC labels mean.
fn connectivity_legend(t: &Topology) -> Vec<Block> {
    let mut out = vec![
        Paragraph::note(
            "NV# = NVLink bond of # links · PIX = at most one PCIe bridge · PXB = several PCIe \
             bridges · PHB = through the PCIe host bridge (the CPU) · NODE = across host bridges \
             within a NUMA node · SYS = across NUMA nodes (the socket interconnect)",
        )
        .into(),
    ];
    let legend = t.nic_legend();
    if !legend.is_empty() {
        out.push(Paragraph::note(format!("NICs: {}", legend.join(" · "))).into());
    }
    out
}

/// GPU × GPU line rates per direction, GB/s; "—" where unknown, the basis as the title
/// (summarised by figure on a rack: [`gpu_matrix_blocks`]).
fn line_rates(t: &Topology) -> Vec<Block> {
    let gpus = t.gpu_indices();
    gpu_matrix_blocks(
        Some("line-rate-matrix"),
        &gpus,
        "GB/s",
        "links.csv",
        |a, b| {
            let link = t.link(a, b);
            match link.and_then(|l| l.line_rate.as_ref()) {
                Some(rate) => Cell::of(
                    link_class(link.and_then(|l| l.kind)),
                    if rate.gbps >= 100.0 {
                        format!("{:.0}", rate.gbps)
                    } else {
                        format!("{:.1}", rate.gbps)
                    },
                )
                .titled(rate.basis.clone()),
                None => Cell::of(Class::None, "—"),
            }
        },
    )
}

fn p2p_class(s: Option<P2pStatus>) -> Class {
    match s {
        Some(P2pStatus::Ok) => Class::P2pOk,
        Some(P2pStatus::Ns) => Class::P2pNs,
        Some(P2pStatus::Cns | P2pStatus::Gns | P2pStatus::Tns) => Class::P2pRefused,
        Some(P2pStatus::U) => Class::P2pU,
        None => Class::None,
    }
}

/// Ordered GPU pairs × the four P2P capabilities (read, write, nvlink, atomics).
/// The P2P capability matrix with its legend; above [`super::DENSE_MATRIX_GPUS`] GPUs, where
/// four codes a cell do not fit, the capability by kind of link instead.
fn p2p_blocks(t: &Topology) -> Vec<Block> {
    if t.gpus.len() <= super::DENSE_MATRIX_GPUS {
        vec![
            Block::Matrix(p2p_status(t)),
            Paragraph::note(P2P_LEGEND).into(),
        ]
    } else {
        connections_by_kind(t)
    }
}

fn p2p_status(t: &Topology) -> Matrix {
    let gpus = t.gpu_indices();
    gpu_matrix(Some("p2p-matrix"), &gpus, |a, b| {
        let caps = t.p2p(a, b).map(|p| p.caps).unwrap_or_default();
        let codes: Vec<String> = P2pCap::ALL
            .iter()
            .map(|c| format!("{} {}", c.name(), caps.get(*c).map_or("—", |s| s.code())))
            .collect();
        Cell {
            parts: P2pCap::ALL
                .iter()
                .map(|c| Part {
                    text: c.letter().to_string(),
                    class: p2p_class(caps.get(*c)),
                })
                .collect(),
            ..Cell::plain("").titled(codes.join(", "))
        }
    })
}

/// One row per GPU: name, memory, PCIe link, NVLinks, NUMA node, CPU affinity, PCI bus.
fn gpu_table(t: &Topology) -> Table {
    let dash = |v: Option<&str>| v.unwrap_or("—").to_string();
    Table {
        id: Some("gpu-table".into()),
        columns: vec![
            Column::figures("GPU"),
            Column::text("name"),
            Column::figures("memory"),
            Column::text("host link"),
            Column::figures("NVLinks active"),
            Column::figures("NUMA"),
            Column::text("CPU affinity"),
            Column::text("PCI bus"),
        ],
        rows: t
            .gpus
            .iter()
            .map(|g| {
                vec![
                    Cell::plain(g.index.to_string()),
                    Cell::plain(dash(g.name.as_deref())),
                    Cell::plain(memory_text(g)),
                    Cell::plain(match &g.host_link {
                        Some(h) => format!("{} {:.0} GB/s", h.kind, h.gbps),
                        None => format!("PCIe {}", g.pcie.describe()),
                    }),
                    Cell::plain(g.nvlinks_active.map_or("—".to_string(), |n| n.to_string())),
                    Cell::plain(g.numa_node.map_or("—".to_string(), |n| n.to_string())),
                    Cell::plain(dash(g.cpu_affinity.as_deref())),
                    Cell::plain(dash(g.pci_bus_id.as_deref())),
                ]
            })
            .collect(),
    }
}

/// How the topology was read: its notes, folded when there are many (one per pair on big
/// boxes).
fn notes(t: &Topology) -> Vec<Block> {
    let notes: Vec<Paragraph> = t
        .notes
        .iter()
        .map(|n| Paragraph::note(n.to_string()))
        .collect();
    if notes.len() > 3 {
        vec![Block::Details {
            summary: format!("{} notes on how the topology was read", notes.len()),
            blocks: vec![Block::List {
                ordered: false,
                items: notes,
            }],
        }]
    } else {
        notes.into_iter().map(Block::Paragraph).collect()
    }
}

const P2P_LEGEND: &str = "r w n a = read, write, nvlink, atomics · OK (green) supported · NS \
                          (orange) not supported · CNS, GNS, TNS (red) refused by the chipset, \
                          GPU or topology · U unknown · grey: not known";

/// The report's topology section.
pub(super) fn section(r: &Report) -> Option<Section> {
    let t = &r.topology;
    let mut s = Section::new("topology", "Topology (nvidia-smi topo -m)");
    s.push(Paragraph::note(source_note(t)).into());
    if t.gpus.is_empty() {
        s.push(Paragraph::plain("No GPU in the topology.").into());
        return Some(s);
    }
    s.blocks.extend(connectivity_blocks(t));
    s.blocks.extend(connectivity_legend(t));
    if t.gpus.len() > 1 && t.gpus.len() <= MATRIX_MAX_GPUS {
        s.push(Block::Subheading {
            text: "Line rate, GB/s per direction".into(),
        });
        s.blocks.extend(line_rates(t));
        s.push(Block::Subheading {
            text: "P2P capability (read · write · nvlink · atomics)".into(),
        });
        s.blocks.extend(p2p_blocks(t));
    }
    s.push(Block::Subheading {
        text: "GPUs".into(),
    });
    s.blocks.extend(capped(gpu_table(t), "gpus.csv"));
    s.blocks.extend(notes(t));
    Some(s)
}

/// The P2P copy bandwidth as a heat matrix: write CE (else read CE) at the size with every
/// pair.
fn p2p_heat(r: &Report) -> Vec<Block> {
    let Some(bw) = &r.bandwidth else {
        return vec![Paragraph::note("Bandwidth not run.").into()];
    };
    let Some(test) = [TestId::P2pWriteCe, TestId::P2pReadCe]
        .into_iter()
        .find(|t| bw.results.iter().any(|x| x.test == *t))
    else {
        return vec![Paragraph::note("No P2P copy-engine results.").into()];
    };
    let Some(bytes) = crate::model::fullest_size(&bw.results, test) else {
        return Vec::new();
    };
    let rows: Vec<_> = bw
        .results
        .iter()
        .filter(|x| x.test == test && x.bytes == bytes)
        .collect();
    let max = rows
        .iter()
        .filter_map(|x| x.median_gbps.filter(|v| v.is_finite()))
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let heat = [
        Class::Heat1,
        Class::Heat2,
        Class::Heat3,
        Class::Heat4,
        Class::Heat5,
    ];
    let gpus = r.topology.gpu_indices();
    if gpus.len() > MATRIX_MAX_GPUS {
        return vec![matrix_left_out(
            gpus.len(),
            &format!("{test} bandwidth"),
            "bandwidth.csv",
        )];
    }
    let modeled = rows.iter().any(|x| x.source == Source::Modeled);
    let by_pair: std::collections::HashMap<(Option<usize>, Option<usize>), &&BandwidthResult> =
        rows.iter()
            .map(|x| ((x.src.gpu(), x.dst.gpu()), x))
            .collect();
    let matrix = gpu_matrix_blocks(
        Some("p2p-bandwidth-matrix"),
        &gpus,
        "GB/s",
        "bandwidth.csv",
        |s, d| match by_pair.get(&(Some(s), Some(d))) {
            Some(x) if x.status == Status::Ok => match x.median_gbps.filter(|v| v.is_finite()) {
                Some(v) => {
                    let level = ((v / max) * 5.0).ceil().clamp(1.0, 5.0);
                    Cell::of(heat[level as usize - 1], format!("{v:.0}"))
                }
                None => Cell::of(Class::None, "—"),
            },
            Some(x) => Cell::of(Class::None, x.status.to_string()),
            None => Cell::of(Class::None, "—"),
        },
    );
    let mut note = format!(
        "{test}, {}, GB/s",
        crate::model::quantities::format_bytes(bytes)
    );
    if modeled {
        note.push_str(" (modeled)");
    }
    let mut out = vec![Paragraph::note(note).into()];
    out.extend(matrix);
    out
}

/// The one-page report's topology: the connectivity matrix and the P2P bandwidth, side by side
/// where both are small, else one under the other.
pub(super) fn summary(r: &Report) -> Section {
    let t = &r.topology;
    let mut s = Section::new("topology", "Topology and P2P bandwidth");
    if t.gpus.is_empty() {
        s.push(Paragraph::plain("No GPU in the topology.").into());
        return s;
    }
    let mut left = vec![Block::Subheading {
        text: "Connectivity (nvidia-smi topo -m)".into(),
    }];
    left.extend(connectivity_blocks(t));
    if let Some(i) = summary::interconnect(r) {
        left.push(Paragraph::note(format!("GPUs connected by {i}")).into());
    }
    let mut right = vec![Block::Subheading {
        text: "P2P bandwidth, GB/s (rows: source, columns: destination)".into(),
    }];
    right.extend(p2p_heat(r));
    if t.gpus.len() + t.nics.len() <= 8 {
        s.push(Block::Columns {
            columns: vec![left, right],
        });
    } else {
        s.blocks.extend(left);
        s.blocks.extend(right);
    }
    s
}

/// One line of facts: GPUs, NICs, NUMA nodes, driver, when it was read.
fn facts(t: &Topology) -> String {
    t.facts().join(" · ")
}

/// The machine drawing as a figure; `None` without GPUs or above [`MATRIX_MAX_GPUS`] (a
/// drawing of a thousand GPUs and their half million links is no figure).
pub(super) fn drawing(t: &Topology) -> Option<Figure> {
    if t.gpus.len() > MATRIX_MAX_GPUS {
        return None;
    }
    let l = machine::layout(t, DRAWING_WIDTH)?;
    Some(Figure {
        id: "machine-drawing".into(),
        caption: None,
        svg: machine::svg(&l),
        width: f64::from(l.width.ceil()),
        height: f64::from(l.height.ceil()),
    })
}

/// The Topology view as a document page: the machine, its health panel when checked, the
/// drawing, the GPUs, the matrices and the notes.
pub(super) fn page(r: &Report) -> Vec<Section> {
    let t = &r.topology;
    let mut head = Section::untitled("head");
    head.push(Block::Title {
        id: "machine".into(),
        text: summary::machine_title(r),
        badge: Some(match t.source {
            TopologySource::Live { .. } => "measured".to_string(),
            _ => t.source.kind().to_string(),
        }),
    });
    head.push(Paragraph::of(Class::Sub, facts(t)).into());
    let mut out = vec![head];
    out.extend(health::panel(r));
    let mut m = Section::new("machine-section", "Machine");
    match drawing(t) {
        Some(f) => m.push(Block::Figure(f)),
        None if t.gpus.len() > MATRIX_MAX_GPUS => m.push(
            Paragraph::note(format!(
                "The drawing of {} GPUs is left out of documents above {MATRIX_MAX_GPUS} GPUs; \
                 the connections by kind are below.",
                t.gpus.len()
            ))
            .into(),
        ),
        None => m.push(Paragraph::plain("No GPUs in this topology.").into()),
    }
    out.push(m);
    if t.gpus.is_empty() {
        return out;
    }
    let mut g = Section::new("gpus", "GPUs");
    g.blocks.extend(capped(gpu_table(t), "gpus.csv"));
    out.push(g);
    let mut c = Section::new("connectivity", "Connectivity (nvidia-smi topo -m)");
    c.blocks.extend(connectivity_blocks(t));
    c.blocks.extend(connectivity_legend(t));
    out.push(c);
    if t.gpus.len() > 1 && t.gpus.len() <= MATRIX_MAX_GPUS {
        let mut l = Section::new("line-rate", "Line rate, GB/s per direction");
        l.blocks.extend(line_rates(t));
        out.push(l);
        let mut p = Section::new("p2p", "P2P (read · write · nvlink · atomics)");
        p.blocks.extend(p2p_blocks(t));
        out.push(p);
    }
    if !t.notes.is_empty() {
        let mut n = Section::new("notes", format!("Notes ({})", t.notes.len()));
        n.push(Block::List {
            ordered: false,
            items: t
                .notes
                .iter()
                .map(|x| Paragraph::note(x.to_string()))
                .collect(),
        });
        out.push(n);
    }
    out
}
