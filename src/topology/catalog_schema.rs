//! The catalog file's schema (assets/hardware/README.md): the TOML tables as serde reads them,
//! and the checks on `[machine]` and `[gpu]` that need nothing but the table itself.
//! `catalog.rs` builds the topology and inventory from them.

use serde::Deserialize;

use crate::model::PCIE_WIDTHS;
use crate::model::validate::Bounds;

/// Just the `[machine]` table, for listing entries without validating the rest.
#[derive(Deserialize)]
pub(super) struct HeaderOnly {
    pub(super) machine: Machine,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CatalogFile {
    pub(super) machine: Machine,
    pub(super) gpu: GpuTemplate,
    #[serde(default)]
    pub(super) numa: Vec<NumaNode>,
    pub(super) topology: Connectivity,
    #[serde(default)]
    pub(super) p2p: P2pSection,
    #[serde(default)]
    pub(super) nic: Vec<NicEntry>,
    /// One NIC per GPU, described once (machines of many GPUs).
    pub(super) nics_per_gpu: Option<NicsPerGpu>,
    /// A rack-scale NVLink domain's trays.
    pub(super) rack: Option<RackSection>,
    #[serde(default)]
    pub(super) state: Vec<StateEntry>,
    /// Published figures for machines like this one (`super::published` reads them).
    #[serde(default)]
    pub(super) reference: Vec<crate::model::published::Reference>,
}

/// `[rack]`: compute trays of `gpus_per_tray` GPUs and `cpus_per_tray` CPUs, joined by
/// `switch_trays` NVLink switch trays.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RackSection {
    pub(super) gpus_per_tray: u32,
    pub(super) cpus_per_tray: u32,
    pub(super) switch_trays: u32,
}

/// `[nics_per_gpu]`: one NIC paired with each GPU, named `{name_prefix}{gpu}`; its cell is
/// `paired` for its own GPU, `same_node` for the others in the same group of `group` GPUs
/// (a tray or a board), `other` beyond it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NicsPerGpu {
    pub(super) name_prefix: String,
    pub(super) line_rate_gbps: f64,
    pub(super) paired: String,
    pub(super) same_node: String,
    pub(super) other: String,
    pub(super) group: usize,
}

/// The machine as it is where it differs from the design (`[[state]]`): what a check of it reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StateEntry {
    /// The GPUs this entry describes.
    pub(super) gpus: Vec<usize>,
    /// PCIe generation and width the link runs at (under load).
    pub(super) pcie_current_gen: Option<u32>,
    pub(super) pcie_current_width: Option<u32>,
    /// NVLinks up.
    pub(super) active_nvlinks: Option<u32>,
    /// Uncorrectable ECC errors since the driver loaded.
    pub(super) ecc_volatile_uncorrected: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Machine {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) summary: String,
    #[serde(default)]
    #[allow(dead_code)] // documentation for readers of the file; the summary is what is shown
    pub(super) description: Option<String>,
    pub(super) source: String,
    #[serde(default)]
    pub(super) notes: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GpuTemplate {
    pub(super) model: String,
    pub(super) count: usize,
    pub(super) memory_mib: u64,
    pub(super) pcie_gen: u32,
    pub(super) pcie_width: u32,
    pub(super) nvlink_generation: Option<u32>,
    pub(super) nvlinks: Option<u32>,
    pub(super) nvlink_gbps_per_link: Option<f64>,
    pub(super) pci_bus_ids: Option<Vec<String>>,
    /// The GPU's link to its CPU where it is not PCIe: `"NVLink-C2C"` ...
    pub(super) host_link: Option<String>,
    /// ... its line rate per direction, GB/s ...
    pub(super) host_link_gbps: Option<f64>,
    /// ... and how many GPUs share it (default 1).
    pub(super) host_link_shared_by: Option<u32>,
    /// Where the host link's figures are from.
    pub(super) host_link_source: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NumaNode {
    pub(super) node: u32,
    /// nvidia-smi's "CPU Affinity"; omitted where the CPUs are not documented.
    #[serde(default)]
    pub(super) cpus: Option<String>,
    pub(super) gpus: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Connectivity {
    /// Rows of `nvidia-smi topo -m` (GPU columns only) ...
    #[serde(default)]
    pub(super) gpus: Vec<String>,
    /// ... or one code for every pair (a machine of many GPUs behind NVLink switches).
    pub(super) all: Option<String>,
    pub(super) pcie: Option<Vec<String>>,
}

/// One P2P capability: a single code for every pair, or a matrix of rows.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum P2pSpec {
    All(String),
    Matrix(Vec<String>),
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct P2pSection {
    pub(super) read: Option<P2pSpec>,
    pub(super) write: Option<P2pSpec>,
    pub(super) nvlink: Option<P2pSpec>,
    pub(super) atomics: Option<P2pSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NicEntry {
    pub(super) name: String,
    pub(super) label: Option<String>,
    pub(super) line_rate_gbps: Option<f64>,
    pub(super) gpus: String,
}

pub(super) fn check_machine(m: &Machine) -> Result<(), String> {
    for (field, value) in [
        ("id", &m.id),
        ("name", &m.name),
        ("summary", &m.summary),
        ("source", &m.source),
    ] {
        if value.trim().is_empty() {
            return Err(format!("[machine] {field} is empty"));
        }
    }
    if let Some(c) =
        m.id.chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "[machine] id {:?}: use lowercase letters, digits and '-' only, found {c:?}",
            m.id
        ));
    }
    Ok(())
}

