//! The energy of each case: the timing loops (`measure::run`, the collectives'
//! `time_with_events`) say when their timed samples ran ([`timed`]) and, when the user asked for
//! every test's energy (`--energy-window S`), run more untimed samples until the energy counter
//! has stepped across `S` seconds of them ([`wants_more`]); the backend then takes the GPUs' mean
//! power over that window from its [`EnergyMeter`] ([`Recording::finish`]).
//!
//! The case in flight is kept per thread: a backend runs its cases on the thread that calls it,
//! and the timing loops sit several calls below it, so this saves threading the meter through
//! every case function.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::model::energy::TestEnergy;
use crate::telemetry::energy_meter::{EnergyMeter, MIN_SPAN_S};

/// The environment variable that turns the meter off (`off`).
pub const METER_ENV: &str = "SCALESCOPE_ENERGY_METER";

struct InFlight {
    meter: Arc<EnergyMeter>,
    /// Seconds of counter steps a window must span (0: whatever the timed samples give).
    min_span_s: f64,
    /// The longest timed window of the case so far.
    window: Option<(Instant, Instant)>,
}

thread_local! {
    static CASE: RefCell<Option<InFlight>> = const { RefCell::new(None) };
}

/// A case's energy being recorded; [`Recording::finish`] ends it.
pub(crate) struct Recording;

/// Starts recording a case's energy on this thread (nothing without a meter).
pub(crate) fn begin(meter: Option<&Arc<EnergyMeter>>, min_span_s: f64) -> Recording {
    CASE.with(|c| {
        *c.borrow_mut() = meter.map(|m| InFlight {
            meter: m.clone(),
            min_span_s,
            window: None,
        });
    });
    Recording
}

/// A timing loop's timed samples ran from `start` to `end`.
pub(crate) fn timed(start: Instant, end: Instant) {
    CASE.with(|c| {
        if let Some(f) = c.borrow_mut().as_mut() {
            let longer = f.window.is_none_or(|(s, e)| {
                end.saturating_duration_since(start) > e.saturating_duration_since(s)
            });
            if longer {
                f.window = Some((start, end));
            }
        }
    });
}

/// Whether a timing loop whose timed samples began at `start` should run another (untimed)
/// sample so that its window holds enough counter steps. Gives up after three times the span
/// asked plus a second, should the counter not step.
pub(crate) fn wants_more(start: Instant) -> bool {
    CASE.with(|c| {
        let c = c.borrow();
        let Some(f) = c.as_ref() else { return false };
        if f.min_span_s <= 0.0 {
            return false;
        }
        let span = f.min_span_s.max(MIN_SPAN_S);
        let limit = Duration::from_secs_f64(span * 3.0 + 1.0);
        start.elapsed() < limit && !f.meter.covered(start, span)
    })
}

/// A case's timed window, to be read for any set of its GPUs.
pub(crate) struct Window {
    meter: Arc<EnergyMeter>,
    start: Instant,
    end: Instant,
}

impl Window {
    /// The energy of GPUs `gpus` over the window, or why there is none (too short for the
    /// counter, a GPU not read).
    pub(crate) fn energy(&self, gpus: &[usize]) -> Result<TestEnergy, String> {
        self.meter.window(gpus, self.start, self.end)
    }
}

impl Recording {
    /// The case's timed window: `None` without a meter, `Err` when no timing loop ran.
    pub(crate) fn finish(self) -> Option<Result<Window, String>> {
        let f = CASE.with(|c| c.borrow_mut().take())?;
        Some(match f.window {
            Some((start, end)) => Ok(Window {
                meter: f.meter,
                start,
                end,
            }),
            None => Err("no timed samples".into()),
        })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // A case that ended early (an error, a panic) leaves nothing behind for the next one.
        CASE.with(|c| c.borrow_mut().take());
    }
}

/// A backend's energy readings: the meter (or why there is none), the window the user asked
/// every test to span, and whether the user was told why some tests have no energy.
pub(crate) struct BackendEnergy {
    meter: Result<Arc<EnergyMeter>, String>,
    window_s: f64,
    warned: bool,
}

impl BackendEnergy {
    /// Reads GPUs `gpus` of `topo` (the meter shared with the process's other backend), unless
    /// `SCALESCOPE_ENERGY_METER=off` asks for runs without the meter's NVML reads (to see
    /// whether they cost a copy anything).
    pub(crate) fn open(topo: &crate::model::Topology, gpus: &[usize]) -> BackendEnergy {
        let off = std::env::var_os(METER_ENV).is_some_and(|v| v == "off");
        BackendEnergy {
            meter: if off {
                Err(format!("the energy meter is off ({METER_ENV}=off)"))
            } else {
                EnergyMeter::shared(topo, gpus).map_err(|e| e.to_string())
            },
            window_s: 0.0,
            warned: false,
        }
    }

    /// Every test runs on (untimed) until `seconds` of counter steps cover it; 0: only what its
    /// timed samples cover.
    pub(crate) fn set_window(&mut self, seconds: f64) {
        self.window_s = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
    }

    pub(crate) fn begin(&self) -> Recording {
        begin(self.meter.as_ref().ok(), self.window_s)
    }

    /// The case's energy for each set of GPUs in `gpus` (a case's rows may each name their
    /// own); where there is none, the first such case of the run says why in a warning.
    pub(crate) fn finish(
        &mut self,
        rec: Recording,
        gpus: &[Vec<usize>],
        warnings: &mut Vec<super::Warning>,
    ) -> Vec<Option<TestEnergy>> {
        let mut why = None;
        let out = match (&self.meter, rec.finish()) {
            (Err(e), _) => {
                why = Some(format!("no energy meter ({e})"));
                vec![None; gpus.len()]
            }
            (Ok(_), None) => vec![None; gpus.len()],
            (Ok(_), Some(Err(e))) => {
                why = Some(e);
                vec![None; gpus.len()]
            }
            (Ok(_), Some(Ok(w))) => gpus
                .iter()
                .map(|g| w.energy(g).map_err(|e| why = Some(e)).ok())
                .collect(),
        };
        if let Some(why) = why
            && !self.warned
        {
            self.warned = true;
            let reason = if self.window_s > 0.0 {
                why
            } else {
                format!(
                    "{why} (tests whose timed samples are that short have no energy: \
                     --energy-window 0.5 runs each test on until it is measured)"
                )
            };
            warnings.push(super::Warning::NoEnergy { reason });
        }
        out
    }
}
