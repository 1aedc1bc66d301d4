//! One machine from any mix of captures: `nvidia-smi topo` outputs give how the GPUs connect,
//! `nvidia-smi -q`, `-q -x` and `nvlink` captures ([`super::smi_query`] parses each) the GPUs'
//! state, merged into a [`Topology`] and its inventory — a reading before and, where the same
//! counters were read twice, one after; GPUs a capture shows that `-q` does not describe noted.

use std::collections::BTreeSet;

use super::TopologyError;
use super::import::{self, decode, parse_error, read_input};
use super::smi_query::{CaptureKind, capture_kind, parse_capture};
use crate::model::{
    Gpu, GpuInventory, Inventory, InventoryKind, NoteKind, PcieLink, Topology, TopologyNote,
    TopologySource,
};

/// A machine read from captures: its topology, and its inventory when any capture held one.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedMachine {
    pub topology: Topology,
    /// Merged from every state capture, the first file that knows a value winning.
    pub inventory: Option<Inventory>,
    /// Where the same counters were read twice at two moments (`nvidia-smi nvlink -e` before and
    /// after a load, `-q` twice), the later captures merged (the first file that knows a value
    /// losing), holding only the counters read twice. `None` otherwise.
    pub after: Option<Inventory>,
}

impl ImportedMachine {
    /// The machine as its state captures say it runs (NVLinks down, PCIe trained low:
    /// `model::as_running`), what every modeled figure of an import is made from; `topology`
    /// stays the design the check judges against.
    pub fn running(&self) -> Topology {
        crate::model::as_running(&self.topology, self.inventory.as_ref())
    }
}

/// Reads each path ('-' = standard input) and merges them into one machine.
///
/// `nvidia-smi topo` captures give the connectivity (as [`import::import_paths`] reads it);
/// `-q`, `-q -x` and `nvlink` captures the GPUs' state. With state captures alone the GPUs are
/// known but how they connect is not. Every capture must come from the same machine: GPU counts,
/// bus ids and UUIDs must agree where both captures have them.
pub fn import_machine(paths: &[String]) -> Result<ImportedMachine, TopologyError> {
    if paths.is_empty() {
        return import::import_paths(paths).map(|topology| ImportedMachine {
            topology,
            inventory: None,
            after: None,
        });
    }
    let mut texts = Vec::with_capacity(paths.len());
    for path in paths {
        let (origin, bytes) = read_input(path)?;
        texts.push((path.clone(), decode(&bytes, &origin)?));
    }
    import_machine_texts(&texts)
}

/// [`import_machine`] for captures already read and decoded: `(path, text)` each, `-` naming
/// standard input.
pub fn import_machine_texts(inputs: &[(String, String)]) -> Result<ImportedMachine, TopologyError> {
    let paths: Vec<String> = inputs.iter().map(|(p, _)| p.clone()).collect();
    let mut topo_texts = Vec::new();
    // (kind, inventory) in the order given.
    let mut states: Vec<(CaptureKind, Inventory)> = Vec::new();
    for (path, text) in inputs {
        let origin = if path == "-" { "<stdin>" } else { path };
        match capture_kind(text) {
            CaptureKind::Topo => topo_texts.push((path.clone(), text.clone())),
            kind => states.push((kind, parse_capture(kind, text, origin)?)),
        }
    }
    let mut topology = if topo_texts.is_empty() {
        None
    } else {
        Some(import::import_texts(&topo_texts)?)
    };
    let paths = &paths;
    if states.is_empty() {
        return Ok(ImportedMachine {
            topology: topology.unwrap_or_else(|| Topology::new(imported(paths))),
            inventory: None,
            after: None,
        });
    }
    renumber_query_captures(&mut states);
    check_same_machine(&states)?;
    let mut before = states[0].1.clone();
    for (_, inv) in &states[1..] {
        before.fill_from(inv);
    }
    let twice = read_twice(&states);
    let after = (!twice.is_empty()).then(|| {
        let mut it = states.iter().rev();
        let mut a = it
            .next()
            .map(|(_, i)| i.clone())
            .unwrap_or_else(|| Inventory::new(InventoryKind::Imported, Vec::new()));
        for (_, inv) in it {
            a.fill_from(inv);
        }
        // Counters read once are not read "after": the one reading stands as one (a single
        // `nvlink -e` beside two `-q` readings was compared with itself, "no growth").
        keep_only(&mut a, &twice);
        a
    });
    note_undescribed(&mut before, &states, topology.as_ref());
    let topo = match topology.take() {
        Some(mut t) => {
            merge_into_topology(&mut t, &before)?;
            t.source = imported(paths);
            t
        }
        None => topology_from_inventory(&before, paths),
    };
    Ok(ImportedMachine {
        topology: topo,
        inventory: Some(before),
        after,
    })
}

