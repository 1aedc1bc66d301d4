//! Launches → rows: each launch's results become scaling rows, 1-GPU calibrations and notes;
//! the overlap probe measures how much communication compute hides.

use std::sync::atomic::AtomicBool;

use super::launch::{LaunchOutcome, launch_script};
use super::protocol::{ProbeLine, ResultLine, clip, positive};
use super::python::PythonEnv;
use super::{FrameworkOptions, FrameworkRun};
use crate::model::energy::EnergyBasis;
use crate::scaling::calibrate::{MeasuredStep, ProbeRates};
use crate::scaling::table::{Mode, OverlapMeasure, RowSource, ScalingPoint, fill_speedup};
use crate::scaling::workload::Workload;

pub(super) fn row(w: &Workload, mode: Mode, n: usize, per: f64) -> ScalingPoint {
    let mut r = ScalingPoint::empty(w, mode, RowSource::Framework, n);
    r.per_gpu_batch = per;
    r.global_batch = per * n as f64;
    r
}

/// Turns one launch's outcome into rows, 1-GPU calibrations and notes.
pub(super) fn absorb(
    run: &mut FrameworkRun,
    w: &Workload,
    n: usize,
    planned: &[(Mode, f64)],
    o: &LaunchOutcome,
    basis_env: &str,
) {
    for &(mode, per) in planned {
        let mut r = row(w, mode, n, per);
        match o.results.iter().find(|x| x.mode == mode.id()) {
            Some(x) => {
                r.per_gpu_batch = x.per_gpu_batch;
                r.global_batch = x.global_batch;
                r.micro_batch = Some(x.micro_batch);
                r.accumulate = Some(x.accumulate.max(1.0) as u64);
                r.step_time_ms = Some(x.step_ms.figure());
                r.step_statistic = Some(crate::scaling::StepStatistic::Mean);
                r.throughput = Some(x.global_batch / (x.step_ms.figure() * 1e-3));
                r.memory_gib_per_gpu = x.peak_mem_gib;
                r.fits = Some(true);
                let energy_note = energy(&mut r, x, n);
                r.basis = format!(
                    "{} steps{}, mean {:.2} ms (median {:.2}, min {:.2}, max {:.2}); {}{}{}; {basis_env}",
                    x.steps,
                    match (x.extended, x.window_s) {
                        (true, Some(s)) => format!(
                            " over {s:.0} s (window grown: the steps spread widely, the host's speed varied)"
                        ),
                        (true, None) => " (window grown: the steps spread widely)".to_string(),
                        _ => String::new(),
                    },
                    x.step_ms.mean,
                    x.step_ms.median,
                    x.step_ms.min,
                    x.step_ms.max,
                    x.model.as_deref().unwrap_or("?"),
                    if x.accumulate > 1.0 {
                        format!(", {} micro-batches of {}", x.accumulate, x.micro_batch)
                    } else {
                        String::new()
                    },
                    if n == 1 {
                        x.host_note()
                    } else {
                        x.ranks_host_note(
                            run.steps
                                .iter()
                                .find(|s| s.workload == w.name && s.mode == mode)
                                .and_then(|s| s.host_probe_us),
                        )
                    },
                );
                r.basis.push_str(&energy_note);
                r.basis.push_str(&x.wrapper_note());
                if n == 1 {
                    run.steps.push(measured_step(w, mode, x, basis_env));
                }
            }
            None => {
                let why = match (&o.oom, &o.failure) {
                    (Some((m, msg)), _) if m.as_deref().is_none_or(|m| m == mode.id()) => {
                        r.fits = Some(false);
                        format!("out of GPU memory (measured): {}", clip(msg, 200))
                    }
                    (Some(_), _) => "not run: an earlier mode ran out of GPU memory".to_string(),
                    (None, Some(f)) => format!("failed: {f}"),
                    (None, None) => "failed: no result for this mode".to_string(),
                };
                r.basis = why;
            }
        }
        run.rows.push(r);
    }
    if let Some(f) = &o.failure {
        run.notes
            .push(format!("PyTorch {} on {n} GPU(s): {f}", w.name));
    }
    if !o.garbage.is_empty() {
        run.notes.push(format!(
            "PyTorch {} on {n} GPU(s): {} output line(s) not understood, the first: {}",
            w.name,
            o.garbage.len(),
            o.garbage[0]
        ));
    }
}

