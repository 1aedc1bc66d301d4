//! Where a [`Topology`](crate::model::Topology) comes from: this machine through NVML and CUDA
//! ([`live`]), `nvidia-smi topo` text captured elsewhere ([`import`]), or the hardware
//! [`catalog`] shipped in `assets/hardware/`. `nvidia-smi -q`/`-q -x`/`nvlink` captures add the
//! GPUs' state ([`smi_query`]), and [`nvml_state`] reads the same state from this machine once.
//! What samples the machine over time (the check's sampler, the energy meter, the soak's probe,
//! live traffic) is `telemetry/`.

pub mod catalog;
mod catalog_cells;
mod catalog_schema;
pub mod gpu_order;
pub mod import;
pub mod live;
pub mod machine_import;
pub mod nvml_state;
pub mod published;
pub mod smi_query;
pub mod smi_temperature;
pub mod xml_budget;

use std::io;

/// The advice a missing driver's error ends with; a command with better advice of its own
/// replaces it (`check`, `--bench`) rather than adding a second piece of advice after it.
pub const NO_DRIVER_ADVICE: &str =
    "use --import FILE with `nvidia-smi topo -m` output, or --catalog NAME";

/// Why a topology could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    /// Text that is not what `nvidia-smi topo` prints.
    #[error("{origin}:{line}: {message}")]
    Parse {
        /// File name, or `<stdin>`.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// What was expected and what was found.
        message: String,
    },
    /// An imported file that cannot be read as what it claims to be, at no one line (a JSON
    /// file's missing key, a file that ends before its table).
    #[error("{origin}: {message}")]
    BadFile {
        /// File name, or `<stdin>`.
        origin: String,
        /// What was expected and what was found.
        message: String,
    },
    /// `--catalog NAME` names no entry.
    #[error(
        "no catalog entry named {name:?}; run `scalescope --catalog` to list them (known: {known}), or give a catalog file ending in .toml"
    )]
    UnknownCatalogEntry { name: String, known: String },
    /// A catalog file that does not describe a valid machine.
    #[error("catalog file {file}: {message}")]
    BadCatalog { file: String, message: String },
    /// A catalog file the user named (`--catalog FILE.toml`) that does not describe a valid
    /// machine: bad input, where a broken embedded entry is a bug of the build.
    #[error("catalog file {file}: {message}")]
    BadCatalogFile { file: String, message: String },
    /// The NVIDIA driver's management library could not be loaded.
    #[error(
        "no NVIDIA driver found (cannot load libnvidia-ml.so.1: {reason}); {advice}",
        advice = NO_DRIVER_ADVICE
    )]
    NoDriver { reason: String },
    /// NVML loaded but a call failed.
    #[error("NVML: {what}: {reason}")]
    Nvml { what: String, reason: String },
}

impl crate::model::Blame for TopologyError {
    /// The user's input (a file, a flag value, a catalog name) or the machine (no driver, NVML,
    /// a broken embedded catalog entry).
    fn fault(&self) -> crate::model::Fault {
        use crate::model::Fault;
        match self {
            Self::Io { .. }
            | Self::Parse { .. }
            | Self::BadFile { .. }
            | Self::UnknownCatalogEntry { .. }
            | Self::BadCatalogFile { .. } => Fault::Input,
            Self::BadCatalog { .. } | Self::NoDriver { .. } | Self::Nvml { .. } => Fault::Machine,
        }
    }
}
