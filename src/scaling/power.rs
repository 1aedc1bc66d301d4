//! Modeled power for scaling rows that were not measured (the model's rows, inside the box and
//! projected beyond it), so that every row with a throughput can say samples per joule — labeled
//! modeled, with the rule in its basis. docs/SCALING.md ("Energy and cost") states the rule:
//!
//! A GPU draws its idle power plus a share of the rest that follows how busy it is: busy is the
//! row's compute time ÷ its step time (a GPU waiting on exposed communication or on the host
//! draws near idle); where the host sets the step, the GPU's own work in it ÷ the step. The
//! reference it scales, first found of:
//! 1. the run's own framework row of the workload (same mode, smallest GPU count measured):
//!    `W(n) = idle + (W_measured − idle) × busy(n) ÷ busy(measured)`; samples per joule keeps
//!    that row's measured energy per sample, scaled by the model's samples/s per GPU and power;
//! 2. the workload's power record for this GPU family (`[[power]]` in its catalog file, the
//!    1-GPU step measured on that GPU), scaled the same way from the model's 1-GPU row;
//! 3. the GPU's datasheet: `W(n) = idle + (limit − idle) × busy(n)`.
//!
//! Idle is the measured row's or the record's reading before the run, else the datasheet
//! table's; where none is known, the reference power (or the board limit) is kept whole — an
//! upper bound, said so. Every power is capped at the board limit.

use super::Mode;
use super::ScalingPoint;
use super::rates::{DatasheetPower, datasheet_power};
use super::table::{Machine, RowSource};
use super::workload::Workload;
use crate::model::energy::EnergyBasis;
use serde::{Deserialize, Serialize};

/// Which rule modeled a run's power, as its report records it: the rule changed on 2026-12-07
/// (e1fd69a), and rows modeled before it are not today's model's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PowerRule(pub u32);

impl PowerRule {
    /// Before 2026-12-07: a row the host sets drew power as if its GPU were busy for the host's
    /// whole step (16 images of ResNet-50 per H100 read ~491 W where the counter reads 193 W).
    pub const HOST_STEP_BUSY: PowerRule = PowerRule(0);
    /// Since 2026-12-07: such a row follows the GPU's own work in the step (`gpu_work_ms`).
    pub const GPU_WORK: PowerRule = PowerRule(1);

    /// What a run that does not say was modeled by.
    pub fn earliest() -> PowerRule {
        Self::HOST_STEP_BUSY
    }

    /// Whether `row`'s modeled power is not what today's rule gives: a modeled row the host
    /// sets, in a run that does not say it was modeled by [`PowerRule::GPU_WORK`] and carries
    /// no `gpu_work_ms` (builds between the rule and this marker wrote the GPU's work, not the
    /// rule).
    pub fn stale_for(self, row: &ScalingPoint) -> bool {
        self < Self::GPU_WORK
            && row.energy_basis == Some(EnergyBasis::Modeled)
            && row.bound == Some(super::Bound::Host)
            && row.gpu_work_ms.is_none()
    }
}

impl Default for PowerRule {
    /// This build's rule.
    fn default() -> PowerRule {
        Self::GPU_WORK
    }
}

/// What is wrong with a row's power where [`PowerRule::stale_for`] holds; `compare` leaves it
/// out and the run's notes say so.
pub const STALE_POWER_NOTE: &str = "modeled by the rule before 2026-12-07, which drew a step \
    the host sets as if the GPU were busy throughout (re-run the bench)";

/// What a row's power is scaled from.
#[derive(Clone, Debug, PartialEq)]
struct Reference {
    watts: f64,
    busy: f64,
    idle: Option<f64>,
    /// The measured row's samples per joule and samples/s per GPU (rule 1).
    measured_spj: Option<(f64, f64)>,
    /// In words, for the basis: `measured at 1 GPU`, `the H100 record (2026-11-26 …)`.
    from: String,
}

/// How busy a row's GPUs are: the GPU's work ÷ step time, in (0, 1] — its compute time, or,
/// where the host sets the step, the GPU's own work in it; `None` without both.
fn busy(r: &ScalingPoint) -> Option<f64> {
    let (c, s) = (r.gpu_work_ms.or(r.compute_ms)?, r.step_time_ms?);
    (c.is_finite() && s.is_finite() && c > 0.0 && s > 0.0).then(|| (c / s).min(1.0))
}

/// The model's row of `workload` in `mode` at `n` GPUs inside the box.
fn model_row<'a>(
    rows: &'a [ScalingPoint],
    workload: &str,
    mode: Mode,
    n: usize,
) -> Option<&'a ScalingPoint> {
    rows.iter().find(|r| {
        r.workload == workload
            && r.mode == mode
            && r.n_gpus == n
            && r.source == RowSource::Modeled
            && !r.projected
    })
}

