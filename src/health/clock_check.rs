//! The `clocks` line: the clock limits (power, thermal, hardware) NVML reported during the load
//! tests, or that a capture shows active. A hardware limit fails, a software one warns, each
//! with its cause; the software power cap reached while another process loaded the GPU is that
//! process's doing (a compute job at full power holds any healthy GPU at its cap: seen on an H100
//! with a held-out fault, docs/VERIFIED.md 2026-12-07), named as contention rather than as a
//! power fault.

use super::causes;
use super::gpu_ctx::Ctx;
use super::{Check, CheckId, Verdict};
use crate::model::{GpuInventory, GpuLoadObservation, InventoryKind, ThrottleReason};

/// Clock limits seen during the load tests (live), or active in a capture.
pub(super) fn clocks(
    ctx: &Ctx,
    before: Option<&GpuInventory>,
    load: Option<&GpuLoadObservation>,
    live_load: bool,
) -> Option<Check> {
    let (seen, when): (Vec<ThrottleReason>, &str) = match load {
        Some(l) => (l.throttle_seen.clone(), "during the load tests"),
        None if live_load => return Some(ctx.unknown(CheckId::Clocks, "clock event reasons")),
        None => match before.and_then(|b| b.throttle.clone()) {
            Some(t) => (t, "when the capture was taken"),
            None => {
                return (ctx.kind != Some(InventoryKind::Catalog))
                    .then(|| ctx.unknown(CheckId::Clocks, "clock event reasons"));
            }
        },
    };
    let limits: Vec<ThrottleReason> = seen.iter().copied().filter(|r| r.is_limit()).collect();
    let names = limits
        .iter()
        .map(|r| r.label())
        .collect::<Vec<_>>()
        .join(", ");
    let has = |r: ThrottleReason| limits.contains(&r);
    // The worst first: a hardware limit fails whoever loaded the GPU, a software thermal one
    // warns.
    for (reason, verdict, cause) in [
        (
            ThrottleReason::HwThermalSlowdown,
            Verdict::Fail,
            &causes::THROTTLE_THERMAL,
        ),
        (
            ThrottleReason::HwPowerBrake,
            Verdict::Fail,
            &causes::THROTTLE_POWER_BRAKE,
        ),
        (
            ThrottleReason::HwSlowdown,
            Verdict::Fail,
            &causes::THROTTLE_HW,
        ),
        (
            ThrottleReason::SwThermalSlowdown,
            Verdict::Warn,
            &causes::THROTTLE_THERMAL,
        ),
    ] {
        if has(reason) {
            return Some(
                ctx.check(CheckId::Clocks, verdict, format!("{names} {when}"))
                    .because(cause),
            );
        }
    }
    if has(ThrottleReason::SwPowerCap) {
        let check = ctx.check(CheckId::Clocks, Verdict::Warn, format!("{names} {when}"));
        return Some(match others(before, load) {
            Some(who) => check.because_text(
                format!(
                    "another process ({who}) was on the GPU {when}: contention — its load \
                     holds a healthy GPU at its power cap; were it idle, the cap itself"
                ),
                &format!(
                    "{}; if the cap is reached again with the GPU to itself, check the power \
                     limit (`nvidia-smi -q -d POWER`)",
                    causes::CONTENTION.fix
                ),
            ),
            None => check.because(&causes::THROTTLE_POWER),
        });
    }
    let idle_capture = load.is_none()
        && before.is_some_and(|b| {
            b.throttle
                .as_ref()
                .is_some_and(|t| t.contains(&ThrottleReason::GpuIdle))
        });
    Some(if idle_capture {
        ctx.check(
            CheckId::Clocks,
            Verdict::Unknown,
            "no power or thermal limit active, but the capture was taken at idle: it says nothing about clocks under load",
        )
        .because_text(
            "only an idle reading exists".to_string(),
            "run `scalescope check` on the machine: it watches the clocks during its load tests",
        )
    } else {
        ctx.check(
            CheckId::Clocks,
            Verdict::Pass,
            format!("no power, thermal or hardware clock limit {when}"),
        )
    })
}

