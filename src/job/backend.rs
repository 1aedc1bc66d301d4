//! The one place that picks the real or the modeled backend of a measurement: CUDA (and NCCL) on
//! this machine's GPUs, or line rates × measured efficiencies for a machine described elsewhere
//! (every figure of which says `modeled`).

use std::path::Path;

use super::JobError;
use crate::bench::collectives::{CollectiveBackend, ModeledCollectives};
use crate::bench::modeled::{Assumptions, ModeledBackend};
use crate::bench::{Backend, CopyKernelOptions, Warning};
use crate::model::Topology;

/// The copy-bandwidth backend for `topo`: modeled (with `pcie` = (generation, width) assumed for
/// links the topology does not state), or CUDA on this machine. The warnings are the model's
/// assumptions. `copy` sets how the SM copy tests run the copy kernel (measured only).
pub fn bandwidth_backend(
    topo: &Topology,
    modeled: bool,
    pcie: Option<(u32, u32)>,
    copy: &CopyKernelOptions,
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
        Ok((
            Box::new(crate::bench::cuda::CudaBackend::with_copy_kernel(
                topo, copy,
            )?),
            Vec::new(),
        ))
    }
}

/// The collectives backend for `topo`: modeled, or NCCL and scalescope's own algorithms on this
/// machine (`nccl_lib`: the NCCL library to load, else the default search).
pub fn collectives_backend(
    topo: &Topology,
    modeled: bool,
    nccl_lib: Option<&Path>,
) -> Result<(Box<dyn CollectiveBackend>, Vec<Warning>), JobError> {
    if modeled {
        let (bw, w) = ModeledBackend::new(topo, Assumptions::default());
        Ok((Box::new(ModeledCollectives::new(bw.topology())), w))
    } else {
        Ok((
            Box::new(crate::bench::cuda::collectives::CudaCollectives::new(
                topo, nccl_lib,
            )?),
            Vec::new(),
        ))
    }
}
