//! Collectives on real GPUs (NCCL and scalescope's own ring/tree/host all-reduce). Needs two GPUs
//! (0 and 1) with peer access:
//! `cargo test --release --test gpu_collectives -- --ignored --test-threads=1 --nocapture`.
//! NCCL is found as the CLI finds it (`SCALESCOPE_NCCL_LIB`, the loader, python3's
//! site-packages); where it is not, the NCCL tests print why and pass.

mod common;

use std::sync::atomic::AtomicBool;

use common::two_gpus;
use scalescope::bench::collectives::{
    CollectiveBackend, CollectiveOptions, Placement, plan, run_collectives,
};
use scalescope::bench::cuda::collectives::CudaCollectives;
use scalescope::model::{Algo, CollectiveOp, CollectiveResult, Dtype, Status};

fn backend() -> CudaCollectives {
    match CudaCollectives::new(&two_gpus(), None) {
        Ok(b) => {
            eprintln!("{}", b.describe());
            b
        }
        Err(e) => panic!("CUDA collectives unavailable: {e}"),
    }
}

fn run(backend: &mut CudaCollectives, opts: &CollectiveOptions) -> Vec<CollectiveResult> {
    let (_, cases) = plan(&two_gpus(), opts).expect("plan");
    let mut warnings = Vec::new();
    let (results, cancelled) = run_collectives(
        &cases,
        backend,
        &AtomicBool::new(false),
        &mut warnings,
        &mut |_, _, _| {},
    );
    assert!(!cancelled);
    for r in &results {
        eprintln!(
            "{:<15} {:<5} {:>12} B {} {} time {:?} µs busbw {:?} GB/s wrong {:?} {:?} {:?} graph={}",
            r.op.id(),
            r.algo.id(),
            r.bytes,
            r.dtype,
            if r.in_place { "in " } else { "out" },
            r.time_us,
            r.busbw_gbps,
            r.wrong,
            r.status,
            r.reason,
            r.graph
        );
    }
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    results
}

fn nccl_found(results: &[CollectiveResult]) -> bool {
    let missing = results.iter().find(|r| {
        r.status == Status::Skipped
            && r.reason
                .as_deref()
                .is_some_and(|s| s.starts_with("NCCL not found"))
    });
    if let Some(r) = missing {
        println!(
            "skipping: {}",
            r.reason.as_deref().unwrap_or("NCCL not found")
        );
        return false;
    }
    true
}

fn assert_verified(r: &CollectiveResult) {
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert_eq!(r.wrong, Some(0), "{r:?}");
    assert!(r.busbw_gbps.is_some_and(|b| b > 0.0), "{r:?}");
    assert_eq!(r.sample_us.len(), 3, "{r:?}");
}

#[test]
#[ignore = "needs GPU"]
fn nccl_all_six_ops_verify_at_1_mib() {
    let mut b = backend();
    for dtype in [Dtype::F32, Dtype::Bf16] {
        let results = run(
            &mut b,
            &CollectiveOptions {
                ops: CollectiveOp::ALL.to_vec(),
                algos: vec![Algo::Nccl],
                sizes: vec![1 << 20],
                dtype,
                placement: Placement::OutOfPlace,
                iters: 5,
                warmup: 2,
                ..Default::default()
            },
        );
        if !nccl_found(&results) {
            return;
        }
        assert_eq!(results.len(), 6);
        for r in &results {
            assert_verified(r);
            assert!(
                r.backend_version
                    .as_deref()
                    .is_some_and(|v| v.starts_with("NCCL ")),
                "{r:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs GPU"]
fn nccl_in_place_verifies() {
    let mut b = backend();
    let results = run(
        &mut b,
        &CollectiveOptions {
            ops: vec![
                CollectiveOp::AllReduce,
                CollectiveOp::AllGather,
                CollectiveOp::ReduceScatter,
                CollectiveOp::Broadcast,
            ],
            algos: vec![Algo::Nccl],
            sizes: vec![1 << 20, (1 << 20) + 24],
            dtype: Dtype::F16,
            placement: Placement::InPlace,
            iters: 5,
            warmup: 2,
            ..Default::default()
        },
    );
    if !nccl_found(&results) {
        return;
    }
    for r in &results {
        assert_verified(r);
        assert!(r.in_place);
    }
}

#[test]
#[ignore = "needs GPU"]
fn nccl_graph_mode_runs_and_verifies() {
    let mut b = backend();
    let results = run(
        &mut b,
        &CollectiveOptions {
            ops: vec![CollectiveOp::AllReduce, CollectiveOp::AllToAll],
            algos: vec![Algo::Nccl],
            sizes: vec![8 << 10, 16 << 20],
            iters: 10,
            warmup: 2,
            graph: true,
            ..Default::default()
        },
    );
    if !nccl_found(&results) {
        return;
    }
    for r in &results {
        assert_verified(r);
        assert!(r.graph, "{r:?}");
    }
}

#[test]
#[ignore = "needs GPU"]
fn own_algorithms_all_reduce_64_mib() {
    let mut b = backend();
    for dtype in [Dtype::F32, Dtype::Bf16, Dtype::I32] {
        for placement in [Placement::OutOfPlace, Placement::InPlace] {
            let results = run(
                &mut b,
                &CollectiveOptions {
                    ops: vec![CollectiveOp::AllReduce],
                    algos: vec![Algo::Ring, Algo::Tree, Algo::Host],
                    sizes: vec![64 << 20],
                    dtype,
                    placement,
                    iters: 3,
                    warmup: 1,
                    ..Default::default()
                },
            );
            assert_eq!(results.len(), 3);
            for r in &results {
                assert_verified(r);
                assert_eq!(
                    r.backend_version.as_deref(),
                    Some(concat!("scalescope ", env!("CARGO_PKG_VERSION")))
                );
            }
        }
    }
}

#[test]
#[ignore = "needs GPU"]
fn ring_handles_uneven_sizes() {
    let mut b = backend();
    let results = run(
        &mut b,
        &CollectiveOptions {
            ops: vec![CollectiveOp::AllReduce],
            algos: vec![Algo::Ring, Algo::Tree],
            sizes: vec![8, 36, 4100, (3 << 20) + 12],
            dtype: Dtype::F32,
            iters: 2,
            warmup: 1,
            ..Default::default()
        },
    );
    for r in &results {
        assert_verified(r);
    }
}

#[test]
#[ignore = "needs GPU"]
fn absurd_size_is_a_skipped_row() {
    let mut b = backend();
    let results = run(
        &mut b,
        &CollectiveOptions {
            ops: vec![CollectiveOp::AllReduce],
            algos: vec![Algo::Nccl, Algo::Ring, Algo::Host],
            sizes: vec![1 << 50],
            iters: 1,
            warmup: 0,
            ..Default::default()
        },
    );
    assert_eq!(results.len(), 3);
    for r in &results {
        assert_eq!(r.status, Status::Skipped, "{r:?}");
        assert!(r.reason.is_some());
    }
    // The backend still works afterwards.
    let after = run(
        &mut b,
        &CollectiveOptions {
            ops: vec![CollectiveOp::AllReduce],
            algos: vec![Algo::Ring],
            sizes: vec![1 << 20],
            iters: 2,
            warmup: 1,
            ..Default::default()
        },
    );
    assert_verified(&after[0]);
}
