//! The scaling model on hand-checked cases, catalog loading and validation, interpolation and the
//! CSV schema.

use scalescope::model::{Dtype, Source};
use scalescope::scaling::calibrate::{CalibrationKind, MeasuredStep};
use scalescope::scaling::rates::{GemmRate, PerGpuRates};
use scalescope::scaling::step::step_terms;
use scalescope::scaling::table::Sourced;
use scalescope::scaling::workload::{self, ComputeDtype, Pattern, Workload, WorkloadError};
use scalescope::scaling::{
    Bound, CommCurve, GpuRates, Machine, Mode, RowSource, gpu_counts, model,
};

/// 4 GPUs per node, 100 TFLOP/s bf16 (measured), a flat 100 GB/s all-reduce busbw, 10 GB/s NIC
/// per GPU, 50 GB/s host→GPU per GPU.
fn machine() -> Machine {
    Machine {
        label: "test box".into(),
        gpu_name: None,
        gpus_per_node: 4,
        rates: GpuRates {
            bf16: Some(GemmRate {
                tflops: 100.0,
                source: Source::Measured,
                basis: "test".into(),
                watts: None,
            }),
            fp32: None,
        },
        concurrent: Vec::new(),
        comm: Some(CommCurve {
            points: vec![(1.0, 100.0), (1e12, 100.0)],
            source: Source::Measured,
            basis: "flat".into(),
        }),
        comm_missing: None,
        h2d_per_gpu: Some(Sourced {
            gbps: 50.0,
            source: Source::Modeled,
            basis: "test".into(),
        }),
        h2d_total: None,
        nic_per_gpu: Sourced {
            gbps: 10.0,
            source: Source::Modeled,
            basis: "test".into(),
        },
        gpu_memory_gib: None,
        probe: None,
        overlap: Vec::new(),
        framework_steps: Vec::new(),
        catalog_only: false,
    }
}

/// 1e9 bf16 parameters (2 GB of gradient) in 1 GB buckets; 1 TFLOP per sample, batch 10,
/// utilization 0.5, overlap 0.8.
fn workload(pattern: Pattern) -> Workload {
    Workload {
        name: "t".into(),
        title: "t".into(),
        pattern,
        params: 1e9,
        grad_dtype: Dtype::Bf16,
        compute_dtype: ComputeDtype::Bf16,
        flops_per_sample: 1e12,
        per_gpu_batch: 10.0,
        strong_global_batch: 40.0,
        bucket_bytes: 1e9,
        utilization: 0.5,
        overlap: 0.8,
        sample_input_bytes: Some(1e10),
        sample_output_bytes: None,
        sync_bytes: None,
        primary_ms: None,
        frame_hz: None,
        link_gbps: None,
        offered_load: None,
        rtt_ms: None,
        steps_per_sync: None,
        optimizer: None,
        weight_bytes: None,
        micro_batch: None,
        activation_bytes_per_sample: None,
        step_ms_1gpu: None,
        cuda_graphs: false,
        model: None,
        sources: vec!["test".into()],
        calibration: Vec::new(),
        power: Vec::new(),
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-6 * b.abs().max(1.0), "{a} != {b}");
}

#[test]
fn ddp_ring_on_four_gpus_by_hand() {
    // compute = 1e12 × 10 ÷ (100e12 × 0.5) = 0.2 s = 200 ms; backward = 2/3 × 200 = 133.33 ms.
    // One 1 GB bucket all-reduce on 4 GPUs: 2·3/4 × 1e9 B ÷ 100e9 B/s = 15 ms; two buckets = 30 ms.
    // 30 − 0.8 × 133.33 < 0, but the last bucket (15 ms) is always exposed → step 215 ms.
    let t = step_terms(&workload(Pattern::DdpRing), &machine(), 4, 10.0, Mode::Weak).unwrap();
    close(t.compute_ms, 200.0);
    close(t.comm_exposed_ms, 15.0);
    close(t.step_ms, 215.0);
    assert_eq!(t.bound, Bound::Compute);
}

#[test]
fn weak_scaling_speedup_and_efficiency_by_hand() {
    // n = 1: 200 ms, 10 samples → 50 samples/s. n = 4: 40 samples in 215 ms → 186.0465/s;
    // speedup 3.72093, efficiency 0.930233.
    let rows = model(&workload(Pattern::DdpRing), &machine(), &[Mode::Weak], 4);
    let r4 = rows.iter().find(|r| r.n_gpus == 4).unwrap();
    close(r4.throughput.unwrap(), 40.0 / 0.215);
    close(r4.speedup.unwrap(), 40.0 / 0.215 / 50.0);
    close(r4.efficiency.unwrap(), 40.0 / 0.215 / 50.0 / 4.0);
    assert_eq!(r4.source, RowSource::Modeled);
    assert!(!r4.projected);
}

#[test]
fn strong_scaling_splits_the_global_batch() {
    // Global 40 on 4 GPUs: 10 per GPU → the same 215 ms step; on 1 GPU 40 samples → 800 ms.
    let rows = model(&workload(Pattern::DdpRing), &machine(), &[Mode::Strong], 4);
    let r1 = rows.iter().find(|r| r.n_gpus == 1).unwrap();
    let r4 = rows.iter().find(|r| r.n_gpus == 4).unwrap();
    close(r1.step_time_ms.unwrap(), 800.0);
    close(r4.per_gpu_batch, 10.0);
    close(r4.speedup.unwrap(), 800.0 / 215.0);
}

