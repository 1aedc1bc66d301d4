//! The machine: GPUs, NICs, how every GPU pair is connected and what P2P the driver allows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::link_codes::{LinkKind, P2pCaps, P2pStatus};
use super::linkrate::{nvlink_rate_per_link_gbps, pcie_rate_gbps};

/// The most GPUs one topology may hold, wherever it comes from (a capture, a catalog entry, an
/// agent's answer, a report).
///
/// A topology is dense in GPU pairs — a link per pair and a P2P entry per ordered pair, and every
/// matrix, table and document walks them — so its cost grows as the square of this count:
/// 1,024 GPUs are about 1.6 million pair entries, which model, print and write within seconds and
/// a few hundred MB. That is 14 NVL72 racks, and above the largest single NVLink domain
/// announced (NVL576); a larger count is a cluster, not one machine whose GPUs `nvidia-smi topo
/// -m` or NVML can list. Above it, inputs are refused with one line saying so, before the pairs
/// are built.
pub const MAX_GPUS: usize = 1024;

/// A PCI bus id as numbers that sort in bus order: domain, bus, device, function.
pub type BusKey = (u32, u32, u32, u32);

/// A PCI bus id as NVML, CUDA and nvidia-smi write it — `00000000:18:00.0`, `0000:18:00.0`,
/// `18:00.0` (domain 0), any case — as (domain, bus, device, function), so that their
/// spellings of one GPU compare equal. `None` when it is not one: each field hex of at most
/// 8, 2, 2 and 1 digits, device below 32 and function below 8 (the PCI limits).
pub fn pci_bus_key(s: &str) -> Option<BusKey> {
    let hex = |t: &str, most: usize| {
        (!t.is_empty() && t.len() <= most && t.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| u32::from_str_radix(t, 16).ok())
            .flatten()
    };
    let parts: Vec<&str> = s.trim().split(':').collect();
    let (domain, bus, rest) = match parts[..] {
        [d, b, r] => (hex(d, 8)?, b, r),
        [b, r] => (0, b, r),
        _ => return None,
    };
    let (device, function) = rest.split_once('.')?;
    let key = (domain, hex(bus, 2)?, hex(device, 2)?, hex(function, 1)?);
    (key.2 < 32 && key.3 < 8).then_some(key)
}

/// Whether two PCI bus ids name the same device ([`pci_bus_key`]); false when either is not
/// a bus id.
pub fn same_pci_bus(a: &str, b: &str) -> bool {
    pci_bus_key(a).is_some_and(|k| Some(k) == pci_bus_key(b))
}

/// `Ok` when `n` GPUs fit under [`MAX_GPUS`]; else the one-line reason, naming the count.
pub fn check_gpu_count(n: usize) -> Result<(), String> {
    if n > MAX_GPUS {
        Err(format!(
            "{n} GPUs: scalescope handles at most {MAX_GPUS} GPUs in one machine"
        ))
    } else {
        Ok(())
    }
}

/// Everything scalescope knows about how one machine's GPUs are connected.
///
/// `links` holds one entry per unordered GPU pair (`a < b`), `p2p` one per ordered pair
/// (`a != b`); both are sorted. Build one with [`Topology::new`] and then fill it, or call
/// [`Topology::normalize`] after filling the vectors directly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// Where this topology came from.
    pub source: TopologySource,
    /// When it was read, RFC 3339 UTC; `None` for catalog entries, which describe a design.
    pub captured_at: Option<String>,
    /// The GPUs, sorted by index. Read back from JSON (a report, an agent's answer), more than
    /// [`MAX_GPUS`] are refused.
    #[serde(deserialize_with = "at_most_max_gpus")]
    pub gpus: Vec<Gpu>,
    /// Network adapters (as `nvidia-smi topo -m` lists them), sorted by index.
    pub nics: Vec<Nic>,
    /// One entry per unordered GPU pair, `a < b`.
    pub links: Vec<GpuLink>,
    /// One entry per ordered GPU pair, `a != b`.
    pub p2p: Vec<P2pPair>,
    /// How each NIC reaches each GPU.
    pub nic_links: Vec<NicLink>,
    /// Facts about how values were obtained or why some are missing, for the user to read.
    #[serde(default)]
    pub notes: Vec<TopologyNote>,
    /// A rack-scale NVLink domain's physical layout (compute trays, switch trays), where the
    /// catalog states it; `None` for boxes and for what NVML and captures read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<Rack>,
}

/// How a rack-scale NVLink domain is built: GPUs in compute trays (GPU `i` in tray
/// `i / gpus_per_tray`), joined by NVLink switch trays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rack {
    pub gpus_per_tray: u32,
    /// CPUs in each compute tray (two Grace CPUs in a GB200 tray).
    pub cpus_per_tray: u32,
    pub switch_trays: u32,
}

/// `gpus` of a topology read from JSON, refused as soon as GPU [`MAX_GPUS`] + 1 arrives: the
/// one check for every topology that arrives as JSON (reports, an agent's answers and events).
fn at_most_max_gpus<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Gpu>, D::Error> {
    super::validate::at_most_or(d, MAX_GPUS, || {
        format!(
            "more than {MAX_GPUS} GPUs: scalescope handles at most {MAX_GPUS} GPUs in one machine"
        )
    })
}

/// A fact about how a topology's values were obtained, inferred or why some are missing: about
/// the machine, or about one GPU pair.
///
/// In JSON a note is one string, as reports have always held it: its text, or `GPU a–GPU b:
/// text` for a note about a pair. The type writes that string and reads it back itself, so the
/// pair survives a report's round trip and no reader parses a note's sentence. `kind` is not
/// written: it serves the importer while it merges captures, and a note read back from JSON is
/// [`NoteKind::Reading`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyNote {
    /// The sentence, without the pair.
    pub text: String,
    /// The GPU pair it is about (lower index first), if it is about one.
    pub pair: Option<(usize, usize)>,
    /// What it is about, for code that replaces notes.
    pub kind: NoteKind,
}

