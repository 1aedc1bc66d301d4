//! The hardware catalog: machines as their vendors document them, from `assets/hardware/`.
//!
//! Each machine is one TOML file (schema in `assets/hardware/README.md`), embedded in the binary
//! so that `--catalog` works from any directory. A catalog [`Topology`] describes a design: its
//! source is [`TopologySource::Catalog`], it has no capture time, and its line rates come from
//! documented figures, never from a measurement.

use std::collections::BTreeMap;

use super::TopologyError;
use super::catalog_cells::{grid, link_matrix};
use super::catalog_schema::{
    CatalogFile, Connectivity, GpuTemplate, HeaderOnly, NIC_LINE_RATE_GBPS, NicEntry, NicsPerGpu,
    NumaNode, P2pSection, P2pSpec, RackSection, StateEntry, TRAYS, check_gpu_template,
    check_machine,
};
use crate::model::{
    Gpu, GpuLink, Inventory, InventoryKind, LinkKind, LoadState, Nic, NicLink, NvLinkState, P2pCap,
    P2pCaps, P2pPair, P2pStatus, PcieLink, PcieState, Topology, TopologyNote, TopologySource,
};

/// The largest catalog file read from a path (`--catalog FILE.toml`).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The catalog files, by file name. Add new machines here: a file in assets/hardware/ left off
/// this list is not in the catalog (tests/catalog.rs holds the folder and the list equal).
pub(super) const FILES: &[(&str, &str)] = &[
    (
        "dgx-h100.toml",
        include_str!("../../assets/hardware/dgx-h100.toml"),
    ),
    (
        "h100-pcie-2x-nvlink.toml",
        include_str!("../../assets/hardware/h100-pcie-2x-nvlink.toml"),
    ),
    (
        "h200-2x-sxm.toml",
        include_str!("../../assets/hardware/h200-2x-sxm.toml"),
    ),
    (
        "hgx-h200.toml",
        include_str!("../../assets/hardware/hgx-h200.toml"),
    ),
    (
        "hgx-a100.toml",
        include_str!("../../assets/hardware/hgx-a100.toml"),
    ),
    (
        "l40s-8x-pcie.toml",
        include_str!("../../assets/hardware/l40s-8x-pcie.toml"),
    ),
    (
        "rtx4090-4x-pcie.toml",
        include_str!("../../assets/hardware/rtx4090-4x-pcie.toml"),
    ),
    (
        "dgx-b200.toml",
        include_str!("../../assets/hardware/dgx-b200.toml"),
    ),
    (
        "hgx-b300.toml",
        include_str!("../../assets/hardware/hgx-b300.toml"),
    ),
    (
        "gb200-nvl72.toml",
        include_str!("../../assets/hardware/gb200-nvl72.toml"),
    ),
    (
        "gb300-nvl72.toml",
        include_str!("../../assets/hardware/gb300-nvl72.toml"),
    ),
    (
        "rtx-pro-6000-8x-server.toml",
        include_str!("../../assets/hardware/rtx-pro-6000-8x-server.toml"),
    ),
    (
        "h200-nvl-8x-pcie.toml",
        include_str!("../../assets/hardware/h200-nvl-8x-pcie.toml"),
    ),
];

/// One catalog machine, as listed by `scalescope --catalog`.
#[derive(Clone, Debug, PartialEq)]
pub struct CatalogEntry {
    /// The id `--catalog` takes, e.g. `dgx-h100`.
    pub id: String,
    /// Human-readable machine name.
    pub name: String,
    /// One line: GPUs, interconnect, CPUs, NICs.
    pub summary: String,
}

