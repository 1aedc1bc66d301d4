//! Live traffic feeds: the NVML sampler (one thread, one NVML session, every watched GPU once
//! per interval), a recording played back, and reading recordings from files. Each is a
//! [`LiveFeed`]: a channel of [`LiveEvent`]s — the header, samples, the end.
//!
//! Hopper and later GPUs are read through GPU Performance Monitoring (GPM): a GPM sample per GPU
//! at each end of the interval, and NVML's metrics between the two (PCIe RX/TX, NVLink per link
//! RX/TX, SM activity, DRAM bandwidth use). Older GPUs give what they have: PCIe from the
//! driver's 20 ms window (`nvmlDeviceGetPcieThroughput`), NVLink from the per-link data counters
//! differenced over the interval, utilization instead of SM activity; each reading says which.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter};
use nvml_wrapper::enum_wrappers::nv_link::IntDeviceType;
use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::gpm::{GpmSample, gpm_metrics_get};
use nvml_wrapper::{Device, Nvml};

use super::stoppable::StoppableThread;
use crate::model::traffic::{
    GpuTraffic, LinkPeer, LiveEvent, NvLinkTraffic, ReadingSource, TrafficRecording, TrafficSample,
    WatchHeader, parse_recording,
};
use crate::model::{NVLINKS_PER_GPU_MAX, Topology};
use crate::topology::TopologyError;
use crate::topology::nvml_state::{device, no_driver, processes, throttle_reasons};

/// The most NVLinks NVML numbers (`NVML_NVLINK_MAX_LINKS`) and GPM has metrics for.
const MAX_LINKS: u32 = 18;
/// GPM's first per-link metric (`NVML_GPM_METRIC_NVLINK_L0_RX_PER_SEC`); link `l` receives at
/// `62 + 2l`, transmits at `63 + 2l` (nvml.h).
const GPM_NVLINK_L0_RX: u32 = 62;
/// `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX` / `_RX`: per-link data counters in KiB (scope: link).
const FI_NVLINK_DATA_TX: u32 = 138;
const FI_NVLINK_DATA_RX: u32 = 139;
/// The largest recording `--replay` reads (a day at 1 s of 8 GPUs is about 300 MB).
pub const RECORDING_MAX_BYTES: u64 = 1 << 30;

/// A running feed. Dropping it (or [`LiveFeed::stop`]) stops its thread.
pub struct LiveFeed {
    /// The events, header first.
    pub events: Receiver<LiveEvent>,
    worker: StoppableThread,
}

impl LiveFeed {
    /// A feed whose events `work` sends from a named thread until `stop` is set or it returns.
    pub fn spawn(
        name: &str,
        work: impl FnOnce(&AtomicBool, &Sender<LiveEvent>) + Send + 'static,
    ) -> Result<LiveFeed, std::io::Error> {
        let (tx, rx) = channel();
        let worker = StoppableThread::spawn(name, move |stop| work(stop, &tx))?;
        Ok(LiveFeed { events: rx, worker })
    }

    /// Stops the thread and waits for it.
    pub fn stop(mut self) {
        self.worker.halt();
    }
}

/// Also what keeps a closure that uses only `events` from leaving the worker behind: a type
/// with `Drop` is captured whole, never field by field (which would stop the feed at once).
impl Drop for LiveFeed {
    fn drop(&mut self) {
        self.worker.halt();
    }
}

