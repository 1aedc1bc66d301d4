//! Collective checks: an imported nccl-tests run's bus bandwidth (each collective at the
//! largest size it ran) against what the GPUs' links should carry — from 1 GiB up the modeled
//! figure for those GPUs at their slowest link ([`crate::bench::collectives::model_case`]); below
//! it a healthy machine's measured curve
//! where one was taken at these links ([`crate::model::collective_reference`]), else no
//! verdict — with PASS/WARN/FAIL by the thresholds the copy checks use, and below PASS the
//! evidence on those GPUs or "cause unknown".

use super::{Check, CheckId, Subject, Thresholds, Verdict, causes};
use crate::bench::collectives::{CollCase, model_case};
use crate::model::{Algo, CollectiveOp, CollectiveResult, Status, Topology};

/// The size from which a collective is judged against the model. Below it NCCL's curve depends
/// on more than the links (the protocol and channels NCCL picks, the host's latency): a run is
/// held only to a curve measured on as many GPUs at the same line rate
/// (`crate::model::collective_reference`), not to the model's interpolations and assumptions.
const MODEL_FROM_BYTES: u64 = 1 << 30;

/// What to do about a collective below what its links should carry, whatever the cause.
const FIX: &str = "rerun nccl-tests with NCCL_DEBUG=INFO and read the transport it set up \
                   (P2P/NVLS over NVLink, not SHM or NET); run `scalescope check` on the machine \
                   for its links, counters and processes";

/// One check per collective: its largest size's bus bandwidth (out of place where both ran)
/// against the modeled figure for the same GPUs and size. `inventory` (the state checks) gives
/// the cause below PASS where a finding is on those GPUs.
pub fn checks(
    topo: &Topology,
    results: &[CollectiveResult],
    inventory: &[Check],
    thresholds: &Thresholds,
) -> Vec<Check> {
    let mut out = Vec::new();
    for op in CollectiveOp::ALL {
        let largest = results
            .iter()
            .filter(|r| r.op == *op)
            .max_by_key(|r| (r.bytes, !r.in_place));
        if let Some(r) = largest {
            out.push(judge(topo, r, inventory, thresholds));
        }
    }
    out
}

fn judge(
    topo: &Topology,
    r: &CollectiveResult,
    inventory: &[Check],
    thresholds: &Thresholds,
) -> Check {
    let new = |v: Verdict, d: String| {
        Check::new(CheckId::Collective(r.op), Subject::Machine, v, r.source, d)
    };
    let size = crate::model::quantities::format_bytes(r.bytes);
    let ranks = r.gpus.len();
    if r.status == Status::Failed {
        return new(
            Verdict::Fail,
            format!(
                "{size} on {ranks} GPUs: {}",
                r.reason.as_deref().unwrap_or("failed")
            ),
        )
        .because(&causes::WRONG_DATA);
    }
    let Some(busbw) = r.busbw_gbps else {
        return new(
            Verdict::Unknown,
            format!("{size} on {ranks} GPUs: no bus bandwidth"),
        );
    };
    let detail = format!("{busbw:.1} GB/s busbw at {size} on {ranks} GPUs");
    if r.gpus.iter().any(|&g| topo.gpu(g).is_none()) {
        return new(
            Verdict::Unknown,
            format!(
                "{detail}; expected unknown ({ranks} ranks, the machine imported with it has {} GPUs: across hosts, or links not imported)",
                topo.gpus.len()
            ),
        );
    }
    let case = CollCase {
        op: r.op,
        algo: Algo::Nccl,
        gpus: r.gpus.clone(),
        bytes: r.bytes,
        dtype: r.dtype,
        in_place: r.in_place,
        iters: 1,
        warmup: 0,
        graph: false,
    };
    let model = model_case(topo, &case);
    let Some(expected) = model.busbw_gbps.filter(|e| *e > 0.0) else {
        let why = match model.reason.as_deref() {
            // A pair with no NVLink up: the model's own words (nvlink_links names the fault).
            Some(r) if r.contains(crate::bench::collectives::NCCL_WITHOUT_NVLINK) => r.to_string(),
            _ => "the links' line rates are not known: import `nvidia-smi topo -m` and \
                  `nvidia-smi -q` output beside it"
                .to_string(),
        };
        return new(
            Verdict::Unknown,
            format!("{detail}; expected unknown ({why})"),
        );
    };
    // Below 1 GiB the model is not what a healthy machine measures: a measured curve where
    // one was taken at these links, else no verdict.
    let (expected, basis) = if r.bytes >= MODEL_FROM_BYTES {
        (expected, model.reason.clone())
    } else {
        let Some((healthy, source)) = measured_healthy(topo, r) else {
            return new(
                Verdict::Unknown,
                format!(
                    "{detail}; expected unknown below 1 GiB (judged there only against a \
                     healthy machine of {ranks} GPUs measured at these links, and none was): \
                     rerun nccl-tests up to 1 GiB or more (`-e 1G`)"
                ),
            );
        };
        (healthy, Some(source))
    };
    let ratio = busbw / expected;
    let verdict = thresholds.verdict(ratio);
    let mut c = new(
        verdict,
        format!("{detail}, expected {expected:.1} ({:.0} %)", ratio * 100.0),
    );
    c.figure = Some(busbw);
    c.expected = Some(expected);
    c.percent = Some(ratio * 100.0);
    c.unit = Some("GB/s".into());
    c.basis = basis;
    if verdict != Verdict::Pass {
        c = with_cause(c, r, inventory);
    }
    c
}

