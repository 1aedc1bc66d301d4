//! What was different while a GPU's throughput fell: the evidence present in an anomaly window
//! and absent outside it, from the per-second readings of each GPU (soak.csv's columns). One
//! rule for the soak, its replay and anything else that judges such a series; a window nothing
//! explains is "cause unknown", never a guess shown as likely.
//!
//! Evidence, in the order it is named (a setting someone changed explains more than what it
//! causes: a lowered power limit also raises the share of seconds at the power cap):
//! 1. the power limit in force fell below its level outside the window;
//! 2. a clock setting held the clocks (the Applications Clocks Setting reason, which locked
//!    clocks raise too);
//! 3. another process had a context on the GPU in most of the window's seconds and in few
//!    outside;
//! 4. the host's CPUs were saturated, or the hypervisor took their time (steal);
//! 5. hardware slowdown or power brake;
//! 6. heat: a thermal slowdown reason, or a temperature well above the level outside;
//! 7. the power cap held the clocks in the window and not outside;
//! 8. the SM clock sat well below its level outside with none of the above: a clock lock.
//!
//! For a load that spans GPUs (NCCL all-reduce, peer copies) every member runs at the pace of
//! the slowest: the window's evidence is looked for on the GPU itself, then on each member.

use serde::{Deserialize, Serialize};

use crate::model::{SoakLoad, SoakSample, ThrottleReason};

/// Host CPU busy (%) at which the host counts as saturated: a check's or soak's own threads
/// use a few cores; 85 % of every core is another load.
pub const HOST_SATURATED_PERCENT: f64 = 85.0;

/// A power limit below this fraction of the level it is set against counts as lowered (the
/// limit moves in whole watts; 3 % is 21 W on a 700 W board).
pub const LIMIT_LOWERED: f64 = 0.97;

/// What an anomaly window is attributed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    PowerLimit,
    ClockSetting,
    Process,
    HostCpu,
    HwSlowdown,
    Thermal,
    PowerCap,
    ClockLow,
    Unknown,
}

impl CauseKind {
    /// A few words for lists: `power limit lowered`, `another process`, …
    pub fn words(self) -> &'static str {
        match self {
            Self::PowerLimit => "power limit lowered",
            Self::ClockSetting => "clock setting",
            Self::Process => "another process",
            Self::HostCpu => "host CPU",
            Self::HwSlowdown => "hardware slowdown",
            Self::Thermal => "heat",
            Self::PowerCap => "power cap",
            Self::ClockLow => "clock held low",
            Self::Unknown => "cause unknown",
        }
    }
}

/// An anomaly window with its cause, as data (JSON `windows` of a soak finding).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub gpu: usize,
    pub load: SoakLoad,
    /// Seconds since the soak's load began.
    pub from_s: f64,
    pub to_s: f64,
    /// The lowest rate in it against the phase's steady level, e.g. −0.54.
    pub worst: f64,
    pub cause_kind: CauseKind,
    /// The cause in words, quoting its evidence.
    pub cause: String,
    pub fix: String,
    /// The GPU whose evidence it is (a member of a collective may differ from `gpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_gpu: Option<usize>,
}

/// The attribution of one window.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribution {
    pub kind: CauseKind,
    pub cause: String,
    pub fix: String,
    pub evidence_gpu: Option<usize>,
}

/// Whether a load's rate on one GPU follows other GPUs (a collective or a peer copy).
pub fn spans_gpus(load: SoakLoad) -> bool {
    matches!(load, SoakLoad::Nccl | SoakLoad::P2p)
}

