//! Verdict thresholds: how close to expected a figure must be, and the optional overrides a
//! `--thresholds FILE` (TOML) sets.
//!
//! ```toml
//! pass = 0.90              # figure ≥ 90 % of expected → PASS
//! warn = 0.75              # ≥ 75 % → WARN, below → FAIL
//! busy_util_percent = 10   # a GPU this busy before the tests counts as used by another job
//! pcie_replays_per_min = 8 # PCIe replays a minute between two readings at which they fail
//! published = false        # true: copy figures against matching published figures
//!                          # (the catalog's [[reference]]; `--thresholds published` alone)
//!
//! [efficiency]             # reference efficiencies to use instead of the built-in ones
//! p2p_read_ce = 0.80       # by test id: fraction of the line rate
//!
//! [soak]                   # the burn-in's limits (health::soak::SoakThresholds)
//! jitter_warn = 0.05       # coefficient of variation of a phase's per-second throughput
//! jitter_fail = 0.15
//! dip = 0.10               # a second this far below the phase's steady level is part of a dip
//! drop_warn = 0.10         # last minute's median below the first minute's
//! drop_fail = 0.25
//! hw_slowdown_fail = 0.01  # share of seconds in hardware slowdown
//! sw_thermal_warn = 0.05   # share of seconds in software thermal slowdown
//! temp_spread_warn_c = 15  # spread of the GPUs' last-minute temperatures
//! settle_s = 5             # seconds after each phase starts that the throughput rules skip
//!
//! [settings]               # the GPUs' settings (SettingsThresholds)
//! power_limit_warn = 0.95  # power limit in force below 95 % of the board's default → WARN
//! power_limit_fail = 0.75  # … below 75 % → FAIL
//! clocks_warn = 0.95       # application clocks below 95 % of their default → WARN
//! persistence = "warn"     # persistence mode off: "pass", "warn" or "fail"
//! mig = "warn"             # MIG mode on (or pending)
//! compute_mode = "warn"    # a compute mode other than Default (Prohibited always fails)
//!
//! [fleet]                  # `scalescope fleet report`'s rules (FleetThresholds)
//! mad_k = 3.5              # a figure is an outlier beyond mad_k × 1.4826 × MAD of the median …
//! warn = 0.05              # … and beyond this fraction of the median (WARN) …
//! fail = 0.10              # … or this one (FAIL)
//! consistency = "fail"     # a node differing from the majority (driver, GPUs, links): fail or warn
//! ```
//!
//! Every field has a range (pass and warn 0.01–2, efficiencies 0.01–1, `nvlink_crc_per_s`
//! and `pcie_replays_per_min` above 0 to 1e6, `busy_util_percent` 0–100; the reasons are with the constants): a value
//! outside it is refused with the field, the value and the range.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::TestId;
use crate::model::validate::{Bounds, number, quoted};

/// The thresholds a check runs with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    /// Fraction of expected at or above which a figure passes.
    pub pass: f64,
    /// Fraction of expected at or above which a figure warns (below: fails).
    pub warn: f64,
    /// GPU utilization (%) before the load tests above which the GPU counts as busy.
    pub busy_util_percent: u32,
    /// Reference efficiencies by test id, replacing the built-in ones (fraction of line rate).
    pub efficiency: BTreeMap<String, f64>,
    /// NVLink CRC errors per second (over a GPU's links, during the check) at which they fail;
    /// below it they pass with their count. 100: NVIDIA DCGM's limit
    /// (`DCGM_LIMIT_MAX_LWLINK_CRC_ERROR`).
    pub nvlink_crc_per_s: f64,
    /// PCIe replays per minute (between two readings: before and after the load tests) at which
    /// they fail; fewer warn. 8: NVIDIA DCGM's limit (`DCGM_LIMIT_MAX_PCIREPLAY_RATE`,
    /// dcgm_gpu_hardware_limits.h: "8 replays per minute is the maximum recommended by RM").
    pub pcie_replays_per_min: f64,
    /// The burn-in's limits (`[soak]`).
    pub soak: super::soak::SoakThresholds,
    /// `scalescope fleet report`'s rules (`[fleet]`).
    pub fleet: FleetThresholds,
    /// The GPUs' settings (`[settings]`).
    pub settings: SettingsThresholds,
    /// Judge each copy figure against the published figures that match its conditions (the
    /// catalog's `[[reference]]` for machines with this GPU) instead of line rate × efficiency,
    /// where one matches (`check --thresholds published`, or `published = true` in a file).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub published: bool,
}

