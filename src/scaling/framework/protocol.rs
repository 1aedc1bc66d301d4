//! The script's protocol: one JSON object per line on standard output (its docstring is the
//! specification), read bounded and checked.

use std::io::Read;

use serde::{Deserialize, Serialize};

use crate::scaling::calibrate::{UnderDdp, is_host_bound};

/// Lines longer than this are cut (a script that prints garbage cannot exhaust memory).
pub(super) const MAX_LINE: usize = 1 << 20;

/// A line as it may be shown: control characters escaped, cut to `max` characters.
pub fn clip(s: &str, max: usize) -> String {
    let escaped = crate::model::validate::for_terminal(s);
    if escaped.chars().count() > max {
        format!("{}…", escaped.chars().take(max).collect::<String>())
    } else {
        escaped
    }
}

/// Step-time statistics of one result line, ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepStats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub n: usize,
}

impl StepStats {
    /// The step a row reports: the mean over the timed steps, the time a training run of those
    /// steps takes per step (its samples/s). On a host whose speed wanders (a host-bound step
    /// on a shared VM) the steps spread to the right, and their median then reads below the
    /// run: BERT-large on 2× H200 read 62.26 ms by its median where the plain loop's wall clock
    /// gave 65.61 ms a step and the steps' mean 65.68 ms (docs/BENCHMARKS.md).
    pub fn figure(&self) -> f64 {
        self.mean
    }
}

/// Kernel time per step on one rank (PyTorch profiler), ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub matrix: f64,
    pub nccl: f64,
    pub other: f64,
    pub busy_ms: f64,
    pub nccl_overlap_ms: f64,
    pub wall_ms: f64,
}

/// Profiles of every rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProfileSet {
    pub ranks: Vec<Option<Profile>>,
}