/// Rule 1: the run's measured framework row (its own busy share, or the model's row at the
/// same count where it has none).
fn measured_reference(rows: &[ScalingPoint], workload: &str, mode: Mode) -> Option<Reference> {
    let m = rows
        .iter()
        .filter(|r| r.workload == workload && r.mode == mode && !r.projected)
        .filter(|r| r.source == RowSource::Framework)
        .filter(|r| r.watts_per_gpu.is_some_and(|w| w.is_finite() && w > 0.0))
        .min_by_key(|r| r.n_gpus)?;
    let busy = busy(m).or_else(|| model_row(rows, workload, mode, m.n_gpus).and_then(busy))?;
    let per_gpu = m.throughput? / m.n_gpus as f64;
    Some(Reference {
        watts: m.watts_per_gpu?,
        busy,
        idle: m.idle_watts_per_gpu.filter(|w| w.is_finite() && *w > 0.0),
        measured_spj: m
            .samples_per_joule
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(|s| (s, per_gpu)),
        from: format!("measured at {}", crate::model::quantities::gpus(m.n_gpus)),
    })
}

/// Rule 2: the workload's power record for this GPU, against the model's 1-GPU row (weak
/// scaling's per-GPU batch, as the record was measured): the rows' own, else modeled on
/// `machine` (a strong-only table has none, and the record is the same).
fn record_reference(
    rows: &[ScalingPoint],
    w: &Workload,
    gpu_name: &str,
    machine: Option<&Machine>,
) -> Option<Reference> {
    let rec = w.power.iter().find(|p| p.matches(gpu_name))?;
    let busy_one = match model_row(rows, &w.name, Mode::Weak, 1) {
        Some(one) => busy(one)?,
        None => {
            let weak = super::table::model(w, machine?, &[Mode::Weak], 1);
            busy(model_row(&weak, &w.name, Mode::Weak, 1)?)?
        }
    };
    Some(Reference {
        watts: rec.watts,
        busy: busy_one,
        idle: rec.idle_watts,
        measured_spj: None,
        from: format!("{} record: {}", rec.gpu, first_clause(&rec.measured)),
    })
}

/// The text up to its first comma and the next (`2026-11-26, nvidia-h100-x1 (…)`).
fn first_clause(s: &str) -> String {
    s.split(", ").take(2).collect::<Vec<_>>().join(", ")
}

/// A modeled row's power per GPU and the rule that gave it, from its busy share `b`: the
/// reference's power (measured here or a record's) moved from its busy share to this one above
/// the idle power, capped at the board limit; or the board limit itself where no reference is
/// known. `None` where neither a reference nor a datasheet says anything.
fn modeled_watts(
    reference: Option<&Reference>,
    sheet: Option<&DatasheetPower>,
    b: f64,
) -> Option<(f64, String)> {
    let limit = sheet.map(|s| s.limit_w);
    let idle = reference
        .and_then(|r| {
            let from = if r.measured_spj.is_some() {
                "measured before the run"
            } else {
                "the record's"
            };
            r.idle.map(|w| (w, from))
        })
        .or_else(|| sheet.and_then(|s| s.idle_w.map(|w| (w, "datasheet table"))));
    match (reference, idle) {
        (Some(r), Some((idle, from))) => {
            let w = idle + (r.watts - idle) * b / r.busy;
            // At most the board limit (a measurement on this GPU above it stands).
            let cap = limit.unwrap_or(f64::INFINITY);
            let cap = if r.measured_spj.is_some() {
                cap.max(r.watts)
            } else {
                cap
            };
            Some((
                w.clamp(idle.min(cap), cap),
                format!(
                    "idle {idle:.0} W ({from}) + ({:.0} W {} − idle) × busy {b:.2} ÷ {:.2}",
                    r.watts, r.from, r.busy
                ),
            ))
        }
        (Some(r), None) => Some((
            r.watts,
            format!(
                "the {:.0} W {} kept (idle power unknown: an upper bound)",
                r.watts, r.from
            ),
        )),
        (None, Some((idle, from))) => match (sheet, limit) {
            (Some(s), Some(limit)) => Some((
                idle + (limit - idle) * b,
                format!(
                    "idle {idle:.0} W ({from}) + (board limit {limit:.0} W − idle) × busy {b:.2}; {}",
                    s.source
                ),
            )),
            _ => None,
        },
        (None, None) => sheet.map(|s| {
            (
                s.limit_w,
                format!(
                    "the board limit {:.0} W (idle power unknown: an upper bound); {}",
                    s.limit_w, s.source
                ),
            )
        }),
    }
}

