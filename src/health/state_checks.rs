//! Inventory checks: the GPUs' state, judged without a measurement of bandwidth.
//!
//! Every rule here reads [`Evidence`]: the first reading (before the load tests, the capture,
//! or the catalog's statement), a later one (after the load tests, or a later capture), and what
//! the sampler saw during the load tests. A value nobody could read gives UNKNOWN.

use super::causes::{self, Cause};
use super::gpu_ctx::Ctx;
use super::nvlink_checks::{nvlink_errors, nvlink_links, reading_interval_s};
use super::p2p_checks::p2p_status;
use super::settings_checks::settings;
use super::{Busy, Check, CheckId, Evidence, Thresholds, Verdict};
use crate::model::{
    GpuInventory, GpuProcess, InventoryKind, LoadState, PcieLink, Source, Topology, pcie_rate_gbps,
};

/// Every inventory check for the GPUs in `gpus` (all when empty).
pub fn checks(
    topo: &Topology,
    ev: &Evidence,
    thresholds: &Thresholds,
    gpus: &[usize],
) -> Vec<Check> {
    let selected: Vec<usize> = if gpus.is_empty() {
        topo.gpu_indices()
    } else {
        gpus.to_vec()
    };
    let source = match ev.before.as_ref().map(|i| i.kind) {
        Some(InventoryKind::Catalog) => Source::Modeled,
        _ => Source::Measured,
    };
    let mut out = missing(ev, &selected, gpus.is_empty(), source);
    for &g in &selected {
        let before = ev.before.as_ref().and_then(|i| i.gpu(g));
        let after = ev.after.as_ref().and_then(|i| i.gpu(g));
        let load = ev.load.as_ref().and_then(|l| l.gpu(g));
        let ctx = Ctx {
            g,
            source,
            // An import without a state capture: what it lacks is not in the captures.
            kind: ev.before.as_ref().map(|i| i.kind).or(matches!(
                topo.source,
                crate::model::TopologySource::Imported { .. }
            )
            .then_some(InventoryKind::Imported)),
        };
        out.push(busy(&ctx, before, load, thresholds));
        let pcie = pcie_link(&ctx, topo, before, load);
        out.push(below_siblings(&ctx, pcie, topo, ev, &selected));
        if let Some(c) = nvlink_links(&ctx, topo, before, ev) {
            out.push(c);
        }
        let interval = reading_interval_s(ev);
        if let Some(c) = nvlink_errors(&ctx, topo, before, after, interval, thresholds) {
            out.push(c);
        }
        out.push(pcie_replay(&ctx, before, after, interval, thresholds));
        out.push(ecc(&ctx, before, after));
        out.push(memory_repair(&ctx, before));
        out.extend(recovery(&ctx, before));
        out.extend(fabric(&ctx, before));
        if let Some(c) = super::clock_check::clocks(&ctx, before, load, ev.load.is_some()) {
            out.push(c);
        }
        out.extend(super::temperature_check::temperature(&ctx, before, after));
        out.extend(settings(&ctx, before, load, &thresholds.settings));
    }
    out.retain(|c| {
        !(c.check == CheckId::Busy && c.verdict == Verdict::Pass && c.detail.is_empty())
    });
    // A catalog entry describes links (and what `[[state]]` states), not counters: what it does
    // not state is not listed as unknown line by line.
    if source == Source::Modeled {
        out.retain(|c| c.verdict != Verdict::Unknown);
    }
    // Over the links as they run: a pair with every NVLink down says so.
    let running = crate::model::as_running(topo, ev.before.as_ref());
    out.extend(p2p_status(&running, &selected, source));
    out
}

/// A WARN for each GPU the captures show that `nvidia-smi -q` does not describe (among the
/// `selected`, or — where every GPU was asked for (`all`) — beyond the topology's GPUs too).
/// Not a FAIL: a capture of some GPUs (`nvidia-smi -q -i 3` still counts every attached GPU)
/// reads the same as a GPU that did not answer, and the line says both.
fn missing(ev: &Evidence, selected: &[usize], all: bool, source: Source) -> Vec<Check> {
    let Some(inv) = ev.before.as_ref() else {
        return Vec::new();
    };
    inv.missing
        .iter()
        .filter(|m| selected.contains(&m.index) || (all && inv.gpu(m.index).is_none()))
        .map(|m| {
            let ctx = Ctx {
                g: m.index,
                source,
                kind: Some(inv.kind),
            };
            // nvidia-smi's own word that it could not reach the GPU fails; a GPU merely not
            // described (a capture of some GPUs reads the same) warns.
            if m.lost {
                ctx.check(
                    CheckId::Present,
                    Verdict::Fail,
                    format!("GPU {} lost: {}", m.index, m.seen),
                )
                .because(&causes::GPU_LOST)
            } else {
                ctx.check(
                    CheckId::Present,
                    Verdict::Warn,
                    format!("GPU {} not described: {}", m.index, m.seen),
                )
                .because(&causes::GPU_MISSING)
            }
        })
        .collect()
}