fn imported(paths: &[String]) -> TopologySource {
    TopologySource::Imported {
        paths: paths.to_vec(),
    }
}

/// Where an `nvidia-smi -q` capture was given, the GPUs that `topo -m` or `nvlink -s` show
/// and no `-q` capture describes go into `before.missing` (a GPU that did not answer the
/// driver when `-q` ran is left out of it).
fn note_undescribed(
    before: &mut Inventory,
    states: &[(CaptureKind, Inventory)],
    topology: Option<&Topology>,
) {
    if !states.iter().any(|(k, _)| k.is_query()) {
        return;
    }
    let described: BTreeSet<usize> = states
        .iter()
        .filter(|(k, _)| k.is_query())
        .flat_map(|(_, inv)| inv.gpus.iter().map(|g| g.index))
        .collect();
    let mut seen: Vec<(usize, &str)> = topology
        .map(|t| t.gpu_indices())
        .unwrap_or_default()
        .into_iter()
        .map(|g| (g, "`nvidia-smi topo -m`"))
        .collect();
    for (_, inv) in states.iter().filter(|(k, _)| !k.is_query()) {
        seen.extend(inv.gpus.iter().map(|g| (g.index, "`nvidia-smi nvlink`")));
    }
    for (index, capture) in seen {
        if described.contains(&index) || before.missing.iter().any(|m| m.index == index) {
            continue;
        }
        before.missing.push(crate::model::MissingGpu {
            lost: false,
            index,
            seen: format!("{capture} shows GPU {index}; no nvidia-smi -q capture describes it"),
        });
    }
}

/// The groups of counters a capture can hold, as [`counters`] and [`keep_only`] name them.
const NVLINK_ERRORS: &str = "nvlink errors";
const PCIE_REPLAYS: &str = "pcie replays";
const ECC_COUNTS: &str = "ecc";
const TEMPERATURES: &str = "temperatures";

/// The counters a capture holds (NVLink error counters, the PCIe replay counter, ECC error
/// counts): an `nvidia-smi nvlink -s` holds none, `nvlink -e` the NVLink ones.
fn counters(inv: &Inventory) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    for g in &inv.gpus {
        let links = g.nvlinks.iter().flatten();
        if links.clone().any(|l| {
            l.crc_errors
                .or(l.replay_errors)
                .or(l.recovery_errors)
                .is_some()
        }) {
            out.insert(NVLINK_ERRORS);
        }
        if g.pcie.replay_counter.is_some() {
            out.insert(PCIE_REPLAYS);
        }
        if g.ecc
            .volatile_corrected
            .or(g.ecc.volatile_uncorrected)
            .is_some()
        {
            out.insert(ECC_COUNTS);
        }
        if g.temperature.gpu_c.or(g.temperature.tlimit_c).is_some() {
            out.insert(TEMPERATURES);
        }
    }
    out
}

/// The counters read twice, at two moments: the same counters in two captures that are not one
/// reading written twice (`-q` as text and as XML at the same timestamp). The later captures
/// are then a reading after the first for those counters. An `nvlink -s` and an `nvlink -e`,
/// or a `-q` and an `nvlink -e`, are one reading of different things.
fn read_twice(states: &[(CaptureKind, Inventory)]) -> BTreeSet<&'static str> {
    let read: Vec<(BTreeSet<&'static str>, Option<&str>)> = states
        .iter()
        .map(|(_, inv)| (counters(inv), inv.captured_at.as_deref()))
        .collect();
    let mut twice = BTreeSet::new();
    for (i, (a, at_a)) in read.iter().enumerate() {
        for (b, at_b) in &read[i + 1..] {
            let same_moment = matches!((at_a, at_b), (Some(x), Some(y)) if x == y);
            if !same_moment {
                twice.extend(a.intersection(b).copied());
            }
        }
    }
    twice
}

/// `after` with only the counters of `twice` (the others cleared: read once, they have no
/// reading after).
fn keep_only(after: &mut Inventory, twice: &BTreeSet<&'static str>) {
    for g in &mut after.gpus {
        if !twice.contains(NVLINK_ERRORS) {
            for l in g.nvlinks.iter_mut().flatten() {
                (l.crc_errors, l.replay_errors, l.recovery_errors) = (None, None, None);
            }
        }
        if !twice.contains(PCIE_REPLAYS) {
            g.pcie.replay_counter = None;
        }
        if !twice.contains(ECC_COUNTS) {
            (g.ecc.volatile_corrected, g.ecc.volatile_uncorrected) = (None, None);
        }
        if !twice.contains(TEMPERATURES) {
            g.temperature = Default::default();
        }
    }
}

