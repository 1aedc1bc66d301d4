//! Property-based tests (proptest) of every parser and model function: parsers never panic on
//! any input (random text, and mutations of real captures and reports); the models return
//! finite, non-negative figures or say why not, for every input the validation accepts.
//!
//! Case counts are moderate so that CI stays fast; `PROPTEST_CASES=5000 cargo test --test
//! properties` runs longer campaigns.

use proptest::prelude::*;
use scalescope::bench::collectives::{parse_algos, parse_ops};
use scalescope::bench::modeled::parse_pcie;
use scalescope::bench::plan::parse_test_list;
use scalescope::model::quantities::{parse_size, parse_sizes};
use scalescope::model::{Dtype, Source};
use scalescope::report::compare;
use scalescope::scaling::step::{bucketed_exposed_ms, step_terms};
use scalescope::scaling::workload::{self, ComputeDtype, Pattern, Workload};
use scalescope::scaling::{CommCurve, Machine, Mode, gpu_counts, model};
use scalescope::topology::{catalog, import};

const CAPTURES: [&str; 6] = [
    include_str!("data/dgx-h100-topo-m.txt"),
    include_str!("data/dgx-a100-topo-m.txt"),
    include_str!("data/h200-8x-device-topo-p2p.txt"),
    include_str!("data/l40s-8x-pcie-topo-m.txt"),
    include_str!("data/workstation-ansi-crlf-topo-m.txt"),
    include_str!("data/h200-2x-query-gpu.csv"),
];
const REPORT: &str = include_str!("../assets/reports/h200-2x-sxm-2026-11-22.json");

/// `cases` per property, or `PROPTEST_CASES` when set.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A mutation of `text`: pieces replaced, removed, repeated or inserted at random places.
fn mutated(text: &'static str) -> impl Strategy<Value = String> {
    let tokens = prop::sample::select(vec![
        "X",
        "NV18",
        "NV0",
        "PIX",
        "SYS",
        "OK",
        "CNS",
        "GPU0",
        "GPU9",
        "NIC0",
        "\t",
        "\n",
        "\r\n",
        "\u{1b}[4m",
        "-1",
        "1e308",
        "null",
        "\"",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "N/A",
        "\0",
        "CPU Affinity",
        "nvidia-smi topo -p2p r",
    ]);
    let edit = (any::<prop::sample::Index>(), 0usize..40, tokens, 0usize..4);
    prop::collection::vec(edit, 1..6).prop_map(move |edits| {
        let mut s = text.to_string();
        for (at, len, token, kind) in edits {
            let mut i = at.index(s.len() + 1);
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            let mut j = (i + len).min(s.len());
            while !s.is_char_boundary(j) {
                j -= 1;
            }
            match kind {
                0 => s.replace_range(i..j, token),
                1 => s.replace_range(i..j, ""),
                2 => {
                    let piece = s[i..j].to_string();
                    s.insert_str(i, &piece.repeat(3));
                }
                _ => s.insert_str(i, token),
            }
        }
        s
    })
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn import_never_panics_on_text(text in "\\PC{0,400}") {
        let _ = import::parse(&text, "fuzz.txt");
        let _ = import::parse(&text, "topo-p2p-r.txt");
    }

    #[test]
    fn import_never_panics_on_mutated_captures(
        text in (0..CAPTURES.len()).prop_flat_map(|i| mutated(CAPTURES[i])),
    ) {
        if let Ok(t) = import::parse(&text, "capture.txt") {
            // What imports is a consistent topology: one link per pair, one P2P entry per
            // ordered pair, and it exports.
            let n = t.gpus.len();
            prop_assert_eq!(t.links.len(), n * n.saturating_sub(1) / 2);
            prop_assert_eq!(t.p2p.len(), n * n.saturating_sub(1));
            prop_assert!(scalescope::export::csv::links(&t).is_ok());
        }
    }

    #[test]
    fn report_parse_never_panics_and_names_bad_fields(text in mutated(REPORT)) {
        match scalescope::report::parse(&text) {
            Ok(r) => {
                // A report that parses has only finite figures: the comparison shows no NaN/inf.
                let c = compare::compare(&[&r, &r], None);
                let table = compare::to_table(&c);
                prop_assert!(!table.contains("NaN") && !table.contains("inf"), "{}", table);
            }
            Err(e) => {
                let m = e.to_string();
                prop_assert!(!m.contains('\n') && m.chars().count() < 1000, "{}", m);
            }
        }
    }

    #[test]
    fn flag_parsers_never_panic(s in "\\PC{0,80}") {
        let _ = parse_size(&s);
        let _ = parse_sizes(&s);
        let _ = scalescope::model::GpuSelection::parse(&s);
        let _ = parse_test_list(&s);
        let _ = parse_ops(&s);
        let _ = parse_algos(&s);
        let _ = parse_pcie(&s);
        let _ = workload::resolve(&format!("{s}-no-such-workload"));
    }

    #[test]
    fn size_sweeps_are_sorted_unique_and_positive(
        a in 1u64..=scalescope::model::quantities::MAX_SIZE,
        b in 1u64..=scalescope::model::quantities::MAX_SIZE,
    ) {
        let (lo, hi) = (a.min(b), a.max(b));
        let v = parse_sizes(&format!("{lo}..{hi}")).unwrap();
        prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(v.iter().all(|&x| x >= lo && x <= hi));
        prop_assert!(v.len() <= 64);
    }

    #[test]
    fn workload_toml_never_panics(text in mutated(include_str!("../assets/workloads/carla-multisensor.toml"))) {
        match workload::parse("w.toml", &text) {
            Ok(w) => prop_assert!(workload::validate(&w).is_ok()),
            Err(e) => {
                let m = e.to_string();
                prop_assert!(m.starts_with("w.toml:"), "{}", m);
            }
        }
    }

    #[test]
    fn gpu_counts_end_and_stay_in_range(in_box in 0usize..100_000, max in any::<usize>()) {
        let v = gpu_counts(in_box, max);
        prop_assert!(!v.is_empty());
        prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(v.len() <= in_box.max(1) + 64);
        prop_assert!(v.iter().skip(in_box.max(1)).all(|&n| n <= max));
    }
}