#[test]
fn projection_over_nodes_is_hierarchical_by_hand() {
    // n = 8 = 2 nodes × 4: per 1 GB bucket, inside the node 15 ms, across nodes
    // 2·(2−1)/2 × (1e9/4) B ÷ 10e9 B/s = 25 ms plus the latency of one doubling of nodes
    // (0.040 ms) → 40.04 ms; two buckets 80.08 ms; 80.08 − 106.67 < 0, the last bucket
    // (40.04 ms) stays exposed → 240.04 ms.
    let t = step_terms(&workload(Pattern::DdpRing), &machine(), 8, 10.0, Mode::Weak).unwrap();
    close(t.comm_exposed_ms, 40.04);
    close(t.step_ms, 240.04);
    let rows = model(&workload(Pattern::DdpRing), &machine(), &[Mode::Weak], 8);
    assert!(rows.iter().find(|r| r.n_gpus == 8).unwrap().projected);
}

#[test]
fn caffe_tree_by_hand() {
    // 2 GB gradient, one exchange = 2e9 ÷ 100e9 = 20 ms; 4 GPUs = 2 levels up + 2 down = 80 ms;
    // overlap 0 → 200 + 80 = 280 ms.
    let mut w = workload(Pattern::TreeReduce);
    w.overlap = 0.0;
    let t = step_terms(&w, &machine(), 4, 10.0, Mode::Weak).unwrap();
    close(t.comm_exposed_ms, 80.0);
    close(t.step_ms, 280.0);
}

#[test]
fn inference_replicas_are_bound_by_host_input_by_hand() {
    // 10 samples × 1e10 B = 1e11 B at 50 GB/s = 2000 ms > 200 ms compute: step 2000 ms, host
    // input exposed 1800 ms.
    let t = step_terms(
        &workload(Pattern::InferenceReplicas),
        &machine(),
        2,
        10.0,
        Mode::Weak,
    )
    .unwrap();
    close(t.step_ms, 2000.0);
    close(t.other_ms, 1800.0);
    assert_eq!(t.bound, Bound::HostInput);
}

#[test]
fn remote_offload_queueing_by_hand() {
    // 2 GPUs × 10 × (1e10 + 0) B over 10 GB/s = 20 s of network vs 200 ms compute; service
    // 20000 + 1 ms RTT; ρ = 0.5 → wait = 1 × service → step 40002 ms, network-bound.
    let mut w = workload(Pattern::RemoteOffload);
    w.link_gbps = Some(10.0);
    w.rtt_ms = Some(1.0);
    w.offered_load = Some(0.5);
    let t = step_terms(&w, &machine(), 2, 10.0, Mode::Weak).unwrap();
    close(t.step_ms, 40002.0);
    assert_eq!(t.bound, Bound::Network);
}

#[test]
fn missing_rate_leaves_the_row_empty_not_zero() {
    let mut m = machine();
    m.rates = GpuRates::default();
    let rows = model(&workload(Pattern::DdpRing), &m, &[Mode::Weak], 2);
    assert!(
        rows.iter()
            .all(|r| r.step_time_ms.is_none() && r.speedup.is_none())
    );
    assert!(rows[0].basis.contains("rate"), "{}", rows[0].basis);
}

fn bf16(tflops: f64) -> GpuRates {
    GpuRates {
        bf16: Some(GemmRate {
            tflops,
            source: Source::Measured,
            basis: "test".into(),
            watts: None,
        }),
        fp32: None,
    }
}

/// `machine()` measured: 736 TFLOP/s on GPU 0 alone; 720, 700, 710, 690 with all four at once.
fn measured_together() -> Machine {
    let mut m = machine();
    m.rates = bf16(736.0);
    m.concurrent = [720.0, 700.0, 710.0, 690.0]
        .into_iter()
        .enumerate()
        .map(|(gpu, t)| PerGpuRates {
            gpu,
            rates: bf16(t),
        })
        .collect();
    m
}

#[test]
fn a_step_runs_at_its_slowest_gpus_rate_measured_together() {
    // n = 1: GPU 0 alone, 736. n = 2: min(720, 700) = 700 (GPU 1). n = 3: min(720, 700, 710)
    // = 700. n = 4 and beyond the box: min of all four = 690 (GPU 3).
    let m = measured_together();
    let rate = |n| m.rate_for(ComputeDtype::Bf16, n).unwrap();
    assert_eq!(rate(1).rate.tflops, 736.0);
    assert_eq!(rate(1).slowest_of, None);
    assert_eq!(rate(2).rate.tflops, 700.0);
    assert_eq!(rate(2).slowest_of, Some((1, vec![0, 1])));
    assert_eq!(rate(3).rate.tflops, 700.0);
    assert_eq!(rate(4).rate.tflops, 690.0);
    assert_eq!(rate(4).slowest_of, Some((3, vec![0, 1, 2, 3])));
    assert_eq!(rate(16).rate.tflops, 690.0);
    // No fp32 rate anywhere: none for any count.
    assert!(m.rate_for(ComputeDtype::Fp32, 2).is_none());
    // Measured together above the rate alone (noise: GPUs do not speed each other up): the
    // rate alone, and the basis says why.
    let mut m = measured_together();
    m.rates = bf16(650.0);
    let r = m.rate_for(ComputeDtype::Bf16, 2).unwrap();
    assert_eq!((r.rate.tflops, r.slowest_of.clone()), (650.0, None));
    assert_eq!(r.faster_together, Some(700.0));
    assert!(
        r.describe().contains("measured 700, not slower"),
        "{}",
        r.describe()
    );
    let rows = model(&workload(Pattern::DdpRing), &m, &[Mode::Weak], 4);
    assert!(
        rows.iter()
            .all(|r| r.efficiency.is_none_or(|e| e <= 1.0 + 1e-12)),
        "{rows:?}"
    );
    // Not measured together (modeled machines, one GPU): one rate for every count.
    let alone = machine();
    for n in [1, 2, 4, 8] {
        let r = alone.rate_for(ComputeDtype::Bf16, n).unwrap();
        assert_eq!((r.rate.tflops, r.slowest_of), (100.0, None));
    }
}

