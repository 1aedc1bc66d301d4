//! The soak's verdict: rules over a recorded series ([`SoakSection`]) that say whether a box
//! stayed healthy under sustained load — every GEMM result right, no Xid, no error counter that
//! grew, throughput steady within each phase (and where it was not, when), no large drop from
//! the first minutes to the last, no hardware slowdown, GPUs at similar temperatures. Each rule
//! gives one [`Check`] per GPU (the temperature spread one for the machine), with the cause and
//! fix below PASS. Limits are the `[soak]` table of the thresholds file ([`SoakThresholds`]).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Check, CheckId, Subject, Verdict, attribution};
use crate::model::soak::duration_words;
use crate::model::validate::{Bounds, number};
use crate::model::{
    SoakEventKind, SoakLoad, SoakSample, SoakSection, Source, ThrottleReason, median,
};

/// One rule of the soak's verdict (check ids `soak_…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SoakRule {
    /// `soak_correctness`: every checked GEMM result equal to the reference.
    Correctness,
    /// `soak_xid`: no Xid event.
    Xid,
    /// `soak_counters`: ECC, remapped rows, retired pages, PCIe replays, NVLink errors.
    Counters,
    /// `soak_jitter`: throughput steady within each phase; dips located in time.
    Jitter,
    /// `soak_drop`: the last minute of a phase against its first.
    Drop,
    /// `soak_throttle`: time spent in hardware or thermal slowdown.
    Throttle,
    /// `soak_temperature`: temperatures, and their spread between GPUs.
    Temperature,
}

impl SoakRule {
    pub const ALL: [SoakRule; 7] = [
        Self::Correctness,
        Self::Xid,
        Self::Counters,
        Self::Jitter,
        Self::Drop,
        Self::Throttle,
        Self::Temperature,
    ];

    pub fn id(&self) -> &'static str {
        match self {
            Self::Correctness => "soak_correctness",
            Self::Xid => "soak_xid",
            Self::Counters => "soak_counters",
            Self::Jitter => "soak_jitter",
            Self::Drop => "soak_drop",
            Self::Throttle => "soak_throttle",
            Self::Temperature => "soak_temperature",
        }
    }
}

impl fmt::Display for SoakRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.id())
    }
}

/// The soak's limits (`[soak]` in the thresholds file). Sources: NVML/DCGM define HW slowdown
/// as clocks cut by a factor of 2 or more (temperature, power brake, fast power trigger) —
/// never normal under load, so any sustained time in it fails; the throughput limits are ours
/// (assumptions, stated in docs/HEALTH.md): on a healthy H100 (2026-11-26, docs/VERIFIED.md)
/// the GEMM varied by 0.4–0.5 % from second to second and device copies by 0.0 %, while host
/// copies varied by 3.3–4.6 % (they depend on the host too); another process on the GPU
/// pushed the GEMM's to 28 %. A GPU settles a few percent below its cold rate as it warms
/// under its power limit (0.4–0.7 % after the first seconds on that H100).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SoakThresholds {
    /// Coefficient of variation of a phase's per-second throughput above which it warns …
    pub jitter_warn: f64,
    /// … and fails.
    pub jitter_fail: f64,
    /// A second this far below the phase's steady level (its best sustained median of three
    /// readings) belongs to a dip (named with its window and its cause).
    pub dip: f64,
    /// Drop of the last minute's median below the first minute's at which it warns …
    pub drop_warn: f64,
    /// … and fails.
    pub drop_fail: f64,
    /// Share of the samples in hardware slowdown (HW slowdown, HW thermal, power brake) above
    /// which it fails (below, any such sample warns).
    pub hw_slowdown_fail: f64,
    /// Share of the samples in software thermal slowdown above which it warns.
    pub sw_thermal_warn: f64,
    /// Spread of the GPUs' mean temperatures over the last minute (°C) above which it warns.
    pub temp_spread_warn_c: f64,
    /// Seconds after each phase starts that the throughput rules skip (clocks and caches settle).
    pub settle_s: f64,
}

impl Default for SoakThresholds {
    fn default() -> Self {
        Self {
            jitter_warn: 0.05,
            jitter_fail: 0.15,
            dip: 0.10,
            drop_warn: 0.10,
            drop_fail: 0.25,
            hw_slowdown_fail: 0.01,
            sw_thermal_warn: 0.05,
            temp_spread_warn_c: 15.0,
            settle_s: 5.0,
        }
    }
}

impl SoakThresholds {
    const FRACTION: Bounds = Bounds::above(0.0, 1.0, "");
    const CELSIUS: Bounds = Bounds::above(0.0, 200.0, "°C");
    const SECONDS: Bounds = Bounds::closed(0.0, 600.0, "s");