/// Workloads anywhere inside the ranges validation accepts.
fn workloads() -> impl Strategy<Value = Workload> {
    let log = |lo: f64, hi: f64| (lo.log10()..=hi.log10()).prop_map(|e| 10f64.powf(e));
    (
        (
            prop::sample::select(Pattern::ALL.to_vec()),
            log(1.0, 1e14),
            log(1.0, 1e20),
            log(1.0, 1e9),
            log(1.0, 1e12),
            log(1.0, 1e13),
            0.001f64..=1.0,
            0.0f64..=1.0,
        ),
        (
            log(1.0, 1e12),
            log(1.0, 1e12),
            log(1.0, 1e12),
            0.0f64..=3.6e6,
            log(0.001, 1e5),
            0.0f64..=0.99,
            0.0f64..=1e5,
            log(1.0, 1e9),
            prop::sample::select(vec![ComputeDtype::Bf16, ComputeDtype::Fp32]),
        ),
    )
        .prop_map(
            |(
                (pattern, params, flops, per_gpu, global, bucket, utilization, overlap),
                (input, output, sync, primary, link, load, rtt, steps, compute_dtype),
            )| Workload {
                name: "prop".into(),
                title: "prop".into(),
                pattern,
                params,
                grad_dtype: Dtype::Bf16,
                compute_dtype,
                flops_per_sample: flops,
                per_gpu_batch: per_gpu.floor(),
                strong_global_batch: global.floor(),
                bucket_bytes: bucket,
                utilization,
                overlap,
                sample_input_bytes: Some(input),
                sample_output_bytes: Some(output),
                sync_bytes: Some(sync),
                primary_ms: Some(primary),
                frame_hz: Some(20.0),
                link_gbps: Some(link),
                offered_load: Some(load),
                rtt_ms: Some(rtt),
                steps_per_sync: Some(steps),
                optimizer: None,
                weight_bytes: None,
                micro_batch: None,
                activation_bytes_per_sample: None,
                // Half the workloads calibrated by a user's 1-GPU step, the rest by utilization.
                step_ms_1gpu: (load > 0.5).then_some(rtt.max(0.001)),
                cuda_graphs: false,
                model: None,
                sources: vec!["property test".into()],
                calibration: Vec::new(),
                power: Vec::new(),
            },
        )
}

/// Every catalog machine, modeled (computed once).
fn catalog_machines() -> &'static [Machine] {
    static MACHINES: std::sync::OnceLock<Vec<Machine>> = std::sync::OnceLock::new();
    MACHINES.get_or_init(|| {
        catalog::entries()
            .iter()
            .filter_map(|e| catalog::load(&e.id).ok())
            .map(|t| Machine::modeled(&t))
            .collect()
    })
}

fn finite_non_negative(v: Option<f64>) -> bool {
    v.is_none_or(|x| x.is_finite() && x >= 0.0)
}