/// Other processes or load on the GPU before (or during) the tests: a reason figures may be low.
fn busy(
    ctx: &Ctx,
    before: Option<&GpuInventory>,
    load: Option<&super::GpuLoadObservation>,
    thresholds: &Thresholds,
) -> Check {
    let mut who: Vec<GpuProcess> = before.and_then(|b| b.processes.clone()).unwrap_or_default();
    for p in load.map(|l| l.other_processes.as_slice()).unwrap_or(&[]) {
        if !who.iter().any(|w| w.pid == p.pid) {
            who.push(p.clone());
        }
    }
    let util = before.and_then(|b| b.utilization_gpu_percent);
    let busy_util = util.filter(|u| *u > thresholds.busy_util_percent);
    if !who.is_empty() || busy_util.is_some() {
        let busy = Busy {
            processes: who,
            utilization_percent: busy_util,
        };
        let when = match ctx.kind {
            Some(InventoryKind::Imported) => "when the capture was taken",
            Some(InventoryKind::Catalog) => "as stated",
            _ => "before the tests",
        };
        let mut c = ctx
            .check(
                CheckId::Busy,
                Verdict::Warn,
                format!("another process is using this GPU: {}", busy.describe(when)),
            )
            .because(&causes::CONTENTION);
        c.busy = Some(busy);
        return c;
    }
    // Nothing to say: dropped by `checks` (a PASS with an empty detail).
    ctx.check(CheckId::Busy, Verdict::Pass, "")
}

fn link_text(generation: Option<u32>, width: Option<u32>) -> String {
    format!(
        "Gen{} x{}",
        generation.map_or("?".into(), |g| g.to_string()),
        width.map_or("?".into(), |w| w.to_string())
    )
}

/// PCIe link training: current generation and width against the maximum, under load.
fn pcie_link(
    ctx: &Ctx,
    topo: &Topology,
    before: Option<&GpuInventory>,
    load: Option<&super::GpuLoadObservation>,
) -> Check {
    let inv = before.map(|b| &b.pcie);
    let link = pcie_of(topo, before, ctx.g).unwrap_or_default();
    let (Some(gmax), Some(wmax)) = (link.gen_max, link.width_max) else {
        return ctx.unknown(CheckId::PcieLink, "PCIe maximum generation/width");
    };
    let max_text = link_text(Some(gmax), Some(wmax));
    // The slot (host) allowing less than the GPU can do is a finding of its own.
    let slot_limit = inv.and_then(|p| p.gen_device_max).filter(|d| *d > gmax);
    // The reading to judge: one taken under load, else the idle one.
    let (reading, loaded) = match (load.and_then(|l| l.pcie_under_load), inv) {
        (Some(l), _) => (l, Some("under load")),
        (None, Some(p)) if matches!(p.load, Some(LoadState::UnderLoad)) => {
            (p.link, Some("under load"))
        }
        (None, Some(p)) if matches!(p.load, Some(LoadState::Stated)) => (p.link, Some("as stated")),
        _ => (link, None),
    };
    let (Some(gcur), Some(wcur)) = (reading.gen_current, reading.width_current) else {
        return ctx.unknown(CheckId::PcieLink, "PCIe current generation/width");
    };
    let cur_text = link_text(Some(gcur), Some(wcur));
    let expected = pcie_rate_gbps(gmax, wmax);
    let figure = pcie_rate_gbps(gcur, wcur);
    let with_rates = |mut c: Check| {
        c.figure = figure;
        c.expected = expected;
        c.unit = Some("GB/s".into());
        c.percent = figure.zip(expected).map(|(f, e)| f / e * 100.0);
        c.basis = Some(format!(
            "line rate of PCIe {max_text} per direction (the maximum GPU and slot allow)"
        ));
        c
    };
    if wcur < wmax {
        let mut c = with_rates(ctx.check(CheckId::PcieLink, Verdict::Fail, String::new()));
        narrowed(&mut c, (gcur, wcur), (gmax, wmax), loaded);
        return c.because(&causes::PCIE_DOWNTRAINED);
    }
    if gcur < gmax {
        return match loaded {
            Some(when) => with_rates(ctx.check(
                CheckId::PcieLink,
                Verdict::Fail,
                format!("PCIe {cur_text} {when}, expected {max_text}"),
            ))
            .because(&causes::PCIE_DOWNTRAINED),
            None => ctx
                .check(
                    CheckId::PcieLink,
                    Verdict::Unknown,
                    format!(
                        "PCIe {cur_text} in an idle reading (max {max_text}): idle GPUs lower the generation to save power, not a fault by itself; no reading under load"
                    ),
                )
                .because_text(
                    "only an idle reading exists".to_string(),
                    "run `scalescope check` on the machine: it reads the link while a host copy runs",
                ),
        };
    }
    if let Some(d) = slot_limit {
        return with_rates(ctx.check(
            CheckId::PcieLink,
            Verdict::Warn,
            format!("PCIe {cur_text}, but the GPU supports Gen{d}: the slot or host allows Gen{gmax} only"),
        ))
        .because(&causes::PCIE_SLOT_LIMITED);
    }
    with_rates(ctx.check(
        CheckId::PcieLink,
        Verdict::Pass,
        format!(
            "PCIe {cur_text} {}",
            loaded.unwrap_or("(idle reading, at its maximum)")
        ),
    ))
}

/// GPU `g`'s PCIe link as its first reading (`before`) says, else as the topology does.
fn pcie_of(topo: &Topology, before: Option<&GpuInventory>, g: usize) -> Option<PcieLink> {
    before
        .map(|b| b.pcie.link)
        .or_else(|| topo.gpu(g).map(|x| x.pcie))
}

/// The PCIe maximum (generation, width) of GPU `g`, as its first reading or the topology says.
fn pcie_max(topo: &Topology, ev: &Evidence, g: usize) -> Option<(u32, u32)> {
    let link = pcie_of(topo, ev.before.as_ref().and_then(|i| i.gpu(g)), g)?;
    Some((link.gen_max?, link.width_max?))
}

/// The GPU's name, as its first reading or the topology gives it.
fn gpu_name<'a>(topo: &'a Topology, ev: &'a Evidence, g: usize) -> Option<&'a str> {
    ev.before
        .as_ref()
        .and_then(|i| i.gpu(g))
        .and_then(|b| b.name.as_deref())
        .or_else(|| topo.gpu(g).and_then(|x| x.name.as_deref()))
}

