//! Matrices from every text → one [`Topology`]: the same GPUs in every matrix, each pair's link
//! kind, PCIe path and P2P capabilities, NICs, the `--query-gpu` facts and notes.

use std::collections::{BTreeMap, BTreeSet};

use super::matrices::Parsed;
use super::query_csv::CsvGpu;
use super::settle::{Block, Content, Flavor};
use super::{TopologyError, parse_error};
use crate::model::{
    Gpu, GpuLink, LinkKind, Nic, NicLink, P2pPair, Topology, TopologyNote, TopologySource,
};

pub(super) fn index_list(set: &BTreeSet<usize>) -> String {
    set.iter()
        .map(|i| format!("GPU{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn build(parsed: Vec<Parsed>, paths: Vec<String>) -> Result<Topology, TopologyError> {
    let mut topology = Topology::new(TopologySource::Imported { paths });

    // Every matrix must describe the same GPUs.
    let mut reference: Option<(&Block, &BTreeSet<usize>)> = None;
    for block in parsed.iter().flat_map(|p| &p.blocks) {
        match reference {
            None => reference = Some((block, &block.gpus)),
            Some((first, gpus)) if *gpus != block.gpus => {
                return Err(parse_error(
                    &block.origin,
                    block.line,
                    format!(
                        "this matrix has {}, but the matrix at {}:{} has {}: every capture must \
                         come from the same machine",
                        index_list(&block.gpus),
                        first.origin,
                        first.line,
                        index_list(gpus)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let mut gpu_set: BTreeSet<usize> = reference.map(|(_, g)| g.clone()).unwrap_or_default();
    let csv: Vec<(&Parsed, &CsvGpu)> = parsed
        .iter()
        .flat_map(|p| p.csv.iter().map(move |c| (p, c)))
        .collect();
    if reference.is_none() {
        gpu_set = csv.iter().map(|(_, c)| c.index).collect();
    } else if let Some((p, c)) = csv.iter().find(|(_, c)| !gpu_set.contains(&c.index)) {
        return Err(parse_error(
            &p.origin,
            c.line,
            format!(
                "`--query-gpu` row for GPU{}, which no matrix has (they have {}): every capture \
                 must come from the same machine",
                c.index,
                index_list(&gpu_set)
            ),
        ));
    }

    let any_nvlink = parsed.iter().flat_map(|p| &p.blocks).any(|b| {
        matches!(&b.content, Content::Topo { pairs, .. } if pairs.iter().any(|(_, _, k)| k.nvlinks().is_some()))
    });
    let mut gpus: BTreeMap<usize, Gpu> = gpu_set
        .iter()
        .map(|&index| {
            let gpu = Gpu {
                index,
                ..Default::default()
            };
            (index, gpu)
        })
        .collect();
    // (a, b) with a < b → (kind from -m, kind from -mp).
    // (kind from -m, kind from -mp) of each pair a < b, by position in the sorted GPUs (every
    // matrix has the same GPUs, so its grid positions are these): dense, like the grids.
    let gpu_list: Vec<usize> = gpu_set.iter().copied().collect();
    let n = gpu_list.len();
    let mut kinds: Vec<(Option<LinkKind>, Option<LinkKind>)> = vec![(None, None); n * n];
    let mut asymmetric = Vec::new();
    let mut nics: Vec<Nic> = Vec::new();
    let mut nic_links: BTreeMap<(usize, usize), LinkKind> = BTreeMap::new();
    let mut p2p: BTreeMap<(usize, usize), P2pPair> = BTreeMap::new();
    let mut notes: Vec<TopologyNote> = Vec::new();

    for text in &parsed {
        notes.extend(text.notes.iter().cloned());
        for block in &text.blocks {
            match &block.content {
                Content::Topo {
                    flavor,
                    pairs,
                    nics: labels,
                    nic_links: links,
                    extras,
                } => {
                    // An unlabeled matrix without NVLink cells, imported beside one with them,
                    // can only be `topo -mp`.
                    let pci_only = match flavor {
                        Flavor::Mp => true,
                        Flavor::M => false,
                        Flavor::Unlabeled => {
                            any_nvlink && !pairs.iter().any(|(_, _, k)| k.nvlinks().is_some())
                        }
                    };
                    // Checked above: every matrix covers the same GPUs.
                    debug_assert_eq!(pairs.gpus, gpu_list);
                    for (i, j, kind) in pairs.iter() {
                        let (a, b) = (pairs.gpus[i], pairs.gpus[j]);
                        if a > b
                            && let Some(k) = pairs.get(j, i)
                        {
                            if k != kind {
                                asymmetric.push(format!("GPU{a}–GPU{b}"));
                            }
                            continue;
                        }
                        let Some(entry) = kinds.get_mut(i.min(j) * n + i.max(j)) else {
                            continue;
                        };
                        let slot = if pci_only { &mut entry.1 } else { &mut entry.0 };
                        slot.get_or_insert(kind);
                    }
                    for label in labels {
                        let name = text.nic_legend.get(label).cloned();
                        if name.is_none() && label.starts_with("NIC") {
                            notes.push(TopologyNote::new(format!(
                                "{}: no \"NIC Legend:\" entry for {label}; its device name is \
                                 unknown",
                                text.origin
                            )));
                        }
                        let name = name.unwrap_or_else(|| label.clone());
                        if !nics.iter().any(|n| n.name == name) {
                            let index = nics.len();
                            nics.push(Nic {
                                index,
                                label: (name != *label).then(|| label.clone()),
                                name,
                                line_rate_gbps: None,
                            });
                        }
                    }
                    for (label, gpu, kind) in links {
                        let name = text.nic_legend.get(label).unwrap_or(label);
                        if let Some(nic) = nics.iter().find(|n| n.name == *name) {
                            nic_links.entry((nic.index, *gpu)).or_insert(*kind);
                        }
                    }
                    for (index, extra) in extras {
                        if let Some(gpu) = gpus.get_mut(index) {
                            if gpu.cpu_affinity.is_none() {
                                gpu.cpu_affinity.clone_from(&extra.cpu_affinity);
                            }
                            gpu.numa_node = gpu.numa_node.or(extra.numa_node);
                        }
                    }
                }
                Content::P2p { cap, pairs } => {
                    for (i, j, status) in pairs.iter() {
                        let (a, b) = (pairs.gpus[i], pairs.gpus[j]);
                        let pair = p2p.entry((a, b)).or_insert_with(|| P2pPair {
                            a,
                            b,
                            ..Default::default()
                        });
                        if pair.caps.get(*cap).is_none() {
                            pair.caps.set(*cap, Some(status));
                        }
                    }
                }
            }
        }
    }
    if !asymmetric.is_empty() {
        notes.push(TopologyNote::new(format!(
            "the matrix is not symmetric for {}; the upper row's cell was used",
            asymmetric.join(", ")
        )));
    }

    for (_, c) in &csv {
        if let Some(gpu) = gpus.get_mut(&c.index) {
            gpu.name = gpu.name.take().or_else(|| c.name.clone());
            gpu.uuid = gpu.uuid.take().or_else(|| c.uuid.clone());
            gpu.pci_bus_id = gpu.pci_bus_id.take().or_else(|| c.pci_bus_id.clone());
            gpu.memory_mib = gpu.memory_mib.or(c.memory_mib);
            gpu.pcie.gen_current = gpu.pcie.gen_current.or(c.gen_current);
            gpu.pcie.gen_max = gpu.pcie.gen_max.or(c.gen_max);
            gpu.pcie.width_current = gpu.pcie.width_current.or(c.width_current);
            gpu.pcie.width_max = gpu.pcie.width_max.or(c.width_max);
        }
    }

    topology.gpus = gpus.into_values().collect();
    topology.links = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let (m, mp) = kinds[i * n + j];
            GpuLink {
                kind: m.or(mp),
                // A `-m` cell that is not NVLink is the PCIe path itself.
                pcie_path: mp.or(m.filter(|k| k.nvlinks().is_none())),
                ..GpuLink::unknown(gpu_list[i], gpu_list[j])
            }
        })
        .collect();
    topology.nics = nics;
    topology.nic_links = nic_links
        .into_iter()
        .map(|((nic, gpu), kind)| NicLink { nic, gpu, kind })
        .collect();
    topology.p2p = p2p.into_values().collect();
    topology.normalize();

    if csv.is_empty() {
        notes.push(TopologyNote::line_rates(
            "line rates unknown: `nvidia-smi topo` output names how GPUs connect, not how fast \
             (import `nvidia-smi --query-gpu=index,name,pcie.link.gen.max,pcie.link.width.max \
             --format=csv` output as well for PCIe rates)"
                .to_string(),
        ));
    } else {
        topology.derive_line_rates();
        notes.push(TopologyNote::line_rates(
            "PCIe line rates come from the `--query-gpu` CSV; NVLink line rates are unknown: \
             `nvidia-smi topo` output carries no NVLink speeds"
                .to_string(),
        ));
    }
    topology.notes = notes;
    Ok(topology)
}
