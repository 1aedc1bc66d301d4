//! A check from start to end: on this machine (NVML before, load tests with a sampler, NVML
//! after) or on a machine known from captures or a catalog entry (its state as read or stated,
//! performance modeled).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{Evidence, HealthReport, Thresholds, copy_checks, state_checks};
use crate::bench::plan::PairScope;
use crate::bench::{Backend, BenchError, MakeBackend, Plan, Progress, Warning, run_bandwidth};
use crate::model::{BandwidthResult, Inventory, Source, Topology};
use crate::topology::TopologyError;

/// How often the sampler reads the GPUs during the load tests.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(10);

/// What to check.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CheckOptions {
    /// The GPUs (every GPU when none are named).
    pub gpus: crate::model::GpuSelection,
    /// Shorter load tests.
    pub quick: bool,
    pub thresholds: Thresholds,
    /// After the check, a burn-in of this length and these loads (`--soak`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soak: Option<crate::model::SoakOptions>,
}

/// Why a live check could not run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// NVML: no driver, or a GPU it cannot read.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The load tests could not start (no CUDA, bad GPU list).
    #[error(transparent)]
    Bench(#[from] BenchError),
}

impl crate::model::Blame for CheckError {
    fn fault(&self) -> crate::model::Fault {
        match self {
            Self::Topology(e) => e.fault(),
            Self::Bench(e) => e.fault(),
        }
    }
}

/// The note of a check whose pair tests were bounded to the first pair of each kind of
/// connection ([`crate::bench::plan::ALL_PAIRS_MAX_GPUS`]), over `gpus` GPUs.
fn pairs_bounded_note(gpus: usize) -> Option<String> {
    (PairScope::bounded(gpus) == PairScope::PerLinkKind).then(|| {
        format!(
            "{gpus} GPUs: the P2P load tests ran on the first pair of each kind of connection, not on every pair (above {} GPUs); a link of another pair is not tested",
            crate::bench::plan::ALL_PAIRS_MAX_GPUS
        )
    })
}

