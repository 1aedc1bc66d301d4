//! The burn-in (`check --soak`, `--bench --soak`): what ran and its verdict (the `soak_*`
//! checks), the series over time — GEMM TFLOP/s, each copy load's GB/s, SM clock, power and
//! temperatures, one line per GPU, the phases shaded, wrong results and Xid events marked —,
//! each GPU in a row of figures, and the events.

use std::collections::BTreeMap;

use super::bandwidth::CHART_WIDTH;
use super::health::{checks_table, verdict_class};
use super::num;
use crate::document::timechart::{self, Band, Line, Marker, TimeChart};
use crate::document::{Block, Cell, Class, Column, Paragraph, Section, Span, SpanStyle, Table};
use crate::health::soak::clock;
use crate::health::{Check, Counts, Verdict};
use crate::model::soak::duration_words;
use crate::model::{SoakEventKind, SoakLoad, SoakSample, SoakSection, median};
use crate::report::Report;

/// The most events the events table shows; the rest are counted (report.json holds them).
pub const EVENTS_MAX_ROWS: usize = 50;

/// The soak's checks in the report's health check (their ids start with `soak_`).
fn soak_checks(r: &Report) -> Vec<&Check> {
    r.health
        .iter()
        .flat_map(|h| &h.checks)
        .filter(|c| c.check.id().starts_with("soak_"))
        .collect()
}

/// The report's burn-in section; `None` when no soak ran.
pub(super) fn section(r: &Report) -> Option<Section> {
    let soak = r.soak.as_ref()?;
    let mut s = Section::new("soak", "Burn-in (soak)");
    s.push(summary_line(soak));
    if !soak.finished {
        s.push(
            Paragraph {
                class: Class::Warning,
                spans: vec![
                    Span::styled("Stopped early: ", SpanStyle::Strong),
                    Span::plain(format!(
                        "{} of load ran; the figures are what ran.",
                        duration_words(soak.elapsed_s)
                    )),
                ],
            }
            .into(),
        );
    }
    if let Some(g) = &soak.gemm {
        s.push(Paragraph::note(format!("GEMM: {g}")).into());
    }
    verdict(&mut s, r);
    charts(&mut s, soak);
    if !soak.samples.is_empty() {
        s.push(Block::Subheading {
            text: "Each GPU over the soak".into(),
        });
        s.push(Block::Table(gpus_table(soak)));
    }
    events(&mut s, soak);
    Some(s)
}

/// `Ran 4 min 10 s of 5 min 00 s asked · gemm, memory · GPUs 0, 1 · a sample every 1 s`, and
/// where a replay came from.
fn summary_line(soak: &SoakSection) -> Block {
    let mut spans = vec![Span::styled(
        format!("Ran {}", duration_words(soak.elapsed_s)),
        SpanStyle::Strong,
    )];
    let mut rest = String::new();
    if soak.duration_s.is_finite() && soak.duration_s > 0.0 {
        rest.push_str(&format!(" of {} asked", duration_words(soak.duration_s)));
    }
    let loads = loads(soak);
    if !loads.is_empty() {
        let ids: Vec<&str> = loads.iter().map(SoakLoad::id).collect();
        rest.push_str(&format!(" · loads: {}", ids.join(", ")));
    }
    let gpus = if soak.gpus.is_empty() {
        soak.sampled_gpus()
    } else {
        soak.gpus.clone()
    };
    if !gpus.is_empty() {
        let g: Vec<String> = gpus.iter().map(ToString::to_string).collect();
        rest.push_str(&format!(
            " · {} {}",
            if gpus.len() == 1 { "GPU" } else { "GPUs" },
            g.join(", ")
        ));
    }
    if soak.interval_s.is_finite() && soak.interval_s > 0.0 {
        rest.push_str(&format!(
            " · a sample per GPU every {} s",
            num(
                Some(soak.interval_s),
                if soak.interval_s < 1.0 { 1 } else { 0 }
            )
        ));
    }
    rest.push_str(&format!(" · {} samples", soak.samples.len()));
    if let Some(at) = &soak.started_at {
        rest.push_str(&format!(" · began {}", began(at)));
    }
    spans.push(Span::plain(rest));
    if let Some(file) = &soak.replay_of {
        spans.push(Span::plain(" · replay of "));
        spans.push(Span::styled(file.clone(), SpanStyle::Code));
        spans.push(Span::plain(" (what was measured then)"));
    }
    Paragraph {
        class: Class::Plain,
        spans,
    }
    .into()
}