/// How the GPUs' settings are judged (`[settings]`): a lowered power limit or clock setting
/// holds a GPU below what it can do; persistence, MIG and compute mode change what a job sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SettingsThresholds {
    /// The power limit in force ÷ the board's default below which the check warns …
    pub power_limit_warn: f64,
    /// … and fails.
    pub power_limit_fail: f64,
    /// Application clocks ÷ their default below which the check warns.
    pub clocks_warn: f64,
    /// Persistence mode off.
    pub persistence: Severity,
    /// MIG mode on, or pending for the next reset.
    pub mig: Severity,
    /// A compute mode other than Default (Prohibited fails whatever this says: nothing runs).
    pub compute_mode: Severity,
}

impl Default for SettingsThresholds {
    /// A limit 5 % under the default warns (boards ship at their default; a site that caps on
    /// purpose sets this lower), 25 % under fails; clocks 5 % under their default warn;
    /// persistence off, MIG on and an exclusive compute mode warn.
    fn default() -> Self {
        Self {
            power_limit_warn: 0.95,
            power_limit_fail: 0.75,
            clocks_warn: 0.95,
            persistence: Severity::Warn,
            mig: Severity::Warn,
            compute_mode: Severity::Warn,
        }
    }
}

impl SettingsThresholds {
    /// Fractions of the default: at 0 nothing would fail, above 1 every board at its default
    /// would.
    const FRACTION: Bounds = Bounds::above(0.0, 1.0, "");

    /// Checks every field's range and that `power_limit_fail` is not above `power_limit_warn`.
    pub fn validate(&self) -> Result<(), String> {
        let field = |name: &str, v: f64| {
            Self::FRACTION
                .check(v)
                .map_err(|e| format!("[settings] {name}: {e}"))
        };
        field("power_limit_warn", self.power_limit_warn)?;
        field("power_limit_fail", self.power_limit_fail)?;
        field("clocks_warn", self.clocks_warn)?;
        if self.power_limit_fail > self.power_limit_warn {
            return Err(format!(
                "[settings] power_limit_fail ({}) must not be above power_limit_warn ({})",
                number(self.power_limit_fail),
                number(self.power_limit_warn)
            ));
        }
        Ok(())
    }
}

/// The verdict a settings rule gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Pass,
    Warn,
    Fail,
}

impl Severity {
    /// The verdict it stands for.
    pub fn verdict(self) -> super::Verdict {
        match self {
            Self::Pass => super::Verdict::Pass,
            Self::Warn => super::Verdict::Warn,
            Self::Fail => super::Verdict::Fail,
        }
    }
}

/// How `scalescope fleet report` judges nodes against the fleet (`[fleet]`).
///
/// A figure is an outlier when it is worse than the fleet's median by more than
/// `max(mad_k × 1.4826 × MAD, warn × median)` (WARN) or `max(mad_k × 1.4826 × MAD, fail ×
/// median)` (FAIL). MAD is the median absolute deviation; × 1.4826 makes it the standard
/// deviation of normally distributed figures, and 3.5 is Iglewicz and Hoaglin's limit for the
/// modified z-score ("How to Detect and Handle Outliers", 1993). The relative floor keeps a fleet
/// of near-identical nodes (MAD ≈ 0, as modeled figures are) from flagging noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FleetThresholds {
    /// Multiple of the scaled MAD beyond which a figure is an outlier.
    pub mad_k: f64,
    /// Fraction of the median beyond which a worse figure warns …
    pub warn: f64,
    /// … and fails.
    pub fail: f64,
    /// The verdict of a node that differs from the majority in a consistency field.
    pub consistency: FleetSeverity,
}

/// The verdict a fleet rule gives: WARN or FAIL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FleetSeverity {
    Warn,
    Fail,
}

impl FleetSeverity {
    /// The verdict it stands for.
    pub fn verdict(self) -> super::Verdict {
        match self {
            Self::Warn => super::Verdict::Warn,
            Self::Fail => super::Verdict::Fail,
        }
    }
}

impl Default for FleetThresholds {
    /// 3.5 × the scaled MAD; 5 % worse than the median warns, 10 % fails; a node that differs
    /// in driver, GPUs or links fails.
    fn default() -> Self {
        Self {
            mad_k: 3.5,
            warn: 0.05,
            fail: 0.10,
            consistency: FleetSeverity::Fail,
        }
    }
}

impl FleetThresholds {
    /// `mad_k`: below 1 the median's own neighbours are outliers; above 100 nothing is.
    const MAD_K: Bounds = Bounds::closed(1.0, 100.0, "");
    /// `warn`, `fail`: fractions of the median; 0 would flag every difference, 1 only a figure
    /// of zero.
    const FRACTION: Bounds = Bounds::above(0.0, 1.0, "");

