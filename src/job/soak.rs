//! The soak stage: a burn-in of the selected GPUs, or a recording played back.

use super::{Ctx, JobError};
use crate::health::Thresholds;
use crate::model::{SoakOptions, Topology};

/// Runs the soak of `opts` on `gpus` of `topo` (empty: all), sending its samples as they come
/// and its verdict as `soak_*` checks added to the health report.
pub(super) fn run(
    _ctx: &mut Ctx<'_>,
    _topo: &Topology,
    _gpus: &[usize],
    _opts: &SoakOptions,
    _thresholds: &Thresholds,
) -> Result<(), JobError> {
    Err(JobError::machine("the soak is not built yet"))
}