/// What a [`TopologyNote`] is about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NoteKind {
    /// How a value was read or inferred, or why it is missing.
    #[default]
    Reading,
    /// Where the line rates came from, or why they are unknown; a capture that brings line rates
    /// replaces it.
    LineRates,
}

impl TopologyNote {
    /// A note about the machine.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            pair: None,
            kind: NoteKind::Reading,
        }
    }

    /// A note about GPUs `a` and `b` (in either order).
    pub fn about_pair(a: usize, b: usize, text: impl Into<String>) -> Self {
        Self {
            pair: Some((a.min(b), a.max(b))),
            ..Self::new(text)
        }
    }

    /// A note on where the line rates came from (or why they are unknown).
    pub fn line_rates(text: impl Into<String>) -> Self {
        Self {
            kind: NoteKind::LineRates,
            ..Self::new(text)
        }
    }
}

impl fmt::Display for TopologyNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pair {
            Some((a, b)) => write!(f, "GPU {a}–GPU {b}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

impl FromStr for TopologyNote {
    type Err = std::convert::Infallible;

    /// Reads back what [`Display`](fmt::Display) writes: `GPU a–GPU b: text` is a note about
    /// that pair, any other string a note about the machine.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let pair = s.split_once(": ").and_then(|(pair, text)| {
            let (a, b) = pair.strip_prefix("GPU ")?.split_once("–GPU ")?;
            Some((a.parse().ok()?, b.parse().ok()?, text))
        });
        Ok(match pair {
            Some((a, b, text)) => Self::about_pair(a, b, text),
            None => Self::new(s),
        })
    }
}

impl Serialize for TopologyNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TopologyNote {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        let Ok(note) = s.parse();
        Ok(note)
    }
}

/// Where a [`Topology`] came from. Shown wherever the topology appears.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologySource {
    /// Read from this machine through NVML (and CUDA, where available).
    Live {
        hostname: Option<String>,
        driver_version: Option<String>,
        nvml_version: Option<String>,
        /// CUDA driver API version, e.g. 13000 for CUDA 13.0.
        cuda_driver_version: Option<i32>,
    },
    /// Parsed from `nvidia-smi topo` text captured on some machine.
    Imported {
        /// The files (or `-` for standard input) the text came from.
        paths: Vec<String>,
    },
    /// A hardware catalog entry: a machine as its vendor documents it, not one that was measured.
    Catalog {
        /// The catalog id, as `--catalog` takes it.
        id: String,
        /// Human-readable machine name.
        name: String,
    },
    /// The GPUs of a recorded soak (`soak.csv`, `check --soak-replay`): nothing but their
    /// numbers is known. (Added after the others: a file that names it does not load in a
    /// scalescope older than it; every older file loads.)
    SoakRecording {
        /// The recording's path as given.
        path: String,
    },
    /// The GPUs a reference tool's output names (nvbandwidth's device list, nccl-tests' ranks),
    /// imported without an `nvidia-smi` capture: how they connect is not known. (Added after
    /// the others, as `SoakRecording` was.)
    ToolOutput {
        /// The files (or `-` for standard input) the outputs came from.
        paths: Vec<String>,
    },
}

impl TopologySource {
    /// `live`, `imported`, `catalog` or `soak_recording` (the JSON `kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Live { .. } => "live",
            Self::Imported { .. } => "imported",
            Self::Catalog { .. } => "catalog",
            Self::SoakRecording { .. } => "soak_recording",
            Self::ToolOutput { .. } => "tool_output",
        }
    }

    /// One line naming the machine and how it is known, for people to read: `vm (measured
    /// live)`, `NVIDIA DGX H100 (catalog entry, not measured)`, `topo.txt (imported nvidia-smi
    /// output)`, `soak.csv (replay of a soak.csv recording)`. A topology travels in reports and
    /// over ssh, so the label names the host it was read on and never says "here": whether
    /// that is this machine is for the caller to say (the app's "measured here" badge). The
    /// words for what is made of a topology — a traffic recording replayed, a modeled report —
    /// build on this one (`WatchHeader::replay_label`, `report::summary::origin`). (Machine-read
    /// values use [`Self::kind`], which does not change.)
    pub fn label(&self) -> String {
        match self {
            Self::Live { hostname, .. } => format!(
                "{} (measured live)",
                hostname.as_deref().unwrap_or("this machine")
            ),
            Self::Imported { paths } => {
                format!("{} (imported nvidia-smi output)", paths.join(", "))
            }
            Self::Catalog { name, .. } => format!("{name} (catalog entry, not measured)"),
            Self::SoakRecording { path } => format!("{path} (replay of a soak.csv recording)"),
            Self::ToolOutput { paths } => {
                format!(
                    "{} (imported nvbandwidth/nccl-tests output)",
                    paths.join(", ")
                )
            }
        }
    }
}

/// One GPU. `index` is the number users pass to `--gpus`: the CUDA ordinal on a live machine
/// (after `CUDA_VISIBLE_DEVICES`), nvidia-smi's GPU number in an import.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    pub index: usize,
    pub name: Option<String>,
    pub uuid: Option<String>,
    /// PCI bus id as NVML writes it, e.g. `00000000:00:06.0`.
    pub pci_bus_id: Option<String>,
    /// Total device memory in MiB.
    pub memory_mib: Option<u64>,
    pub pcie: PcieLink,
    /// The NUMA node closest to the GPU (nvidia-smi's "NUMA Affinity").
    pub numa_node: Option<u32>,
    /// CPUs close to the GPU, as nvidia-smi writes them, e.g. `0-31,64-95`.
    pub cpu_affinity: Option<String>,
    /// NVLinks active on this GPU, to any peer or switch.
    pub nvlinks_active: Option<u32>,
    /// Per-link, per-direction NVLink rate in GB/s, as NVML reports it.
    pub nvlink_gbps_per_link: Option<f64>,
    /// NVLink generation (4 on Hopper).
    pub nvlink_generation: Option<u32>,
    /// NVML's index for this GPU, which may differ from `index`.
    pub nvml_index: Option<u32>,
    /// The GPU's link to its CPU where it is not PCIe (a Grace CPU over NVLink-C2C); `None`:
    /// the PCIe link is the host link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<HostLink>,
}