/// When the load began, `2026-11-26 15:04:05 UTC` from RFC 3339 in UTC; any other text as it
/// came.
fn began(at: &str) -> String {
    match (at.get(..10), at.get(10..11), at.get(11..19)) {
        (Some(day), Some("T"), Some(time)) if at.ends_with('Z') => format!("{day} {time} UTC"),
        _ => at.to_string(),
    }
}

/// The loads asked for, or those the samples ran when the list is empty.
fn loads(soak: &SoakSection) -> Vec<SoakLoad> {
    if !soak.loads.is_empty() {
        return soak.loads.clone();
    }
    let mut seen: Vec<SoakLoad> = soak.samples.iter().filter_map(|s| s.phase).collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}

/// The verdict: the worst of the `soak_*` checks with their counts, and the checks.
fn verdict(s: &mut Section, r: &Report) {
    let checks = soak_checks(r);
    let Some(worst) = checks.iter().map(|c| c.verdict).max() else {
        s.push(Paragraph::plain("No verdict on the soak in this report (no soak checks).").into());
        return;
    };
    let owned: Vec<Check> = checks.iter().map(|c| (*c).clone()).collect();
    let c = Counts::of(&owned);
    s.push(Block::Verdict {
        word: worst.word().to_string(),
        class: verdict_class(worst),
        counts: format!(
            "{} pass · {} warn · {} fail · {} unknown",
            c.pass, c.warn, c.fail, c.unknown
        ),
    });
    // Failures first, as the health table orders a long list.
    let mut order = checks;
    order.sort_by_key(|c| match c.verdict {
        Verdict::Fail => 0,
        Verdict::Warn => 1,
        Verdict::Unknown => 2,
        Verdict::Pass => 3,
    });
    let order: Vec<(String, &Check)> = order.iter().map(|&c| (c.subject.clone(), c)).collect();
    s.push(Block::Table(lean(checks_table(
        "soak-checks-table",
        &order,
    ))));
}

/// `t` without the columns that say nothing here: those whose every cell is empty or "—" (most
/// soak checks judge no single figure), and the provenance when every check is measured (a
/// soak always is; a replay shows what was measured then).
fn lean(mut t: Table) -> Table {
    let keep: Vec<bool> = (0..t.columns.len())
        .map(|i| {
            let cells = || t.rows.iter().filter_map(|r| r.get(i));
            let empty = cells().all(|c| c.text.is_empty() || c.text == "—");
            let all_measured =
                t.columns[i].head == "provenance" && cells().all(|c| c.class == Class::Measured);
            t.rows.is_empty() || !(empty || all_measured)
        })
        .collect();
    let mut k = keep.iter();
    t.columns.retain(|_| *k.next().unwrap_or(&true));
    for row in &mut t.rows {
        let mut k = keep.iter();
        row.retain(|_| *k.next().unwrap_or(&true));
    }
    t
}

/// The sampling interval, or 1 s when the section does not say.
fn interval(soak: &SoakSection) -> f64 {
    if soak.interval_s.is_finite() && soak.interval_s > 0.0 {
        soak.interval_s
    } else {
        1.0
    }
}

/// The tint of a load's band (its place in [`SoakLoad::ALL`]).
fn shade(load: SoakLoad) -> usize {
    SoakLoad::ALL.iter().position(|l| *l == load).unwrap_or(0)
}

