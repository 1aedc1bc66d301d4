//! This machine's topology, read through NVML and the CUDA driver API.
//!
//! NVML numbers GPUs its own way (by PCI bus order), CUDA by its own (fastest first unless
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID`, and only those in `CUDA_VISIBLE_DEVICES`). scalescope's GPU
//! index is the CUDA ordinal, so that `--gpus 1` means what `cudaSetDevice(1)` means; the NVML
//! device of each CUDA ordinal is found by matching PCI bus ids.

use std::os::raw::c_ulong;

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{P2pCapabilitiesIndex, TopologyLevel};
use nvml_wrapper::enum_wrappers::nv_link::IntDeviceType;
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::FieldValueSample;
use nvml_wrapper::structs::device::FieldId;

use super::TopologyError;
use crate::cuda;
use crate::model::{
    Gpu, LinkKind, P2pCap, P2pStatus, PcieLink, Topology, TopologyNote, TopologySource,
};

/// NVML's `NVML_NVLINK_MAX_LINKS`: links are numbered 0..18 on every GPU so far.
const MAX_NVLINKS: u32 = 18;
/// NVML field `NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON`: common speed of the active links, MB/s.
const FI_NVLINK_SPEED_MBPS_COMMON: u32 = 90;
/// NVML field `NVML_FI_DEV_NVLINK_GET_SPEED`: one link's speed (scope = link index), MB/s.
const FI_NVLINK_GET_SPEED: u32 = 164;
/// NVML field `NVML_FI_DEV_NVLINK_SPEED_MBPS_L0`: link 0's speed, MB/s.
const FI_NVLINK_SPEED_MBPS_L0: u32 = 84;

/// Reads this machine's topology. Fails with [`TopologyError::NoDriver`] when the NVIDIA driver
/// is absent; a missing CUDA driver only drops the CUDA columns (noted in `notes`).
pub fn read() -> Result<Topology, TopologyError> {
    let nvml = Nvml::init().map_err(|e| TopologyError::NoDriver {
        reason: nvml_reason(&e),
    })?;
    let count = nvml.device_count().map_err(nvml_err("device count"))?;
    let mut notes = Vec::new();

    // Every NVML device with its bus id.
    let mut nvml_devices = Vec::new();
    for i in 0..count {
        let dev = nvml
            .device_by_index(i)
            .map_err(nvml_err(&format!("device {i}")))?;
        let bus = dev
            .pci_info()
            .map_err(nvml_err(&format!("PCI info of device {i}")))?
            .bus_id;
        nvml_devices.push((i, bus, dev));
    }
    let cuda_driver = cuda::driver();
    let order = cuda_order(&cuda_driver, &nvml_devices, &mut notes)?;

    let source = TopologySource::Live {
        hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string()),
        driver_version: nvml.sys_driver_version().ok(),
        nvml_version: nvml.sys_nvml_version().ok(),
        cuda_driver_version: cuda_driver.as_ref().ok().map(|d| d.version),
    };
    let mut topo = Topology::new(source);
    topo.captured_at =
        Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());

    // Per-GPU facts, and where each active NVLink goes.
    let mut remotes: Vec<Vec<Remote>> = Vec::new();
    for (index, &p) in order.iter().enumerate() {
        let (nvml_index, bus, dev) = &nvml_devices[p];
        let (gpu, links) = read_gpu(index, *nvml_index, bus, dev, &mut notes);
        remotes.push(links);
        topo.gpus.push(gpu);
    }
    topo.normalize();

    // Pairs: NVLinks counted through the links' remote PCI info (or through NVSwitch), the PCIe
    // path from NVML's common ancestor, P2P from NVML and CUDA.
    let (owners, eliminated) = remote_owners(&remotes, &topo.gpus);
    if eliminated {
        notes.push(TopologyNote::new(
            "NVLink remote PCI ids name no GPU's bus id (as in a virtual machine); each remote id was \
             matched to the one GPU whose own links never name it"
                .to_string(),
        ));
    }
    let pairs = PairReader {
        nvml: &nvml,
        devices: order.iter().map(|&p| &nvml_devices[p].2).collect(),
        remotes: &remotes,
        owners: &owners,
        cuda: cuda_driver.is_ok(),
    };
    let n = order.len();
    for a in 0..n {
        for b in (a + 1)..n {
            pairs.link(&mut topo, &mut notes, a, b);
        }
        for b in (0..n).filter(|&b| b != a) {
            pairs.p2p(&mut topo, a, b);
        }
    }
    topo.derive_line_rates();
    if let Some(g) = topo
        .gpus
        .iter()
        .find(|g| g.pcie.gen_current.is_some() && g.pcie.gen_current < g.pcie.gen_max)
    {
        notes.push(TopologyNote::new(format!(
            "GPU {} links at PCIe {} now; idle GPUs lower their PCIe generation to save power, so line rates use the maximum",
            g.index,
            g.pcie.describe()
        )));
    }
    topo.notes = notes;
    Ok(topo)
}

/// The error for an NVML call about `what` that failed.
fn nvml_err(what: &str) -> impl Fn(NvmlError) -> TopologyError + use<> {
    let what = what.to_string();
    move |e: NvmlError| TopologyError::Nvml {
        what: what.clone(),
        reason: e.to_string(),
    }
}

/// The NVML device (its position in `nvml_devices`) of each CUDA ordinal, by bus id; without
/// CUDA, NVML order filtered by `CUDA_VISIBLE_DEVICES`. What is left out is noted.
fn cuda_order(
    cuda_driver: &Result<cuda::Driver, cuda::CudaError>,
    nvml_devices: &[(u32, String, nvml_wrapper::Device)],
    notes: &mut Vec<TopologyNote>,
) -> Result<Vec<usize>, TopologyError> {
    match cuda_driver {
        Ok(drv) => {
            let mut order = Vec::new();
            for ordinal in 0..drv.device_count {
                let bus = cuda::pci_bus_id(ordinal).map_err(|e| TopologyError::Nvml {
                    what: format!("PCI bus id of CUDA device {ordinal}"),
                    reason: e.to_string(),
                })?;
                let key = crate::model::pci_bus_key(&bus);
                match nvml_devices
                    .iter()
                    .position(|(_, b, _)| crate::model::pci_bus_key(b) == key)
                {
                    Some(p) => order.push(p),
                    None => notes.push(TopologyNote::new(format!(
                        "CUDA device {ordinal} ({bus}) has no NVML device; left out"
                    ))),
                }
            }
            Ok(order)
        }
        Err(e) => {
            notes.push(TopologyNote::new(format!(
                "{e}; GPU indices are NVML's, filtered by CUDA_VISIBLE_DEVICES; CUDA peer-access columns are empty"
            )));
            let uuids: Vec<String> = nvml_devices
                .iter()
                .map(|(_, _, d)| d.uuid().unwrap_or_default())
                .collect();
            Ok(visible_devices(
                std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref(),
                &uuids,
            ))
        }
    }
}

/// GPU `index` (NVML's device `nvml_index` at `bus`) with what NVML tells of it, and where
/// each of its active NVLinks goes; its NVLink speed, or why there is none, noted.
fn read_gpu(
    index: usize,
    nvml_index: u32,
    bus: &str,
    dev: &nvml_wrapper::Device,
    notes: &mut Vec<TopologyNote>,
) -> (Gpu, Vec<Remote>) {
    let mut gpu = Gpu {
        index,
        name: dev.name().ok(),
        uuid: dev.uuid().ok(),
        pci_bus_id: Some(bus.to_string()),
        memory_mib: dev.memory_info().ok().map(|m| m.total / (1024 * 1024)),
        pcie: PcieLink {
            gen_current: dev.current_pcie_link_gen().ok(),
            gen_max: dev.max_pcie_link_gen().ok(),
            width_current: dev.current_pcie_link_width().ok(),
            width_max: dev.max_pcie_link_width().ok(),
        },
        numa_node: dev
            .memory_affinity(1, 0)
            .ok()
            .and_then(|mask| first_bit(&mask)),
        cpu_affinity: dev
            .cpu_affinity(16)
            .ok()
            .map(|mask| cpu_ranges(&mask))
            .filter(|s| !s.is_empty()),
        nvml_index: Some(nvml_index),
        ..Default::default()
    };
    let mut links = Vec::new();
    for l in 0..MAX_NVLINKS {
        let link = dev.link_wrapper_for(l);
        if !link.is_active().unwrap_or(false) {
            continue;
        }
        if gpu.nvlink_generation.is_none() {
            gpu.nvlink_generation = link.version().ok().and_then(nvlink_generation);
        }
        let remote = match link.remote_device_type(l) {
            Ok(IntDeviceType::Switch) => Remote::Switch,
            _ => match link.remote_pci_info() {
                Ok(info) => Remote::Bus(info.bus_id),
                Err(_) => Remote::Unknown,
            },
        };
        links.push(remote);
    }
    gpu.nvlinks_active = Some(links.len() as u32);
    if !links.is_empty() {
        match nvlink_speed_gbps(dev) {
            Ok((gbps, how)) => {
                gpu.nvlink_gbps_per_link = Some(gbps);
                if index == 0 {
                    notes.push(TopologyNote::new(format!("NVLink speed per link from {how}")));
                }
            }
            Err(tried) => notes.push(TopologyNote::new(format!(
                "GPU {index}: NVML reported no NVLink speed ({tried}); line rates use the NVLink generation's rate"
            ))),
        }
    }
    (gpu, links)
}

/// What [`read`] needs to read a GPU pair: NVML, each GPU's device (by index), where its
/// NVLinks go and which GPU owns each remote bus id, and whether CUDA is there.
struct PairReader<'a> {
    nvml: &'a Nvml,
    devices: Vec<&'a nvml_wrapper::Device<'a>>,
    remotes: &'a [Vec<Remote>],
    owners: &'a [(String, usize)],
    cuda: bool,
}

impl PairReader<'_> {
    /// The link of GPUs `a` < `b`: its NVLinks (inferred from NVML's NVLink P2P status, with a
    /// note, when no remote device can be identified) and its PCIe path.
    fn link(&self, topo: &mut Topology, notes: &mut Vec<TopologyNote>, a: usize, b: usize) {
        let (da, db) = (self.devices[a], self.devices[b]);
        let remotes = self.remotes;
        let mut nv = nvlinks_between(remotes, self.owners, a, b);
        // Links whose far end names no GPU we know: no remote info at all, or an id that
        // every GPU's links name alike (some VMs report one placeholder id for all).
        let unowned = |g: usize| {
            !remotes[g].is_empty()
                && remotes[g].iter().all(|r| match r {
                    Remote::Unknown => true,
                    // An id that is the GPU's own is no peer either.
                    Remote::Bus(bus) => !self.owners.iter().any(|(b, o)| b == bus && *o != g),
                    Remote::Switch => false,
                })
        };
        if nv == 0
            && unowned(a)
            && unowned(b)
            && matches!(
                da.p2p_status(db, P2pCapabilitiesIndex::NvLink),
                Ok(nvml_wrapper::enum_wrappers::device::P2pStatus::Ok)
            )
        {
            // NVML names no usable remote device, yet reports NVLink P2P between the two:
            // count the links both have, as for a switch fabric.
            nv = remotes[a].len().min(remotes[b].len()) as u32;
            notes.push(TopologyNote::about_pair(
                a,
                b,
                format!(
                    "NVLink remote devices not identifiable ({}); NV{nv} inferred from NVML's NVLink P2P status",
                    describe_remotes(&remotes[a])
                ),
            ));
        }
        let pcie = self
            .nvml
            .topology_common_ancestor(da, db)
            .ok()
            .map(pcie_path);
        let generation = topo.gpus[a].nvlink_generation;
        if let Some(link) = topo.link_mut(a, b) {
            link.pcie_path = pcie;
            link.kind = if nv > 0 { Some(LinkKind::Nv(nv)) } else { pcie };
            link.nvlink_generation = if nv > 0 { generation } else { None };
        }
    }

    /// The P2P capabilities of GPU `a` to GPU `b` from NVML, and CUDA's peer access and rank.
    fn p2p(&self, topo: &mut Topology, a: usize, b: usize) {
        let (da, db) = (self.devices[a], self.devices[b]);
        let mut caps = crate::model::P2pCaps::default();
        for (cap, index) in [
            (P2pCap::Read, P2pCapabilitiesIndex::Read),
            (P2pCap::Write, P2pCapabilitiesIndex::Write),
            (P2pCap::Nvlink, P2pCapabilitiesIndex::NvLink),
            (P2pCap::Atomics, P2pCapabilitiesIndex::Atomics),
        ] {
            caps.set(cap, da.p2p_status(db, index).ok().map(p2p_status));
        }
        if let Some(pair) = topo.p2p_mut(a, b) {
            pair.caps = caps;
            if self.cuda {
                pair.cuda_can_access_peer = cuda::can_access_peer(a, b).ok();
                pair.cuda_perf_rank = cuda::p2p_performance_rank(a, b).ok();
            }
        }
    }
}

/// Where one active NVLink goes.
#[derive(Clone, Debug, PartialEq)]
enum Remote {
    /// Another device, by PCI bus id.
    Bus(String),
    /// An NVSwitch.
    Switch,
    Unknown,
}

/// A short account of where a GPU's links lead, for notes: `18 × 00000000:00:00.0`.
fn describe_remotes(remotes: &[Remote]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for r in remotes {
        let name = match r {
            Remote::Bus(b) => b.clone(),
            Remote::Switch => "NVSwitch".to_string(),
            Remote::Unknown => "unknown".to_string(),
        };
        match seen.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => seen.push((name, 1)),
        }
    }
    seen.iter()
        .map(|(n, c)| format!("{c} × {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which GPU (position in `gpus`) each remote PCI id belongs to.
///
/// Normally a link's remote PCI id is the peer GPU's bus id. Inside a virtual machine NVML
/// reports the host's (physical) ids there while the GPUs carry the VM's ids, so nothing
/// matches; then a remote id is given to the one GPU whose own links never name it (a GPU's
/// links never lead to itself), which is unambiguous for fully connected GPUs. The flag says
/// whether that elimination was needed.
fn remote_owners(remotes: &[Vec<Remote>], gpus: &[Gpu]) -> (Vec<(String, usize)>, bool) {
    let mut owners: Vec<(String, usize)> = Vec::new();
    let mut unmatched: Vec<String> = Vec::new();
    for links in remotes {
        for r in links {
            if let Remote::Bus(bus) = r {
                if owners.iter().any(|(b, _)| b == bus) || unmatched.contains(bus) {
                    continue;
                }
                match gpus.iter().position(|g| {
                    g.pci_bus_id
                        .as_deref()
                        .is_some_and(|b| crate::model::same_pci_bus(b, bus))
                }) {
                    Some(i) => owners.push((bus.clone(), i)),
                    None => unmatched.push(bus.clone()),
                }
            }
        }
    }
    let mut eliminated = false;
    for bus in unmatched {
        let candidates: Vec<usize> = (0..gpus.len())
            .filter(|&g| {
                !remotes[g]
                    .iter()
                    .any(|r| matches!(r, Remote::Bus(b) if *b == bus))
            })
            .filter(|&g| !owners.iter().any(|(_, o)| *o == g))
            .collect();
        if let [only] = candidates[..] {
            owners.push((bus, only));
            eliminated = true;
        }
    }
    (owners, eliminated)
}

/// NVLinks between GPUs `a` and `b` (positions): direct links (a's links whose remote is b, and
/// the same seen from b, taking the larger count), or, on NVSwitch systems, every switch link the
/// two share — nvidia-smi reports NV18 between any two H100s of a DGX H100 because each has 18
/// links into the switch fabric.
fn nvlinks_between(remotes: &[Vec<Remote>], owners: &[(String, usize)], a: usize, b: usize) -> u32 {
    let to = |from: usize, target: usize| {
        remotes[from]
            .iter()
            .filter(|r| match r {
                Remote::Bus(bus) => owners.iter().any(|(ob, o)| ob == bus && *o == target),
                _ => false,
            })
            .count() as u32
    };
    let direct = to(a, b).max(to(b, a));
    if direct > 0 {
        return direct;
    }
    let switch = |g: usize| remotes[g].iter().filter(|r| **r == Remote::Switch).count() as u32;
    switch(a).min(switch(b))
}

/// The per-link, per-direction speed of a GPU's active NVLinks in GB/s, and where it came from;
/// or what was tried.
///
/// NVML's field values, in order: `NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON` (90, the common speed
/// of active links), `NVML_FI_DEV_NVLINK_GET_SPEED` (164, link 0), and
/// `NVML_FI_DEV_NVLINK_SPEED_MBPS_L0` (84). All are MB/s.
fn nvlink_speed_gbps(dev: &nvml_wrapper::Device) -> Result<(f64, String), String> {
    let mut tried = Vec::new();
    for (id, name) in [
        (
            FI_NVLINK_SPEED_MBPS_COMMON,
            "NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON",
        ),
        (FI_NVLINK_GET_SPEED, "NVML_FI_DEV_NVLINK_GET_SPEED"),
        (FI_NVLINK_SPEED_MBPS_L0, "NVML_FI_DEV_NVLINK_SPEED_MBPS_L0"),
    ] {
        let value = dev
            .field_values_for(&[FieldId(id)])
            .map_err(|e| e.to_string())
            .and_then(|v| {
                let sample: &FieldValueSample = v
                    .first()
                    .ok_or("no value")?
                    .as_ref()
                    .map_err(|e| e.to_string())?;
                match sample.value.as_ref().map_err(|e| e.to_string())? {
                    SampleValue::F64(v) => Ok(*v),
                    SampleValue::U32(v) => Ok(f64::from(*v)),
                    SampleValue::U64(v) => Ok(*v as f64),
                    SampleValue::I64(v) => Ok(*v as f64),
                }
            });
        match value {
            Ok(mbps) if mbps > 0.0 => {
                return Ok((mbps / 1000.0, format!("NVML {name}: {mbps} MB/s")));
            }
            Ok(v) => tried.push(format!("{name} = {v}")),
            Err(e) => tried.push(format!("{name}: {e}")),
        }
    }
    Err(tried.join("; "))
}

/// NVML's NVLink version enum (`NVML_NVLINK_VERSION_*`) → NVLink generation.
fn nvlink_generation(version: u32) -> Option<u32> {
    match version {
        1 => Some(1),
        2 | 3 => Some(2),
        4 | 5 => Some(3),
        6 => Some(4),
        7 => Some(5),
        _ => None,
    }
}

/// NVML's common-ancestor level → nvidia-smi's PCIe path code.
fn pcie_path(level: TopologyLevel) -> LinkKind {
    match level {
        TopologyLevel::Internal | TopologyLevel::Single => LinkKind::Pix,
        TopologyLevel::Multiple => LinkKind::Pxb,
        TopologyLevel::HostBridge => LinkKind::Phb,
        TopologyLevel::Node => LinkKind::Node,
        TopologyLevel::System => LinkKind::Sys,
    }
}

/// NVML's P2P status → nvidia-smi's code.
fn p2p_status(s: nvml_wrapper::enum_wrappers::device::P2pStatus) -> P2pStatus {
    use nvml_wrapper::enum_wrappers::device::P2pStatus as N;
    match s {
        N::Ok => P2pStatus::Ok,
        N::ChipsetNotSupported => P2pStatus::Cns,
        N::GpuNotSupported => P2pStatus::Gns,
        N::IohTopologyNotSupported => P2pStatus::Tns,
        N::DisabledByRegkey | N::NotSupported => P2pStatus::Ns,
        N::Unknown => P2pStatus::U,
    }
}

fn nvml_reason(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(inner) => inner.to_string(),
        other => other.to_string(),
    }
}

fn first_bit(mask: &[c_ulong]) -> Option<u32> {
    let bits = c_ulong::BITS;
    mask.iter()
        .enumerate()
        .find_map(|(w, word)| (*word != 0).then(|| w as u32 * bits + word.trailing_zeros()))
}

/// A CPU bitmask as nvidia-smi writes it: `0-31,64-95`.
fn cpu_ranges(mask: &[c_ulong]) -> String {
    let bits = c_ulong::BITS as usize;
    let set: Vec<usize> = (0..mask.len() * bits)
        .filter(|i| mask[i / bits] >> (i % bits) & 1 == 1)
        .collect();
    crate::model::quantities::runs(&set)
        .iter()
        .map(|&(start, end)| {
            if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// NVML positions visible under `CUDA_VISIBLE_DEVICES` (indices or UUID prefixes, as CUDA
/// accepts them; parsing stops at the first invalid entry, as CUDA's does).
fn visible_devices(var: Option<&str>, uuids: &[String]) -> Vec<usize> {
    let Some(var) = var else {
        return (0..uuids.len()).collect();
    };
    let mut out = Vec::new();
    for item in var.split(',').map(str::trim) {
        let found = if let Ok(i) = item.parse::<usize>() {
            (i < uuids.len()).then_some(i)
        } else if !item.is_empty() {
            let item = item.strip_prefix("GPU-").unwrap_or(item);
            uuids
                .iter()
                .position(|u| u.strip_prefix("GPU-").unwrap_or(u).starts_with(item))
        } else {
            None
        };
        match found {
            Some(i) if !out.contains(&i) => out.push(i),
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_mask_to_ranges() {
        assert_eq!(cpu_ranges(&[0xffff_ffff]), "0-31");
        assert_eq!(cpu_ranges(&[0b1011]), "0-1,3");
        assert_eq!(cpu_ranges(&[0, 1]), format!("{}", c_ulong::BITS));
        assert_eq!(cpu_ranges(&[0]), "");
        assert_eq!(first_bit(&[0, 0b100]), Some(c_ulong::BITS + 2));
        assert_eq!(first_bit(&[0]), None);
    }

    #[test]
    fn cuda_visible_devices_like_cuda() {
        let uuids: Vec<String> = ["GPU-aaaa", "GPU-bbbb", "GPU-cccc"]
            .map(String::from)
            .to_vec();
        assert_eq!(visible_devices(None, &uuids), vec![0, 1, 2]);
        assert_eq!(visible_devices(Some("2,0"), &uuids), vec![2, 0]);
        assert_eq!(visible_devices(Some("GPU-bb"), &uuids), vec![1]);
        assert_eq!(visible_devices(Some("1,7,0"), &uuids), vec![1]);
        assert_eq!(visible_devices(Some(""), &uuids), Vec::<usize>::new());
    }

    #[test]
    fn switch_links_count_as_a_bond() {
        let g = |i: usize, bus: &str| Gpu {
            index: i,
            pci_bus_id: Some(bus.into()),
            ..Default::default()
        };
        let gpus = [g(0, "0000:01:00.0"), g(1, "0000:02:00.0")];
        let direct = vec![vec![Remote::Bus("00000000:02:00.0".into()); 12], vec![]];
        let (owners, elim) = remote_owners(&direct, &gpus);
        assert!(!elim);
        assert_eq!(nvlinks_between(&direct, &owners, 0, 1), 12);
        let sw = vec![vec![Remote::Switch; 18], vec![Remote::Switch; 18]];
        assert_eq!(nvlinks_between(&sw, &[], 0, 1), 18);
        let half = vec![vec![Remote::Switch; 18], vec![]];
        assert_eq!(nvlinks_between(&half, &[], 0, 1), 0);
        assert_eq!(nvlink_generation(6), Some(4));
        assert_eq!(nvlink_generation(0), None);
    }

    #[test]
    fn vm_remote_ids_are_matched_by_elimination() {
        // Two GPUs seen as 00:06.0 and 00:07.0 in the VM; their links name host ids.
        let g = |i: usize, bus: &str| Gpu {
            index: i,
            pci_bus_id: Some(bus.into()),
            ..Default::default()
        };
        let gpus = [g(0, "00000000:00:06.0"), g(1, "00000000:00:07.0")];
        let remotes = vec![
            vec![Remote::Bus("00000000:1B:00.0".into()); 18],
            vec![Remote::Bus("00000000:18:00.0".into()); 18],
        ];
        let (owners, elim) = remote_owners(&remotes, &gpus);
        assert!(elim);
        assert_eq!(nvlinks_between(&remotes, &owners, 0, 1), 18);
        // Four fully connected GPUs, four links each way.
        let ids = ["A", "B", "C", "D"].map(|x| format!("0000:{x}0:00.0"));
        let gpus: Vec<Gpu> = (0..4).map(|i| g(i, &format!("0000:0{i}:00.0"))).collect();
        let remotes: Vec<Vec<Remote>> = (0..4)
            .map(|me| {
                (0..4)
                    .filter(|&o| o != me)
                    .flat_map(|o| vec![Remote::Bus(ids[o].clone()); 4])
                    .collect()
            })
            .collect();
        let (owners, _) = remote_owners(&remotes, &gpus);
        for a in 0..4 {
            for b in (a + 1)..4 {
                assert_eq!(nvlinks_between(&remotes, &owners, a, b), 4, "{a}-{b}");
            }
        }
    }
}