/// A GPU's memory: 1 MiB to 16 TiB (the largest parts have a few hundred GiB).
pub(super) const MEMORY_MIB: Bounds = Bounds::closed(1.0, (16u64 << 20) as f64, "MiB");
/// A NIC's line rate per direction: up to 1,000 GB/s (8 Tb/s; today's fastest are 800 Gb/s).
pub(super) const NIC_LINE_RATE_GBPS: Bounds = Bounds::above(0.0, 1000.0, "GB/s");
/// CPUs or NVLink switch trays of a rack (an NVL72 has 9 switch trays).
pub(super) const TRAYS: Bounds = Bounds::closed(1.0, 1024.0, "trays");

pub(super) fn check_gpu_template(g: &GpuTemplate) -> Result<(), String> {
    if g.count == 0 {
        return Err("[gpu] count must be at least 1".to_string());
    }
    crate::model::check_gpu_count(g.count).map_err(|why| format!("[gpu] count: {why}"))?;
    if g.model.trim().is_empty() {
        return Err("[gpu] model is empty".to_string());
    }
    // u64 → f64 is exact below 2^53, and the bound is far below it.
    if g.memory_mib > 1 << 53 {
        return Err(format!(
            "[gpu] memory_mib: {} MiB is out of range: expected {MEMORY_MIB}",
            g.memory_mib
        ));
    }
    MEMORY_MIB
        .check(g.memory_mib as f64)
        .map_err(|e| format!("[gpu] memory_mib: {e}"))?;
    if crate::model::pcie_rate_gbps(g.pcie_gen, g.pcie_width).is_none()
        || !PCIE_WIDTHS.contains(&g.pcie_width)
    {
        return Err(format!(
            "[gpu] pcie_gen {} / pcie_width {}: expected a PCIe generation 1-6 and a width of {}",
            g.pcie_gen,
            g.pcie_width,
            PCIE_WIDTHS.map(|w| w.to_string()).join(", ")
        ));
    }
    if let Some(rate) = g.nvlink_gbps_per_link {
        crate::model::NVLINK_GBPS_PER_LINK
            .check(rate)
            .map_err(|e| format!("[gpu] nvlink_gbps_per_link: {e}"))?;
    }
    if let Some(links) = g.nvlinks
        && links > crate::model::NVLINKS_PER_GPU_MAX
    {
        return Err(format!(
            "[gpu] nvlinks = {links}: at most {} NVLinks per GPU",
            crate::model::NVLINKS_PER_GPU_MAX
        ));
    }
    if let Some(generation) = g.nvlink_generation
        && !(1..=NVLINK_GENERATIONS).contains(&generation)
    {
        return Err(format!(
            "[gpu] nvlink_generation = {generation}: expected 1 to {NVLINK_GENERATIONS}"
        ));
    }
    if let Some(ids) = &g.pci_bus_ids {
        if ids.len() != g.count {
            return Err(format!(
                "[gpu] pci_bus_ids has {} entries, expected {} (one per GPU)",
                ids.len(),
                g.count
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            let Some(key) = crate::model::pci_bus_key(id) else {
                return Err(format!(
                    "[gpu] pci_bus_ids: {} is not a PCI bus id (expected e.g. 00000000:18:00.0)",
                    crate::model::validate::quoted(id)
                ));
            };
            if !seen.insert(key) {
                return Err(format!(
                    "[gpu] pci_bus_ids: {} is listed twice (one per GPU)",
                    crate::model::validate::quoted(id)
                ));
            }
        }
    }
    Ok(())
}

/// NVLink generations so far (NVLink 6 with Rubin).
pub(super) const NVLINK_GENERATIONS: u32 = 6;
