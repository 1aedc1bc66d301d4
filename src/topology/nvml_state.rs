//! This machine's health inventory through NVML: PCIe link state and replay counter, NVLink
//! states and error counters, ECC counters, retired pages and remapped rows, clock event
//! reasons, utilization and the processes on each GPU. The sampler (`telemetry::sampler`)
//! reads the same values from its own thread while load tests run.
//!
//! A value NVML cannot give (not supported, an old driver, no permission) is `None`. Nothing
//! here runs on the UI thread: `scalescope check` calls it from the CLI, the app from a worker.

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{EccCounter, MemoryError, RetirementCause};
use nvml_wrapper::enum_wrappers::nv_link::ErrorCounter;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use super::TopologyError;
use crate::model::{
    ComputeMode, EccState, GpuInventory, GpuProcess, GpuSettings, Inventory, InventoryKind,
    LoadState, NvLinkState, PcieLink, PcieState, Temperatures, ThrottleReason, Topology,
};

/// NVML's `NVML_NVLINK_MAX_LINKS`.
const MAX_NVLINKS: u32 = 18;

/// NVML failing to start, as this layer's error: the driver's library missing or refusing.
pub(crate) fn no_driver(e: NvmlError) -> TopologyError {
    TopologyError::NoDriver {
        reason: match e {
            NvmlError::LibloadingError(inner) => inner.to_string(),
            other => other.to_string(),
        },
    }
}

/// The NVML device of topology GPU `g`: by PCI bus id, else by its NVML index.
pub(crate) fn device<'n>(
    nvml: &'n Nvml,
    topo: &Topology,
    g: usize,
) -> Result<Device<'n>, TopologyError> {
    let gpu = topo.gpu(g).ok_or_else(|| TopologyError::Nvml {
        what: format!("GPU {g}"),
        reason: "not in the topology".into(),
    })?;
    let by_bus = gpu
        .pci_bus_id
        .as_deref()
        .map(|b| nvml.device_by_pci_bus_id(b));
    match by_bus {
        Some(Ok(d)) => Ok(d),
        _ => nvml
            .device_by_index(gpu.nvml_index.unwrap_or(g as u32))
            .map_err(|e| TopologyError::Nvml {
                what: format!("device of GPU {g}"),
                reason: e.to_string(),
            }),
    }
}

/// Reads the inventory of GPUs `gpus` (all when empty) of the live topology `topo`. The PCIe
/// reading is labeled idle: nothing of ours runs on the GPUs while it is taken.
pub fn read(topo: &Topology, gpus: &[usize]) -> Result<Inventory, TopologyError> {
    let nvml = Nvml::init().map_err(no_driver)?;
    let mut inv = Inventory::new(InventoryKind::Live, vec!["NVML".to_string()]);
    inv.captured_at =
        Some(humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string());
    inv.driver_version = nvml.sys_driver_version().ok();
    let selected = if gpus.is_empty() {
        topo.gpu_indices()
    } else {
        gpus.to_vec()
    };
    for g in selected {
        let dev = device(&nvml, topo, g)?;
        let mut gi = read_gpu(&nvml, &dev, g);
        gi.pcie.load = Some(LoadState::Idle);
        inv.gpus.push(gi);
    }
    inv.gpus.sort_by_key(|g| g.index);
    Ok(inv)
}