/// A 1-GPU result as the model's calibration: its step, optimizer, profile split, host floor
/// and wrapper cost.
fn measured_step(w: &Workload, mode: Mode, x: &ResultLine, basis_env: &str) -> MeasuredStep {
    let mut samples = x.step_samples_ms.clone();
    samples.retain(|v| v.is_finite() && *v > 0.0);
    MeasuredStep {
        workload: w.name.clone(),
        mode,
        per_gpu_batch: x.per_gpu_batch,
        step_ms: x.step_ms.figure(),
        optimizer_ms: x
            .opt_ms
            .filter(|v| v.is_finite() && *v >= 0.0)
            .unwrap_or(0.0),
        samples_ms: samples,
        matrix_share: x.matrix_share(),
        matrix_ms: x.rank0_profile().map(|p| p.matrix),
        other_ms: x.rank0_profile().map(|p| p.other),
        host_ms: x.host_floor_at_window(),
        host_probe_us: positive(x.host_probe_us),
        accumulate: Some(x.accumulate).filter(|a| a.is_finite() && *a >= 1.0),
        wrapper_ms: x.wrapper_ms(),
        under_ddp: x.under_ddp(),
        basis: basis_env.to_string(),
    }
}

/// How often NVML's total-energy counter moves on H100 and H200, s (measured: docs/SCALING.md).
const COUNTER_UPDATE_S: f64 = 0.1;

/// Fills the row's energy figures from the window's NVML readings; returns what the basis says
/// of them (their source and the GPUs' idle power, or why there are none).
fn energy(r: &mut ScalingPoint, x: &ResultLine, n: usize) -> String {
    let idle = x
        .idle_watts()
        .map(|w| format!("; {w:.0} W per GPU before the run"))
        .unwrap_or_default();
    // J per step, W per GPU, samples per J, where they come from, and the basis's words.
    let (per_step, watts, per_joule, basis, words) = match x.stretch_power() {
        // The steps' own power, read in stretches between drains: the energy of a step is that
        // power times the mean step (CUDA events).
        Some(sp) if sp.watts.iter().sum::<f64>() * x.step_ms.mean > 0.0 => {
            let total: f64 = sp.watts.iter().sum();
            let joules = total * x.step_ms.mean / 1e3;
            r.energy_stretches_unix_s = x
                .energy_stretches
                .iter()
                .map(|rank| rank.iter().map(|&[t0, _, t1, _]| [t0, t1]).collect())
                .collect();
            (
                joules,
                total / n as f64,
                x.global_batch / joules,
                EnergyBasis::Counter,
                format!(
                    "{joules:.1} J per step, {:.0} W per GPU: NVML energy counter over the steps alone ({} stretch{} between host probes, {:.1} s{}; counter resolution ±{:.1} %){idle}",
                    total / n as f64,
                    sp.stretches,
                    if sp.stretches == 1 { "" } else { "es" },
                    sp.seconds,
                    if n > 1 { " on the shortest rank" } else { "" },
                    sp.resolution(COUNTER_UPDATE_S) * 100.0,
                ),
            )
        }
        _ => match x.window_energy() {
            Ok((e, seconds, steps)) if e.joules > 0.0 => (
                e.joules / steps,
                e.joules / seconds / n as f64,
                x.global_batch * steps / e.joules,
                e.basis,
                format!(
                    "{:.1} J per step over {steps:.0} steps in {seconds:.1} s{}, {:.0} W per GPU ({}{idle})",
                    e.joules / steps,
                    match (x.probe_t.len(), x.probe_s) {
                        (k @ 1.., Some(p)) if p.is_finite() && p >= 0.0 => format!(
                            " (with {k} host probe{} of {p:.2} s in all, the GPU drained: {:.0} % of the window)",
                            if k == 1 { "" } else { "s" },
                            p / seconds * 100.0
                        ),
                        _ => String::new(),
                    },
                    e.joules / seconds / n as f64,
                    match e.basis {
                        EnergyBasis::PowerReadings =>
                            "NVML power readings at the window's ends: bursts unseen",
                        b => b.words(),
                    },
                ),
            ),
            Ok(_) => return "; energy not measured: the GPUs drew no energy in the window".into(),
            Err(why) => return format!("; energy not measured: {why}"),
        },
    };
    r.energy_j_per_step = Some(per_step);
    r.watts_per_gpu = Some(watts);
    r.samples_per_joule = Some(per_joule);
    r.energy_basis = Some(basis);
    r.energy_window_unix_s = x.window_t;
    r.idle_watts_per_gpu = x.idle_watts();
    format!("; energy {words}") + &x.clock_note()
}

