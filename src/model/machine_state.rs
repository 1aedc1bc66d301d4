//! A machine's health inventory: the state of every GPU's links, memory and clocks at one
//! moment, as NVML or an `nvidia-smi -q` capture reports it. `scalescope check` judges it.
//!
//! Every reading is an `Option`: `None` means it could not be read (not supported, not in the
//! capture, not stated in the catalog) and is shown as unknown, never taken as healthy or as 0.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::topology::PcieLink;

/// Where an inventory came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InventoryKind {
    /// Read from this machine through NVML.
    Live,
    /// Parsed from `nvidia-smi -q`, `-q -x` or `nvidia-smi nvlink` text.
    Imported,
    /// Stated in a catalog file (a design, or a machine described as it is).
    Catalog,
}

impl fmt::Display for InventoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Live => "live",
            Self::Imported => "imported",
            Self::Catalog => "catalog",
        })
    }
}

/// The state of every GPU at one moment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    pub kind: InventoryKind,
    /// The files it was parsed from, `NVML`, or the catalog id.
    pub origin: Vec<String>,
    /// When it was read, RFC 3339 UTC or as the capture wrote it; `None` when unknown.
    pub captured_at: Option<String>,
    pub driver_version: Option<String>,
    /// By GPU index (nvidia-smi's order in a capture, CUDA ordinals live).
    pub gpus: Vec<GpuInventory>,
    /// Facts about how values were read or why some are missing.
    #[serde(default)]
    pub notes: Vec<String>,
    /// GPUs the captures show but `nvidia-smi -q` does not describe: counted among its
    /// attached GPUs, or in `topo -m` / `nvlink -s`, with no section of their own (a GPU that
    /// did not answer the driver).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<MissingGpu>,
}

/// A GPU a capture shows that `nvidia-smi -q` does not describe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MissingGpu {
    /// Its index (nvidia-smi's order).
    pub index: usize,
    /// Where it shows, in words: `nvidia-smi -q counts 2 attached GPUs and describes 1`.
    pub seen: String,
    /// nvidia-smi said it could not reach it (`Unable to determine the device handle for GPU
    /// …`): lost, not merely left out of the capture.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lost: bool,
}

impl Inventory {
    /// An empty inventory.
    pub fn new(kind: InventoryKind, origin: Vec<String>) -> Self {
        Self {
            kind,
            origin,
            captured_at: None,
            driver_version: None,
            gpus: Vec::new(),
            notes: Vec::new(),
            missing: Vec::new(),
        }
    }

    /// When it was read, seconds since 1970 in the capture's own clock: RFC 3339 (live
    /// readings) or nvidia-smi's `Mon Nov 23 02:57:36 2026` (its `Timestamp`, local time: good
    /// for the time between two captures of one machine, not for an absolute moment).
    pub fn captured_unix_s(&self) -> Option<f64> {
        let t = self.captured_at.as_deref()?.trim();
        if let Ok(at) = humantime::parse_rfc3339_weak(t) {
            return Some(at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs_f64());
        }
        ctime_seconds(t)
    }

    /// The GPU with this index.
    pub fn gpu(&self, index: usize) -> Option<&GpuInventory> {
        self.gpus.iter().find(|g| g.index == index)
    }

    /// Mutable access to the GPU with this index, added (empty) when missing.
    pub fn gpu_mut(&mut self, index: usize) -> &mut GpuInventory {
        if let Some(p) = self.gpus.iter().position(|g| g.index == index) {
            return &mut self.gpus[p];
        }
        self.gpus.push(GpuInventory {
            index,
            ..Default::default()
        });
        self.gpus.sort_by_key(|g| g.index);
        let p = self
            .gpus
            .iter()
            .position(|g| g.index == index)
            .unwrap_or(self.gpus.len() - 1);
        &mut self.gpus[p]
    }

