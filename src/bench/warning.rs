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
    OutOfMemory { test: TestId, bytes: u64 },
    /// A GPU's PCIe link is narrower than its maximum.
    LinkBelowMax { gpu: usize, link: String },
    /// The modeled backend assumed a figure the topology does not carry.
    Assumption { text: String },
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
                crate::model::units::format_bytes(*bytes),
                cv * 100.0
            ),
            Self::PeerAccessUnsupported { src, dst } => write!(
                f,
                "GPU {src} cannot access GPU {dst} as a peer: P2P tests for the pair are waived"
            ),
            Self::OutOfMemory { test, bytes } => write!(
                f,
                "{test}: {} buffers do not fit in GPU memory: skipped",
                crate::model::units::format_bytes(*bytes)
            ),
            Self::LinkBelowMax { gpu, link } => {
                write!(f, "GPU {gpu}: PCIe link runs below its maximum ({link})")
            }
            Self::Assumption { text } => write!(f, "assumed {text}"),
        }
    }
}
