//! Efficiencies above 1.00. GPUs do not speed each other up: n GPUs do n GPUs' work no faster
//! than one GPU does its own, so a row that reads better than perfect is either the model's
//! inputs or two timed windows that ran at different speeds — never the machine. Such a row is
//! shown with its cause, computed here from its own step against its base row's (the row its
//! speedup is taken against); it is never clamped or hidden. Pure functions of scaling rows.

use std::fmt::Write as _;

use crate::model::quantities::gpus;
use crate::scaling::{Mode, RowSource, ScalingPoint};

/// From here on an efficiency reads above 1.00 at two decimals.
pub const ABOVE: f64 = 1.005;

/// The most decimals an efficiency is written with anywhere (CSV: `1.0013`): a cause is given
/// for every efficiency that reads above 1 at this precision.
pub const FINEST: u32 = 4;

/// The mark tables put beside an efficiency above 1.00; the cause is in a note under them.
pub const MARK: &str = "*";

/// True where `e` written with `decimals` decimals reads above 1 (`1.0013` at 4, `1.00` at 2;
/// an efficiency in % with one decimal is 3).
pub fn reads_above_one(e: f64, decimals: u32) -> bool {
    let scale = 10f64.powi(decimals as i32);
    e.is_finite() && (e * scale).round() > scale
}

/// True where `row`'s efficiency reads above 1.00 (two decimals, as the tables print it).
pub fn above(row: &ScalingPoint) -> bool {
    above_at(row, 2)
}

/// True where `row`'s efficiency reads above 1 written with `decimals` decimals.
pub fn above_at(row: &ScalingPoint, decimals: u32) -> bool {
    row.efficiency.is_some_and(|e| reads_above_one(e, decimals))
}

/// An efficiency as tables print it, two decimals (`1.07*` where above 1.00: see [`notes`]);
/// `—` where unknown.
pub fn cell(row: &ScalingPoint) -> String {
    match row.efficiency.filter(|e| e.is_finite()) {
        None => "—".to_string(),
        Some(e) if above(row) => format!("{e:.2}{MARK}"),
        Some(e) => format!("{e:.2}"),
    }
}

/// The base of `row`'s speedup in `rows`: the same workload, mode and kind of row at
/// `speedup_base` GPUs (one where unset), inside the box.
fn base<'a>(row: &ScalingPoint, rows: &'a [ScalingPoint]) -> Option<&'a ScalingPoint> {
    let n0 = row.speedup_base.unwrap_or(1);
    rows.iter().find(|b| {
        b.workload == row.workload
            && b.mode == row.mode
            && b.source == row.source
            && b.n_gpus == n0
            && !b.projected
            && b.throughput.is_some()
    })
}

/// The samples of `p`'s busiest GPU: a global batch split in whole samples puts one more on
/// some GPUs, and the step waits for them.
fn busiest(p: &ScalingPoint) -> Option<f64> {
    let most = crate::scaling::batch::BatchSplit::new(p.global_batch, p.n_gpus).most;
    (most > 0).then_some(most as f64)
}

/// How much more the busiest GPU of `p` takes than the mean (1 for an even split).
fn unevenness(p: &ScalingPoint) -> Option<f64> {
    let most = busiest(p)?;
    (p.global_batch > 0.0).then(|| most * p.n_gpus as f64 / p.global_batch)
}

/// Milliseconds per sample of the busiest GPU of a per-step term `ms` of `p`.
fn per_sample(p: &ScalingPoint, ms: Option<f64>) -> Option<f64> {
    let ms = ms.filter(|m| m.is_finite() && *m > 0.0)?;
    Some(ms / busiest(p)?)
}