    /// Fills every unknown value of `self` from `other` (same GPU index), keeping what `self`
    /// has. Captures of the same machine merge this way: the first file that knows a value wins.
    pub fn fill_from(&mut self, other: &Inventory) {
        for o in &other.origin {
            if !self.origin.contains(o) {
                self.origin.push(o.clone());
            }
        }
        self.captured_at = self
            .captured_at
            .take()
            .or_else(|| other.captured_at.clone());
        self.driver_version = self
            .driver_version
            .take()
            .or_else(|| other.driver_version.clone());
        for g in &other.gpus {
            self.gpu_mut(g.index).fill_from(g);
        }
        for n in &other.notes {
            if !self.notes.contains(n) {
                self.notes.push(n.clone());
            }
        }
        for m in &other.missing {
            if !self.missing.iter().any(|x| x.index == m.index) {
                self.missing.push(m.clone());
            }
        }
    }
}

/// `Mon Nov 23 02:57:36 2026` (C's `ctime` layout, as nvidia-smi writes its Timestamp) →
/// seconds since 1970 in that clock; `None` for anything else.
fn ctime_seconds(t: &str) -> Option<f64> {
    let parts: Vec<&str> = t.split_whitespace().collect();
    let [_, mon, day, hms, year] = parts.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let m = MONTHS.iter().position(|x| x.eq_ignore_ascii_case(mon))? as i64 + 1;
    let d: i64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let y: i64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let mut hms = hms.split(':').map(|x| x.parse::<i64>().ok());
    let (h, mi, sec) = (hms.next()??, hms.next()??, hms.next()??);
    if hms.next().is_some() || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's `days_from_civil`).
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3_600 + mi * 60 + sec) as f64)
}

/// When a reading was taken, as far as it matters for the PCIe generation: GPUs lower their
/// link generation when idle to save power, so only a reading under load says what the link
/// trains to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadState {
    /// The GPU was idle (or nothing says it was busy).
    Idle,
    /// A copy or kernel was running on the GPU while it was read.
    UnderLoad,
    /// A catalog file states it: the machine as it runs.
    Stated,
}

/// One GPU's state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInventory {
    pub index: usize,
    pub name: Option<String>,
    pub uuid: Option<String>,
    pub pci_bus_id: Option<String>,
    /// The video BIOS version (NVML, `nvidia-smi -q`'s `VBIOS Version`); `None` when not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbios: Option<String>,
    /// Total device memory, MiB.
    pub memory_mib: Option<u64>,
    pub pcie: PcieState,
    /// Every NVLink the GPU has (active or not), by link number; `None` when not read (an
    /// `nvidia-smi -q` capture carries no NVLink state), `Some(empty)` for a GPU without NVLink.
    pub nvlinks: Option<Vec<NvLinkState>>,
    /// NVLinks the GPU's model has, when known from elsewhere than `nvlinks` (a catalog entry).
    pub nvlinks_expected: Option<u32>,
    /// Per-link, per-direction NVLink rate, GB/s (`nvidia-smi nvlink -s`, NVML).
    pub nvlink_gbps_per_link: Option<f64>,
    pub ecc: EccState,
    /// Clock event (throttle) reasons active when read; `None` when not read.
    pub throttle: Option<Vec<ThrottleReason>>,
    /// Percent of the last sample period a kernel ran.
    pub utilization_gpu_percent: Option<u32>,
    /// Percent of the last sample period device memory was read or written.
    pub utilization_memory_percent: Option<u32>,
    /// Processes with a compute context on the GPU when read (other than scalescope itself).
    pub processes: Option<Vec<GpuProcess>>,
    /// Settings that hold a GPU below its best when changed: power limit, clocks, modes.
    #[serde(default, skip_serializing_if = "GpuSettings::is_empty")]
    pub settings: GpuSettings,
    /// What the driver asks to be done to bring the GPU back, as nvidia-smi says it (`Reset`,
    /// `Reboot`, `Drain P2P`, `Drain and Reset`); `None` where it asks nothing or was not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_action: Option<String>,
    /// The GPU's NVLink fabric registration status (`Success`, `Failure`, …) on NVSwitch
    /// systems; `None` where not read or not applicable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_status: Option<String>,
    /// Temperatures and the driver's limits, as read.
    #[serde(default, skip_serializing_if = "Temperatures::is_empty")]
    pub temperature: Temperatures,
}

