//! The CUDA backend on real GPUs. Needs two GPUs (0 and 1) with peer access:
//! `cargo test --test gpu_bandwidth -- --ignored --test-threads=1` (scripts/gpu-check.sh).

mod common;

use std::sync::atomic::AtomicBool;

use common::two_gpus;
use scalescope::bench::cuda::CudaBackend;
use scalescope::bench::{BandwidthOptions, Plan, Warning, run_bandwidth};
use scalescope::model::{BandwidthResult, GpuSelection, Status, TestId};

fn run(tests: Vec<TestId>, sizes: Vec<u64>) -> (Vec<BandwidthResult>, Vec<Warning>) {
    let topo = two_gpus();
    let mut backend = match CudaBackend::new(&topo) {
        Ok(b) => b,
        Err(e) => panic!("CUDA backend unavailable: {e}"),
    };
    eprintln!("{}", scalescope::bench::Backend::describe(&backend));
    let opts = BandwidthOptions {
        gpus: GpuSelection::new(vec![0, 1]).unwrap(),
        tests,
        sizes,
        iters: 4,
        samples: 3,
        ..Default::default()
    };
    let plan = Plan::new(&topo, &opts).expect("plan");
    let out = run_bandwidth(
        &topo,
        &plan,
        &mut backend,
        &AtomicBool::new(false),
        &mut |_, _| {},
    );
    for r in &out.results {
        eprintln!(
            "{:<20} {}→{} {:>12} B  {:?}  median {:?} GB/s  fwd {:?} rev {:?}  latency {:?} ns  wrong {:?}  {:?}",
            r.test.id(),
            r.src,
            r.dst,
            r.bytes,
            r.status,
            r.median_gbps,
            r.fwd_gbps,
            r.rev_gbps,
            r.latency_ns,
            r.wrong,
            r.reason
        );
    }
    (out.results, out.warnings)
}

fn assert_ok(r: &BandwidthResult) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{} {}→{}: {:?}",
        r.test,
        r.src,
        r.dst,
        r.reason
    );
    assert_eq!(r.wrong, Some(0), "{} {}→{}", r.test, r.src, r.dst);
    if r.test.is_latency() {
        assert!(r.latency_ns.is_some_and(|v| v > 0.0), "{r:?}");
    } else {
        assert!(r.median_gbps.is_some_and(|v| v > 0.0), "{r:?}");
    }
    assert_eq!(r.sample_values.len(), 3);
}

#[test]
#[ignore = "needs GPU"]
fn small_plan_on_two_gpus_is_ok_and_verified() {
    let tests = vec![
        TestId::P2pReadCe,
        TestId::H2d,
        TestId::D2h,
        TestId::LatencyD2d,
        TestId::P2pWriteSm,
        TestId::P2pBidirCe,
        TestId::P2pBidirSm,
        TestId::LocalCopy,
    ];
    let (results, warnings) = run(tests.clone(), vec![64 << 20]);
    assert!(
        !warnings
            .iter()
            .any(|w| matches!(w, Warning::PeerAccessUnsupported { .. })),
        "{warnings:?}"
    );
    for t in tests {
        assert!(results.iter().any(|r| r.test == t), "{t} produced no row");
    }
    for r in &results {
        assert_ok(r);
    }
    for r in results
        .iter()
        .filter(|r| r.test == TestId::P2pBidirCe || r.test == TestId::P2pBidirSm)
    {
        let (f, v, m) = (
            r.fwd_gbps.unwrap(),
            r.rev_gbps.unwrap(),
            r.median_gbps.unwrap(),
        );
        assert!(f > 0.0 && v > 0.0 && m > f.max(v), "{r:?}");
    }
}

#[test]
#[ignore = "needs GPU"]
fn every_test_runs_without_failures() {
    let (results, _) = run(Vec::new(), vec![32 << 20]);
    for r in &results {
        assert!(
            matches!(r.status, Status::Ok | Status::Waived),
            "{} {}→{}: {:?} {:?}",
            r.test,
            r.src,
            r.dst,
            r.status,
            r.reason
        );
        if r.status == Status::Ok {
            assert_eq!(r.wrong, Some(0), "{} {}→{}", r.test, r.src, r.dst);
        }
    }
    // host_to_all / all_to_host: one row per GPU.
    assert_eq!(
        results
            .iter()
            .filter(|r| r.test == TestId::HostToAll)
            .count(),
        2
    );
}

#[test]
#[ignore = "needs GPU"]
fn odd_sizes_are_copied_exactly() {
    let (results, _) = run(
        vec![
            TestId::P2pReadSm,
            TestId::P2pWriteCe,
            TestId::H2d,
            TestId::D2h,
        ],
        vec![(1 << 20) + 13, 4099],
    );
    for r in &results {
        assert_ok(r);
    }
}

#[test]
#[ignore = "needs GPU"]
fn absurd_size_is_skipped_not_a_panic() {
    let (results, warnings) = run(
        vec![TestId::P2pReadCe, TestId::LocalCopy, TestId::H2d],
        vec![1 << 40],
    );
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(
            r.status,
            Status::Skipped,
            "{} {}→{}: {:?}",
            r.test,
            r.src,
            r.dst,
            r.reason
        );
        assert!(r.median_gbps.is_none());
    }
    assert!(
        warnings
            .iter()
            .any(|w| matches!(w, Warning::OutOfMemory { .. })),
        "{warnings:?}"
    );
    // The backend goes on working after the failed allocations.
    let (results, _) = run(vec![TestId::LocalCopy], vec![16 << 20]);
    for r in &results {
        assert_ok(r);
    }
}