#[test]
fn model_rows_name_the_rate_they_used() {
    // compute at n = 2 = 1e12 × 10 ÷ (700e12 × 0.5) s; the basis names the slowest GPU.
    let m = measured_together();
    let rows = model(&workload(Pattern::DdpRing), &m, &[Mode::Weak], 8);
    let row = |n| rows.iter().find(|r| r.n_gpus == n).unwrap();
    close(
        row(1).compute_ms.unwrap(),
        1e12 * 10.0 / (736e12 * 0.5) * 1e3,
    );
    close(
        row(2).compute_ms.unwrap(),
        1e12 * 10.0 / (700e12 * 0.5) * 1e3,
    );
    close(
        row(8).compute_ms.unwrap(),
        1e12 * 10.0 / (690e12 * 0.5) * 1e3,
    );
    assert!(
        row(1)
            .basis
            .starts_with("bf16 736 TFLOP/s measured (first GPU alone) × 0.5"),
        "{}",
        row(1).basis
    );
    assert!(
        row(2).basis.starts_with(
            "bf16 700 TFLOP/s measured (GPU 1: slowest of GPUs 0–1 running together) × 0.5"
        ),
        "{}",
        row(2).basis
    );
    assert!(
        row(4)
            .basis
            .contains("(GPU 3: slowest of GPUs 0–3 running together)"),
        "{}",
        row(4).basis
    );
    // Modeled (datasheet) rates read as before.
    let mut modeled = machine();
    modeled.rates.bf16.as_mut().unwrap().source = Source::Modeled;
    let rows = model(&workload(Pattern::DdpRing), &modeled, &[Mode::Weak], 2);
    assert!(
        rows[1].basis.starts_with("bf16 100 TFLOP/s modeled × 0.5;"),
        "{}",
        rows[1].basis
    );
}

#[test]
fn machines_without_concurrent_rates_still_load() {
    // A machine as reports wrote it before concurrent rates existed: no `concurrent` field.
    let m = machine();
    let mut json = serde_json::to_value(&m).unwrap();
    assert!(json.get("concurrent").is_none(), "empty: not written");
    json.as_object_mut().unwrap().remove("concurrent");
    let back: Machine = serde_json::from_value(json).unwrap();
    assert_eq!(back, m);
    // With them: a round trip keeps every GPU's rates.
    let m = measured_together();
    let text = serde_json::to_string(&m).unwrap();
    let back: Machine = serde_json::from_str(&text).unwrap();
    assert_eq!(back, m);
    // The bundled reports load: one measured before concurrent rates existed models every
    // count at its one rate; one measured with them models 2 GPUs at the slower of the first two.
    let mut kinds = (0, 0);
    for (name, r) in scalescope::report::bundled::reports() {
        let r = r.unwrap_or_else(|e| panic!("assets/reports/{name}: {e}"));
        let Some(m) = r.scaling.as_ref().and_then(|s| s.run.machine.as_ref()) else {
            continue;
        };
        let one = m.rate_for(ComputeDtype::Bf16, 1).map(|r| r.rate.tflops);
        let two = m.rate_for(ComputeDtype::Bf16, 2).map(|r| r.rate.tflops);
        assert_eq!(one, m.rates.bf16.as_ref().map(|r| r.tflops), "{name}");
        if m.concurrent.is_empty() {
            kinds.0 += 1;
            assert_eq!(one, two, "{name}");
        } else {
            kinds.1 += 1;
            let slower = m.concurrent[..2]
                .iter()
                .filter_map(|g| g.rates.bf16.as_ref().map(|r| r.tflops))
                .fold(f64::INFINITY, f64::min);
            // Never above the rate alone: together, GPUs do not run faster.
            assert_eq!(two, one.map(|o| o.min(slower)), "{name}");
        }
    }
    assert!(kinds.0 >= 1 && kinds.1 >= 1, "{kinds:?}");
}

#[test]
fn gpu_counts_fill_the_box_then_double() {
    assert_eq!(gpu_counts(2, 16), vec![1, 2, 4, 8, 16]);
    assert_eq!(gpu_counts(8, 64), vec![1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64]);
    assert_eq!(gpu_counts(8, 4), vec![1, 2, 3, 4]);
    // Rack-scale NVLink domains are projected too: 9 × 8-GPU boxes against one NVL72 rack.
    assert_eq!(
        gpu_counts(8, 1024),
        vec![
            1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 72, 128, 144, 256, 512, 576, 1024
        ]
    );
    let rack = gpu_counts(72, 1024);
    assert_eq!(&rack[70..], &[71, 72, 128, 144, 256, 512, 576, 1024]);
}

#[test]
fn interpolation_is_linear_in_log_size() {
    let c = CommCurve {
        points: vec![(1e3, 10.0), (1e6, 40.0)],
        source: Source::Measured,
        basis: String::new(),
    };
    // log10: 3 → 4.5 → 6, halfway: 25 GB/s.
    close(c.busbw_gbps(10f64.powf(4.5)).unwrap(), 25.0);
}

#[test]
fn catalog_has_every_pattern_and_sources() {
    let all = workload::catalog();
    assert!(all.len() >= 10);
    for name in [
        "resnet50",
        "vgg16",
        "alexnet",
        "bert-large",
        "gpt2-xl",
        "llama2-7b",
    ] {
        let w = workload::resolve(name).unwrap();
        assert!(!w.sources.is_empty());
    }
    close(workload::resolve("resnet50").unwrap().params, 25.6e6);
    close(workload::resolve("llama2-7b").unwrap().params, 6.7e9);
    for p in Pattern::ALL {
        assert!(all.iter().any(|w| w.pattern == p), "{p}");
    }
}

fn bad(text: &str) -> (usize, String, String) {
    match workload::parse("my.toml", text) {
        Err(WorkloadError::Bad {
            file,
            line,
            field,
            message,
        }) => {
            assert_eq!(file, "my.toml");
            (line, field, message)
        }
        other => panic!("expected a Bad error, got {other:?}"),
    }
}

const GOOD: &str = include_str!("../assets/workloads/resnet50.toml");

