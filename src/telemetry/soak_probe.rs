//! The soak's probe: one thread, one NVML session, reading every soaked GPU once per interval —
//! clocks, power (the energy counter's step over the interval), temperatures, fan, utilization,
//! clock event reasons, error counters, other processes — and waiting for Xid events between
//! readings (NVML's event API). Each reading is a [`SoakSample`] whose load fields (phase,
//! rate, checked results) the caller fills.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::{Device, Nvml};

use super::host_cpu::HostCpu;
use super::stoppable::StoppableThread;
use crate::model::{SoakSample, Topology};
use crate::topology::TopologyError;
use crate::topology::nvml_state::{device, ecc, no_driver, nvlinks, processes, throttle_reasons};

/// NVML's `NVML_FI_DEV_MEMORY_TEMP` (HBM temperature, °C; Hopper and later report it).
const FI_DEV_MEMORY_TEMP: u32 = 82;

/// One interval's readings: when they were taken, one sample per GPU (in the order asked).
#[derive(Clone, Debug)]
pub struct Tick {
    pub at: Instant,
    pub samples: Vec<SoakSample>,
}

/// The probe thread. Stop it with [`SoakProbe::stop`] (or drop it).
pub struct SoakProbe {
    worker: StoppableThread,
    /// Readings, one [`Tick`] per interval.
    pub ticks: Receiver<Tick>,
    /// Why Xid events are not watched, if they are not (said in the soak's notes).
    pub xid_note: Option<String>,
}

impl SoakProbe {
    /// Starts reading GPUs `gpus` of the live `topo` every `interval`, the first reading at
    /// `start + interval`. Fails when NVML cannot be opened or a GPU is not found.
    pub fn start(
        topo: &Topology,
        gpus: &[usize],
        interval: Duration,
        start: Instant,
    ) -> Result<SoakProbe, TopologyError> {
        // Resolve every device once here, so that errors come back to the caller, and learn
        // whether Xid events can be watched.
        let xid_note = {
            let nvml = Nvml::init().map_err(no_driver)?;
            let mut set = Some(nvml.create_event_set().map_err(|e| e.to_string()));
            for &g in gpus {
                let dev = device(&nvml, topo, g)?;
                if let Some(Ok(s)) = set.take() {
                    set = Some(
                        dev.register_events(EventTypes::CRITICAL_XID_ERROR, s)
                            .map_err(|e| e.to_string()),
                    );
                }
            }
            match set {
                Some(Err(why)) => Some(format!("Xid events not watched: {why}")),
                _ => None,
            }
        };
        let (tx, rx) = channel();
        let topo = topo.clone();
        let gpus = gpus.to_vec();
        let worker = StoppableThread::spawn("scalescope-soak-probe", move |stop| {
            run(&topo, &gpus, interval, start, stop, &tx)
        })
        .map_err(|e| TopologyError::Nvml {
            what: "soak probe thread".into(),
            reason: e.to_string(),
        })?;
        Ok(SoakProbe {
            worker,
            ticks: rx,
            xid_note,
        })
    }

    /// Stops the thread.
    pub fn stop(mut self) {
        self.worker.halt();
    }
}

/// Captured whole by closures (a type with `Drop` is never captured field by field, which
/// would stop the probe when only `ticks` is moved).
impl Drop for SoakProbe {
    fn drop(&mut self) {
        self.worker.halt();
    }
}

