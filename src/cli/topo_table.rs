//! `scalescope topo`'s terminal table: the matrix as `nvidia-smi topo -m` prints it (tab-separated,
//! so the output can be imported again), then the line-rate and P2P matrices.

use std::fmt::Write;

use crate::model::{LinkKind, P2pCap, P2pStatus, Topology};

/// The whole table as text.
pub fn render(topo: &Topology) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Source: {}", describe_source(topo));
    out.push('\n');
    connectivity(&mut out, topo);
    out.push('\n');
    legend(&mut out, topo);
    out.push('\n');
    line_rates(&mut out, topo);
    for cap in P2pCap::ALL {
        out.push('\n');
        p2p(&mut out, topo, cap);
    }
    out.push('\n');
    gpus(&mut out, topo);
    if !topo.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &topo.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    out
}

/// `host (measured live) (driver 580.159.04, CUDA 13.0) at 2026-…`, or the catalog/import
/// label.
pub fn describe_source(topo: &Topology) -> String {
    use crate::model::TopologySource;
    let mut s = topo.source.label();
    if let TopologySource::Live {
        driver_version,
        cuda_driver_version,
        ..
    } = &topo.source
    {
        let mut parts = Vec::new();
        if let Some(d) = driver_version {
            parts.push(format!("driver {d}"));
        }
        if let Some(v) = cuda_driver_version {
            parts.push(format!("CUDA {}.{}", v / 1000, (v % 1000) / 10));
        }
        if !parts.is_empty() {
            let _ = write!(s, " ({})", parts.join(", "));
        }
    }
    if let Some(t) = &topo.captured_at {
        let _ = write!(s, " at {t}");
    }
    s
}

fn gpu_label(i: usize) -> String {
    format!("GPU{i}")
}

fn cell(kind: Option<LinkKind>) -> String {
    kind.map_or_else(|| "?".to_string(), |k| k.to_string())
}

fn connectivity(out: &mut String, topo: &Topology) {
    let ids = topo.gpu_indices();
    let has_cpu = topo.gpus.iter().any(|g| g.cpu_affinity.is_some());
    let has_numa = topo.gpus.iter().any(|g| g.numa_node.is_some());
    let mut header = String::new();
    for &i in &ids {
        let _ = write!(header, "\t{}", gpu_label(i));
    }
    for n in &topo.nics {
        let _ = write!(header, "\t{}", topo.nic_label(n.index));
    }
    if has_cpu {
        header.push_str("\tCPU Affinity");
    }
    if has_numa {
        header.push_str("\tNUMA Affinity");
    }
    let _ = writeln!(out, "{header}");
    for &a in &ids {
        let mut row = gpu_label(a);
        for &b in &ids {
            let c = if a == b {
                " X ".to_string()
            } else {
                cell(topo.link(a, b).and_then(|l| l.kind))
            };
            let _ = write!(row, "\t{c}");
        }
        for n in &topo.nics {
            let _ = write!(row, "\t{}", cell(topo.nic_link(n.index, a)));
        }
        let g = topo.gpu(a);
        if has_cpu {
            let v = g.and_then(|g| g.cpu_affinity.clone());
            let _ = write!(row, "\t{}", v.unwrap_or_else(|| "N/A".into()));
        }
        if has_numa {
            let v = g.and_then(|g| g.numa_node).map(|n| n.to_string());
            let _ = write!(row, "\t{}", v.unwrap_or_else(|| "N/A".into()));
        }
        let _ = writeln!(out, "{row}");
    }
    // NIC rows are left out: their GPU cells repeat the NIC columns above, and NIC↔NIC paths
    // are not part of the model.
}

fn legend(out: &mut String, topo: &Topology) {
    out.push_str("Legend:\n\n  X    = Self\n");
    for k in LinkKind::PCIE_PATHS.iter().rev() {
        let _ = writeln!(out, "  {:<4} = {}", k.code(), k.legend());
    }
    let _ = writeln!(out, "  NV#  = {}", LinkKind::Nv(1).legend());
    let nics = topo.nic_legend();
    if !nics.is_empty() {
        out.push_str("\nNIC Legend:\n\n");
        for line in nics {
            let _ = writeln!(out, "  {line}");
        }
    }
}

fn line_rates(out: &mut String, topo: &Topology) {
    let ids = topo.gpu_indices();
    out.push_str("Line rate, GB/s per direction (— = unknown)\n");
    for &i in &ids {
        let _ = write!(out, "\t{}", gpu_label(i));
    }
    out.push('\n');
    for &a in &ids {
        out.push_str(&gpu_label(a));
        for &b in &ids {
            let c = if a == b {
                " X ".to_string()
            } else {
                topo.link(a, b)
                    .and_then(|l| l.line_rate.as_ref())
                    .map_or("—".to_string(), |r| format!("{:.1}", r.gbps))
            };
            let _ = write!(out, "\t{c}");
        }
        out.push('\n');
    }
    let mut bases: Vec<String> = topo
        .links
        .iter()
        .filter_map(|l| {
            l.line_rate
                .as_ref()
                .map(|r| format!("{:.1} = {}", r.gbps, r.basis))
        })
        .collect();
    bases.sort();
    bases.dedup();
    for b in bases {
        let _ = writeln!(out, "  {b}");
    }
}

fn p2p(out: &mut String, topo: &Topology, cap: P2pCap) {
    let ids = topo.gpu_indices();
    let _ = writeln!(
        out,
        "P2P {} (as nvidia-smi topo -p2p {})",
        cap.name(),
        cap.letter()
    );
    for &i in &ids {
        let _ = write!(out, "\t{}", gpu_label(i));
    }
    out.push('\n');
    for &a in &ids {
        out.push_str(&gpu_label(a));
        for &b in &ids {
            let c = if a == b {
                "X".to_string()
            } else {
                topo.p2p(a, b)
                    .and_then(|p| p.caps.get(cap))
                    .map_or("—".to_string(), |s: P2pStatus| s.code().to_string())
            };
            let _ = write!(out, "\t{c}");
        }
        out.push('\n');
    }
}

fn gpus(out: &mut String, topo: &Topology) {
    out.push_str("GPUs\n");
    let dash = || "—".to_string();
    for g in &topo.gpus {
        let nv = match (g.nvlinks_active, g.nvlink_gbps_per_link) {
            (Some(n), Some(r)) if n > 0 => format!("{n} NVLinks × {r:.3} GB/s"),
            (Some(n), None) if n > 0 => format!("{n} NVLinks"),
            (Some(0), _) => "no NVLink".to_string(),
            _ => dash(),
        };
        let _ = writeln!(
            out,
            "  {}\t{}\t{}\tPCIe {}\tNUMA {}\t{}\t{}",
            gpu_label(g.index),
            g.name.clone().unwrap_or_else(dash),
            g.memory_mib.map_or_else(dash, |m| format!("{m} MiB")),
            g.pcie.describe(),
            g.numa_node.map_or_else(dash, |n| n.to_string()),
            nv,
            g.pci_bus_id.clone().unwrap_or_else(dash),
        );
    }
}