/// One measured mode of one launch (`"event": "result"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    pub workload: Option<String>,
    pub mode: String,
    pub world_size: usize,
    pub micro_batch: f64,
    pub accumulate: f64,
    pub per_gpu_batch: f64,
    pub global_batch: f64,
    pub steps: usize,
    pub step_ms: StepStats,
    #[serde(default)]
    pub rank_median_ms: Vec<f64>,
    #[serde(default)]
    pub step_samples_ms: Vec<f64>,
    pub fwd_ms: Option<f64>,
    pub bwd_ms: Option<f64>,
    pub opt_ms: Option<f64>,
    pub samples_per_s: Option<f64>,
    pub peak_mem_gib: Option<f64>,
    pub reserved_gib: Option<f64>,
    pub params: Option<f64>,
    pub model: Option<String>,
    pub profile: Option<ProfileSet>,
    /// The host floor (world size 1): the mean step at `host_micro_batch` samples, ms.
    #[serde(default)]
    pub host_ms: Option<f64>,
    #[serde(default)]
    pub host_micro_batch: Option<f64>,
    /// The sequence length of the host floor's batch, where the micro-batch had too few samples
    /// to take a sixteenth of them (language models: shorter sequences instead).
    #[serde(default)]
    pub host_seq_len: Option<f64>,
    /// The host probe between the timed steps (same process), median, µs per iteration: the
    /// host's speed during the window.
    #[serde(default)]
    pub host_probe_us: Option<f64>,
    /// How many host probe timings that median is of.
    #[serde(default)]
    pub host_probes: Option<f64>,
    /// The host probe just before and after the host floor, µs per iteration (their mean).
    #[serde(default)]
    pub host_floor_probe_us: Option<f64>,
    /// Seconds the timed steps took, and whether the window grew because they spread widely.
    #[serde(default)]
    pub window_s: Option<f64>,
    #[serde(default)]
    pub extended: bool,
    /// Steps run in the window (timed, and the untimed refills after host probes).
    #[serde(default)]
    pub window_steps: Option<f64>,
    /// The window by the wall clock: Unix seconds at its start and end, and its length.
    #[serde(default)]
    pub window_t: Option<[f64; 2]>,
    #[serde(default)]
    pub window_wall_s: Option<f64>,
    /// Every rank's GPU: NVML's energy counter (mJ) and power (mW) at the window's start and
    /// end, its power before the model was built and its power limit (mW); `null` where NVML
    /// gave none.
    #[serde(default)]
    pub energy_mj: Vec<[Option<u64>; 2]>,
    #[serde(default)]
    pub power_mw: Vec<[Option<u64>; 2]>,
    #[serde(default)]
    pub idle_mw: Vec<Option<u64>>,
    #[serde(default)]
    pub power_limit_mw: Vec<Option<u64>>,
    /// Every rank's lowest SM clock (MHz) and NVML's clock event reasons OR-ed, read after
    /// each batch of steps was queued; `null` where NVML gave none.
    #[serde(default)]
    pub sm_mhz: Vec<Option<u64>>,
    #[serde(default)]
    pub clock_events: Vec<Option<u64>>,
    /// The host probes inside the window (their energy is in it): their seconds and Unix
    /// intervals.
    #[serde(default)]
    pub probe_s: Option<f64>,
    #[serde(default)]
    pub probe_t: Vec<[f64; 2]>,
    /// Every rank's stretches of back-to-back steps between drains, `[t0, e0, t1, e1]` (Unix
    /// seconds, mJ of NVML's energy counter), each read while the GPU ran steps: the steps'
    /// own energy, without the host probes (the script's `Stretches`).
    #[serde(default)]
    pub energy_stretches: Vec<Vec<[f64; 4]>>,
    /// `ddp` or `fsdp` where the model was wrapped (two or more ranks); `None`: the plain step.
    #[serde(default)]
    pub wrapped: Option<String>,
    /// At one rank: the median step under DDP on a group of one, and the plain step timed in
    /// the blocks between (the same host speed), ms; or why the wrapped step did not run.
    #[serde(default)]
    pub ddp_one_ms: Option<f64>,
    #[serde(default)]
    pub ddp_one_plain_ms: Option<f64>,
    #[serde(default)]
    pub ddp_one_steps: Option<f64>,
    #[serde(default)]
    pub ddp_one_note: Option<String>,
}