/// Checks a machine known from captures or a catalog entry: its inventory as read or stated
/// (`before`, and `after` for counters read twice), and performance modeled from it by the
/// modeled backend `model` builds for a topology (`job::backend` hands the one it picks).
pub fn check_described(
    topo: &Topology,
    before: Option<Inventory>,
    after: Option<Inventory>,
    opts: &CheckOptions,
    model: &dyn Fn(&Topology) -> Box<dyn Backend>,
) -> HealthReport {
    let ev = Evidence {
        before,
        after,
        load: None,
    };
    let inv = state_checks::checks(topo, &ev, &opts.thresholds, &opts.gpus);
    let mut results = copy_checks::modeled_results(topo, &ev, &opts.gpus, model);
    let covered = if opts.gpus.is_empty() {
        topo.gpus.len()
    } else {
        opts.gpus.len()
    };
    let bounded = pairs_bounded_note(covered);
    // Figures that cannot be modeled are left out with one note per reason, not listed one by
    // one: peer access refused (the P2P status says so), peer access not documented, every
    // NVLink of a pair down, a host link with no reference efficiency yet (NVLink-C2C), or no
    // link kind or line rate in the captures.
    let mut unknown: Vec<(String, Vec<String>)> = Vec::new();
    for r in results
        .iter()
        .filter(|r| r.status != crate::model::Status::Ok)
    {
        // Waived only where the stated P2P status refuses peer access (bench::modeled::require_peer).
        let reason = r.reason.as_deref().unwrap_or_default();
        let why = if r.status == crate::model::Status::Waived {
            "peer access is refused between some of the GPUs (their P2P status)".to_string()
        } else if reason.contains(crate::bench::modeled::PEER_UNSTATED) {
            "whether some of the GPUs allow peer access is not stated (unknown, not assumed)"
                .to_string()
        } else if reason.contains(crate::bench::modeled::NO_NVLINK_UP) {
            "every NVLink between some of the GPUs is down (nvlink_links): whether the driver \
             would carry their copies over PCIe instead, or refuse peer access, is not modeled"
                .to_string()
        } else if let Some(link) = host_link(topo, r) {
            // The modeled backend refuses these (bench::modeled's refuse_host_link): the
            // line rate is known, the efficiency of a copy over it is not.
            format!(
                "no reference efficiency for host copies over {} (the GPUs' link to their CPU, not PCIe) yet",
                link.kind
            )
        } else {
            "the captures give no line rate or link kind for them (import `nvidia-smi topo -m`, `nvidia-smi nvlink -s` and `nvidia-smi -q` output)".to_string()
        };
        let test = r.test.id().to_string();
        match unknown.iter_mut().find(|u| u.0 == why) {
            Some(u) if !u.1.contains(&test) => u.1.push(test),
            Some(_) => {}
            None => unknown.push((why, vec![test])),
        }
    }
    results.retain(|r| r.status == crate::model::Status::Ok);
    let perf = copy_checks::checks(topo, &results, &opts.gpus, &ev, &inv, &opts.thresholds);
    let mut checks = inv;
    checks.extend(perf);
    // Captures of a real machine are real readings; only the performance lines are modeled
    // (each check says which).
    let source = match ev.before.as_ref().map(|i| i.kind) {
        Some(crate::model::InventoryKind::Imported) => Source::Measured,
        _ => Source::Modeled,
    };
    let mut r = HealthReport::new(topo, source, checks, opts.thresholds.clone(), ev, results);
    r.notes.push(
        "performance modeled from the links as read or stated × reference efficiencies: not a measurement"
            .to_string(),
    );
    r.notes.extend(bounded);
    for (why, tests) in unknown {
        r.notes
            .push(format!("not modeled ({}): {why}", tests.join(", ")));
    }
    if r.before
        .as_ref()
        .is_some_and(|i| i.kind == crate::model::InventoryKind::Catalog)
    {
        r.notes.push(
            "a catalog entry states links (and ECC errors where [[state]] says so), not error counters or clocks: those are not checked"
                .to_string(),
        );
    }
    if r.before.is_none() {
        r.notes.push(
            "no state capture: import `nvidia-smi -q -x` (and `nvidia-smi nvlink -s`/`-e`) output for the inventory checks"
                .to_string(),
        );
    }
    r
}