#[test]
#[ignore = "needs GPU"]
fn all_pairs_reads_from_every_peer_at_once_verified() {
    let (results, _) = run(vec![TestId::P2pReadCe, TestId::AllPairs], vec![256 << 20]);
    let all: Vec<&BandwidthResult> = results
        .iter()
        .filter(|r| r.test == TestId::AllPairs)
        .collect();
    // One row per reading GPU, every copied buffer checked.
    assert_eq!(all.len(), 2, "{all:?}");
    for r in &all {
        assert_ok(r);
        assert_eq!(r.src, scalescope::model::Endpoint::All);
        let d = r.dst.gpu().unwrap();
        let alone = results
            .iter()
            .find(|x| x.test == TestId::P2pReadCe && x.dst == r.dst)
            .and_then(|x| x.median_gbps)
            .unwrap();
        let score = r.median_gbps.unwrap() / alone;
        eprintln!(
            "all_pairs into GPU {d}: {:.1} GB/s, alone {alone:.1}: contention score {score:.2}",
            r.median_gbps.unwrap()
        );
        // On two GPUs every GPU reads from one peer while that peer reads from it: as much as a
        // bidirectional copy gives each direction (0.99 of the isolated read on 2× H200 NV18).
        assert!(score > 0.75, "contention score {score:.2}: {r:?}");
        assert!(r.line_rate_gbps.is_some());
    }
}

#[test]
#[ignore = "needs GPU"]
fn live_check_reads_the_inventory_and_judges_every_test() {
    use scalescope::health::Verdict;
    use scalescope::health::run::{CheckOptions, check_live};
    let topo = scalescope::topology::live::read().expect("live topology");
    let opts = CheckOptions {
        gpus: GpuSelection::new(vec![0, 1]).unwrap(),
        quick: true,
        ..Default::default()
    };
    let (report, _) = check_live(
        &topo,
        &opts,
        &scalescope::job::measured_bandwidth,
        &AtomicBool::new(false),
        &mut |_, _| {},
    )
    .expect("check runs");
    for c in &report.checks {
        eprintln!(
            "{} {} {} {}",
            c.verdict_text(),
            c.subject,
            c.check,
            c.detail
        );
    }
    let load = report.load.as_ref().expect("the sampler ran");
    assert!(load.samples > 0);
    for g in &load.gpus {
        assert!(
            g.pcie_under_load.is_some(),
            "GPU {} had no PCIe reading",
            g.index
        );
    }
    for id in [
        "pcie_link",
        "ecc",
        "pcie_replay",
        "clocks",
        "h2d",
        "d2h",
        "p2p_read_ce",
        "p2p_write_ce",
        "p2p_bidir_ce",
        "all_pairs",
    ] {
        assert!(
            report.checks.iter().any(|c| c.check.id() == id),
            "no {id} check"
        );
    }
    // The copies are verified: none may arrive wrong, whatever else the machine does.
    assert!(report.checks.iter().all(|c| {
        !(c.verdict == Verdict::Fail
            && c.cause
                .as_deref()
                .is_some_and(|x| x.contains("arrived wrong")))
    }));
    assert!(report.before.is_some() && report.after.is_some());
}

/// Energy of the copy tests on the live machine's first GPU (one GPU is enough): with
/// `--energy-window` every measured test has its energy from the counter, its mean power above
/// the idle power read before the run and within a board's limit, its window as long as asked.
#[test]
#[ignore = "needs GPU"]
fn copy_tests_have_their_energy_with_an_energy_window() {
    let topo = scalescope::topology::live::read().expect("live topology");
    let mut backend = CudaBackend::new(&topo).expect("CUDA backend");
    backend.set_energy_window(0.5);
    let opts = BandwidthOptions {
        gpus: GpuSelection::new(vec![0]).unwrap(),
        tests: vec![TestId::H2d, TestId::D2h, TestId::LocalCopy],
        ..Default::default()
    };
    let plan = Plan::new(&topo, &opts).expect("plan");
    let out = run_bandwidth(
        &topo,
        &plan,
        &mut backend,
        &AtomicBool::new(false),
        &mut |_, _| {},
    );
    assert!(!out.results.is_empty());
    for r in &out.results {
        assert_ok_status(r);
        let e = r
            .energy
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no energy: {:?}", r.test, out.warnings));
        eprintln!(
            "{:<12} {:>8.1} GB/s  {:>6.1} W (idle {:?})  {:.2} J/GB over {:.2} s ({:.2} s between steps)",
            r.test.id(),
            r.median_gbps.unwrap_or(f64::NAN),
            e.mean_power_w,
            e.idle_power_w,
            e.joules_per_gb(r.median_gbps).unwrap_or(f64::NAN),
            e.seconds,
            e.measured_s
        );
        assert!(e.mean_power_w > 20.0 && e.mean_power_w < 1_500.0, "{e:?}");
        assert!(e.measured_s >= 0.5 && e.seconds >= e.measured_s, "{e:?}");
        assert!((e.joules - e.mean_power_w * e.seconds).abs() < 1e-6 * e.joules.max(1.0));
        assert_eq!(e.gpus, vec![0]);
    }
}

fn assert_ok_status(r: &BandwidthResult) {
    assert_eq!(r.status, Status::Ok, "{} {:?}", r.test, r.reason);
}