/// Attributes the window `from_s..=to_s` (times of the readings that close each interval) of
/// `gpu`'s `load`: `all` holds every GPU's readings, `members` the GPUs whose evidence may
/// explain it (the GPU itself first). The window is set against the same GPU's readings of the
/// same load outside it.
pub fn attribute(
    all: &[SoakSample],
    gpu: usize,
    load: SoakLoad,
    from_s: f64,
    to_s: f64,
    members: &[usize],
) -> Attribution {
    let mut order = vec![gpu];
    if spans_gpus(load) {
        order.extend(members.iter().copied().filter(|&g| g != gpu));
    }
    for &g in &order {
        let mine = |s: &&SoakSample| s.gpu == g;
        let inside: Vec<&SoakSample> = all
            .iter()
            .filter(mine)
            .filter(|s| s.t_s > from_s && s.t_s <= to_s)
            .collect();
        let outside: Vec<&SoakSample> = all
            .iter()
            .filter(mine)
            .filter(|s| s.phase == Some(load) && (s.t_s <= from_s - 1.0 || s.t_s > to_s + 1.0))
            .collect();
        if let Some(mut a) = evidence(g, &inside, &outside) {
            if g != gpu {
                a.cause = format!(
                    "{} (GPU {gpu} waits for it: {load} spans the GPUs)",
                    a.cause
                );
            }
            a.evidence_gpu = Some(g);
            return a;
        }
    }
    Attribution {
        kind: CauseKind::Unknown,
        cause: "cause unknown: nothing in the readings differs inside the window (processes, \
                power limit, clock reasons, temperature, host CPU)"
            .into(),
        fix: "look at soak.csv around the window; run the soak again on an otherwise idle machine"
            .into(),
        evidence_gpu: None,
    }
}

/// Share of `v`'s readings for which `f` holds (`None` with no reading that says).
fn share(
    v: &[&SoakSample],
    f: impl Fn(&SoakSample) -> Option<bool>,
) -> Option<(f64, usize, usize)> {
    let known: Vec<bool> = v.iter().filter_map(|s| f(s)).collect();
    if known.is_empty() {
        return None;
    }
    let yes = known.iter().filter(|b| **b).count();
    Some((yes as f64 / known.len() as f64, yes, known.len()))
}

fn median_of(v: &[&SoakSample], f: impl Fn(&SoakSample) -> Option<f64>) -> Option<f64> {
    let xs: Vec<f64> = v
        .iter()
        .filter_map(|s| f(s))
        .filter(|x| x.is_finite())
        .collect();
    crate::model::median(&xs)
}

fn reason(s: &SoakSample, any: &[ThrottleReason]) -> Option<bool> {
    s.throttle
        .as_ref()
        .map(|t| t.iter().any(|r| any.contains(r)))
}

/// Present in most of the window (≥ half its readings) and rare outside (≤ a fifth), or absent
/// outside when there is nothing outside to compare with.
fn stands_out(inside: Option<(f64, usize, usize)>, outside: Option<(f64, usize, usize)>) -> bool {
    inside.is_some_and(|(i, _, _)| i >= 0.5) && outside.is_none_or(|(o, _, _)| o <= 0.2)
}

/// The first piece of evidence that sets `inside` apart from `outside` on GPU `g`: the checks
/// of [`Readings::CHECKS`] tried in order.
fn evidence(g: usize, inside: &[&SoakSample], outside: &[&SoakSample]) -> Option<Attribution> {
    if inside.is_empty() {
        return None;
    }
    let w = Readings { g, inside, outside };
    Readings::CHECKS.iter().find_map(|check| check(&w))
}

/// GPU `g`'s readings in a slow window (never empty) and outside it, which [`evidence`]'s
/// checks compare.
struct Readings<'a> {
    g: usize,
    inside: &'a [&'a SoakSample],
    outside: &'a [&'a SoakSample],
}

