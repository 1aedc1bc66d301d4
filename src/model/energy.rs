//! Energy over a measured window, from what NVML gave at its start and end: the GPU's
//! total-energy counter (mJ since the driver loaded) where it has one, else its power readings.
//!
//! The arithmetic lives here, apart from whoever read the figures (the framework script, the CUDA
//! runner), so that the awkward cases are tested without a GPU: a counter that wrapped, one that
//! went backwards (the driver reloaded: refused, the power readings used instead), a GPU with no
//! counter, a GPU that gave no figure at all (no energy, never zero).
//!
//! Where energy and cost live (open this file first): this arithmetic; each copy and collective's
//! energy window in `src/bench/cuda/energy.rs`, read through `src/telemetry/energy_meter.rs`; a
//! training step's energy over its stretches in `assets/frameworks/ddp_step.py`, turned into a
//! row's W/GPU and samples per joule in `src/scaling/framework/rows.rs`; modeled power in
//! `src/scaling/power.rs`; what a million samples cost in `src/scaling/cost.rs`, ranked in
//! `src/report/ranking.rs` and priced from the command line's flags in `src/cli/price.rs`; the
//! report's Energy and cost section in `src/document/build/energy.rs`.

use serde::{Deserialize, Serialize};

/// The most power a window's figures may imply for one GPU before they are refused as a
/// reading error, W (a B200 board is rated 1,000 W; an NVL72 superchip 2,700 W for two GPUs
/// and a CPU).
pub const MAX_PLAUSIBLE_WATTS: f64 = 5_000.0;

/// The least power a stated figure for a working GPU may be, W: an idle board draws tens of
/// watts, and a figure of 5e-324 W divides into samples per joule with 30 digits.
pub const MIN_PLAUSIBLE_WATTS: f64 = 1.0;

/// Where a window's joules come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyBasis {
    /// NVML's total-energy counter, read at the window's start and end (`energy_counter` in
    /// report.json as in the CSVs; reports before 2026-12-07 wrote `counter`).
    #[serde(rename = "energy_counter", alias = "counter")]
    Counter,
    /// The mean of NVML's power readings at the window's start and end, times its length: the
    /// readings are a moving average, so bursts within the window are not seen (labeled so).
    PowerReadings,
    /// Not measured: the power the model gives the row (`crate::scaling::power`).
    Modeled,
}

impl EnergyBasis {
    /// How tables and CSV name it.
    pub fn id(self) -> &'static str {
        match self {
            Self::Counter => "energy_counter",
            Self::PowerReadings => "power_readings",
            Self::Modeled => "modeled",
        }
    }

    /// Where the figures come from in words, as bases and documents say it.
    pub fn words(self) -> &'static str {
        match self {
            Self::Counter => "NVML energy counter",
            Self::PowerReadings => "NVML power readings",
            Self::Modeled => "modeled",
        }
    }
}

/// One GPU's readings around a window: `[start, end]`, `None` where NVML gave none.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WindowReadings {
    /// Total-energy counter, mJ.
    pub energy_mj: [Option<u64>; 2],
    /// Power, mW.
    pub power_mw: [Option<u64>; 2],
}

/// Energy of one GPU over a window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowEnergy {
    pub joules: f64,
    pub basis: EnergyBasis,
}

/// The energy one GPU used over a window of `seconds`, or why there is none.
///
/// The counter is unsigned 64-bit: a pass through its maximum is taken as a wrap (the
/// difference modulo 2⁶⁴). A difference implying more than [`MAX_PLAUSIBLE_WATTS`] — as a
/// counter that went backwards (a driver reload resets it) reads after that wrap — is not a
/// reading: the power readings are used instead, where there are any.
pub fn window_energy(r: &WindowReadings, seconds: f64) -> Result<WindowEnergy, String> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!(
            "the window's length ({seconds} s) is not a duration"
        ));
    }
    let mut counter_note = None;
    if let [Some(start), Some(end)] = r.energy_mj {
        let joules = end.wrapping_sub(start) as f64 / 1e3;
        if joules / seconds <= MAX_PLAUSIBLE_WATTS {
            return Ok(WindowEnergy {
                joules,
                basis: EnergyBasis::Counter,
            });
        }
        counter_note = Some(format!(
            "the energy counter went from {start} to {end} mJ (reset?)"
        ));
    }
    let readings: Vec<f64> = r.power_mw.iter().flatten().map(|&mw| mw as f64).collect();
    if readings.is_empty() {
        return Err(counter_note.unwrap_or_else(|| "NVML gave no energy or power reading".into()));
    }
    let watts = readings.iter().sum::<f64>() / readings.len() as f64 / 1e3;
    if watts > MAX_PLAUSIBLE_WATTS {
        return Err(format!("a power reading of {watts:.0} W is not plausible"));
    }
    Ok(WindowEnergy {
        joules: watts * seconds,
        basis: EnergyBasis::PowerReadings,
    })
}