impl Gpu {
    /// The line rate of the GPU's link to host memory, per direction: its [`HostLink`] where it
    /// has one, else its PCIe link.
    pub fn host_line_rate_gbps(&self) -> Option<f64> {
        match &self.host_link {
            Some(h) => Some(h.gbps),
            None => self.pcie.line_rate_gbps(),
        }
    }
}

/// The NVLink-C2C host link of a Grace superchip's GPU, from the name nvidia-smi gives it:
/// GB200 and GB300 (one Grace, two GPUs: 900 GB/s bidirectional per superchip, 450 GB/s per
/// direction shared by the two), GH200 (one Grace, one GPU: 450 GB/s per direction). `None` for
/// every other GPU.
pub fn grace_host_link(name: &str) -> Option<HostLink> {
    let n = name.to_ascii_uppercase();
    let (shared_by, what) = if n.contains("GB200") || n.contains("GB300") {
        (
            2,
            "GB200/GB300 superchip: 900 GB/s bidirectional, shared by its two GPUs",
        )
    } else if n.contains("GH200") {
        (1, "GH200 superchip: 900 GB/s bidirectional")
    } else {
        return None;
    };
    Some(HostLink {
        kind: "NVLink-C2C".into(),
        gbps: 450.0,
        shared_by,
        basis: format!("from the GPU's name ({name}): NVLink-C2C of a {what}"),
    })
}

/// A GPU's link to its CPU other than PCIe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostLink {
    /// `NVLink-C2C`.
    pub kind: String,
    /// Line rate per direction, GB/s.
    pub gbps: f64,
    /// GPUs sharing the link's rate (the two GPUs of a GB200 superchip share their Grace's).
    pub shared_by: u32,
    /// Where the figure is from.
    pub basis: String,
}

/// A GPU's PCIe link to its upstream port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    pub gen_current: Option<u32>,
    pub gen_max: Option<u32>,
    pub width_current: Option<u32>,
    pub width_max: Option<u32>,
}

impl PcieLink {
    /// Why a reading cannot be a PCIe link, if it cannot: a generation no PCIe has, a width
    /// PCIe does not define, or a current generation or width above the link's maximum (an
    /// edited capture: `Gen99`, `x32` of an x16 link).
    pub fn implausible(&self) -> Option<String> {
        let gens = [("current", self.gen_current), ("maximum", self.gen_max)];
        if let Some((which, g)) = gens.iter().find_map(|(w, g)| {
            g.filter(|g| pcie_rate_gbps(*g, 1).is_none())
                .map(|g| (w, g))
        }) {
            return Some(format!(
                "PCIe link: {which} generation {g} is not a PCIe generation"
            ));
        }
        let widths = [("current", self.width_current), ("maximum", self.width_max)];
        if let Some((which, w)) = widths.iter().find_map(|(which, w)| {
            w.filter(|w| !super::linkrate::PCIE_WIDTHS.contains(w))
                .map(|w| (which, w))
        }) {
            return Some(format!(
                "PCIe link: {which} width x{w} is not a PCIe width (x1, x2, x4, x8, x12, x16, x32)"
            ));
        }
        match (
            self.gen_current,
            self.gen_max,
            self.width_current,
            self.width_max,
        ) {
            (Some(c), Some(m), _, _) if c > m => Some(format!(
                "PCIe link: current generation {c} is above the link's maximum {m}"
            )),
            (_, _, Some(c), Some(m)) if c > m => Some(format!(
                "PCIe link: current width x{c} is above the link's maximum x{m}"
            )),
            _ => None,
        }
    }

    /// Line rate per direction in GB/s at the link's maximum generation and width.
    ///
    /// GPUs drop their PCIe generation when idle to save power, so the current generation says
    /// little; the maximum is what the link trains to under load.
    pub fn line_rate_gbps(&self) -> Option<f64> {
        pcie_rate_gbps(
            self.gen_max.or(self.gen_current)?,
            self.width_max.or(self.width_current)?,
        )
    }

    /// `Gen5 x16`, or `Gen4 x8 (max Gen4 x16)` when the link runs below its maximum.
    pub fn describe(&self) -> String {
        let part = |g: Option<u32>, w: Option<u32>| {
            format!(
                "Gen{} x{}",
                g.map_or("?".to_string(), |g| g.to_string()),
                w.map_or("?".to_string(), |w| w.to_string())
            )
        };
        let current = part(self.gen_current, self.width_current);
        let max = part(self.gen_max, self.width_max);
        if self.gen_current.is_none() && self.width_current.is_none() {
            if self.gen_max.is_none() && self.width_max.is_none() {
                "—".to_string()
            } else {
                format!("max {max}")
            }
        } else if current == max || (self.gen_max.is_none() && self.width_max.is_none()) {
            current
        } else {
            format!("{current} (max {max})")
        }
    }
}

/// The connection between two GPUs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuLink {
    /// The lower GPU index.
    pub a: usize,
    /// The higher GPU index.
    pub b: usize,
    /// What `nvidia-smi topo -m` shows for the pair; `None` when unknown.
    pub kind: Option<LinkKind>,
    /// The PCIe path between the pair, when known separately (`topo -mp`, or NVML for NVLink pairs).
    pub pcie_path: Option<LinkKind>,
    /// NVLink generation of the pair's links, when known.
    pub nvlink_generation: Option<u32>,
    /// Per-direction line rate; `None` when it cannot be derived.
    pub line_rate: Option<LineRate>,
}