impl ResultLine {
    /// Checks what the rows are built from: finite, positive, consistent.
    fn check(&self) -> Result<(), String> {
        let s = &self.step_ms;
        for (name, v) in [
            ("step_ms.median", s.median),
            ("step_ms.mean", s.mean),
            ("step_ms.min", s.min),
            ("step_ms.max", s.max),
            ("per_gpu_batch", self.per_gpu_batch),
            ("global_batch", self.global_batch),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} = {v} is not a positive number"));
            }
        }
        if !(s.min <= s.median && s.median <= s.max) {
            return Err("step_ms: median outside min … max".into());
        }
        // The mean of floats rounds: a hair outside min … max is the same figure.
        let slack = 1e-9 * s.max;
        if !(s.min - slack <= s.mean && s.mean <= s.max + slack) {
            return Err("step_ms: mean outside min … max".into());
        }
        if self.world_size == 0 {
            return Err("world_size = 0".into());
        }
        Ok(())
    }

    /// The host floor at the host's speed while the steps were timed: the floor × the window's
    /// host probe ÷ the probe beside the floor (the host term's own rule, docs/SCALING.md),
    /// since on a host whose speed wanders the floor, timed after the window, may have met a
    /// faster or slower spell. As measured where either probe is missing. Never above the
    /// step it is a floor of: that step was issued in its own time at the window's host speed,
    /// so a floor that reads longer met a slower spell than its probes caught (BERT-large on 2×
    /// H200: 78.4 ms against the window's 77.1 ms, docs/BENCHMARKS.md) — the step then.
    pub fn host_floor_at_window(&self) -> Option<f64> {
        self.host_floor_read().map(|f| f.min(self.step_ms.figure()))
    }

    /// [`Self::host_floor_at_window`] before it is held to the step.
    fn host_floor_read(&self) -> Option<f64> {
        let floor = positive(self.host_ms)?;
        Some(
            match (
                positive(self.host_probe_us),
                positive(self.host_floor_probe_us),
            ) {
                (Some(window), Some(beside)) => floor * window / beside,
                _ => floor,
            },
        )
    }

    /// The GPUs' energy over the timed window (every rank's GPU), with the window's length in
    /// seconds and the steps run in it; `Err` says why there is none (an older script, a GPU
    /// NVML could not read).
    pub(super) fn window_energy(
        &self,
    ) -> Result<(crate::model::energy::WindowEnergy, f64, f64), String> {
        use crate::model::energy::{WindowReadings, total_energy};
        let seconds = self
            .window_wall_s
            .ok_or("the script gave no window for energy")?;
        let steps = self
            .window_steps
            .filter(|s| s.is_finite() && *s >= 1.0)
            .ok_or("the script gave no step count for the window")?;
        if self.energy_mj.len() != self.world_size || self.power_mw.len() != self.world_size {
            return Err(format!(
                "readings of {} GPU(s) for a world of {}",
                self.energy_mj.len().min(self.power_mw.len()),
                self.world_size
            ));
        }
        let gpus: Vec<WindowReadings> = self
            .energy_mj
            .iter()
            .zip(&self.power_mw)
            .map(|(&energy_mj, &power_mw)| WindowReadings {
                energy_mj,
                power_mw,
            })
            .collect();
        Ok((total_energy(&gpus, seconds)?, seconds, steps))
    }

    /// The steps' own energy: every rank's mean power over its stretches of steps (the host
    /// probes and drains left out), W per rank; `None` where any rank has no stretch (an older
    /// script, no counter, windows too short), then the window's readings apply.
    pub(super) fn stretch_power(&self) -> Option<StretchPower> {
        if self.energy_stretches.len() != self.world_size || self.world_size == 0 {
            return None;
        }
        let mut out = StretchPower {
            watts: Vec::new(),
            seconds: f64::INFINITY,
            stretches: 0,
        };
        for rank in &self.energy_stretches {
            let (mut joules, mut seconds) = (0.0, 0.0);
            for &[t0, e0, t1, e1] in rank {
                if ![t0, e0, t1, e1].iter().all(|v| v.is_finite()) || t1 <= t0 || e1 < e0 {
                    return None;
                }
                joules += (e1 - e0) / 1e3;
                seconds += t1 - t0;
            }
            let w = joules / seconds;
            if !(seconds > 0.0 && w.is_finite() && w <= crate::model::energy::MAX_PLAUSIBLE_WATTS) {
                return None;
            }
            out.watts.push(w);
            out.seconds = out.seconds.min(seconds);
            out.stretches = out.stretches.max(rank.len());
        }
        Some(out)
    }

    /// The mean power of the GPUs before the model was built, W, where every one was read.
    pub(super) fn idle_watts(&self) -> Option<f64> {
        let all: Option<Vec<u64>> = self.idle_mw.iter().copied().collect();
        let all = all.filter(|v| !v.is_empty())?;
        Some(all.iter().sum::<u64>() as f64 / all.len() as f64 / 1e3)
    }

    /// What the clocks did in the window, for the row's basis: `; clocks: SM 1980 MHz at the
    /// lowest, not throttled` or `; throttled in the window: software power cap (GPU 0)`;
    /// empty where NVML gave nothing.
    pub(super) fn clock_note(&self) -> String {
        let mut throttled: Vec<String> = Vec::new();
        for (rank, mask) in self.clock_events.iter().enumerate() {
            let why = crate::model::energy::throttle_reasons(mask.unwrap_or(0));
            if !why.is_empty() {
                throttled.push(format!("{} (rank {rank})", why.join(", ")));
            }
        }
        let lowest = self.sm_mhz.iter().flatten().min();
        let clocks = lowest
            .map(|m| format!("SM {m} MHz at the lowest"))
            .unwrap_or_default();
        match (throttled.is_empty(), clocks.is_empty()) {
            (false, _) => format!(
                "; throttled in the window: {}{}",
                throttled.join("; "),
                if clocks.is_empty() {
                    String::new()
                } else {
                    format!(", {clocks}")
                }
            ),
            (true, false) if self.clock_events.iter().any(Option::is_some) => {
                format!("; clocks: {clocks}, not throttled")
            }
            (true, false) => format!("; clocks: {clocks}"),
            (true, true) => String::new(),
        }
    }

    /// The host floor and the host's speed while the steps were timed, for the row's basis
    /// (empty where the floor was not measured).
    pub(super) fn host_note(&self) -> String {
        let Some(read) = self.host_floor_read() else {
            return String::new();
        };
        // As `host_floor_at_window` holds it.
        let floor = read.min(self.step_ms.figure());
        format!(
            "; host floor {floor:.1} ms ({:.0} % of the step{}{}{}){}",
            floor / self.step_ms.figure() * 100.0,
            if is_host_bound(floor, self.step_ms.figure()) {
                ": host-bound"
            } else {
                ""
            },
            if read > floor {
                format!("; read {read:.1} ms, longer than the step: held to it")
            } else {
                String::new()
            },
            match (self.host_micro_batch, positive(self.host_seq_len)) {
                (Some(b), Some(seq)) => format!("; timed at {b:.0} × {seq:.0} tokens"),
                _ => String::new(),
            },
            match (positive(self.host_probe_us), self.host_probes) {
                (Some(us), Some(k)) =>
                    format!(", host probe {us:.0} µs during the window ({k:.0} readings)"),
                (Some(us), None) => format!(", host probe {us:.0} µs"),
                _ => String::new(),
            }
        )
    }

    /// The hosts' speed while the n-GPU steps were timed (the slowest rank's host probe, read
    /// between the steps), beside the 1-GPU window's reading `one` of the same workload and
    /// mode: where they differ, the host changed between the windows (the model is built from
    /// the 1-GPU one and does not read this). Empty without a reading.
    pub(super) fn ranks_host_note(&self, one: Option<f64>) -> String {
        let Some(us) = positive(self.host_probe_us) else {
            return String::new();
        };
        let vs = match positive(one) {
            Some(one) => format!("; {:.2}× the 1-GPU window's {one:.0} µs", us / one),
            None => String::new(),
        };
        format!(
            "; host probe {us:.0} µs during the window (the slowest of {} ranks{vs})",
            self.world_size
        )
    }

    /// What DDP's wrapper costs a step at one rank: the wrapped step − the plain step timed in
    /// the blocks between, ms (signed: within the steps' spread it can read below zero).
    pub fn wrapper_ms(&self) -> Option<f64> {
        Some(self.under_ddp()?.cost_ms())
    }

    /// The step under DDP at one rank beside the plain one, where both were timed.
    pub fn under_ddp(&self) -> Option<UnderDdp> {
        UnderDdp::new(self.ddp_one_ms, self.ddp_one_plain_ms, self.ddp_one_steps)
    }

    /// The basis's words for the step: the plain model or the wrapper it ran under, and what
    /// DDP cost at one rank where it was timed.
    pub(super) fn wrapper_note(&self) -> String {
        let ran = match self.wrapped.as_deref() {
            Some("ddp") => "; under DDP".to_string(),
            Some("fsdp") => "; under FSDP2 (fully_shard)".to_string(),
            Some(other) => format!("; under {}", clip(other, 20)),
            None if self.world_size == 1 => "; the plain step (no DDP wrapper at one GPU)".into(),
            None => String::new(),
        };
        let one = match (self.under_ddp(), &self.ddp_one_note) {
            (Some(u), _) => format!(
                "; under DDP at one rank {:.2} ms against the plain {:.2} ms in alternating blocks ({} steps each): DDP's own cost {:+.2} ms per step",
                u.wrapped_ms,
                u.plain_ms,
                u.block_steps,
                u.cost_ms()
            ),
            (None, Some(why)) => format!("; DDP at one rank not timed: {}", clip(why, 200)),
            _ => String::new(),
        };
        ran + &one
    }

    /// Rank 0's kernel profile, when profiled.
    pub fn rank0_profile(&self) -> Option<&Profile> {
        self.profile.as_ref()?.ranks.first()?.as_ref()
    }

    /// Matrix kernels' share of rank 0's kernel time, when profiled.
    pub fn matrix_share(&self) -> Option<f64> {
        let p = self.rank0_profile()?;
        (p.matrix + p.other > 0.0).then(|| p.matrix / (p.matrix + p.other))
    }
}

