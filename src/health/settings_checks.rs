//! The settings checks of a GPU (power limit, application or locked clocks, persistence, MIG,
//! compute mode): what an operator or a job can change that holds a GPU below its best or
//! changes what a job sees, each judged against `--thresholds`' `[settings]`.

use super::causes;
use super::gpu_ctx::Ctx;
use super::{Check, CheckId, Verdict};
use crate::model::{ComputeMode, GpuInventory, GpuSettings, InventoryKind, ThrottleReason};

/// The settings checks of one GPU: power limit, clock settings, persistence, MIG and compute
/// mode. A capture or catalog entry that holds no settings at all gets none of these lines (a
/// `nvidia-smi nvlink` capture says nothing of them); a live reading that NVML refused is
/// unknown.
pub(super) fn settings(
    ctx: &Ctx,
    before: Option<&GpuInventory>,
    load: Option<&super::GpuLoadObservation>,
    t: &super::thresholds::SettingsThresholds,
) -> Vec<Check> {
    let s = before.map(|b| b.settings.clone()).unwrap_or_default();
    if s.is_empty() && ctx.kind != Some(InventoryKind::Live) {
        return Vec::new();
    }
    vec![
        power_limit(ctx, &s, load, t),
        clock_settings(ctx, &s, clocks_held(before, load), t),
        persistence(ctx, &s, t),
        mig_mode(ctx, &s, t),
        compute_mode(ctx, &s, t),
    ]
}

/// Power limit: the lowest in force (before the tests, or in any sample during them) against
/// the board's default.
fn power_limit(
    ctx: &Ctx,
    s: &GpuSettings,
    load: Option<&super::GpuLoadObservation>,
    t: &super::thresholds::SettingsThresholds,
) -> Check {
    let g = ctx.g;
    let during = load.and_then(|l| l.power_limit_min_w);
    let limit = match (s.power_limit_w, during) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let (Some(w), Some(d)) = (limit, s.power_limit_default_w.filter(|d| *d > 0.0)) else {
        return ctx.unknown(CheckId::PowerLimit, "power limit and its default");
    };
    let ratio = w / d;
    let range = match (s.power_limit_min_w, s.power_limit_max_w) {
        (Some(lo), Some(hi)) => format!(", settable {lo:.0}–{hi:.0} W"),
        _ => String::new(),
    };
    let lowered_during = during.is_some_and(|x| s.power_limit_w.is_some_and(|b| x < b));
    let when = if lowered_during {
        " (lowered during the tests)"
    } else {
        ""
    };
    let detail = format!(
        "power limit {w:.0} W{when}, {:.0} % of the board's default {d:.0} W{range}",
        ratio * 100.0
    );
    let verdict = if ratio < t.power_limit_fail {
        Verdict::Fail
    } else if ratio < t.power_limit_warn {
        Verdict::Warn
    } else {
        Verdict::Pass
    };
    let c = ctx.check(CheckId::PowerLimit, verdict, detail);
    if verdict == Verdict::Pass {
        return c;
    }
    c.because_text(
        format!(
            "GPU {g}'s power limit is {w:.0} W, below the board's default {d:.0} W: \
             its clocks drop under load"
        ),
        &format!(
            "restore it (`nvidia-smi -i {g} -pl {d:.0}`) and find what lowered it \
             (site scripts, DCGM power policy, a scheduler prologue)"
        ),
    )
}

/// Whether the Applications Clocks Setting reason held the clocks (locked clocks show as this
/// reason too), and when: during the load tests, else when the capture was taken; `None` when
/// neither was read.
fn clocks_held(
    before: Option<&GpuInventory>,
    load: Option<&super::GpuLoadObservation>,
) -> Option<(bool, &'static str)> {
    load.map(|l| {
        (
            l.throttle_seen
                .contains(&ThrottleReason::ApplicationsClocks),
            "during the load tests",
        )
    })
    .or_else(|| {
        before.and_then(|b| b.throttle.as_ref()).map(|t| {
            (
                t.contains(&ThrottleReason::ApplicationsClocks),
                "when the capture was taken",
            )
        })
    })
}