fn run(
    topo: &Topology,
    gpus: &[usize],
    interval: Duration,
    start: Instant,
    stop: &AtomicBool,
    tx: &Sender<Tick>,
) {
    let Ok(nvml) = Nvml::init() else {
        return;
    };
    let devices: Vec<Option<Device>> = gpus.iter().map(|&g| device(&nvml, topo, g).ok()).collect();
    // Xid events of every soaked GPU in one set; each event names its device by UUID.
    let uuids: Vec<Option<String>> = devices
        .iter()
        .map(|d| d.as_ref().and_then(|d| d.uuid().ok()))
        .collect();
    let mut set = nvml.create_event_set().ok();
    for d in devices.iter().flatten() {
        set = set.and_then(|s| d.register_events(EventTypes::CRITICAL_XID_ERROR, s).ok());
    }
    let mut energy: Vec<Option<(u64, Instant)>> = devices
        .iter()
        .map(|d| {
            d.as_ref()
                .and_then(|d| d.total_energy_consumption().ok())
                .map(|e| (e, Instant::now()))
        })
        .collect();
    let mut xids: Vec<Vec<u64>> = vec![Vec::new(); gpus.len()];
    let mut cpu = HostCpu::read();
    let mut next = start + interval;
    while !stop.load(Ordering::SeqCst) {
        // Wait for the next reading, watching for Xid events meanwhile (or sleeping when they
        // cannot be watched), in slices short enough to notice `stop`.
        loop {
            let now = Instant::now();
            if now >= next || stop.load(Ordering::SeqCst) {
                break;
            }
            let wait = (next - now).min(Duration::from_millis(200));
            match &set {
                Some(s) => match s.wait(wait.as_millis().max(1) as u32) {
                    Ok(ev) => {
                        let id = ev.device.uuid().ok();
                        if let Some(i) = uuids.iter().position(|u| u.is_some() && *u == id) {
                            xids[i].push(match ev.event_data {
                                Some(XidError::Value(x)) => x,
                                _ => 0,
                            });
                        }
                    }
                    Err(NvmlError::Timeout) => {}
                    Err(_) => std::thread::sleep(wait),
                },
                None => std::thread::sleep(wait),
            }
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let at = Instant::now();
        let t_s = at.duration_since(start).as_secs_f64();
        let now_cpu = HostCpu::read();
        let host = cpu.zip(now_cpu).and_then(|(a, b)| b.since(&a));
        cpu = now_cpu;
        let mut samples = Vec::with_capacity(gpus.len());
        for (i, (&g, dev)) in gpus.iter().zip(&devices).enumerate() {
            let mut s = SoakSample {
                t_s,
                gpu: g,
                xid: std::mem::take(&mut xids[i]),
                host_cpu_percent: host.map(|h| h.0),
                host_steal_percent: host.map(|h| h.1),
                ..Default::default()
            };
            if let Some(dev) = dev {
                read(&nvml, dev, &mut s, &mut energy[i]);
            }
            samples.push(s);
        }
        if tx.send(Tick { at, samples }).is_err() {
            break;
        }
        next += interval;
        // Behind by more than an interval (a slow NVML call): skip ahead rather than burst.
        let now = Instant::now();
        while next + interval < now {
            next += interval;
        }
    }
}

/// Fills `s` from `dev`; `energy` is the counter's last reading and when it was taken.
fn read(nvml: &Nvml, dev: &Device, s: &mut SoakSample, energy: &mut Option<(u64, Instant)>) {
    s.sm_clock_mhz = dev.clock_info(Clock::SM).ok();
    s.mem_clock_mhz = dev.clock_info(Clock::Memory).ok();
    let now = Instant::now();
    let counter = dev.total_energy_consumption().ok();
    s.power_w = match (counter, *energy) {
        // Millijoules over the interval → watts; a counter that went backwards (reset) falls
        // back to the instantaneous reading.
        (Some(e), Some((e0, t0))) if e >= e0 && now > t0 => {
            Some((e - e0) as f64 / 1e3 / now.duration_since(t0).as_secs_f64())
        }
        _ => dev.power_usage().ok().map(|mw| mw as f64 / 1e3),
    };
    *energy = counter.map(|e| (e, now));
    s.gpu_temp_c = dev.temperature(TemperatureSensor::Gpu).ok().map(f64::from);
    s.mem_temp_c = dev
        .field_values_for(&[FieldId(FI_DEV_MEMORY_TEMP)])
        .ok()
        .and_then(|v| v.into_iter().next())
        .and_then(|r| r.ok())
        .and_then(|f| f.value.ok())
        .map(|v| match v {
            SampleValue::F64(x) => x,
            SampleValue::U32(x) => f64::from(x),
            SampleValue::U64(x) => x as f64,
            SampleValue::I64(x) => x as f64,
        })
        // Some boards report 0 for a sensor they do not have: unknown, not 0 °C.
        .filter(|t| *t > 0.0);
    s.fan_percent = dev.fan_speed(0).ok();
    s.util_percent = dev.utilization_rates().ok().map(|u| u.gpu);
    s.throttle = dev.current_throttle_reasons().ok().map(throttle_reasons);
    s.power_limit_w = dev
        .enforced_power_limit()
        .ok()
        .map(|mw| f64::from(mw) / 1e3);
    let e = ecc(nvml, dev);
    s.ecc_corrected = e.volatile_corrected;
    s.ecc_uncorrected = e.volatile_uncorrected;
    s.remapped_correctable = e.remapped_rows_correctable;
    s.remapped_uncorrectable = e.remapped_rows_uncorrectable;
    s.retired_pages = match (e.retired_pages_sbe, e.retired_pages_dbe) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    s.pcie_replays = dev.pcie_replay_counter().ok().map(u64::from);
    s.nvlink_errors = nvlinks(dev).filter(|l| !l.is_empty()).map(|links| {
        links
            .iter()
            .map(|l| {
                l.crc_errors.unwrap_or(0)
                    + l.replay_errors.unwrap_or(0)
                    + l.recovery_errors.unwrap_or(0)
            })
            .sum()
    });
    s.processes = processes(dev)
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.pid)
        .collect();
}