    /// Checks every field's range and that `warn` is not above `fail`.
    pub fn validate(&self) -> Result<(), String> {
        let field =
            |name: &str, b: Bounds, v: f64| b.check(v).map_err(|e| format!("[fleet] {name}: {e}"));
        field("mad_k", Self::MAD_K, self.mad_k)?;
        field("warn", Self::FRACTION, self.warn)?;
        field("fail", Self::FRACTION, self.fail)?;
        if self.warn > self.fail {
            return Err(format!(
                "[fleet] warn ({}) must not be above fail ({})",
                number(self.warn),
                number(self.fail)
            ));
        }
        Ok(())
    }
}

impl Default for Thresholds {
    /// PASS ≥ 90 % of expected, WARN ≥ 75 %, FAIL below; busy above 10 % utilization.
    fn default() -> Self {
        Self {
            pass: 0.90,
            warn: 0.75,
            busy_util_percent: 10,
            efficiency: BTreeMap::new(),
            nvlink_crc_per_s: 100.0,
            pcie_replays_per_min: Self::DCGM_PCIE_REPLAYS_PER_MIN,
            soak: Default::default(),
            fleet: Default::default(),
            settings: Default::default(),
            published: false,
        }
    }
}

/// Why a thresholds file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ThresholdsError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl crate::model::Blame for ThresholdsError {
    /// Always the user's: the thresholds file they named.
    fn fault(&self) -> crate::model::Fault {
        crate::model::Fault::Input
    }
}

impl Thresholds {
    /// Reads and validates a TOML thresholds file (at most 64 KiB).
    pub fn load(path: &Path) -> Result<Thresholds, ThresholdsError> {
        let name = path.display().to_string();
        let text = crate::input::read_text(path, 64 << 10).map_err(|e| match e {
            crate::input::InputError::TooLarge { .. } => ThresholdsError::Invalid {
                path: name.clone(),
                message: "larger than 64 KiB: not a thresholds file".into(),
            },
            other => ThresholdsError::Io {
                path: name.clone(),
                source: other.into(),
            },
        })?;
        Self::parse(&text).map_err(|message| ThresholdsError::Invalid {
            path: name,
            message,
        })
    }

