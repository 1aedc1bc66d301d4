//! The soak stage (`check --soak D`, `--bench --soak D`): a burn-in of the selected GPUs — the
//! loads of `bench::cuda::soak` in phases, the probe of `telemetry::soak_probe` once a second —
//! sent as samples while it runs, then judged by `health::soak` into `soak_*` checks added to
//! the health report. Or a recorded `soak.csv` played back (`--soak-replay`), judged the same.
//!
//! Where the soak lives (open this file first): the loads, GEMMs with their results checked, memory
//! and copy traffic in phases, in `src/bench/cuda/soak.rs`; the once-a-second probe of clocks,
//! power, temperatures, counters, processes and the host's CPU in `src/telemetry/soak_probe.rs`;
//! the samples and events as data in `src/model/soak.rs`; the verdict in `src/health/soak.rs` and
//! each dip's cause in `src/health/attribution.rs`; the soak.csv recording and its replay in
//! `src/health/soak_csv.rs`; `check --soak` in `src/cli/check.rs`; the app's Soak view in
//! `src/ui/views/soak/mod.rs`, `src/ui/views/soak/series.rs` and `src/ui/views/soak/plots.rs`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::{Ctx, Event, JobError};
use crate::bench::cuda::soak::{Batch, Finding, SoakLoads, SoakSetup, ordinals};
use crate::health::soak::{SoakThresholds, checks};
use crate::health::{Evidence, HealthReport, Thresholds};
use crate::model::soak::duration_words;
use crate::model::{
    SoakEvent, SoakEventKind, SoakLoad, SoakOptions, SoakSample, SoakSection, Source, Topology,
};
use crate::telemetry::soak_probe::SoakProbe;

/// Sampling interval.
const INTERVAL: Duration = Duration::from_secs(1);
/// A phase cycle lasts at most this long: every load runs at least once in each such window.
const CYCLE_S: f64 = 300.0;

/// The loads a soak runs when none are named: gemm, memory and pcie, and p2p and nccl on two
/// GPUs or more.
pub fn default_loads(gpus: usize) -> Vec<SoakLoad> {
    SoakLoad::ALL
        .into_iter()
        .filter(|l| gpus > 1 || !l.needs_peers())
        .collect()
}

/// The load running `t_s` seconds into a soak of `duration_s` over `loads`: phases cycle every
/// `min(duration, 5 min)`, the GEMM (the heat and the correctness check) taking three shares of
/// each cycle and every other load one.
pub fn phase_at(loads: &[SoakLoad], duration_s: f64, t_s: f64) -> Option<SoakLoad> {
    let weight = |l: &SoakLoad| if *l == SoakLoad::Gemm { 3.0 } else { 1.0 };
    let total: f64 = loads.iter().map(weight).sum();
    if total <= 0.0 {
        return None;
    }
    let cycle = duration_s.clamp(1.0, CYCLE_S);
    let mut at = (t_s.max(0.0) % cycle) / cycle * total;
    for l in loads {
        if at < weight(l) {
            return Some(*l);
        }
        at -= weight(l);
    }
    loads.last().copied()
}

/// Runs the soak of `opts` over `gpus` (empty: all) of `topo` and adds its verdict to the
/// health report.
pub(super) fn run(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    gpus: &[usize],
    opts: &SoakOptions,
    thresholds: &Thresholds,
) -> Result<(), JobError> {
    let soak = match &opts.replay {
        Some(path) => replay(ctx, path, opts.replay_speed.unwrap_or(0.0))?,
        None => live(ctx, topo, gpus, opts)?,
    };
    verdict(ctx, topo, &soak, &thresholds.soak);
    Ok(())
}

/// Adds the soak's checks to the health report (a new one when no check ran before).
fn verdict(ctx: &mut Ctx<'_>, topo: &Topology, soak: &SoakSection, t: &SoakThresholds) {
    let found = checks(soak, t);
    let mut report = ctx.report.health.clone().unwrap_or_else(|| {
        HealthReport::new(
            topo,
            Source::Measured,
            Vec::new(),
            Thresholds::default(),
            Evidence {
                before: None,
                after: None,
                load: None,
            },
            Vec::new(),
        )
    });
    report.add_checks(found);
    report.notes.push(match &soak.replay_of {
        Some(p) => format!(
            "soak: replay of {p} ({}), judged with the thresholds of this run",
            duration_words(soak.elapsed_s)
        ),
        None => format!(
            "soak: {} of load{} on {} GPU{}",
            duration_words(soak.elapsed_s),
            if soak.finished {
                ""
            } else {
                " (stopped early)"
            },
            soak.sampled_gpus().len(),
            if soak.sampled_gpus().len() == 1 {
                ""
            } else {
                "s"
            }
        ),
    });
    ctx.emit(Event::Health {
        report: Box::new(report),
    });
}