fn read_gpu(nvml: &Nvml, dev: &Device, index: usize) -> GpuInventory {
    GpuInventory {
        index,
        name: dev.name().ok(),
        uuid: dev.uuid().ok(),
        pci_bus_id: dev.pci_info().ok().map(|p| p.bus_id),
        vbios: dev.vbios_version().ok().filter(|v| !v.is_empty()),
        memory_mib: dev.memory_info().ok().map(|m| m.total / (1024 * 1024)),
        pcie: PcieState {
            link: pcie_link(dev),
            gen_device_max: gpu_max_pcie_gen(nvml, dev),
            gen_host_max: None,
            load: None,
            replay_counter: dev.pcie_replay_counter().ok().map(u64::from),
            tx_kbps: None,
            rx_kbps: None,
        },
        nvlinks: nvlinks(dev),
        nvlinks_expected: None,
        nvlink_gbps_per_link: None,
        ecc: ecc(nvml, dev),
        throttle: dev.current_throttle_reasons().ok().map(throttle_reasons),
        utilization_gpu_percent: dev.utilization_rates().ok().map(|u| u.gpu),
        utilization_memory_percent: dev.utilization_rates().ok().map(|u| u.memory),
        processes: processes(dev),
        settings: settings(dev),
        // nvml-wrapper has no call for the recovery action or the fabric state: read from
        // `nvidia-smi -q` captures only.
        recovery_action: None,
        fabric_status: None,
        temperature: temperatures(dev),
    }
}

/// The GPU's temperature and the limits NVML gives (absolute; a limit outside 30–150 °C is
/// taken as not read: a GPU that reports its limits against T.Limit may answer otherwise).
/// nvml-wrapper reads no memory temperature.
fn temperatures(dev: &Device) -> Temperatures {
    use nvml_wrapper::enum_wrappers::device::{TemperatureSensor, TemperatureThreshold as T};
    let limit = |which: T| {
        dev.temperature_threshold(which)
            .ok()
            .and_then(|v| i32::try_from(v).ok())
            .filter(|v| (30..=150).contains(v))
    };
    Temperatures {
        gpu_c: dev
            .temperature(TemperatureSensor::Gpu)
            .ok()
            .and_then(|v| i32::try_from(v).ok()),
        slowdown_c: limit(T::Slowdown),
        shutdown_c: limit(T::Shutdown),
        max_operating_c: limit(T::GpuMax),
        memory_max_operating_c: limit(T::MemoryMax),
        ..Default::default()
    }
}

/// The power limit, clock settings and modes (each `None` where NVML refuses it).
pub(crate) fn settings(dev: &Device) -> GpuSettings {
    use nvml_wrapper::enum_wrappers::device::{Clock, ComputeMode as Nv};
    let watts = |mw: Result<u32, NvmlError>| mw.ok().map(|v| f64::from(v) / 1e3);
    let constraints = dev.power_management_limit_constraints().ok();
    GpuSettings {
        power_limit_w: watts(dev.enforced_power_limit()),
        power_limit_default_w: watts(dev.power_management_limit_default()),
        power_limit_min_w: constraints.as_ref().map(|c| f64::from(c.min_limit) / 1e3),
        power_limit_max_w: constraints.as_ref().map(|c| f64::from(c.max_limit) / 1e3),
        app_clock_mhz: dev.applications_clock(Clock::Graphics).ok(),
        app_clock_default_mhz: dev.default_applications_clock(Clock::Graphics).ok(),
        max_sm_clock_mhz: dev.max_clock_info(Clock::SM).ok(),
        persistence: dev.is_in_persistent_mode().ok(),
        mig_current: dev.mig_mode().ok().map(|m| m.current == 1),
        mig_pending: dev.mig_mode().ok().map(|m| m.pending == 1),
        compute_mode: dev.compute_mode().ok().map(|m| match m {
            Nv::Default => ComputeMode::Default,
            Nv::ExclusiveThread => ComputeMode::ExclusiveThread,
            Nv::ExclusiveProcess => ComputeMode::ExclusiveProcess,
            Nv::Prohibited => ComputeMode::Prohibited,
        }),
    }
}

pub(crate) fn pcie_link(dev: &Device) -> PcieLink {
    PcieLink {
        gen_current: dev.current_pcie_link_gen().ok(),
        gen_max: dev.max_pcie_link_gen().ok(),
        width_current: dev.current_pcie_link_width().ok(),
        width_max: dev.max_pcie_link_width().ok(),
    }
}