#[test]
fn bad_toml_names_file_line_and_field() {
    // A wrong type on a known line.
    let text = GOOD.replace("per_gpu_batch = 256", "per_gpu_batch = \"lots\"");
    let line = text
        .lines()
        .position(|l| l.starts_with("per_gpu_batch"))
        .unwrap()
        + 1;
    let (l, field, _) = bad(&text);
    assert_eq!((l, field.as_str()), (line, "per_gpu_batch"));
    // An out-of-range value.
    let text = GOOD.replace("utilization = 0.1175", "utilization = 1.5");
    let line = text
        .lines()
        .position(|l| l.starts_with("utilization"))
        .unwrap()
        + 1;
    let (l, field, msg) = bad(&text);
    assert_eq!((l, field.as_str()), (line, "utilization"));
    assert!(msg.contains("1.5"));
    // A missing field.
    let text = GOOD.replace("flops_per_sample = 24.6e9\n", "");
    let (_, field, _) = bad(&text);
    assert_eq!(field, "flops_per_sample");
    // An unknown field.
    let text = format!("{GOOD}\nbogus = 1\n");
    let (l, field, _) = bad(&text);
    assert_eq!(field, "bogus");
    assert_eq!(
        l,
        text.lines().position(|l| l.starts_with("bogus")).unwrap() + 1
    );
    // The error's text carries all three.
    let e =
        workload::parse("my.toml", &GOOD.replace("overlap = 0.64", "overlap = -1")).unwrap_err();
    assert!(e.to_string().starts_with("my.toml:"), "{e}");
    assert!(e.to_string().contains("overlap"), "{e}");
}

#[test]
fn pattern_fields_are_required() {
    let text = include_str!("../assets/workloads/resnet50-trt-fp16.toml")
        .replace("sample_input_bytes = 301056\n", "");
    let (_, field, msg) = bad(&text);
    assert_eq!(field, "sample_input_bytes");
    assert!(msg.contains("inference_replicas"));
}

#[test]
fn csv_schema_leading_columns() {
    let rows = model(&workload(Pattern::DdpRing), &machine(), &Mode::ALL, 8);
    let bytes = scalescope::export::csv::scaling(&rows).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let header = text.lines().next().unwrap();
    assert!(header.starts_with(
        "workload,pattern,mode,source,n_gpus,global_batch,per_gpu_batch,step_time_ms,throughput,speedup,efficiency,bound"
    ));
    assert_eq!(
        scalescope::export::csv::SCALING_COLUMNS.join(","),
        header.split(",compute_ms").next().unwrap()
    );
    let first = text.lines().nth(1).unwrap();
    assert!(
        first.starts_with("t,ddp_ring,weak,modeled,1,10,10,200.0000,50.00,1.0000,1.0000,compute"),
        "{first}"
    );
    // Model rows have no model error: an empty cell, never 0; nor a step statistic.
    assert!(first.contains(",false,,"), "{first}");
    assert!(header.ends_with(",step_statistic,basis"), "{header}");
    assert_eq!(text.lines().count(), rows.len() + 1);
}

#[test]
fn fsdp_by_hand() {
    // 1e9 bf16 parameters in 10 layers: 2e8 bytes of weights and of gradients per layer. On 4
    // GPUs an all-reduce of 2e8 B takes 2·3/4 × 2e8 ÷ 100e9 = 3 ms, so an all-gather or a
    // reduce-scatter 1.5 ms. Per step: 10 × (2 gathers + 1 reduce-scatter) = 45 ms; 0.8 of it
    // hidden under 200 ms of compute → 9 ms exposed (above the 3 ms of the first gather and the
    // last reduce-scatter) → 209 ms.
    let mut w = workload(Pattern::Fsdp);
    w.model = Some(workload::ModelSpec {
        id: "transformers:gpt2".into(),
        layers: Some(10),
        ..Default::default()
    });
    let t = step_terms(&w, &machine(), 4, 10.0, Mode::Weak).unwrap();
    close(t.compute_ms, 200.0);
    close(t.comm_exposed_ms, 9.0);
    close(t.step_ms, 209.0);
    // One GPU: nothing to gather.
    close(
        step_terms(&w, &machine(), 1, 10.0, Mode::Weak)
            .unwrap()
            .step_ms,
        200.0,
    );
    // Calibrated by a 1-GPU step with a 10 ms optimizer step (100 ms in all): on 4 GPUs each
    // rank updates a quarter of the parameters, 90 + 10 ÷ 4 = 92.5 ms of compute.
    let mut m = machine();
    m.framework_steps = vec![MeasuredStep {
        workload: w.name.clone(),
        samples_ms: Vec::new(),
        matrix_share: None,
        ..measured_weak_step()
    }];
    let one = step_terms(&w, &m, 1, 10.0, Mode::Weak).unwrap();
    close(one.compute_ms, 100.0);
    let four = step_terms(&w, &m, 4, 10.0, Mode::Weak).unwrap();
    close(four.compute_ms, 90.0 + 2.5);
}

/// A measured weak 1-GPU step of workload "t": 100 ms (10 of them the optimizer) at 10 samples,
/// five samples 99 … 103 (median 101), half of its kernel time matrix kernels.
fn measured_weak_step() -> MeasuredStep {
    MeasuredStep {
        workload: "t".into(),
        mode: Mode::Weak,
        per_gpu_batch: 10.0,
        step_ms: 100.0,
        optimizer_ms: 10.0,
        samples_ms: vec![103.0, 99.0, 101.0, 100.0, 102.0],
        matrix_share: Some(0.5),
        matrix_ms: None,
        other_ms: None,
        host_ms: None,
        host_probe_us: None,
        accumulate: None,
        wrapper_ms: None,
        under_ddp: None,
        basis: "test".into(),
    }
}

