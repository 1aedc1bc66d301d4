//! An [`EnergyMeter`]: a thread that reads each GPU's NVML energy counter every [`POLL`] from
//! shortly before its next step is due ([`Cadence`]) and keeps the moments it stepped, so that any window of a run — a copy test's
//! timed samples, a collective's — gets the GPUs' mean power from the counter's own steps
//! ([`crate::model::energy::mean_watts`]). GPUs without the counter (before Volta) are read
//! through their power readings instead, labeled so.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nvml_wrapper::{Device, Nvml};

use crate::model::Topology;
use crate::model::energy::{EnergyBasis, TestEnergy, TraceKind, mean_watts};
use crate::topology::TopologyError;
use crate::topology::nvml_state::{device, no_driver};

/// How often the counter is read. Its steps are 100 ms apart on H100 and H200, so a step is
/// placed within a millisecond (the midpoint between the read before it and the read that saw
/// it).
pub const POLL: Duration = Duration::from_millis(2);
/// The shortest span between counter steps a window's power is taken over: three steps.
pub const MIN_SPAN_S: f64 = 0.2;
/// Readings kept per GPU (half an hour of counter steps, 40 s of power readings): the older
/// half is dropped when full.
const KEEP: usize = 20_000;

/// One GPU's readings.
struct Trace {
    kind: TraceKind,
    /// (seconds since the meter's start, value).
    points: Vec<(f64, u64)>,
}

/// Reads the GPUs' energy in the background until dropped.
pub struct EnergyMeter {
    stop: Arc<AtomicBool>,
    traces: Arc<Mutex<BTreeMap<usize, Trace>>>,
    /// The meter's zero, as an `Instant` and as Unix seconds.
    epoch: Instant,
    epoch_unix: f64,
    idle_w: BTreeMap<usize, Option<f64>>,
    handle: Option<JoinHandle<()>>,
}

impl EnergyMeter {
    /// Starts reading GPUs `gpus` of `topo`, after reading their power once (the idle power
    /// the tests' figures are put beside). Fails when NVML cannot be opened or a GPU is neither
    /// a counter nor a power reading.
    pub fn start(topo: &Topology, gpus: &[usize]) -> Result<EnergyMeter, TopologyError> {
        let mut kinds = BTreeMap::new();
        let mut idle_w = BTreeMap::new();
        {
            let nvml = Nvml::init().map_err(no_driver)?;
            for &g in gpus {
                let dev = device(&nvml, topo, g)?;
                let kind = if dev.total_energy_consumption().is_ok() {
                    TraceKind::CounterMj
                } else if dev.power_usage().is_ok() {
                    TraceKind::PowerMw
                } else {
                    return Err(TopologyError::Nvml {
                        what: format!("GPU {g} energy"),
                        reason: "NVML gives neither an energy counter nor a power reading".into(),
                    });
                };
                kinds.insert(g, kind);
                idle_w.insert(g, dev.power_usage().ok().map(|mw| f64::from(mw) / 1e3));
            }
        }
        let traces: BTreeMap<usize, Trace> = kinds
            .iter()
            .map(|(&g, &kind)| {
                (
                    g,
                    Trace {
                        kind,
                        points: Vec::new(),
                    },
                )
            })
            .collect();
        let traces = Arc::new(Mutex::new(traces));
        let stop = Arc::new(AtomicBool::new(false));
        let epoch = Instant::now();
        let epoch_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let handle = {
            let (topo, stop, traces) = (topo.clone(), stop.clone(), traces.clone());
            std::thread::Builder::new()
                .name("scalescope-energy".into())
                .spawn(move || read(&topo, &kinds, epoch, &stop, &traces))
                .map_err(|e| TopologyError::Nvml {
                    what: "energy meter thread".into(),
                    reason: e.to_string(),
                })?
        };
        Ok(EnergyMeter {
            stop,
            traces,
            epoch,
            epoch_unix,
            idle_w,
            handle: Some(handle),
        })
    }

    /// A meter of GPUs `gpus` shared with whoever else in this process reads the same ones (the
    /// copy and collectives backends of one suite): one thread reading NVML, not one each.
    pub fn shared(topo: &Topology, gpus: &[usize]) -> Result<Arc<EnergyMeter>, TopologyError> {
        static SHARED: Mutex<Vec<Weak<EnergyMeter>>> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        shared.retain(|w| w.strong_count() > 0);
        let want: Vec<usize> = {
            let mut g = gpus.to_vec();
            g.sort_unstable();
            g.dedup();
            g
        };
        if let Some(m) = shared
            .iter()
            .filter_map(Weak::upgrade)
            .find(|m| m.gpus() == want)
        {
            return Ok(m);
        }
        let m = Arc::new(EnergyMeter::start(topo, &want)?);
        shared.push(Arc::downgrade(&m));
        Ok(m)
    }