/// The phases as bands: from the phase events, or, without them, from the runs of one phase in
/// the first GPU's samples.
fn bands(soak: &SoakSection, end: f64) -> Vec<Band> {
    let starts = soak.phase_starts();
    if !starts.is_empty() {
        return starts
            .iter()
            .enumerate()
            .map(|(i, &(t0, load))| Band {
                t0,
                t1: starts.get(i + 1).map_or(end, |n| n.0).max(t0),
                label: load.id().to_string(),
                shade: shade(load),
            })
            .filter(|b| b.t1 > b.t0)
            .collect();
    }
    let Some(&first) = soak.sampled_gpus().first() else {
        return Vec::new();
    };
    let step = interval(soak);
    let mut out: Vec<Band> = Vec::new();
    let mut last: Option<SoakLoad> = None;
    for x in soak.gpu_samples(first).filter(|x| x.t_s.is_finite()) {
        match (x.phase, out.last_mut()) {
            (Some(p), Some(b)) if last == Some(p) => b.t1 = x.t_s,
            (Some(p), _) => out.push(Band {
                t0: (x.t_s - step).max(0.0),
                t1: x.t_s,
                label: p.id().to_string(),
                shade: shade(p),
            }),
            (None, _) => {}
        }
        last = x.phase;
    }
    out
}

/// Wrong results and Xid events as markers.
fn markers(soak: &SoakSection) -> Vec<Marker> {
    let on = |g: Option<usize>| g.map_or(String::new(), |g| format!(" · GPU {g}"));
    soak.events
        .iter()
        .filter_map(|e| match &e.kind {
            SoakEventKind::Mismatch { .. } => Some(Marker {
                t: e.t_s,
                label: format!("wrong result{}", on(e.gpu)),
            }),
            SoakEventKind::Xid { xid } => Some(Marker {
                t: e.t_s,
                label: format!("Xid {xid}{}", on(e.gpu)),
            }),
            _ => None,
        })
        .collect()
}

/// Each sampled GPU with its samples in time order.
fn per_gpu(soak: &SoakSection) -> Vec<(usize, Vec<&SoakSample>)> {
    soak.sampled_gpus()
        .into_iter()
        .map(|g| {
            let mut v: Vec<&SoakSample> = soak.gpu_samples(g).collect();
            v.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
            (g, v)
        })
        .collect()
}

/// One line per GPU of `value` over time (colour by the GPU's place in the list), with or
/// without a known value.
fn lines(
    gpus: &[(usize, Vec<&SoakSample>)],
    suffix: &str,
    dashed: bool,
    value: impl Fn(&SoakSample) -> Option<f64>,
) -> Vec<Line> {
    gpus.iter()
        .enumerate()
        .map(|(i, (g, samples))| Line {
            name: format!("GPU {g}{suffix}"),
            points: samples.iter().map(|x| (x.t_s, value(x))).collect(),
            color: i,
            dashed,
        })
        .collect()
}

/// The charts over time, or a line saying what was not read.
fn charts(s: &mut Section, soak: &SoakSection) {
    if soak.samples.is_empty() {
        s.push(Paragraph::plain("No samples were recorded.").into());
        return;
    }
    let gpus = per_gpu(soak);
    let axis = TimeAxis::of(soak);
    let phases = if timechart::bands_shaded(axis.bands.len(), CHART_WIDTH) {
        "shaded: the load running (named above the plot or in the legend)"
    } else {
        "the phases are too short to shade at this scale (the events give them)"
    };
    s.push(
        Paragraph::note(format!(
            "One line per GPU; {phases}; red lines: wrong GEMM results and Xid events. A reading \
             the GPU did not give is a gap, never 0."
        ))
        .into(),
    );
    throughput_charts(s, soak, &axis, &gpus);
    let chart = |id, what, caption, y_label| SoakChart {
        id,
        what,
        caption,
        y_label,
        from_zero: false,
    };
    axis.push(
        s,
        chart(
            "soak-sm-clock",
            "SM clock",
            "SM clock over time (MHz)",
            "SM clock MHz",
        ),
        lines(&gpus, "", false, |x| x.sm_clock_mhz.map(f64::from)),
    );
    axis.push(
        s,
        chart(
            "soak-power",
            "Power",
            "Power over time (W, mean over each interval)",
            "power W",
        ),
        lines(&gpus, "", false, |x| x.power_w),
    );
    // Each memory line in its GPU's colour, dashed.
    let mut temps = lines(&gpus, "", false, |x| x.gpu_temp_c);
    temps.extend(lines(&gpus, " memory", true, |x| x.mem_temp_c));
    axis.push(
        s,
        chart(
            "soak-temperature",
            "Temperature",
            "Temperature over time (°C; dashed: memory)",
            "°C",
        ),
        temps,
    );
}