/// Sleeps until `until` in slices short enough to notice `stop`; false when stopped.
fn sleep_until(until: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

/// Plays `recording` back: its header, then each sample at its recorded time divided by
/// `speed` (`f64::INFINITY`: as fast as the reader takes them), then the end.
pub fn replay(recording: TrafficRecording, speed: f64) -> Result<LiveFeed, std::io::Error> {
    LiveFeed::spawn("scalescope-watch-replay", move |stop, tx| {
        let TrafficRecording { header, samples } = recording;
        if tx.send(LiveEvent::Header(Box::new(header))).is_err() {
            return;
        }
        let start = Instant::now();
        let t0 = samples.first().map_or(0.0, |s| s.t_s - s.interval_s);
        for s in samples {
            if speed.is_finite() {
                let due = ((s.t_s - t0) / speed).max(0.0);
                if !sleep_until(start + Duration::from_secs_f64(due), stop) {
                    return;
                }
            } else if stop.load(Ordering::SeqCst) {
                return;
            }
            if tx.send(LiveEvent::Sample(s)).is_err() {
                return;
            }
        }
        let _ = tx.send(LiveEvent::End { error: None });
    })
}

/// Reads a recording (`watch --record`'s JSON lines) from `path`; errors name the file, the
/// line and the field.
pub fn read_recording(path: &Path) -> Result<TrafficRecording, TopologyError> {
    let origin = path.display().to_string();
    let text =
        crate::input::read_text(path, RECORDING_MAX_BYTES).map_err(|e| TopologyError::Io {
            path: origin.clone(),
            source: e.into(),
        })?;
    parse_recording(&text).map_err(|e| TopologyError::Parse {
        origin,
        line: e.line,
        message: e.message,
    })
}

/// Each link's (receive, transmit) data counter in KiB, in the order of the GPU's links.
type LinkCounters = Vec<(Option<u64>, Option<u64>)>;

/// What the sampler knows about one GPU before it starts.
struct Watched<'n> {
    gpu: usize,
    dev: Device<'n>,
    /// Active links and where they lead.
    links: Vec<(u32, LinkPeer)>,
    gpm: bool,
    /// GPM's sample at the start of the interval.
    last_gpm: Option<GpmSample<'n>>,
    /// The per-link data counters (KiB) at the start of the interval, when read that way.
    last_counters: Option<(LinkCounters, Instant)>,
    last_energy: Option<(u64, Instant)>,
}

/// Starts the NVML sampler on GPUs `gpus` of the live `topo`, a sample every `interval`. Fails
/// when NVML cannot be opened or a GPU is not found; what a GPU cannot give is said in the
/// header's notes and left absent in its samples.
pub fn watch_live(
    topo: &Topology,
    gpus: &[usize],
    interval: Duration,
    started_at: String,
    host: Option<String>,
) -> Result<LiveFeed, TopologyError> {
    // Open every device here once, so that errors come back to the caller.
    {
        let nvml = Nvml::init().map_err(no_driver)?;
        for &g in gpus {
            device(&nvml, topo, g)?;
        }
    }
    let topo = topo.clone();
    let gpus = gpus.to_vec();
    LiveFeed::spawn("scalescope-watch", move |stop, tx| {
        let error = sample_loop(&topo, &gpus, interval, started_at, host, stop, tx).err();
        let _ = tx.send(LiveEvent::End { error });
    })
    .map_err(|e| TopologyError::Nvml {
        what: "watch thread".into(),
        reason: e.to_string(),
    })
}

fn sample_loop(
    topo: &Topology,
    gpus: &[usize],
    interval: Duration,
    started_at: String,
    host: Option<String>,
    stop: &AtomicBool,
    tx: &Sender<LiveEvent>,
) -> Result<(), String> {
    let nvml = Nvml::init().map_err(|e| format!("NVML: {e}"))?;
    let mut header = WatchHeader::new(
        topo.clone(),
        gpus.to_vec(),
        interval.as_secs_f64(),
        started_at,
    );
    header.host = host;
    let mut watched = Vec::new();
    for &g in gpus {
        let dev = device(&nvml, topo, g).map_err(|e| e.to_string())?;
        let mut links = link_peers(topo, &dev);
        if let Some(note) = infer_peers(topo, g, &mut links) {
            header.notes.push(note);
        }
        let gpm = dev.gpm_support().unwrap_or(false);
        if !gpm {
            header.notes.push(format!(
                "GPU {g}: no GPU Performance Monitoring (it needs Hopper or later): PCIe from the driver's 20 ms window, NVLink from the per-link data counters, utilization instead of SM activity"
            ));
        }
        watched.push(Watched {
            gpu: g,
            dev,
            links,
            gpm,
            last_gpm: None,
            last_counters: None,
            last_energy: None,
        });
    }
    // The first readings: the start of the first interval.
    for w in &mut watched {
        start_interval(&nvml, w, &mut header.notes);
    }
    if tx.send(LiveEvent::Header(Box::new(header))).is_err() {
        return Ok(());
    }
    let start = Instant::now();
    let mut last = start;
    let mut next = start + interval;
    let mut units_noted = false;
    loop {
        if !sleep_until(next, stop) {
            return Ok(());
        }
        let now = Instant::now();
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs_f64());
        let mut notes = Vec::new();
        let gpus = watched
            .iter_mut()
            .map(|w| read_gpu(&nvml, w, &mut notes))
            .collect();
        let sample = TrafficSample {
            t_s: now.duration_since(start).as_secs_f64(),
            interval_s: now.duration_since(last).as_secs_f64(),
            unix_s,
            gpus,
        };
        if !units_noted && !notes.is_empty() {
            // A metric in a unit this build does not know: said once, on standard error's
            // side of the feed (the header has gone).
            units_noted = true;
            for n in notes {
                crate::stderr_line!("scalescope watch: {n}");
            }
        }
        if tx.send(LiveEvent::Sample(sample)).is_err() {
            return Ok(());
        }
        last = now;
        next += interval;
        // Behind by more than an interval (a slow NVML call): skip ahead rather than burst.
        while next + interval < Instant::now() {
            next += interval;
        }
    }
}