/// The energy of several GPUs over one window: the sum, and the basis (power readings if any
/// GPU's figure came from them). `Err` names the first GPU (by position) that gave none: a sum
/// that leaves a GPU out would understate the run.
pub fn total_energy(gpus: &[WindowReadings], seconds: f64) -> Result<WindowEnergy, String> {
    if gpus.is_empty() {
        return Err("no GPU's readings".into());
    }
    let mut total = WindowEnergy {
        joules: 0.0,
        basis: EnergyBasis::Counter,
    };
    for (i, g) in gpus.iter().enumerate() {
        let e = window_energy(g, seconds).map_err(|why| format!("rank {i}: {why}"))?;
        total.joules += e.joules;
        if e.basis == EnergyBasis::PowerReadings {
            total.basis = EnergyBasis::PowerReadings;
        }
    }
    Ok(total)
}

/// The energy of one measured test (a copy, a collective, a GEMM-rate window): the GPUs taking
/// part, together, over the seconds its timed samples ran.
///
/// NVML's energy counter moves in steps (every 100 ms on H100 and H200, measured), so the power
/// is taken between the first and last step seen inside the timed window ([`mean_watts`]) and
/// the energy is that power times the window's length. A window holding fewer steps than that
/// needs has no energy (see `--energy-window`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestEnergy {
    /// The GPUs' energy over the timed window, J.
    pub joules: f64,
    /// Their mean power while the test ran, W (all of them together).
    pub mean_power_w: f64,
    /// The same GPUs' power when the run began, before any load, W; `None` where not read.
    pub idle_power_w: Option<f64>,
    /// The timed window, s.
    pub seconds: f64,
    /// The span between counter steps the power was taken over, s (≤ `seconds`).
    pub measured_s: f64,
    pub basis: EnergyBasis,
    /// Topology indices of the GPUs counted.
    pub gpus: Vec<usize>,
    /// The window, Unix seconds (to line it up with other tools' readings).
    pub window_unix_s: [f64; 2],
}

impl TestEnergy {
    /// Joules per GB (10⁹ B) moved at `gbps`: the mean power over the rate.
    pub fn joules_per_gb(&self, gbps: Option<f64>) -> Option<f64> {
        gbps.filter(|g| g.is_finite() && *g > 0.0)
            .map(|g| self.mean_power_w / g)
    }
}

/// One GPU's readings through a window, as a background reader saw them: `(seconds, value)`
/// where the value changed (the energy counter, mJ) or at every reading (power, mW).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    CounterMj,
    PowerMw,
}

/// The mean power, W, of one GPU over `[start, end]` (seconds) from its readings.
///
/// For the counter: the energy between the first and last step inside the window over the time
/// between them, read through a wrap; a step backwards (a driver reload) or an implausible
/// figure is an error, and so is a window whose steps span less than `min_span` seconds. For
/// power readings: their mean inside the window (at least two).
pub fn mean_watts(
    kind: TraceKind,
    trace: &[(f64, u64)],
    start: f64,
    end: f64,
    min_span: f64,
) -> Result<(f64, f64), String> {
    let inside: Vec<(f64, u64)> = trace
        .iter()
        .copied()
        .filter(|(t, _)| *t >= start && *t <= end)
        .collect();
    let window_ms = (end - start) * 1e3;
    match kind {
        TraceKind::PowerMw => {
            if inside.len() < 2 {
                return Err(format!(
                    "{} power readings in the {window_ms:.0} ms window",
                    inside.len()
                ));
            }
            let w =
                inside.iter().map(|(_, mw)| *mw as f64).sum::<f64>() / inside.len() as f64 / 1e3;
            if w > MAX_PLAUSIBLE_WATTS {
                return Err(format!("a mean power reading of {w:.0} W is not plausible"));
            }
            Ok((w, end - start))
        }
        TraceKind::CounterMj => {
            let (Some(&(t0, e0)), Some(&(t1, _))) = (inside.first(), inside.last()) else {
                return Err(format!(
                    "the energy counter did not step in the {window_ms:.0} ms window"
                ));
            };
            let span = t1 - t0;
            if span < min_span || span <= 0.0 {
                return Err(format!(
                    "the energy counter's steps in the {window_ms:.0} ms window span {:.0} ms, \
                     less than the {:.0} ms needed",
                    span * 1e3,
                    min_span * 1e3
                ));
            }
            let mut mj = 0u64;
            let mut prev = e0;
            for &(_, e) in &inside[1..] {
                let d = e.wrapping_sub(prev);
                // A step of more than an hour at the plausible maximum is a reset, not energy.
                if d as f64 / 1e3 > MAX_PLAUSIBLE_WATTS * 3600.0 {
                    return Err(format!(
                        "the energy counter went from {prev} to {e} mJ (reset?)"
                    ));
                }
                mj = mj.saturating_add(d);
                prev = e;
            }
            let w = mj as f64 / 1e3 / span;
            if w > MAX_PLAUSIBLE_WATTS {
                return Err(format!("{w:.0} W from the energy counter is not plausible"));
            }
            Ok((w, span))
        }
    }
}