/// A throughput chart per load that ran, GEMM's first: each load's figure during its phases.
fn throughput_charts(
    s: &mut Section,
    soak: &SoakSection,
    axis: &TimeAxis,
    gpus: &[(usize, Vec<&SoakSample>)],
) {
    let rate_of = |load: SoakLoad| move |x: &SoakSample| x.rate.filter(|_| x.phase == Some(load));
    let ran = loads(soak);
    if ran.contains(&SoakLoad::Gemm) || soak.samples.iter().any(|x| x.phase == Some(SoakLoad::Gemm))
    {
        axis.push(
            s,
            SoakChart {
                id: "soak-gemm",
                what: "GEMM throughput",
                caption: "GEMM throughput over time (bf16 TFLOP/s, during the gemm phases)",
                y_label: "TFLOP/s",
                from_zero: true,
            },
            lines(gpus, "", false, rate_of(SoakLoad::Gemm)),
        );
    }
    for load in [
        SoakLoad::Memory,
        SoakLoad::Pcie,
        SoakLoad::P2p,
        SoakLoad::Nccl,
    ] {
        if !ran.contains(&load) && !soak.samples.iter().any(|x| x.phase == Some(load)) {
            continue;
        }
        let words = load.figure_words();
        let mut chars = words.chars();
        let first: String = chars
            .next()
            .into_iter()
            .flat_map(char::to_uppercase)
            .collect();
        let caption = format!(
            "{first}{} over time, during the {load} phases",
            chars.as_str()
        );
        axis.push(
            s,
            SoakChart {
                id: &format!("soak-{load}"),
                what: &format!("{load} throughput"),
                caption: &caption,
                y_label: "GB/s",
                from_zero: true,
            },
            lines(gpus, "", false, rate_of(load)),
        );
    }
}

/// One chart of a soak: its element id, what it shows (for the notes under it), its caption
/// and y label, and whether its y axis starts at 0.
struct SoakChart<'a> {
    id: &'a str,
    what: &'a str,
    caption: &'a str,
    y_label: &'a str,
    from_zero: bool,
}

/// The time axis every chart of a soak shares: the phases shaded, the events marked, the span
/// and the longest step a line still joins.
struct TimeAxis {
    bands: Vec<Band>,
    markers: Vec<Marker>,
    span: f64,
    max_step: f64,
}

impl TimeAxis {
    fn of(soak: &SoakSection) -> Self {
        let last_t = soak
            .samples
            .iter()
            .map(|x| x.t_s)
            .filter(|t| t.is_finite())
            .fold(0.0_f64, f64::max);
        let span = if soak.elapsed_s.is_finite() {
            soak.elapsed_s.max(last_t)
        } else {
            last_t
        };
        Self {
            bands: bands(soak, span),
            markers: markers(soak),
            span,
            max_step: interval(soak) * 2.5,
        }
    }

    /// The chart of `lines` on this axis, and a note naming the GPUs without a reading.
    fn push(&self, s: &mut Section, chart: SoakChart, lines: Vec<Line>) {
        // A GPU without a reading has no line; a line says so (a secondary reading, dashed, as
        // a memory temperature many GPUs lack, goes without saying).
        let (lines, unread): (Vec<Line>, Vec<Line>) = lines
            .into_iter()
            .partition(|l| l.points.iter().any(|p| p.1.is_some()));
        let unread: Vec<&str> = unread
            .iter()
            .filter(|l| !l.dashed)
            .map(|l| l.name.as_str())
            .collect();
        let what = chart.what;
        let figure = timechart::time_chart(&TimeChart {
            id: chart.id,
            caption: chart.caption,
            y_label: chart.y_label,
            lines: &lines,
            bands: &self.bands,
            markers: &self.markers,
            span_s: self.span,
            max_step_s: self.max_step,
            from_zero: chart.from_zero,
            width: CHART_WIDTH,
        });
        match figure {
            Some(f) => {
                s.push(Block::Figure(f));
                if !unread.is_empty() {
                    s.push(
                        Paragraph::note(format!("{what}: no reading from {}.", unread.join(", ")))
                            .into(),
                    );
                }
            }
            None => s.push(Paragraph::note(format!("{what}: no reading from any GPU.")).into()),
        }
    }
}

