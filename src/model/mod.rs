//! Plain data: what scalescope knows about a machine and what it measured there.
//!
//! Nothing in this module talks to NVML, CUDA, egui or the file system; every other layer reads
//! and writes these types. A value that could not be sourced is `None` (an empty CSV cell, "—"
//! in the UI), never zero.

mod linkrate;
mod topology;

pub use linkrate::{nvlink_rate_per_link_gbps, pcie_rate_gbps, DEFAULT_NVLINK_GBPS};
pub use topology::{
    Gpu, GpuLink, LineRate, LineRateBasis, LinkKind, Nic, NicLink, P2pCap, P2pCaps, P2pPair, P2pStatus,
    PcieLink, Topology, TopologySource,
};