/// A GPU's temperatures and the limits the driver reports, °C; `None` where not read. Two
/// forms: absolute limits (`GPU Slowdown Temp : 89 C`, older GPUs and drivers), or — Hopper and
/// later under recent drivers — the distance below the GPU's operating limit (`GPU T.Limit Temp
/// : 46 C`) with each limit given against it (`GPU Slowdown T.Limit Temp : -2 C`: slowdown 2 °C
/// past the limit).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Temperatures {
    pub gpu_c: Option<i32>,
    pub memory_c: Option<i32>,
    pub slowdown_c: Option<i32>,
    pub shutdown_c: Option<i32>,
    pub max_operating_c: Option<i32>,
    pub memory_max_operating_c: Option<i32>,
    /// How far below its operating limit the GPU runs (T.Limit), °C.
    pub tlimit_c: Option<i32>,
    pub slowdown_tlimit_c: Option<i32>,
    pub shutdown_tlimit_c: Option<i32>,
    pub max_operating_tlimit_c: Option<i32>,
}

impl Temperatures {
    /// Nothing read.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn fill_from(&mut self, o: &Temperatures) {
        for (mine, theirs) in [
            (&mut self.gpu_c, o.gpu_c),
            (&mut self.memory_c, o.memory_c),
            (&mut self.slowdown_c, o.slowdown_c),
            (&mut self.shutdown_c, o.shutdown_c),
            (&mut self.max_operating_c, o.max_operating_c),
            (&mut self.memory_max_operating_c, o.memory_max_operating_c),
            (&mut self.tlimit_c, o.tlimit_c),
            (&mut self.slowdown_tlimit_c, o.slowdown_tlimit_c),
            (&mut self.shutdown_tlimit_c, o.shutdown_tlimit_c),
            (&mut self.max_operating_tlimit_c, o.max_operating_tlimit_c),
        ] {
            *mine = mine.or(theirs);
        }
    }
}

/// Settings an operator or a job can change that hold a GPU below what it can do (the power
/// limit, application or locked clocks) or change what a job sees (persistence, MIG, compute
/// mode): what a fleet operator checks first. NVML reads them live; `nvidia-smi -q` prints them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSettings {
    /// The power limit in force, W (NVML's enforced limit, nvidia-smi's "Current Power Limit").
    pub power_limit_w: Option<f64>,
    /// The board's default power limit, W.
    pub power_limit_default_w: Option<f64>,
    /// The lowest and highest limit the board accepts, W.
    pub power_limit_min_w: Option<f64>,
    pub power_limit_max_w: Option<f64>,
    /// Application clock (graphics) set, and its default, MHz (`nvidia-smi -ac`).
    pub app_clock_mhz: Option<u32>,
    pub app_clock_default_mhz: Option<u32>,
    /// The SM clock's maximum, MHz.
    pub max_sm_clock_mhz: Option<u32>,
    /// Persistence mode: the driver stays loaded with no client.
    pub persistence: Option<bool>,
    /// MIG mode now and after the next reset.
    pub mig_current: Option<bool>,
    pub mig_pending: Option<bool>,
    pub compute_mode: Option<ComputeMode>,
}

impl GpuSettings {
    /// Nothing read.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    fn fill_from(&mut self, o: &GpuSettings) {
        self.power_limit_w = self.power_limit_w.or(o.power_limit_w);
        self.power_limit_default_w = self.power_limit_default_w.or(o.power_limit_default_w);
        self.power_limit_min_w = self.power_limit_min_w.or(o.power_limit_min_w);
        self.power_limit_max_w = self.power_limit_max_w.or(o.power_limit_max_w);
        self.app_clock_mhz = self.app_clock_mhz.or(o.app_clock_mhz);
        self.app_clock_default_mhz = self.app_clock_default_mhz.or(o.app_clock_default_mhz);
        self.max_sm_clock_mhz = self.max_sm_clock_mhz.or(o.max_sm_clock_mhz);
        self.persistence = self.persistence.or(o.persistence);
        self.mig_current = self.mig_current.or(o.mig_current);
        self.mig_pending = self.mig_pending.or(o.mig_pending);
        self.compute_mode = self.compute_mode.or(o.compute_mode);
    }
}