/// `median (lowest)` or `median (highest)` of the known values.
fn median_and(values: &[f64], highest: bool, d: usize) -> String {
    let Some(m) = median(values) else {
        return "—".into();
    };
    let ext = if highest {
        values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    } else {
        values.iter().copied().fold(f64::INFINITY, f64::min)
    };
    format!("{} ({})", num(Some(m), d), num(Some(ext), d))
}

/// Each GPU in figures: GEMM rate, SM clock, power, temperatures, results checked, Xid events
/// and the clock limits seen.
fn gpus_table(soak: &SoakSection) -> Table {
    let rows = per_gpu(soak)
        .into_iter()
        .map(|(g, samples)| {
            let known = |f: &dyn Fn(&SoakSample) -> Option<f64>| -> Vec<f64> {
                samples
                    .iter()
                    .filter_map(|x| f(x))
                    .filter(|v| v.is_finite())
                    .collect()
            };
            let gemm = known(&|x| x.rate.filter(|_| x.phase == Some(SoakLoad::Gemm)));
            let sm = known(&|x| x.sm_clock_mhz.map(f64::from));
            let power = known(&|x| x.power_w);
            let max = |v: Vec<f64>| v.into_iter().reduce(f64::max);
            let temps = format!(
                "{} / {}",
                num(max(known(&|x| x.gpu_temp_c)), 0),
                num(max(known(&|x| x.mem_temp_c)), 0)
            );
            let sum = |f: fn(&SoakSample) -> Option<u64>| {
                samples
                    .iter()
                    .filter_map(|x| f(x))
                    .reduce(u64::saturating_add)
            };
            let checked = match (sum(|x| x.checked), sum(|x| x.mismatches)) {
                (None, None) => "—".to_string(),
                (c, m) => format!(
                    "{} / {}",
                    c.map_or("—".into(), |c| c.to_string()),
                    m.map_or("—".into(), |m| m.to_string())
                ),
            };
            let xid = xid_text(soak, g);
            let limits = clock_limits_text(&samples);
            let wrong = sum(|x| x.mismatches).is_some_and(|m| m > 0);
            vec![
                Cell::plain(format!("GPU {g}")),
                Cell::plain(median_and(&gemm, false, 1)),
                Cell::plain(median_and(&sm, false, 0)),
                Cell::plain(median_and(&power, true, 0)),
                Cell::plain(temps),
                if wrong {
                    Cell::plain(checked).strong()
                } else {
                    Cell::plain(checked)
                },
                Cell::plain(xid),
                Cell::of(Class::Note, limits),
            ]
        })
        .collect();
    Table {
        id: Some("soak-gpus-table".into()),
        columns: vec![
            Column::text("GPU"),
            Column::figures("GEMM TFLOP/s median (lowest)"),
            Column::figures("SM MHz median (lowest)"),
            Column::figures("W median (highest)"),
            Column::figures("°C highest GPU / memory"),
            Column::figures("GEMM results checked / wrong"),
            Column::text("Xid events"),
            Column::text("clock limits"),
        ],
        rows,
    }
}

/// GPU `g`'s Xid events: how many, and their codes (`0` when none).
fn xid_text(soak: &SoakSection, g: usize) -> String {
    let xids: Vec<u64> = soak
        .events
        .iter()
        .filter(|e| e.gpu == Some(g))
        .filter_map(|e| match e.kind {
            SoakEventKind::Xid { xid } => Some(xid),
            _ => None,
        })
        .collect();
    if xids.is_empty() {
        return "0".to_string();
    }
    let mut codes = xids.clone();
    codes.sort_unstable();
    codes.dedup();
    let codes: Vec<String> = codes.iter().map(ToString::to_string).collect();
    format!("{} (Xid {})", xids.len(), codes.join(", "))
}

