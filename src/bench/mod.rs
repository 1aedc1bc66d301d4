//! Measurements: what to run ([`plan`]), running it ([`runner`]), and the backends that do the
//! work — the real one on CUDA ([`cuda`]) and the [`modeled`] one that derives figures from line
//! rates for catalog machines and for tests without GPUs.
//!
//! The runner only talks to the [`Backend`] trait, so every code path above it (CLI, GUI,
//! exports) runs the same way on both.

pub mod collectives;
pub mod cuda;
pub mod launcher;
pub mod modeled;
pub mod nccl_log;
pub mod plan;
pub mod runner;
pub mod warning;

pub use plan::{BandwidthOptions, Case, CopyKernel, CopyKernelOptions, Plan};
pub use runner::{Progress, RunOutcome, run_bandwidth};
pub use warning::Warning;

use crate::model::{BandwidthResult, Source};

/// Builds the copy backend for a topology: what a layer that runs measurements of its own is
/// handed (`job::backend` is the one place that builds backends).
pub type MakeBackend<'a> =
    dyn Fn(&crate::model::Topology) -> Result<Box<dyn Backend>, BenchError> + 'a;

/// Something that can run bandwidth cases: real GPUs or a model of them.
pub trait Backend {
    /// Measured or modeled: stamped on every result.
    fn source(&self) -> Source;

    /// One line for reports, e.g. `CUDA 13.0 · 2× NVIDIA H200` or `modeled from line rates`.
    fn describe(&self) -> String;

    /// Runs one case and returns its results (one row per endpoint pair it covers).
    ///
    /// Never panics. GPU trouble at this case (peer access unsupported, out of memory, a failed
    /// call) becomes a result with status `waived`, `skipped` or `failed` and a reason, and the
    /// run goes on. Warnings (high variance, assumptions) are pushed to `warnings`.
    fn run_case(&mut self, case: &Case, warnings: &mut Vec<Warning>) -> Vec<BandwidthResult>;
}

/// Why a bench could not start.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A GPU index that the topology does not have.
    #[error("--gpus: no GPU {index} (the machine has GPUs {available})")]
    NoSuchGpu { index: usize, available: String },
    /// A test id that does not exist.
    #[error("--tests: unknown test {id} (known: {known})")]
    UnknownTest {
        /// The id as given, quoted and escaped.
        id: String,
        known: String,
    },
    /// An invalid option value.
    #[error("{0}")]
    BadOption(String),
    /// The GPUs cannot be used at all.
    #[error("{0}")]
    Unavailable(String),
}

impl crate::model::Blame for BenchError {
    /// The machine when the GPUs cannot be used at all; else the user's options.
    fn fault(&self) -> crate::model::Fault {
        use crate::model::Fault;
        match self {
            Self::Unavailable(_) => Fault::Machine,
            Self::NoSuchGpu { .. } | Self::UnknownTest { .. } | Self::BadOption(_) => Fault::Input,
        }
    }
}