/// Every entry, sorted by id.
///
/// A file whose `[machine]` table does not parse is still listed, under its file name, with the
/// parse error as its summary; loading it reports the full error.
pub fn entries() -> Vec<CatalogEntry> {
    let mut out: Vec<CatalogEntry> = FILES
        .iter()
        .map(|(file, text)| match toml::from_str::<HeaderOnly>(text) {
            Ok(h) => CatalogEntry {
                id: h.machine.id,
                name: h.machine.name,
                summary: h.machine.summary,
            },
            Err(e) => CatalogEntry {
                id: file_stem(file).to_string(),
                name: file_stem(file).to_string(),
                summary: format!("(catalog file does not parse: {})", e.message()),
            },
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// The topology of entry `name` (exact id, or a case-insensitive unique prefix of an id), or of
/// the catalog file at path `name` when it ends in `.toml`; `UnknownCatalogEntry` otherwise.
/// The machine as it runs: where `[[state]]` entries put it below its design, its links are
/// the stated ones ([`running`]), so every figure modeled on it tells one story.
pub fn load(name: &str) -> Result<Topology, TopologyError> {
    load_machine(name).map(|(t, inv)| running(t, &inv))
}

/// The machine as designed, with its state as the file states it (see [`parse_machine`]): what
/// the health check judges (expected = the design's line rates) and models (the stated state).
pub fn load_machine(name: &str) -> Result<(Topology, Inventory), TopologyError> {
    if name.trim().to_ascii_lowercase().ends_with(".toml") {
        return load_file(std::path::Path::new(name.trim()));
    }
    let ids: Vec<(String, &str, &str)> = FILES
        .iter()
        .map(|(file, text)| {
            let id = toml::from_str::<HeaderOnly>(text)
                .map(|h| h.machine.id)
                .unwrap_or_else(|_| file_stem(file).to_string());
            (id, *file, *text)
        })
        .collect();
    let wanted = name.trim().to_lowercase();
    let exact = ids.iter().find(|(id, _, _)| id.to_lowercase() == wanted);
    let chosen = match exact {
        Some(hit) => Some(hit),
        None if wanted.is_empty() => None,
        None => {
            let mut hits = ids
                .iter()
                .filter(|(id, _, _)| id.to_lowercase().starts_with(&wanted));
            match (hits.next(), hits.next()) {
                (Some(hit), None) => Some(hit),
                _ => None,
            }
        }
    };
    match chosen {
        Some((_, file, text)) => parse_machine(file, text),
        None => {
            let mut known: Vec<&str> = ids.iter().map(|(id, _, _)| id.as_str()).collect();
            known.sort_unstable();
            Err(TopologyError::UnknownCatalogEntry {
                name: name.to_string(),
                known: known.join(", "),
            })
        }
    }
}

/// Reads a catalog file from a path (at most 1 MiB).
fn load_file(path: &std::path::Path) -> Result<(Topology, Inventory), TopologyError> {
    let name = path.display().to_string();
    let text = crate::input::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
        crate::input::InputError::TooLarge { .. } => TopologyError::BadCatalogFile {
            file: name.clone(),
            message: "larger than 1 MiB: not a catalog file".into(),
        },
        other => TopologyError::Io {
            path: name.clone(),
            source: other.into(),
        },
    })?;
    parse_machine(&name, &text).map_err(|e| match e {
        TopologyError::BadCatalog { file, message } => {
            TopologyError::BadCatalogFile { file, message }
        }
        other => other,
    })
}

/// Parses one catalog file's text into a validated, normalized [`Topology`].
///
/// `file_name` only labels errors. Malformed TOML, missing fields, matrices of the wrong shape,
/// unknown nvidia-smi codes and asymmetric link matrices give [`TopologyError::BadCatalog`] with a
/// message naming the table, row and cell at fault.
/// Like [`load`], the machine as it runs where `[[state]]` entries say it runs below its design.
pub fn parse_entry(file_name: &str, text: &str) -> Result<Topology, TopologyError> {
    parse_machine(file_name, text).map(|(t, inv)| running(t, &inv))
}

/// `design` with its links as `[[state]]` states them ([`crate::model::as_running`]); the
/// design itself when no entry puts a link below it.
fn running(design: Topology, stated: &Inventory) -> Topology {
    if crate::model::below_design(stated) {
        crate::model::as_running(&design, Some(stated))
    } else {
        design
    }
}

/// The machine as designed (its links at their design's line rates; its GPUs carry the stated
/// PCIe link and NVLinks up) and its state: the design's links (every PCIe link at its
/// maximum, every NVLink up) unless `[[state]]` entries say otherwise — a degraded machine
/// described as it runs. [`parse_entry`] gives the machine as it runs. The inventory's kind is `catalog` and its PCIe readings are `stated`.
pub fn parse_machine(file_name: &str, text: &str) -> Result<(Topology, Inventory), TopologyError> {
    let bad = |message: String| TopologyError::BadCatalog {
        file: file_name.to_string(),
        message,
    };
    let file: CatalogFile = toml::from_str(text).map_err(|e| bad(toml_error(&e, text)))?;
    // Names, models and notes are printed as they are (tables, headers, reports): a control
    // character or line separator in one would rewrite the terminal or split a line.
    let table: toml::Table = toml::from_str(text).map_err(|e| bad(toml_error(&e, text)))?;
    let table = toml::Value::Table(table);
    if let Some((key, c)) = line_breaking_text(&table) {
        return Err(bad(format!(
            "{key} holds {:?} (a control character, line separator or bidirectional control): catalog text is printed on one line",
            c
        )));
    }
    if let Some((key, chars)) = too_long_text(&table) {
        return Err(bad(format!(
            "{key} is {chars} characters long: catalog text is at most {TEXT_MAX_CHARS} ({NAME_MAX_CHARS} for names and models)"
        )));
    }
    build(file).map_err(bad)
}

/// The first string in `value` holding a character that breaks a printed line, with its key
/// path (`gpu.model`, `machine.notes[2]`) and the character.
fn line_breaking_text(value: &toml::Value) -> Option<(String, char)> {
    first_text(value, "", &|_, s| {
        s.chars()
            .find(|&c| crate::model::validate::unsafe_on_terminal(c))
    })
}

/// The first string in `value` (depth first, in key order) for which `test(key path, text)`
/// says something, with its key path (`gpu.model`, `machine.notes[2]`).
fn first_text<T>(
    value: &toml::Value,
    at: &str,
    test: &impl Fn(&str, &str) -> Option<T>,
) -> Option<(String, T)> {
    match value {
        toml::Value::String(s) => test(at, s).map(|t| (at.to_string(), t)),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| first_text(v, &format!("{at}[{i}]"), test)),
        toml::Value::Table(table) => table.iter().find_map(|(k, v)| {
            let key = crate::model::validate::one_line(k, 40);
            let path = if at.is_empty() {
                key
            } else {
                format!("{at}.{key}")
            };
            first_text(v, &path, test)
        }),
        _ => None,
    }
}

/// The longest name, id, model or label (`[machine] name`, `[gpu] model`, a NIC's name) in
/// characters: they head tables and reports, and a 100 KB model name kept the modeled report's
/// layout busy for minutes.
pub const NAME_MAX_CHARS: usize = 128;
/// The longest other text (summary, notes, a topology row of 1,024 GPUs), in characters.
pub const TEXT_MAX_CHARS: usize = 16 << 10;
/// The keys whose strings are names: [`NAME_MAX_CHARS`].
const NAME_KEYS: [&str; 5] = ["id", "name", "model", "label", "name_prefix"];

