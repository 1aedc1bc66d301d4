//! Verdict thresholds: how close to expected a figure must be, and the optional overrides a
//! `--thresholds FILE` (TOML) sets.
//!
//! ```toml
//! pass = 0.90              # figure ≥ 90 % of expected → PASS
//! warn = 0.75              # ≥ 75 % → WARN, below → FAIL
//! busy_util_percent = 10   # a GPU this busy before the tests counts as used by another job
//!
//! [efficiency]             # reference efficiencies to use instead of the built-in ones
//! p2p_read_ce = 0.80       # by test id: fraction of the line rate
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::TestId;

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

    fn validate(&self) -> Result<(), String> {
        let frac = |v: f64| v.is_finite() && v > 0.0 && v <= 2.0;
        if !frac(self.pass) || !frac(self.warn) {
            return Err(format!(
                "pass and warn must be fractions of expected between 0 and 2 (e.g. 0.9), found pass = {}, warn = {}",
                self.pass, self.warn
            ));
        }
        if self.warn > self.pass {
            return Err(format!(
                "warn ({}) must not be above pass ({})",
                self.warn, self.pass
            ));
        }
        if !(self.nvlink_crc_per_s.is_finite() && self.nvlink_crc_per_s > 0.0) {
            return Err(format!(
                "nvlink_crc_per_s must be a rate above 0 (errors per second, e.g. 100), found {}",
                self.nvlink_crc_per_s
            ));
        }
        if self.busy_util_percent > 100 {
            return Err(format!(
                "busy_util_percent must be 0–100, found {}",
                self.busy_util_percent
            ));
        }
        for (id, eff) in &self.efficiency {
            if TestId::from_id(id).is_none() {
                return Err(format!(
                    "[efficiency] {id}: no such test (see `scalescope bench bandwidth --list-tests`)"
                ));
            }
            if !(eff.is_finite() && *eff > 0.0 && *eff <= 1.0) {
                return Err(format!(
                    "[efficiency] {id}: expected a fraction of the line rate in (0, 1], found {eff}"
                ));
            }
        }
        Ok(())
    }

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
}