/// A `-q` capture with a GPU left out numbers the rest by position; an `nvlink` capture beside
/// it prints each GPU's index with its UUID, which numbers them as nvidia-smi does.
fn renumber_query_captures(states: &mut [(CaptureKind, Inventory)]) {
    let named: std::collections::BTreeMap<String, usize> = states
        .iter()
        .filter(|(k, _)| *k == CaptureKind::Nvlink)
        .flat_map(|(_, inv)| inv.gpus.iter())
        .filter_map(|g| Some((g.uuid.as_deref()?.to_ascii_lowercase(), g.index)))
        .collect();
    for (k, inv) in states.iter_mut() {
        if k.is_query() && !named.is_empty() {
            super::gpu_order::renumber_by_uuid(inv, &named);
        }
    }
    // A `-q` whose lost GPU nvidia-smi named (text) numbers another `-q` of the same moment
    // (its XML, which names none) by bus id.
    let placed: std::collections::BTreeMap<crate::model::BusKey, usize> = states
        .iter()
        .filter(|(k, inv)| k.is_query() && inv.missing.iter().any(|m| m.lost))
        .flat_map(|(_, inv)| inv.gpus.iter())
        .filter_map(|g| {
            Some((
                crate::model::pci_bus_key(g.pci_bus_id.as_deref()?)?,
                g.index,
            ))
        })
        .collect();
    if placed.is_empty() {
        return;
    }
    for (k, inv) in states.iter_mut() {
        if k.is_query() {
            super::gpu_order::renumber_by_bus(inv, &placed);
        }
    }
}