/// Clock settings: application clocks below their default, or a setting that `held` the
/// clocks ([`clocks_held`]).
fn clock_settings(
    ctx: &Ctx,
    s: &GpuSettings,
    held: Option<(bool, &str)>,
    t: &super::thresholds::SettingsThresholds,
) -> Check {
    let g = ctx.g;
    let app = s.app_clock_mhz.zip(s.app_clock_default_mhz);
    match (app, held) {
        (Some((a, d)), _) if d > 0 && f64::from(a) < t.clocks_warn * f64::from(d) => ctx
            .check(
                CheckId::ClockSettings,
                Verdict::Warn,
                format!("application clocks {a} MHz, below their default {d} MHz"),
            )
            .because_text(
                format!("GPU {g}'s application clocks are set to {a} MHz (default {d} MHz)"),
                &format!("reset them (`nvidia-smi -i {g} -rac`) unless set on purpose"),
            ),
        (_, Some((true, when))) => ctx
            .check(
                CheckId::ClockSettings,
                Verdict::Warn,
                format!(
                    "a clock setting held the clocks {when} (Applications Clocks Setting{})",
                    s.max_sm_clock_mhz
                        .map(|m| format!("; SM maximum {m} MHz"))
                        .unwrap_or_default()
                ),
            )
            .because(&causes::CLOCKS_SET),
        (Some((a, d)), _) => ctx.check(
            CheckId::ClockSettings,
            Verdict::Pass,
            format!(
                "application clocks {a} MHz (default {d} MHz){}",
                match held {
                    Some((false, when)) => format!("; no clock setting held the clocks {when}"),
                    _ => String::new(),
                }
            ),
        ),
        (None, Some((false, when))) => ctx.check(
            CheckId::ClockSettings,
            Verdict::Pass,
            format!("no clock setting held the clocks {when}"),
        ),
        (None, None) => ctx.unknown(CheckId::ClockSettings, "application clocks"),
    }
}

/// Persistence mode: off is judged as the thresholds say.
fn persistence(ctx: &Ctx, s: &GpuSettings, t: &super::thresholds::SettingsThresholds) -> Check {
    match s.persistence {
        Some(true) => ctx.check(CheckId::Persistence, Verdict::Pass, "persistence mode on"),
        Some(false) => {
            let c = ctx.check(
                CheckId::Persistence,
                t.persistence.verdict(),
                "persistence mode off",
            );
            if t.persistence == super::thresholds::Severity::Pass {
                c
            } else {
                c.because(&causes::PERSISTENCE_OFF)
            }
        }
        None => ctx.unknown(CheckId::Persistence, "persistence mode"),
    }
}

/// MIG mode, now and after the next reset: on (or pending on) is judged as the thresholds say.
fn mig_mode(ctx: &Ctx, s: &GpuSettings, t: &super::thresholds::SettingsThresholds) -> Check {
    let Some(cur) = s.mig_current else {
        return ctx.unknown(CheckId::MigMode, "MIG mode");
    };
    let pending = s.mig_pending;
    let changes = pending.is_some_and(|p| p != cur);
    let word = |on: bool| if on { "on" } else { "off" };
    let mut detail = format!("MIG mode {}", word(cur));
    if changes {
        detail.push_str(&format!(
            " ({} after the next GPU reset)",
            word(pending.unwrap_or(cur))
        ));
    }
    let bad = cur || pending == Some(true);
    let verdict = if bad { t.mig.verdict() } else { Verdict::Pass };
    let c = ctx.check(CheckId::MigMode, verdict, detail);
    if verdict == Verdict::Pass {
        c
    } else {
        c.because(&causes::MIG_ON)
    }
}

/// Compute mode: Default passes, Prohibited fails, the others are judged as the thresholds say.
fn compute_mode(ctx: &Ctx, s: &GpuSettings, t: &super::thresholds::SettingsThresholds) -> Check {
    let m = match s.compute_mode {
        None => return ctx.unknown(CheckId::ComputeMode, "compute mode"),
        Some(ComputeMode::Default) => {
            return ctx.check(CheckId::ComputeMode, Verdict::Pass, "compute mode Default");
        }
        Some(m) => m,
    };
    let verdict = if m == ComputeMode::Prohibited {
        Verdict::Fail
    } else {
        t.compute_mode.verdict()
    };
    let c = ctx.check(
        CheckId::ComputeMode,
        verdict,
        format!("compute mode {}", m.label()),
    );
    if verdict == Verdict::Pass {
        c
    } else {
        c.because(&causes::COMPUTE_MODE)
    }
}
