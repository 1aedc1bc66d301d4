//! Energy over a measured window, from what NVML gave at its start and end: the GPU's
//! total-energy counter (mJ since the driver loaded) where it has one, else its power readings.
//!
//! The arithmetic lives here, apart from whoever read the figures (the framework script, the CUDA
//! runner), so that the awkward cases are tested without a GPU: a counter that wrapped, one that
//! went backwards (the driver reloaded: refused, the power readings used instead), a GPU with no
//! counter, a GPU that gave no figure at all (no energy, never zero).

use serde::{Deserialize, Serialize};

/// The most power a window's figures may imply for one GPU before they are refused as a
/// reading error, W (a B200 board is rated 1,000 W; an NVL72 superchip 2,700 W for two GPUs
/// and a CPU).
pub const MAX_PLAUSIBLE_WATTS: f64 = 5_000.0;

/// Where a window's joules come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnergyBasis {
    /// NVML's total-energy counter, read at the window's start and end.
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
}