/// `pcie`, GPU `ctx.g`'s PASS line, made a WARN where another selected GPU of the same model
/// allows a faster PCIe maximum: the GPU and its slot agree on less than its siblings' (a slot
/// of lower width or generation, a riser, a BIOS setting), which its own maximum cannot show.
fn below_siblings(
    ctx: &Ctx,
    pcie: Check,
    topo: &Topology,
    ev: &Evidence,
    selected: &[usize],
) -> Check {
    if pcie.verdict != Verdict::Pass {
        return pcie;
    }
    let (Some(mine), Some(name)) = (pcie_max(topo, ev, ctx.g), gpu_name(topo, ev, ctx.g)) else {
        return pcie;
    };
    let rate = |(g, w): (u32, u32)| pcie_rate_gbps(g, w).unwrap_or(0.0);
    let best = selected
        .iter()
        .filter(|&&o| o != ctx.g && gpu_name(topo, ev, o) == Some(name))
        .filter_map(|&o| Some((o, pcie_max(topo, ev, o)?)))
        .max_by(|a, b| rate(a.1).total_cmp(&rate(b.1)));
    match best {
        Some((o, theirs)) if rate(theirs) > rate(mine) => {
            let mut c = ctx.check(
                CheckId::PcieLink,
                Verdict::Warn,
                format!(
                    "PCIe maximum {} where GPU {o}, the same model, allows {}: this GPU's slot, riser or BIOS setting limits it",
                    link_text(Some(mine.0), Some(mine.1)),
                    link_text(Some(theirs.0), Some(theirs.1))
                ),
            );
            c.figure = pcie_rate_gbps(mine.0, mine.1);
            c.expected = pcie_rate_gbps(theirs.0, theirs.1);
            c.unit = Some("GB/s".into());
            c.percent = c.figure.zip(c.expected).map(|(f, e)| f / e * 100.0);
            c.because(&causes::PCIE_BELOW_SIBLINGS)
        }
        _ => pcie,
    }
}

/// A link narrower than its maximum (`now` against `max`, as (generation, width)): a fault
/// whatever the load, as width is not lowered to save power. An idle reading (`loaded` none)'s
/// generation says little (idle GPUs lower it): the figure is then the most the link carries
/// at this width and its maximum generation, as the modeled copies over it take it
/// (model::as_running). Sets `c`'s detail, figure and percent.
fn narrowed(c: &mut Check, now: (u32, u32), max: (u32, u32), loaded: Option<&str>) {
    let (gcur, wcur) = now;
    let (gmax, wmax) = max;
    let (when, figure_gen) = match loaded {
        Some(when) => (when.to_string(), gcur),
        None => (
            format!(
                "(idle reading; the width is not lowered to save power: at most {} under load)",
                link_text(Some(gmax), Some(wcur))
            ),
            gmax,
        ),
    };
    c.detail = format!(
        "PCIe {} {when}, expected {}",
        link_text(Some(gcur), Some(wcur)),
        link_text(Some(gmax), Some(wmax))
    );
    c.figure = pcie_rate_gbps(figure_gen, wcur);
    c.percent = c
        .figure
        .zip(pcie_rate_gbps(gmax, wmax))
        .map(|(f, e)| f / e * 100.0);
}

/// The PCIe replay counter, judged as NVIDIA's DCGM judges it: by its rate between two
/// readings `interval_s` apart (failing at `pcie_replays_per_min`, 8 a minute; growth below it
/// or at an unknown rate warns). A count that did not grow during the load tests passes with
/// its count; a count in one reading (no rate) passes below the limit in all and warns at it.
fn pcie_replay(
    ctx: &Ctx,
    before: Option<&GpuInventory>,
    after: Option<&GpuInventory>,
    interval_s: Option<f64>,
    thresholds: &Thresholds,
) -> Check {
    let b = before.and_then(|g| g.pcie.replay_counter);
    let a = after.and_then(|g| g.pcie.replay_counter);
    let limit = thresholds.pcie_replays_per_min;
    // Whose limit it is: DCGM's 8 by default, a thresholds file's otherwise.
    let whose = if limit == Thresholds::DCGM_PCIE_REPLAYS_PER_MIN {
        "NVIDIA DCGM's limit"
    } else {
        "the thresholds file's limit"
    };
    let check = |v: Verdict, detail: String| ctx.check(CheckId::PcieReplay, v, detail);
    match (b, a) {
        (None, _) => ctx.unknown(CheckId::PcieReplay, "PCIe replay counter"),
        (Some(b), Some(a)) if a > b => {
            let grew = a - b;
            let (verdict, rate) = match interval_s.filter(|s| *s > 0.0) {
                Some(s) => {
                    let per_min = grew as f64 / s * 60.0;
                    let v = if per_min >= limit {
                        Verdict::Fail
                    } else {
                        Verdict::Warn
                    };
                    (
                        v,
                        format!(
                            " in {s:.0} s ({per_min:.1} a minute; they fail at {} a minute, \
                             {whose})",
                            crate::model::validate::number(limit)
                        ),
                    )
                }
                None => (
                    Verdict::Warn,
                    " (when the readings were taken is unknown: no rate)".to_string(),
                ),
            };
            check(
                verdict,
                format!("PCIe replays grew from {b} to {a} between the readings{rate}"),
            )
            .because(&causes::PCIE_REPLAYS)
        }
        (Some(b), Some(a)) if a < b => check(
            Verdict::Unknown,
            format!(
                "PCIe replay counter went from {b} down to {a}: the GPU or driver was reset \
                 between the readings, so how many replays came between them is unknown"
            ),
        ),
        (Some(0), _) => check(
            Verdict::Pass,
            if a.is_some() {
                "PCIe replay counter at 0 and did not grow"
            } else {
                "PCIe replay counter at 0"
            }
            .to_string(),
        ),
        (Some(b), Some(_)) => check(
            Verdict::Pass,
            format!(
                "{b} PCIe replay(s) since the driver loaded, none between the readings (the link \
                 retried a packet at some time, not under this load)"
            ),
        ),
        // Fewer in all than the limit allows in one minute: no minute since the driver loaded
        // can have reached it.
        (Some(b), None) if (b as f64) < limit => check(
            Verdict::Pass,
            format!(
                "{b} PCIe replay(s) since the driver loaded: fewer than {} in all, so never {} \
                 in a minute ({whose})",
                crate::model::validate::number(limit),
                crate::model::validate::number(limit)
            ),
        ),
        (Some(b), None) => check(
            Verdict::Warn,
            format!(
                "{b} PCIe replay(s) since the driver loaded (one reading: no rate; DCGM judges \
                 replays by their rate — read the counter again after a load)"
            ),
        )
        .because(&causes::PCIE_REPLAYS),
    }
}