/// The processes other than scalescope on the GPU while the clocks were read — during the load
/// tests (live), or when the capture was taken — as `pid 802 (python3), …`; `None` where there
/// were none. A process seen only before the tests (it may have ended, or sat idle) is not one.
fn others(before: Option<&GpuInventory>, load: Option<&GpuLoadObservation>) -> Option<String> {
    let seen = match load {
        Some(l) => l.other_processes.as_slice(),
        None => before.and_then(|b| b.processes.as_deref()).unwrap_or(&[]),
    };
    let mut who: Vec<String> = Vec::new();
    for p in seen.iter().map(|p| p.to_string()) {
        if !who.contains(&p) {
            who.push(p);
        }
    }
    (!who.is_empty()).then(|| crate::model::quantities::first_of(&who, 3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuProcess, Source};

    fn live() -> Ctx {
        Ctx {
            g: 0,
            source: Source::Measured,
            kind: Some(InventoryKind::Live),
        }
    }

    fn load(seen: &[ThrottleReason], others: &[(u32, &str)]) -> GpuLoadObservation {
        GpuLoadObservation {
            throttle_seen: seen.to_vec(),
            other_processes: others
                .iter()
                .map(|&(pid, name)| GpuProcess {
                    pid,
                    name: Some(name.to_string()),
                })
                .collect(),
            ..Default::default()
        }
    }

    /// The held-out fault on an H100 (2026-12-07): a bf16 matmul job beside `check --quick`
    /// held the GPU at its 700 W cap; the power cap was named as the likely cause.
    #[test]
    fn the_power_cap_under_another_process_is_contention() {
        let cap = [ThrottleReason::SwPowerCap];
        let c = clocks(&live(), None, Some(&load(&cap, &[(802, "python3")])), true).unwrap();
        assert_eq!(c.verdict, Verdict::Warn);
        let cause = c.cause.as_deref().unwrap();
        assert!(cause.contains("pid 802 (python3)"), "{cause}");
        assert!(cause.contains("contention"), "{cause}");
        let fix = c.fix.as_deref().unwrap();
        assert!(fix.starts_with(causes::CONTENTION.fix), "{fix}");
        assert!(fix.contains("power limit"), "{fix}");
        // Alone on the GPU, the cap during copies is the power's doing.
        let c = clocks(&live(), None, Some(&load(&cap, &[])), true).unwrap();
        assert_eq!(c.cause.as_deref(), Some(causes::THROTTLE_POWER.likely));
        // A process seen before the tests but not during them is not blamed.
        let before = GpuInventory {
            processes: Some(vec![GpuProcess { pid: 7, name: None }]),
            ..Default::default()
        };
        let c = clocks(&live(), Some(&before), Some(&load(&cap, &[])), true).unwrap();
        assert_eq!(c.cause.as_deref(), Some(causes::THROTTLE_POWER.likely));
        // A capture taken while a job ran: the job's doing.
        let captured = GpuInventory {
            throttle: Some(cap.to_vec()),
            ..before
        };
        let ctx = Ctx {
            kind: Some(InventoryKind::Imported),
            ..live()
        };
        let c = clocks(&ctx, Some(&captured), None, false).unwrap();
        assert!(c.cause.as_deref().unwrap().contains("pid 7"), "{c:?}");
    }

    /// A hardware limit is a fault whoever loaded the GPU.
    #[test]
    fn hardware_limits_fail_beside_another_process() {
        for (r, cause) in [
            (ThrottleReason::HwThermalSlowdown, &causes::THROTTLE_THERMAL),
            (ThrottleReason::HwPowerBrake, &causes::THROTTLE_POWER_BRAKE),
            (ThrottleReason::HwSlowdown, &causes::THROTTLE_HW),
        ] {
            let seen = [r, ThrottleReason::SwPowerCap];
            let c = clocks(&live(), None, Some(&load(&seen, &[(9, "job")])), true).unwrap();
            assert_eq!(c.verdict, Verdict::Fail, "{r:?}");
            assert_eq!(c.cause.as_deref(), Some(cause.likely), "{r:?}");
        }
    }
}