#[test]
fn framework_step_calibrates_and_stragglers_slow_n_gpus() {
    // A measured 1-GPU step of 100 ms (10 of them the optimizer) at 10 samples: the model's
    // 1-GPU step is exactly that, calibrated by the framework.
    let mut m = machine();
    m.framework_steps = vec![measured_weak_step()];
    let rows = model(
        &workload(Pattern::DdpRing),
        &m,
        &[Mode::Weak, Mode::Strong],
        4,
    );
    let one = rows
        .iter()
        .find(|r| r.n_gpus == 1 && r.mode == Mode::Weak)
        .unwrap();
    close(one.step_time_ms.unwrap(), 100.0);
    assert_eq!(one.calibration, Some(CalibrationKind::Framework));
    // Strong, 1 GPU: 40 samples at 9 ms each + the 10 ms optimizer step = 370 ms.
    let strong = rows
        .iter()
        .find(|r| r.n_gpus == 1 && r.mode == Mode::Strong)
        .unwrap();
    close(strong.step_time_ms.unwrap(), 370.0);
    // 4 GPUs: the 0.5^(1/4) = 0.8409 quantile of 99…103 is 99 + 0.8409 × 4 = 102.36, over the
    // median 101: × 1.01349; compute 100 × 1.01349 = 101.35 ms, plus the exposed last bucket
    // (15 ms) → 116.35 ms.
    let four = rows
        .iter()
        .find(|r| r.n_gpus == 4 && r.mode == Mode::Weak)
        .unwrap();
    let q = 99.0 + 0.5f64.powf(0.25) * 4.0;
    close(four.compute_ms.unwrap(), 100.0 * q / 101.0);
    close(four.step_time_ms.unwrap(), 100.0 * q / 101.0 + 15.0);
}

#[test]
fn a_host_bound_step_exposes_communication_as_a_gpu_bound_one_and_pays_its_host_per_bucket() {
    // The same 1-GPU step, host-bound: at a sixteenth of the batch it still takes 95 of its
    // 100 ms, while the GPU's kernels are busy 60 ms of it.
    let mut m = machine();
    m.framework_steps = vec![MeasuredStep {
        matrix_ms: Some(30.0),
        other_ms: Some(30.0),
        host_ms: Some(95.0),
        host_probe_us: Some(4000.0),
        ..measured_weak_step()
    }];
    m.probe = Some(scalescope::scaling::calibrate::ProbeRates {
        gemm_tflops: 700.0,
        copy_gbps: 4000.0,
        host_probe_us: Some(4000.0),
        allreduce_host_us: Some(50.0),
        basis: "test".into(),
    });
    let w = workload(Pattern::DdpRing);
    let t = step_terms(&w, &m, 4, 10.0, Mode::Weak).unwrap();
    assert_eq!(t.bound, Bound::Host);
    // No straggler (hosts run ahead of their GPUs, jitter evens out), no GEMM slowdown: the
    // compute term is the 1-GPU step.
    close(t.compute_ms, 100.0);
    // The GPU's 40 idle ms are gaps between short kernels: the all-reduces are exposed as they
    // are for the same step when the GPU sets it (host floor 20 ms), at least the last bucket.
    let mut gpu_bound = m.clone();
    gpu_bound.framework_steps[0].host_ms = Some(20.0);
    let g = step_terms(&w, &gpu_bound, 4, 10.0, Mode::Weak).unwrap();
    assert_ne!(g.bound, Bound::Host);
    close(t.comm_exposed_ms, g.comm_exposed_ms);
    assert!(t.comm_exposed_ms >= 15.0, "{}", t.comm_exposed_ms);
    // The host issues one all-reduce per 25 MiB bucket, 50 µs each.
    let buckets = (w.params * 2.0 / w.bucket_bytes).ceil(); // bf16 gradients
    close(t.other_ms, buckets * 0.05);
    close(t.step_ms, 100.0 + t.comm_exposed_ms + buckets * 0.05);
    // A GPU-bound step pays no host issue time (its host runs ahead).
    close(g.other_ms, 0.0);
    // One GPU: no all-reduces to issue.
    close(
        step_terms(&w, &m, 1, 10.0, Mode::Weak).unwrap().step_ms,
        100.0,
    );
}

#[test]
fn users_one_gpu_step_sets_the_modeled_one_gpu_step() {
    let mut w = workload(Pattern::DdpRing);
    w.step_ms_1gpu = Some(50.0);
    let rows = model(&w, &machine(), &[Mode::Weak], 4);
    let one = rows.iter().find(|r| r.n_gpus == 1).unwrap();
    close(one.step_time_ms.unwrap(), 50.0);
    assert_eq!(one.calibration, Some(CalibrationKind::User));
}

#[test]
fn llama_ddp_on_80_gb_gpus_does_not_fit_and_shows_no_throughput() {
    let topo = scalescope::topology::catalog::load("dgx-h100").unwrap();
    let m = Machine::modeled(&topo);
    let w = workload::resolve("llama2-7b-ddp").unwrap();
    let rows = model(&w, &m, &Mode::ALL, 16);
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r.fits, Some(false), "{r:?}");
        assert!(r.step_time_ms.is_none() && r.throughput.is_none() && r.speedup.is_none());
        assert!(r.memory_gib_per_gpu.unwrap() > 80.0);
        assert!(
            r.basis.contains("does not fit") && r.basis.contains("fsdp"),
            "{}",
            r.basis
        );
    }
    // Sharded, it fits from 2 GPUs on and has a curve.
    let f = model(
        &workload::resolve("llama2-7b").unwrap(),
        &m,
        &[Mode::Weak],
        16,
    );
    let two = f.iter().find(|r| r.n_gpus == 2).unwrap();
    assert_eq!(two.fits, Some(true));
    assert!(two.step_time_ms.is_some() && two.efficiency.is_some());
}