/// Captures of one machine agree on GPU count, bus ids and UUIDs, and no bus id is numbered
/// differently by two of them.
fn check_same_machine(states: &[(CaptureKind, Inventory)]) -> Result<(), TopologyError> {
    let mut numbered: std::collections::BTreeMap<crate::model::BusKey, (usize, &str)> =
        Default::default();
    for (_, inv) in states {
        let origin = inv.origin.first().map_or("<capture>", String::as_str);
        for g in &inv.gpus {
            let Some(key) = g.pci_bus_id.as_deref().and_then(crate::model::pci_bus_key) else {
                continue;
            };
            match numbered.get(&key) {
                Some(&(i, other)) if i != g.index => {
                    return Err(parse_error(
                        origin,
                        1,
                        format!(
                            "the GPU at bus {} is GPU {} here but GPU {i} in {other}: the \
                             captures number the GPUs differently (one leaves a GPU out)",
                            g.pci_bus_id.as_deref().unwrap_or_default(),
                            g.index
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    numbered.insert(key, (g.index, origin));
                }
            }
        }
    }
    let (_, first) = &states[0];
    for (_, other) in &states[1..] {
        let origin = other.origin.first().map_or("<capture>", String::as_str);
        let first_origin = first.origin.first().map_or("<capture>", String::as_str);
        for g in &other.gpus {
            let Some(f) = first.gpu(g.index) else {
                continue;
            };
            // A bus id's domain is 4 digits in `-q`, 8 in `topo`'s and NVML's spelling.
            let same_bus: fn(&str, &str) -> bool = crate::model::same_pci_bus;
            let same_text: fn(&str, &str) -> bool = |a, b| a.eq_ignore_ascii_case(b);
            for (what, a, b, same) in [
                ("UUID", &f.uuid, &g.uuid, same_text),
                ("PCI bus id", &f.pci_bus_id, &g.pci_bus_id, same_bus),
            ] {
                if let (Some(a), Some(b)) = (a, b)
                    && !same_text(a, b)
                    && !same(a, b)
                {
                    return Err(parse_error(
                        origin,
                        1,
                        format!(
                            "GPU {} has {what} {b}, but {first_origin} gives {a}: every capture must come from the same machine",
                            g.index
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A topology with the inventory's GPUs and nothing known about how they connect.
fn topology_from_inventory(inv: &Inventory, paths: &[String]) -> Topology {
    let mut t = Topology::new(imported(paths));
    t.captured_at = inv.captured_at.clone();
    t.gpus = inv.gpus.iter().map(gpu_from_inventory).collect();
    t.normalize();
    t.derive_line_rates();
    t.notes.push(TopologyNote::new(
        "how the GPUs connect is unknown: the captures hold GPU state only (import `nvidia-smi topo -m` output as well)",
    ));
    t
}

fn gpu_from_inventory(g: &GpuInventory) -> Gpu {
    Gpu {
        index: g.index,
        name: g.name.clone(),
        uuid: g.uuid.clone(),
        pci_bus_id: g.pci_bus_id.clone(),
        memory_mib: g.memory_mib,
        pcie: g.pcie.link,
        nvlinks_active: g.nvlinks_active(),
        nvlink_gbps_per_link: g.nvlink_gbps_per_link,
        ..Default::default()
    }
}

/// Fills a `topo` capture's GPUs from the inventory (names, PCIe links, NVLink speeds).
/// `topo -m` counts the NVLinks that are up, as NVML does, where the import's topology is the
/// design (`crate::model::as_running` takes the links down off it): a GB200 GPU with 6 of its
/// 18 links down reads NV12 to every peer, and the share came off twice (329.6 GB/s modeled
/// where 12 links carry 494.4). Where the pairs' bonds are the GPUs' whole sets of links (some
/// pair reads its ends' full count: through NVSwitch, or two GPUs bonded by all their links),
/// a pair that reads the fewer links up at its two ends gets its design bond back, with a note.
/// A mesh, whose pairs share a GPU's links, is left as read.
fn restore_design_bonds(t: &mut Topology, inv: &Inventory) {
    // (up, total) NVLinks of GPU g, where the captures say.
    let links = |g: usize| inv.gpu(g)?.nvlinks_up_of();
    // (bond, links up at its two ends, the ends' totals) of every NVLink pair the captures
    // cover.
    let pairs: Vec<(u32, u32, u32)> = t
        .links
        .iter()
        .filter_map(|l| match (l.kind, links(l.a), links(l.b)) {
            (Some(crate::model::LinkKind::Nv(n)), Some((ua, ta)), Some((ub, tb))) => {
                Some((n, ua.min(ub), ta.min(tb)))
            }
            _ => None,
        })
        .collect();
    // Some pair at its ends' full count; or, with three GPUs or more, every pair at the fewer
    // links up at its ends (every GPU short of links, as when an NVSwitch is lost: a mesh's
    // pairs share a GPU's links and cannot all read that). Two GPUs short of links are
    // ambiguous (a bridge of some of their links) and are left as read.
    let whole_sets = pairs.iter().any(|&(n, _, total)| n == total)
        || (t.gpus.len() >= 3 && !pairs.is_empty() && pairs.iter().all(|&(n, up, _)| n == up));
    if !whole_sets {
        return;
    }
    for l in &mut t.links {
        let (Some(crate::model::LinkKind::Nv(n)), Some((ua, ta)), Some((ub, tb))) =
            (l.kind, links(l.a), links(l.b))
        else {
            continue;
        };
        let design = ta.min(tb);
        if n == ua.min(ub) && n < design {
            l.kind = Some(crate::model::LinkKind::Nv(design));
            l.line_rate = None;
            t.notes.push(TopologyNote::about_pair(
                l.a,
                l.b,
                format!(
                    "GPU {}–{}: `topo -m`'s NV{n} counts the links up; NV{design} as built \
                     ({} of {ta} and {} of {tb} NVLinks up)",
                    l.a, l.b, ua, ub
                ),
            ));
        }
    }
}

fn merge_into_topology(t: &mut Topology, inv: &Inventory) -> Result<(), TopologyError> {
    let topo_gpus = t.gpu_indices();
    if let Some(extra) = inv.gpus.iter().find(|g| !topo_gpus.contains(&g.index)) {
        let origin = inv.origin.first().map_or("<capture>", String::as_str);
        return Err(parse_error(
            origin,
            1,
            format!(
                "GPU {}, which the `topo` capture does not have (it has {} GPUs): every capture must come from the same machine",
                extra.index,
                topo_gpus.len()
            ),
        ));
    }
    for gi in &inv.gpus {
        let from = gpu_from_inventory(gi);
        if let Some(g) = t.gpus.iter_mut().find(|g| g.index == gi.index) {
            g.name = g.name.take().or(from.name);
            g.uuid = g.uuid.take().or(from.uuid);
            g.pci_bus_id = g.pci_bus_id.take().or(from.pci_bus_id);
            g.memory_mib = g.memory_mib.or(from.memory_mib);
            if g.pcie == PcieLink::default() {
                g.pcie = from.pcie;
            }
            g.nvlinks_active = g.nvlinks_active.or(from.nvlinks_active);
            g.nvlink_gbps_per_link = g.nvlink_gbps_per_link.or(from.nvlink_gbps_per_link);
        }
    }
    restore_design_bonds(t, inv);
    let had_pcie = inv.gpus.iter().any(|g| g.pcie.link.gen_max.is_some());
    let had_nvlink = inv.gpus.iter().any(|g| g.nvlink_gbps_per_link.is_some());
    if had_pcie || had_nvlink {
        t.notes.retain(|n| n.kind != NoteKind::LineRates);
        t.derive_line_rates();
        t.notes.push(TopologyNote::line_rates(format!(
            "line rates from the state captures: {}",
            match (had_pcie, had_nvlink) {
                (true, true) => "PCIe links (`nvidia-smi -q`) and NVLink speeds (`nvidia-smi nvlink -s`)",
                (true, false) =>
                    "PCIe links (`nvidia-smi -q`); NVLink speeds unknown without `nvidia-smi nvlink -s`",
                _ => "NVLink speeds (`nvidia-smi nvlink -s`); PCIe unknown without `nvidia-smi -q`",
            }
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Values