/// The first string in `value` longer than its key allows, with its key path and length.
fn too_long_text(value: &toml::Value) -> Option<(String, usize)> {
    first_text(value, "", &|at, s| {
        let key = at.rsplit('.').next().unwrap_or(at);
        let key = key.split('[').next().unwrap_or(key);
        let max = if NAME_KEYS.contains(&key) {
            NAME_MAX_CHARS
        } else {
            TEXT_MAX_CHARS
        };
        let chars = s.chars().count();
        (chars > max).then_some(chars)
    })
}

// ---------------------------------------------------------------------------------------------
// File → Topology.

/// Each GPU's pairs of one link matrix: `m[a][b]` for GPUs `a` and `b`.
type Matrix<T> = Vec<Vec<Option<T>>>;

/// A catalog file as its topology and its inventory (as designed, changed where `[[state]]`
/// says), each section checked as it is read: the first problem is the error.
fn build(file: CatalogFile) -> Result<(Topology, Inventory), String> {
    let CatalogFile {
        machine,
        gpu,
        numa,
        topology,
        p2p,
        mut nic,
        nics_per_gpu,
        rack,
        state,
        reference,
    } = file;
    let n = gpu.count;
    check_machine(&machine)?;
    for (i, r) in reference.iter().enumerate() {
        r.check().map_err(|e| format!("reference[{i}].{e}"))?;
    }
    check_gpu_template(&gpu)?;
    let placement = numa_placement(&numa, n)?;
    let kinds = gpu_link_kinds(&topology, n)?;
    bonds_within_the_gpus_links(&kinds, gpu.nvlinks)?;
    if let Some(per) = nics_per_gpu {
        if !nic.is_empty() {
            return Err("[nics_per_gpu] and [[nic]] entries: give one of them".to_string());
        }
        nic = nics_of_pattern(&per, n)?;
    }
    let pcie_paths = pcie_path_matrix(&topology, n)?;
    let host_link = host_link(&gpu, &machine.id, n)?;
    let mut topo = Topology::new(TopologySource::Catalog {
        id: machine.id.clone(),
        name: machine.name.clone(),
    });
    topo.captured_at = None;
    topo.gpus = (0..n)
        .map(|index| catalog_gpu(&gpu, index, placement.get(&index), &host_link))
        .collect();
    for a in 0..n {
        for b in a + 1..n {
            let kind = kinds[a][b];
            let mut link = GpuLink::unknown(a, b);
            link.kind = kind;
            link.pcie_path = pcie_paths.as_ref().and_then(|p| p[a][b]);
            if matches!(kind, Some(LinkKind::Nv(_))) {
                link.nvlink_generation = gpu.nvlink_generation;
            }
            topo.links.push(link);
        }
    }
    topo.p2p = p2p_pairs(&p2p, n)?;
    add_nics(&mut topo, nic, n)?;
    if let Some(r) = rack {
        topo.rack = Some(rack_of(&r, n)?);
    }
    topo.notes.push(TopologyNote::new(format!(
        "Catalog description of {}: documented figures, not a measurement. Source: {}",
        machine.name, machine.source
    )));
    topo.notes
        .extend(machine.notes.into_iter().map(TopologyNote::new));
    topo.normalize();
    topo.derive_line_rates();
    let inventory = apply_state(&mut topo, &machine.id, &gpu, &state)?;
    Ok((topo, inventory))
}

/// A bond of `NV#` cannot hold more NVLinks than a GPU has: `nvlinks = 0` (or 12) beside an
/// `NV18` matrix is a file that contradicts itself.
fn bonds_within_the_gpus_links(
    kinds: &Matrix<LinkKind>,
    nvlinks: Option<u32>,
) -> Result<(), String> {
    let Some(per_gpu) = nvlinks else {
        return Ok(());
    };
    for (a, row) in kinds.iter().enumerate() {
        for (b, kind) in row.iter().enumerate().skip(a + 1) {
            if let Some(k) = kind.and_then(|k| k.nvlinks())
                && k > per_gpu
            {
                return Err(format!(
                    "[topology]: GPU{a}–GPU{b} is NV{k}, more NVLinks than a GPU has ([gpu] \
                     nvlinks = {per_gpu})"
                ));
            }
        }
    }
    Ok(())
}

/// Each GPU's NUMA node and CPUs from the `[[numa]]` entries: each of the `n` GPUs at most once.
fn numa_placement(
    numa: &[NumaNode],
    n: usize,
) -> Result<BTreeMap<usize, (u32, Option<String>)>, String> {
    let mut placement: BTreeMap<usize, (u32, Option<String>)> = BTreeMap::new();
    for (i, node) in numa.iter().enumerate() {
        if let Some(cpus) = &node.cpus
            && crate::cuda::memory::parse_cpu_list(cpus).is_none()
        {
            return Err(format!(
                "[[numa]] entry {} (node {}): cpus {}: expected a CPU list as the kernel writes \
                 it, ranges ascending (e.g. 0-31,64-95)",
                i + 1,
                node.node,
                crate::model::validate::quoted(cpus)
            ));
        }
        for &g in &node.gpus {
            if g >= n {
                return Err(format!(
                    "[[numa]] entry {} (node {}): GPU {g} does not exist; [gpu] count is {n}",
                    i + 1,
                    node.node
                ));
            }
            if placement
                .insert(g, (node.node, node.cpus.clone()))
                .is_some()
            {
                return Err(format!(
                    "[[numa]] entry {} (node {}): GPU {g} is already placed in another NUMA node",
                    i + 1,
                    node.node
                ));
            }
        }
    }
    Ok(placement)
}