/// The steps' own power from the energy counter's stretches ([`ResultLine::stretch_power`]).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StretchPower {
    /// Mean power of each rank's GPU over its stretches, W.
    pub watts: Vec<f64>,
    /// The shortest rank's stretches, s in all.
    pub seconds: f64,
    /// The most stretches of any rank.
    pub stretches: usize,
}

impl StretchPower {
    /// One standard deviation of the figure from the counter's updates of `update_s`: each
    /// stretch's two readings lag by a uniform part of one update (difference: σ = update ÷ √6),
    /// `stretches` of them over `seconds`.
    pub fn resolution(&self, update_s: f64) -> f64 {
        update_s * (self.stretches as f64 / 6.0).sqrt() / self.seconds
    }
}

/// `"event": "probe"`: the overlap probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeLine {
    pub world_size: usize,
    pub matrix_share: f64,
    pub compute_ms: f64,
    pub comm_ms: f64,
    pub both_ms: f64,
    pub hidden: Option<f64>,
    pub gemm_tflops: f64,
    pub copy_gbps: f64,
    /// The host probe on rank 0, alone, µs per iteration.
    #[serde(default)]
    pub host_probe_us: Option<f64>,
    /// Host time to issue one asynchronous all-reduce, every rank at once, µs.
    #[serde(default)]
    pub allreduce_host_us: Option<f64>,
    pub gpu: Option<String>,
}

