//! Matrices from every text → one [`Topology`]: the same GPUs in every matrix, each pair's link
//! kind, PCIe path and P2P capabilities, NICs, the `--query-gpu` facts and notes.

use std::collections::{BTreeMap, BTreeSet};

use super::matrices::Parsed;
use super::query_csv::CsvGpu;
use super::settle::{Block, Content, Flavor, Grid};
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

/// The matrices and CSV lines of every text as one topology: the same GPUs in each, each
/// pair's link from the first matrix that gives it, NICs, the `--query-gpu` facts and notes.
pub(super) fn build(parsed: Vec<Parsed>, paths: Vec<String>) -> Result<Topology, TopologyError> {
    let csv: Vec<(&Parsed, &CsvGpu)> = parsed
        .iter()
        .flat_map(|p| p.csv.iter().map(move |c| (p, c)))
        .collect();
    let gpu_set = common_gpus(&parsed, &csv)?;
    let any_nvlink = parsed.iter().flat_map(|p| &p.blocks).any(|b| {
        matches!(&b.content, Content::Topo { pairs, .. } if pairs.iter().any(|(_, _, k)| k.nvlinks().is_some()))
    });
    let gpu_list: Vec<usize> = gpu_set.iter().copied().collect();
    let n = gpu_list.len();
    let mut merge = Merge {
        gpus: gpu_set
            .iter()
            .map(|&index| {
                let gpu = Gpu {
                    index,
                    ..Default::default()
                };
                (index, gpu)
            })
            .collect(),
        gpu_list,
        any_nvlink,
        kinds: vec![(None, None); n * n],
        nics: Vec::new(),
        nic_links: BTreeMap::new(),
        p2p: BTreeMap::new(),
        notes: Vec::new(),
    };
    for text in &parsed {
        merge.notes.extend(text.notes.iter().cloned());
        for block in &text.blocks {
            merge.add_block(text, block);
        }
    }
    for (_, c) in &csv {
        merge.add_csv(c);
    }
    Ok(merge.into_topology(TopologySource::Imported { paths }, !csv.is_empty()))
}

/// The GPUs every matrix (and every `--query-gpu` line of `csv`) describes, or the CSV's GPUs
/// when there is no matrix; a capture of other GPUs is refused as another machine's.
fn common_gpus(
    parsed: &[Parsed],
    csv: &[(&Parsed, &CsvGpu)],
) -> Result<BTreeSet<usize>, TopologyError> {
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
    let Some((_, gpu_set)) = reference else {
        return Ok(csv.iter().map(|(_, c)| c.index).collect());
    };
    if let Some((p, c)) = csv.iter().find(|(_, c)| !gpu_set.contains(&c.index)) {
        return Err(parse_error(
            &p.origin,
            c.line,
            format!(
                "`--query-gpu` row for GPU{}, which no matrix has (they have {}): every capture \
                 must come from the same machine",
                c.index,
                index_list(gpu_set)
            ),
        ));
    }
    Ok(gpu_set.clone())
}

/// [`build`] under way: what the blocks read so far say of the GPUs, their pairs and NICs.
struct Merge {
    gpus: BTreeMap<usize, Gpu>,
    /// The GPUs, sorted: every matrix has these, so its grid positions are theirs.
    gpu_list: Vec<usize>,
    /// Whether any matrix has an NVLink cell.
    any_nvlink: bool,
    /// (kind from -m, kind from -mp) of each pair a < b, by position in `gpu_list`: dense,
    /// like the grids.
    kinds: Vec<(Option<LinkKind>, Option<LinkKind>)>,
    /// The pairs whose two cells differ.
    nics: Vec<Nic>,
    nic_links: BTreeMap<(usize, usize), LinkKind>,
    p2p: BTreeMap<(usize, usize), P2pPair>,
    notes: Vec<TopologyNote>,
}