#[test]
fn a_micro_batch_that_does_not_fit_is_halved_as_the_framework_runs_do() {
    // GPT-2 XL's micro-batch of 8 does not fit an 80 GB H100 under DDP (measured 2026-11-26:
    // out of memory; 4 ran); the model's rows run at 4, accumulating, and say so.
    let topo = scalescope::topology::catalog::load("dgx-h100").unwrap();
    let m = Machine::modeled(&topo);
    let w = workload::resolve("gpt2-xl").unwrap();
    let rows = model(&w, &m, &[Mode::Weak], 64);
    for r in &rows {
        assert_eq!(r.fits, Some(true), "{r:?}");
        assert!(r.throughput.is_some(), "{r:?}");
        assert!(
            r.basis
                .contains("in micro-batches of 4 (the workload's 8 does not fit"),
            "{}",
            r.basis
        );
    }
    // On an H200 (141 GB) the workload's own micro-batch fits: nothing said.
    let topo = scalescope::topology::catalog::load("hgx-h200").unwrap();
    let rows = model(&w, &Machine::modeled(&topo), &[Mode::Weak], 8);
    assert!(rows.iter().all(|r| !r.basis.contains("micro-batches of")));
}

#[test]
fn a_memory_estimate_without_activations_is_no_figure() {
    // VGG16 has no activation figure: weights, gradients and Adam states alone are a lower bound,
    // never shown as the step's memory (it was printed as 1.5 GiB, and 0.0 for small models).
    let topo = scalescope::topology::catalog::load("hgx-h200").unwrap();
    let m = Machine::modeled(&topo);
    for name in ["vgg16", "genesis-go2"] {
        let w = workload::resolve(name).unwrap();
        let rows = model(&w, &m, &[Mode::Weak], 8);
        assert!(!rows.is_empty(), "{name}");
        for r in &rows {
            assert_eq!(
                (r.memory_gib_per_gpu, r.fits),
                (None, None),
                "{name}: {r:?}"
            );
        }
        if w.pattern == Pattern::DdpRing {
            let one = &rows[0];
            assert!(
                one.basis
                    .contains("; memory per GPU at least 1.5 GiB (weights, gradients, optimizer states; activations unknown)"),
                "{}",
                one.basis
            );
        }
    }
    // Where the activations are known the figure is the whole estimate (ResNet-50: measured).
    let r = model(
        &workload::resolve("resnet50").unwrap(),
        &m,
        &[Mode::Weak],
        8,
    );
    assert!(r[0].memory_gib_per_gpu.is_some_and(|g| g > 5.0) && r[0].fits == Some(true));
}

/// Where one GPU cannot run the step, the speedup is taken against the smallest count that
/// can, and every table says against what (`2.00 vs 2`), not a bare 2.00 read as against one.
#[test]
fn a_speedup_not_against_one_gpu_says_against_what() {
    let w = workload::catalog()
        .into_iter()
        .find(|w| w.name == "llama2-7b")
        .expect("llama2-7b in the catalog");
    let mut rows: Vec<scalescope::scaling::ScalingPoint> = [1, 2, 4]
        .into_iter()
        .map(|n| {
            let mut r =
                scalescope::scaling::ScalingPoint::empty(&w, Mode::Weak, RowSource::Modeled, n);
            // One GPU does not fit: no throughput; then 100 samples/s per GPU.
            r.throughput = (n > 1).then_some(100.0 * n as f64);
            r
        })
        .collect();
    scalescope::scaling::table::fill_speedup(&mut rows);
    assert_eq!(rows[0].speedup_cell(), "—");
    assert_eq!(rows[1].speedup_base, Some(2));
    assert_eq!(rows[1].speedup_cell(), "2.00 vs 2");
    assert_eq!(rows[2].speedup_cell(), "4.00 vs 2");
    assert!(
        rows[2].basis.contains("speedup against 2 GPUs"),
        "{}",
        rows[2].basis
    );
}

/// Memory fit on Blackwell (issue Q), hand-checked. Llama-2-7B under FSDP on one GPU needs
/// ~122 GiB (measured on an H200: 121.9 GiB): it fits a B200 (180 GB), a GB200 (186 GB) and a
/// B300 (270 GB). Llama-2-70B (69 B parameters, Touvron et al. 2023, Table 1) with the same bytes
/// per parameter needs ≥ 69e9 × 16 B ≈ 1,028 GiB of weights, gradients and Adam states on one GPU
/// — no single GPU of 180–288 GB holds it — and that divided by 72 when FSDP shards it over a
/// GB200 NVL72's 72 GPUs, where it fits.
#[test]
fn llama_7b_and_70b_memory_fit_on_blackwell() {
    use scalescope::scaling::memory::estimate;
    let gib = |gb: f64| gb * 1e9 / (1u64 << 30) as f64;
    let w7 = workload::resolve("llama2-7b").unwrap();
    for gb in [180.0, 186.0, 270.0] {
        let e = estimate(&w7, Pattern::Fsdp, 1, 1.0, Some(gib(gb))).unwrap();
        let total = e.known_total_gib().unwrap();
        assert!((100.0..140.0).contains(&total), "{total} GiB");
        assert_eq!(e.fits(), Some(true), "7B on {gb} GB: {total} GiB");
    }
    let mut w70 = w7.clone();
    w70.params = 69e9;
    let one = estimate(&w70, Pattern::Fsdp, 1, 1.0, Some(gib(288.0))).unwrap();
    let states = one.weights_gib + one.grads_gib + one.optimizer_gib;
    assert!(
        states >= 69e9 * 16.0 / (1u64 << 30) as f64 - 1e-6,
        "{states} GiB"
    );
    assert_eq!(one.fits(), Some(false), "70B on one 288 GB GPU");
    let rack = estimate(&w70, Pattern::Fsdp, 72, 1.0, Some(gib(186.0))).unwrap();
    let sharded = rack.weights_gib + rack.grads_gib + rack.optimizer_gib;
    assert!(
        (sharded - states / 72.0).abs() < 1e-9,
        "{sharded} vs {states} / 72"
    );
    assert_eq!(rack.fits(), Some(true), "70B sharded over 72 × 186 GB");
}