/// One line of the script's protocol.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Hello {
        torch: Option<String>,
        gpu: Option<String>,
        world_size: Option<usize>,
        nccl: Option<String>,
        transformers: Option<String>,
    },
    Progress {
        phase: String,
        mode: Option<String>,
        model: Option<String>,
        /// The workload it is of, in a launch of several.
        #[serde(default)]
        workload: Option<String>,
    },
    Result(Box<ResultLine>),
    Oom {
        #[serde(default)]
        workload: Option<String>,
        mode: Option<String>,
        phase: Option<String>,
        message: Option<String>,
        peak_mem_gib: Option<f64>,
        total_mem_gib: Option<f64>,
    },
    Error {
        #[serde(default)]
        workload: Option<String>,
        kind: Option<String>,
        mode: Option<String>,
        phase: Option<String>,
        message: Option<String>,
    },
    Probe(Box<ProbeLine>),
    Done,
    /// Anything newer scripts may add.
    #[serde(other)]
    Unknown,
}

/// Parses one line of standard output: `Ok(None)` for lines that are not protocol (blank,
/// or not starting with `{`), `Err` for a `{` line that is not a valid event.
pub fn parse_line(line: &str) -> Result<Option<Event>, String> {
    let t = line.trim();
    if !t.starts_with('{') {
        return Ok(None);
    }
    let e: Event = serde_json::from_str(t).map_err(|e| format!("{e}: {}", clip(t, 120)))?;
    if let Event::Result(r) = &e {
        r.check().map_err(|why| format!("result line: {why}"))?;
    }
    Ok(Some(e))
}

