//! GPU tests of the scaling proxies: run on a machine with NVIDIA GPUs (`cargo test --test
//! gpu_scaling -- --ignored`). cuBLAS and NCCL are searched as the CLI does; set
//! SCALESCOPE_CUBLAS_LIB / SCALESCOPE_NCCL_LIB when they are elsewhere.

use std::sync::atomic::AtomicBool;

use scalescope::cuda::cublas::Cublas;
use scalescope::model::Source;
use scalescope::scaling::proxy::{self, ProxyOptions};
use scalescope::scaling::run::MeasureOptions;
use scalescope::scaling::workload;
use scalescope::scaling::{Mode, RowSource, table::attach_errors};
use scalescope::topology::live;

#[test]
#[ignore = "needs GPU"]
fn gemm_rate_is_measured_and_plausible() {
    let c = Cublas::load().expect("cuBLAS found (set SCALESCOPE_CUBLAS_LIB)");
    let r = proxy::measure_gemm(&c, &[0]).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].gpu, 0);
    let bf16 = r[0].rates.bf16.clone().unwrap();
    let fp32 = r[0].rates.fp32.clone().unwrap();
    eprintln!(
        "bf16 {:.1} TFLOP/s ({}), fp32 {:.1}",
        bf16.tflops, bf16.basis, fp32.tflops
    );
    assert_eq!(bf16.source, Source::Measured);
    // The GPU's power over the samples, from its energy counter: above idle, within a board's
    // limit.
    let watts = bf16.watts.expect("power over the GEMM samples");
    assert!(watts > 100.0 && watts < 1_500.0, "{watts} W");
    assert!(bf16.basis.contains("TFLOP/J"), "{}", bf16.basis);
    // H200: datasheet 989 dense bf16, 67 fp32; cuBLAS 8192³ reaches a large share of it.
    assert!(bf16.tflops > 100.0 && bf16.tflops < 1100.0);
    assert!(fp32.tflops > 5.0 && fp32.tflops < 80.0);
}

#[test]
#[ignore = "needs GPU"]
fn gemm_rate_is_measured_on_every_gpu_at_once() {
    let topo = live::read().unwrap();
    let gpus = topo.gpu_indices();
    let c = Cublas::load().expect("cuBLAS found (set SCALESCOPE_CUBLAS_LIB)");
    let r = proxy::measure_gemm(&c, &gpus).unwrap();
    assert_eq!(r.iter().map(|g| g.gpu).collect::<Vec<_>>(), gpus);
    for g in &r {
        let bf16 = g.rates.bf16.as_ref().unwrap();
        let fp32 = g.rates.fp32.as_ref().unwrap();
        eprintln!(
            "GPU {}: bf16 {:.1} TFLOP/s ({}), fp32 {:.1}",
            g.gpu, bf16.tflops, bf16.basis, fp32.tflops
        );
        assert_eq!(bf16.source, Source::Measured);
        assert!(bf16.tflops > 100.0 && bf16.tflops < 1100.0);
        assert!(fp32.tflops > 5.0 && fp32.tflops < 80.0);
    }
}