/// Who may create a context on the GPU (NVML's compute mode, `nvidia-smi -c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComputeMode {
    /// Any number of processes.
    Default,
    /// One context per process thread (deprecated by NVIDIA).
    ExclusiveThread,
    /// One process at a time.
    ExclusiveProcess,
    /// No process may create a context.
    Prohibited,
}

impl ComputeMode {
    /// The name nvidia-smi prints (`Default`, `Exclusive_Process`, …).
    pub fn label(self) -> &'static str {
        match self {
            Self::Default => "Default",
            Self::ExclusiveThread => "Exclusive_Thread",
            Self::ExclusiveProcess => "Exclusive_Process",
            Self::Prohibited => "Prohibited",
        }
    }

    /// The mode nvidia-smi names so (any case, `_` or space).
    pub fn from_label(s: &str) -> Option<Self> {
        let n = s.trim().to_ascii_lowercase().replace([' ', '-'], "_");
        Some(match n.as_str() {
            "default" => Self::Default,
            "exclusive_thread" => Self::ExclusiveThread,
            "exclusive_process" => Self::ExclusiveProcess,
            "prohibited" => Self::Prohibited,
            _ => return None,
        })
    }
}

impl GpuInventory {
    /// NVLinks active, when the link states are known.
    pub fn nvlinks_active(&self) -> Option<u32> {
        self.nvlinks
            .as_ref()
            .map(|v| v.iter().filter(|l| l.active == Some(true)).count() as u32)
    }

    /// NVLinks up and of how many: the GPU's expected count, else the links its reading lists;
    /// `None` where either is unknown or it has none.
    pub fn nvlinks_up_of(&self) -> Option<(u32, u32)> {
        let total = self
            .nvlinks_expected
            .or_else(|| self.nvlinks.as_ref().map(|v| v.len() as u32))
            .filter(|t| *t > 0)?;
        Some((self.nvlinks_active()?.min(total), total))
    }

    /// Fills every unknown value from `o`.
    pub fn fill_from(&mut self, o: &GpuInventory) {
        self.name = self.name.take().or_else(|| o.name.clone());
        self.uuid = self.uuid.take().or_else(|| o.uuid.clone());
        self.pci_bus_id = self.pci_bus_id.take().or_else(|| o.pci_bus_id.clone());
        self.vbios = self.vbios.take().or_else(|| o.vbios.clone());
        self.memory_mib = self.memory_mib.or(o.memory_mib);
        self.pcie.fill_from(&o.pcie);
        match (&mut self.nvlinks, &o.nvlinks) {
            (None, Some(v)) => self.nvlinks = Some(v.clone()),
            (Some(mine), Some(theirs)) => {
                for t in theirs {
                    match mine.iter_mut().find(|m| m.link == t.link) {
                        Some(m) => m.fill_from(t),
                        None => mine.push(t.clone()),
                    }
                }
                mine.sort_by_key(|l| l.link);
            }
            _ => {}
        }
        self.nvlinks_expected = self.nvlinks_expected.or(o.nvlinks_expected);
        self.nvlink_gbps_per_link = self.nvlink_gbps_per_link.or(o.nvlink_gbps_per_link);
        self.ecc.fill_from(&o.ecc);
        self.recovery_action = self
            .recovery_action
            .take()
            .or_else(|| o.recovery_action.clone());
        self.fabric_status = self
            .fabric_status
            .take()
            .or_else(|| o.fabric_status.clone());
        self.throttle = self.throttle.take().or_else(|| o.throttle.clone());
        self.utilization_gpu_percent = self.utilization_gpu_percent.or(o.utilization_gpu_percent);
        self.utilization_memory_percent = self
            .utilization_memory_percent
            .or(o.utilization_memory_percent);
        self.processes = self.processes.take().or_else(|| o.processes.clone());
        self.settings.fill_from(&o.settings);
        self.temperature.fill_from(&o.temperature);
    }
}