/// Checks figures measured on another machine and imported (nvbandwidth's and nccl-tests'
/// outputs): its inventory where captures hold one, each copy figure against its link's line
/// rate × the reference efficiency, by the rules a live check judges its own load tests with,
/// and each collective's bus bandwidth against the modeled figure for its GPUs
/// ([`super::collective_checks`]). `source`
/// names where the figures came from (`nvbandwidth v0.8, driver … on node1`). Figures of GPUs
/// outside `opts.gpus` are left out; where the links are not known (no `nvidia-smi topo -m`
/// capture) a figure is UNKNOWN and says so.
pub fn check_imported(
    topo: &Topology,
    before: Option<Inventory>,
    after: Option<Inventory>,
    results: Vec<BandwidthResult>,
    collectives: &[crate::model::CollectiveResult],
    source: &str,
    opts: &CheckOptions,
) -> HealthReport {
    let gpus = opts.gpus.of(topo);
    let ev = Evidence {
        before,
        after,
        load: None,
    };
    // Without a state capture there is no reading to judge: the note below says so once,
    // instead of an UNKNOWN per GPU and check.
    let inv = if ev.before.is_some() {
        state_checks::checks(topo, &ev, &opts.thresholds, &gpus)
    } else {
        Vec::new()
    };
    let on_selected = |e: crate::model::Endpoint| e.gpu().is_none_or(|g| gpus.contains(&g));
    let results: Vec<BandwidthResult> = results
        .into_iter()
        .filter(|r| on_selected(r.src) && on_selected(r.dst))
        .map(|mut r| {
            if r.line_rate_gbps.is_none() {
                r.line_rate_gbps =
                    crate::bench::runner::line_rate(topo, r.test.shape(), r.src, r.dst, &gpus);
            }
            r
        })
        .collect();
    let judged: Vec<&str> = copy_checks::CHECK_TESTS
        .iter()
        .filter(|t| results.iter().any(|r| r.test == **t))
        .map(|t| t.id())
        .collect();
    let mut not_judged: Vec<&str> = Vec::new();
    for r in &results {
        if !copy_checks::CHECK_TESTS.contains(&r.test) && !not_judged.contains(&r.test.id()) {
            not_judged.push(r.test.id());
        }
    }
    let perf = copy_checks::checks(topo, &results, &gpus, &ev, &inv, &opts.thresholds);
    let coll = super::collective_checks::checks(topo, collectives, &inv, &opts.thresholds);
    let mut checks = inv;
    checks.extend(perf);
    checks.extend(coll);
    let mut r = HealthReport::new(
        topo,
        Source::Measured,
        checks,
        opts.thresholds.clone(),
        ev,
        results,
    );
    r.notes.push(format!(
        "figures measured by {source}, imported: copies judged ({}) against line rate × reference efficiency, as a live check's own; collectives against the modeled bus bandwidth",
        if judged.is_empty() {
            "none of the check's tests".to_string()
        } else {
            judged.join(", ")
        }
    ));
    if !not_judged.is_empty() {
        r.notes.push(format!(
            "imported but not judged (no check of these tests): {}",
            not_judged.join(", ")
        ));
    }
    if r.before.is_none() {
        r.notes.push(
            "no state capture: import `nvidia-smi -q -x` (and `nvidia-smi topo -m`) output beside it for the inventory checks and the links"
                .to_string(),
        );
    }
    r
}

/// The link other than PCIe that host copy `r` crosses (NVLink-C2C on a Grace superchip);
/// `None` for a copy between GPUs or over PCIe.
fn host_link<'a>(topo: &'a Topology, r: &BandwidthResult) -> Option<&'a crate::model::HostLink> {
    let host = crate::model::Endpoint::Host;
    if r.src != host && r.dst != host {
        return None;
    }
    [r.src, r.dst]
        .iter()
        .filter_map(|e| e.gpu())
        .find_map(|g| topo.gpu(g)?.host_link.as_ref())
}