/// Where each active NVLink of `dev` leads: a GPU of `topo` (by PCI bus id), a switch, or
/// unknown.
fn link_peers(topo: &Topology, dev: &Device) -> Vec<(u32, LinkPeer)> {
    let mut out = Vec::new();
    for l in 0..MAX_LINKS.min(NVLINKS_PER_GPU_MAX) {
        let link = dev.link_wrapper_for(l);
        if !link.is_active().unwrap_or(false) {
            continue;
        }
        let peer = match link.remote_device_type(l) {
            Ok(IntDeviceType::Switch) => LinkPeer::Switch,
            _ => match link.remote_pci_info() {
                Ok(info) => topo
                    .gpus
                    .iter()
                    .find(|g| {
                        g.pci_bus_id
                            .as_deref()
                            .is_some_and(|b| crate::model::same_pci_bus(b, &info.bus_id))
                    })
                    .map_or(LinkPeer::Unknown, |g| LinkPeer::Gpu(g.index)),
                Err(_) => LinkPeer::Unknown,
            },
        };
        out.push((l, peer));
    }
    out
}

/// Where NVML cannot name the far end of a GPU's links (virtual machines report
/// `FFFFFFFF:FF:FF.0`), the topology may: when it joins the GPU by NVLink to exactly one other
/// GPU, with as many links as are unknown here, those links lead there. Returns the note that
/// says so, or why the links stay unknown.
fn infer_peers(topo: &Topology, gpu: usize, links: &mut [(u32, LinkPeer)]) -> Option<String> {
    let unknown = links
        .iter()
        .filter(|(_, p)| *p == LinkPeer::Unknown)
        .count();
    if unknown == 0 {
        return None;
    }
    let partners: Vec<(usize, u32)> = topo
        .links
        .iter()
        .filter(|l| l.a == gpu || l.b == gpu)
        .filter_map(|l| {
            let n = l.kind.and_then(|k| k.nvlinks())?;
            Some((if l.a == gpu { l.b } else { l.a }, n))
        })
        .collect();
    match partners.as_slice() {
        [(peer, n)] if *n as usize == unknown => {
            for (_, p) in links.iter_mut() {
                if *p == LinkPeer::Unknown {
                    *p = LinkPeer::Gpu(*peer);
                }
            }
            Some(format!(
                "GPU {gpu}: NVML does not name the far end of its {unknown} NVLinks (as in a virtual machine); they lead to GPU {peer}, the one GPU the topology joins to it by NVLink (NV{n})"
            ))
        }
        _ => Some(format!(
            "GPU {gpu}: NVML does not name the far end of {unknown} of its NVLinks: their traffic counts in the GPU's NVLink totals, not in a GPU pair's"
        )),
    }
}