/// A GPU's PCIe link state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieState {
    /// Current and maximum generation and width. The maximum is what GPU and slot together
    /// allow (NVML's `max_pcie_link_gen`, nvidia-smi's "Max").
    pub link: PcieLink,
    /// The GPU's own maximum generation (nvidia-smi's "Device Max").
    pub gen_device_max: Option<u32>,
    /// The slot's (host's) maximum generation (nvidia-smi's "Host Max").
    pub gen_host_max: Option<u32>,
    /// When `link`'s current values were read.
    pub load: Option<LoadState>,
    /// PCIe replays since the driver loaded.
    pub replay_counter: Option<u64>,
    /// PCIe throughput when read, KB/s (nvidia-smi's Tx/Rx Throughput).
    pub tx_kbps: Option<u64>,
    pub rx_kbps: Option<u64>,
}

impl PcieState {
    fn fill_from(&mut self, o: &PcieState) {
        let l = &mut self.link;
        l.gen_current = l.gen_current.or(o.link.gen_current);
        l.gen_max = l.gen_max.or(o.link.gen_max);
        l.width_current = l.width_current.or(o.link.width_current);
        l.width_max = l.width_max.or(o.link.width_max);
        self.gen_device_max = self.gen_device_max.or(o.gen_device_max);
        self.gen_host_max = self.gen_host_max.or(o.gen_host_max);
        self.load = self.load.or(o.load);
        self.replay_counter = self.replay_counter.or(o.replay_counter);
        self.tx_kbps = self.tx_kbps.or(o.tx_kbps);
        self.rx_kbps = self.rx_kbps.or(o.rx_kbps);
    }
}

/// One NVLink.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NvLinkState {
    /// Link number on the GPU (0-based).
    pub link: u32,
    pub active: Option<bool>,
    /// Per-direction rate, GB/s, when active and known.
    pub gbps: Option<f64>,
    /// CRC errors (flit and data) since the driver loaded.
    pub crc_errors: Option<u64>,
    /// Data-link replays.
    pub replay_errors: Option<u64>,
    /// Data-link recoveries.
    pub recovery_errors: Option<u64>,
}

impl NvLinkState {
    fn fill_from(&mut self, o: &NvLinkState) {
        self.active = self.active.or(o.active);
        self.gbps = self.gbps.or(o.gbps);
        self.crc_errors = self.crc_errors.or(o.crc_errors);
        self.replay_errors = self.replay_errors.or(o.replay_errors);
        self.recovery_errors = self.recovery_errors.or(o.recovery_errors);
    }
}

/// Memory errors and what the GPU did about them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EccState {
    pub enabled: Option<bool>,
    /// Since the driver loaded.
    pub volatile_corrected: Option<u64>,
    pub volatile_uncorrected: Option<u64>,
    /// Over the GPU's lifetime.
    pub aggregate_corrected: Option<u64>,
    pub aggregate_uncorrected: Option<u64>,
    /// Pages retired for multiple single-bit errors / a double-bit error (pre-Ampere GPUs).
    pub retired_pages_sbe: Option<u64>,
    pub retired_pages_dbe: Option<u64>,
    /// A page waits to be retired at the next driver reload.
    pub retired_pending: Option<bool>,
    /// Rows remapped for correctable / uncorrectable errors (Ampere and later).
    pub remapped_rows_correctable: Option<u64>,
    pub remapped_rows_uncorrectable: Option<u64>,
    /// A remapping waits for the next GPU reset.
    pub remap_pending: Option<bool>,
    /// A remapping failed: no spare row was left.
    pub remap_failure: Option<bool>,
    /// The driver found memory it cannot repair (nvidia-smi's "Unrepairable Memory").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unrepairable: Option<bool>,
    /// Uncorrectable SRAM errors passed the threshold NVIDIA sets for replacing the GPU
    /// (nvidia-smi's "SRAM Threshold Exceeded").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sram_threshold_exceeded: Option<bool>,
}

