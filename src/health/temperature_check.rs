//! The GPU's temperature against the limits its driver reports: at or past the operating limit
//! warns, at the slowdown or shutdown limit fails. Read after the load tests where there is
//! such a reading (live), else as captured. Two forms (see [`Temperatures`]): absolute limits,
//! or the distance below the operating limit (T.Limit, Hopper and later).

use super::causes;
use super::gpu_ctx::Ctx;
use super::{Check, CheckId, Verdict};
use crate::model::{GpuInventory, InventoryKind, Temperatures};

/// The `temperature` line of one GPU; `None` for a catalog entry that states none.
pub(super) fn temperature(
    ctx: &Ctx,
    before: Option<&GpuInventory>,
    after: Option<&GpuInventory>,
) -> Option<Check> {
    fn read(g: Option<&GpuInventory>) -> Option<&Temperatures> {
        g.map(|g| &g.temperature)
            .filter(|t| t.gpu_c.is_some() || t.tlimit_c.is_some())
    }
    let later = match ctx.kind {
        Some(InventoryKind::Imported) => "in the later capture",
        _ => "after the load tests",
    };
    let (t, when) = match (read(after), read(before)) {
        (Some(t), _) => (t, later),
        (None, Some(t)) => (t, "when read"),
        (None, None) => {
            return (ctx.kind != Some(InventoryKind::Catalog))
                .then(|| ctx.unknown(CheckId::Temperature, "GPU temperature"));
        }
    };
    let now = t.gpu_c.map(|c| format!("{c} °C ")).unwrap_or_default();
    let (verdict, detail) = match t.tlimit_c {
        Some(h) => tlimit(t, h, &now, when),
        None => absolute(t, &now, when),
    };
    let memory = memory_hot(t);
    let (verdict, detail) = match (verdict, memory) {
        (Verdict::Pass, Some(m)) => (Verdict::Warn, format!("{detail}; {m}")),
        (v, Some(m)) => (v, format!("{detail}; {m}")),
        (v, None) => (v, detail),
    };
    let c = ctx.check(CheckId::Temperature, verdict, detail);
    Some(match verdict {
        Verdict::Fail => c.because(&causes::THROTTLE_THERMAL),
        Verdict::Warn => c.because(&causes::TEMPERATURE_HIGH),
        _ => c,
    })
}

/// T.Limit form: `h` °C below the operating limit; the slowdown and shutdown limits past it.
fn tlimit(t: &Temperatures, h: i32, now: &str, when: &str) -> (Verdict, String) {
    let op = t.max_operating_tlimit_c.unwrap_or(0);
    let past = |name: &str, v: Option<i32>| v.map(|v| format!(", {name} {} °C past it", op - v));
    let limits = [
        past("slowdown", t.slowdown_tlimit_c),
        past("shutdown", t.shutdown_tlimit_c),
    ]
    .into_iter()
    .flatten()
    .collect::<String>();
    let at = |s: Option<i32>| s.is_some_and(|s| h <= s);
    if at(t.shutdown_tlimit_c) || at(t.slowdown_tlimit_c) {
        return (
            Verdict::Fail,
            format!(
                "{now}{when}: {} °C past its operating limit, at its {} limit (T.Limit{limits})",
                op - h,
                if at(t.shutdown_tlimit_c) {
                    "shutdown"
                } else {
                    "slowdown"
                }
            ),
        );
    }
    if h <= op {
        return (
            Verdict::Warn,
            format!(
                "{now}{when}: at or past its operating limit ({} °C past it; T.Limit{limits})",
                op - h
            ),
        );
    }
    (
        Verdict::Pass,
        format!(
            "{now}{when}, {} °C below its operating limit (T.Limit{limits})",
            h - op
        ),
    )
}

/// Absolute limits: the GPU's temperature against its slowdown, shutdown and operating limits.
fn absolute(t: &Temperatures, now: &str, when: &str) -> (Verdict, String) {
    let Some(c) = t.gpu_c else {
        return (
            Verdict::Unknown,
            format!("GPU temperature {when}: not read"),
        );
    };
    let limits = [
        ("max operating", t.max_operating_c),
        ("slowdown", t.slowdown_c),
        ("shutdown", t.shutdown_c),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|v| format!("{n} {v} °C")))
    .collect::<Vec<_>>()
    .join(", ");
    if limits.is_empty() {
        return (
            Verdict::Unknown,
            format!("{now}{when}: the driver reports no limit to judge it against"),
        );
    }
    let reached = |v: Option<i32>| v.is_some_and(|v| c >= v);
    if reached(t.shutdown_c) || reached(t.slowdown_c) {
        let which = if reached(t.shutdown_c) {
            "shutdown"
        } else {
            "slowdown"
        };
        return (
            Verdict::Fail,
            format!("{now}{when}: at its {which} limit ({limits})"),
        );
    }
    if reached(t.max_operating_c) {
        return (
            Verdict::Warn,
            format!("{now}{when}: at or past its operating limit ({limits})"),
        );
    }
    (Verdict::Pass, format!("{now}{when} ({limits})"))
}