/// Takes the readings that mark the start of an interval (GPM sample, NVLink counters, energy).
fn start_interval<'n>(nvml: &'n Nvml, w: &mut Watched<'n>, notes: &mut Vec<String>) {
    if w.gpm {
        match w.dev.gpm_sample() {
            Ok(s) => w.last_gpm = Some(s),
            Err(e) => {
                notes.push(format!(
                    "GPU {}: GPM sample failed ({e}); its GPM readings are absent",
                    w.gpu
                ));
                w.gpm = false;
            }
        }
    } else {
        w.last_counters = Some((nvlink_counters(nvml, &w.dev, &w.links), Instant::now()));
    }
    w.last_energy = w
        .dev
        .total_energy_consumption()
        .ok()
        .map(|e| (e, Instant::now()));
}

/// One interval's readings of one GPU; starts the next interval.
fn read_gpu<'n>(nvml: &'n Nvml, w: &mut Watched<'n>, notes: &mut Vec<String>) -> GpuTraffic {
    let mut g = GpuTraffic::new(w.gpu);
    if w.gpm {
        read_gpm(nvml, w, &mut g, notes);
    } else {
        read_counters(nvml, w, &mut g);
    }
    // Power: the energy counter's step over the interval, else the driver's reading.
    let now = Instant::now();
    let counter = w.dev.total_energy_consumption().ok();
    (g.power_w, g.power_source) = match (counter, w.last_energy) {
        (Some(e), Some((e0, t0))) if e >= e0 && now > t0 => (
            Some((e - e0) as f64 / 1e3 / now.duration_since(t0).as_secs_f64()),
            Some(ReadingSource::EnergyCounter),
        ),
        _ => match w.dev.power_usage() {
            Ok(mw) => (Some(f64::from(mw) / 1e3), Some(ReadingSource::PowerReading)),
            Err(_) => (None, None),
        },
    };
    w.last_energy = counter.map(|e| (e, now));
    g.sm_clock_mhz = w.dev.clock_info(Clock::SM).ok();
    g.memory_clock_mhz = w.dev.clock_info(Clock::Memory).ok();
    g.throttle = w.dev.current_throttle_reasons().ok().map(throttle_reasons);
    g.processes = processes(&w.dev);
    g
}

/// Bytes per second from a GPM value in the unit NVML names (nvml.h gives MiB/s for PCIe and
/// NVLink); `None` for a unit this build does not know.
fn bytes_per_s(value: f64, unit: &str) -> Option<f64> {
    let factor = match unit.trim().to_ascii_lowercase().as_str() {
        "mib/sec" | "mib/s" => 1024.0 * 1024.0,
        "mb/sec" | "mb/s" => 1e6,
        "kib/sec" | "kib/s" => 1024.0,
        "b/sec" | "b/s" | "bytes/sec" | "bytes/s" => 1.0,
        "gib/sec" | "gib/s" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(value * factor)
}

fn read_gpm<'n>(nvml: &'n Nvml, w: &mut Watched<'n>, g: &mut GpuTraffic, notes: &mut Vec<String>) {
    let Some(prev) = w.last_gpm.take() else {
        return;
    };
    let cur = match w.dev.gpm_sample() {
        Ok(s) => s,
        Err(e) => {
            notes.push(format!("GPU {}: GPM sample failed: {e}", w.gpu));
            return;
        }
    };
    let mut ids = vec![
        GpmMetricId::PcieRxPerSec,
        GpmMetricId::PcieTxPerSec,
        GpmMetricId::SmUtil,
        GpmMetricId::DramBwUtil,
    ];
    for &(l, _) in &w.links {
        for id in [GPM_NVLINK_L0_RX + 2 * l, GPM_NVLINK_L0_RX + 2 * l + 1] {
            if let Ok(m) = GpmMetricId::try_from(id) {
                ids.push(m);
            }
        }
    }
    let results = gpm_metrics_get(nvml, &prev, &cur, &ids);
    w.last_gpm = Some(cur);
    let Ok(results) = results else {
        return;
    };
    let value = |id: GpmMetricId| -> Option<(f64, String)> {
        let i = ids.iter().position(|m| *m == id)?;
        let r = results.get(i)?.as_ref().ok()?;
        r.value
            .is_finite()
            .then(|| (r.value.max(0.0), r.metric_info.unit.clone()))
    };
    let mut rate = |id: GpmMetricId| -> Option<f64> {
        let (v, unit) = value(id)?;
        let b = bytes_per_s(v, &unit);
        if b.is_none() {
            notes.push(format!(
                "GPU {}: GPM metric {id:?} in unit {unit:?}, which this build does not convert; left absent",
                w.gpu
            ));
        }
        b
    };
    g.pcie_rx_bytes_per_s = rate(GpmMetricId::PcieRxPerSec);
    g.pcie_tx_bytes_per_s = rate(GpmMetricId::PcieTxPerSec);
    if g.pcie_rx_bytes_per_s.is_some() || g.pcie_tx_bytes_per_s.is_some() {
        g.pcie_source = Some(ReadingSource::Gpm);
    }
    for &(l, peer) in &w.links {
        let rx = GpmMetricId::try_from(GPM_NVLINK_L0_RX + 2 * l).ok();
        let tx = GpmMetricId::try_from(GPM_NVLINK_L0_RX + 2 * l + 1).ok();
        g.nvlinks.push(NvLinkTraffic {
            link: l,
            peer,
            rx_bytes_per_s: rx.and_then(&mut rate),
            tx_bytes_per_s: tx.and_then(&mut rate),
        });
    }
    if g.nvlinks
        .iter()
        .any(|l| l.rx_bytes_per_s.is_some() || l.tx_bytes_per_s.is_some())
    {
        g.nvlink_source = Some(ReadingSource::Gpm);
    }
    g.sm_activity_pct = value(GpmMetricId::SmUtil).map(|(v, _)| v.min(100.0));
    g.sm_source = g.sm_activity_pct.map(|_| ReadingSource::Gpm);
    g.memory_bw_pct = value(GpmMetricId::DramBwUtil).map(|(v, _)| v.min(100.0));
    g.memory_bw_source = g.memory_bw_pct.map(|_| ReadingSource::Gpm);
}