impl Merge {
    /// One block of `text`: a topo matrix's pairs, NICs and affinities, or a P2P matrix's
    /// capability; what an earlier block gave is kept.
    fn add_block(&mut self, text: &Parsed, block: &Block) {
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
                        self.any_nvlink && !pairs.iter().any(|(_, _, k)| k.nvlinks().is_some())
                    }
                };
                self.add_pairs(pairs, pci_only);
                self.add_nics(text, labels, links);
                for (index, extra) in extras {
                    if let Some(gpu) = self.gpus.get_mut(index) {
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
                    let pair = self.p2p.entry((a, b)).or_insert_with(|| P2pPair {
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

    /// A topo matrix's pairs, as `-mp` kinds when `pci_only`: the upper cell of each pair.
    fn add_pairs(&mut self, pairs: &Grid<LinkKind>, pci_only: bool) {
        let n = self.gpu_list.len();
        // Checked above: every matrix covers the same GPUs.
        debug_assert_eq!(pairs.gpus, self.gpu_list);
        for (i, j, kind) in pairs.iter() {
            let (a, b) = (pairs.gpus[i], pairs.gpus[j]);
            // The lower cell says the same kind (a matrix that does not is refused as it is
            // read); two NVLink counts (a degraded NVSwitch board: NV18 from one GPU, NV12
            // from the one with links down) meet at the fewer, the links as they run.
            if a > b
                && let Some(upper) = pairs.get(j, i)
            {
                if let (Some(here), Some(there)) = (kind.nvlinks(), upper.nvlinks())
                    && here < there
                {
                    if let Some(entry) = self.kinds.get_mut(i.min(j) * n + i.max(j)) {
                        let slot = if pci_only { &mut entry.1 } else { &mut entry.0 };
                        *slot = Some(kind);
                    }
                    self.notes.push(TopologyNote::new(format!(
                        "GPU{b}'s row has {upper} towards GPU{a} and GPU{a}'s row {kind}: the \
                         pair is taken at {kind}, the links as they run"
                    )));
                }
                continue;
            }
            let Some(entry) = self.kinds.get_mut(i.min(j) * n + i.max(j)) else {
                continue;
            };
            let slot = if pci_only { &mut entry.1 } else { &mut entry.0 };
            slot.get_or_insert(kind);
        }
    }

    /// A topo matrix's NIC columns (`labels`, named by `text`'s NIC legend where it has them)
    /// and their `links` to GPUs.
    fn add_nics(&mut self, text: &Parsed, labels: &[String], links: &[(String, usize, LinkKind)]) {
        for label in labels {
            let name = text.nic_legend.get(label).cloned();
            if name.is_none() && label.starts_with("NIC") {
                self.notes.push(TopologyNote::new(format!(
                    "{}: no \"NIC Legend:\" entry for {label}; its device name is unknown",
                    text.origin
                )));
            }
            let name = name.unwrap_or_else(|| label.clone());
            if !self.nics.iter().any(|n| n.name == name) {
                let index = self.nics.len();
                self.nics.push(Nic {
                    index,
                    label: (name != *label).then(|| label.clone()),
                    name,
                    line_rate_gbps: None,
                });
            }
        }
        for (label, gpu, kind) in links {
            let name = text.nic_legend.get(label).unwrap_or(label);
            if let Some(nic) = self.nics.iter().find(|n| n.name == *name) {
                self.nic_links.entry((nic.index, *gpu)).or_insert(*kind);
            }
        }
    }

    /// A `--query-gpu` line's facts, where no earlier one gave them.
    fn add_csv(&mut self, c: &CsvGpu) {
        if let Some(gpu) = self.gpus.get_mut(&c.index) {
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

    /// The topology from `source`: a pair's `-m` kind before its `-mp` one, line rates from
    /// the CSV when there was one (`with_csv`), and a note on where the rates come from.
    fn into_topology(mut self, source: TopologySource, with_csv: bool) -> Topology {
        let mut topology = Topology::new(source);
        let n = self.gpu_list.len();
        topology.gpus = self.gpus.into_values().collect();
        topology.links = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .map(|(i, j)| {
                let (m, mp) = self.kinds[i * n + j];
                GpuLink {
                    kind: m.or(mp),
                    // A `-m` cell that is not NVLink is the PCIe path itself.
                    pcie_path: mp.or(m.filter(|k| k.nvlinks().is_none())),
                    ..GpuLink::unknown(self.gpu_list[i], self.gpu_list[j])
                }
            })
            .collect();
        topology.nics = self.nics;
        topology.nic_links = self
            .nic_links
            .into_iter()
            .map(|((nic, gpu), kind)| NicLink { nic, gpu, kind })
            .collect();
        topology.p2p = self.p2p.into_values().collect();
        topology.normalize();
        if !with_csv {
            self.notes.push(TopologyNote::line_rates(
                "line rates unknown: `nvidia-smi topo` output names how GPUs connect, not how fast \
                 (import `nvidia-smi --query-gpu=index,name,pcie.link.gen.max,pcie.link.width.max \
                 --format=csv` output as well for PCIe rates)"
                    .to_string(),
            ));
        } else {
            topology.derive_line_rates();
            self.notes.push(TopologyNote::line_rates(
                "PCIe line rates come from the `--query-gpu` CSV; NVLink line rates are unknown: \
                 `nvidia-smi topo` output carries no NVLink speeds"
                    .to_string(),
            ));
        }
        topology.notes = self.notes;
        topology
    }
}