/// Plays a recorded `soak.csv` back: all at once (`speed` 0), or `speed` intervals per interval.
fn replay(ctx: &mut Ctx<'_>, path: &str, speed: f64) -> Result<SoakSection, JobError> {
    let recorded = crate::health::soak_csv::read(std::path::Path::new(path))
        .map_err(|e| JobError::input(format!("--soak-replay {e}")))?;
    let header = SoakSection {
        samples: Vec::new(),
        events: Vec::new(),
        finished: false,
        elapsed_s: 0.0,
        ..recorded.clone()
    };
    ctx.emit(Event::SoakStarted {
        section: Box::new(header),
    });
    // The samples by millisecond (`soak_csv::parse` sorts them by time): one pass, not a scan
    // of every sample per tick (200,000 rows took minutes).
    let tick_of = |s: &SoakSample| (s.t_s * 1000.0).round() as u64;
    let ticks: Vec<&[SoakSample]> = recorded
        .samples
        .chunk_by(|a, b| tick_of(a) == tick_of(b))
        .collect();
    let mut sent_events = 0;
    let total = ticks.len();
    for (k, tick) in ticks.into_iter().enumerate() {
        if ctx.cancelled() {
            break;
        }
        let t = tick_of(&tick[0]) as f64 / 1000.0;
        let samples = tick.to_vec();
        let events: Vec<SoakEvent> = recorded.events[sent_events..]
            .iter()
            .take_while(|e| e.t_s <= t + 1e-9)
            .cloned()
            .collect();
        sent_events += events.len();
        ctx.emit(Event::SoakSamples {
            samples,
            events,
            elapsed_s: t,
            finished: k + 1 == total,
        });
        if speed > 0.0 {
            ctx.emit(Event::Progress {
                done: k + 1,
                total,
                label: format!("soak replay: {}", crate::health::soak::clock(t)),
            });
            // At the recorded pace, a step of days is days: waited in slices, so that Ctrl-C
            // still ends it (`soak_csv` bounds the times, the flags the speed).
            let wait =
                Duration::try_from_secs_f64(recorded.interval_s / speed).unwrap_or(Duration::MAX);
            let until = Instant::now().checked_add(wait);
            while !ctx.cancelled() {
                let left = until.map_or(Duration::from_secs(1), |u| {
                    u.saturating_duration_since(Instant::now())
                });
                if left.is_zero() {
                    break;
                }
                std::thread::sleep(left.min(Duration::from_millis(100)));
            }
        }
    }
    Ok(ctx.report.soak.clone().unwrap_or_default())
}

/// A soak of this machine's `gpus` (every GPU when empty): the loads started in phases, the
/// probe's samples and the events sent once a second until the duration ends or the job is
/// cancelled.
fn live(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    gpus: &[usize],
    opts: &SoakOptions,
) -> Result<SoakSection, JobError> {
    if !matches!(topo.source, crate::model::TopologySource::Live { .. }) {
        return Err(JobError::input(
            "a soak loads this machine's GPUs: it cannot run on a catalog or imported machine (play a recording back with --soak-replay FILE)",
        ));
    }
    let gpus: Vec<usize> = if gpus.is_empty() {
        topo.gpu_indices()
    } else {
        gpus.to_vec()
    };
    let (load, runnable, mut events) = start_loads(ctx, topo, &gpus, opts)?;
    let start = Instant::now();
    let probe = SoakProbe::start(topo, &gpus, INTERVAL, start)?;
    if let Some(note) = &probe.xid_note {
        events.push(SoakEvent {
            t_s: 0.0,
            gpu: None,
            kind: SoakEventKind::Note,
            text: note.clone(),
        });
    }
    ctx.emit(Event::SoakStarted {
        section: Box::new(started_section(opts, &runnable, &gpus, &load, start)),
    });
    let phase = phase_at(&runnable, opts.duration_s, 0.0);
    load.set_phase(phase);
    if let Some(l) = phase {
        events.push(phase_event(0.0, l));
    }
    let mut run = LiveSoak {
        gpus: &gpus,
        opts,
        runnable,
        load,
        start,
        phase,
        prev_tick: start,
        seen_pids: BTreeSet::new(),
        events,
    };
    let finished = loop {
        let (finished, cancelled) = run.step(ctx, next_tick(&probe, &gpus, start));
        if finished || cancelled {
            break finished;
        }
    };
    run.load.set_phase(None);
    run.load.stop();
    probe.stop();
    let mut soak = ctx.report.soak.clone().unwrap_or_default();
    soak.finished = finished;
    Ok(soak)
}