/// Why `row`'s efficiency is above 1, computed from its step and its base row's in `rows`
/// (which term per sample is shorter, by how much); `None` where it does not read above 1 even
/// at [`FINEST`] decimals.
pub fn cause(row: &ScalingPoint, rows: &[ScalingPoint]) -> Option<String> {
    let e = row.efficiency.filter(|_| above_at(row, FINEST))?;
    let n0 = row.speedup_base.unwrap_or(1);
    let (at, against) = (gpus(row.n_gpus), gpus(n0));
    // efficiency = (time per sample per GPU at the base) ÷ (the same at n).
    let step_pct = (1.0 - 1.0 / e) * 100.0;
    // The term of the step that is shorter per sample, and by how much.
    let term = base(row, rows).and_then(|b| {
        [
            ("compute", row.compute_ms, b.compute_ms),
            (
                "time besides compute and communication (host, input)",
                row.other_ms,
                b.other_ms,
            ),
        ]
        .into_iter()
        .filter_map(|(name, x, y)| {
            let (x, y) = (per_sample(row, x)?, per_sample(b, y)?);
            let pct = (1.0 - x / y) * 100.0;
            (pct >= 0.5).then_some((name, pct))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    });
    let mut s = String::new();
    if let Some(split) = split_cause(row, rows, term) {
        return Some(split);
    }
    if let Some(sharded) = sharded_cause(row, base(row, rows), term, &at, &against) {
        return Some(sharded);
    }
    match row.source {
        RowSource::Modeled => {
            match term {
                Some(("compute", pct)) => {
                    let _ = write!(
                        s,
                        "the model's compute per sample is {pct:.1} % shorter at {at} than at \
                         {against}: it took a faster GEMM rate for {at} than for {against} (each \
                         row's basis names its rate)"
                    );
                }
                Some((name, pct)) => {
                    let _ = write!(
                        s,
                        "the model's {name} per sample is {pct:.1} % shorter at {at} than at \
                         {against}"
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        "the model's step per sample per GPU is {step_pct:.1} % shorter at {at} \
                         than at {against}"
                    );
                }
            }
            s.push_str(
                "; GPUs do not speed each other up, so this is the model's inputs, not the \
                 machine (docs/SCALING.md, \"Which GEMM rate an n-GPU step uses\")",
            );
        }
        RowSource::Framework | RowSource::Proxy => {
            if row.source == RowSource::Proxy {
                s.push_str("synthetic proxy steps (the older method), ");
            }
            let _ = write!(
                s,
                "measured: each GPU's share of the step took {step_pct:.1} % less time per sample \
                 at {at} than at {against}"
            );
            if let Some((name, pct)) = term {
                let _ = write!(s, " (its {name} {pct:.1} % less)");
            }
            s.push_str(
                "; GPUs do not speed each other up, so the two timed windows ran at different \
                 speeds (clocks, host, other load), not the GPUs",
            );
        }
    }
    Some(s)
}

/// Under sharded data parallelism (ZeRO-3 / FSDP) each GPU updates only its 1/n share of the
/// parameters, so its optimizer step — part of compute — shrinks as GPUs are added: a real
/// gain of the method, not of the machine, where compute per sample is what is shorter.
fn sharded_cause(
    row: &ScalingPoint,
    base: Option<&ScalingPoint>,
    term: Option<(&str, f64)>,
    at: &str,
    against: &str,
) -> Option<String> {
    let ("compute", pct) = term? else {
        return None;
    };
    // The model's FSDP rows: a measured row's gain is two windows' speeds as much as its
    // optimizer, and keeps the measured wording.
    if row.pattern != crate::scaling::Pattern::Fsdp || row.source != RowSource::Modeled {
        return None;
    }
    let mut s = format!(
        "sharded data parallel (ZeRO-3 / FSDP): each GPU updates only its share of the \
         parameters, so the optimizer step — part of compute — is shorter at {at} than at \
         {against}, and compute per sample with it ({pct:.1} %); the rest of the step did not \
         grow by as much"
    );
    // The compute rate each row took (`bf16 738 TFLOP/s …` in its basis): where the two
    // differ, so may the GEMM rate.
    let rate = |p: &ScalingPoint| {
        let at = p.basis.find(" TFLOP/s")?;
        p.basis[..at].split_whitespace().last().map(str::to_string)
    };
    if base.is_some_and(|b| rate(b) != rate(row)) {
        s.push_str(
            "; the two rows also took different compute rates (each row's basis names its rate)",
        );
    }
    Some(s)
}

/// Where `row`'s base splits its global batch less evenly than `row` (its busiest GPU carries
/// more than the mean, and its step waits for it): that is the cause, in words, with `term`
/// (the step's term that is shorter per sample of the busiest GPU, if any) besides.
fn split_cause(
    row: &ScalingPoint,
    rows: &[ScalingPoint],
    term: Option<(&str, f64)>,
) -> Option<String> {
    let b = base(row, rows)?;
    let (ub, ur) = (unevenness(b)?, unevenness(row)?);
    // The split is the cause only where it covers most of the gain (a 0.5 % unevenness does
    // not explain an efficiency of 1.15).
    let e = row.efficiency.filter(|e| e.is_finite())?;
    if ub / ur < ABOVE || ub / ur - 1.0 < 0.5 * (e - 1.0) {
        return None;
    }
    let (at, against) = (gpus(row.n_gpus), gpus(b.n_gpus));
    let mut s = format!(
        "the base row is slow, not this one fast: {} samples over {against} split in whole \
         samples: the busiest GPU takes {:.0}, {:.1} % above the mean, and the step waits for \
         it (at {at} {:.1} %); efficiency is taken against the mean share",
        b.global_batch,
        busiest(b).unwrap_or_default(),
        (ub - 1.0) * 100.0,
        (ur - 1.0) * 100.0,
    );
    if let Some((name, pct)) = term {
        let _ = write!(
            s,
            " (besides, the {name} per sample of the busiest GPU is {pct:.1} % shorter at {at})"
        );
    }
    Some(s)
}

/// The causes of every row of `rows` (of `workload` and `mode`, or all of them) whose
/// efficiency reads above 1.00: one line per workload, mode and kind of row, e.g. `* resnet50
/// weak, modeled: efficiency 1.03–1.07 at 2–1024 GPUs (14 rows), above 1.00; at 2 GPUs (1.07):
/// the model's compute …`.
pub fn notes(rows: &[ScalingPoint], workload: Option<&str>, mode: Option<Mode>) -> Vec<String> {
    notes_at(rows, workload, mode, 2)
}

/// [`notes`] for tables that write efficiencies with `decimals` decimals (3: in % with one).
pub fn notes_at(
    rows: &[ScalingPoint],
    workload: Option<&str>,
    mode: Option<Mode>,
    decimals: u32,
) -> Vec<String> {
    notes_of_at(
        rows.iter().filter(|r| {
            workload.is_none_or(|w| r.workload == w) && mode.is_none_or(|m| r.mode == m)
        }),
        rows,
        decimals,
    )
}

/// [`notes`] for the rows `shown` (a table's selection), their base rows looked up in `rows`.
pub fn notes_of<'a>(
    shown: impl IntoIterator<Item = &'a ScalingPoint>,
    rows: &[ScalingPoint],
) -> Vec<String> {
    notes_of_at(shown, rows, 2)
}

fn notes_of_at<'a>(
    shown: impl IntoIterator<Item = &'a ScalingPoint>,
    rows: &[ScalingPoint],
    decimals: u32,
) -> Vec<String> {
    // One group per workload, mode and kind of row, in the order first met.
    type Key<'k> = (&'k str, Mode, RowSource);
    let mut groups: Vec<(Key<'_>, Vec<&ScalingPoint>)> = Vec::new();
    for r in shown.into_iter().filter(|r| above_at(r, decimals)) {
        let key = (r.workload.as_str(), r.mode, r.source);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups
        .into_iter()
        .filter_map(|((w, mode, source), v)| {
            let top = v.iter().copied().max_by(|a, b| {
                a.efficiency
                    .unwrap_or(0.0)
                    .total_cmp(&b.efficiency.unwrap_or(0.0))
            })?;
            let lo = v
                .iter()
                .filter_map(|r| r.efficiency)
                .fold(f64::INFINITY, f64::min);
            let hi = top.efficiency?;
            let n_lo = v.iter().map(|r| r.n_gpus).min()?;
            let n_hi = v.iter().map(|r| r.n_gpus).max()?;
            let d = decimals as usize;
            let values = if format!("{lo:.d$}") == format!("{hi:.d$}") {
                format!("{hi:.d$}")
            } else {
                format!("{lo:.d$}–{hi:.d$}")
            };
            let counts = if n_lo == n_hi {
                format!("at {}", gpus(n_lo))
            } else {
                format!("at {n_lo}–{n_hi} GPUs ({} rows)", v.len())
            };
            let what = match source {
                RowSource::Modeled => "modeled",
                RowSource::Framework => "measured_framework",
                RowSource::Proxy => "proxy",
            };
            Some(format!(
                "{MARK} {w} {mode}, {what}: efficiency {values} {counts}, above 1.00; at {} \
                 ({hi:.d$}): {}",
                gpus(top.n_gpus),
                cause(top, rows)?
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: RowSource, n: usize, step_ms: f64, compute_ms: f64) -> ScalingPoint {
        let w = crate::scaling::workload::resolve("resnet50").unwrap();
        let mut p = ScalingPoint::empty(&w, Mode::Weak, source, n);
        p.step_time_ms = Some(step_ms);
        p.compute_ms = Some(compute_ms);
        p.throughput = Some(p.global_batch / step_ms * 1e3);
        p
    }

    fn with_efficiency(mut rows: Vec<ScalingPoint>) -> Vec<ScalingPoint> {
        let t1 = rows[0].throughput.unwrap();
        for r in &mut rows {
            r.efficiency = Some(r.throughput.unwrap() / (t1 * r.n_gpus as f64));
        }
        rows
    }

    #[test]
    fn a_faster_model_compute_term_is_named_as_the_cause() {
        let rows = with_efficiency(vec![
            row(RowSource::Modeled, 1, 22.0, 21.0),
            row(RowSource::Modeled, 2, 20.6, 19.6),
        ]);
        assert!(above(&rows[1]), "{:?}", rows[1].efficiency);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(why.contains("compute per sample"), "{why}");
        assert!(why.contains("GPUs do not speed each other up"), "{why}");
        assert_eq!(cause(&rows[0], &rows), None);
        assert!(cell(&rows[1]).ends_with(MARK));
        assert!(!cell(&rows[0]).ends_with(MARK));
        let notes = notes(&rows, None, None);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("at 2 GPUs"), "{}", notes[0]);
    }

    #[test]
    fn a_measured_row_above_one_says_its_windows_differed() {
        let rows = with_efficiency(vec![
            row(RowSource::Proxy, 1, 3.2, 3.1),
            row(RowSource::Proxy, 4, 3.0, 2.95),
        ]);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(why.starts_with("synthetic proxy steps"), "{why}");
        assert!(why.contains("timed windows"), "{why}");
    }

    #[test]
    fn an_unevenly_split_base_is_named_as_the_cause() {
        // 16 samples strong: 6/5/5 on 3 GPUs, 4 each on 4. The same compute per sample on the
        // busiest GPU (1200 ms each) reads 1.09 at 4 against 3, the base's split the cause.
        let strong = |n: usize, step_ms: f64| {
            let w = crate::scaling::workload::resolve("llama2-7b").unwrap();
            let mut p = ScalingPoint::empty(&w, Mode::Strong, RowSource::Modeled, n);
            p.global_batch = 16.0;
            p.step_time_ms = Some(step_ms);
            p.compute_ms = Some(step_ms);
            p.throughput = Some(16.0 / step_ms * 1e3);
            p.speedup_base = Some(3);
            p
        };
        let mut rows = vec![strong(3, 7200.0), strong(4, 4800.0)];
        let per_gpu_3 = rows[0].throughput.unwrap() / 3.0;
        for r in &mut rows {
            r.efficiency = Some(r.throughput.unwrap() / r.n_gpus as f64 / per_gpu_3);
        }
        let why = cause(&rows[1], &rows).unwrap();
        assert!(why.starts_with("the base row is slow"), "{why}");
        assert!(
            why.contains("the busiest GPU takes 6, 12.5 % above the mean"),
            "{why}"
        );
        assert!(!why.contains("GEMM rate"), "{why}");
        // 200 samples: 67/67/66 on 3 GPUs (+0.5 %) cannot explain 1.15 at 4: not named.
        for r in &mut rows {
            r.global_batch = 200.0;
        }
        rows[1].efficiency = Some(1.15);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(!why.starts_with("the base row is slow"), "{why}");
    }

    #[test]
    fn rows_at_or_below_one_have_no_cause() {
        let rows = with_efficiency(vec![
            row(RowSource::Framework, 1, 20.0, 18.0),
            row(RowSource::Framework, 2, 20.05, 18.0),
        ]);
        assert!(rows.iter().all(|r| cause(r, &rows).is_none()));
        assert!(notes(&rows, None, None).is_empty());
    }

    #[test]
    fn an_efficiency_above_one_only_at_four_decimals_has_a_cause_but_no_mark() {
        // 1.0013: "1.00" in the tables (no mark), "100.1" in %, "1.0013" in CSV (a cause).
        let rows = with_efficiency(vec![
            row(RowSource::Modeled, 1, 20.0, 19.0),
            row(RowSource::Modeled, 2, 20.0 / 1.0013, 19.0 / 1.0013),
        ]);
        assert!(!above(&rows[1]) && above_at(&rows[1], 3) && above_at(&rows[1], FINEST));
        assert!(!cell(&rows[1]).ends_with(MARK));
        assert!(cause(&rows[1], &rows).is_some());
        assert!(notes(&rows, None, None).is_empty());
        assert_eq!(notes_at(&rows, None, None, 3).len(), 1);
        assert!(!reads_above_one(1.00004, FINEST) && reads_above_one(1.00005, FINEST));
    }

    #[test]
    fn a_sharded_optimizer_is_named_where_fsdp_compute_per_sample_shrinks() {
        let fsdp = |n: usize, compute_ms: f64, rate: &str| {
            let w = crate::scaling::workload::resolve("llama2-7b").unwrap();
            assert_eq!(w.pattern, crate::scaling::Pattern::Fsdp);
            let mut p = ScalingPoint::empty(&w, Mode::Weak, RowSource::Modeled, n);
            p.step_time_ms = Some(compute_ms + 1.0);
            p.compute_ms = Some(compute_ms);
            p.throughput = Some(p.global_batch / (compute_ms + 1.0) * 1e3);
            p.basis = format!("bf16 {rate} TFLOP/s measured (GPU 1: slowest of GPUs 0–{n}); more");
            p
        };
        let rows = with_efficiency(vec![fsdp(1, 600.0, "700"), fsdp(2, 580.0, "700")]);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(why.starts_with("sharded data parallel"), "{why}");
        assert!(!why.contains("GEMM rate for"), "{why}");
        assert!(!why.contains("different compute rates"), "{why}");
        // Where the rows took different rates, that is said too.
        let rows = with_efficiency(vec![fsdp(1, 600.0, "700"), fsdp(2, 580.0, "738")]);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(why.contains("different compute rates"), "{why}");
        // Data parallel with the same gain: the model's inputs, not the method.
        let rows = with_efficiency(vec![
            row(RowSource::Modeled, 1, 601.0, 600.0),
            row(RowSource::Modeled, 2, 581.0, 580.0),
        ]);
        let why = cause(&rows[1], &rows).unwrap();
        assert!(!why.starts_with("sharded"), "{why}");
    }
}