impl EccState {
    fn fill_from(&mut self, o: &EccState) {
        self.enabled = self.enabled.or(o.enabled);
        self.volatile_corrected = self.volatile_corrected.or(o.volatile_corrected);
        self.volatile_uncorrected = self.volatile_uncorrected.or(o.volatile_uncorrected);
        self.aggregate_corrected = self.aggregate_corrected.or(o.aggregate_corrected);
        self.aggregate_uncorrected = self.aggregate_uncorrected.or(o.aggregate_uncorrected);
        self.retired_pages_sbe = self.retired_pages_sbe.or(o.retired_pages_sbe);
        self.retired_pages_dbe = self.retired_pages_dbe.or(o.retired_pages_dbe);
        self.retired_pending = self.retired_pending.or(o.retired_pending);
        self.remapped_rows_correctable = self
            .remapped_rows_correctable
            .or(o.remapped_rows_correctable);
        self.remapped_rows_uncorrectable = self
            .remapped_rows_uncorrectable
            .or(o.remapped_rows_uncorrectable);
        self.remap_pending = self.remap_pending.or(o.remap_pending);
        self.remap_failure = self.remap_failure.or(o.remap_failure);
        self.unrepairable = self.unrepairable.or(o.unrepairable);
        self.sram_threshold_exceeded = self.sram_threshold_exceeded.or(o.sram_threshold_exceeded);
    }
}

/// Why the clocks are held below their maximum (NVML's clock event / throttle reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleReason {
    /// Nothing runs: clocks are down to save power (not a fault).
    GpuIdle,
    /// Application clocks are set below the maximum.
    ApplicationsClocks,
    /// The software power cap (the power limit) holds the clocks down.
    SwPowerCap,
    /// Hardware slowdown: temperature or power brake, or an external signal.
    HwSlowdown,
    /// Hardware slowdown for temperature.
    HwThermalSlowdown,
    /// Hardware slowdown by an external power brake (the PSU or chassis).
    HwPowerBrake,
    /// The driver holds clocks down for temperature.
    SwThermalSlowdown,
    /// Clocks synchronised with other GPUs (sync boost).
    SyncBoost,
    /// Display clock setting.
    DisplayClocks,
}

impl ThrottleReason {
    /// Every reason.
    pub const ALL: [ThrottleReason; 9] = [
        Self::GpuIdle,
        Self::ApplicationsClocks,
        Self::SwPowerCap,
        Self::HwSlowdown,
        Self::HwThermalSlowdown,
        Self::HwPowerBrake,
        Self::SwThermalSlowdown,
        Self::SyncBoost,
        Self::DisplayClocks,
    ];

    /// The word JSON uses (`sw_power_cap`), also Prometheus' `reason` label.
    pub fn id(&self) -> &'static str {
        match self {
            Self::GpuIdle => "gpu_idle",
            Self::ApplicationsClocks => "applications_clocks",
            Self::SwPowerCap => "sw_power_cap",
            Self::HwSlowdown => "hw_slowdown",
            Self::HwThermalSlowdown => "hw_thermal_slowdown",
            Self::HwPowerBrake => "hw_power_brake",
            Self::SwThermalSlowdown => "sw_thermal_slowdown",
            Self::SyncBoost => "sync_boost",
            Self::DisplayClocks => "display_clocks",
        }
    }

    /// The name nvidia-smi prints, e.g. `SW Power Cap`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::GpuIdle => "Idle",
            Self::ApplicationsClocks => "Applications Clocks Setting",
            Self::SwPowerCap => "SW Power Cap",
            Self::HwSlowdown => "HW Slowdown",
            Self::HwThermalSlowdown => "HW Thermal Slowdown",
            Self::HwPowerBrake => "HW Power Brake Slowdown",
            Self::SwThermalSlowdown => "SW Thermal Slowdown",
            Self::SyncBoost => "Sync Boost",
            Self::DisplayClocks => "Display Clock Setting",
        }
    }

    /// True for reasons that say the GPU cannot hold its clocks (power, temperature, hardware),
    /// as opposed to idling or a setting.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            Self::SwPowerCap
                | Self::HwSlowdown
                | Self::HwThermalSlowdown
                | Self::HwPowerBrake
                | Self::SwThermalSlowdown
        )
    }
}