impl GpuLink {
    /// An NVLink bond none of whose links is up: `running::as_running` keeps such a pair's `NV#`
    /// at line rate 0. What the driver does then (PCIe, or no peer access) is not known.
    pub fn no_nvlink_up(&self) -> bool {
        matches!(self.kind, Some(LinkKind::Nv(_)))
            && self.line_rate.as_ref().is_some_and(|r| r.gbps <= 0.0)
    }

    /// A link with nothing known yet.
    pub fn unknown(a: usize, b: usize) -> Self {
        Self {
            a: a.min(b),
            b: a.max(b),
            kind: None,
            pcie_path: None,
            nvlink_generation: None,
            line_rate: None,
        }
    }

    /// NVLinks between the pair: `Some(0)` when known to be none, `None` when unknown.
    pub fn nvlinks(&self) -> Option<u32> {
        match self.kind {
            Some(LinkKind::Nv(n)) => Some(n),
            Some(_) => Some(0),
            None => None,
        }
    }
}

/// A per-direction line rate and how it was derived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LineRate {
    /// GB/s per direction (10^9 bytes/s).
    pub gbps: f64,
    /// How the figure was derived, e.g. `18 NVLinks × 26.562 GB/s (NVML)`.
    pub basis: String,
}

/// P2P capability from GPU `a` to GPU `b` (an ordered pair).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct P2pPair {
    pub a: usize,
    pub b: usize,
    pub caps: P2pCaps,
    /// CUDA's `cuDeviceCanAccessPeer(a, b)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_can_access_peer: Option<bool>,
    /// CUDA's P2P performance rank for the pair (lower is better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_perf_rank: Option<i32>,
}

/// A network adapter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Nic {
    pub index: usize,
    /// Device name, e.g. `mlx5_0`.
    pub name: String,
    /// nvidia-smi's column label, e.g. `NIC0`, when it uses a NIC legend.
    pub label: Option<String>,
    /// Per-direction line rate in GB/s (400 Gb/s NDR InfiniBand = 50 GB/s), when known.
    pub line_rate_gbps: Option<f64>,
}

impl Nic {
    /// The NIC's column in the matrix: nvidia-smi's label (`NIC0`, newer drivers, with a NIC
    /// legend), else its device name (`mlx5_0`, as older drivers head the column).
    pub fn column_label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.name)
    }
}

/// How a NIC reaches a GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NicLink {
    pub nic: usize,
    pub gpu: usize,
    pub kind: LinkKind,
}

impl Topology {
    /// NIC `nic`'s column label ([`Nic::column_label`]); `NIC{nic}` for one not listed. The
    /// terminal's matrix, the app's and the report's drawings all head NIC columns by it.
    pub fn nic_label(&self, nic: usize) -> String {
        self.nics
            .iter()
            .find(|n| n.index == nic)
            .map_or_else(|| format!("NIC{nic}"), |n| n.column_label().to_string())
    }

    /// nvidia-smi's NIC legend: `NIC0: mlx5_0` for each NIC whose column is headed by a label
    /// other than its name; empty when every column shows the name itself.
    pub fn nic_legend(&self) -> Vec<String> {
        self.nics
            .iter()
            .filter(|n| n.column_label() != n.name)
            .map(|n| format!("{}: {}", n.column_label(), n.name))
            .collect()
    }

    /// One line's facts, for the app's header and the report's first page: GPUs, NICs, NUMA
    /// nodes, the driver or where the topology came from, when it was read.
    pub fn facts(&self) -> Vec<String> {
        let plural = |n: usize, what: &str| {
            if n == 1 {
                format!("1 {what}")
            } else {
                format!("{n} {what}s")
            }
        };
        let numa = self
            .numa_groups()
            .iter()
            .filter(|(n, _)| n.is_some())
            .count();
        let mut facts = vec![
            plural(self.gpus.len(), "GPU"),
            plural(self.nics.len(), "NIC"),
        ];
        if numa > 0 {
            facts.push(plural(numa, "NUMA node"));
        }
        match &self.source {
            TopologySource::Live {
                driver_version,
                cuda_driver_version,
                ..
            } => {
                facts.push(format!(
                    "driver {}",
                    driver_version.as_deref().unwrap_or("—")
                ));
                if let Some(v) = cuda_driver_version {
                    facts.push(format!("CUDA {}.{}", v / 1000, (v % 1000) / 10));
                }
            }
            TopologySource::Imported { .. } => facts.push("parsed from nvidia-smi output".into()),
            TopologySource::Catalog { .. } => {
                facts.push("figures documented by the vendor, not measured".into());
            }
            TopologySource::SoakRecording { .. } => {
                facts.push("GPUs as a soak.csv recording numbers them".into());
            }
            TopologySource::ToolOutput { .. } => facts
                .push("GPUs as nvbandwidth/nccl-tests output names them; links not known".into()),
        }
        if let Some(at) = &self.captured_at {
            facts.push(format!("captured {at}"));
        }
        facts
    }

    /// The machine's name for titles: the catalog entry's name, the live host's name, or the
    /// imported files' names.
    pub fn title(&self) -> String {
        match &self.source {
            TopologySource::Catalog { name, .. } => name.clone(),
            TopologySource::Live { hostname, .. } => hostname
                .clone()
                .unwrap_or_else(|| "This machine".to_string()),
            TopologySource::Imported { paths } | TopologySource::ToolOutput { paths } => {
                let names: Vec<&str> = paths
                    .iter()
                    .map(|p| {
                        std::path::Path::new(p)
                            .file_name()
                            .and_then(|n| n.to_str())
                            .unwrap_or(p)
                    })
                    .collect();
                if names.is_empty() {
                    "Imported topology".to_string()
                } else {
                    names.join(", ")
                }
            }
            TopologySource::SoakRecording { path } => std::path::Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(path)
                .to_string(),
        }
    }