    /// Each field within its range; `warn` limits not above `fail` ones.
    pub fn validate(&self) -> Result<(), String> {
        let field =
            |name: &str, b: Bounds, v: f64| b.check(v).map_err(|e| format!("[soak] {name}: {e}"));
        field("jitter_warn", Self::FRACTION, self.jitter_warn)?;
        field("jitter_fail", Self::FRACTION, self.jitter_fail)?;
        field("dip", Self::FRACTION, self.dip)?;
        field("drop_warn", Self::FRACTION, self.drop_warn)?;
        field("drop_fail", Self::FRACTION, self.drop_fail)?;
        field("hw_slowdown_fail", Self::FRACTION, self.hw_slowdown_fail)?;
        field("sw_thermal_warn", Self::FRACTION, self.sw_thermal_warn)?;
        field("temp_spread_warn_c", Self::CELSIUS, self.temp_spread_warn_c)?;
        field("settle_s", Self::SECONDS, self.settle_s)?;
        for (w, f, name) in [
            (self.jitter_warn, self.jitter_fail, "jitter"),
            (self.drop_warn, self.drop_fail, "drop"),
        ] {
            if w > f {
                return Err(format!(
                    "[soak] {name}_warn ({}) must not be above {name}_fail ({})",
                    number(w),
                    number(f)
                ));
            }
        }
        Ok(())
    }
}

/// `m:ss` (or `h:mm:ss`) of a time in seconds, for windows, events and the soak plots' axis:
/// `4:05`, `1:02:03`, `-0:30` before the start; "—" where it is not a time.
pub fn clock(t_s: f64) -> String {
    if !t_s.is_finite() {
        return "—".into();
    }
    let sign = if t_s < 0.0 { "-" } else { "" };
    let s = t_s.abs().round() as u64;
    if s >= 3600 {
        format!("{sign}{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else {
        format!("{sign}{}:{:02}", s / 60, s % 60)
    }
}

/// A stretch of seconds a GPU's throughput stayed below the phase's steady level by more than
/// the dip threshold (what was different then: [`attribution`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Dip {
    pub load: SoakLoad,
    pub from_s: f64,
    pub to_s: f64,
    /// The lowest rate in it against the steady level, e.g. −0.45.
    pub worst: f64,
}

impl fmt::Display for Dip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}–{} ({:+.0} %)",
            self.load,
            // A dip from the first sample starts an interval before it, at most just below 0.
            clock(self.from_s.max(0.0)),
            clock(self.to_s),
            self.worst * 100.0
        )
    }
}

/// The samples of one GPU's phase that the throughput rules use: with a rate, past the settle
/// time of their phase segment.
fn settled<'a>(samples: &[&'a SoakSample], load: SoakLoad, settle_s: f64) -> Vec<&'a SoakSample> {
    let mut out = Vec::new();
    let mut segment_start: Option<f64> = None;
    let mut prev_t = f64::NEG_INFINITY;
    for s in samples {
        if s.phase != Some(load) {
            segment_start = None;
            continue;
        }
        let start = *segment_start.get_or_insert(prev_t.max(s.t_s - 1.0));
        prev_t = s.t_s;
        if s.t_s - start > settle_s && s.rate.is_some_and(f64::is_finite) {
            out.push(*s);
        }
    }
    out
}

/// Mean and coefficient of variation.
fn cv(v: &[f64]) -> Option<(f64, f64)> {
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    Some((mean, var.sqrt() / mean))
}

/// A phase's steady level: the median of its clean readings — those with no evidence of
/// something else at work (no other process on the GPU, no clock setting, hardware or thermal
/// slowdown, the phase's highest power limit, a host not saturated) — or of all its readings
/// where fewer than three are clean. A dip is measured from here, so a dip that fills most of a
/// phase is still a window (a memory phase 13 of 18 s low beside another process once hid its
/// dip in its own median).
pub fn steady_level(samples: &[&SoakSample]) -> Option<f64> {
    let top_limit = samples
        .iter()
        .filter_map(|s| s.power_limit_w)
        .reduce(f64::max);
    let clean = |s: &SoakSample| {
        let reasons_ok = s.throttle.as_ref().is_none_or(|t| {
            !t.iter().any(|r| {
                matches!(
                    r,
                    ThrottleReason::ApplicationsClocks
                        | ThrottleReason::HwSlowdown
                        | ThrottleReason::HwThermalSlowdown
                        | ThrottleReason::HwPowerBrake
                        | ThrottleReason::SwThermalSlowdown
                )
            })
        });
        s.processes.is_empty()
            && reasons_ok
            && s.host_cpu_percent
                .is_none_or(|c| c < attribution::HOST_SATURATED_PERCENT)
            && match (s.power_limit_w, top_limit) {
                (Some(w), Some(top)) => w >= attribution::LIMIT_LOWERED * top,
                _ => true,
            }
    };
    let rates = |keep: &dyn Fn(&SoakSample) -> bool| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| keep(s))
            .filter_map(|s| s.rate)
            .collect()
    };
    let clean_rates = rates(&clean);
    if clean_rates.len() >= 3 {
        median(&clean_rates)
    } else {
        median(&rates(&|_| true))
    }
}