#[test]
fn a_step_is_never_shorter_than_its_host_floor_and_says_host_where_the_floor_sets_it() {
    // A GPU-bound 1-GPU step of 100 ms at 10 samples whose host needs 30 ms to issue it. Strong
    // scaling spreads 40 samples: at 4 GPUs 10 per GPU (GPU work 100 ms, the GPU sets it); a
    // per-GPU batch of 1 would take 19 ms of GPU work but the host still needs 30 ms.
    let mut m = machine();
    m.framework_steps = vec![MeasuredStep {
        host_ms: Some(30.0),
        ..measured_weak_step()
    }];
    let mut w = workload(Pattern::DdpRing);
    w.strong_global_batch = 4.0;
    let rows = model(&w, &m, &[Mode::Strong], 4);
    for r in &rows {
        let (step, floor) = (r.step_time_ms.unwrap(), r.host_floor_ms.unwrap());
        assert!(step >= floor, "{r:?}");
    }
    let four = rows.iter().find(|r| r.n_gpus == 4).unwrap();
    // 1 sample: 9 ms + 10 ms optimizer = 19 ms of GPU work under a 30 ms floor.
    close(four.compute_ms.unwrap(), 30.0);
    assert_eq!(four.bound, Some(Bound::Host), "{}", four.basis);
    assert!(
        four.basis.contains("the host sets the step"),
        "{}",
        four.basis
    );
    // Under CUDA graphs the host does not issue the kernels one by one: no floor.
    w.cuda_graphs = true;
    let graphs = model(&w, &m, &[Mode::Strong], 4);
    let four = graphs.iter().find(|r| r.n_gpus == 4).unwrap();
    assert!(four.compute_ms.unwrap() < 30.0 && four.host_floor_ms.is_none());
    assert!(four.basis.contains("CUDA graphs"), "{}", four.basis);
}

#[test]
fn ddp_own_cost_measured_at_one_rank_is_added_from_two_gpus_on() {
    let mut m = machine();
    m.framework_steps = vec![measured_weak_step()];
    let w = workload(Pattern::DdpRing);
    let without = model(&w, &m, &[Mode::Weak], 4);
    m.framework_steps[0].wrapper_ms = Some(7.0);
    let with = model(&w, &m, &[Mode::Weak], 4);
    for (a, b) in without.iter().zip(&with).filter(|(a, _)| a.n_gpus >= 2) {
        assert!(b.step_time_ms.unwrap() > a.step_time_ms.unwrap(), "{b:?}");
    }
    let one = |rows: &[scalescope::scaling::ScalingPoint], n| {
        rows.iter()
            .find(|r| r.n_gpus == n)
            .unwrap()
            .step_time_ms
            .unwrap()
    };
    // One GPU runs the plain step: DDP's cost is not in it.
    close(one(&with, 1), one(&without, 1));
    close(one(&with, 2) - one(&without, 2), 7.0);
    let two = with.iter().find(|r| r.n_gpus == 2).unwrap();
    assert!(two.basis.contains("DDP's own cost"), "{}", two.basis);
}

#[test]
fn no_modeled_step_beats_its_host_floor_on_any_catalog_machine() {
    // Every catalog machine × every catalog workload × weak and strong, projected to 1,024 GPUs.
    let mut checked = 0;
    let mut floored = 0;
    for entry in scalescope::topology::catalog::entries() {
        let topo = scalescope::topology::catalog::load(&entry.id).unwrap();
        let m = Machine::modeled(&topo);
        for w in workload::catalog() {
            for r in model(&w, &m, &Mode::ALL, 1024) {
                let (Some(step), Some(floor)) = (r.step_time_ms, r.host_floor_ms) else {
                    continue;
                };
                checked += 1;
                assert!(
                    step >= floor * (1.0 - 1e-12),
                    "{} {} {:?} on {} GPUs: step {step} < floor {floor}",
                    entry.id,
                    w.name,
                    r.mode,
                    r.n_gpus
                );
                if r.bound == Some(Bound::Host) {
                    floored += 1;
                    assert!(r.basis.contains("host floor"), "{}", r.basis);
                }
            }
        }
    }
    assert!(
        checked > 0 && floored > 0,
        "{checked} rows with a floor, {floored} host-bound"
    );
    // The case: ResNet-50 strong on DGX H100 at 64 GPUs (16 images per GPU) is set by
    // the host, not by a 5.6 ms compute step.
    let topo = scalescope::topology::catalog::load("dgx-h100").unwrap();
    let w = workload::resolve("resnet50").unwrap();
    let rows = model(&w, &Machine::modeled(&topo), &[Mode::Strong], 64);
    let r = rows.iter().find(|r| r.n_gpus == 64).unwrap();
    assert_eq!(r.bound, Some(Bound::Host), "{}", r.basis);
    assert!(r.step_time_ms.unwrap() >= r.host_floor_ms.unwrap());
}

#[test]
fn a_strong_rows_power_does_not_depend_on_the_weak_rows_being_asked_for() {
    // The power record is scaled from the model's weak 1-GPU row: a strong-only table (which
    // lacks it) fell back to the 700 W board limit, where `--mode both` gave 581 W.
    let topo = scalescope::topology::catalog::load("hgx-h200").unwrap();
    let m = Machine::modeled(&topo);
    let w = workload::resolve("resnet50").unwrap();
    let name = topo.gpus[0].name.clone();
    let powered = |modes: &[Mode]| {
        let mut rows = model(&w, &m, modes, 64);
        scalescope::scaling::power::apply(
            &mut rows,
            name.as_deref(),
            std::slice::from_ref(&w),
            Some(&m),
        );
        rows.into_iter()
            .filter(|r| r.mode == Mode::Strong)
            .map(|r| (r.n_gpus, r.watts_per_gpu, r.samples_per_joule))
            .collect::<Vec<_>>()
    };
    let alone = powered(&[Mode::Strong]);
    assert!(alone.iter().all(|(_, w, _)| w.is_some()), "{alone:?}");
    assert_eq!(alone, powered(&Mode::ALL));
    let limit = alone[0].1.unwrap();
    assert!(
        limit < 700.0,
        "the record's power, not the board limit: {limit}"
    );
}