proptest! {
    #![proptest_config(config(96))]

    #[test]
    fn the_model_gives_finite_non_negative_figures(w in workloads(), m in 0usize..64, max in 1usize..=1024) {
        prop_assert!(workload::validate(&w).is_ok(), "{:?}", workload::validate(&w));
        let machines = catalog_machines();
        let machine = &machines[m % machines.len()];
        for row in model(&w, machine, &Mode::ALL, max) {
            for (name, v) in [
                ("step_time_ms", row.step_time_ms),
                ("throughput", row.throughput),
                ("speedup", row.speedup),
                ("efficiency", row.efficiency),
                ("compute_ms", row.compute_ms),
                ("comm_exposed_ms", row.comm_exposed_ms),
                ("other_ms", row.other_ms),
            ] {
                prop_assert!(finite_non_negative(v), "{} = {:?} in {:?}", name, v, row);
            }
            prop_assert!(row.global_batch.is_finite() && row.per_gpu_batch >= 1.0);
            // A row without a step time says why.
            prop_assert!(row.step_time_ms.is_some() || !row.basis.is_empty());
        }
        for n in [1usize, 2, 8, 1024] {
            if let Ok(t) = step_terms(&w, machine, n, w.per_gpu_batch, Mode::Weak) {
                prop_assert!(t.step_ms.is_finite() && t.step_ms > 0.0, "{:?}", t);
                prop_assert!(t.compute_ms >= 0.0 && t.comm_exposed_ms >= 0.0 && t.other_ms >= 0.0);
            }
        }
    }

    #[test]
    fn bucketed_all_reduce_is_finite_and_bounded(
        grad in 0.0f64..1e14,
        bucket in 1.0f64..1e13,
        backward in 0.0f64..1e9,
        overlap in 0.0f64..=1.0,
        gbps in 0.001f64..1e5,
    ) {
        let r = bucketed_exposed_ms(grad, bucket, backward, overlap, |s| Some(s / (gbps * 1e9) * 1e3));
        let (total, exposed) = r.unwrap();
        prop_assert!(total.is_finite() && total >= 0.0);
        prop_assert!(exposed.is_finite() && exposed >= 0.0 && exposed <= total + 1e-9 * total.max(1.0));
    }

    #[test]
    fn curves_interpolate_to_finite_non_negative_figures(
        mut points in prop::collection::vec((1.0f64..1e12, 0.001f64..1e4), 1..12),
        bytes in 0.0f64..1e13,
        n in 1usize..4096,
    ) {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        points.dedup_by(|a, b| a.0 == b.0);
        let c = CommCurve { points, source: Source::Modeled, basis: String::new() };
        prop_assert!(finite_non_negative(c.busbw_gbps(bytes)));
        prop_assert!(finite_non_negative(c.all_reduce_ms(bytes, n)));
        prop_assert!(finite_non_negative(c.exchange_ms(bytes)));
    }
}

fn catalog_topologies() -> &'static [scalescope::model::Topology] {
    static TOPOS: std::sync::OnceLock<Vec<scalescope::model::Topology>> =
        std::sync::OnceLock::new();
    TOPOS.get_or_init(|| {
        catalog::entries()
            .iter()
            .filter_map(|e| catalog::load(&e.id).ok())
            .collect()
    })
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn modeled_bandwidth_is_finite_and_non_negative(
        t in any::<prop::sample::Index>(),
        n_gpus in 1usize..=8,
        test in prop::sample::select(scalescope::model::TestId::ALL.to_vec()),
        bytes in 1u64..(1u64 << 40),
    ) {
        use scalescope::bench::modeled::{Assumptions, ModeledBackend};
        use scalescope::bench::{BandwidthOptions, Plan, run_bandwidth};
        let topo = t.get(catalog_topologies());
        let gpus: Vec<usize> = topo.gpu_indices().into_iter().take(n_gpus).collect();
        let opts = BandwidthOptions {
            gpus: scalescope::model::GpuSelection::new(gpus).unwrap(),
            tests: vec![test],
            sizes: vec![bytes],
            ..Default::default()
        };
        let plan = Plan::new(topo, &opts).unwrap();
        let (mut backend, _) = ModeledBackend::new(topo, Assumptions::default());
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let out = run_bandwidth(topo, &plan, &mut backend, &cancel, &mut |_, _| {});
        for r in &out.results {
            for v in [r.median_gbps, r.min_gbps, r.max_gbps, r.cv, r.fwd_gbps, r.rev_gbps,
                      r.latency_ns, r.line_rate_gbps, r.efficiency] {
                prop_assert!(finite_non_negative(v), "{:?}", r);
            }
            prop_assert_eq!(r.source, Source::Modeled);
            prop_assert_eq!(r.wrong, None, "a modeled row was never checked");
        }
    }

    #[test]
    fn modeled_collectives_are_finite_and_non_negative(
        t in any::<prop::sample::Index>(),
        n_gpus in 2usize..=8,
        op in prop::sample::select(scalescope::model::CollectiveOp::ALL.to_vec()),
        bytes in 1u64..(1u64 << 40),
    ) {
        use scalescope::bench::collectives::{CollectiveBackend, CollectiveOptions, ModeledCollectives, plan};
        let topo = t.get(catalog_topologies());
        let gpus: Vec<usize> = topo.gpu_indices().into_iter().take(n_gpus).collect();
        prop_assume!(gpus.len() >= 2);
        let opts = CollectiveOptions {
            gpus: scalescope::model::GpuSelection::new(gpus).unwrap(),
            ops: vec![op],
            sizes: vec![bytes],
            ..Default::default()
        };
        let Ok((_, cases)) = plan(topo, &opts) else {
            // Too small for one element per rank: refused, nothing to check.
            return Ok(());
        };
        let mut backend = ModeledCollectives::new(topo);
        for case in &cases {
            let r = backend.run_case(case, &mut Vec::new());
            for v in [r.time_us, r.algbw_gbps, r.busbw_gbps] {
                prop_assert!(finite_non_negative(v), "{:?}", r);
            }
            prop_assert_eq!(r.wrong, None);
        }
    }
}