/// The overlap probe's spec (one compute mix per training workload of `workloads`: its
/// matrix-kernel share measured at n = 1, else 0.5) and those shares, per workload.
pub(super) fn probe_spec(
    run: &FrameworkRun,
    workloads: &[Workload],
    opts: &FrameworkOptions,
) -> (serde_json::Value, Vec<(String, f64)>) {
    // One compute mix per workload: its matrix-kernel share measured at n = 1.
    let mut shares: Vec<(String, f64)> = Vec::new();
    for w in workloads.iter().filter(|w| w.pattern.is_training()) {
        let share = run
            .steps
            .iter()
            .find(|s| s.workload == w.name)
            .and_then(|s| s.matrix_share)
            .unwrap_or(0.5);
        shares.push((w.name.clone(), (share * 100.0).round() / 100.0));
    }
    let list: Vec<f64> = {
        let mut v: Vec<f64> = shares.iter().map(|s| s.1).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let spec = serde_json::json!({
        "probe": "overlap", "compute_ms": 200, "allreduces": 128, "repeats": 3,
        "matrix_shares": list, "host_probe_s": opts.probe_host_s,
    });
    (spec, shares)
}

/// The overlap probe in a launch of its own on every GPU of `opts` (where the last launch of
/// the workloads did not run it).
pub(super) fn overlap_probe(
    run: &mut FrameworkRun,
    env: &PythonEnv,
    script: &str,
    workloads: &[Workload],
    opts: &FrameworkOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, &[ScalingPoint]),
) {
    let (spec, shares) = probe_spec(run, workloads, opts);
    let n = opts.gpus.len();
    let label = format!("probe on {n} GPU(s): GEMM and copy rates, overlap");
    progress(&label, &run.rows);
    let o = launch_script(
        &env.path,
        script,
        &spec,
        &opts.gpus,
        opts.timeout,
        cancel,
        &mut |_| {},
    );
    run.time.add("overlap probe", o.phases.total());
    run.launches += 1;
    if let Some(f) = &o.failure {
        run.notes.push(format!(
            "overlap probe: {f}; the catalog's overlap figures are used"
        ));
    }
    absorb_probes(run, &o.probes, shares, n);
}

/// The GEMM and copy rates, host speed and overlap shares of the probe's lines, `n` GPUs.
pub(super) fn absorb_probes(
    run: &mut FrameworkRun,
    probes: &[ProbeLine],
    shares: Vec<(String, f64)>,
    n: usize,
) {
    if let Some(p) = probes.first() {
        let host = probes.iter().find_map(|p| positive(p.host_probe_us));
        let allreduce_host_us = probes.iter().find_map(|p| positive(p.allreduce_host_us));
        run.probe = Some(ProbeRates {
            gemm_tflops: p.gemm_tflops,
            copy_gbps: p.copy_gbps,
            host_probe_us: host,
            allreduce_host_us,
            basis: format!(
                "framework probe on {}: torch bf16 4096³ GEMM, 256 MiB device copy ({n} GPUs busy){}",
                p.gpu.as_deref().unwrap_or("GPU 0"),
                host.map(|us| format!("; host probe {us:.0} µs per iteration (GPU 0 alone)"))
                    .unwrap_or_default()
                    + &allreduce_host_us
                        .map(|us| format!("; {us:.0} µs of host time per all-reduce issued"))
                        .unwrap_or_default()
            ),
        });
    }
    for (w, share) in shares {
        let best = probes
            .iter()
            .filter(|p| p.world_size >= 2 && p.hidden.is_some_and(f64::is_finite))
            .min_by(|a, b| {
                (a.matrix_share - share)
                    .abs()
                    .total_cmp(&(b.matrix_share - share).abs())
            });
        if let Some(p) = best {
            run.overlap.push(OverlapMeasure {
                workload: w,
                matrix_share: p.matrix_share,
                hidden: p.hidden.unwrap_or(0.0).clamp(0.0, 1.0),
                gpus: p.world_size,
                basis: format!(
                    "compute {:.1} ms + all-reduces {:.1} ms alone, {:.1} ms together",
                    p.compute_ms, p.comm_ms, p.both_ms
                ),
            });
        }
    }
}

/// Speedups filled in, rows in the workloads' order (then GPU count, each launch's modes in
/// turn), as one launch per workload would have given them.
pub(super) fn finish(mut run: FrameworkRun, workloads: &[Workload]) -> FrameworkRun {
    let at = |name: &str| workloads.iter().position(|w| w.name == name);
    run.rows.sort_by_key(|r| (at(&r.workload), r.n_gpus));
    fill_speedup(&mut run.rows);
    run
}
