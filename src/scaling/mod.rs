//! Scaling: what the measured links mean for workloads on 1 … N GPUs.
//!
//! [`workload`] is the catalog (assets/workloads/*.toml, plus the user's files); [`table`]
//! computes the rows of step times for weak and strong scaling from a measured (or datasheet)
//! GEMM rate and the measured (or modeled) all-reduce curve ([`curve`]), projecting beyond the
//! box over nodes;
//! [`framework`] runs the workload's real training step with PyTorch (DDP/FSDP under torchrun):
//! the measured truth, whose 1-GPU step calibrates the model ([`calibrate`]); [`memory`] says
//! whether a step fits the GPU and [`batch`] how its samples are laid out (a global batch over
//! the GPUs in whole samples, micro-batches accumulated); [`proxy`] runs synthetic steps
//! (cuBLAS GEMMs + NCCL all-reduce) on machines without PyTorch; [`cost`] turns throughput and
//! power into cost per million samples at the user's prices. Formulas and sources:
//! docs/SCALING.md.

pub mod batch;
pub mod calibrate;
pub mod cost;
pub mod curve;
pub mod framework;
pub mod machine;
pub mod memory;
pub mod power;
pub mod proxy;
pub mod rates;
pub mod run;
pub mod step;
pub mod table;
pub mod workload;

pub use curve::CommCurve;
pub use rates::{GemmRate, GpuRates, PerGpuRates, datasheet_rate};
pub use table::{
    Bound, CALIBRATION_POINT, Machine, Mode, RowSource, ScalingPoint, StepRate, StepStatistic,
    bound_mark, gpu_counts, model,
};
pub use workload::{Pattern, Workload, WorkloadError};