#[cfg(test)]
#[test]
fn throttle_ids_are_the_json_words() {
    for r in ThrottleReason::ALL {
        assert_eq!(serde_json::to_value(r).unwrap(), r.id());
    }
}

impl fmt::Display for ThrottleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A process with a compute context on a GPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuProcess {
    pub pid: u32,
    /// The process name, when known.
    pub name: Option<String>,
}

impl fmt::Display for GpuProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "pid {} ({n})", self.pid),
            None => write!(f, "pid {}", self.pid),
        }
    }
}

/// What the load tests saw on one GPU while they ran (live checks only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuLoadObservation {
    pub index: usize,
    /// The fastest PCIe link state read while a host copy ran on this GPU.
    pub pcie_under_load: Option<PcieLink>,
    /// Clock limits (power, thermal, hardware) and the application-clocks setting seen in any
    /// sample.
    pub throttle_seen: Vec<ThrottleReason>,
    /// The lowest power limit in force in any sample, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_min_w: Option<f64>,
    /// Other processes with a compute context on the GPU during the tests.
    pub other_processes: Vec<GpuProcess>,
    /// The highest GPU utilization sampled, %.
    pub max_utilization_percent: Option<u32>,
}

/// What a background sampler saw during the load tests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadObservation {
    /// NVML samples taken.
    pub samples: u32,
    /// Time between samples, ms.
    pub interval_ms: u32,
    pub gpus: Vec<GpuLoadObservation>,
    /// The host's CPUs over the tests, percent busy (/proc/stat); `None` where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_percent: Option<f64>,
}

impl LoadObservation {
    /// The GPU's observation.
    pub fn gpu(&self, index: usize) -> Option<&GpuLoadObservation> {
        self.gpus.iter().find(|g| g.index == index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_known_values_and_fills_unknown_ones() {
        let mut a = Inventory::new(InventoryKind::Imported, vec!["a.xml".into()]);
        a.gpu_mut(1).pcie.link.gen_current = Some(5);
        let mut b = Inventory::new(InventoryKind::Imported, vec!["b.txt".into()]);
        b.gpu_mut(1).pcie.link.gen_current = Some(3);
        b.gpu_mut(1).nvlinks = Some(vec![NvLinkState {
            link: 0,
            active: Some(true),
            ..Default::default()
        }]);
        b.gpu_mut(0).ecc.volatile_uncorrected = Some(0);
        a.fill_from(&b);
        assert_eq!(a.origin, vec!["a.xml", "b.txt"]);
        assert_eq!(a.gpus.len(), 2);
        assert_eq!(a.gpus[0].index, 0, "sorted by index");
        assert_eq!(a.gpu(1).unwrap().pcie.link.gen_current, Some(5));
        assert_eq!(a.gpu(1).unwrap().nvlinks_active(), Some(1));
        assert_eq!(a.gpu(0).unwrap().nvlinks_active(), None, "unknown, not 0");
    }

    #[test]
    fn nvidia_smi_timestamps_give_the_time_between_captures() {
        let at = |t: &str| {
            let mut i = Inventory::new(InventoryKind::Imported, vec![]);
            i.captured_at = Some(t.to_string());
            i.captured_unix_s()
        };
        // 1970-01-01 and a known day: 2026-11-23 is 20,780 days after it.
        assert_eq!(at("Thu Jan  1 00:00:00 1970"), Some(0.0));
        assert_eq!(
            at("Mon Nov 23 02:57:36 2026"),
            Some((20_780 * 86_400 + 2 * 3_600 + 57 * 60 + 36) as f64)
        );
        let (a, b) = (
            at("Mon Nov 23 23:59:50 2026").unwrap(),
            at("Tue Nov 24 00:00:20 2026").unwrap(),
        );
        assert_eq!(b - a, 30.0);
        assert_eq!(at("2026-11-23T06:25:08.000Z"), Some(1_795_415_108.0));
        assert_eq!(at("Mon Foo 23 02:57:36 2026"), None);
        assert_eq!(at("yesterday"), None);
    }
}