/// The soak's loads on `gpus`, started: the loads, those that can run, and an event for each
/// skipped one. None that can run is an error naming why each was skipped.
fn start_loads(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    gpus: &[usize],
    opts: &SoakOptions,
) -> Result<(SoakLoads, Vec<SoakLoad>, Vec<SoakEvent>), JobError> {
    let loads = if opts.loads.is_empty() {
        default_loads(gpus.len())
    } else {
        opts.loads.clone()
    };
    let ords = ordinals(topo, gpus).map_err(|e| JobError::machine(format!("soak: {e}")))?;
    let setup = SoakSetup {
        ordinals: ords,
        loads: loads.clone(),
        nccl_lib: opts.nccl_lib.clone(),
        corrupt: ctx.hooks().corrupt_gemm,
    };
    ctx.emit(Event::Progress {
        done: 0,
        total: opts.duration_s.round() as usize,
        label: "soak: setting up (reference products, buffers)".into(),
    });
    let load = SoakLoads::start(&setup).map_err(|e| JobError::machine(format!("soak: {e}")))?;
    let runnable: Vec<SoakLoad> = loads
        .iter()
        .copied()
        .filter(|l| {
            !load
                .skipped
                .iter()
                .any(|(s, why)| s == l && !why.contains("results not checked"))
        })
        .collect();
    let events: Vec<SoakEvent> = load
        .skipped
        .iter()
        .map(|(l, why)| SoakEvent {
            t_s: 0.0,
            gpu: None,
            kind: SoakEventKind::Skipped { load: *l },
            text: format!("{l} not run: {why}"),
        })
        .collect();
    if runnable.is_empty() {
        let why: Vec<String> = events.iter().map(|e| e.text.clone()).collect();
        return Err(JobError::machine(format!(
            "soak: no load can run here ({})",
            why.join("; ")
        )));
    }
    Ok((load, runnable, events))
}

/// The section a live soak starts with (no samples yet), started `start`.
fn started_section(
    opts: &SoakOptions,
    runnable: &[SoakLoad],
    gpus: &[usize],
    load: &SoakLoads,
    start: Instant,
) -> SoakSection {
    SoakSection {
        replay_of: None,
        started_at: Some(
            humantime::format_rfc3339_millis(std::time::SystemTime::now() - start.elapsed())
                .to_string(),
        ),
        duration_s: opts.duration_s,
        elapsed_s: 0.0,
        interval_s: INTERVAL.as_secs_f64(),
        loads: runnable.to_vec(),
        gpus: gpus.to_vec(),
        gemm: load.gemm.clone(),
        samples: Vec::new(),
        events: Vec::new(),
        finished: false,
    }
}

/// The probe's next tick; when the probe stopped (NVML lost), empty samples now, so the soak
/// goes on with the loads' figures alone.
fn next_tick(
    probe: &SoakProbe,
    gpus: &[usize],
    start: Instant,
) -> crate::telemetry::soak_probe::Tick {
    match probe.ticks.recv_timeout(INTERVAL * 3) {
        Ok(t) => t,
        Err(_) => crate::telemetry::soak_probe::Tick {
            at: Instant::now(),
            samples: gpus
                .iter()
                .map(|&g| SoakSample {
                    t_s: start.elapsed().as_secs_f64(),
                    gpu: g,
                    ..Default::default()
                })
                .collect(),
        },
    }
}

/// A live soak under way: its loads, the phase running, what it has seen so far and the events
/// not yet sent.
struct LiveSoak<'a> {
    gpus: &'a [usize],
    opts: &'a SoakOptions,
    /// The loads that can run, in phase order.
    runnable: Vec<SoakLoad>,
    load: SoakLoads,
    start: Instant,
    phase: Option<SoakLoad>,
    prev_tick: Instant,
    /// The other processes already reported, by GPU.
    seen_pids: BTreeSet<(usize, u32)>,
    events: Vec<SoakEvent>,
}