/// The GPU's own maximum PCIe generation (`nvmlDeviceGetGpuMaxPcieLinkGeneration`, which
/// nvml-wrapper 0.13 does not wrap); `None` on drivers without it.
fn gpu_max_pcie_gen(nvml: &Nvml, dev: &Device) -> Option<u32> {
    let f = nvml
        .lib()
        .nvmlDeviceGetGpuMaxPcieLinkGeneration
        .as_ref()
        .ok()?;
    let mut generation: std::os::raw::c_uint = 0;
    // SAFETY: `f` is the symbol NVML exports with this signature; the device handle belongs to
    // `nvml`, which is initialised and outlives the call; `generation` is a valid out-pointer.
    let rc = unsafe { f(dev.handle(), &mut generation) };
    (rc == 0 && generation > 0).then_some(generation)
}

/// Remapped rows (`nvmlDeviceGetRemappedRows`, not wrapped by nvml-wrapper 0.13):
/// (correctable, uncorrectable, pending, failure).
fn remapped_rows(nvml: &Nvml, dev: &Device) -> Option<(u64, u64, bool, bool)> {
    let f = nvml.lib().nvmlDeviceGetRemappedRows.as_ref().ok()?;
    let (mut corr, mut unc, mut pending, mut failure): (
        std::os::raw::c_uint,
        std::os::raw::c_uint,
        std::os::raw::c_uint,
        std::os::raw::c_uint,
    ) = (0, 0, 0, 0);
    // SAFETY: `f` is NVML's symbol with this signature; the handle belongs to the live `nvml`;
    // the four out-pointers are valid locals.
    let rc = unsafe {
        f(
            dev.handle(),
            &mut corr,
            &mut unc,
            &mut pending,
            &mut failure,
        )
    };
    (rc == 0).then_some((u64::from(corr), u64::from(unc), pending != 0, failure != 0))
}

/// Every link the GPU has: `Some(empty)` for a GPU without NVLink, `None` when NVML could not say.
pub(crate) fn nvlinks(dev: &Device) -> Option<Vec<NvLinkState>> {
    let mut out = Vec::new();
    let mut unknown = false;
    for l in 0..MAX_NVLINKS {
        let link = dev.link_wrapper_for(l);
        let active = match link.is_active() {
            Ok(a) => Some(a),
            // The GPU has no link with this number (or no NVLink at all).
            Err(NvmlError::NotSupported | NvmlError::InvalidArg) => continue,
            Err(_) => {
                unknown = true;
                None
            }
        };
        let counter = |c: ErrorCounter| link.error_counter(c).ok();
        // The flit CRC counter is what `nvidia-smi nvlink -e` prints as "CRC Errors". The data
        // CRC counter is not read: on H200 (driver 580) it grew by tens per second per link on
        // healthy links under load while nvidia-smi's CRC, replay and recovery counts stayed at
        // 0 (docs/VERIFIED.md, 2026-11-23).
        let crc = counter(ErrorCounter::DlCrcFlit);
        out.push(NvLinkState {
            link: l,
            active,
            gbps: None,
            crc_errors: crc,
            replay_errors: counter(ErrorCounter::DlReplay),
            recovery_errors: counter(ErrorCounter::DlRecovery),
        });
    }
    (!(unknown && out.iter().all(|l| l.active.is_none()))).then_some(out)
}

pub(crate) fn ecc(nvml: &Nvml, dev: &Device) -> EccState {
    let count = |t: MemoryError, c: EccCounter| dev.total_ecc_errors(t, c).ok();
    let (corr, unc, pending, failure) = match remapped_rows(nvml, dev) {
        Some((c, u, p, f)) => (Some(c), Some(u), Some(p), Some(f)),
        None => (None, None, None, None),
    };
    EccState {
        enabled: dev.is_ecc_enabled().ok().map(|m| m.currently_enabled),
        volatile_corrected: count(MemoryError::Corrected, EccCounter::Volatile),
        volatile_uncorrected: count(MemoryError::Uncorrected, EccCounter::Volatile),
        aggregate_corrected: count(MemoryError::Corrected, EccCounter::Aggregate),
        aggregate_uncorrected: count(MemoryError::Uncorrected, EccCounter::Aggregate),
        retired_pages_sbe: dev
            .retired_pages(RetirementCause::MultipleSingleBitEccErrors)
            .ok()
            .map(|v| v.len() as u64),
        retired_pages_dbe: dev
            .retired_pages(RetirementCause::DoubleBitEccError)
            .ok()
            .map(|v| v.len() as u64),
        retired_pending: dev.are_pages_pending_retired().ok(),
        remapped_rows_correctable: corr,
        remapped_rows_uncorrectable: unc,
        remap_pending: pending,
        remap_failure: failure,
        // Read from `nvidia-smi -q` captures only (no nvml-wrapper call).
        unrepairable: None,
        sram_threshold_exceeded: None,
    }
}