/// The GPU's temperature at the start of `load`'s readings and over `from_s..=to_s`, where it
/// rose by 5 °C or more.
fn heating(samples: &[&SoakSample], load: SoakLoad, from_s: f64, to_s: f64) -> Option<(f64, f64)> {
    let phase: Vec<&&SoakSample> = samples.iter().filter(|s| s.phase == Some(load)).collect();
    let head: Vec<f64> = phase.iter().take(10).filter_map(|s| s.gpu_temp_c).collect();
    let tail: Vec<f64> = phase
        .iter()
        .filter(|s| s.t_s > from_s && s.t_s <= to_s)
        .filter_map(|s| s.gpu_temp_c)
        .collect();
    let (a, b) = (median(&head)?, median(&tail)?);
    (b >= a + 5.0).then_some((a, b))
}

/// The dips of one GPU's phase: runs of seconds below `level × (1 − dip)` (the phase's steady
/// level), joined across a one-sample gap.
pub fn dips(samples: &[&SoakSample], load: SoakLoad, level: f64, dip: f64) -> Vec<Dip> {
    let mut out: Vec<Dip> = Vec::new();
    let limit = level * (1.0 - dip);
    let mut last_low_t: Option<f64> = None;
    let mut interval = 1.0f64;
    let mut prev: Option<f64> = None;
    for s in samples {
        if let Some(p) = prev
            && s.t_s > p
        {
            interval = interval.min(s.t_s - p).max(1e-3);
        }
        prev = Some(s.t_s);
        let Some(r) = s.rate else { continue };
        if r >= limit {
            continue;
        }
        let rel = r / level - 1.0;
        let joins = last_low_t.is_some_and(|t| s.t_s - t <= 2.5 * interval);
        match out.last_mut() {
            Some(d) if joins => {
                d.to_s = s.t_s;
                d.worst = d.worst.min(rel);
            }
            _ => out.push(Dip {
                load,
                from_s: s.t_s - interval,
                to_s: s.t_s,
                worst: rel,
            }),
        }
        last_low_t = Some(s.t_s);
    }
    out
}

/// Every `soak_*` check of `soak` (one per rule per GPU, the spread one per machine).
pub fn checks(soak: &SoakSection, t: &SoakThresholds) -> Vec<Check> {
    let mut out = Vec::new();
    let gpus = soak.sampled_gpus();
    for &g in &gpus {
        let samples: Vec<&SoakSample> = soak.gpu_samples(g).collect();
        out.push(correctness(soak, g, &samples));
        out.push(xid(soak, g, &samples));
        out.push(counters(g, &samples));
        out.extend(throughput(soak, g, &samples, t));
        out.push(throttle(g, &samples, t));
    }
    out.push(temperature(soak, &gpus, t));
    if !soak.finished {
        for c in &mut out {
            c.detail.push_str(&format!(
                " (soak stopped after {} of {})",
                duration_words(soak.elapsed_s),
                duration_words(soak.duration_s)
            ));
        }
    }
    out
}

fn check(rule: SoakRule, subject: Subject, verdict: Verdict, detail: impl Into<String>) -> Check {
    Check::new(
        CheckId::Soak(rule),
        subject,
        verdict,
        Source::Measured,
        detail,
    )
}

fn correctness(soak: &SoakSection, g: usize, samples: &[&SoakSample]) -> Check {
    let checked: u64 = samples.iter().filter_map(|s| s.checked).sum();
    let wrong: u64 = samples.iter().filter_map(|s| s.mismatches).sum();
    let subject = Subject::Gpu(g);
    if checked == 0 {
        return check(
            SoakRule::Correctness,
            subject,
            Verdict::Unknown,
            "not verified: no GEMM result was checked (no gemm phase ran)",
        );
    }
    // A replayed soak.csv keeps the finding's words, not its kind.
    let first = soak.events.iter().find(|e| {
        e.gpu == Some(g)
            && (matches!(e.kind, SoakEventKind::Mismatch { .. })
                || e.text.starts_with(MISMATCH_WORDS))
    });
    if wrong == 0 && first.is_none() {
        return check(
            SoakRule::Correctness,
            subject,
            Verdict::Pass,
            format!("{checked} GEMM results checked, all equal to the reference"),
        );
    }
    let what = first
        .map(|e| format!("first at {}: {}", clock(e.t_s), e.text))
        .unwrap_or_default();
    check(
        SoakRule::Correctness,
        subject,
        Verdict::Fail,
        format!("{wrong} of {checked} GEMM results wrong; {what}"),
    )
    .because_text(
        "silent data corruption: the GPU computed a wrong result under load (failing SMs or memory, an unstable clock or voltage)".into(),
        "run the soak again on this GPU alone; if results are wrong again, take the GPU out of service and ask the vendor for an RMA (attach soak.csv and report.json)",
    )
}