/// The link between each pair of the `n` GPUs: `[topology] gpus` rows, or `all` for every pair.
fn gpu_link_kinds(topology: &Connectivity, n: usize) -> Result<Matrix<LinkKind>, String> {
    match (&topology.all, topology.gpus.is_empty()) {
        (Some(code), true) => {
            let kind: LinkKind = code.parse().map_err(|e| format!("[topology] all: {e}"))?;
            let mut m = vec![vec![Some(kind); n]; n];
            for (i, row) in m.iter_mut().enumerate() {
                row[i] = None;
            }
            Ok(m)
        }
        (None, false) => link_matrix("[topology] gpus", &topology.gpus, n),
        (Some(_), false) => Err("[topology]: give gpus rows or all, not both".to_string()),
        (None, true) => Err("[topology]: gpus rows (or all = \"NV18\") are missing".to_string()),
    }
}

/// The `[[nic]]` entries `[nics_per_gpu]` stands for: one NIC per GPU, paired with it, the
/// same-node path to the GPUs of its group and the other path to the rest.
fn nics_of_pattern(per: &NicsPerGpu, n: usize) -> Result<Vec<NicEntry>, String> {
    if per.group == 0 || !n.is_multiple_of(per.group) {
        return Err(format!(
            "[nics_per_gpu] group = {}: expected a divisor of the GPU count {n}",
            per.group
        ));
    }
    Ok((0..n)
        .map(|g| {
            let cells: Vec<&str> = (0..n)
                .map(|h| {
                    if h == g {
                        per.paired.as_str()
                    } else if h / per.group == g / per.group {
                        per.same_node.as_str()
                    } else {
                        per.other.as_str()
                    }
                })
                .collect();
            NicEntry {
                name: format!("{}{g}", per.name_prefix),
                label: None,
                line_rate_gbps: Some(per.line_rate_gbps),
                gpus: cells.join(" "),
            }
        })
        .collect())
}

/// The PCIe path under each pair's NVLink (`[topology] pcie`), if given: PCIe paths only.
fn pcie_path_matrix(topology: &Connectivity, n: usize) -> Result<Option<Matrix<LinkKind>>, String> {
    let Some(rows) = &topology.pcie else {
        return Ok(None);
    };
    let paths = link_matrix("[topology] pcie", rows, n)?;
    for (i, row) in paths.iter().enumerate() {
        for (j, cell) in row.iter().enumerate() {
            if let Some(LinkKind::Nv(_)) = cell {
                return Err(format!(
                    "[topology] pcie row {i} (GPU{i}), column {j}: {} is not a PCIe path; use PIX, PXB, PHB, NODE or SYS",
                    cell.map_or_else(String::new, |k| k.to_string())
                ));
            }
        }
    }
    Ok(Some(paths))
}

/// The GPUs' link to their host other than PCIe (`host_link` with its rate, shared by 1 to
/// `n` GPUs), if stated; its basis the catalog entry `id` unless a source is given.
fn host_link(
    gpu: &GpuTemplate,
    id: &str,
    n: usize,
) -> Result<Option<crate::model::HostLink>, String> {
    let (kind, gbps) = match (&gpu.host_link, gpu.host_link_gbps) {
        (None, None) => return Ok(None),
        (Some(kind), Some(gbps)) => (kind, gbps),
        _ => {
            return Err(
                "[gpu] host_link and host_link_gbps go together (the link and its rate)"
                    .to_string(),
            );
        }
    };
    if kind != "NVLink-C2C" {
        return Err(format!(
            "[gpu] host_link = {kind:?}: the host links known are \"NVLink-C2C\" (PCIe is pcie_gen/pcie_width)"
        ));
    }
    crate::model::NVLINK_GBPS_PER_LINK
        .check(gbps)
        .map_err(|e| format!("[gpu] host_link_gbps: {e}"))?;
    let shared_by = gpu.host_link_shared_by.unwrap_or(1);
    if shared_by == 0 || shared_by as usize > n {
        return Err(format!(
            "[gpu] host_link_shared_by = {shared_by}: expected 1 to {n} GPUs"
        ));
    }
    Ok(Some(crate::model::HostLink {
        kind: kind.clone(),
        gbps,
        shared_by,
        basis: gpu
            .host_link_source
            .clone()
            .unwrap_or_else(|| format!("catalog: {id}")),
    }))
}

/// GPU `index` as the `[gpu]` template describes it, at its NUMA `placement`.
fn catalog_gpu(
    gpu: &GpuTemplate,
    index: usize,
    placement: Option<&(u32, Option<String>)>,
    host_link: &Option<crate::model::HostLink>,
) -> Gpu {
    let (numa_node, cpu_affinity) = match placement {
        Some((node, cpus)) => (Some(*node), cpus.clone()),
        None => (None, None),
    };
    Gpu {
        index,
        name: Some(gpu.model.clone()),
        pci_bus_id: gpu
            .pci_bus_ids
            .as_ref()
            .and_then(|ids| ids.get(index).cloned()),
        memory_mib: Some(gpu.memory_mib),
        pcie: PcieLink {
            gen_current: Some(gpu.pcie_gen),
            gen_max: Some(gpu.pcie_gen),
            width_current: Some(gpu.pcie_width),
            width_max: Some(gpu.pcie_width),
        },
        numa_node,
        cpu_affinity,
        nvlinks_active: gpu.nvlinks,
        nvlink_gbps_per_link: gpu.nvlink_gbps_per_link,
        nvlink_generation: gpu.nvlink_generation,
        host_link: host_link.clone(),
        ..Default::default()
    }
}