impl Readings<'_> {
    /// The checks, most specific first: the first that finds something names the cause.
    const CHECKS: [fn(&Self) -> Option<Attribution>; 9] = [
        Self::power_limit,
        Self::clock_setting,
        Self::process,
        Self::host_cpu,
        Self::host_steal,
        Self::hw_slowdown,
        Self::thermal,
        Self::power_cap,
        Self::clock_low,
    ];

    /// The finding of `kind` on this window's GPU.
    fn found(&self, kind: CauseKind, cause: String, fix: String) -> Option<Attribution> {
        Some(Attribution {
            kind,
            cause,
            fix,
            evidence_gpu: Some(self.g),
        })
    }

    /// The median of `f` inside the window and outside it.
    fn medians(&self, f: impl Fn(&SoakSample) -> Option<f64>) -> (Option<f64>, Option<f64>) {
        (median_of(self.inside, &f), median_of(self.outside, &f))
    }

    /// 1. The power limit: lower somewhere in the window than outside it.
    fn power_limit(&self) -> Option<Attribution> {
        let g = self.g;
        let low_in = self
            .inside
            .iter()
            .filter_map(|s| s.power_limit_w)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        let out_limit = median_of(self.outside, |s| s.power_limit_w);
        if let (Some(lo), Some(out)) = (low_in, out_limit)
            && lo < LIMIT_LOWERED * out
        {
            return self.found(
                CauseKind::PowerLimit,
                format!(
                    "GPU {g}'s power limit was lowered to {lo:.0} W in the window ({out:.0} W outside it)"
                ),
                format!(
                    "restore it (`nvidia-smi -i {g} -pl {out:.0}`) and find what lowered it (site scripts, DCGM power policy, a scheduler prologue)"
                ),
            );
        }
        None
    }

    /// 2. A clock setting: the Applications Clocks Setting reason in the window only.
    fn clock_setting(&self) -> Option<Attribution> {
        let g = self.g;
        let app = |s: &SoakSample| reason(s, &[ThrottleReason::ApplicationsClocks]);
        let (app_in, app_out) = (share(self.inside, app), share(self.outside, app));
        if !stands_out(app_in, app_out) {
            return None;
        }
        let (_, k, m) = app_in.unwrap_or((0.0, 0, 0));
        let clocks = match self.medians(|s| s.sm_clock_mhz.map(f64::from)) {
            (Some(a), Some(b)) => format!("; SM {a:.0} MHz, {b:.0} outside"),
            _ => String::new(),
        };
        self.found(
            CauseKind::ClockSetting,
            format!(
                "a clock setting held GPU {g}'s clocks: Applications Clocks Setting in {k} of {m} readings, not outside{clocks} (locked clocks `nvidia-smi -lgc` or application clocks `-ac`)"
            ),
            format!(
                "reset them (`nvidia-smi -i {g} -rgc` for locked clocks, `-rac` for application clocks) unless set on purpose"
            ),
        )
    }

    /// 3. Another process: on the GPU in most of the window, clearly rarer outside it.
    fn process(&self) -> Option<Attribution> {
        let (g, n) = (self.g, self.inside.len());
        let mut pids: Vec<u32> = self
            .inside
            .iter()
            .flat_map(|s| s.processes.iter().copied())
            .collect();
        pids.sort_unstable();
        pids.dedup();
        let mut present: Vec<(u32, usize)> = pids
            .into_iter()
            .filter_map(|p| {
                let on = |s: &SoakSample| Some(s.processes.contains(&p));
                let (share_in, k, _) = share(self.inside, on)?;
                let share_out = share(self.outside, on).map_or(0.0, |(o, _, _)| o);
                // In most of the window and clearly rarer outside it: a job's context is often
                // there seconds before its work starts (set-up, the first kernels compiling), so
                // a share outside is no alibi, but a process there all along (a monitoring
                // agent) is.
                (share_in >= 0.5 && (share_out <= 0.2 || share_in - share_out >= 0.3))
                    .then_some((p, k))
            })
            .collect();
        present.sort_by_key(|&(p, k)| (std::cmp::Reverse(k), p));
        let &(pid, k) = present.first()?;
        let others = if present.len() > 1 {
            format!(" and {} more", present.len() - 1)
        } else {
            String::new()
        };
        self.found(
            CauseKind::Process,
            format!(
                "another process (pid {pid}{others}) used GPU {g} in {k} of the window's {n} readings, less often or never outside it: the soak shared the GPU"
            ),
            "stop the other job (or drain the node) and run the soak again to judge the hardware"
                .into(),
        )
    }

    /// 4. The host's CPUs saturated in the window, clearly more than outside it.
    fn host_cpu(&self) -> Option<Attribution> {
        let (cpu_in, cpu_out) = self.medians(|s| s.host_cpu_percent);
        if let Some(ci) = cpu_in
            && ci >= HOST_SATURATED_PERCENT
            && cpu_out.is_none_or(|co| ci >= co + 25.0)
        {
            let out = cpu_out
                .map(|c| format!(", {c:.0} % outside"))
                .unwrap_or_default();
            return self.found(
                CauseKind::HostCpu,
                format!("the host's CPUs were saturated: {ci:.0} % busy in the window{out}; the GPU waited for the host to issue work"),
                "find the process using the CPUs (`top`); keep CPU-heavy jobs off GPU nodes or pin them away from the GPU jobs' cores".into(),
            );
        }
        None
    }

    /// 4. The host's CPUs taken by the hypervisor (steal) in the window.
    fn host_steal(&self) -> Option<Attribution> {
        let (st_in, st_out) = self.medians(|s| s.host_steal_percent);
        if let Some(si) = st_in
            && si >= 10.0
            && st_out.is_none_or(|so| si >= so + 5.0)
        {
            return self.found(
                CauseKind::HostCpu,
                format!("the hypervisor took the host's CPUs: {si:.0} % steal in the window"),
                "ask the cloud provider or hypervisor admin about CPU contention on the host"
                    .into(),
            );
        }
        None
    }

    /// 5. Hardware slowdown (HW Slowdown or Power Brake) in the window only.
    fn hw_slowdown(&self) -> Option<Attribution> {
        let hw = |s: &SoakSample| {
            reason(
                s,
                &[ThrottleReason::HwSlowdown, ThrottleReason::HwPowerBrake],
            )
        };
        if !stands_out(share(self.inside, hw), share(self.outside, hw)) {
            return None;
        }
        self.found(
            CauseKind::HwSlowdown,
            format!(
                "hardware slowdown on GPU {} in the window (HW Slowdown or Power Brake), not outside",
                self.g
            ),
            "check the PSUs and the chassis' power-brake signals, and cooling".into(),
        )
    }

    /// 6. Heat: a thermal slowdown reason in the window only, or the GPU clearly hotter there.
    fn thermal(&self) -> Option<Attribution> {
        let thermal = |s: &SoakSample| {
            reason(
                s,
                &[
                    ThrottleReason::HwThermalSlowdown,
                    ThrottleReason::SwThermalSlowdown,
                ],
            )
        };
        let (t_in, t_out) = self.medians(|s| s.gpu_temp_c);
        let hotter = matches!((t_in, t_out), (Some(a), Some(b)) if a >= b + 10.0 && a >= 80.0);
        if !(stands_out(share(self.inside, thermal), share(self.outside, thermal)) || hotter) {
            return None;
        }
        let temps = match (t_in, t_out) {
            (Some(a), Some(b)) => format!(" ({a:.0} °C, {b:.0} outside)"),
            _ => String::new(),
        };
        self.found(
            CauseKind::Thermal,
            format!(
                "GPU {} ran hot in the window{temps} and slowed down",
                self.g
            ),
            "check cooling: fans, airflow, inlet temperature, heatsink contact".into(),
        )
    }

    /// 7. The power cap (SW Power Cap) in the window only.
    fn power_cap(&self) -> Option<Attribution> {
        let cap = |s: &SoakSample| reason(s, &[ThrottleReason::SwPowerCap]);
        let (cap_in, cap_out) = (share(self.inside, cap), share(self.outside, cap));
        if !stands_out(cap_in, cap_out) {
            return None;
        }
        let (_, k, m) = cap_in.unwrap_or((0.0, 0, 0));
        let watts = median_of(self.inside, |s| s.power_w)
            .map(|w| format!(" at {w:.0} W"))
            .unwrap_or_default();
        self.found(
            CauseKind::PowerCap,
            format!(
                "the power cap held GPU {}'s clocks in {k} of {m} readings{watts}, not outside",
                self.g
            ),
            "check the power limit (`nvidia-smi -q -d POWER`), the PSUs and any power-capping policy".into(),
        )
    }

    /// 8. The SM clock alone: well below outside with no power or thermal reason.
    fn clock_low(&self) -> Option<Attribution> {
        let g = self.g;
        if let (Some(a), Some(b)) = self.medians(|s| s.sm_clock_mhz.map(f64::from))
            && a < 0.85 * b
        {
            return self.found(
                CauseKind::ClockLow,
                format!(
                    "GPU {g}'s SM clock sat at {a:.0} MHz in the window ({b:.0} outside) with no power or thermal reason: a clock lock or setting"
                ),
                format!(
                    "check `nvidia-smi -q -d CLOCK` on GPU {g}; reset locked clocks with `nvidia-smi -i {g} -rgc`"
                ),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(gpus: usize, secs: usize, load: SoakLoad) -> Vec<SoakSample> {
        let mut v = Vec::new();
        for t in 1..=secs {
            for g in 0..gpus {
                v.push(SoakSample {
                    t_s: t as f64,
                    gpu: g,
                    phase: Some(load),
                    rate: Some(100.0),
                    sm_clock_mhz: Some(1980),
                    power_w: Some(650.0),
                    gpu_temp_c: Some(45.0),
                    throttle: Some(vec![]),
                    power_limit_w: Some(700.0),
                    host_cpu_percent: Some(10.0),
                    host_steal_percent: Some(0.0),
                    ..Default::default()
                });
            }
        }
        v
    }

    fn during(v: &mut [SoakSample], gpu: usize, from: f64, to: f64, f: impl Fn(&mut SoakSample)) {
        for s in v
            .iter_mut()
            .filter(|s| s.gpu == gpu && s.t_s > from && s.t_s <= to)
        {
            f(s);
        }
    }

    #[test]
    fn each_kind_of_evidence_is_named_and_nothing_is_unknown() {
        type Inject = fn(&mut SoakSample);
        let cases: [(Inject, CauseKind); 7] = [
            (
                |s| {
                    s.power_limit_w = Some(200.0);
                    s.throttle = Some(vec![ThrottleReason::SwPowerCap]);
                },
                CauseKind::PowerLimit,
            ),
            (
                |s| {
                    s.throttle = Some(vec![ThrottleReason::ApplicationsClocks]);
                    s.sm_clock_mhz = Some(900);
                },
                CauseKind::ClockSetting,
            ),
            (|s| s.processes = vec![4242], CauseKind::Process),
            (|s| s.host_cpu_percent = Some(99.0), CauseKind::HostCpu),
            (
                |s| {
                    s.gpu_temp_c = Some(91.0);
                    s.throttle = Some(vec![ThrottleReason::SwThermalSlowdown]);
                },
                CauseKind::Thermal,
            ),
            (
                |s| s.throttle = Some(vec![ThrottleReason::SwPowerCap]),
                CauseKind::PowerCap,
            ),
            (|s| s.sm_clock_mhz = Some(1200), CauseKind::ClockLow),
        ];
        for (inject, kind) in cases {
            let mut v = series(2, 60, SoakLoad::Memory);
            during(&mut v, 1, 20.0, 35.0, inject);
            let a = attribute(&v, 1, SoakLoad::Memory, 20.0, 35.0, &[0, 1]);
            assert_eq!(a.kind, kind, "{a:?}");
            assert_eq!(a.evidence_gpu, Some(1));
            // The same window on the other GPU, which saw nothing: unknown, not a guess.
            let b = attribute(&v, 0, SoakLoad::Memory, 20.0, 35.0, &[0, 1]);
            assert_eq!(b.kind, CauseKind::Unknown, "{kind:?}: {b:?}");
            assert!(b.cause.starts_with("cause unknown"));
        }
    }

    #[test]
    fn a_collective_dip_goes_to_the_member_with_the_evidence() {
        let mut v = series(2, 60, SoakLoad::Nccl);
        during(&mut v, 0, 30.0, 50.0, |s| s.power_limit_w = Some(200.0));
        let a = attribute(&v, 1, SoakLoad::Nccl, 30.0, 50.0, &[0, 1]);
        assert_eq!(a.kind, CauseKind::PowerLimit);
        assert_eq!(a.evidence_gpu, Some(0));
        assert!(a.cause.contains("GPU 1 waits for it"), "{}", a.cause);
        // A memory phase does not span GPUs: GPU 0's evidence does not explain GPU 1.
        let mut v = series(2, 60, SoakLoad::Memory);
        during(&mut v, 0, 30.0, 50.0, |s| s.power_limit_w = Some(200.0));
        let b = attribute(&v, 1, SoakLoad::Memory, 30.0, 50.0, &[0, 1]);
        assert_eq!(b.kind, CauseKind::Unknown);
    }

    #[test]
    fn a_process_set_up_before_its_load_is_still_named() {
        // Device run (2026-11-27, 2x H200): a memory hog's context appeared 12 s before its
        // copies began, in a 43 s memory phase: 12 of the 19 readings outside the window.
        let mut v = series(1, 43, SoakLoad::Memory);
        during(&mut v, 0, 0.0, 34.0, |s| s.processes = vec![99]);
        let a = attribute(&v, 0, SoakLoad::Memory, 12.0, 34.0, &[0]);
        assert_eq!(a.kind, CauseKind::Process, "{a:?}");
    }

    #[test]
    fn a_process_present_throughout_is_not_the_window_s_cause() {
        let mut v = series(1, 60, SoakLoad::Gemm);
        for s in &mut v {
            s.processes = vec![7];
        }
        let a = attribute(&v, 0, SoakLoad::Gemm, 20.0, 30.0, &[0]);
        assert_eq!(a.kind, CauseKind::Unknown, "{a:?}");
    }
}
