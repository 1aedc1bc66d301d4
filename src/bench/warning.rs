//! Warnings are values: collected during a run, shown by the CLI and the GUI alike.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::model::{Endpoint, TestId};

/// Something the user should know about a run's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// Samples spread widely: the median is less trustworthy.
    HighVariance {
        test: TestId,
        src: Endpoint,
        dst: Endpoint,
        bytes: u64,
        cv: f64,
    },
    /// Peer access is not possible between two GPUs; their P2P cells are waived.
    PeerAccessUnsupported { src: usize, dst: usize },
    /// A size did not fit in memory; those cells are skipped.
    OutOfMemory {
        test: TestId,
        bytes: u64,
        /// What held the GPUs' memory when it did not fit (free of total, other processes), one
        /// entry per GPU of the case, as NVML told it; empty where NVML could not say.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        held: Vec<String>,
    },
    /// A GPU's PCIe link is narrower than its maximum.
    LinkBelowMax { gpu: usize, link: String },
    /// The modeled backend assumed a figure the topology does not carry.
    Assumption { text: String },
    /// Some measured tests have no energy figure, and why (said once per run).
    NoEnergy { reason: String },
}

/// Coefficient of variation above which samples are called noisy.
pub const HIGH_CV: f64 = 0.05;

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HighVariance {
                test,
                src,
                dst,
                bytes,
                cv,
            } => write!(
                f,
                "{test} {src}→{dst} at {}: samples vary by {:.1}% (cv); rerun with more --samples or on an idle machine",
                crate::model::quantities::format_bytes(*bytes),
                cv * 100.0
            ),
            Self::PeerAccessUnsupported { src, dst } => write!(
                f,
                "GPU {src} cannot access GPU {dst} as a peer: P2P tests for the pair are waived"
            ),
            Self::OutOfMemory { test, bytes, held } => {
                write!(
                    f,
                    "{test}: {} buffers do not fit in GPU memory: skipped",
                    crate::model::quantities::format_bytes(*bytes)
                )?;
                if !held.is_empty() {
                    write!(f, " ({})", held.join("; "))?;
                }
                Ok(())
            }
            Self::LinkBelowMax { gpu, link } => {
                write!(f, "GPU {gpu}: PCIe link runs below its maximum ({link})")
            }
            Self::Assumption { text } => write!(f, "assumed {text}"),
            Self::NoEnergy { reason } => write!(f, "energy not measured for some tests: {reason}"),
        }
    }
}

/// Warnings as lines to show: each once, and high-variance ones collapsed into one line (with
/// the worst named) when there are more than `keep` of them.
pub fn summarize(warnings: &[Warning], keep: usize) -> Vec<String> {
    let noisy: Vec<&Warning> = warnings
        .iter()
        .filter(|w| matches!(w, Warning::HighVariance { .. }))
        .collect();
    let collapse = noisy.len() > keep;
    let mut out: Vec<String> = Vec::new();
    for w in warnings {
        if collapse && matches!(w, Warning::HighVariance { .. }) {
            continue;
        }
        let line = w.to_string();
        if !out.contains(&line) {
            out.push(line);
        }
    }
    if collapse {
        let worst = noisy
            .iter()
            .max_by(|a, b| cv_of(a).total_cmp(&cv_of(b)))
            .map(|w| w.to_string())
            .unwrap_or_default();
        out.push(format!(
            "{} results vary by more than {:.0}% between samples; the worst: {worst}",
            noisy.len(),
            HIGH_CV * 100.0
        ));
    }
    out
}

/// The warnings still to show once a `bench` run is over: the model's assumptions were printed
/// as they came (and stand in the backend's description), so they are not repeated.
pub fn after_run(warnings: &[Warning]) -> Vec<String> {
    let rest: Vec<Warning> = warnings
        .iter()
        .filter(|w| !matches!(w, Warning::Assumption { .. }))
        .cloned()
        .collect();
    summarize(&rest, 3)
}

fn cv_of(w: &Warning) -> f64 {
    match w {
        Warning::HighVariance { cv, .. } => *cv,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bench bandwidth --modeled` printed each assumption three times: as it came, in the
    /// backend's line and again after the run.
    #[test]
    fn after_run_leaves_out_the_assumptions_already_printed() {
        let warnings = vec![
            Warning::Assumption {
                text: "PCIe Gen4 x16 for GPU 0".into(),
            },
            Warning::LinkBelowMax {
                gpu: 1,
                link: "Gen4 x8".into(),
            },
        ];
        assert_eq!(
            after_run(&warnings),
            vec!["GPU 1: PCIe link runs below its maximum (Gen4 x8)".to_string()]
        );
    }

    fn noisy(bytes: u64, cv: f64) -> Warning {
        Warning::HighVariance {
            test: TestId::H2d,
            src: Endpoint::Host,
            dst: Endpoint::Gpu(0),
            bytes,
            cv,
        }
    }

    #[test]
    fn many_noisy_results_collapse_into_one_line_naming_the_worst() {
        let mut w: Vec<Warning> = (0..10)
            .map(|i| noisy(4096 << i, 0.06 + i as f64 / 100.0))
            .collect();
        w.push(Warning::PeerAccessUnsupported { src: 0, dst: 1 });
        w.push(Warning::PeerAccessUnsupported { src: 0, dst: 1 });
        let lines = summarize(&w, 3);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].contains("cannot access GPU 1"));
        assert!(
            lines[1].starts_with("10 results vary by more than 5%"),
            "{}",
            lines[1]
        );
        assert!(lines[1].contains("15.0%"), "{}", lines[1]);
        // A few are each shown.
        assert_eq!(summarize(&w[..2], 3).len(), 2);
    }

    /// Beside a process holding all but 1 GiB of an H100, the warning said only that 512 MiB
    /// did not fit; it now says what held the memory, and reports written before still read.
    #[test]
    fn out_of_memory_says_who_held_the_memory_and_old_reports_still_read() {
        let w = Warning::OutOfMemory {
            test: TestId::H2d,
            bytes: 512 << 20,
            held: vec!["GPU 0: 1.0 GiB free of 79.6 GiB, also used by pid 4242 (python3)".into()],
        };
        let line = w.to_string();
        assert!(
            line.starts_with("h2d: 512 MiB buffers do not fit"),
            "{line}"
        );
        assert!(
            line.ends_with("(GPU 0: 1.0 GiB free of 79.6 GiB, also used by pid 4242 (python3))"),
            "{line}"
        );
        let old: Warning =
            serde_json::from_str(r#"{"kind":"out_of_memory","test":"h2d","bytes":536870912}"#)
                .unwrap();
        assert_eq!(
            old.to_string(),
            "h2d: 512 MiB buffers do not fit in GPU memory: skipped"
        );
        let back: Warning = serde_json::from_str(&serde_json::to_string(&w).unwrap()).unwrap();
        assert_eq!(back, w);
    }
}