/// Gives every modeled row with a throughput and no power its modeled power per GPU, energy per
/// step and samples per joule (basis [`EnergyBasis::Modeled`]), for GPUs named `gpu_name`
/// running `workloads` on `machine` (the model's, for a reference row the table lacks). Rows
/// keep no power where no rule applies.
pub fn apply(
    rows: &mut [ScalingPoint],
    gpu_name: Option<&str>,
    workloads: &[Workload],
    machine: Option<&Machine>,
) {
    let sheet = gpu_name.and_then(datasheet_power);
    let mut keys: Vec<(String, Mode)> = rows.iter().map(|r| (r.workload.clone(), r.mode)).collect();
    keys.sort();
    keys.dedup();
    let refs: Vec<((String, Mode), Option<Reference>)> = keys
        .into_iter()
        .map(|(w, mode)| {
            let r = measured_reference(rows, &w, mode).or_else(|| {
                let wl = workloads.iter().find(|x| x.name == w)?;
                record_reference(rows, wl, gpu_name?, machine)
            });
            ((w, mode), r)
        })
        .collect();
    for row in rows.iter_mut() {
        if row.source != RowSource::Modeled || row.watts_per_gpu.is_some() {
            continue;
        }
        let (Some(thr), Some(b)) = (row.throughput, busy(row)) else {
            continue;
        };
        let reference = refs
            .iter()
            .find(|(k, _)| k.0 == row.workload && k.1 == row.mode)
            .and_then(|(_, r)| r.as_ref());
        let Some((watts, rule)) = modeled_watts(reference, sheet.as_ref(), b) else {
            continue;
        };
        if !(watts.is_finite() && watts > 0.0 && thr.is_finite() && thr > 0.0) {
            continue;
        }
        let n = row.n_gpus as f64;
        // A measured reference keeps its energy per sample (the whole window's, probes and
        // refills in it), moved by the model's samples/s per GPU and power.
        let spj = match reference.and_then(|r| r.measured_spj.map(|m| (r, m))) {
            Some((r, (spj, per_gpu))) => spj * (thr / n / per_gpu) * (r.watts / watts),
            None => thr / (watts * n),
        };
        if !(spj.is_finite() && spj > 0.0) {
            continue;
        }
        row.watts_per_gpu = Some(watts);
        row.samples_per_joule = Some(spj);
        row.energy_j_per_step = Some(row.global_batch / spj);
        row.energy_basis = Some(EnergyBasis::Modeled);
        row.basis
            .push_str(&format!("; power modeled: {watts:.0} W per GPU = {rule}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::workload;

    fn row(source: RowSource, n: usize, step_ms: f64, compute_ms: f64) -> ScalingPoint {
        let w = workload::resolve("resnet50").unwrap();
        let mut r = ScalingPoint::empty(&w, Mode::Weak, source, n);
        r.step_time_ms = Some(step_ms);
        r.compute_ms = Some(compute_ms);
        r.throughput = Some(r.global_batch / (step_ms / 1e3));
        r
    }

    #[test]
    fn a_measured_power_is_scaled_by_how_busy_each_row_is() {
        // Measured 1 GPU: 600 W, 72 W idle, busy 100/125 = 0.8, 5 samples/J. The model's
        // 8-GPU row is busy 100/160 = 0.625: 72 + (600 − 72) × 0.625 ÷ 0.8 = 484.5 W.
        let mut measured = row(RowSource::Framework, 1, 125.0, 100.0);
        measured.watts_per_gpu = Some(600.0);
        measured.idle_watts_per_gpu = Some(72.0);
        measured.samples_per_joule = Some(5.0);
        let thr1 = measured.throughput.unwrap();
        let mut rows = vec![
            measured,
            row(RowSource::Modeled, 1, 125.0, 100.0),
            row(RowSource::Modeled, 8, 160.0, 100.0),
        ];
        apply(&mut rows, Some("NVIDIA H100 80GB HBM3"), &[], None);
        assert_eq!(rows[0].energy_basis, None, "a measured row is left alone");
        // The model's 1-GPU row is the measured one: its samples/J too.
        assert!((rows[1].watts_per_gpu.unwrap() - 600.0).abs() < 1e-9);
        assert!((rows[1].samples_per_joule.unwrap() - 5.0).abs() < 1e-9);
        let w8 = rows[2].watts_per_gpu.unwrap();
        assert!((w8 - (72.0 + 528.0 * 0.625 / 0.8)).abs() < 1e-9, "{w8}");
        assert_eq!(rows[2].energy_basis, Some(EnergyBasis::Modeled));
        // 5 samples/J × (samples/s per GPU at 8 ÷ at 1) × (600 W ÷ 484.5 W).
        let per_gpu8 = rows[2].throughput.unwrap() / 8.0;
        let want = 5.0 * (per_gpu8 / thr1) * (600.0 / w8);
        assert!((rows[2].samples_per_joule.unwrap() - want).abs() < 1e-9);
        assert!(
            rows[2].basis.contains("power modeled: 484 W per GPU"),
            "{}",
            rows[2].basis
        );
    }

    #[test]
    fn a_step_the_host_sets_draws_power_for_the_gpus_own_work_only() {
        // Measured 1 GPU: 600 W, 72 W idle, busy 0.8. The 64-GPU row's step is the host's
        // 28 ms (its compute term) with 5 ms of GPU work: busy 5/28, not 28/28.
        let mut measured = row(RowSource::Framework, 1, 125.0, 100.0);
        measured.watts_per_gpu = Some(600.0);
        measured.idle_watts_per_gpu = Some(72.0);
        let mut host_set = row(RowSource::Modeled, 64, 28.0, 28.0);
        host_set.gpu_work_ms = Some(5.0);
        let mut rows = vec![measured, row(RowSource::Modeled, 1, 125.0, 100.0), host_set];
        apply(&mut rows, Some("NVIDIA H100 80GB HBM3"), &[], None);
        let w = rows[2].watts_per_gpu.unwrap();
        assert!(
            (w - (72.0 + 528.0 * (5.0 / 28.0) / 0.8)).abs() < 1e-9,
            "{w}"
        );
        assert!(w < 200.0, "{w}");
    }

    #[test]
    fn a_workload_power_record_for_the_gpu_is_used_where_nothing_was_measured() {
        let mut w = workload::resolve("resnet50").unwrap();
        w.power = vec![workload::PowerRecord {
            gpu: "H100 80GB HBM3".into(),
            watts: 500.0,
            idle_watts: Some(120.0),
            measured: "2026-11-26, nvidia-h100-x1 (…), GPU 0".into(),
        }];
        // The model's 1-GPU row busy 0.8; its 8-GPU row 0.4: 120 + 380 × 0.4 ÷ 0.8 = 310 W.
        let mut rows = vec![
            row(RowSource::Modeled, 1, 125.0, 100.0),
            row(RowSource::Modeled, 8, 250.0, 100.0),
        ];
        apply(&mut rows, Some("NVIDIA H100 80GB HBM3"), &[w.clone()], None);
        assert!((rows[0].watts_per_gpu.unwrap() - 500.0).abs() < 1e-9);
        assert!((rows[1].watts_per_gpu.unwrap() - 310.0).abs() < 1e-9);
        assert!(
            rows[1]
                .basis
                .contains("(500 W H100 80GB HBM3 record: 2026-11-26, nvidia-h100-x1 (…) − idle)"),
            "{}",
            rows[1].basis
        );
        // Not on another GPU (an H100 PCIe, 350 W): its datasheet there, no idle figure.
        let mut rows = vec![row(RowSource::Modeled, 1, 125.0, 100.0)];
        apply(&mut rows, Some("NVIDIA H100 PCIe"), &[w], None);
        assert_eq!(rows[0].watts_per_gpu, Some(350.0));
    }

    #[test]
    fn without_a_measurement_the_datasheet_sets_the_power() {
        // H100 SXM: 700 W limit, 123 W idle; busy 0.5 → 123 + 577 × 0.5 = 411.5 W.
        let mut rows = vec![row(RowSource::Modeled, 8, 200.0, 100.0)];
        apply(&mut rows, Some("NVIDIA H100 80GB HBM3"), &[], None);
        assert!((rows[0].watts_per_gpu.unwrap() - 411.5).abs() < 1e-9);
        // No idle figure for the L40S in the table: the board limit, an upper bound, said so.
        let mut rows = vec![row(RowSource::Modeled, 8, 200.0, 100.0)];
        apply(&mut rows, Some("NVIDIA L40S"), &[], None);
        assert_eq!(rows[0].watts_per_gpu, Some(350.0));
        assert!(
            rows[0].basis.contains("an upper bound"),
            "{}",
            rows[0].basis
        );
        // A GPU nobody documents: no power, no samples per joule (never a made-up one).
        let mut rows = vec![row(RowSource::Modeled, 8, 200.0, 100.0)];
        apply(&mut rows, Some("Mystery GPU"), &[], None);
        assert_eq!(
            (rows[0].watts_per_gpu, rows[0].samples_per_joule),
            (None, None)
        );
    }
}
