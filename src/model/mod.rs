//! Plain data: what scalescope knows about a machine and what it measured there.
//!
//! Nothing in this module talks to NVML, CUDA, egui or the file system; every other layer reads
//! and writes these types. A value that could not be sourced is `None` (an empty CSV cell, "—"
//! in the UI), never zero.

mod bandwidth;
mod collective;
pub mod collective_reference;
pub mod decimate;
pub mod efficiency;
pub mod energy;
mod fault;
mod link_codes;
mod linkrate;
mod machine_state;
pub mod options;
pub mod published;
pub mod quantities;
mod running;
pub mod soak;
mod stats;
mod topology;
pub mod traffic;
pub mod validate;

pub use bandwidth::{
    BandwidthResult, Endpoint, HEADLINE_BYTES, Headline, Method, PLAUSIBLE_EFFICIENCY, Shape,
    Source, Status, TestId, check_bandwidth_figures, fullest_size, headline, headline_size,
};
pub use collective::{
    Algo, CollectiveCase, CollectiveOp, CollectiveResult, Dtype, check_collective_figures,
};
pub use fault::{Blame, Fault};
pub use link_codes::{LinkKind, P2pCap, P2pCaps, P2pStatus};
pub use linkrate::{
    DEFAULT_NVLINK_GBPS, NVLINK_GBPS_PER_LINK, NVLINKS_PER_GPU_MAX, PCIE_WIDTHS,
    nvlink_rate_per_link_gbps, pcie_rate_gbps,
};
pub use machine_state::{
    ComputeMode, EccState, GpuInventory, GpuLoadObservation, GpuProcess, GpuSettings, Inventory,
    InventoryKind, LoadObservation, LoadState, MissingGpu, NvLinkState, PcieState, Temperatures,
    ThrottleReason,
};
pub use options::{EnergyWindow, GpuSelection, Interval, Refused};
pub use running::{as_running, below_design};
pub use soak::{SoakEvent, SoakEventKind, SoakLoad, SoakOptions, SoakSample, SoakSection};
pub use stats::{Stats, median, quantile};
pub use topology::{
    BusKey, Gpu, GpuLink, HostLink, LineRate, MAX_GPUS, Nic, NicLink, NoteKind, P2pPair, PcieLink,
    Rack, Topology, TopologyNote, TopologySource, check_gpu_count, pci_bus_key, same_pci_bus,
};
