//! The NVLink checks of an inventory (called from `state_checks.rs`): the links active against
//! the GPU's design and its peers of the same model, and the links' error counters — grown
//! during the load tests, or counted in one reading — with what each link says: its error
//! counter, the links listed inactive, the most links a peer of the same model has.

use super::causes;
use super::gpu_ctx::Ctx;
use super::{Check, CheckId, Evidence, Thresholds, Verdict};
use crate::model::{GpuInventory, LinkKind, Topology};

/// The most active NVLinks any other GPU (not `g`) of model `name` had before the tests.
pub(super) fn peers_most_links(ev: &Evidence, g: usize, name: &Option<String>) -> Option<u32> {
    ev.before
        .as_ref()
        .map(|inv| {
            inv.gpus
                .iter()
                .filter(|o| o.index != g && o.name == *name)
                .filter_map(|o| o.nvlinks_active())
                .max()
        })
        .unwrap_or(None)
}

/// ` (links 3, 7 inactive)`: the links listed as inactive; empty when none is.
pub(super) fn inactive_links_text(listed: Option<&[crate::model::NvLinkState]>) -> String {
    let down: Vec<String> = listed
        .map(|v| {
            v.iter()
                .filter(|l| l.active == Some(false))
                .map(|l| l.link.to_string())
                .collect()
        })
        .unwrap_or_default();
    if down.is_empty() {
        return String::new();
    }
    format!(
        " (link{} {} inactive)",
        if down.len() > 1 { "s" } else { "" },
        down.join(", ")
    )
}

/// Reads one error counter of an NVLink.
pub(super) type CounterOf = fn(&crate::model::NvLinkState) -> Option<u64>;

/// One NVLink counter of every link that has it: (link, count).
pub(super) fn nv_counter(g: Option<&GpuInventory>, f: CounterOf) -> Vec<(u32, u64)> {
    g.and_then(|g| g.nvlinks.as_ref())
        .map(|v| v.iter().filter_map(|l| f(l).map(|c| (l.link, c))).collect())
        .unwrap_or_default()
}

/// True for GPU modules whose every NVLink is wired (SXM/HGX baseboards, Grace superchips), from
/// the name nvidia-smi gives them: `NVIDIA H200`, `NVIDIA H100 80GB HBM3`, `NVIDIA A100-SXM4-80GB`;
/// not PCIe cards (`… PCIe`, `… NVL`), whose bridges connect a subset.
pub(super) fn nvlink_module(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    if n.contains("PCIE") || n.contains(" NVL") {
        return false;
    }
    n.contains("SXM")
        || n.contains("HBM3")
        || [
            "H200", "H100", "H800", "H20", "B200", "B300", "GB200", "GB300", "GH200",
        ]
        .iter()
        .any(|t| n.contains(t))
}