/// Every ordered pair of the `n` GPUs with the P2P capabilities `[p2p]` states for it.
fn p2p_pairs(p2p: &P2pSection, n: usize) -> Result<Vec<P2pPair>, String> {
    let caps = [
        (P2pCap::Read, &p2p.read),
        (P2pCap::Write, &p2p.write),
        (P2pCap::Nvlink, &p2p.nvlink),
        (P2pCap::Atomics, &p2p.atomics),
    ];
    let mut matrices = Vec::new();
    for (cap, spec) in caps {
        if let Some(spec) = spec {
            matrices.push((cap, p2p_matrix(cap, spec, n)?));
        }
    }
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let mut pair_caps = P2pCaps::default();
            for (cap, m) in &matrices {
                pair_caps.set(*cap, m[a][b]);
            }
            pairs.push(P2pPair {
                a,
                b,
                caps: pair_caps,
                ..Default::default()
            });
        }
    }
    Ok(pairs)
}

/// The `[[nic]]` entries added to `topo`, each with its path to each of the `n` GPUs.
fn add_nics(topo: &mut Topology, nic: Vec<NicEntry>, n: usize) -> Result<(), String> {
    for (index, entry) in nic.into_iter().enumerate() {
        let at = format!("[[nic]] entry {} ({})", index + 1, entry.name);
        if entry.name.trim().is_empty() {
            return Err(format!("[[nic]] entry {}: name is empty", index + 1));
        }
        if let Some(rate) = entry.line_rate_gbps {
            NIC_LINE_RATE_GBPS
                .check(rate)
                .map_err(|e| format!("{at}: line_rate_gbps: {e}"))?;
        }
        let cells: Vec<&str> = entry.gpus.split_whitespace().collect();
        if cells.len() != n {
            return Err(format!(
                "{at}: gpus has {} cells, expected {n} (one per GPU)",
                cells.len()
            ));
        }
        for (g, cell) in cells.iter().enumerate() {
            let kind: LinkKind = cell
                .parse()
                .map_err(|e| format!("{at}: gpus cell {g} (GPU{g}): {e}"))?;
            topo.nic_links.push(NicLink {
                nic: index,
                gpu: g,
                kind,
            });
        }
        topo.nics.push(Nic {
            index,
            name: entry.name,
            // Today's nvidia-smi heads every NIC column `NIC<i>` with a legend.
            label: entry.label.or_else(|| Some(format!("NIC{index}"))),
            line_rate_gbps: entry.line_rate_gbps,
        });
    }
    Ok(())
}

/// The `[rack]` section checked against the `n` GPUs: trays that divide them, at least one
/// CPU and one switch tray.
fn rack_of(r: &RackSection, n: usize) -> Result<crate::model::Rack, String> {
    let per = r.gpus_per_tray as usize;
    if per == 0 || !n.is_multiple_of(per) || r.cpus_per_tray == 0 || r.switch_trays == 0 {
        return Err(format!(
            "[rack]: gpus_per_tray = {} must divide the GPU count {n}; cpus_per_tray and switch_trays must be at least 1",
            r.gpus_per_tray
        ));
    }
    for (field, v) in [
        ("cpus_per_tray", r.cpus_per_tray),
        ("switch_trays", r.switch_trays),
    ] {
        TRAYS
            .check(f64::from(v))
            .map_err(|e| format!("[rack] {field}: {e}"))?;
    }
    Ok(crate::model::Rack {
        gpus_per_tray: r.gpus_per_tray,
        cpus_per_tray: r.cpus_per_tray,
        switch_trays: r.switch_trays,
    })
}

/// The machine's inventory as designed, changed where `[[state]]` entries say; the topology's
/// GPUs take the stated link states too (line rates stay the design's).
fn apply_state(
    topo: &mut Topology,
    id: &str,
    gpu: &GpuTemplate,
    state: &[StateEntry],
) -> Result<Inventory, String> {
    let mut inv = designed_inventory(topo, id, gpu);
    let mut described = Vec::new();
    for (k, entry) in state.iter().enumerate() {
        check_state_entry(&format!("[[state]] entry {}", k + 1), entry, gpu)?;
        for &g in &entry.gpus {
            if let Some(parts) = apply_state_entry(topo, &mut inv, entry, gpu, g) {
                described.push(format!("GPU {g}: {parts}"));
            }
        }
    }
    if !described.is_empty() {
        topo.notes.push(TopologyNote::new(format!(
            "State as described ([[state]]), not as designed: {}",
            described.join("; ")
        )));
    }
    Ok(inv)
}

/// The inventory of catalog entry `id` as designed: `topo`'s GPUs with their PCIe links and
/// every NVLink of the `[gpu]` template up.
fn designed_inventory(topo: &Topology, id: &str, gpu: &GpuTemplate) -> Inventory {
    let mut inv = Inventory::new(InventoryKind::Catalog, vec![format!("catalog: {id}")]);
    for g in &topo.gpus {
        let gi = inv.gpu_mut(g.index);
        gi.name = g.name.clone();
        gi.pci_bus_id = g.pci_bus_id.clone();
        gi.memory_mib = g.memory_mib;
        gi.pcie = PcieState {
            link: g.pcie,
            load: Some(LoadState::Stated),
            ..Default::default()
        };
        gi.nvlinks_expected = gpu.nvlinks;
        gi.nvlink_gbps_per_link = gpu.nvlink_gbps_per_link;
        gi.nvlinks = Some(
            (0..gpu.nvlinks.unwrap_or(0))
                .map(|link| NvLinkState {
                    link,
                    active: Some(true),
                    gbps: gpu.nvlink_gbps_per_link,
                    ..Default::default()
                })
                .collect(),
        );
    }
    inv
}

