//! A whole scaling run, shared by the CLI and the GUI: the machine's inputs (measured on this
//! machine, or modeled), the model over every workload and mode, and the proxy runs.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use super::curve::CommCurve;
use super::model::{Machine, Mode, ScalingPoint, attach_errors, model};
use super::proxy::{self, ProxyOptions};
use super::rates::{GpuRates, PerGpuRates, gpu_list};
use super::workload::Workload;
use crate::bench::collectives::{CollectiveOptions, plan, run_collectives};
use crate::model::Topology;
use crate::model::units::parse_sizes;

/// Default projection limit: up to 1024 GPUs over nodes.
pub const DEFAULT_MAX_GPUS: usize = 1024;

/// Everything a scaling run produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScalingRun {
    /// The machine the model used (`None` before anything ran).
    pub machine: Option<Machine>,
    pub workloads: Vec<Workload>,
    /// Model rows (all modeled) then proxy rows (measured).
    pub rows: Vec<ScalingPoint>,
    /// What was measured or could not be, in words.
    pub notes: Vec<String>,
}

/// Models every workload on `topo` restricted to `gpus` (empty = all) with datasheet rates and
/// the modeled all-reduce curve. Runs nothing on GPUs.
pub fn run_modeled(
    topo: &Topology,
    gpus: &[usize],
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
) -> ScalingRun {
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    // The modeled bandwidth backend fills link rates an import lacks (with warnings).
    let (bw, warnings) = crate::bench::modeled::ModeledBackend::new(
        &sub,
        crate::bench::modeled::Assumptions::default(),
    );
    let machine = Machine::modeled(bw.topology());
    let mut notes: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    notes.push(
        "modeled: datasheet GEMM rates and the all-reduce curve modeled from line rates".into(),
    );
    finish(machine, workloads, modes, max_gpus, Vec::new(), notes)
}

/// Models every workload on `topo` (restricted to `gpus`, empty = all) with datasheet GEMM rates
/// and an all-reduce curve the caller measured (e.g. the collectives stage of `--bench`). Runs
/// nothing on GPUs.
pub fn run_with_curve(
    topo: &Topology,
    gpus: &[usize],
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
    comm: CommCurve,
) -> ScalingRun {
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    let (bw, warnings) = crate::bench::modeled::ModeledBackend::new(
        &sub,
        crate::bench::modeled::Assumptions::default(),
    );
    let name = sub
        .gpus
        .iter()
        .find_map(|g| g.name.clone())
        .unwrap_or_default();
    let mut notes: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    notes.push(format!(
        "model fed by the {} all-reduce curve ({}) and datasheet GEMM rates",
        comm.source, comm.basis
    ));
    let mut machine = Machine::from_topology(bw.topology(), Some(comm), GpuRates::datasheet(&name));
    machine.label = sub.source.label();
    finish(machine, workloads, modes, max_gpus, Vec::new(), notes)
}