/// NVLinks active against the links the GPU has and against its peers of the same model.
pub(super) fn nvlink_links(
    ctx: &Ctx,
    topo: &Topology,
    before: Option<&GpuInventory>,
    ev: &Evidence,
) -> Option<Check> {
    let has_nv_pairs = topo
        .links
        .iter()
        .any(|l| (l.a == ctx.g || l.b == ctx.g) && matches!(l.kind, Some(LinkKind::Nv(_))));
    let listed = before.and_then(|b| b.nvlinks.as_ref());
    let active = before.and_then(|b| b.nvlinks_active());
    let expected = before.and_then(|b| b.nvlinks_expected).or_else(|| {
        listed
            .filter(|v| !v.is_empty() && v.iter().any(|l| l.active.is_some()))
            .map(|v| v.len() as u32)
    });
    // States known?
    let states_known = listed.is_some_and(|v| v.iter().any(|l| l.active.is_some()));
    if !states_known {
        if has_nv_pairs || expected.is_some_and(|e| e > 0) {
            return Some(
                ctx.check(
                    CheckId::NvlinkLinks,
                    Verdict::Unknown,
                    "NVLink states not read (an `nvidia-smi -q` capture has none: import `nvidia-smi nvlink -s`)",
                )
                .because(&causes::NOT_READ),
            );
        }
        return None;
    }
    let active = active.unwrap_or(0);
    let expected = expected.unwrap_or(active);
    if expected == 0 {
        return None;
    }
    // Peers of the same model: the most active links any of them has.
    let name = before.and_then(|b| b.name.clone());
    let peer_best = peers_most_links(ev, ctx.g, &name);
    let peers_text = match peer_best {
        Some(p) if p > active => format!("; its peers have {p}"),
        _ => String::new(),
    };
    let which = inactive_links_text(listed.map(Vec::as_slice));
    // Every link a module (SXM, or stated by a catalog / listed by `nvlink -e`) has must be up;
    // a PCIe card uses the links its bridge connects, so only its peers tell what it should have.
    let strict = before.is_some_and(|b| b.nvlinks_expected.is_some())
        || name.as_deref().is_some_and(nvlink_module);
    let fewer_than_peers = peer_best.is_some_and(|p| p > active);
    let mut c = if fewer_than_peers || (strict && active < expected) {
        ctx.check(
            CheckId::NvlinkLinks,
            Verdict::Fail,
            format!("{active} of {expected} NVLinks active{which}{peers_text}"),
        )
        .because(&causes::NVLINK_INACTIVE)
    } else if active < expected && active == 0 {
        // A PCIe card without a bridge: NVLink is not in use.
        return None;
    } else if active < expected && peer_best.is_none() {
        ctx.check(
            CheckId::NvlinkLinks,
            Verdict::Unknown,
            format!(
                "{active} of {expected} NVLinks active{which}: a PCIe card's bridge may use fewer, and no peer of the same model to compare with"
            ),
        )
    } else if active < expected {
        ctx.check(
            CheckId::NvlinkLinks,
            Verdict::Pass,
            format!("{active} of {expected} NVLinks active, as on its peers of the same model (the bridge's links)"),
        )
    } else {
        ctx.check(
            CheckId::NvlinkLinks,
            Verdict::Pass,
            format!("{active} of {expected} NVLinks active"),
        )
    };
    c.figure = Some(f64::from(active));
    c.expected = Some(f64::from(expected));
    c.percent = Some(f64::from(active) / f64::from(expected) * 100.0);
    c.unit = Some("links".into());
    Some(c)
}

/// Seconds between the readings before and after the load tests, when both say when they were
/// taken.
pub(super) fn reading_interval_s(ev: &Evidence) -> Option<f64> {
    let b = ev.before.as_ref()?.captured_unix_s()?;
    let a = ev.after.as_ref()?.captured_unix_s()?;
    (a >= b).then_some(a - b)
}

/// NVLink CRC, replay and recovery counters. As NVIDIA's DCGM judges them
/// (`dcgm_gpu_hardware_limits.h`, `DcgmHealthWatch::MonitorNVLink`): replay and recovery errors
/// that grew during the run fail; CRC errors are corrected by the link's own retry and fail only
/// at `thresholds.nvlink_crc_per_s` (100 per second, "RM has informed us that CRC errors only
/// matter at rates of 100+ per second") or more over the GPU's links; below that they pass with
/// their count and rate. In one reading, replay or recovery errors warn; CRC counts alone pass.
pub(super) fn nvlink_errors(
    ctx: &Ctx,
    topo: &Topology,
    before: Option<&GpuInventory>,
    after: Option<&GpuInventory>,
    interval_s: Option<f64>,
    thresholds: &Thresholds,
) -> Option<Check> {
    let counters: [(&str, CounterOf); 3] = [
        ("CRC", |l| l.crc_errors),
        ("replay", |l| l.replay_errors),
        ("recovery", |l| l.recovery_errors),
    ];
    let b: Vec<(&str, Vec<(u32, u64)>)> = counters
        .iter()
        .map(|(n, f)| (*n, nv_counter(before, *f)))
        .collect();
    let known = b.iter().any(|(_, v)| !v.is_empty());
    let has_nv = topo
        .links
        .iter()
        .any(|l| (l.a == ctx.g || l.b == ctx.g) && matches!(l.kind, Some(LinkKind::Nv(_))))
        || before
            .and_then(|g| g.nvlinks.as_ref())
            .is_some_and(|v| !v.is_empty());
    if !known {
        return has_nv.then(|| ctx.unknown(CheckId::NvlinkErrors, "NVLink error counters"));
    }
    if let Some(after) = after {
        let a: Vec<(&str, Vec<(u32, u64)>)> = counters
            .iter()
            .map(|(n, f)| (*n, nv_counter(Some(after), *f)))
            .collect();
        // (counter, link, growth)
        let mut grew: Vec<(&str, u32, u64)> = Vec::new();
        for ((name, bv), (_, av)) in b.iter().zip(&a) {
            for (link, va) in av {
                if let Some((_, vb)) = bv.iter().find(|(l, _)| l == link)
                    && va > vb
                {
                    grew.push((name, *link, va - vb));
                }
            }
        }
        if a.iter().any(|(_, v)| !v.is_empty()) {
            return Some(nvlink_errors_grown(ctx, &grew, interval_s, thresholds));
        }
    }
    Some(nvlink_errors_counted(ctx, &b, thresholds))
}