    /// The GPUs it reads.
    pub fn gpus(&self) -> Vec<usize> {
        self.idle_w.keys().copied().collect()
    }

    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.epoch).as_secs_f64()
    }

    /// Whether every GPU read has counter steps spanning `span_s` since `start` (a test that
    /// wants its energy measured runs on until this holds).
    pub fn covered(&self, start: Instant, span_s: f64) -> bool {
        let from = self.secs(start);
        let traces = self.traces.lock().unwrap_or_else(PoisonError::into_inner);
        traces.values().all(|t| {
            // Points are in time order: the first at or after `from`, and the last of all.
            let first = t.points.iter().find(|(s, _)| *s >= from);
            match (first, t.points.last()) {
                (Some(a), Some(b)) => b.0 - a.0 >= span_s,
                _ => false,
            }
        })
    }

    /// The energy of GPUs `gpus` over the window `[start, end]`: their mean power between the
    /// counter's steps inside it, times its length. `Err` says why there is none (a GPU not
    /// read, a window too short for the counter).
    pub fn window(
        &self,
        gpus: &[usize],
        start: Instant,
        end: Instant,
    ) -> Result<TestEnergy, String> {
        let (s, e) = (self.secs(start), self.secs(end));
        let traces = self.traces.lock().unwrap_or_else(PoisonError::into_inner);
        let mut total = 0.0;
        let mut measured = f64::INFINITY;
        let mut basis = EnergyBasis::Counter;
        let mut idle = Some(0.0);
        for &g in gpus {
            let t = traces
                .get(&g)
                .ok_or_else(|| format!("GPU {g}'s energy is not read"))?;
            let (w, span) = mean_watts(t.kind, &t.points, s, e, MIN_SPAN_S)
                .map_err(|why| format!("GPU {g}: {why}"))?;
            total += w;
            measured = measured.min(span);
            if t.kind == TraceKind::PowerMw {
                basis = EnergyBasis::PowerReadings;
            }
            idle = idle
                .zip(self.idle_w.get(&g).copied().flatten())
                .map(|(a, b)| a + b);
        }
        if gpus.is_empty() {
            return Err("no GPU to read".into());
        }
        Ok(TestEnergy {
            joules: total * (e - s),
            mean_power_w: total,
            idle_power_w: idle,
            seconds: e - s,
            measured_s: measured,
            basis,
            gpus: gpus.to_vec(),
            window_unix_s: [self.epoch_unix + s, self.epoch_unix + e],
        })
    }
}

impl Drop for EnergyMeter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The environment variable that makes the meter read every counter every [`POLL`] (`every`),
/// instead of only from shortly before each GPU's next step is due ([`Cadence`]): for comparing
/// the two.
pub const POLL_ENV: &str = "SCALESCOPE_ENERGY_POLL";

/// When a GPU's counter is worth reading. The counter steps about every 100 ms (H100, H200);
/// reads between a step and shortly before the next one learn nothing, so they are skipped: a
/// few reads per step instead of fifty, each a call into the driver that also reaches the GPU
/// while a test may be saturating its link. A step seen after a skipped stretch (it came earlier
/// than due) has no known time and is not kept as a point: the counter is cumulative, so the
/// next step's point still carries its energy.
#[derive(Debug, Default, Clone, Copy)]
struct Cadence {
    /// The last step whose time is known, meter seconds.
    step: Option<f64>,
    /// The interval between the last two known steps, s.
    period: Option<f64>,
}

impl Cadence {
    /// How long before a step is due reads resume: the counter's period wanders by a few
    /// milliseconds; a step earlier than this only costs its point.
    const LEAD_S: f64 = 0.015;
    /// Periods believed: anything else (a missed step, a stall) means reading continuously.
    const PERIODS_S: std::ops::RangeInclusive<f64> = 0.02..=0.5;

    /// Meter seconds from which the counter is read again (0: now, continuously).
    fn due(&self) -> f64 {
        match (self.step, self.period) {
            (Some(s), Some(p)) => s + p - Self::LEAD_S,
            _ => 0.0,
        }
    }

    /// A read saw the counter step at `at` (meter seconds); `known` when the read before it came
    /// within [`MAX_GAP`] (the step's time is then known to a poll).
    fn stepped(&mut self, at: f64, known: bool) {
        if !known {
            *self = Cadence::default();
            return;
        }
        self.period = self
            .step
            .map(|s| at - s)
            .filter(|p| Self::PERIODS_S.contains(p));
        self.step = Some(at);
    }
}

/// The longest gap between two reads for the step between them to be placed at their midpoint.
const MAX_GAP: f64 = 0.01;