/// GPUs without GPM: PCIe from the driver's 20 ms window, NVLink from the data counters'
/// steps, utilization rates.
fn read_counters<'n>(nvml: &'n Nvml, w: &mut Watched<'n>, g: &mut GpuTraffic) {
    // nvmlDeviceGetPcieThroughput gives KB/s (1,000 bytes; nvml.h).
    g.pcie_rx_bytes_per_s = w
        .dev
        .pcie_throughput(PcieUtilCounter::Receive)
        .ok()
        .map(|kb| f64::from(kb) * 1e3);
    g.pcie_tx_bytes_per_s = w
        .dev
        .pcie_throughput(PcieUtilCounter::Send)
        .ok()
        .map(|kb| f64::from(kb) * 1e3);
    if g.pcie_rx_bytes_per_s.is_some() || g.pcie_tx_bytes_per_s.is_some() {
        g.pcie_source = Some(ReadingSource::PcieWindow);
    }
    let now = Instant::now();
    let counters = nvlink_counters(nvml, &w.dev, &w.links);
    if let Some((before, t0)) = w.last_counters.take() {
        let secs = now.duration_since(t0).as_secs_f64();
        for (i, &(l, peer)) in w.links.iter().enumerate() {
            let step = |a: Option<u64>, b: Option<u64>| match (a, b) {
                // KiB counters; a counter that went back (reset) gives nothing this interval.
                (Some(a), Some(b)) if b >= a && secs > 0.0 => Some((b - a) as f64 * 1024.0 / secs),
                _ => None,
            };
            let (rx0, tx0) = before.get(i).copied().unwrap_or((None, None));
            let (rx1, tx1) = counters.get(i).copied().unwrap_or((None, None));
            g.nvlinks.push(NvLinkTraffic {
                link: l,
                peer,
                rx_bytes_per_s: step(rx0, rx1),
                tx_bytes_per_s: step(tx0, tx1),
            });
        }
        if g.nvlinks
            .iter()
            .any(|l| l.rx_bytes_per_s.is_some() || l.tx_bytes_per_s.is_some())
        {
            g.nvlink_source = Some(ReadingSource::NvlinkCounter);
        }
    }
    w.last_counters = Some((counters, now));
    if let Ok(u) = w.dev.utilization_rates() {
        g.sm_activity_pct = Some(f64::from(u.gpu));
        g.sm_source = Some(ReadingSource::Utilization);
        g.memory_bw_pct = Some(f64::from(u.memory));
        g.memory_bw_source = Some(ReadingSource::Utilization);
    }
}

