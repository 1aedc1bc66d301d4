//! A synthetic burn-in for the document tests: two GPUs over 300 s at one sample a second
//! (gemm to 180 s, memory to 240 s, pcie to 300 s), GPU 1's TFLOP/s dipping to half between
//! 120 and 150 s under HW slowdown, one wrong GEMM result (135 s) and Xid 79 (140 s) on GPU 1,
//! and the soak's verdict in the report's health check.

use scalescope::health::soak::{SoakThresholds, checks};
use scalescope::health::{Evidence, HealthReport, Thresholds};
use scalescope::model::{
    SoakEvent, SoakEventKind, SoakLoad, SoakSample, SoakSection, Source, ThrottleReason,
};
use scalescope::report::Report;

/// When GPU 1's GEMM rate dips, seconds (exclusive start, inclusive end).
pub const DIP: (f64, f64) = (120.0, 150.0);
/// When GPU 1's wrong result and its Xid were seen, seconds.
pub const MISMATCH_T: f64 = 135.0;
pub const XID_T: f64 = 140.0;

/// The phase of second `t`.
fn phase(t: f64) -> SoakLoad {
    if t <= 180.0 {
        SoakLoad::Gemm
    } else if t <= 240.0 {
        SoakLoad::Memory
    } else {
        SoakLoad::Pcie
    }
}

/// The section alone.
pub fn section() -> SoakSection {
    let mut samples = Vec::new();
    for t in 1..=300 {
        let t = f64::from(t);
        for gpu in 0..2usize {
            let load = phase(t);
            let dip = gpu == 1 && t > DIP.0 && t <= DIP.1;
            // A little wobble so that the lines are not flat.
            let wobble = ((t * 0.7 + gpu as f64).sin()) * 0.01;
            let rate = match load {
                SoakLoad::Gemm => 610.0 * (1.0 + wobble) * if dip { 0.5 } else { 1.0 },
                SoakLoad::Memory => 3100.0 * (1.0 + wobble),
                _ => 52.0 * (1.0 + wobble),
            };
            samples.push(SoakSample {
                t_s: t,
                gpu,
                phase: Some(load),
                rate: Some(rate),
                sm_clock_mhz: Some(if dip { 1410 } else { 1980 }),
                mem_clock_mhz: Some(2619),
                power_w: Some(
                    match load {
                        SoakLoad::Gemm => 690.0 - if dip { 200.0 } else { 0.0 },
                        SoakLoad::Memory => 420.0,
                        _ => 180.0,
                    } + 5.0 * wobble * 100.0,
                ),
                gpu_temp_c: Some(45.0 + t / 12.0 + gpu as f64 * 3.0),
                mem_temp_c: Some(50.0 + t / 15.0 + gpu as f64 * 2.0),
                throttle: Some(if dip {
                    vec![ThrottleReason::HwSlowdown]
                } else {
                    Vec::new()
                }),
                ecc_corrected: Some(0),
                ecc_uncorrected: Some(0),
                xid: if gpu == 1 && t == XID_T {
                    vec![79]
                } else {
                    Vec::new()
                },
                checked: (load == SoakLoad::Gemm).then_some(12),
                mismatches: (load == SoakLoad::Gemm)
                    .then_some(u64::from(gpu == 1 && t == MISMATCH_T)),
                ..Default::default()
            });
        }
    }
    let mut events: Vec<SoakEvent> = [(0.0, SoakLoad::Gemm), (180.0, SoakLoad::Memory)]
        .into_iter()
        .chain([(240.0, SoakLoad::Pcie)])
        .map(|(t_s, load)| SoakEvent {
            t_s,
            gpu: None,
            kind: SoakEventKind::Phase { load },
            text: format!("{load} phase began"),
        })
        .collect();
    events.push(SoakEvent {
        t_s: MISMATCH_T,
        gpu: Some(1),
        kind: SoakEventKind::Mismatch {
            row: 17,
            col: 4093,
            got: 0x4049,
            expected: 0x4048,
            wrong: 3,
            against: "GPU 0's product".into(),
        },
        text: "GEMM result differs from GPU 0's product: 3 elements, first at (17, 4093)".into(),
    });
    events.push(SoakEvent {
        t_s: XID_T,
        gpu: Some(1),
        kind: SoakEventKind::Xid { xid: 79 },
        text: "Xid 79: GPU has fallen off the bus".into(),
    });
    events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    SoakSection {
        replay_of: None,
        duration_s: 300.0,
        elapsed_s: 300.0,
        interval_s: 1.0,
        loads: vec![SoakLoad::Gemm, SoakLoad::Memory, SoakLoad::Pcie],
        gpus: vec![0, 1],
        gemm: Some("cuBLAS GemmEx bf16 8192³, fp32 accumulate, every result checked".into()),
        samples,
        events,
        finished: true,
        ..Default::default()
    }
}

/// A report of a two-GPU catalog machine with `soak` and its verdict (the `soak_*` checks) as
/// the health check.
pub fn report_with(soak: SoakSection) -> Report {
    let topo = scalescope::topology::catalog::load("h200-2x-sxm").expect("catalog machine");
    let mut r = Report::new(Default::default(), topo.clone());
    let checks = checks(&soak, &SoakThresholds::default());
    r.health = Some(HealthReport::new(
        &topo,
        Source::Measured,
        checks,
        Thresholds::default(),
        Evidence::default(),
        Vec::new(),
    ));
    r.soak = Some(soak);
    r
}

/// [`report_with`] the synthetic [`section`].
pub fn report() -> Report {
    report_with(section())
}