/// ECC mode and error counters.
fn ecc(ctx: &Ctx, before: Option<&GpuInventory>, after: Option<&GpuInventory>) -> Check {
    let Some(e) = before.map(|g| &g.ecc) else {
        return ctx.unknown(CheckId::Ecc, "ECC state");
    };
    if let Some(v) = e.volatile_uncorrected.filter(|v| *v > 0) {
        return ctx
            .check(
                CheckId::Ecc,
                Verdict::Fail,
                format!("{v} uncorrectable ECC error(s) since the driver loaded"),
            )
            .because(&causes::ECC_UNCORRECTABLE);
    }
    if let Some(a) = after.and_then(|g| g.ecc.volatile_uncorrected)
        && a > e.volatile_uncorrected.unwrap_or(0)
    {
        return ctx
            .check(
                CheckId::Ecc,
                Verdict::Fail,
                format!("{a} uncorrectable ECC error(s) after the load tests"),
            )
            .because(&causes::ECC_UNCORRECTABLE);
    }
    if e.enabled == Some(false) {
        return ctx
            .check(CheckId::Ecc, Verdict::Warn, "ECC is disabled")
            .because(&causes::ECC_OFF);
    }
    if let Some(v) = e.aggregate_uncorrected.filter(|v| *v > 0) {
        return ctx
            .check(
                CheckId::Ecc,
                Verdict::Warn,
                format!("{v} uncorrectable ECC error(s) in the GPU's lifetime, none since the driver loaded"),
            )
            .because(&causes::ECC_HISTORY);
    }
    if let (Some(b), Some(a)) = (
        e.volatile_corrected,
        after.and_then(|g| g.ecc.volatile_corrected),
    ) && a > b
    {
        return ctx
            .check(
                CheckId::Ecc,
                Verdict::Warn,
                format!("correctable ECC errors grew from {b} to {a} during the load tests"),
            )
            .because(&causes::ECC_CORRECTED_GROWING);
    }
    if e.volatile_uncorrected.is_none() && e.aggregate_uncorrected.is_none() {
        return ctx.unknown(CheckId::Ecc, "ECC error counters");
    }
    ctx.check(
        CheckId::Ecc,
        Verdict::Pass,
        format!(
            "ECC {}, 0 uncorrectable errors{}",
            match e.enabled {
                Some(true) => "on",
                Some(false) => "off",
                None => "mode unknown",
            },
            match e.volatile_corrected {
                Some(c) if c > 0 => format!(", {c} corrected since the driver loaded"),
                _ => String::new(),
            }
        ),
    )
}

/// Retired pages and remapped rows.
fn memory_repair(ctx: &Ctx, before: Option<&GpuInventory>) -> Check {
    let Some(e) = before.map(|g| &g.ecc) else {
        return ctx.unknown(CheckId::MemoryRepair, "retired pages and remapped rows");
    };
    let found =
        |v: Verdict, d: String, c: &Cause| ctx.check(CheckId::MemoryRepair, v, d).because(c);
    if e.unrepairable == Some(true) {
        return found(
            Verdict::Fail,
            "the driver reports unrepairable memory".into(),
            &causes::MEMORY_UNREPAIRABLE,
        );
    }
    if e.sram_threshold_exceeded == Some(true) {
        return found(
            Verdict::Fail,
            "uncorrectable SRAM errors exceeded the threshold".into(),
            &causes::SRAM_THRESHOLD,
        );
    }
    if e.remap_failure == Some(true) {
        return found(
            Verdict::Fail,
            "row remapping failed".into(),
            &causes::REMAP_FAILURE,
        );
    }
    if e.remap_pending == Some(true) || e.retired_pending == Some(true) {
        return found(
            Verdict::Fail,
            format!(
                "{} pending: applied at the next GPU reset",
                if e.remap_pending == Some(true) {
                    "a row remapping is"
                } else {
                    "a page retirement is"
                }
            ),
            &causes::REPAIR_PENDING,
        );
    }
    let unc = e.remapped_rows_uncorrectable.unwrap_or(0) + e.retired_pages_dbe.unwrap_or(0);
    if unc > 0 {
        return found(
            Verdict::Warn,
            format!("{unc} row(s)/page(s) remapped or retired for uncorrectable errors"),
            &causes::MEMORY_REPAIRED,
        );
    }
    let any_known = [
        e.remapped_rows_correctable,
        e.remapped_rows_uncorrectable,
        e.retired_pages_sbe,
        e.retired_pages_dbe,
    ]
    .iter()
    .any(Option::is_some)
        || e.remap_pending.is_some()
        || e.remap_failure.is_some();
    if !any_known {
        return ctx.unknown(CheckId::MemoryRepair, "retired pages and remapped rows");
    }
    ctx.check(
        CheckId::MemoryRepair,
        Verdict::Pass,
        format!(
            "no pending or failed memory repair{}",
            match e.remapped_rows_correctable {
                Some(c) if c > 0 => format!(", {c} row(s) remapped for correctable errors"),
                _ => String::new(),
            }
        ),
    )
}