/// How a wrong GEMM result's event begins (`job::soak` writes it; a replay finds it by it).
pub const MISMATCH_WORDS: &str = "wrong GEMM result";

fn xid(soak: &SoakSection, g: usize, samples: &[&SoakSample]) -> Check {
    let mut seen: Vec<(f64, u64)> = samples
        .iter()
        .flat_map(|s| s.xid.iter().map(|x| (s.t_s, *x)))
        .collect();
    for e in &soak.events {
        if e.gpu == Some(g)
            && let SoakEventKind::Xid { xid } = e.kind
            && !seen
                .iter()
                .any(|(t, x)| *x == xid && (t - e.t_s).abs() < 2.0)
        {
            seen.push((e.t_s, xid));
        }
    }
    if seen.is_empty() {
        return check(
            SoakRule::Xid,
            Subject::Gpu(g),
            Verdict::Pass,
            "no Xid event",
        );
    }
    let list: Vec<String> = seen
        .iter()
        .take(5)
        .map(|(t, x)| format!("Xid {x} at {}", clock(*t)))
        .collect();
    check(
        SoakRule::Xid,
        Subject::Gpu(g),
        Verdict::Fail,
        format!(
            "{} Xid event{}: {}{}",
            seen.len(),
            if seen.len() == 1 { "" } else { "s" },
            list.join(", "),
            if seen.len() > 5 { ", …" } else { "" }
        ),
    )
    .because_text(
        "the driver reported a GPU error under load (an Xid: look it up in NVIDIA's Xid catalog; 48, 63, 64, 74, 79, 92, 94, 95 point at memory, NVLink or the GPU falling off the bus)".into(),
        "read `dmesg | grep -i xid` for the full message, then follow NVIDIA's Xid catalog for that number",
    )
}

/// How much a counter grew between its first and last reading (`None`: never read).
fn growth(samples: &[&SoakSample], f: impl Fn(&SoakSample) -> Option<u64>) -> Option<u64> {
    let first = samples.iter().find_map(|s| f(s))?;
    let last = samples.iter().rev().find_map(|s| f(s))?;
    Some(last.saturating_sub(first))
}

fn counters(g: usize, samples: &[&SoakSample]) -> Check {
    let span = match (samples.first(), samples.last()) {
        (Some(a), Some(b)) => (b.t_s - a.t_s).max(1.0),
        _ => 1.0,
    };
    let fatal = [
        (
            "uncorrected ECC errors",
            growth(samples, |s| s.ecc_uncorrected),
        ),
        (
            "uncorrectable remapped rows",
            growth(samples, |s| s.remapped_uncorrectable),
        ),
        ("retired pages", growth(samples, |s| s.retired_pages)),
    ];
    let soft = [
        ("corrected ECC errors", growth(samples, |s| s.ecc_corrected)),
        (
            "correctable remapped rows",
            growth(samples, |s| s.remapped_correctable),
        ),
        ("PCIe replays", growth(samples, |s| s.pcie_replays)),
        ("NVLink errors", growth(samples, |s| s.nvlink_errors)),
    ];
    let grew = |list: &[(&str, Option<u64>)]| -> Vec<String> {
        list.iter()
            .filter_map(|(name, g)| {
                g.filter(|n| *n > 0)
                    .map(|n| format!("{name} +{n} ({:.2}/min)", n as f64 / span * 60.0))
            })
            .collect()
    };
    let read: Vec<&str> = fatal
        .iter()
        .chain(&soft)
        .filter(|(_, g)| g.is_some())
        .map(|(n, _)| *n)
        .collect();
    let (hard, warn) = (grew(&fatal), grew(&soft));
    if !hard.is_empty() {
        let mut all = hard;
        all.extend(warn);
        return check(
            SoakRule::Counters,
            Subject::Gpu(g),
            Verdict::Fail,
            format!("grew under load: {}", all.join(", ")),
        )
        .because_text(
            "device memory failing under load (uncorrectable errors, rows remapped or pages retired)".into(),
            "drain the GPU; reset it to apply pending remaps (nvidia-smi -r) and soak again; if the count grows again, RMA the GPU",
        );
    }
    if !warn.is_empty() {
        return check(
            SoakRule::Counters,
            Subject::Gpu(g),
            Verdict::Warn,
            format!("grew under load: {}", warn.join(", ")),
        )
        .because_text(
            "errors the hardware corrected: a marginal memory cell, PCIe slot, riser or NVLink cable".into(),
            "watch the counter over more soaks; reseat the GPU or cable if it keeps growing (nvidia-smi -q -d ECC,PCIE; nvidia-smi nvlink -e)",
        );
    }
    if read.is_empty() {
        return check(
            SoakRule::Counters,
            Subject::Gpu(g),
            Verdict::Unknown,
            "not verified: no error counter could be read",
        );
    }
    check(
        SoakRule::Counters,
        Subject::Gpu(g),
        Verdict::Pass,
        format!("no growth ({} read)", read.join(", ")),
    )
}