/// NVLink error counters that grew between two readings (`grew`: counter, link, growth)
/// `interval_s` apart: replay or recovery growth fails; CRC growth fails at the limit's rate,
/// passes below it, and warns when the interval is unknown.
fn nvlink_errors_grown(
    ctx: &Ctx,
    grew: &[(&str, u32, u64)],
    interval_s: Option<f64>,
    thresholds: &Thresholds,
) -> Check {
    let list = |only_crc: bool| {
        grew.iter()
            .filter(|(n, _, _)| (*n == "CRC") == only_crc)
            .map(|(n, l, d)| format!("link {l} {n} +{d}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let crc: u64 = grew
        .iter()
        .filter(|(n, _, _)| *n == "CRC")
        .map(|(_, _, d)| d)
        .sum();
    let fatal = grew.iter().any(|(n, _, _)| *n != "CRC");
    let limit = thresholds.nvlink_crc_per_s;
    let rate = interval_s.filter(|s| *s > 0.0).map(|s| crc as f64 / s);
    let crc_text = |rate: Option<f64>| match rate {
        Some(r) => format!(
            "CRC errors +{crc} in {:.0} s ({r:.1}/s over all links; they fail at {limit}/s) — {}",
            interval_s.unwrap_or_default(),
            list(true)
        ),
        None => format!(
            "CRC errors +{crc} (when the readings were taken is unknown) — {}",
            list(true)
        ),
    };
    if fatal {
        let mut detail = format!(
            "NVLink replay/recovery errors grew between the readings: {}",
            list(false)
        );
        if crc > 0 {
            detail.push_str(&format!("; {}", crc_text(rate)));
        }
        ctx.check(CheckId::NvlinkErrors, Verdict::Fail, detail)
            .because(&causes::NVLINK_ERRORS_GROWING)
    } else if crc == 0 {
        ctx.check(
            CheckId::NvlinkErrors,
            Verdict::Pass,
            "no NVLink error counter (CRC, replay, recovery) grew between the readings",
        )
    } else {
        match rate {
            Some(r) if r >= limit => ctx
                .check(CheckId::NvlinkErrors, Verdict::Fail, crc_text(rate))
                .because(&causes::NVLINK_ERRORS_GROWING),
            Some(_) => ctx.check(
                CheckId::NvlinkErrors,
                Verdict::Pass,
                format!(
                    "no replay or recovery error; {} (corrected by the link's retry)",
                    crc_text(rate)
                ),
            ),
            None => ctx
                .check(CheckId::NvlinkErrors, Verdict::Warn, crc_text(rate))
                .because(&causes::NVLINK_ERRORS_GROWING),
        }
    }
}

/// NVLink error counters in one reading (`counts`: counter, each link's count): replay or
/// recovery errors warn; CRC counts alone pass.
fn nvlink_errors_counted(
    ctx: &Ctx,
    counts: &[(&str, Vec<(u32, u64)>)],
    thresholds: &Thresholds,
) -> Check {
    let nonzero = |crc: bool| -> Vec<String> {
        counts
            .iter()
            .filter(|(name, _)| (*name == "CRC") == crc)
            .flat_map(|(name, v)| {
                v.iter()
                    .filter(|(_, c)| *c > 0)
                    .map(move |(l, c)| format!("link {l}: {c} {name}"))
            })
            .collect()
    };
    let (fatal, crc) = (nonzero(false), nonzero(true));
    if !fatal.is_empty() {
        ctx.check(
            CheckId::NvlinkErrors,
            Verdict::Warn,
            format!(
                "NVLink replay/recovery errors since the driver loaded: {}",
                fatal.join(", ")
            ),
        )
        .because(&causes::NVLINK_ERRORS_PRESENT)
    } else if !crc.is_empty() {
        ctx.check(
            CheckId::NvlinkErrors,
            Verdict::Pass,
            format!(
                "no replay or recovery error; CRC errors since the driver loaded (corrected by the \
                 link's retry; only a rate of {}/s or more is a fault): {}",
                thresholds.nvlink_crc_per_s,
                crc.join(", ")
            ),
        )
    } else {
        ctx.check(
            CheckId::NvlinkErrors,
            Verdict::Pass,
            "NVLink error counters (CRC, replay, recovery) at 0",
        )
    }
}