/// NVML's reason bits → ours.
pub fn throttle_reasons(bits: ThrottleReasons) -> Vec<ThrottleReason> {
    let map = [
        (ThrottleReasons::GPU_IDLE, ThrottleReason::GpuIdle),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            ThrottleReason::ApplicationsClocks,
        ),
        (ThrottleReasons::SW_POWER_CAP, ThrottleReason::SwPowerCap),
        (ThrottleReasons::HW_SLOWDOWN, ThrottleReason::HwSlowdown),
        (ThrottleReasons::SYNC_BOOST, ThrottleReason::SyncBoost),
        (
            ThrottleReasons::SW_THERMAL_SLOWDOWN,
            ThrottleReason::SwThermalSlowdown,
        ),
        (
            ThrottleReasons::HW_THERMAL_SLOWDOWN,
            ThrottleReason::HwThermalSlowdown,
        ),
        (
            ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN,
            ThrottleReason::HwPowerBrake,
        ),
        (
            ThrottleReasons::DISPLAY_CLOCK_SETTING,
            ThrottleReason::DisplayClocks,
        ),
    ];
    map.iter()
        .filter(|(b, _)| bits.contains(*b))
        .map(|(_, r)| *r)
        .collect()
}

/// Who holds GPU `g`'s memory now, as NVML says: `"GPU 0: 1.0 GiB free of 79.6 GiB, also used
/// by pid 4242 (python3)"`. For a warning when buffers did not fit; None without NVML.
pub fn memory_holders(topo: &Topology, g: usize) -> Option<String> {
    use crate::model::quantities::format_bytes;
    let nvml = Nvml::init().ok()?;
    let dev = device(&nvml, topo, g).ok()?;
    let mem = dev.memory_info().ok()?;
    let mut line = format!(
        "GPU {g}: {} free of {}",
        format_bytes(mem.free),
        format_bytes(mem.total)
    );
    let others = processes(&dev).unwrap_or_default();
    if !others.is_empty() {
        let names: Vec<String> = others.iter().map(|p| p.to_string()).collect();
        line.push_str(&format!(", also used by {}", names.join(", ")));
    }
    Some(line)
}

/// Compute processes on the GPU other than this one.
pub(crate) fn processes(dev: &Device) -> Option<Vec<GpuProcess>> {
    let me = std::process::id();
    let list = dev.running_compute_processes().ok()?;
    Some(
        list.into_iter()
            .filter(|p| p.pid != me)
            .map(|p| GpuProcess {
                pid: p.pid,
                name: std::fs::read_to_string(format!("/proc/{}/comm", p.pid))
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty()),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_bits_map_to_ours() {
        let bits = ThrottleReasons::SW_POWER_CAP | ThrottleReasons::HW_THERMAL_SLOWDOWN;
        assert_eq!(
            throttle_reasons(bits),
            vec![
                ThrottleReason::SwPowerCap,
                ThrottleReason::HwThermalSlowdown
            ]
        );
        assert!(
            throttle_reasons(ThrottleReasons::GPU_IDLE)
                .iter()
                .all(|r| !r.is_limit())
        );
    }

    #[test]
    fn without_a_driver_read_says_so() {
        if Nvml::init().is_ok() {
            return; // a machine with a driver: covered on the device
        }
        let topo = Topology::new(crate::model::TopologySource::Imported { paths: vec![] });
        assert!(matches!(
            read(&topo, &[]),
            Err(TopologyError::NoDriver { .. })
        ));
    }
}