/// The meter's thread: each GPU's counter (kept where it changed, at the midpoint since the
/// previous read) every [`POLL`] from shortly before its next step is due ([`Cadence`]), or its
/// power reading every [`POLL`].
fn read(
    topo: &Topology,
    kinds: &BTreeMap<usize, TraceKind>,
    epoch: Instant,
    stop: &AtomicBool,
    traces: &Mutex<BTreeMap<usize, Trace>>,
) {
    let Ok(nvml) = Nvml::init() else {
        return;
    };
    let every = std::env::var(POLL_ENV).as_deref() == Ok("every");
    let mut gpus: Vec<Reader<'_>> = kinds
        .iter()
        .filter_map(|(&gpu, &kind)| {
            Some(Reader {
                gpu,
                kind,
                dev: device(&nvml, topo, gpu).ok()?,
                last: None,
                cadence: Cadence::default(),
                every,
            })
        })
        .collect();
    while !stop.load(Ordering::Relaxed) {
        let mut seen = Vec::with_capacity(gpus.len());
        for r in &mut gpus {
            let now = epoch.elapsed().as_secs_f64();
            if now >= r.due() {
                seen.extend(r.read(now).map(|(t, v)| (r.gpu, t, v)));
            }
        }
        if !seen.is_empty() {
            let mut traces = traces.lock().unwrap_or_else(PoisonError::into_inner);
            for (g, t, v) in seen {
                if let Some(tr) = traces.get_mut(&g) {
                    if tr.points.len() >= KEEP {
                        tr.points.drain(..KEEP / 2);
                    }
                    tr.points.push((t, v));
                }
            }
        }
        // One POLL while any GPU is due, else until the first one is, at most 50 ms (the stop
        // flag is looked at in between).
        let next = gpus.iter().map(Reader::due).fold(f64::INFINITY, f64::min);
        let now = epoch.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_secs_f64((next - now).clamp(0.0, 0.05)).max(POLL));
    }
}

/// One GPU as the meter reads it: its last reading (meter seconds, value) and its counter's
/// cadence.
struct Reader<'n> {
    gpu: usize,
    kind: TraceKind,
    dev: Device<'n>,
    last: Option<(f64, Option<u64>)>,
    cadence: Cadence,
    /// Every [`POLL`], the cadence ignored ([`POLL_ENV`]).
    every: bool,
}

impl Reader<'_> {
    /// Meter seconds from which this GPU is read again (0: now): a counter by its cadence, a
    /// power reading always.
    fn due(&self) -> f64 {
        match self.kind {
            TraceKind::CounterMj if !self.every => self.cadence.due(),
            _ => 0.0,
        }
    }

    /// Reads the GPU at `now`; the point to keep: a counter step (at the midpoint since the
    /// read before it, where that read came within [`MAX_GAP`]) or a power reading.
    fn read(&mut self, now: f64) -> Option<(f64, u64)> {
        let value = match self.kind {
            TraceKind::CounterMj => self.dev.total_energy_consumption().ok(),
            TraceKind::PowerMw => self.dev.power_usage().ok().map(u64::from),
        };
        let (prev_t, prev_v) = self.last.unwrap_or((now, None));
        self.last = Some((now, value.or(prev_v)));
        let v = value?;
        match self.kind {
            TraceKind::PowerMw => Some((now, v)),
            // The first read is a reference, not a step: when the counter stepped to it is not
            // known.
            TraceKind::CounterMj if prev_v.is_some_and(|p| p != v) => {
                let at = (prev_t + now) / 2.0;
                let known = self.every || now - prev_t <= MAX_GAP;
                self.cadence.stepped(at, known);
                known.then_some((at, v))
            }
            TraceKind::CounterMj => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cadence;

    #[test]
    fn reads_resume_shortly_before_the_next_step() {
        let mut c = Cadence::default();
        assert_eq!(c.due(), 0.0, "nothing known: read continuously");
        c.stepped(1.000, true);
        assert_eq!(c.due(), 0.0, "one step gives no period yet");
        c.stepped(1.100, true);
        let due = c.due();
        assert!((due - (1.200 - Cadence::LEAD_S)).abs() < 1e-9, "{due}");
        c.stepped(1.201, true);
        assert!((c.due() - (1.302 - Cadence::LEAD_S)).abs() < 1e-9);
    }

    #[test]
    fn a_step_of_unknown_time_or_an_odd_period_means_reading_continuously() {
        let mut c = Cadence::default();
        c.stepped(1.0, true);
        c.stepped(1.1, true);
        c.stepped(1.19, false);
        assert_eq!(
            c.due(),
            0.0,
            "an early step (seen after a skip) resets the cadence"
        );
        c.stepped(2.0, true);
        c.stepped(3.5, true);
        assert_eq!(c.due(), 0.0, "a 1.5 s gap is a stall, not a period");
    }
}
