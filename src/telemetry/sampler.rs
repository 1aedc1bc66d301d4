//! A [`Sampler`] that watches PCIe link state, clock limits, utilization and other processes
//! through NVML from its own thread while load tests run, with the readers of
//! [`nvml_state`](crate::topology::nvml_state).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use nvml_wrapper::{Device, Nvml};

use super::host_cpu::HostCpu;
use crate::model::{
    GpuLoadObservation, LoadObservation, PcieLink, ThrottleReason, Topology, pcie_rate_gbps,
};
use crate::topology::TopologyError;
use crate::topology::nvml_state::{device, no_driver, pcie_link, processes, throttle_reasons};

/// Watches the GPUs from its own thread while load tests run: the best PCIe link state each GPU
/// reaches (GPUs raise their link generation when a copy runs), clock limits, utilization and
/// other processes. Stop it with [`Sampler::stop`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<LoadObservation>>,
}

impl Sampler {
    /// Starts sampling GPUs `gpus` of `topo` every `interval`. Fails when NVML cannot be opened
    /// or a GPU not found.
    pub fn start(
        topo: &Topology,
        gpus: &[usize],
        interval: Duration,
    ) -> Result<Sampler, TopologyError> {
        // Resolve every device once here, so that errors come back to the caller.
        {
            let nvml = Nvml::init().map_err(no_driver)?;
            for &g in gpus {
                device(&nvml, topo, g)?;
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let topo = topo.clone();
        let gpus = gpus.to_vec();
        let handle = std::thread::Builder::new()
            .name("scalescope-nvml-sampler".into())
            .spawn(move || sample(&topo, &gpus, interval, &flag))
            .map_err(|e| TopologyError::Nvml {
                what: "sampler thread".into(),
                reason: e.to_string(),
            })?;
        Ok(Sampler {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops sampling and returns what was seen.
    pub fn stop(mut self) -> LoadObservation {
        self.stop.store(true, Ordering::SeqCst);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn sample(
    topo: &Topology,
    gpus: &[usize],
    interval: Duration,
    stop: &AtomicBool,
) -> LoadObservation {
    let mut obs = LoadObservation {
        samples: 0,
        interval_ms: interval.as_millis() as u32,
        gpus: gpus
            .iter()
            .map(|&index| GpuLoadObservation {
                index,
                ..Default::default()
            })
            .collect(),
        host_cpu_percent: None,
    };
    let cpu_start = HostCpu::read();
    let Ok(nvml) = Nvml::init() else {
        return obs;
    };
    let devices: Vec<Option<Device>> = gpus.iter().map(|&g| device(&nvml, topo, g).ok()).collect();
    loop {
        for (o, dev) in obs.gpus.iter_mut().zip(&devices) {
            let Some(dev) = dev else {
                continue;
            };
            let link = pcie_link(dev);
            let rate = |l: &PcieLink| {
                l.gen_current
                    .zip(l.width_current)
                    .and_then(|(g, w)| pcie_rate_gbps(g, w))
            };
            if let Some(r) = rate(&link)
                && o.pcie_under_load
                    .as_ref()
                    .and_then(rate)
                    .is_none_or(|best| r > best)
            {
                o.pcie_under_load = Some(link);
            }
            if let Ok(bits) = dev.current_throttle_reasons() {
                for r in throttle_reasons(bits) {
                    let setting = r == ThrottleReason::ApplicationsClocks;
                    if (r.is_limit() || setting) && !o.throttle_seen.contains(&r) {
                        o.throttle_seen.push(r);
                    }
                }
            }
            if let Ok(mw) = dev.enforced_power_limit() {
                let w = f64::from(mw) / 1e3;
                o.power_limit_min_w = Some(o.power_limit_min_w.map_or(w, |m: f64| m.min(w)));
            }
            if let Ok(u) = dev.utilization_rates() {
                o.max_utilization_percent = Some(o.max_utilization_percent.unwrap_or(0).max(u.gpu));
            }
            if let Some(ps) = processes(dev) {
                for p in ps {
                    if !o.other_processes.iter().any(|x| x.pid == p.pid) {
                        o.other_processes.push(p);
                    }
                }
            }
        }
        obs.samples += 1;
        if stop.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(interval);
    }
    obs.host_cpu_percent = cpu_start
        .zip(HostCpu::read())
        .and_then(|(a, b)| b.since(&a))
        .map(|(busy, _)| busy);
    obs
}