    /// An empty topology from `source`; fill `gpus` (and the rest), then call [`Self::normalize`].
    pub fn new(source: TopologySource) -> Self {
        Self {
            source,
            captured_at: None,
            gpus: Vec::new(),
            nics: Vec::new(),
            links: Vec::new(),
            p2p: Vec::new(),
            nic_links: Vec::new(),
            notes: Vec::new(),
            rack: None,
        }
    }

    /// The NVLink bond every pair of `gpus` shares (`NV18` behind NVLink switches); `None` when a
    /// pair is not NVLink, not known, or bonds differ.
    pub fn common_nvlink_bond(&self, gpus: &[usize]) -> Option<u32> {
        let mut bond = None;
        for (i, &a) in gpus.iter().enumerate() {
            for &b in &gpus[i + 1..] {
                let n = self.link(a, b)?.kind?.nvlinks()?;
                if bond.is_some_and(|m| m != n) {
                    return None;
                }
                bond = Some(n);
            }
        }
        bond
    }

    /// GPU indices in order.
    pub fn gpu_indices(&self) -> Vec<usize> {
        self.gpus.iter().map(|g| g.index).collect()
    }

    /// The GPU with this index.
    pub fn gpu(&self, index: usize) -> Option<&Gpu> {
        // Sorted after `normalize`: a binary search, then a scan for unsorted data.
        match self.gpus.binary_search_by_key(&index, |g| g.index) {
            Ok(i) => Some(&self.gpus[i]),
            Err(_) => self.gpus.iter().find(|g| g.index == index),
        }
    }

    /// Position of the link `lo`–`hi` in `links` (binary search on sorted links, else a scan).
    fn link_pos(&self, a: usize, b: usize) -> Option<usize> {
        let key = (a.min(b), a.max(b));
        // A normalized topology of GPUs 0..n holds every pair in order: the place is computed
        // (a binary search per lookup was a fifth of modeling every pair of 1,000 GPUs).
        let n = self.gpus.len();
        if key.0 < key.1 && key.1 < n && self.links.len() == n * (n - 1) / 2 {
            let (lo, hi) = key;
            let i = lo * (2 * n - lo - 1) / 2 + (hi - lo - 1);
            if self.links.get(i).is_some_and(|l| (l.a, l.b) == key) {
                return Some(i);
            }
        }
        self.links
            .binary_search_by_key(&key, |l| (l.a, l.b))
            .ok()
            .or_else(|| self.links.iter().position(|l| (l.a, l.b) == key))
    }

    /// Position of the P2P entry `a` → `b` in `p2p`.
    fn p2p_pos(&self, a: usize, b: usize) -> Option<usize> {
        // As `link_pos`: every ordered pair of GPUs 0..n in order, the place is computed.
        let n = self.gpus.len();
        if a != b && a < n && b < n && self.p2p.len() == n * (n - 1) {
            let i = a * (n - 1) + b - usize::from(b > a);
            if self.p2p.get(i).is_some_and(|p| (p.a, p.b) == (a, b)) {
                return Some(i);
            }
        }
        self.p2p
            .binary_search_by_key(&(a, b), |p| (p.a, p.b))
            .ok()
            .or_else(|| self.p2p.iter().position(|p| (p.a, p.b) == (a, b)))
    }

    /// The link between two GPUs, in either order.
    pub fn link(&self, a: usize, b: usize) -> Option<&GpuLink> {
        self.link_pos(a, b).map(|i| &self.links[i])
    }

    /// Mutable access to the link between two GPUs, in either order.
    pub fn link_mut(&mut self, a: usize, b: usize) -> Option<&mut GpuLink> {
        self.link_pos(a, b).map(|i| &mut self.links[i])
    }

    /// P2P capability from `a` to `b`.
    pub fn p2p(&self, a: usize, b: usize) -> Option<&P2pPair> {
        self.p2p_pos(a, b).map(|i| &self.p2p[i])
    }

    /// Whether GPUs `a` and `b` can access each other's memory for copies both ways, as far as
    /// the topology says: `Some(true)` over NVLink, or when every stated read/write status is OK
    /// (else CUDA's answer) both ways; `Some(false)` when a status (`CNS`, `GNS`, `TNS`, `NS`) or
    /// CUDA refuses it either way — a pair that reads but may not write is not taken as working
    /// for both; `None` when nothing is stated (a catalog entry that leaves it undocumented, the
    /// driver's `U`).
    pub fn peer_access(&self, a: usize, b: usize) -> Option<bool> {
        if matches!(self.link(a, b).and_then(|l| l.kind), Some(LinkKind::Nv(_))) {
            return Some(true);
        }
        let one_way = |x: usize, y: usize| -> Option<bool> {
            let p = self.p2p(x, y)?;
            let stated: Vec<P2pStatus> = [p.caps.read, p.caps.write]
                .into_iter()
                .flatten()
                .filter(|s| *s != P2pStatus::U)
                .collect();
            if stated.iter().any(|s| *s != P2pStatus::Ok) || p.cuda_can_access_peer == Some(false) {
                Some(false)
            } else if !stated.is_empty() || p.cuda_can_access_peer == Some(true) {
                Some(true)
            } else {
                None
            }
        };
        match (one_way(a, b), one_way(b, a)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        }
    }

    /// Mutable P2P entry from `a` to `b`.
    pub fn p2p_mut(&mut self, a: usize, b: usize) -> Option<&mut P2pPair> {
        self.p2p_pos(a, b).map(|i| &mut self.p2p[i])
    }

    /// How NIC `nic` reaches GPU `gpu`.
    pub fn nic_link(&self, nic: usize, gpu: usize) -> Option<LinkKind> {
        let i = self
            .nic_links
            .binary_search_by_key(&(nic, gpu), |l| (l.nic, l.gpu))
            .ok()
            .or_else(|| {
                self.nic_links
                    .iter()
                    .position(|l| (l.nic, l.gpu) == (nic, gpu))
            })?;
        Some(self.nic_links[i].kind)
    }