/// NVML's clock event reasons that slow the GPU below the clock it asked for, with their bits
/// (`nvmlClocksEventReasons`, nvml.h): idle, application clock settings and display clocks are
/// left out — they are not throttling.
const THROTTLE_BITS: [(u64, &str); 6] = [
    (0x4, "software power cap"),
    (0x8, "hardware slowdown"),
    (0x10, "sync boost"),
    (0x20, "software thermal slowdown"),
    (0x40, "hardware thermal slowdown"),
    (0x80, "hardware power brake"),
];

/// The throttling reasons in an NVML clock event reasons mask, in words (none: empty).
pub fn throttle_reasons(mask: u64) -> Vec<&'static str> {
    THROTTLE_BITS
        .iter()
        .filter(|(bit, _)| mask & bit != 0)
        .map(|(_, name)| *name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_basis_is_named_as_in_the_csvs_and_the_old_name_still_reads() {
        assert_eq!(
            serde_json::to_string(&EnergyBasis::Counter).unwrap(),
            format!("\"{}\"", EnergyBasis::Counter.id())
        );
        let old: EnergyBasis = serde_json::from_str("\"counter\"").unwrap();
        assert_eq!(old, EnergyBasis::Counter);
    }

    fn counter(start: u64, end: u64) -> WindowReadings {
        WindowReadings {
            energy_mj: [Some(start), Some(end)],
            power_mw: [Some(400_000), Some(420_000)],
        }
    }

    #[test]
    fn the_counter_difference_is_the_energy() {
        // 2,000 J over 5 s: 400 W.
        let e = window_energy(&counter(1_000_000, 3_000_000), 5.0).unwrap();
        assert_eq!(e.basis, EnergyBasis::Counter);
        assert!((e.joules - 2_000.0).abs() < 1e-9);
    }

    #[test]
    fn a_counter_that_wraps_is_read_through_the_wrap() {
        let e = window_energy(&counter(u64::MAX - 999, 1_000), 5.0).unwrap();
        assert_eq!(e.basis, EnergyBasis::Counter);
        assert!((e.joules - 2.0).abs() < 1e-9, "{}", e.joules);
    }

    #[test]
    fn a_counter_that_went_backwards_falls_back_to_the_power_readings() {
        // A driver reload resets the counter: read modulo 2⁶⁴ it would be ~10¹⁶ J.
        let e = window_energy(&counter(5_000_000, 1_000), 5.0).unwrap();
        assert_eq!(e.basis, EnergyBasis::PowerReadings);
        assert!((e.joules - 410.0 * 5.0).abs() < 1e-9, "{}", e.joules);
        let none = WindowReadings {
            energy_mj: [Some(5_000_000), Some(1_000)],
            power_mw: [None, None],
        };
        let why = window_energy(&none, 5.0).unwrap_err();
        assert!(why.contains("went from 5000000 to 1000 mJ"), "{why}");
    }

    #[test]
    fn a_gpu_without_a_counter_uses_its_power_readings() {
        let r = WindowReadings {
            energy_mj: [None, None],
            power_mw: [Some(300_000), None],
        };
        let e = window_energy(&r, 2.0).unwrap();
        assert_eq!(e.basis, EnergyBasis::PowerReadings);
        assert!((e.joules - 600.0).abs() < 1e-9);
    }

    #[test]
    fn a_gpu_that_gives_no_figure_has_no_energy_and_the_total_says_which() {
        assert!(window_energy(&WindowReadings::default(), 2.0).is_err());
        let gpus = [counter(0, 2_000_000), WindowReadings::default()];
        let why = total_energy(&gpus, 5.0).unwrap_err();
        assert!(why.starts_with("rank 1:"), "{why}");
        assert!(window_energy(&counter(0, 1), 0.0).is_err());
        assert!(window_energy(&counter(0, 1), f64::NAN).is_err());
    }

    #[test]
    fn the_total_sums_the_gpus_and_says_when_any_came_from_power_readings() {
        let mixed = [
            counter(0, 2_000_000),
            WindowReadings {
                energy_mj: [None, None],
                power_mw: [Some(100_000), Some(100_000)],
            },
        ];
        let t = total_energy(&mixed, 5.0).unwrap();
        assert!((t.joules - 2_500.0).abs() < 1e-9);
        assert_eq!(t.basis, EnergyBasis::PowerReadings);
        let both = total_energy(&[counter(0, 1_000_000), counter(0, 1_000_000)], 5.0).unwrap();
        assert_eq!(both.basis, EnergyBasis::Counter);
        assert!((both.joules - 2_000.0).abs() < 1e-9);
    }

    #[test]
    fn clock_event_masks_name_only_throttling() {
        // 0x1 (GPU idle) and 0x2 (application clocks) are not throttling.
        assert!(throttle_reasons(0x1 | 0x2).is_empty());
        assert_eq!(throttle_reasons(0x4), ["software power cap"]);
        assert_eq!(
            throttle_reasons(0x4 | 0x40),
            ["software power cap", "hardware thermal slowdown"]
        );
    }

    fn steps(watts: f64, from: f64, to: f64, every: f64, at_mj: u64) -> Vec<(f64, u64)> {
        let mut out = Vec::new();
        let mut t = from;
        let mut e = at_mj;
        while t <= to + 1e-9 {
            out.push((t, e));
            e = e.wrapping_add((watts * every * 1e3) as u64);
            t += every;
        }
        out
    }

    #[test]
    fn power_is_taken_between_the_counter_steps_inside_the_window() {
        // 130 W, a step every 100 ms from 0.05 s: the window 0.0–1.0 s holds steps 0.05…0.95.
        let trace = steps(130.0, 0.05, 2.0, 0.1, 7_000);
        let (w, span) = mean_watts(TraceKind::CounterMj, &trace, 0.0, 1.0, 0.2).unwrap();
        assert!((w - 130.0).abs() < 1e-6, "{w}");
        assert!((span - 0.9).abs() < 1e-9, "{span}");
        // Load before and after the window at another power does not leak in.
        let mut mixed = steps(70.0, 0.0, 0.3, 0.1, 0);
        let last = mixed.last().unwrap().1;
        mixed.extend(steps(500.0, 0.4, 1.0, 0.1, last + 50_000));
        let (w, _) = mean_watts(TraceKind::CounterMj, &mixed, 0.35, 1.0, 0.2).unwrap();
        assert!((w - 500.0).abs() < 1e-6, "{w}");
    }

    #[test]
    fn a_window_too_short_for_the_counter_has_no_power() {
        let trace = steps(130.0, 0.05, 2.0, 0.1, 0);
        let why = mean_watts(TraceKind::CounterMj, &trace, 0.0, 0.12, 0.2).unwrap_err();
        assert!(why.contains("120 ms window"), "{why}");
        let why = mean_watts(TraceKind::CounterMj, &trace, 0.06, 0.14, 0.0).unwrap_err();
        assert!(why.contains("did not step"), "{why}");
    }

    #[test]
    fn a_counter_wrapping_inside_the_window_is_read_through_it() {
        let trace = steps(400.0, 0.0, 1.0, 0.1, u64::MAX - 100_000);
        let (w, _) = mean_watts(TraceKind::CounterMj, &trace, 0.0, 1.0, 0.2).unwrap();
        assert!((w - 400.0).abs() < 1e-6, "{w}");
        let mut reset = steps(400.0, 0.0, 0.5, 0.1, 9_000_000);
        reset.push((0.6, 10));
        let why = mean_watts(TraceKind::CounterMj, &reset, 0.0, 1.0, 0.2).unwrap_err();
        assert!(why.contains("reset"), "{why}");
    }

    #[test]
    fn power_readings_are_averaged_inside_the_window() {
        let trace = [
            (0.0, 100_000),
            (0.5, 300_000),
            (1.0, 500_000),
            (1.5, 900_000),
        ];
        let (w, span) = mean_watts(TraceKind::PowerMw, &trace, 0.4, 1.1, 0.2).unwrap();
        assert!((w - 400.0).abs() < 1e-9, "{w}");
        assert!((span - 0.7).abs() < 1e-9);
        assert!(mean_watts(TraceKind::PowerMw, &trace, 0.4, 0.6, 0.0).is_err());
        let e = TestEnergy {
            joules: 400.0,
            mean_power_w: 400.0,
            idle_power_w: None,
            seconds: 1.0,
            measured_s: 0.9,
            basis: EnergyBasis::Counter,
            gpus: vec![0],
            window_unix_s: [0.0, 1.0],
        };
        assert_eq!(e.joules_per_gb(Some(50.0)), Some(8.0));
        assert_eq!(e.joules_per_gb(Some(0.0)), None);
        assert_eq!(e.joules_per_gb(None), None);
    }
}