/// What the driver asks to be done to bring the GPU back (`nvidia-smi -q`'s GPU Recovery
/// Action): a FAIL where it asks for one; no line where it asks nothing (the parsers read
/// nvidia-smi's `None` as no value) or it was not read.
fn recovery(ctx: &Ctx, before: Option<&GpuInventory>) -> Option<Check> {
    let action = before?.recovery_action.as_deref()?;
    Some(
        ctx.check(
            CheckId::Recovery,
            Verdict::Fail,
            format!("the driver asks for a recovery action: {action}"),
        )
        .because(&causes::RECOVERY_ASKED),
    )
}

/// The GPU's NVLink fabric registration on NVSwitch systems: a FAIL (as `nvlink_links`) where
/// it failed; no line otherwise (`nvlink_links` judges the links).
fn fabric(ctx: &Ctx, before: Option<&GpuInventory>) -> Option<Check> {
    let status = before?.fabric_status.as_deref()?;
    status.eq_ignore_ascii_case("failure").then(|| {
        ctx.check(
            CheckId::NvlinkLinks,
            Verdict::Fail,
            format!("NVLink fabric registration: {status} (nvidia-smi -q, Fabric Status)"),
        )
        .because(&causes::NVLINK_INACTIVE)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::health::Evidence;
    use crate::health::nvlink_checks::nvlink_module;
    use crate::model::LinkKind;
    use crate::model::{ComputeMode, P2pStatus, ThrottleReason};
    use crate::model::{Gpu, Inventory, NvLinkState, TopologySource};

    fn topo(n: usize, kind: LinkKind) -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..n)
            .map(|index| Gpu {
                index,
                ..Default::default()
            })
            .collect();
        t.normalize();
        for l in &mut t.links {
            l.kind = Some(kind);
        }
        t
    }

    fn healthy(n: usize) -> Inventory {
        let mut inv = Inventory::new(InventoryKind::Imported, vec!["x".into()]);
        for g in 0..n {
            let gi = inv.gpu_mut(g);
            gi.name = Some("NVIDIA H200".into());
            gi.pcie.link = PcieLink {
                gen_current: Some(5),
                gen_max: Some(5),
                width_current: Some(16),
                width_max: Some(16),
            };
            gi.pcie.load = Some(LoadState::Idle);
            gi.pcie.replay_counter = Some(0);
            gi.nvlinks = Some(
                (0..18)
                    .map(|link| NvLinkState {
                        link,
                        active: Some(true),
                        gbps: Some(26.562),
                        crc_errors: Some(0),
                        replay_errors: Some(0),
                        recovery_errors: Some(0),
                    })
                    .collect(),
            );
            gi.ecc.enabled = Some(true);
            gi.ecc.volatile_uncorrected = Some(0);
            gi.ecc.aggregate_uncorrected = Some(0);
            gi.ecc.remapped_rows_uncorrectable = Some(0);
            gi.ecc.remap_pending = Some(false);
            gi.ecc.remap_failure = Some(false);
            gi.throttle = Some(vec![ThrottleReason::GpuIdle]);
        }
        inv
    }

    fn run(inv: Inventory, after: Option<Inventory>) -> Vec<Check> {
        let ev = Evidence {
            before: Some(inv),
            after,
            load: None,
        };
        checks(&topo(2, LinkKind::Nv(18)), &ev, &Thresholds::default(), &[])
    }

    fn find(cs: &[Check], id: CheckId, gpu: usize) -> &Check {
        cs.iter()
            .find(|c| c.check == id && c.gpu == Some(gpu))
            .unwrap_or_else(|| panic!("no {id} for GPU {gpu}: {cs:#?}"))
    }

    #[test]
    fn a_healthy_capture_has_no_fail_or_warn() {
        let cs = run(healthy(2), None);
        assert!(
            cs.iter()
                .all(|c| matches!(c.verdict, Verdict::Pass | Verdict::Unknown)),
            "{cs:#?}"
        );
        assert_eq!(find(&cs, CheckId::PcieLink, 1).verdict, Verdict::Pass);
        assert_eq!(
            find(&cs, CheckId::NvlinkLinks, 0).detail,
            "18 of 18 NVLinks active"
        );
        // An idle capture says nothing about clocks under load.
        assert_eq!(find(&cs, CheckId::Clocks, 0).verdict, Verdict::Unknown);
    }

    #[test]
    fn narrow_pcie_fails_idle_low_generation_does_not() {
        let mut inv = healthy(2);
        inv.gpu_mut(1).pcie.link.gen_current = Some(4);
        inv.gpu_mut(1).pcie.link.width_current = Some(8);
        let cs = run(inv.clone(), None);
        let c = find(&cs, CheckId::PcieLink, 1);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.detail.contains("Gen4 x8") && c.detail.contains("Gen5 x16"),
            "{}",
            c.detail
        );
        assert!(c.fix.as_deref().unwrap().contains("reseat the card"));
        // Gen1 x16 when idle: not a fault by itself.
        inv.gpu_mut(1).pcie.link.gen_current = Some(1);
        inv.gpu_mut(1).pcie.link.width_current = Some(16);
        let c = find(&run(inv.clone(), None), CheckId::PcieLink, 1).clone();
        assert_eq!(c.verdict, Verdict::Unknown);
        assert!(c.detail.contains("idle"), "{}", c.detail);
        // The same reading under load is a fault.
        inv.gpu_mut(1).pcie.load = Some(LoadState::UnderLoad);
        let c = find(&run(inv, None), CheckId::PcieLink, 1).clone();
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.detail.contains("under load"), "{}", c.detail);
    }

    #[test]
    fn an_nvlink_down_fails_and_names_the_link() {
        let mut inv = healthy(2);
        inv.gpu_mut(1).nvlinks.as_mut().unwrap()[7].active = Some(false);
        let cs = run(inv, None);
        let c = find(&cs, CheckId::NvlinkLinks, 1);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.detail.contains("17 of 18") && c.detail.contains("link 7"),
            "{}",
            c.detail
        );
        assert!(c.cause.as_deref().unwrap().contains("fabric manager"));
        assert_eq!(find(&cs, CheckId::NvlinkLinks, 0).verdict, Verdict::Pass);
    }

    #[test]
    fn pcie_cards_are_judged_by_their_peers() {
        assert!(nvlink_module("NVIDIA H200"));
        assert!(nvlink_module("NVIDIA H100 80GB HBM3"));
        assert!(nvlink_module("NVIDIA A100-SXM4-80GB"));
        assert!(!nvlink_module("NVIDIA H100 PCIe"));
        assert!(!nvlink_module("NVIDIA H200 NVL"));
        assert!(!nvlink_module("NVIDIA A100-PCIE-40GB"));
        let mut inv = healthy(2);
        for g in 0..2 {
            let gi = inv.gpu_mut(g);
            gi.name = Some("NVIDIA H100 PCIe".into());
            for l in gi.nvlinks.as_mut().unwrap().iter_mut().skip(12) {
                l.active = Some(false);
            }
        }
        // 12 of 18 on both cards: the bridge's links.
        let c = find(&run(inv.clone(), None), CheckId::NvlinkLinks, 0).clone();
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        // One card with fewer than its peer fails.
        inv.gpu_mut(1).nvlinks.as_mut().unwrap()[0].active = Some(false);
        assert_eq!(
            find(&run(inv.clone(), None), CheckId::NvlinkLinks, 1).verdict,
            Verdict::Fail
        );
        // No bridge at all: NVLink not in use, no line.
        for g in 0..2 {
            for l in inv.gpu_mut(g).nvlinks.as_mut().unwrap() {
                l.active = Some(false);
            }
        }
        let t = topo(2, LinkKind::Phb);
        let ev = Evidence {
            before: Some(inv.clone()),
            ..Default::default()
        };
        let cs = checks(&t, &ev, &Thresholds::default(), &[]);
        assert!(
            cs.iter().all(|c| c.check != CheckId::NvlinkLinks),
            "{cs:#?}"
        );
        // Every link of an SXM module down (fabric manager stopped) fails.
        for g in 0..2 {
            inv.gpu_mut(g).name = Some("NVIDIA H200".into());
        }
        let ev = Evidence {
            before: Some(inv),
            ..Default::default()
        };
        let cs = checks(&t, &ev, &Thresholds::default(), &[]);
        assert_eq!(find(&cs, CheckId::NvlinkLinks, 0).verdict, Verdict::Fail);
    }

    #[test]
    fn growing_counters_fail_present_ones_warn() {
        let before = healthy(2);
        let mut after = healthy(2);
        after.gpu_mut(0).nvlinks.as_mut().unwrap()[3].replay_errors = Some(5);
        after.gpu_mut(1).pcie.replay_counter = Some(2);
        let cs = run(before, Some(after.clone()));
        let c = find(&cs, CheckId::NvlinkErrors, 0);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.detail.contains("link 3 replay +5"), "{}", c.detail);
        // PCIe replays that grew at an unknown rate: a warning (their rate is what fails).
        assert_eq!(find(&cs, CheckId::PcieReplay, 1).verdict, Verdict::Warn);
        assert_eq!(find(&cs, CheckId::NvlinkErrors, 1).verdict, Verdict::Pass);
        // One reading with errors: a warning, not a fault (2 PCIe replays in all: never 8 in a
        // minute, a pass).
        let cs = run(after, None);
        assert_eq!(find(&cs, CheckId::NvlinkErrors, 0).verdict, Verdict::Warn);
        assert_eq!(find(&cs, CheckId::PcieReplay, 1).verdict, Verdict::Pass);
    }

    /// PCIe replays are judged by their rate (DCGM's 8 a minute); a count that did not grow
    /// under the load passes; one reading of a count below the limit passes, at it warns.
    #[test]
    fn pcie_replays_fail_only_at_their_rate() {
        let at = |t: &str, mut inv: Inventory| {
            inv.captured_at = Some(t.to_string());
            inv
        };
        let replays = |n: u64, inv: &mut Inventory| inv.gpu_mut(1).pcie.replay_counter = Some(n);
        let mut before = at("2026-11-23T06:25:00.000Z", healthy(2));
        replays(1, &mut before);
        let verdict = |after_t: &str, n: u64| {
            let mut after = at(after_t, healthy(2));
            replays(n, &mut after);
            find(&run(before.clone(), Some(after)), CheckId::PcieReplay, 1).clone()
        };
        // 1 → 3 in 8 s: 15 a minute.
        let c = verdict("2026-11-23T06:25:08.000Z", 3);
        assert_eq!(c.verdict, Verdict::Fail, "{}", c.detail);
        assert!(c.detail.contains("15.0 a minute"), "{}", c.detail);
        // 1 → 3 in 60 s: 2 a minute, below the limit.
        let c = verdict("2026-11-23T06:26:00.000Z", 3);
        assert_eq!(c.verdict, Verdict::Warn, "{}", c.detail);
        // 1 → 1: one replay since the driver loaded, none under the load (a healthy H200's).
        let c = verdict("2026-11-23T06:26:00.000Z", 1);
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        assert!(c.detail.starts_with("1 PCIe replay(s)"), "{}", c.detail);
        // One reading: no rate — but 1 in all can never have been 8 in a minute; 8 can.
        let c = find(&run(before.clone(), None), CheckId::PcieReplay, 1).clone();
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        assert!(c.detail.contains("fewer than 8 in all"), "{}", c.detail);
        let mut eight = before.clone();
        replays(8, &mut eight);
        let c = find(&run(eight, None), CheckId::PcieReplay, 1).clone();
        assert_eq!(c.verdict, Verdict::Warn, "{}", c.detail);
        // The limit is the thresholds file's.
        let mut after = at("2026-11-23T06:26:00.000Z", healthy(2));
        replays(3, &mut after);
        let ev = Evidence {
            before: Some(before),
            after: Some(after),
            load: None,
        };
        let strict = Thresholds {
            pcie_replays_per_min: 1.0,
            ..Default::default()
        };
        let cs = checks(&topo(2, LinkKind::Nv(18)), &ev, &strict, &[]);
        assert_eq!(find(&cs, CheckId::PcieReplay, 1).verdict, Verdict::Fail);
    }

    /// CRC errors are judged by their rate over the readings' interval (DCGM's 100 per second).
    #[test]
    fn crc_errors_fail_only_at_their_rate() {
        let at = |t: &str, mut inv: Inventory| {
            inv.captured_at = Some(t.to_string());
            inv
        };
        let before = at("2026-11-23T06:25:00.000Z", healthy(2));
        let mut slow = healthy(2);
        // 13 + 36 CRC errors in 8 s on GPU 0 (what a healthy H200 pair showed): 6.1/s.
        slow.gpu_mut(0).nvlinks.as_mut().unwrap()[0].crc_errors = Some(13);
        slow.gpu_mut(0).nvlinks.as_mut().unwrap()[5].crc_errors = Some(36);
        let cs = run(
            before.clone(),
            Some(at("2026-11-23T06:25:08.000Z", slow.clone())),
        );
        let c = find(&cs, CheckId::NvlinkErrors, 0);
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        assert!(c.detail.contains("+49 in 8 s (6.1/s"), "{}", c.detail);
        // The same count in a quarter second is 196/s: a fault.
        let cs = run(
            before.clone(),
            Some(at("2026-11-23T06:25:00.250Z", slow.clone())),
        );
        assert_eq!(find(&cs, CheckId::NvlinkErrors, 0).verdict, Verdict::Fail);
        // A stricter limit from the thresholds file fails the slow rate too.
        let strict = Thresholds {
            nvlink_crc_per_s: 5.0,
            ..Thresholds::default()
        };
        let ev = Evidence {
            before: Some(before.clone()),
            after: Some(at("2026-11-23T06:25:08.000Z", slow.clone())),
            ..Default::default()
        };
        let cs = checks(&topo(2, LinkKind::Nv(18)), &ev, &strict, &[]);
        assert_eq!(find(&cs, CheckId::NvlinkErrors, 0).verdict, Verdict::Fail);
        // Readings without times: the rate is unknown, a warning.
        let cs = run(healthy(2), Some(slow.clone()));
        assert_eq!(find(&cs, CheckId::NvlinkErrors, 0).verdict, Verdict::Warn);
        // One reading with CRC counts only: they pass, named.
        let cs = run(slow, None);
        let c = find(&cs, CheckId::NvlinkErrors, 0);
        assert_eq!(c.verdict, Verdict::Pass);
        assert!(c.detail.contains("link 5: 36 CRC"), "{}", c.detail);
    }

    #[test]
    fn ecc_errors_and_pending_repairs() {
        let mut inv = healthy(2);
        inv.gpu_mut(0).ecc.volatile_uncorrected = Some(1);
        inv.gpu_mut(1).ecc.remap_pending = Some(true);
        let cs = run(inv, None);
        assert_eq!(find(&cs, CheckId::Ecc, 0).verdict, Verdict::Fail);
        assert!(
            find(&cs, CheckId::Ecc, 0)
                .fix
                .as_deref()
                .unwrap()
                .contains("nvidia-smi -r")
        );
        assert_eq!(find(&cs, CheckId::MemoryRepair, 1).verdict, Verdict::Fail);
        assert_eq!(find(&cs, CheckId::Ecc, 1).verdict, Verdict::Pass);
    }

    #[test]
    fn unknown_values_are_never_a_pass() {
        let mut inv = Inventory::new(InventoryKind::Imported, vec!["x".into()]);
        inv.gpu_mut(0);
        inv.gpu_mut(1);
        let cs = run(inv, None);
        for id in [
            CheckId::PcieLink,
            CheckId::NvlinkLinks,
            CheckId::PcieReplay,
            CheckId::Ecc,
            CheckId::MemoryRepair,
            CheckId::Clocks,
        ] {
            assert_eq!(find(&cs, id, 0).verdict, Verdict::Unknown, "{id}");
        }
    }

    #[test]
    fn settings_are_judged_and_a_limit_lowered_during_the_tests_is_seen() {
        let mut inv = healthy(2);
        for g in 0..2 {
            let st = &mut inv.gpu_mut(g).settings;
            st.power_limit_w = Some(700.0);
            st.power_limit_default_w = Some(700.0);
            st.app_clock_mhz = Some(1980);
            st.app_clock_default_mhz = Some(1980);
            st.persistence = Some(g == 0);
            st.mig_current = Some(false);
            st.mig_pending = Some(g == 1);
            st.compute_mode = Some(if g == 0 {
                ComputeMode::Default
            } else {
                ComputeMode::ExclusiveProcess
            });
        }
        let ev = Evidence {
            before: Some(inv.clone()),
            after: None,
            load: Some(crate::health::LoadObservation {
                samples: 10,
                interval_ms: 10,
                host_cpu_percent: None,
                gpus: vec![
                    crate::health::GpuLoadObservation {
                        index: 0,
                        power_limit_min_w: Some(200.0),
                        throttle_seen: vec![ThrottleReason::SwPowerCap],
                        ..Default::default()
                    },
                    crate::health::GpuLoadObservation {
                        index: 1,
                        throttle_seen: vec![ThrottleReason::ApplicationsClocks],
                        power_limit_min_w: Some(700.0),
                        ..Default::default()
                    },
                ],
            }),
        };
        let t = topo(2, LinkKind::Nv(18));
        let cs = checks(&t, &ev, &Thresholds::default(), &[]);
        let p = find(&cs, CheckId::PowerLimit, 0);
        assert_eq!(p.verdict, Verdict::Fail, "{p:?}");
        assert!(
            p.detail.contains("200 W (lowered during the tests)"),
            "{}",
            p.detail
        );
        assert_eq!(find(&cs, CheckId::PowerLimit, 1).verdict, Verdict::Pass);
        assert_eq!(find(&cs, CheckId::ClockSettings, 0).verdict, Verdict::Pass);
        let c = find(&cs, CheckId::ClockSettings, 1);
        assert_eq!(c.verdict, Verdict::Warn);
        assert_eq!(c.cause.as_deref(), Some(causes::CLOCKS_SET.likely));
        assert_eq!(find(&cs, CheckId::Persistence, 0).verdict, Verdict::Pass);
        assert_eq!(find(&cs, CheckId::Persistence, 1).verdict, Verdict::Warn);
        let m = find(&cs, CheckId::MigMode, 1);
        assert_eq!(m.verdict, Verdict::Warn);
        assert!(
            m.detail.contains("on after the next GPU reset"),
            "{}",
            m.detail
        );
        assert_eq!(find(&cs, CheckId::ComputeMode, 1).verdict, Verdict::Warn);
        // A capture with no settings at all (an NVLink capture) gets no settings lines.
        let cs = run(healthy(2), None);
        assert!(cs.iter().all(|c| c.check != CheckId::PowerLimit));
        // Application clocks set below their default warn from the capture alone.
        inv.gpu_mut(0).settings.app_clock_mhz = Some(1200);
        let cs = run(inv, None);
        let c = find(&cs, CheckId::ClockSettings, 0);
        assert_eq!(c.verdict, Verdict::Warn);
        assert!(c.fix.as_deref().unwrap().contains("-rac"), "{c:?}");
    }

    #[test]
    fn throttle_and_busy_evidence_during_load() {
        let mut ev = Evidence {
            before: Some(healthy(2)),
            after: None,
            load: Some(crate::health::LoadObservation {
                samples: 10,
                interval_ms: 10,
                host_cpu_percent: None,
                gpus: vec![
                    crate::health::GpuLoadObservation {
                        index: 0,
                        throttle_seen: vec![ThrottleReason::HwThermalSlowdown],
                        ..Default::default()
                    },
                    crate::health::GpuLoadObservation {
                        index: 1,
                        other_processes: vec![GpuProcess {
                            pid: 4242,
                            name: Some("python3".into()),
                        }],
                        ..Default::default()
                    },
                ],
            }),
        };
        let t = topo(2, LinkKind::Nv(18));
        let cs = checks(&t, &ev, &Thresholds::default(), &[]);
        assert_eq!(find(&cs, CheckId::Clocks, 0).verdict, Verdict::Fail);
        assert_eq!(find(&cs, CheckId::Clocks, 1).verdict, Verdict::Pass);
        let b = find(&cs, CheckId::Busy, 1);
        assert_eq!(b.verdict, Verdict::Warn);
        assert!(b.detail.contains("pid 4242 (python3)"), "{}", b.detail);
        let busy = b.busy.as_ref().expect("the finding holds its processes");
        assert_eq!(busy.processes[0].pid, 4242);
        assert_eq!(busy.processes[0].name.as_deref(), Some("python3"));
        assert!(
            cs.iter()
                .all(|c| !(c.check == CheckId::Busy && c.gpu == Some(0)))
        );
        // A reading under load at a lower generation fails.
        ev.load.as_mut().unwrap().gpus[0].pcie_under_load = Some(PcieLink {
            gen_current: Some(4),
            gen_max: Some(5),
            width_current: Some(16),
            width_max: Some(16),
        });
        let cs = checks(&t, &ev, &Thresholds::default(), &[]);
        let c = find(&cs, CheckId::PcieLink, 0);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.detail.contains("Gen4 x16 under load, expected Gen5 x16"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn p2p_refused_under_a_switch_names_acs() {
        let mut t = topo(2, LinkKind::Pix);
        for p in &mut t.p2p {
            p.caps.read = Some(P2pStatus::Cns);
            p.caps.write = Some(P2pStatus::Cns);
        }
        let cs = p2p_status(&t, &[0, 1], Source::Measured);
        assert_eq!(cs.len(), 1);
        assert_eq!(cs[0].verdict, Verdict::Fail);
        assert!(cs[0].fix.as_deref().unwrap().contains("iommu=pt"));
        // Across sockets P2P is not expected: no check.
        let mut t = topo(2, LinkKind::Sys);
        for p in &mut t.p2p {
            p.caps.read = Some(P2pStatus::Ns);
        }
        assert!(p2p_status(&t, &[0, 1], Source::Measured).is_empty());
    }
}