impl LiveSoak<'_> {
    /// One tick: its samples filled with the loads' figures, their events, the next phase, and
    /// the samples and progress sent. Returns whether the soak has finished and whether it was
    /// cancelled.
    fn step(
        &mut self,
        ctx: &mut Ctx<'_>,
        tick: crate::telemetry::soak_probe::Tick,
    ) -> (bool, bool) {
        let t = tick.at.duration_since(self.start).as_secs_f64();
        let (batches, findings) = self.load.drain();
        let mut samples = tick.samples;
        for (pos, s) in samples.iter_mut().enumerate() {
            fill(s, pos, self.phase, &batches, self.prev_tick, tick.at);
            self.sample_events(s);
        }
        for f in findings {
            self.events.push(finding_event(f, self.gpus, self.start));
        }
        self.prev_tick = tick.at;
        let finished = t + 1e-6 >= self.opts.duration_s;
        let cancelled = ctx.cancelled();
        if !finished && !cancelled {
            self.advance_phase(t);
        }
        self.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        ctx.emit(Event::SoakSamples {
            samples,
            events: std::mem::take(&mut self.events),
            elapsed_s: t.min(self.opts.duration_s),
            finished,
        });
        ctx.emit(Event::Progress {
            done: t.round() as usize,
            total: self.opts.duration_s.round() as usize,
            label: format!(
                "soak: {} phase, {} left",
                self.phase.map(|p| p.id()).unwrap_or("—"),
                duration_words(self.opts.duration_s - t)
            ),
        });
        (finished, cancelled)
    }

    /// The events sample `s` shows: its Xids, and each process on its GPU not seen before.
    fn sample_events(&mut self, s: &SoakSample) {
        for x in &s.xid {
            self.events.push(SoakEvent {
                t_s: s.t_s,
                gpu: Some(s.gpu),
                kind: SoakEventKind::Xid { xid: *x },
                text: format!("Xid {x} on GPU {}", s.gpu),
            });
        }
        for p in &s.processes {
            if self.seen_pids.insert((s.gpu, *p)) {
                self.events.push(SoakEvent {
                    t_s: s.t_s,
                    gpu: Some(s.gpu),
                    kind: SoakEventKind::Note,
                    text: format!("another process on GPU {}: pid {p}", s.gpu),
                });
            }
        }
    }

    /// The phase due at `t`: the loads switched to it, with its event, when it changes.
    fn advance_phase(&mut self, t: f64) {
        let next = phase_at(&self.runnable, self.opts.duration_s, t);
        if next != self.phase {
            self.load.set_phase(next);
            if let Some(l) = next {
                self.events.push(phase_event(t, l));
            }
            self.phase = next;
        }
    }
}

fn phase_event(t_s: f64, load: SoakLoad) -> SoakEvent {
    SoakEvent {
        t_s,
        gpu: None,
        kind: SoakEventKind::Phase { load },
        text: format!("{load} phase"),
    }
}

/// Fills the load's fields of GPU `pos`'s sample from the batches that ended in `(from, to]`:
/// the rate of those of the phase (work ÷ GPU time), the GEMM results checked and wrong.
fn fill(
    s: &mut SoakSample,
    pos: usize,
    phase: Option<SoakLoad>,
    batches: &[Batch],
    from: Instant,
    to: Instant,
) {
    s.phase = phase;
    let mine: Vec<&Batch> = batches
        .iter()
        .filter(|b| b.gpu == pos && b.end > from && b.end <= to)
        .collect();
    let of_phase: Vec<&&Batch> = mine.iter().filter(|b| Some(b.load) == phase).collect();
    let (work, ms): (f64, f64) = of_phase
        .iter()
        .fold((0.0, 0.0), |(w, m), b| (w + b.work, m + b.ms));
    s.rate = (ms > 0.0).then(|| {
        let per_s = work / (ms / 1e3);
        if phase == Some(SoakLoad::Gemm) {
            per_s / 1e12
        } else {
            per_s / 1e9
        }
    });
    let gemm: Vec<&&Batch> = mine.iter().filter(|b| b.load == SoakLoad::Gemm).collect();
    let checked: u64 = gemm.iter().map(|b| b.checked).sum();
    if checked > 0 {
        s.checked = Some(checked);
        s.mismatches = Some(gemm.iter().map(|b| b.wrong).sum());
    }
}