/// A `[[state]]` entry (named `at` in errors) checked against the `[gpu]` template: GPUs that
/// exist, a PCIe link and NVLink count no better than the design's.
fn check_state_entry(at: &str, entry: &StateEntry, gpu: &GpuTemplate) -> Result<(), String> {
    let n = gpu.count;
    if entry.gpus.is_empty() {
        return Err(format!("{at}: gpus is empty"));
    }
    if let Some(&g) = entry.gpus.iter().find(|&&g| g >= n) {
        return Err(format!("{at}: GPU {g} does not exist; [gpu] count is {n}"));
    }
    if let Some(gen_now) = entry.pcie_current_gen
        && !(1..=gpu.pcie_gen).contains(&gen_now)
    {
        return Err(format!(
            "{at}: pcie_current_gen {gen_now} must be 1–{} (the GPU's pcie_gen)",
            gpu.pcie_gen
        ));
    }
    if let Some(w) = entry.pcie_current_width
        && !(1..=gpu.pcie_width).contains(&w)
    {
        return Err(format!(
            "{at}: pcie_current_width {w} must be 1–{} (the GPU's pcie_width)",
            gpu.pcie_width
        ));
    }
    if let Some(a) = entry.active_nvlinks
        && a > gpu.nvlinks.unwrap_or(0)
    {
        return Err(format!(
            "{at}: active_nvlinks {a} is more than the {} NVLinks [gpu] nvlinks gives",
            gpu.nvlinks.unwrap_or(0)
        ));
    }
    Ok(())
}