/// Reads lines (cut at [`MAX_LINE`] bytes, marked with `…`) until EOF.
pub(super) fn read_lines(r: impl Read, each: &mut dyn FnMut(String)) {
    crate::lines::read_lines(r, MAX_LINE, &mut |mut line, cut| {
        if cut {
            line.push('…');
        }
        each(line);
    });
}

/// A figure the script reported, kept only when it is a finite positive number.
pub(super) fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_protocol_lines() {
        assert_eq!(parse_line("warning: something"), Ok(None));
        assert_eq!(parse_line(""), Ok(None));
        assert!(matches!(
            parse_line(r#"{"event":"done"}"#),
            Ok(Some(Event::Done))
        ));
        assert!(matches!(
            parse_line(r#"{"event":"new_kind","x":1}"#),
            Ok(Some(Event::Unknown))
        ));
        assert!(parse_line("{not json").is_err());
        let bad = r#"{"event":"result","mode":"weak","world_size":1,"micro_batch":8,"accumulate":1,"per_gpu_batch":8,"global_batch":8,"steps":5,"step_ms":{"median":-1,"min":-2,"max":0,"mean":-1,"n":5}}"#;
        let e = parse_line(bad).unwrap_err();
        assert!(e.contains("step_ms.median"), "{e}");
    }

    #[test]
    fn a_steps_figure_is_their_mean_and_a_mean_outside_their_range_is_refused() {
        let line = |mean: f64| {
            format!(
                r#"{{"event":"result","mode":"weak","world_size":1,"micro_batch":64,"accumulate":1,"per_gpu_batch":64,"global_batch":64,"steps":258,"step_ms":{{"median":62.26,"min":60.56,"max":84.84,"mean":{mean},"n":258}}}}"#
            )
        };
        // BERT-large on a wandering host: most steps near 60.6 ms, a tail to 85 ms.
        let Ok(Some(Event::Result(x))) = parse_line(&line(65.68)) else {
            panic!("not a result line");
        };
        assert_eq!(x.step_ms.figure(), 65.68);
        let e = parse_line(&line(90.0)).unwrap_err();
        assert!(e.contains("mean outside min … max"), "{e}");
    }

    #[test]
    fn a_host_floor_read_longer_than_its_step_is_held_to_the_step_and_says_so() {
        // Round 2 of BERT-large on 2× H200: the floor, moved to the window's host speed, read
        // 78.4 ms against the window's 77.1 ms.
        let line = |host_ms: f64| {
            format!(
                r#"{{"event":"result","mode":"weak","world_size":1,"micro_batch":64,"accumulate":1,"per_gpu_batch":64,"global_batch":64,"steps":217,"step_ms":{{"median":78.42,"min":60.48,"max":98.86,"mean":77.11,"n":217}},"host_ms":{host_ms},"host_probe_us":4400.0,"host_floor_probe_us":4000.0}}"#
            )
        };
        let Ok(Some(Event::Result(x))) = parse_line(&line(71.3)) else {
            panic!("not a result line");
        };
        assert_eq!(x.host_floor_at_window(), Some(77.11));
        assert!(
            x.host_note()
                .contains("host floor 77.1 ms (100 % of the step: host-bound; read 78.4 ms, longer than the step: held to it)"),
            "{}",
            x.host_note()
        );
        let Ok(Some(Event::Result(y))) = parse_line(&line(60.0)) else {
            panic!("not a result line");
        };
        assert!((y.host_floor_at_window().unwrap() - 66.0).abs() < 1e-9);
        assert!(!y.host_note().contains("held"), "{}", y.host_note());
    }

    #[test]
    fn clip_escapes_and_cuts() {
        assert_eq!(clip("a\u{1b}[31mb\n", 100), "a\\u{1b}[31mb\\n");
        assert_eq!(clip(&"x".repeat(10), 4), "xxxx…");
    }
}
