//! Scaling: what the measured links mean for workloads on 1 … N GPUs.
//!
//! [`workload`] is the catalog (assets/workloads/*.toml, plus the user's files); [`model`]
//! computes step times for weak and strong scaling from a measured (or datasheet) GEMM rate and
//! the measured (or modeled) all-reduce curve ([`curve`]), projecting beyond the box over nodes;
//! [`proxy`] runs synthetic steps on real GPUs (cuBLAS GEMMs + NCCL all-reduce) to check the
//! model. Formulas and sources: docs/SCALING.md.

pub mod cublas;
pub mod curve;
pub mod model;
pub mod proxy;
pub mod rates;
pub mod run;
pub mod workload;

pub use curve::CommCurve;
pub use model::{Bound, Machine, Mode, ScalingPoint, StepRate, gpu_counts, model};
pub use rates::{GemmRate, GpuRates, PerGpuRates, datasheet_rate};
pub use workload::{Pattern, Workload, WorkloadError};