/// A checked `[[state]]` entry applied to GPU `g` in `inv` and in `topo`'s GPU; what it
/// changed in words, if anything.
fn apply_state_entry(
    topo: &mut Topology,
    inv: &mut Inventory,
    entry: &StateEntry,
    gpu: &GpuTemplate,
    g: usize,
) -> Option<String> {
    let mut parts = Vec::new();
    let gi = inv.gpu_mut(g);
    if let Some(v) = entry.pcie_current_gen {
        gi.pcie.link.gen_current = Some(v);
    }
    if let Some(v) = entry.pcie_current_width {
        gi.pcie.link.width_current = Some(v);
    }
    if entry.pcie_current_gen.is_some() || entry.pcie_current_width.is_some() {
        parts.push(format!("PCIe {}", gi.pcie.link.describe()));
    }
    if let Some(a) = entry.active_nvlinks {
        if let Some(links) = gi.nvlinks.as_mut() {
            for l in links.iter_mut() {
                l.active = Some(l.link < a);
            }
        }
        parts.push(format!("{a} NVLinks up"));
    }
    if let Some(e) = entry.ecc_volatile_uncorrected {
        gi.ecc.volatile_uncorrected = Some(e);
        parts.push(format!("{e} uncorrectable ECC errors"));
    }
    let (pcie, active) = (gi.pcie.link, gi.nvlinks_active());
    if let Some(tg) = topo.gpus.iter_mut().find(|x| x.index == g) {
        tg.pcie = pcie;
        if gpu.nvlinks.is_some() {
            tg.nvlinks_active = active;
        }
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// One P2P capability for every ordered pair; `-` in a matrix means not known.
fn p2p_matrix(
    cap: P2pCap,
    spec: &P2pSpec,
    n: usize,
) -> Result<Vec<Vec<Option<P2pStatus>>>, String> {
    let what = format!("[p2p] {}", cap.name());
    match spec {
        P2pSpec::All(code) => {
            let status: P2pStatus = code.parse().map_err(|e| format!("{what}: {e}"))?;
            Ok((0..n)
                .map(|i| (0..n).map(|j| (i != j).then_some(status)).collect())
                .collect())
        }
        P2pSpec::Matrix(rows) => {
            let cells = grid(&what, rows, n)?;
            cells
                .iter()
                .enumerate()
                .map(|(i, row)| {
                    row.iter()
                        .enumerate()
                        .map(|(j, cell)| match *cell {
                            _ if i == j => Ok(None),
                            "-" => Ok(None),
                            code => code
                                .parse()
                                .map(Some)
                                .map_err(|e| format!("{what} row {i} (GPU{i}), column {j}: {e}")),
                        })
                        .collect()
                })
                .collect()
        }
    }
}

/// The TOML parser's message on one line, prefixed with where it points in `text`.
fn toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim();
    match e.span() {
        Some(span) => {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message.to_string(),
    }
}

fn file_stem(file: &str) -> &str {
    file.strip_suffix(".toml").unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad_message(text: &str) -> String {
        match parse_entry("bad.toml", text) {
            Err(TopologyError::BadCatalog { file, message }) => {
                assert_eq!(file, "bad.toml");
                message
            }
            other => panic!("expected BadCatalog, got {other:?}"),
        }
    }

    const MINIMAL: &str = r#"
[machine]
id = "two"
name = "Two GPUs"
summary = "two"
source = "test"

[gpu]
model = "Test GPU"
count = 2
memory_mib = 1024
pcie_gen = 4
pcie_width = 16

[topology]
gpus = ["X SYS", "SYS X"]
"#;

    #[test]
    fn nvlink_rates_and_counts_are_bounded() {
        let with = |extra: &str| {
            let text = MINIMAL.replace("pcie_width = 16\n", &format!("pcie_width = 16\n{extra}\n"));
            parse_entry("two.toml", &text)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        for (extra, why) in [
            (
                "nvlink_gbps_per_link = 1e308",
                "nvlink_gbps_per_link: 1e308 GB/s is out of range",
            ),
            (
                "nvlink_gbps_per_link = inf",
                "nvlink_gbps_per_link: inf GB/s is out of range",
            ),
            (
                "nvlink_gbps_per_link = 0.0",
                "nvlink_gbps_per_link: 0 GB/s is out of range",
            ),
            (
                "nvlinks = 4294967295",
                "nvlinks = 4294967295: at most 64 NVLinks per GPU",
            ),
        ] {
            let e = with(extra).unwrap_err();
            assert!(e.contains(why), "{extra}: {e}");
        }
        with("nvlinks = 18\nnvlink_gbps_per_link = 26.562").unwrap();
    }

    #[test]
    fn physical_bounds_and_name_lengths_are_held_with_field_and_value() {
        let with = |from: &str, to: &str| {
            let text = MINIMAL.replacen(from, to, 1);
            assert_ne!(text, MINIMAL, "{from}");
            parse_entry("two.toml", &text)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let nic = "[topology]\ngpus = [\"X SYS\", \"SYS X\"]\n";
        let long = "y".repeat(100_000);
        for (from, to, why) in [
            (
                "pcie_width = 16",
                "pcie_width = 4294967295",
                "pcie_width 4294967295",
            ),
            (
                "memory_mib = 1024",
                "memory_mib = 9007199254740993",
                "memory_mib: 9007199254740993 MiB is out of range",
            ),
            (
                "pcie_width = 16",
                "pcie_width = 16\nnvlink_gbps_per_link = 5e-324",
                "nvlink_gbps_per_link: 5e-324 GB/s is out of range",
            ),
            (
                nic,
                &format!(
                    "{nic}[[nic]]\nname = \"mlx5_0\"\nline_rate_gbps = 1e308\ngpus = \"PIX PIX\"\n"
                ),
                "line_rate_gbps: 1e308 GB/s is out of range",
            ),
            (
                nic,
                &format!(
                    "{nic}[rack]\ngpus_per_tray = 2\ncpus_per_tray = 1\nswitch_trays = 4294967295\n"
                ),
                "[rack] switch_trays: 4.294967295e9 trays is out of range",
            ),
            (
                "model = \"Test GPU\"",
                &format!("model = \"{long}\""),
                "gpu.model is 100000 characters long",
            ),
            (
                "name = \"Two GPUs\"",
                "name = \"Two \\u202Eevil\"",
                "machine.name holds '\\u{202e}'",
            ),
        ] {
            let e = with(from, to).unwrap_err();
            assert!(e.contains(why), "{to:.80}: {e}");
            assert!(e.len() < 400 && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn text_that_breaks_a_printed_line_is_refused_with_its_key() {
        let good = include_str!("../../assets/hardware/h200-2x-sxm.toml");
        for (from, to, key) in [
            ("model = \"", "model = \"a\u{2028}", "gpu.model"),
            ("model = \"", "model = \"\\u001b]0;x\\u0007", "gpu.model"),
            ("name = \"", "name = \"\\n", "machine.name"),
        ] {
            let text = good.replacen(from, to, 1);
            assert_ne!(text, good);
            let message = bad_message(&text);
            assert!(message.starts_with(key), "{message}");
            assert!(
                !message
                    .chars()
                    .any(crate::model::validate::unsafe_on_terminal),
                "{message}"
            );
        }
    }

    #[test]
    fn every_embedded_file_loads_and_matches_its_name() {
        let entries = entries();
        assert_eq!(entries.len(), FILES.len());
        for (file, text) in FILES {
            let topo = parse_entry(file, text).unwrap_or_else(|e| panic!("{e}"));
            let TopologySource::Catalog { id, name } = &topo.source else {
                panic!("{file}: source is not Catalog");
            };
            assert_eq!(
                id,
                file_stem(file),
                "{file}: machine.id must equal the file name"
            );
            assert!(!name.is_empty());
            assert_eq!(topo.captured_at, None);
            let n = topo.gpus.len();
            assert_eq!(topo.links.len(), n * (n - 1) / 2, "{file}");
            assert_eq!(topo.p2p.len(), n * (n - 1), "{file}");
            assert!(topo.links.iter().all(|l| l.kind.is_some()), "{file}");
            assert!(topo.links.iter().all(|l| l.line_rate.is_some()), "{file}");
            assert!(topo.notes[0].text.contains("not a measurement"), "{file}");
            assert_eq!(topo.nic_links.len(), topo.nics.len() * n, "{file}");
        }
        let ids: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "entries must be sorted and unique");
    }

    #[test]
    fn minimal_file_parses_with_unknowns_left_unknown() {
        let t = parse_entry("min.toml", MINIMAL).unwrap();
        assert_eq!(t.gpus.len(), 2);
        assert_eq!(t.gpus[0].numa_node, None);
        assert_eq!(t.p2p(0, 1).unwrap().caps, P2pCaps::default());
        assert!(t.nics.is_empty());
    }

    #[test]
    fn wrong_row_count_names_the_table() {
        let m =
            bad_message(&MINIMAL.replace(r#"gpus = ["X SYS", "SYS X"]"#, r#"gpus = ["X SYS"]"#));
        assert!(
            m.contains("[topology] gpus") && m.contains("1 rows, expected 2"),
            "{m}"
        );
    }

    #[test]
    fn short_row_names_the_row() {
        let m = bad_message(&MINIMAL.replace(r#""SYS X""#, r#""SYS""#));
        assert!(
            m.contains("row 1 (GPU1)") && m.contains("1 cells, expected 2"),
            "{m}"
        );
    }

    #[test]
    fn unknown_code_names_the_cell() {
        let m = bad_message(&MINIMAL.replace(r#""X SYS""#, r#""X NVX""#));
        assert!(
            m.contains("row 0 (GPU0), column 1") && m.contains("NVX"),
            "{m}"
        );
    }

    #[test]
    fn asymmetric_matrix_is_rejected() {
        let m = bad_message(&MINIMAL.replace(r#""X SYS""#, r#""X NODE""#));
        assert!(
            m.contains("symmetric") && m.contains("GPU0→GPU1 is NODE"),
            "{m}"
        );
    }

    #[test]
    fn diagonal_must_be_x() {
        let m = bad_message(&MINIMAL.replace(r#""X SYS""#, r#""SYS SYS""#));
        assert!(m.contains("diagonal must be X"), "{m}");
    }

    #[test]
    fn missing_field_is_named() {
        let m = bad_message(&MINIMAL.replace("memory_mib = 1024\n", ""));
        assert!(m.contains("missing field `memory_mib`"), "{m}");
        assert!(m.starts_with("line 8, column 1:"), "{m}");
    }

    #[test]
    fn misspelled_field_is_rejected() {
        let m = bad_message(&MINIMAL.replace("pcie_width", "pcie_widht"));
        assert!(m.contains("pcie_widht"), "{m}");
    }

    #[test]
    fn malformed_toml_is_bad_catalog() {
        let m = bad_message("[machine\nid = ");
        assert!(!m.is_empty());
    }

    #[test]
    fn bad_p2p_code_and_unknown_cells() {
        let m = bad_message(&format!("{MINIMAL}\n[p2p]\nread = \"YES\"\n"));
        assert!(m.contains("[p2p] read") && m.contains("YES"), "{m}");
        let t = parse_entry(
            "ok.toml",
            &format!("{MINIMAL}\n[p2p]\nread = [\"X OK\", \"- X\"]\nwrite = \"CNS\"\n"),
        )
        .unwrap();
        assert_eq!(t.p2p(0, 1).unwrap().caps.read, Some(P2pStatus::Ok));
        assert_eq!(t.p2p(1, 0).unwrap().caps.read, None);
        assert_eq!(t.p2p(1, 0).unwrap().caps.write, Some(P2pStatus::Cns));
    }

    #[test]
    fn nic_row_must_cover_every_gpu() {
        let m = bad_message(&format!(
            "{MINIMAL}\n[[nic]]\nname = \"mlx5_0\"\nline_rate_gbps = 50.0\ngpus = \"PIX\"\n"
        ));
        assert!(
            m.contains("[[nic]] entry 1 (mlx5_0)") && m.contains("expected 2"),
            "{m}"
        );
    }

    #[test]
    fn numa_gpu_out_of_range() {
        let m = bad_message(&format!(
            "{MINIMAL}\n[[numa]]\nnode = 0\ncpus = \"0-7\"\ngpus = [0, 2]\n"
        ));
        assert!(m.contains("GPU 2 does not exist"), "{m}");
    }

    #[test]
    fn stated_state_describes_a_degraded_machine() {
        let text = format!(
            "{}\n[[state]]\ngpus = [1]\npcie_current_gen = 3\npcie_current_width = 8\nactive_nvlinks = 3\n",
            MINIMAL.replace("pcie_width = 16\n", "pcie_width = 16\nnvlinks = 4\n")
        );
        let (t, inv) = parse_machine("deg.toml", &text).unwrap();
        assert_eq!(inv.kind, InventoryKind::Catalog);
        let g1 = inv.gpu(1).unwrap();
        assert_eq!(g1.pcie.link.describe(), "Gen3 x8 (max Gen4 x16)");
        assert_eq!(g1.pcie.load, Some(LoadState::Stated));
        assert_eq!(g1.nvlinks_active(), Some(3));
        assert_eq!(inv.gpu(0).unwrap().nvlinks_active(), Some(4));
        assert_eq!(t.gpu(1).unwrap().pcie.gen_current, Some(3));
        assert!(
            t.notes
                .iter()
                .any(|n| n.text.contains("GPU 1: PCIe Gen3 x8")),
            "{:?}",
            t.notes
        );
        // parse_machine keeps the design (what health judges against); parse_entry (and load)
        // give the machine as it runs, so every modeled figure follows the stated link.
        let gen3_x8 = crate::model::pcie_rate_gbps(3, 8).unwrap();
        let gen4_x16 = crate::model::pcie_rate_gbps(4, 16).unwrap();
        let rate = |t: &Topology| t.link(0, 1).unwrap().line_rate.as_ref().unwrap().gbps;
        assert_eq!(t.gpu(1).unwrap().pcie.line_rate_gbps(), Some(gen4_x16));
        assert!((rate(&t) - gen4_x16).abs() < 1e-9);
        let running = parse_entry("deg.toml", &text).unwrap();
        assert_eq!(running.gpu(1).unwrap().pcie.line_rate_gbps(), Some(gen3_x8));
        assert_eq!(
            running.gpu(0).unwrap().pcie.line_rate_gbps(),
            Some(gen4_x16)
        );
        assert!((rate(&running) - gen3_x8).abs() < 1e-9);
        assert_eq!(running.gpu(1).unwrap().nvlinks_active, Some(3));
        // No [[state]]: the design, untouched.
        let (design, _) = parse_machine("min.toml", MINIMAL).unwrap();
        assert_eq!(parse_entry("min.toml", MINIMAL).unwrap(), design);
        let m = bad_message(&format!("{MINIMAL}\n[[state]]\ngpus = [5]\n"));
        assert!(m.contains("GPU 5 does not exist"), "{m}");
        let m = bad_message(&format!(
            "{MINIMAL}\n[[state]]\ngpus = [0]\npcie_current_gen = 5\n"
        ));
        assert!(m.contains("pcie_current_gen 5"), "{m}");
    }

    #[test]
    fn nvlink_in_pcie_matrix_is_rejected() {
        let text = MINIMAL.replace(
            r#"gpus = ["X SYS", "SYS X"]"#,
            "gpus = [\"X NV4\", \"NV4 X\"]\npcie = [\"X NV4\", \"NV4 X\"]",
        );
        let m = bad_message(&text);
        assert!(
            m.contains("[topology] pcie") && m.contains("not a PCIe path"),
            "{m}"
        );
    }
}