/// On this machine: measures the GEMM rates (cuBLAS: the first GPU alone, then every GPU at
/// once) and an NCCL all-reduce sweep over `gpus`, models with them, then runs the proxies on
/// 1, 2, 4, … and N GPUs. Each input that cannot be measured falls back to its modeled value
/// with a note. `progress` gets a label per stage.
#[allow(clippy::too_many_arguments)]
pub fn run_measured(
    topo: &Topology,
    gpus: &[usize],
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
    nccl_lib: Option<&std::path::Path>,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> Result<ScalingRun, String> {
    let sub = if gpus.is_empty() {
        topo.clone()
    } else {
        topo.subset(gpus)
    };
    let ordinals = sub.gpu_indices();
    let mut notes = Vec::new();
    let name = sub
        .gpus
        .iter()
        .find_map(|g| g.name.clone())
        .unwrap_or_default();
    let (bw, _) = crate::bench::modeled::ModeledBackend::new(
        &sub,
        crate::bench::modeled::Assumptions::default(),
    );
    let modeled_machine = Machine::modeled(bw.topology());
    let (rates, concurrent) = measure_rates(&ordinals, cancel, &mut notes, progress);
    let rates = rates.or(GpuRates::datasheet(&name));
    progress(
        "measuring the all-reduce curve (NCCL)",
        &ScalingRun::default(),
    );
    let comm = if ordinals.len() >= 2 {
        measure_curve(&sub, nccl_lib, cancel).unwrap_or_else(|e| {
            notes.push(format!(
                "all-reduce curve not measured ({e}); modeled curve used"
            ));
            modeled_machine.comm.clone()
        })
    } else {
        None
    };
    let mut machine = Machine::from_topology(bw.topology(), comm, rates);
    machine.label = sub.source.label();
    machine.concurrent = concurrent;
    let mut run = finish(machine, workloads, modes, max_gpus, Vec::new(), notes);
    progress("proxy runs", &run);
    let opts = ProxyOptions {
        gpus: ordinals,
        modes: modes.to_vec(),
        nccl_lib: nccl_lib.map(|p| p.to_path_buf()),
    };
    let model_rows = run.rows.clone();
    let measured = proxy::run(workloads, &opts, cancel, &mut |rows| {
        let mut all = model_rows.clone();
        all.extend_from_slice(rows);
        attach_errors(&mut all);
        let partial = ScalingRun {
            rows: all,
            ..run.clone()
        };
        progress("proxy runs", &partial);
    });
    match measured {
        Ok(rows) => run.rows.extend(rows),
        Err(e) => run.notes.push(format!("proxy runs skipped: {e}")),
    }
    attach_errors(&mut run.rows);
    Ok(run)
}

/// The GEMM rates of `ordinals`: with two or more GPUs, each GPU while all of them run at once
/// (empty where not measured); then the first GPU alone (empty where not measured, and then
/// the concurrent rates are dropped too, so the model uses one rate for every count). The
/// concurrent run goes first so that the alone rate, too, is taken on a GPU that is as warm as
/// it is during the proxy runs that follow: a GPU fresh from idle sustains a higher rate for
/// its first seconds of load than after minutes of it (on 2× H200: 737 TFLOP/s cold, 675 with
/// both GPUs busy, docs/BENCHMARKS.md). What fails is noted.
fn measure_rates(
    ordinals: &[usize],
    cancel: &AtomicBool,
    notes: &mut Vec<String>,
    progress: &mut dyn FnMut(&str, &ScalingRun),
) -> (GpuRates, Vec<PerGpuRates>) {
    let Some(&first) = ordinals.first() else {
        return (GpuRates::default(), Vec::new());
    };
    let cublas = match super::cublas::Cublas::load() {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("GEMM rate not measured: {e}; datasheet rate used"));
            return (GpuRates::default(), Vec::new());
        }
    };
    let mut concurrent = Vec::new();
    if ordinals.len() >= 2 && !cancel.load(Ordering::Relaxed) {
        let list = gpu_list(ordinals);
        progress(
            &format!("measuring the GEMM rate on GPUs {list} at once (cuBLAS)"),
            &ScalingRun::default(),
        );
        match proxy::measure_gemm(&cublas, ordinals) {
            Ok(r) => concurrent = r,
            Err(e) => notes.push(format!(
                "GEMM rate of GPUs {list} running at once not measured ({e}); every GPU count \
                 modeled at GPU {first}'s rate alone"
            )),
        }
    }
    progress(
        &format!("measuring the GEMM rate on GPU {first} alone (cuBLAS)"),
        &ScalingRun::default(),
    );
    match proxy::measure_gemm(&cublas, &[first]) {
        Ok(mut r) => (r.pop().map(|r| r.rates).unwrap_or_default(), concurrent),
        Err(e) => {
            // One GPU count at the datasheet's rate and the others at a measured one would make
            // the speedups meaningless: the datasheet's for every count.
            notes.push(format!("GEMM rate not measured ({e}); datasheet rate used"));
            (GpuRates::default(), Vec::new())
        }
    }
}

fn measure_curve(
    topo: &Topology,
    nccl_lib: Option<&std::path::Path>,
    cancel: &AtomicBool,
) -> Result<Option<CommCurve>, String> {
    let opts = CollectiveOptions {
        gpus: topo.gpu_indices(),
        sizes: parse_sizes("1K..1G").map_err(|e| e.to_string())?,
        ..Default::default()
    };
    let (_, cases) = plan(topo, &opts).map_err(|e| e.to_string())?;
    let mut backend = crate::bench::cuda::collectives::CudaCollectives::new(topo, nccl_lib)
        .map_err(|e| e.to_string())?;
    let (results, _) = run_collectives(
        &cases,
        &mut backend,
        cancel,
        &mut Vec::new(),
        &mut |_, _, _| {},
    );
    CommCurve::from_results(&results)
        .map(Some)
        .ok_or_else(|| "no all-reduce size measured".to_string())
}

fn finish(
    machine: Machine,
    workloads: &[Workload],
    modes: &[Mode],
    max_gpus: usize,
    mut rows: Vec<ScalingPoint>,
    notes: Vec<String>,
) -> ScalingRun {
    for w in workloads {
        rows.extend(model(w, &machine, modes, max_gpus));
    }
    ScalingRun {
        machine: Some(machine),
        workloads: workloads.to_vec(),
        rows,
        notes,
    }
}