/// The clock limits in a GPU's samples, each with how many samples it held in; "none" when
/// none held, "—" when no sample read them.
fn clock_limits_text(samples: &[&SoakSample]) -> String {
    let mut limits: BTreeMap<&'static str, usize> = BTreeMap::new();
    for x in samples {
        for t in x.throttle.iter().flatten().filter(|t| t.is_limit()) {
            *limits.entry(t.label()).or_default() += 1;
        }
    }
    if samples.iter().all(|x| x.throttle.is_none()) {
        "—".to_string()
    } else if limits.is_empty() {
        "none".to_string()
    } else {
        limits
            .iter()
            .map(|(l, n)| format!("{l} in {n} samples"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The events in time order, at most [`EVENTS_MAX_ROWS`]: when there are more, wrong results
/// first, then Xid events, then skipped loads and notes, then phase changes.
fn events(s: &mut Section, soak: &SoakSection) {
    s.push(Block::Subheading {
        text: "Events".into(),
    });
    let n = soak.events.len();
    if n == 0 {
        s.push(Paragraph::plain("None.").into());
        return;
    }
    let rank = |k: &SoakEventKind| match k {
        SoakEventKind::Mismatch { .. } => 0,
        SoakEventKind::Xid { .. } => 1,
        SoakEventKind::Skipped { .. } | SoakEventKind::Note => 2,
        SoakEventKind::Phase { .. } => 3,
    };
    let by_time = |a: &usize, b: &usize| {
        soak.events[*a]
            .t_s
            .total_cmp(&soak.events[*b].t_s)
            .then(a.cmp(b))
    };
    let mut shown: Vec<usize> = (0..n).collect();
    shown.sort_by(|a, b| {
        rank(&soak.events[*a].kind)
            .cmp(&rank(&soak.events[*b].kind))
            .then(by_time(a, b))
    });
    shown.truncate(EVENTS_MAX_ROWS);
    shown.sort_by(by_time);
    let rows = shown
        .iter()
        .map(|&i| {
            let e = &soak.events[i];
            let (word, class) = match &e.kind {
                SoakEventKind::Phase { .. } => ("phase", Class::Plain),
                SoakEventKind::Skipped { .. } => ("skipped", Class::Warn),
                SoakEventKind::Mismatch { .. } => ("wrong result", Class::Fail),
                SoakEventKind::Xid { .. } => ("Xid", Class::Fail),
                SoakEventKind::Note => ("note", Class::Plain),
            };
            let gpu = match (e.gpu, &e.kind) {
                (Some(g), _) => format!("GPU {g}"),
                (None, SoakEventKind::Phase { .. } | SoakEventKind::Skipped { .. }) => {
                    "all".to_string()
                }
                (None, _) => "—".to_string(),
            };
            vec![
                Cell::plain(clock(e.t_s)),
                Cell::plain(gpu),
                Cell::of(class, word),
                Cell::plain(&e.text),
            ]
        })
        .collect();
    s.push(Block::Table(Table {
        id: Some("soak-events-table".into()),
        columns: vec![
            Column::figures("time"),
            Column::text("GPU"),
            Column::text("event"),
            Column::text("what"),
        ],
        rows,
    }));
    if n > EVENTS_MAX_ROWS {
        s.push(
            Paragraph::note(format!(
                "{EVENTS_MAX_ROWS} of {n} events shown: wrong results first, then Xid events, \
                 skipped loads and notes, then phase changes; report.json holds the other {}.",
                n - EVENTS_MAX_ROWS
            ))
            .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_read_as_utc() {
        assert_eq!(began("2026-11-26T15:04:05.123Z"), "2026-11-26 15:04:05 UTC");
        assert_eq!(began("yesterday"), "yesterday");
        assert_eq!(
            began("2026-11-26T15:04:05+01:00"),
            "2026-11-26T15:04:05+01:00"
        );
        assert_eq!(began("é"), "é");
    }

    #[test]
    fn medians_of_nothing_are_dashes() {
        assert_eq!(median_and(&[], true, 0), "—");
        assert_eq!(median_and(&[3.0, 1.0, 2.0], false, 0), "2 (1)");
    }
}