/// Jitter and drop per phase of one GPU: one check each, over every phase that ran.
fn throughput(
    soak: &SoakSection,
    g: usize,
    samples: &[&SoakSample],
    t: &SoakThresholds,
) -> Vec<Check> {
    let mut phases = PhaseFigures {
        jitter_parts: Vec::new(),
        drop_parts: Vec::new(),
        jitter_v: Verdict::Pass,
        drop_v: Verdict::Pass,
        dips: Vec::new(),
        worst_drop: None,
    };
    for load in soak.loads.iter().copied().chain(SoakLoad::ALL) {
        if phases.jitter_parts.iter().any(|(l, _)| *l == load)
            || phases.drop_parts.iter().any(|(l, _)| *l == load)
        {
            continue;
        }
        phases.phase(samples, load, t);
    }
    vec![
        phases.jitter_check(soak, g, t),
        phases.drop_check(soak, g, samples),
    ]
}

/// What [`throughput`] gathers over one GPU's phases: each phase's jitter and drop in words,
/// the verdicts so far, the dips below the steady level and the worst drop.
struct PhaseFigures {
    jitter_parts: Vec<(SoakLoad, String)>,
    drop_parts: Vec<(SoakLoad, String)>,
    jitter_v: Verdict,
    drop_v: Verdict,
    dips: Vec<Dip>,
    /// (load, drop, the last stretch's window) of the worst drop.
    worst_drop: Option<(SoakLoad, f64, f64, f64)>,
}

impl PhaseFigures {
    /// The phase of `load` in `samples`: its jitter and dips once it has settled, and its drop.
    fn phase(&mut self, samples: &[&SoakSample], load: SoakLoad, t: &SoakThresholds) {
        let s = settled(samples, load, t.settle_s);
        let rates: Vec<f64> = s.iter().filter_map(|x| x.rate).collect();
        let Some((mean, c)) = cv(&rates) else {
            return;
        };
        let med = median(&rates).unwrap_or(mean);
        let steady = steady_level(&s).unwrap_or(med);
        let v = if c > t.jitter_fail {
            Verdict::Fail
        } else if c > t.jitter_warn {
            Verdict::Warn
        } else {
            Verdict::Pass
        };
        self.jitter_v = self.jitter_v.max(v);
        let ds = dips(&s, load, steady, t.dip);
        self.jitter_parts.push((
            load,
            format!(
                "{load} {:.1} % CV around {} {}",
                c * 100.0,
                figure(med),
                load.unit_words()
            ),
        ));
        self.dips.extend(ds);
        self.phase_drop(&s, load, t);
    }

    /// The drop of the settled phase `s` of `load`: its first and last minute (a third of it
    /// when shorter than three minutes) compared, when that is 5 s or more.
    fn phase_drop(&mut self, s: &[&SoakSample], load: SoakLoad, t: &SoakThresholds) {
        let (Some(t0), Some(t1)) = (s.first().map(|x| x.t_s), s.last().map(|x| x.t_s)) else {
            return;
        };
        let span = t1 - t0;
        let w = (span / 3.0).min(60.0);
        let head: Vec<f64> = s
            .iter()
            .filter(|x| x.t_s <= t0 + w)
            .filter_map(|x| x.rate)
            .collect();
        let tail: Vec<f64> = s
            .iter()
            .filter(|x| x.t_s >= t1 - w)
            .filter_map(|x| x.rate)
            .collect();
        if w >= 5.0
            && let (Some(a), Some(b)) = (median(&head), median(&tail))
            && a > 0.0
        {
            let drop = 1.0 - b / a;
            let v = if drop > t.drop_fail {
                Verdict::Fail
            } else if drop > t.drop_warn {
                Verdict::Warn
            } else {
                Verdict::Pass
            };
            self.drop_v = self.drop_v.max(v);
            if self.worst_drop.is_none_or(|(_, d, _, _)| drop > d) {
                self.worst_drop = Some((load, drop, t1 - w, t1));
            }
            self.drop_parts.push((
                load,
                format!(
                    "{load} {} → {} {} ({:+.1} %, first and last {})",
                    figure(a),
                    figure(b),
                    load.unit_words(),
                    -drop * 100.0,
                    duration_words(w)
                ),
            ));
        }
    }