/// The memory at or past its own operating limit (absolute form only: the T.Limit form gives
/// the memory's limit against a reading nvidia-smi does not print).
fn memory_hot(t: &Temperatures) -> Option<String> {
    let (c, max) = (t.memory_c?, t.memory_max_operating_c.filter(|m| *m > 0)?);
    (c >= max).then(|| format!("memory {c} °C, at or past its operating limit {max} °C"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Source;

    fn ctx() -> Ctx {
        Ctx {
            g: 0,
            source: Source::Measured,
            kind: Some(InventoryKind::Imported),
        }
    }

    fn gpu(t: Temperatures) -> GpuInventory {
        GpuInventory {
            temperature: t,
            ..Default::default()
        }
    }

    /// The H200's own reading (device capture): 41 °C, T.Limit 46 °C, slowdown −2, shutdown −8.
    fn h200(tlimit: i32) -> Temperatures {
        Temperatures {
            gpu_c: Some(41),
            tlimit_c: Some(tlimit),
            slowdown_tlimit_c: Some(-2),
            shutdown_tlimit_c: Some(-8),
            max_operating_tlimit_c: Some(0),
            ..Default::default()
        }
    }

    #[test]
    fn tlimit_headroom_passes_the_limit_warns_slowdown_fails() {
        let c = temperature(&ctx(), Some(&gpu(h200(46))), None).unwrap();
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        assert!(
            c.detail.contains("46 °C below its operating limit"),
            "{}",
            c.detail
        );
        assert!(c.detail.contains("slowdown 2 °C past it"), "{}", c.detail);
        let c = temperature(&ctx(), Some(&gpu(h200(0))), None).unwrap();
        assert_eq!(c.verdict, Verdict::Warn, "{}", c.detail);
        let c = temperature(&ctx(), Some(&gpu(h200(-3))), None).unwrap();
        assert_eq!(c.verdict, Verdict::Fail, "{}", c.detail);
        assert!(c.detail.contains("slowdown limit"), "{}", c.detail);
        // The reading after the load wins over the one before it.
        let c = temperature(&ctx(), Some(&gpu(h200(46))), Some(&gpu(h200(-3)))).unwrap();
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.detail.contains("in the later capture"), "{}", c.detail);
        let live = Ctx {
            kind: Some(InventoryKind::Live),
            ..ctx()
        };
        let c = temperature(&live, Some(&gpu(h200(46))), Some(&gpu(h200(40)))).unwrap();
        assert!(c.detail.contains("after the load tests"), "{}", c.detail);
    }

    #[test]
    fn absolute_limits_and_memory() {
        let t = |c: i32, mem: i32| Temperatures {
            gpu_c: Some(c),
            memory_c: Some(mem),
            slowdown_c: Some(89),
            shutdown_c: Some(92),
            max_operating_c: Some(87),
            memory_max_operating_c: Some(95),
            ..Default::default()
        };
        let v = |c, m| temperature(&ctx(), Some(&gpu(t(c, m))), None).unwrap();
        assert_eq!(v(40, 45).verdict, Verdict::Pass);
        assert_eq!(v(87, 45).verdict, Verdict::Warn);
        assert_eq!(v(90, 45).verdict, Verdict::Fail);
        let hot_memory = v(40, 96);
        assert_eq!(hot_memory.verdict, Verdict::Warn);
        assert!(
            hot_memory.detail.contains("memory 96 °C"),
            "{}",
            hot_memory.detail
        );
        // No limit read: not judged.
        let bare = Temperatures {
            gpu_c: Some(70),
            ..Default::default()
        };
        let c = temperature(&ctx(), Some(&gpu(bare)), None).unwrap();
        assert_eq!(c.verdict, Verdict::Unknown);
        // Nothing read: unknown, and no line for a catalog entry.
        assert_eq!(
            temperature(&ctx(), Some(&gpu(Temperatures::default())), None)
                .unwrap()
                .verdict,
            Verdict::Unknown
        );
        let catalog = Ctx {
            kind: Some(InventoryKind::Catalog),
            ..ctx()
        };
        assert!(temperature(&catalog, Some(&gpu(Temperatures::default())), None).is_none());
    }
}