/// The real framework run (PyTorch on this machine): ResNet-50 weak on 1, 2, … GPUs with short
/// windows; every measured row has a step time and an error against the calibrated model, whose
/// 1-GPU step is the measured one.
#[test]
#[ignore = "needs GPU"]
fn framework_run_calibrates_the_model() {
    let topo = live::read().unwrap();
    let ws = vec![workload::resolve("resnet50").unwrap()];
    let run = scalescope::scaling::run::run_measured(
        &topo,
        scalescope::scaling::run::Scope {
            gpus: &[],
            workloads: &ws,
            modes: &[Mode::Weak],
            max_gpus: 16,
        },
        &MeasureOptions {
            quick: true,
            ..Default::default()
        },
        &|t| scalescope::job::measured_collectives(t, None),
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
    .unwrap();
    for n in &run.notes {
        eprintln!("note: {n}");
    }
    let fw: Vec<_> = run
        .rows
        .iter()
        .filter(|r| r.source == RowSource::Framework)
        .collect();
    assert_eq!(
        fw.len(),
        proxy::proxy_counts(topo.gpus.len()).len(),
        "{fw:?}"
    );
    for r in &fw {
        eprintln!(
            "n={} measured {:?} ms, error {:?}, uncalibrated {:?}, peak {:?} GiB",
            r.n_gpus,
            r.step_time_ms,
            r.model_error,
            r.model_error_uncalibrated,
            r.memory_gib_per_gpu
        );
        assert!(r.step_time_ms.is_some_and(|t| t > 0.0));
        assert!(r.model_error_uncalibrated.is_some());
        // n = 1 is the calibration point (the model is that step: no error); every other
        // count checks the model.
        assert_eq!(r.calibration_point, r.n_gpus == 1, "{r:?}");
        assert_eq!(r.model_error.is_some(), r.n_gpus > 1, "{r:?}");
    }
    let m = run.machine.as_ref().unwrap();
    assert_eq!(m.framework_steps.len(), 1);
}

#[test]
#[ignore = "needs GPU"]
fn ddp_and_inference_proxies_run_on_their_gpu_counts() {
    let topo = live::read().unwrap();
    let ws = vec![
        workload::resolve("resnet50").unwrap(),
        workload::resolve("resnet50-trt-fp16").unwrap(),
        workload::resolve("carla-multisensor").unwrap(),
    ];
    let opts = ProxyOptions {
        gpus: topo.gpu_indices(),
        modes: vec![Mode::Weak, Mode::Strong],
        nccl_lib: None,
    };
    let rows = proxy::run(&ws, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
    for r in &rows {
        eprintln!(
            "{} {} n={} step={:?} ms speedup={:?} [{}]",
            r.workload, r.mode, r.n_gpus, r.step_time_ms, r.speedup, r.basis
        );
    }
    let ok = |name: &str| {
        rows.iter()
            .filter(|r| r.workload == name && r.step_time_ms.is_some())
            .count()
    };
    let counts = proxy::proxy_counts(topo.gpus.len());
    assert_eq!(ok("resnet50"), 2 * counts.len());
    assert_eq!(ok("resnet50-trt-fp16"), 2 * counts.len());
    let ns: Vec<usize> = rows
        .iter()
        .filter(|r| r.workload == "resnet50" && r.mode == Mode::Weak)
        .map(|r| r.n_gpus)
        .collect();
    assert_eq!(ns, counts);
    // CARLA has no GPU proxy: waived, empty, never zero.
    assert!(
        rows.iter()
            .filter(|r| r.workload == "carla-multisensor")
            .all(|r| r.step_time_ms.is_none() && r.basis.starts_with("waived"))
    );
}

#[test]
#[ignore = "needs GPU"]
fn measured_run_reports_model_error() {
    let topo = live::read().unwrap();
    let ws = vec![workload::resolve("gpt2-xl").unwrap()];
    let mut run = scalescope::scaling::run::run_measured(
        &topo,
        scalescope::scaling::run::Scope {
            gpus: &[],
            workloads: &ws,
            modes: &[Mode::Weak],
            max_gpus: 16,
        },
        &MeasureOptions {
            no_framework: true,
            ..Default::default()
        },
        &|t| scalescope::job::measured_collectives(t, None),
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
    .unwrap();
    attach_errors(&mut run.rows);
    for n in &run.notes {
        eprintln!("note: {n}");
    }
    let m = run.machine.as_ref().unwrap();
    assert_eq!(m.rates.bf16.as_ref().unwrap().source, Source::Measured);
    if topo.gpus.len() >= 2 {
        // One GPU has no collective to measure: its curve is absent (nvidia-h100-x1).
        assert_eq!(m.comm.as_ref().unwrap().source, Source::Measured);
        // Every GPU measured while all ran (n ≥ 2 rows use the slowest's rate).
        assert_eq!(m.concurrent.len(), topo.gpus.len());
    }
    let measured: Vec<_> = run
        .rows
        .iter()
        .filter(|r| r.source == RowSource::Proxy)
        .collect();
    assert!(!measured.is_empty());
    for r in measured {
        eprintln!(
            "n={} measured {:?} ms, model error {:?}",
            r.n_gpus, r.step_time_ms, r.model_error
        );
        assert!(r.model_error.is_some());
    }
}