    /// GPU `g`'s jitter check: each phase's variation and the dips below its steady level (a
    /// dip warns at least), each dip a window with its cause, the worst one's in the check.
    fn jitter_check(&mut self, soak: &SoakSection, g: usize, t: &SoakThresholds) -> Check {
        let subject = Subject::Gpu(g);
        if self.jitter_parts.is_empty() {
            return check(
                SoakRule::Jitter,
                subject,
                Verdict::Unknown,
                "not judged: fewer than two settled throughput samples in any phase",
            );
        }
        let mut text = self
            .jitter_parts
            .iter()
            .map(|(_, d)| d.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let all_dips = &mut self.dips;
        if !all_dips.is_empty() {
            all_dips.sort_by(|a, b| a.worst.total_cmp(&b.worst));
            let shown: Vec<String> = all_dips.iter().take(4).map(|d| d.to_string()).collect();
            text.push_str(&format!(
                "; below the steady level by more than {:.0} % at {}{}",
                t.dip * 100.0,
                shown.join(", "),
                if all_dips.len() > 4 {
                    format!(" and {} more", all_dips.len() - 4)
                } else {
                    String::new()
                }
            ));
            if self.jitter_v == Verdict::Pass {
                self.jitter_v = Verdict::Warn;
            }
        }
        let mut c = check(SoakRule::Jitter, subject, self.jitter_v, text);
        c.windows = dip_windows(soak, g, all_dips);
        if self.jitter_v == Verdict::Pass {
            return c;
        }
        jitter_cause(c)
    }

    /// GPU `g`'s drop check: each phase's first and last stretch, and the worst drop's cause.
    fn drop_check(&self, soak: &SoakSection, g: usize, samples: &[&SoakSample]) -> Check {
        let subject = Subject::Gpu(g);
        if self.drop_parts.is_empty() {
            return check(
                SoakRule::Drop,
                subject,
                Verdict::Unknown,
                "not judged: no phase ran long enough to compare its first and last minutes",
            );
        }
        let text: Vec<&str> = self.drop_parts.iter().map(|(_, d)| d.as_str()).collect();
        let c = check(SoakRule::Drop, subject, self.drop_v, text.join("; "));
        if self.drop_v == Verdict::Pass {
            return c;
        }
        let (load, d, from_s, to_s) = self.worst_drop.unwrap_or((SoakLoad::Gemm, 0.0, 0.0, 0.0));
        // A last stretch inside a dip the jitter rule found is that dip, not a sag over the
        // run: its cause is the dip's, read over the dip's own window (a competing job in the
        // phase's last seconds left too few clean readings in the phase to tell it apart).
        let dip = self
            .dips
            .iter()
            .find(|p| p.load == load && p.from_s < to_s && p.to_s > from_s);
        let (from, to) = dip.map_or((from_s, to_s), |p| (p.from_s, p.to_s));
        let a = attribution::attribute(&soak.samples, g, load, from, to, &soak.sampled_gpus());
        if let Some(dip) = dip {
            return c.because_text(
                format!(
                    "{load} fell {:.0} % by its last stretch, which is the dip {dip}: {}",
                    d * 100.0,
                    a.cause
                ),
                &a.fix,
            );
        }
        let (cause, fix) = if a.kind != attribution::CauseKind::Unknown {
            (a.cause, a.fix)
        } else if let Some((t0, t1)) = heating(samples, load, from_s, to_s) {
            (
                format!("GPU {g} heating up: {t0:.0} °C at the start of the phase, {t1:.0} °C in its last stretch"),
                "compare the clocks at the start and end (soak.csv); check fans, airflow and inlet temperature".into(),
            )
        } else {
            (a.cause, a.fix)
        };
        c.because_text(
            format!(
                "{load} throughput sagged {:.0} % as the run went on: {cause}",
                d * 100.0
            ),
            &fix,
        )
    }
}

/// GPU `g`'s dips below the steady level as windows, each with its attributed cause.
fn dip_windows(soak: &SoakSection, g: usize, dips: &[Dip]) -> Vec<attribution::Window> {
    let members = soak.sampled_gpus();
    dips.iter()
        .map(|d| {
            let a = attribution::attribute(&soak.samples, g, d.load, d.from_s, d.to_s, &members);
            attribution::Window {
                gpu: g,
                load: d.load,
                from_s: d.from_s,
                to_s: d.to_s,
                worst: d.worst,
                cause_kind: a.kind,
                cause: a.cause,
                fix: a.fix,
                evidence_gpu: a.evidence_gpu,
            }
        })
        .collect()
}

/// Jitter check `c` with the cause of its worst window (the windows are sorted worst first;
/// the others are in `windows` and in the detail's list), or an unknown cause without one.
fn jitter_cause(c: Check) -> Check {
    match c.windows.first() {
        Some(w) => {
            let (cause, fix) = (w.cause.clone(), w.fix.clone());
            let more: Vec<String> = c
                .windows
                .iter()
                .skip(1)
                .take(3)
                .map(|x| format!("{} {}: {}", x.load, clock(x.from_s), x.cause_kind.words()))
                .collect();
            let at = format!("{} {}–{}", w.load, clock(w.from_s), clock(w.to_s));
            let also = (!more.is_empty()).then(|| format!("also {}", more.join("; ")));
            // An unknown cause keeps its words first, so it is never shown as likely.
            let cause = match (w.cause_kind == attribution::CauseKind::Unknown, also) {
                (true, Some(also)) => format!("{cause} ({at}; {also})"),
                (true, None) => format!("{cause} ({at})"),
                (false, Some(also)) => format!("{at}: {cause} ({also})"),
                (false, None) => format!("{at}: {cause}"),
            };
            c.because_text(cause, &fix)
        }
        None => c.because_text(
            "cause unknown: the throughput varied under a steady load, with no window of seconds below its steady level to set against the readings".into(),
            "look at the clocks, power and throttle reasons in soak.csv; run the soak again on an otherwise idle machine",
        ),
    }
}

fn figure(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn throttle(g: usize, samples: &[&SoakSample], t: &SoakThresholds) -> Check {
    let read: Vec<&Vec<ThrottleReason>> =
        samples.iter().filter_map(|s| s.throttle.as_ref()).collect();
    if read.is_empty() {
        return check(
            SoakRule::Throttle,
            Subject::Gpu(g),
            Verdict::Unknown,
            "not verified: clock event reasons could not be read",
        );
    }
    let n = read.len() as f64;
    let mut share: BTreeMap<ThrottleReason, f64> = BTreeMap::new();
    for r in &read {
        for reason in r.iter() {
            *share.entry(*reason).or_default() += 1.0 / n;
        }
    }
    let hw = read
        .iter()
        .filter(|r| {
            r.iter().any(|x| {
                matches!(
                    x,
                    ThrottleReason::HwSlowdown
                        | ThrottleReason::HwThermalSlowdown
                        | ThrottleReason::HwPowerBrake
                )
            })
        })
        .count() as f64
        / n;
    let sw_thermal = share
        .get(&ThrottleReason::SwThermalSlowdown)
        .copied()
        .unwrap_or(0.0);
    let listed: Vec<String> = share
        .iter()
        .filter(|(r, _)| **r != ThrottleReason::GpuIdle)
        .map(|(r, f)| format!("{} {:.0} %", r.label(), f * 100.0))
        .collect();
    let detail = if listed.is_empty() {
        "no clock limit seen".to_string()
    } else {
        format!("time held by: {}", listed.join(", "))
    };
    if hw > t.hw_slowdown_fail || (hw > 0.0 && sw_thermal > t.sw_thermal_warn) {
        return check(SoakRule::Throttle, Subject::Gpu(g), Verdict::Fail, detail).because_text(
            "hardware slowdown under load (clocks cut by half or more): the GPU too hot, the power supply braking, or power spikes tripping the fast trigger".into(),
            "check cooling and inlet temperature, the PSUs and their cabling; nvidia-smi -q -d PERFORMANCE during load names the reason",
        );
    }
    if hw > 0.0 || sw_thermal > t.sw_thermal_warn {
        return check(SoakRule::Throttle, Subject::Gpu(g), Verdict::Warn, detail).because_text(
            "the GPU was slowed for temperature (or briefly by hardware slowdown)".into(),
            "check airflow, fans and inlet temperature; compare with the other GPUs' temperatures",
        );
    }
    // The power cap holding clocks under a GEMM load is how these GPUs run: not a fault.
    check(SoakRule::Throttle, Subject::Gpu(g), Verdict::Pass, detail)
}

fn temperature(soak: &SoakSection, gpus: &[usize], t: &SoakThresholds) -> Check {
    // Each GPU's mean temperature over the last minute, and its maximum.
    let end = soak
        .samples
        .iter()
        .map(|s| s.t_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut per: Vec<(usize, f64, f64)> = Vec::new();
    for &g in gpus {
        let all: Vec<f64> = soak.gpu_samples(g).filter_map(|s| s.gpu_temp_c).collect();
        let last: Vec<f64> = soak
            .gpu_samples(g)
            .filter(|s| s.t_s >= end - 60.0)
            .filter_map(|s| s.gpu_temp_c)
            .collect();
        if last.is_empty() {
            continue;
        }
        let mean = last.iter().sum::<f64>() / last.len() as f64;
        let max = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        per.push((g, mean, max));
    }
    if per.is_empty() {
        return check(
            SoakRule::Temperature,
            Subject::Machine,
            Verdict::Unknown,
            "not verified: no temperature could be read",
        );
    }
    let list: Vec<String> = per
        .iter()
        .map(|(g, mean, max)| format!("GPU {g} {mean:.0} °C (max {max:.0})"))
        .collect();
    let hottest = per.iter().max_by(|a, b| a.1.total_cmp(&b.1)).copied();
    let coolest = per.iter().min_by(|a, b| a.1.total_cmp(&b.1)).copied();
    let (Some(h), Some(c)) = (hottest, coolest) else {
        unreachable!("per is not empty")
    };
    let spread = h.1 - c.1;
    let detail = format!(
        "last minute: {}{}",
        list.join(", "),
        if per.len() > 1 {
            format!("; spread {spread:.0} °C")
        } else {
            String::new()
        }
    );
    if per.len() > 1 && spread > t.temp_spread_warn_c {
        return check(
            SoakRule::Temperature,
            Subject::Gpu(h.0),
            Verdict::Warn,
            detail,
        )
        .because_text(
            format!(
                "GPU {} runs {spread:.0} °C hotter than GPU {} under the same load: blocked airflow, a failing fan or poor contact with its heatsink",
                h.0, c.0
            ),
            "check the airflow and fans at that GPU's slot; compare with another node of the same model",
        );
    }
    check(
        SoakRule::Temperature,
        Subject::Machine,
        Verdict::Pass,
        detail,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(rates: &[f64]) -> SoakSection {
        SoakSection {
            duration_s: rates.len() as f64,
            elapsed_s: rates.len() as f64,
            interval_s: 1.0,
            loads: vec![SoakLoad::Gemm],
            gpus: vec![0],
            samples: rates
                .iter()
                .enumerate()
                .map(|(i, r)| SoakSample {
                    t_s: (i + 1) as f64,
                    gpu: 0,
                    phase: Some(SoakLoad::Gemm),
                    rate: Some(*r),
                    throttle: Some(vec![ThrottleReason::SwPowerCap]),
                    gpu_temp_c: Some(60.0),
                    checked: Some(10),
                    mismatches: Some(0),
                    ecc_corrected: Some(3),
                    ..Default::default()
                })
                .collect(),
            finished: true,
            ..Default::default()
        }
    }

    fn verdict(checks: &[Check], rule: SoakRule) -> Verdict {
        checks
            .iter()
            .find(|c| c.check == CheckId::Soak(rule))
            .map(|c| c.verdict)
            .unwrap()
    }

    #[test]
    fn a_steady_series_passes_every_rule() {
        let rates: Vec<f64> = (0..300).map(|i| 700.0 + (i % 3) as f64).collect();
        let c = checks(&series(&rates), &SoakThresholds::default());
        for rule in SoakRule::ALL {
            assert_eq!(verdict(&c, rule), Verdict::Pass, "{rule}: {c:#?}");
        }
    }

    #[test]
    fn a_dip_is_found_with_its_window() {
        let mut rates: Vec<f64> = vec![700.0; 300];
        for r in &mut rates[120..150] {
            *r = 380.0;
        }
        let jitter = |rates: &[f64]| {
            checks(&series(rates), &SoakThresholds::default())
                .into_iter()
                .find(|c| c.check == CheckId::Soak(SoakRule::Jitter))
                .unwrap()
        };
        // 30 s of 300 at −46 %: 14 % CV, under the 15 % FAIL limit, but the dip itself warns.
        let j = jitter(&rates);
        assert_eq!(j.verdict, Verdict::Warn, "{}", j.detail);
        assert!(j.detail.contains("gemm 2:00–2:30 (-46 %)"), "{}", j.detail);
        for r in &mut rates[150..165] {
            *r = 380.0;
        }
        let j = jitter(&rates);
        assert_eq!(j.verdict, Verdict::Fail, "{}", j.detail);
        assert!(j.detail.contains("gemm 2:00–2:45 (-46 %)"), "{}", j.detail);
    }

    #[test]
    fn counters_and_sag_are_named() {
        let rates: Vec<f64> = (0..300).map(|i| 700.0 - i as f64 * 0.8).collect();
        let mut s = series(&rates);
        s.samples[200].ecc_corrected = Some(5);
        s.samples[299].ecc_corrected = Some(5);
        let c = checks(&s, &SoakThresholds::default());
        assert_eq!(verdict(&c, SoakRule::Counters), Verdict::Warn);
        assert_eq!(verdict(&c, SoakRule::Drop), Verdict::Fail);
    }

    #[test]
    fn thresholds_are_checked() {
        let t = SoakThresholds {
            jitter_warn: 0.2,
            jitter_fail: 0.1,
            ..Default::default()
        };
        assert!(t.validate().unwrap_err().contains("jitter_warn"));
        let t = SoakThresholds {
            dip: f64::NAN,
            ..Default::default()
        };
        assert!(t.validate().unwrap_err().starts_with("[soak] dip"));
    }
}