/// Checks this machine: reads the inventory through NVML, runs the load tests on the GPUs (on
/// the backend `measure` builds once the inventory is read: `job::backend` hands the CUDA one)
/// while a sampler watches PCIe link state, clock limits and other processes, reads the counters
/// again, and judges it all. `on_case` sees each finished load-test case; `cancel` stops after
/// the case in flight (the report then holds what finished).
pub fn check_live(
    topo: &Topology,
    opts: &CheckOptions,
    measure: &MakeBackend<'_>,
    cancel: &AtomicBool,
    on_case: &mut dyn FnMut(&Progress, &[BandwidthResult]),
) -> Result<(HealthReport, Vec<Warning>), CheckError> {
    let gpus = opts.gpus.of(topo);
    let before = crate::topology::nvml_state::read(topo, &gpus)?;
    let plan = Plan::new(
        topo,
        &copy_checks::options(&opts.gpus, gpus.len(), opts.quick),
    )?;
    let mut notes = Vec::new();
    let mut warnings = Vec::new();
    let (results, load) = match measure(topo) {
        Ok(mut backend) => {
            let sampler = crate::telemetry::sampler::Sampler::start(topo, &gpus, SAMPLE_INTERVAL)?;
            let outcome = run_bandwidth(topo, &plan, backend.as_mut(), cancel, on_case);
            drop(backend);
            let load = sampler.stop();
            warnings.extend(outcome.warnings);
            if outcome.cancelled {
                notes.push("interrupted: the load tests that finished are judged".to_string());
            }
            (outcome.results, Some(load))
        }
        Err(e) => {
            notes.push(format!(
                "load tests not run ({e}): performance, PCIe under load and clock limits unknown"
            ));
            (Vec::new(), None)
        }
    };
    let after = crate::topology::nvml_state::read(topo, &gpus)?;
    let ev = Evidence {
        before: Some(before),
        after: Some(after),
        load,
    };
    let inv = state_checks::checks(topo, &ev, &opts.thresholds, &gpus);
    let perf = copy_checks::checks(topo, &results, &gpus, &ev, &inv, &opts.thresholds);
    let mut checks = inv;
    checks.extend(perf);
    let mut r = HealthReport::new(
        topo,
        Source::Measured,
        checks,
        opts.thresholds.clone(),
        ev,
        results,
    );
    if let Some(l) = &r.load {
        notes.push(format!(
            "NVML sampled every {} ms during the load tests ({}): PCIe link state, clock limits, processes",
            l.interval_ms,
            crate::model::quantities::samples(f64::from(l.samples))
        ));
    }
    notes.extend(pairs_bounded_note(gpus.len()));
    r.notes.extend(notes);
    Ok((r, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::modeled::ModeledBackend;
    use crate::health::{CheckId, Verdict};
    use crate::model::TestId;

    /// The modeled backend as `job::backend` builds it for a described check.
    fn model(topo: &Topology) -> Box<dyn Backend> {
        Box::new(ModeledBackend::as_stated(topo))
    }

    #[test]
    fn a_catalog_machine_as_designed_passes_modeled() {
        let (t, inv) = crate::topology::catalog::load_machine("hgx-h200").unwrap();
        let r = check_described(&t, Some(inv), None, &CheckOptions::default(), &model);
        assert_eq!(r.source, Source::Modeled);
        assert!(!r.failed(), "{:#?}", r.checks);
        assert!(r.checks.iter().all(|c| c.source == Source::Modeled));
        assert!(
            r.checks
                .iter()
                .any(|c| c.check == CheckId::Copy(TestId::AllPairs))
        );
        assert_ne!(r.verdict, Verdict::Fail);
    }

    #[test]
    fn peer_access_unstated_or_refused_is_never_a_modeled_pass() {
        // 8× L40S: P2P across the two sockets is not documented; the pairs that cross are not
        // modeled (they were modeled as working), and the note says why.
        let (t, inv) = crate::topology::catalog::load_machine("l40s-8x-pcie").unwrap();
        let r = check_described(&t, Some(inv), None, &CheckOptions::default(), &model);
        let crossing = |c: &crate::health::Check| {
            matches!(
                c.check,
                CheckId::Copy(
                    TestId::P2pReadCe | TestId::P2pWriteCe | TestId::P2pBidirCe | TestId::AllPairs
                )
            ) && c.subject == "GPU 0–4"
        };
        assert!(!r.checks.iter().any(crossing), "{:#?}", r.checks);
        assert!(
            r.checks
                .iter()
                .any(|c| c.check == CheckId::Copy(TestId::P2pBidirCe) && c.subject == "GPU 0–1")
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("allow peer access is not stated")),
            "{:?}",
            r.notes
        );
        // 4× RTX 4090: no P2P at all; the note names the refusal, not missing line rates.
        let (t, inv) = crate::topology::catalog::load_machine("rtx4090-4x-pcie").unwrap();
        let r = check_described(&t, Some(inv), None, &CheckOptions::default(), &model);
        assert!(
            !r.checks
                .iter()
                .any(|c| c.check == CheckId::Copy(TestId::P2pReadCe))
        );
        assert!(
            r.notes.iter().any(|n| n.contains("peer access is refused")),
            "{:?}",
            r.notes
        );
        assert!(
            !r.notes.iter().any(|n| n.contains("no line rate")),
            "{:?}",
            r.notes
        );
    }
}