fn finding_event(f: Finding, gpus: &[usize], start: Instant) -> SoakEvent {
    let secs = |at: Instant| {
        if at >= start {
            at.duration_since(start).as_secs_f64()
        } else {
            // Found while setting up (the references compared between GPUs).
            0.0
        }
    };
    match f {
        Finding::Mismatch {
            gpu,
            at,
            row,
            col,
            got,
            expected,
            words,
            against,
        } => {
            let g = gpus.get(gpu).copied().unwrap_or(gpu);
            SoakEvent {
                t_s: secs(at),
                gpu: Some(g),
                kind: SoakEventKind::Mismatch {
                    row,
                    col,
                    got,
                    expected,
                    wrong: words,
                    against: against.clone(),
                },
                text: format!(
                    "{} on GPU {g}: element (row {row}, column {col}) = {} (bits {got:#06x}), expected {} (bits {expected:#06x}) as in {against}; {words} word{} of the product differed",
                    crate::health::soak::MISMATCH_WORDS,
                    bf16(got),
                    bf16(expected),
                    if words == 1 { "" } else { "s" }
                ),
            }
        }
        Finding::Stopped { gpu, at, load, why } => {
            let g = gpu.map(|p| gpus.get(p).copied().unwrap_or(p));
            SoakEvent {
                t_s: secs(at),
                gpu: g,
                kind: SoakEventKind::Skipped { load },
                text: match g {
                    Some(g) => format!("{load} stopped on GPU {g}: {why}"),
                    None => format!("{load} stopped: {why}"),
                },
            }
        }
    }
}

/// A bf16's value, for messages.
fn bf16(bits: u16) -> String {
    format!("{}", f32::from_bits(u32::from(bits) << 16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_share_each_cycle() {
        let loads = [SoakLoad::Gemm, SoakLoad::Memory, SoakLoad::Pcie];
        // 5 minutes: gemm 3 min, memory 1, pcie 1.
        assert_eq!(phase_at(&loads, 300.0, 0.0), Some(SoakLoad::Gemm));
        assert_eq!(phase_at(&loads, 300.0, 179.0), Some(SoakLoad::Gemm));
        assert_eq!(phase_at(&loads, 300.0, 181.0), Some(SoakLoad::Memory));
        assert_eq!(phase_at(&loads, 300.0, 299.0), Some(SoakLoad::Pcie));
        // An hour cycles every 5 minutes.
        assert_eq!(phase_at(&loads, 3600.0, 300.0 + 10.0), Some(SoakLoad::Gemm));
        assert_eq!(
            phase_at(&[SoakLoad::Pcie], 60.0, 30.0),
            Some(SoakLoad::Pcie)
        );
        assert_eq!(phase_at(&[], 60.0, 30.0), None);
        assert_eq!(default_loads(1).len(), 3);
        assert_eq!(default_loads(2).len(), 5);
    }

    #[test]
    fn rates_come_from_the_batches_of_the_interval() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(1);
        let b = |load, end, work, ms, checked, wrong| Batch {
            gpu: 0,
            load,
            end,
            work,
            ms,
            checked,
            wrong,
        };
        let batches = vec![
            b(
                SoakLoad::Gemm,
                t0 + Duration::from_millis(300),
                7e14,
                500.0,
                100,
                0,
            ),
            b(
                SoakLoad::Gemm,
                t0 + Duration::from_millis(800),
                7e14,
                500.0,
                100,
                1,
            ),
            // Before the interval: not counted.
            b(SoakLoad::Gemm, t0, 7e14, 1.0, 100, 0),
        ];
        let mut s = SoakSample::default();
        fill(&mut s, 0, Some(SoakLoad::Gemm), &batches, t0, t1);
        assert!((s.rate.unwrap() - 1400.0).abs() < 1e-9, "{:?}", s.rate);
        assert_eq!((s.checked, s.mismatches), (Some(200), Some(1)));
        let mut s = SoakSample::default();
        fill(&mut s, 0, Some(SoakLoad::Memory), &batches, t0, t1);
        assert_eq!(s.rate, None, "no memory batch: no rate, not 0");
    }
}