    /// Sorts everything and makes sure there is a link for every GPU pair and a P2P entry for
    /// every ordered pair (unknown where nothing was filled in). Entries naming GPUs that do not
    /// exist are dropped.
    pub fn normalize(&mut self) {
        // O(n² log n) in the GPU count at worst (the sorts; already-sorted input is linear):
        // no scan per pair, which made a 1000-GPU import (10^6 pairs) take minutes.
        self.gpus.sort_by_key(|g| g.index);
        self.nics.sort_by_key(|n| n.index);
        let idx = self.gpu_indices();
        let known = |i: usize| idx.binary_search(&i).is_ok();
        self.links.retain(|l| l.a < l.b && known(l.a) && known(l.b));
        self.p2p.retain(|p| p.a != p.b && known(p.a) && known(p.b));
        self.links.sort_by_key(|l| (l.a, l.b));
        self.p2p.sort_by_key(|p| (p.a, p.b));
        // Walk the expected pairs beside the sorted entries; add what is missing.
        let mut missing_links = Vec::new();
        let mut missing_p2p = Vec::new();
        let (mut li, mut pi) = (0, 0);
        for (i, &a) in idx.iter().enumerate() {
            for &b in &idx {
                if a == b {
                    continue;
                }
                while self.p2p.get(pi).is_some_and(|p| (p.a, p.b) < (a, b)) {
                    pi += 1;
                }
                if self.p2p.get(pi).is_none_or(|p| (p.a, p.b) != (a, b)) {
                    missing_p2p.push(P2pPair {
                        a,
                        b,
                        ..Default::default()
                    });
                }
            }
            for &b in &idx[i + 1..] {
                while self.links.get(li).is_some_and(|l| (l.a, l.b) < (a, b)) {
                    li += 1;
                }
                if self.links.get(li).is_none_or(|l| (l.a, l.b) != (a, b)) {
                    missing_links.push(GpuLink::unknown(a, b));
                }
            }
        }
        if !missing_links.is_empty() {
            self.links.extend(missing_links);
            self.links.sort_by_key(|l| (l.a, l.b));
        }
        if !missing_p2p.is_empty() {
            self.p2p.extend(missing_p2p);
            self.p2p.sort_by_key(|p| (p.a, p.b));
        }
        self.nic_links.sort_by_key(|l| (l.nic, l.gpu));
    }

    /// Derives each pair's line rate where none is set yet.
    ///
    /// NVLink pairs: links × the per-link rate NVML reported for the pair's GPUs, else the rate
    /// of the pair's NVLink generation. PCIe pairs: the slower endpoint's PCIe generation × width.
    /// Pairs where neither is known stay `None`.
    pub fn derive_line_rates(&mut self) {
        // A Grace superchip's GPU reaches its CPU over NVLink-C2C, which neither NVML's PCIe
        // figures nor a capture states: known from the GPU's name.
        for g in &mut self.gpus {
            if g.host_link.is_none() {
                g.host_link = g.name.as_deref().and_then(grace_host_link);
            }
        }
        let gpus: std::collections::BTreeMap<usize, Gpu> =
            self.gpus.iter().map(|g| (g.index, g.clone())).collect();
        let find = |i: usize| gpus.get(&i);
        let speed_from = match self.source {
            TopologySource::Live { .. } => "NVML",
            TopologySource::Catalog { .. } => "catalog",
            TopologySource::Imported { .. } | TopologySource::ToolOutput { .. } => "imported",
            TopologySource::SoakRecording { .. } => "recorded",
        };
        for link in &mut self.links {
            if link.line_rate.is_some() {
                continue;
            }
            let (Some(ga), Some(gb)) = (find(link.a), find(link.b)) else {
                continue;
            };
            link.line_rate = match link.kind {
                Some(LinkKind::Nv(n)) => {
                    nvlink_line_rate(n, ga, gb, link.nvlink_generation, speed_from)
                }
                Some(_) => pcie_line_rate(ga, gb),
                None => None,
            };
        }
    }

    /// GPUs grouped by NUMA node (sorted; GPUs with no known node last, under `None`).
    pub fn numa_groups(&self) -> Vec<(Option<u32>, Vec<usize>)> {
        let mut groups: Vec<(Option<u32>, Vec<usize>)> = Vec::new();
        for g in &self.gpus {
            match groups.iter_mut().find(|(n, _)| *n == g.numa_node) {
                Some((_, v)) => v.push(g.index),
                None => groups.push((g.numa_node, vec![g.index])),
            }
        }
        groups.sort_by_key(|(n, _)| (n.is_none(), *n));
        groups
    }

    /// A copy holding only the given GPUs (and their links), for runs over a subset.
    pub fn subset(&self, indices: &[usize]) -> Topology {
        let mut t = self.clone();
        t.gpus.retain(|g| indices.contains(&g.index));
        t.normalize();
        t.nic_links.retain(|l| indices.contains(&l.gpu));
        t
    }
}

fn nvlink_line_rate(
    n: u32,
    a: &Gpu,
    b: &Gpu,
    generation: Option<u32>,
    speed_from: &str,
) -> Option<LineRate> {
    let nvml_rate = match (a.nvlink_gbps_per_link, b.nvlink_gbps_per_link) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    };
    if let Some(per) = nvml_rate {
        return Some(LineRate {
            gbps: f64::from(n) * per,
            basis: format!("{n} NVLinks × {per:.3} GB/s ({speed_from})"),
        });
    }
    let generation = generation.or(a.nvlink_generation).or(b.nvlink_generation)?;
    let per = nvlink_rate_per_link_gbps(generation)?;
    Some(LineRate {
        gbps: f64::from(n) * per,
        basis: format!("{n} NVLinks × {per} GB/s (NVLink {generation})"),
    })
}