/// What a healthy machine measured for `r`'s collective, GPU count and size at `r`'s GPUs'
/// slowest link, and where ([`crate::model::collective_reference`]).
fn measured_healthy(topo: &Topology, r: &CollectiveResult) -> Option<(f64, String)> {
    let (line, nvlink, _) = crate::bench::collectives::slowest_link(topo, &r.gpus)?;
    crate::model::collective_reference::healthy_busbw(
        r.op,
        r.gpus.len(),
        r.bytes,
        r.dtype,
        line,
        nvlink,
    )
}

/// `c` (below PASS) with its likely cause: a finding on the collective's GPUs that can slow a
/// collective over NVLink (PCIe findings cannot, unless NCCL fell back to it: the fix says how
/// to see that), else "cause unknown".
fn with_cause(c: Check, r: &CollectiveResult, inventory: &[Check]) -> Check {
    let evidence = inventory.iter().find(|i| {
        matches!(i.verdict, Verdict::Warn | Verdict::Fail)
            && matches!(
                i.check,
                CheckId::Busy
                    | CheckId::NvlinkLinks
                    | CheckId::NvlinkErrors
                    | CheckId::Clocks
                    | CheckId::PowerLimit
                    | CheckId::ClockSettings
                    | CheckId::P2pStatus
            )
            && i.cause.is_some()
            && i.gpu.is_some_and(|g| r.gpus.contains(&g))
    });
    match evidence {
        Some(e) => c.because_text(
            format!(
                "{} ({}: {})",
                e.cause.clone().unwrap_or_default(),
                e.subject,
                e.check
            ),
            FIX,
        ),
        None => c.because_text(causes::UNEXPLAINED.likely.to_string(), FIX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CollectiveCase, Dtype, Source};

    fn row(op: CollectiveOp, gpus: usize, bytes: u64, busbw: f64) -> CollectiveResult {
        let mut r = CollectiveResult::empty(
            CollectiveCase {
                op,
                algo: Algo::Nccl,
                gpus: &(0..gpus).collect::<Vec<_>>(),
                bytes,
                dtype: Dtype::F32,
                in_place: false,
            },
            Source::Measured,
            Status::Ok,
            "",
        );
        r.busbw_gbps = Some(busbw);
        r
    }

    /// The expected figure is the model's own for the same GPUs and size, so a measured figure
    /// at it passes and one at half of it fails, whatever the model's numbers are.
    #[test]
    fn busbw_is_judged_against_the_modeled_figure_for_the_same_gpus_and_size() {
        let topo = crate::topology::catalog::load("hgx-h200").unwrap();
        let case = CollCase {
            op: CollectiveOp::AllReduce,
            algo: Algo::Nccl,
            gpus: (0..8).collect(),
            bytes: 1 << 30,
            dtype: Dtype::F32,
            in_place: false,
            iters: 1,
            warmup: 0,
            graph: false,
        };
        let expected = model_case(&topo, &case).busbw_gbps.unwrap();
        let t = Thresholds::default();
        let small = row(CollectiveOp::AllReduce, 8, 1 << 20, expected * 0.1);
        let at = row(CollectiveOp::AllReduce, 8, 1 << 30, expected);
        let c = checks(&topo, &[small.clone(), at], &[], &t);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].verdict, Verdict::Pass, "{:?}", c[0]);
        assert_eq!(c[0].check.id(), "all_reduce");
        let half = row(CollectiveOp::AllReduce, 8, 1 << 30, expected / 2.0);
        let c = checks(&topo, &[small, half], &[], &t);
        assert_eq!(c[0].verdict, Verdict::Fail);
        assert!(c[0].cause_words().unwrap().starts_with("cause unknown"));
        // 16 ranks on an 8-GPU machine: across hosts, not judged.
        let c = checks(
            &topo,
            &[row(CollectiveOp::AllGather, 16, 1 << 30, 100.0)],
            &[],
            &t,
        );
        assert_eq!(c[0].verdict, Verdict::Unknown);
        assert!(c[0].detail.contains("16 ranks"), "{}", c[0].detail);
    }

    /// A healthy 2× H200 ran nccl-tests up to 128 MiB at 283.8 GB/s and the check warned at 86 %
    /// of the model's 331.0; below 1 GiB a run is held to the measured curve of its GPU count
    /// at its links, and with none it gets no verdict.
    #[test]
    fn below_one_gib_a_run_is_held_to_a_measured_curve_or_not_judged() {
        let topo = crate::topology::catalog::load("hgx-h200").unwrap();
        let t = Thresholds::default();
        let at = |gpus: usize, busbw: f64| {
            let c = checks(
                &topo,
                &[row(CollectiveOp::AllReduce, gpus, 128 << 20, busbw)],
                &[],
                &t,
            );
            c.into_iter().next().unwrap()
        };
        let c = at(2, 283.8);
        assert_eq!(c.verdict, Verdict::Pass, "{c:?}");
        assert!(
            c.basis
                .as_deref()
                .unwrap()
                .contains("h200-2x-sxm-2026-11-28.json"),
            "{c:?}"
        );
        // 300 GB/s on eight GPUs passed at 97 % of the model's 309; the healthy eight measured 338.1.
        let c = at(8, 300.0);
        assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
        assert!(c.detail.contains("expected 338.1"), "{}", c.detail);
        // Four GPUs at 128 MiB: no measured curve, no verdict.
        let c = at(4, 300.0);
        assert_eq!(c.verdict, Verdict::Unknown, "{c:?}");
        assert!(c.detail.contains("-e 1G"), "{}", c.detail);
    }
}