    /// Parses and validates thresholds TOML; the message names the field at fault.
    pub fn parse(text: &str) -> Result<Thresholds, String> {
        let t: Thresholds = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| 1 + text[..s.start.min(text.len())].matches('\n').count());
            let msg = e.message().replace('\n', " ");
            match line {
                Some(l) => format!("line {l}: {msg}"),
                None => msg,
            }
        })?;
        t.validate()?;
        Ok(t)
    }

    pub fn validate(&self) -> Result<(), String> {
        let field = |name: &str, b: Bounds, v: f64| b.check(v).map_err(|e| format!("{name}: {e}"));
        field("pass", Self::PASS, self.pass)?;
        field("warn", Self::PASS, self.warn)?;
        if self.warn > self.pass {
            return Err(format!(
                "warn ({}) must not be above pass ({})",
                number(self.warn),
                number(self.pass)
            ));
        }
        field("nvlink_crc_per_s", Self::CRC_PER_S, self.nvlink_crc_per_s)?;
        field(
            "pcie_replays_per_min",
            Self::REPLAYS_PER_MIN,
            self.pcie_replays_per_min,
        )?;
        if self.busy_util_percent > 100 {
            return Err(format!(
                "busy_util_percent must be 0–100, found {}",
                self.busy_util_percent
            ));
        }
        self.soak.validate()?;
        self.fleet.validate()?;
        self.settings.validate()?;
        for (id, eff) in &self.efficiency {
            if TestId::from_id(id).is_none() {
                return Err(format!(
                    "[efficiency] {}: no such test (see `scalescope bench bandwidth --list-tests`)",
                    quoted(id)
                ));
            }
            field(&format!("[efficiency] {id}"), Self::EFFICIENCY, *eff)?;
        }
        Ok(())
    }

    /// `pass` and `warn`, fractions of expected. Below 1 % a link carrying next to nothing would
    /// pass; above 2 × no figure could (expected already assumes a healthy link).
    const PASS: Bounds = Bounds::closed(0.01, 2.0, "");
    /// `[efficiency]`, fractions of the line rate. Copy engines reach 80–95 % of a healthy link;
    /// below 1 % the expected figure is ~0 and 0.0 GB/s would pass (`5e-324` once did).
    const EFFICIENCY: Bounds = Bounds::closed(0.01, 1.0, "");
    /// `nvlink_crc_per_s`. DCGM fails at 100/s; 1e6/s is 10,000 × that: any higher is a check
    /// that can never fail, and `inf` or `NaN` is no threshold at all.
    const CRC_PER_S: Bounds = Bounds::above(0.0, 1e6, "errors/s");
    /// NVIDIA DCGM's PCIe replay limit, replays a minute (`DCGM_LIMIT_MAX_PCIREPLAY_RATE`): the
    /// default `pcie_replays_per_min`.
    pub const DCGM_PCIE_REPLAYS_PER_MIN: f64 = 8.0;
    /// `pcie_replays_per_min`. DCGM fails at 8 a minute; above 1e6 a minute (10,000 a second)
    /// the link is not working at all, and a check at that rate could never fail.
    const REPLAYS_PER_MIN: Bounds = Bounds::above(0.0, 1e6, "replays/min");

    /// The verdict for a figure that reached `ratio` of expected.
    pub fn verdict(&self, ratio: f64) -> super::Verdict {
        if ratio >= self.pass {
            super::Verdict::Pass
        } else if ratio >= self.warn {
            super::Verdict::Warn
        } else {
            super::Verdict::Fail
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Verdict;

    #[test]
    fn defaults_are_90_and_75_percent() {
        let t = Thresholds::default();
        assert_eq!(t.verdict(0.95), Verdict::Pass);
        assert_eq!(t.verdict(0.90), Verdict::Pass);
        assert_eq!(t.verdict(0.80), Verdict::Warn);
        assert_eq!(t.verdict(0.75), Verdict::Warn);
        assert_eq!(t.verdict(0.5), Verdict::Fail);
        assert_eq!(t.verdict(f64::NAN), Verdict::Fail);
    }

    #[test]
    fn toml_overrides_and_errors_name_the_field() {
        let t = Thresholds::parse("pass = 0.95\nwarn = 0.8\n[efficiency]\np2p_read_ce = 0.8\n")
            .unwrap();
        assert_eq!(t.pass, 0.95);
        assert_eq!(t.efficiency["p2p_read_ce"], 0.8);
        assert_eq!(t.busy_util_percent, 10, "unset fields keep their default");
        let e = Thresholds::parse("pass = 0.5\nwarn = 0.8").unwrap_err();
        assert!(e.contains("warn"), "{e}");
        let e = Thresholds::parse("[efficiency]\nnope = 0.5").unwrap_err();
        assert!(e.contains("nope"), "{e}");
        let e = Thresholds::parse("pass = \"high\"").unwrap_err();
        assert!(e.starts_with("line 1"), "{e}");
        let e = Thresholds::parse("passs = 0.9").unwrap_err();
        assert!(e.contains("passs"), "{e}");
    }

    #[test]
    fn every_field_is_bounded() {
        for (toml, field) in [
            (
                "[efficiency]\np2p_read_ce = 5e-324",
                "[efficiency] p2p_read_ce: 5e-324 is out",
            ),
            (
                "[efficiency]\np2p_read_ce = nan",
                "[efficiency] p2p_read_ce: NaN is out",
            ),
            (
                "[efficiency]\np2p_read_ce = 1.5",
                "[efficiency] p2p_read_ce: 1.5 is out",
            ),
            ("pass = 5e-324\nwarn = 5e-324", "pass: 5e-324 is out"),
            ("warn = -1", "warn: -1 is out"),
            ("pass = inf", "pass: inf is out"),
            (
                "nvlink_crc_per_s = 1e308",
                "nvlink_crc_per_s: 1e308 errors/s is out",
            ),
            (
                "nvlink_crc_per_s = 0",
                "nvlink_crc_per_s: 0 errors/s is out",
            ),
            ("busy_util_percent = 101", "busy_util_percent must be 0–100"),
            ("[fleet]\nmad_k = 0.5", "[fleet] mad_k: 0.5 is out"),
            (
                "[settings]\npower_limit_warn = 0",
                "[settings] power_limit_warn: 0 is out",
            ),
            (
                "[settings]\npower_limit_fail = 0.9\npower_limit_warn = 0.8",
                "[settings] power_limit_fail (0.9) must not be above",
            ),
            (
                "[settings]\nclocks_warn = 1.5",
                "[settings] clocks_warn: 1.5 is out",
            ),
            ("[fleet]\nwarn = 0", "[fleet] warn: 0 is out"),
            (
                "[fleet]\nwarn = 0.2\nfail = 0.1",
                "[fleet] warn (0.2) must not be above",
            ),
        ] {
            let e = Thresholds::parse(toml).unwrap_err();
            assert!(e.starts_with(field), "{toml}: {e}");
        }
        let e = Thresholds::parse("[efficiency]\n\"a\\u2028b\" = 0.5").unwrap_err();
        assert!(!e.contains('\u{2028}') && e.contains("\\u{2028}"), "{e}");
    }
}