/// Each link's (receive, transmit) data counter in KiB, through `nvmlDeviceGetFieldValues`
/// with the link as the scope (nvml-wrapper 0.13 has no scoped field call).
fn nvlink_counters(
    nvml: &Nvml,
    dev: &Device,
    links: &[(u32, LinkPeer)],
) -> Vec<(Option<u64>, Option<u64>)> {
    use nvml_wrapper_sys::bindings::nvmlFieldValue_t;
    let Ok(f) = nvml.lib().nvmlDeviceGetFieldValues.as_ref() else {
        return vec![(None, None); links.len()];
    };
    // SAFETY: nvmlFieldValue_t is a plain C struct for which all-zero bytes are valid.
    let mut values: Vec<nvmlFieldValue_t> = links
        .iter()
        .flat_map(|&(l, _)| {
            [FI_NVLINK_DATA_RX, FI_NVLINK_DATA_TX].map(|id| {
                let mut v: nvmlFieldValue_t = unsafe { std::mem::zeroed() };
                v.fieldId = id;
                v.scopeId = l;
                v
            })
        })
        .collect();
    if values.is_empty() {
        return Vec::new();
    }
    // SAFETY: `f` is NVML's symbol with this signature; the handle belongs to the live `nvml`;
    // `values` holds `values.len()` initialised entries NVML fills in place.
    let rc = unsafe { f(dev.handle(), values.len() as i32, values.as_mut_ptr()) };
    if rc != 0 {
        return vec![(None, None); links.len()];
    }
    let read = |v: &nvmlFieldValue_t| -> Option<u64> {
        // valueType 4 is unsigned long long (nvmlValueType_t NVML_VALUE_TYPE_UNSIGNED_LONG_LONG).
        // SAFETY: the union member read is the one `valueType` names.
        if v.nvmlReturn == 0 && v.valueType == 4 {
            Some(unsafe { v.value.ullVal })
        } else {
            None
        }
    };
    values
        .chunks(2)
        .map(|pair| (read(&pair[0]), read(&pair[1])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_link_ends_are_the_one_nvlink_partner_when_the_counts_agree() {
        use crate::model::{Gpu, GpuLink, LinkKind, TopologySource};
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        for index in 0..3 {
            t.gpus.push(Gpu {
                index,
                ..Default::default()
            });
        }
        let mut nv = GpuLink::unknown(0, 1);
        nv.kind = Some(LinkKind::Nv(2));
        t.links.push(nv);
        let mut pcie = GpuLink::unknown(0, 2);
        pcie.kind = Some(LinkKind::Sys);
        t.links.push(pcie);
        let mut links = vec![(0, LinkPeer::Unknown), (1, LinkPeer::Unknown)];
        let note = infer_peers(&t, 0, &mut links).unwrap();
        assert!(note.contains("lead to GPU 1"), "{note}");
        assert!(links.iter().all(|(_, p)| *p == LinkPeer::Gpu(1)));
        // Three unknown links, two to the partner: not attributable.
        let mut links = vec![(0, LinkPeer::Unknown); 3];
        let note = infer_peers(&t, 0, &mut links).unwrap();
        assert!(note.contains("not in a GPU pair's"), "{note}");
        assert!(links.iter().all(|(_, p)| *p == LinkPeer::Unknown));
        // Every end known: nothing to say.
        let mut links = vec![(0, LinkPeer::Gpu(1))];
        assert_eq!(infer_peers(&t, 0, &mut links), None);
    }

    #[test]
    fn gpm_units_convert_and_unknown_ones_are_absent() {
        assert_eq!(bytes_per_s(2.0, "MiB/sec"), Some(2.0 * 1048576.0));
        assert_eq!(bytes_per_s(3.0, "MB/s"), Some(3e6));
        assert_eq!(bytes_per_s(1.0, "furlongs"), None);
    }
}
