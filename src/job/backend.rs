//! The one place that builds the backend of a measurement: CUDA (and NCCL) on this machine's
//! GPUs, or line rates × measured efficiencies for a machine described elsewhere (every figure
//! of which says `modeled`). The layers below that run measurements of their own — the health
//! check's load tests, the measured scaling run's all-reduce curve — are handed these functions
//! rather than building a backend themselves.

use std::path::Path;

use super::JobError;
use crate::bench::collectives::{CollectiveBackend, ModeledCollectives};
use crate::bench::cuda::CudaBackend;
use crate::bench::cuda::collectives::CudaCollectives;
use crate::bench::modeled::{Assumptions, ModeledBackend};
use crate::bench::{Backend, BenchError, CopyKernelOptions, Warning};
use crate::model::Topology;

/// The measuring copy backend on this machine's GPUs (CUDA): what the live health check runs
/// its load tests on.
pub fn measured_bandwidth(topo: &Topology) -> Result<Box<dyn Backend>, BenchError> {
    Ok(Box::new(CudaBackend::new(topo)?))
}

/// The modeled copy backend for `topo` exactly as it states it (nothing assumed): what the
/// health check of a machine known from captures or a catalog entry models its copies with.
pub fn modeled_as_stated(topo: &Topology) -> Box<dyn Backend> {
    Box::new(ModeledBackend::as_stated(topo))
}

/// The copy-bandwidth backend for `topo`: modeled (with `pcie` = (generation, width) assumed for
/// links the topology does not state), or CUDA on this machine. The warnings are the model's
/// assumptions. `copy` sets how the SM copy tests run the copy kernel, `energy_window_s` how
/// long each test runs on for its energy (measured only).
pub fn bandwidth_backend(
    topo: &Topology,
    modeled: bool,
    pcie: Option<(u32, u32)>,
    copy: &CopyKernelOptions,
    energy_window_s: Option<crate::model::EnergyWindow>,
) -> Result<(Box<dyn Backend>, Vec<Warning>), JobError> {
    if modeled {
        let mut assume = Assumptions::default();
        if let Some((generation, width)) = pcie {
            assume.pcie_gen = generation;
            assume.pcie_width = width;
        }
        let (b, w) = ModeledBackend::new(topo, assume);
        Ok((Box::new(b), w))
    } else {
        let mut b = CudaBackend::with_copy_kernel(topo, copy)?;
        b.set_energy_window(energy_window_s.map_or(0.0, crate::model::EnergyWindow::seconds));
        Ok((Box::new(b), Vec::new()))
    }
}

/// The measuring collectives backend on this machine's GPUs (NCCL and scalescope's own
/// algorithms; `nccl_lib`: the NCCL library to load, else the default search): what the
/// measured scaling run sweeps its all-reduce curve on.
pub fn measured_collectives(
    topo: &Topology,
    nccl_lib: Option<&Path>,
) -> Result<Box<dyn CollectiveBackend>, BenchError> {
    Ok(Box::new(CudaCollectives::new(topo, nccl_lib)?))
}

/// The collectives backend for `topo`: modeled, or NCCL and scalescope's own algorithms on this
/// machine (`nccl_lib`: the NCCL library to load, else the default search).
pub fn collectives_backend(
    topo: &Topology,
    modeled: bool,
    nccl_lib: Option<&Path>,
    energy_window_s: Option<crate::model::EnergyWindow>,
) -> Result<(Box<dyn CollectiveBackend>, Vec<Warning>), JobError> {
    if modeled {
        let (bw, w) = ModeledBackend::new(topo, Assumptions::default());
        Ok((Box::new(ModeledCollectives::new(bw.topology())), w))
    } else {
        let mut b = CudaCollectives::new(topo, nccl_lib)?;
        b.set_energy_window(energy_window_s.map_or(0.0, crate::model::EnergyWindow::seconds));
        Ok((Box::new(b), Vec::new()))
    }
}