fn pcie_line_rate(a: &Gpu, b: &Gpu) -> Option<LineRate> {
    let (ra, rb) = (a.pcie.line_rate_gbps()?, b.pcie.line_rate_gbps()?);
    let slower = if ra <= rb { a } else { b };
    let generation = slower.pcie.gen_max.or(slower.pcie.gen_current)?;
    let width = slower.pcie.width_max.or(slower.pcie.width_current)?;
    Some(LineRate {
        gbps: ra.min(rb),
        basis: format!("PCIe Gen{generation} x{width}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pci_bus_id_reads_the_same_in_every_spelling_and_nothing_else_reads_as_one() {
        let key = Some((0, 0x18, 0, 0));
        for s in [
            "00000000:18:00.0",
            "0000:18:00.0",
            "18:00.0",
            " 0000:18:00.0 ",
        ] {
            assert_eq!(pci_bus_key(s), key, "{s}");
        }
        assert_eq!(pci_bus_key("0000:3B:00.1"), Some((0, 0x3b, 0, 1)));
        assert!(same_pci_bus("00000000:9A:00.0", "0000:9a:00.0"));
        assert!(same_pci_bus("18:00.0", "00000000:18:00.0"));
        assert!(!same_pci_bus("0000:19:00.0", "0000:1a:00.0"));
        assert!(!same_pci_bus("garbage", "garbage"));
        for bad in [
            "garbage",
            "",
            "0000:18:00",
            "0000:018:00.0",
            "0000:18:20.0",
            "0000:18:00.8",
            "+000:18:00.0",
            "0000:18:00.0:1",
            "000000000:18:00.0",
            "zz:00.0",
        ] {
            assert_eq!(pci_bus_key(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn notes_keep_their_pair_through_json() {
        let notes = vec![
            TopologyNote::new("NVLink speed per link from NVML"),
            TopologyNote::about_pair(3, 1, "NV18 inferred"),
            TopologyNote::line_rates("line rates unknown"),
        ];
        let json = serde_json::to_string(&notes).unwrap();
        assert_eq!(
            json,
            r#"["NVLink speed per link from NVML","GPU 1–GPU 3: NV18 inferred","line rates unknown"]"#
        );
        let back: Vec<TopologyNote> = serde_json::from_str(&json).unwrap();
        assert_eq!(back[1].pair, Some((1, 3)));
        assert_eq!(back[1].text, "NV18 inferred");
        assert_eq!(back[0], notes[0]);
        // The kind is not written: read back, every note is a reading.
        assert_eq!(back[2].kind, NoteKind::Reading);
        for plain in [
            "GPU 0: PCIe Gen3 x8",
            "GPU x–GPU 1: y",
            "GPU 0–GPU 1 without colon",
        ] {
            assert_eq!(plain.parse::<TopologyNote>().unwrap().pair, None, "{plain}");
        }
    }

    fn gpu(index: usize, generation: u32, width: u32) -> Gpu {
        Gpu {
            index,
            pcie: PcieLink {
                gen_current: Some(1),
                gen_max: Some(generation),
                width_current: Some(width),
                width_max: Some(width),
            },
            ..Default::default()
        }
    }

    /// The computed places of `link`/`p2p` on a normalized topology agree with a scan, and a
    /// topology whose GPUs are not 0..n (or whose lists are out of order) still finds its pairs.
    #[test]
    fn pair_lookups_agree_with_a_scan() {
        for gpus in [vec![0, 1, 2, 3, 4], vec![0, 2, 5, 6], vec![3], vec![]] {
            let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
            t.gpus = gpus.iter().map(|&i| gpu(i, 5, 16)).collect();
            t.normalize();
            for &a in &gpus {
                for &b in &gpus {
                    let link = t.links.iter().find(|l| (l.a, l.b) == (a.min(b), a.max(b)));
                    let p2p = t.p2p.iter().find(|p| (p.a, p.b) == (a, b));
                    assert_eq!(t.link(a, b).map(|l| (l.a, l.b)), link.map(|l| (l.a, l.b)));
                    assert_eq!(t.p2p(a, b).map(|p| (p.a, p.b)), p2p.map(|p| (p.a, p.b)));
                }
            }
            assert!(t.link(0, 99).is_none() && t.p2p(99, 0).is_none());
            // Out of order (as a hand-built topology may be): still found.
            t.links.reverse();
            t.p2p.reverse();
            for &a in &gpus {
                for &b in gpus.iter().filter(|&&b| b != a) {
                    assert_eq!(t.link(a, b).map(|l| (l.a, l.b)), Some((a.min(b), a.max(b))));
                    assert_eq!(t.p2p(a, b).map(|p| (p.a, p.b)), Some((a, b)));
                }
            }
        }
    }

    fn two_gpus(kind: LinkKind) -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = vec![gpu(0, 5, 16), gpu(1, 4, 16)];
        t.normalize();
        t.link_mut(0, 1).unwrap().kind = Some(kind);
        t
    }

    #[test]
    fn nvlink_rate_prefers_nvml_per_link_speed() {
        let mut t = two_gpus(LinkKind::Nv(18));
        t.source = TopologySource::Live {
            hostname: None,
            driver_version: None,
            nvml_version: None,
            cuda_driver_version: None,
        };
        for g in &mut t.gpus {
            g.nvlink_gbps_per_link = Some(26.562);
            g.nvlink_generation = Some(4);
        }
        t.derive_line_rates();
        let rate = t.link(1, 0).unwrap().line_rate.clone().unwrap();
        assert!((rate.gbps - 478.116).abs() < 1e-9, "{}", rate.gbps);
        assert!(rate.basis.contains("NVML"));
    }

    #[test]
    fn nvlink_rate_falls_back_to_generation_table() {
        let mut t = two_gpus(LinkKind::Nv(12));
        t.gpus[0].nvlink_generation = Some(3);
        t.derive_line_rates();
        assert_eq!(
            t.link(0, 1).unwrap().line_rate.as_ref().unwrap().gbps,
            300.0
        );
    }

    #[test]
    fn nvlink_rate_unknown_without_speed_or_generation() {
        let mut t = two_gpus(LinkKind::Nv(4));
        t.derive_line_rates();
        assert_eq!(t.link(0, 1).unwrap().line_rate, None);
    }

    #[test]
    fn pcie_pair_takes_the_slower_endpoint() {
        let mut t = two_gpus(LinkKind::Sys);
        t.derive_line_rates();
        let rate = t.link(0, 1).unwrap().line_rate.clone().unwrap();
        assert!((rate.gbps - 31.508).abs() < 0.01);
        assert_eq!(rate.basis, "PCIe Gen4 x16");
    }

    #[test]
    fn normalize_fills_every_pair() {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..4).rev().map(|i| gpu(i, 4, 16)).collect();
        t.normalize();
        assert_eq!(t.links.len(), 6);
        assert_eq!(t.p2p.len(), 12);
        assert_eq!(t.gpu_indices(), vec![0, 1, 2, 3]);
        let sub = t.subset(&[1, 3]);
        assert_eq!(sub.links.len(), 1);
        assert_eq!(sub.p2p.len(), 2);
    }

    #[test]
    fn json_uses_nvidia_smi_codes() {
        let mut t = two_gpus(LinkKind::Nv(18));
        t.p2p_mut(0, 1).unwrap().caps.read = Some(P2pStatus::Ok);
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"kind\":\"NV18\""), "{json}");
        assert!(json.contains("\"read\":\"OK\""), "{json}");
        let back: Topology = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }

    /// A topology in JSON with more GPUs than scalescope handles is refused by name, at the
    /// first GPU too many (no links are needed for the count).
    #[test]
    fn json_with_too_many_gpus_is_refused() {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..MAX_GPUS).map(|i| gpu(i, 5, 16)).collect();
        let json = serde_json::to_string(&t).unwrap();
        assert!(serde_json::from_str::<Topology>(&json).is_ok());
        t.gpus.push(gpu(MAX_GPUS, 5, 16));
        let json = serde_json::to_string(&t).unwrap();
        let e = serde_json::from_str::<Topology>(&json)
            .unwrap_err()
            .to_string();
        assert!(e.contains("more than 1024 GPUs"), "{e}");
    }

    /// The JSON `kind`s written before the soak recording still load as they were; the soak
    /// recording has its own kind and words, never an import's.
    #[test]
    fn source_kinds_stay_and_a_soak_recording_says_what_it_is() {
        for (json, kind) in [
            (r#"{"kind":"live","hostname":"vm"}"#, "live"),
            (r#"{"kind":"imported","paths":["topo.txt"]}"#, "imported"),
            (
                r#"{"kind":"catalog","id":"dgx-h100","name":"DGX H100"}"#,
                "catalog",
            ),
        ] {
            let s: TopologySource = serde_json::from_str(json).unwrap();
            assert_eq!(s.kind(), kind);
        }
        let s = TopologySource::SoakRecording {
            path: "runs/soak.csv".into(),
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"kind":"soak_recording","path":"runs/soak.csv"}"#);
        assert_eq!(serde_json::from_str::<TopologySource>(&json).unwrap(), s);
        assert_eq!(s.label(), "runs/soak.csv (replay of a soak.csv recording)");
        assert_eq!(Topology::new(s).title(), "soak.csv");
    }

    #[test]
    fn pcie_describe() {
        let p = PcieLink {
            gen_current: Some(5),
            gen_max: Some(5),
            width_current: Some(16),
            width_max: Some(16),
        };
        assert_eq!(p.describe(), "Gen5 x16");
        let p = PcieLink {
            gen_current: Some(1),
            ..p
        };
        assert_eq!(p.describe(), "Gen1 x16 (max Gen5 x16)");
        assert_eq!(PcieLink::default().describe(), "—");
    }

    #[test]
    fn peer_access_is_known_only_where_stated_and_refused_by_any_refusal() {
        let mut t = two_gpus(LinkKind::Sys);
        t.derive_line_rates();
        assert_eq!(t.peer_access(0, 1), None, "nothing stated");
        let set = |t: &mut Topology, read: Option<P2pStatus>, write: Option<P2pStatus>| {
            for (a, b) in [(0, 1), (1, 0)] {
                let p = t.p2p_mut(a, b).unwrap();
                p.caps.read = read;
                p.caps.write = write;
            }
        };
        set(&mut t, Some(P2pStatus::Ok), Some(P2pStatus::Ok));
        assert_eq!(t.peer_access(0, 1), Some(true));
        set(&mut t, Some(P2pStatus::Ok), Some(P2pStatus::Ns));
        assert_eq!(t.peer_access(0, 1), Some(false), "reads but may not write");
        set(&mut t, Some(P2pStatus::U), None);
        assert_eq!(t.peer_access(0, 1), None, "the driver's unknown");
        t.p2p_mut(1, 0).unwrap().cuda_can_access_peer = Some(false);
        assert_eq!(t.peer_access(0, 1), Some(false));
        // Over NVLink, peers.
        let t = two_gpus(LinkKind::Nv(18));
        assert_eq!(t.peer_access(0, 1), Some(true));
    }

    #[test]
    fn grace_superchips_get_their_c2c_host_link_from_the_name() {
        let gb = grace_host_link("NVIDIA GB200").unwrap();
        assert_eq!(
            (gb.kind.as_str(), gb.gbps, gb.shared_by),
            ("NVLink-C2C", 450.0, 2)
        );
        assert_eq!(grace_host_link("NVIDIA GH200 480GB").unwrap().shared_by, 1);
        assert!(grace_host_link("NVIDIA B200").is_none());
        assert!(grace_host_link("NVIDIA H100 80GB HBM3").is_none());
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = vec![Gpu {
            index: 0,
            name: Some("NVIDIA GB300".into()),
            ..Default::default()
        }];
        t.derive_line_rates();
        assert_eq!(t.gpus[0].host_line_rate_gbps(), Some(450.0));
    }
}