#[test]
fn a_stated_one_gpu_step_keeps_the_host_floor() {
    // `--step-ms-1gpu 54.7` on DGX H100: the stated step sets the GPU's work; at 64 GPUs × 16
    // images the host still sets the step (it read 4.07 ms, bound compute, without the floor).
    let topo = scalescope::topology::catalog::load("dgx-h100").unwrap();
    let m = Machine::modeled(&topo);
    let mut w = workload::resolve("resnet50").unwrap();
    let catalog = model(&w, &m, &[Mode::Strong], 64);
    w.step_ms_1gpu = Some(54.7);
    let stated = model(&w, &m, &[Mode::Strong], 64);
    let at = |rows: &[scalescope::scaling::ScalingPoint]| {
        rows.iter().find(|r| r.n_gpus == 64).unwrap().clone()
    };
    let r = at(&stated);
    assert_eq!(r.bound, Some(Bound::Host), "{}", r.basis);
    let floor = r
        .host_floor_ms
        .expect("the stated step's rows state a floor");
    assert_eq!(Some(floor), at(&catalog).host_floor_ms);
    assert!(r.step_time_ms.unwrap() >= floor);
    assert!(r.basis.contains("host floor"), "{}", r.basis);
    // At its own batch the stated step stands, even below the catalog's floor (it was timed).
    let mut fast = workload::resolve("resnet50").unwrap();
    let floor_256 = model(&fast, &m, &[Mode::Weak], 1)[0].host_floor_ms.unwrap();
    fast.step_ms_1gpu = Some(floor_256 / 2.0);
    let one = model(&fast, &m, &[Mode::Weak], 1);
    assert!(
        (one[0].step_time_ms.unwrap() - floor_256 / 2.0).abs() < 1e-6,
        "{:?} vs stated {}",
        one[0].step_time_ms,
        floor_256 / 2.0
    );
    // Every stated row, weak and strong, keeps to it.
    for r in model(&w, &m, &Mode::ALL, 1024) {
        let (Some(step), Some(floor)) = (r.step_time_ms, r.host_floor_ms) else {
            panic!("a row without its floor: {r:?}");
        };
        assert!(step >= floor * (1.0 - 1e-12), "{r:?}");
    }
}

#[test]
fn a_halved_micro_batch_pays_the_host_floor_of_each_micro_batch() {
    // GPT-2 XL's micro-batch of 8 does not fit an 80 GB H100: its rows run 2 micro-batches of 4,
    // and the host issues the kernels of each, so the floor is twice the one-micro-batch floor an
    // H200 (where 8 fits) states from the same record.
    let w = workload::resolve("gpt2-xl").unwrap();
    let floor = |machine: &str| {
        let topo = scalescope::topology::catalog::load(machine).unwrap();
        let rows = model(&w, &Machine::modeled(&topo), &[Mode::Weak], 1);
        rows[0]
            .host_floor_ms
            .expect("the H200 record has a host floor")
    };
    let (h200, h100) = (floor("hgx-h200"), floor("dgx-h100"));
    assert!((h100 / h200 - 2.0).abs() < 1e-9, "{h100} vs {h200}");
}

#[test]
fn a_baseline_that_moved_between_its_windows_says_so() {
    // The bundled 2x H200 report: BERT-large's plain step read 66.8 ms in its timed window and
    // 88.5 ms in the blocks beside DDP (+32 %, a host whose speed wandered); the row of DDP's
    // cost says the efficiencies rest on the window's step. ResNet-50's agree within 0.2 %.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/reports/h200-2x-sxm-2026-11-28.json");
    let r = scalescope::report::load(&path).unwrap();
    let steps = &r.scaling.unwrap().run.machine.unwrap().framework_steps;
    let words = |w: &str| {
        let s = steps
            .iter()
            .find(|s| s.workload == w && s.mode == Mode::Weak)
            .unwrap();
        s.under_ddp.as_ref().unwrap().describe(s)
    };
    let bert = words("bert-large");
    assert!(
        bert.contains("(+32 %): the host's speed moved between them"),
        "{bert}"
    );
    assert!(!words("resnet50").contains("moved between them"));
}

#[test]
fn every_efficiency_above_one_in_scaling_csv_carries_its_cause() {
    // Every catalog machine × every workload × weak and strong: wherever scaling.csv writes an
    // efficiency above 1 (at its four decimals, e.g. an FSDP row's 1.0013), the row's basis
    // says why. GPUs do not speed each other up; a sharded optimizer or a split does.
    let mut above = 0;
    for entry in scalescope::topology::catalog::entries() {
        let topo = scalescope::topology::catalog::load(&entry.id).unwrap();
        let m = Machine::modeled(&topo);
        for w in workload::catalog() {
            let rows = model(&w, &m, &Mode::ALL, 1024);
            let csv = scalescope::export::csv::scaling(&rows).unwrap();
            let mut r = csv::Reader::from_reader(csv.as_slice());
            let head = r.headers().unwrap().clone();
            let col = |name: &str| head.iter().position(|h| h == name).unwrap();
            let (eff, basis) = (col("efficiency"), col("basis"));
            for rec in r.records() {
                let rec = rec.unwrap();
                let Ok(e) = rec[eff].parse::<f64>() else {
                    continue;
                };
                if e > 1.0 {
                    above += 1;
                    assert!(
                        rec[basis].contains("; above 1.00: "),
                        "{} {}: efficiency {e} without its cause: {}",
                        entry.id,
                        w.name,
                        &rec[basis]
                    );
                }
            }
        }
    }
    // The catalog holds such rows today (FSDP on HGX A100, a split on the RTX PRO server).
    assert!(above > 0, "no efficiency above 1 in any catalog CSV");
}
