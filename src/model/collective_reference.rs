//! What a healthy machine's NCCL collectives measure at every size, and the modeled collectives
//! over NVLink made from it.
//!
//! Measured on H200 SXM (NV18, 478.1 GB/s per direction) by NCCL 2.28.9, f32, out of place,
//! one process driving every GPU (as nccl-tests' `-g`), the time of one operation at every
//! doubling from 32 B to 1 GiB (all-reduce also at 8 GiB):
//!
//! - 2 GPUs: `assets/reports/h200-2x-sxm-2026-11-28.json` (its collectives stage);
//! - 8 GPUs: `assets/reports/h200-8x-sxm-2026-11-22.json` (the same stage, NVSwitch).
//!
//! A test reads both reports and holds every entry to them.
//!
//! Two users:
//! - the check of an imported nccl-tests run below 1 GiB ([`healthy_busbw`]): held to these
//!   curves only where they were measured (2 or 8 GPUs at this line rate, f32);
//! - the modeled collectives over NVLink ([`nvlink_time_us`]): on 2 or 8 GPUs at this line rate
//!   the curve fitted non-decreasing; between 2 and 8 GPUs the latency linear in the GPUs and
//!   the bandwidth interpolated in log2 of them; beyond 8, the 8-GPU curve's bus bandwidth and
//!   a latency per doubling (assumed); at another line rate the time beyond the latency scaled
//!   by the rates (assumed); beyond a curve's last point, extrapolated at nccl-tests' 8 GiB rate.
//!
//! The single formula it replaced (a fixed latency and a peak fraction of line rate, pinned at
//! 8 B and 8 GiB) read 92–108 % of every healthy run from 1 GiB up but up to 37 % over at 8–128
//! MiB on two GPUs and 25 % under at 8 MiB on eight. Against runs the curves were not made from
//! (the tests below; docs/BENCHMARKS.md): nccl-tests' own figures on another 2× H200 within 7 %
//! at every size it ran (8 MiB–2 GiB); NCCL on 3 and 4 GPUs within 4 % from 64 MiB up (the
//! interpolation's weighting was chosen among three on these runs, so they are not wholly held
//! out).

use super::{CollectiveOp, Dtype};

/// The curves' first size, bytes; every curve has a point at each doubling from here to 1 GiB.
const FIRST: u64 = 32;
/// Points per curve: 32 B … 1 GiB.
const POINTS: usize = 26;

/// The line rate the curves were measured at, GB/s per direction (18 × 26.562).
pub const LINE_GBPS: f64 = 478.116;

/// Beyond eight GPUs nothing was measured. NCCL then picks trees (or NVLink SHARP) whose latency
/// grows with log2 n, not with n: the latency is taken to grow by this much per doubling, µs —
/// the 4 → 8 GPU step measured on H200 (38.0 → 80.8 µs at 1 MiB, docs/BENCHMARKS.md) — an
/// assumption, said in every such row.
pub const DOUBLING_US: f64 = 40.0;

/// The bundled report each GPU count's curves were read from.
const REPORTS: [(usize, &str); 2] = [
    (2, "h200-2x-sxm-2026-11-28.json"),
    (8, "h200-8x-sxm-2026-11-22.json"),
];

/// One measured curve: the time of one operation, µs, at 32 B × 2^i.
struct Curve {
    op: CollectiveOp,
    gpus: usize,
    time_us: [f64; POINTS],
    /// The time at 8 GiB where it was measured (all-reduce).
    at_8_gib_us: Option<f64>,
}

use CollectiveOp as Op;

#[rustfmt::skip]
const CURVES: &[Curve] = &[
    Curve { op: Op::AllReduce, gpus: 2, time_us: [
        12.9, 12.8, 12.6, 12.8, 12.0, 12.7, 12.6, 16.8, 16.5,
        16.8, 17.7, 17.9, 18.5, 18.7, 19.6, 19.9, 27.8, 32.8,
        46.5, 82.2, 143.2, 256.3, 474.4, 895.1, 1707.5, 3296.8,
    ], at_8_gib_us: Some(24903.2) },
    Curve { op: Op::AllGather, gpus: 2, time_us: [
        20.7, 19.8, 19.1, 19.5, 19.8, 19.3, 19.8, 19.6, 19.1,
        19.0, 19.6, 20.7, 21.2, 21.7, 22.2, 22.8, 23.0, 25.5,
        35.3, 52.7, 89.7, 157.1, 288.0, 545.5, 1040.2, 1971.5,
    ], at_8_gib_us: None },
    Curve { op: Op::ReduceScatter, gpus: 2, time_us: [
        12.7, 12.3, 12.7, 12.6, 12.5, 12.5, 12.7, 12.5, 12.8,
        13.1, 13.1, 14.6, 16.4, 14.4, 14.8, 15.1, 14.9, 23.6,
        32.2, 51.3, 91.1, 160.6, 295.3, 559.7, 1036.8, 1940.1,
    ], at_8_gib_us: None },
    Curve { op: Op::Broadcast, gpus: 2, time_us: [
        14.2, 16.7, 13.1, 19.0, 19.8, 20.1, 18.2, 18.0, 17.6,
        17.5, 18.5, 18.7, 20.7, 19.9, 19.8, 19.3, 19.4, 24.5,
        36.8, 62.4, 113.0, 206.5, 391.1, 759.2, 1494.8, 2968.9,
    ], at_8_gib_us: None },
    Curve { op: Op::AllToAll, gpus: 2, time_us: [
        14.7, 14.1, 14.4, 19.8, 20.4, 14.1, 15.3, 13.8, 18.2,
        16.4, 20.2, 20.4, 15.4, 23.3, 23.2, 16.5, 20.4, 22.8,
        29.4, 54.2, 80.9, 137.3, 252.2, 476.6, 912.9, 1618.4,
    ], at_8_gib_us: None },
    Curve { op: Op::SendRecv, gpus: 2, time_us: [
        12.8, 13.2, 13.1, 14.2, 12.6, 14.0, 12.7, 13.6, 13.2,
        18.0, 13.6, 19.9, 21.3, 21.4, 20.9, 21.7, 21.0, 28.7,
        50.4, 80.5, 141.6, 250.4, 463.2, 876.7, 1509.3, 2975.8,
    ], at_8_gib_us: None },
    Curve { op: Op::AllReduce, gpus: 8, time_us: [
        83.8, 78.2, 79.7, 81.1, 78.3, 81.8, 84.9, 79.3, 78.3,
        77.4, 75.6, 79.3, 80.0, 78.8, 89.2, 86.1, 85.2, 86.5,
        87.7, 115.2, 207.8, 361.2, 694.7, 1354.7, 2640.7, 5213.1,
    ], at_8_gib_us: Some(41025.9) },
    Curve { op: Op::AllGather, gpus: 8, time_us: [
        88.3, 79.2, 83.2, 82.3, 79.6, 81.2, 85.3, 79.1, 84.2,
        81.7, 82.7, 82.0, 83.8, 91.9, 87.3, 94.4, 92.3, 94.0,
        91.1, 94.3, 120.0, 204.8, 379.8, 724.2, 1395.9, 2720.0,
    ], at_8_gib_us: None },
    Curve { op: Op::ReduceScatter, gpus: 8, time_us: [
        82.2, 77.5, 83.6, 83.3, 87.8, 83.8, 82.8, 82.6, 81.8,
        83.4, 82.8, 80.1, 81.4, 86.1, 89.5, 90.6, 92.3, 92.9,
        89.3, 91.5, 110.7, 199.9, 373.5, 713.2, 1381.2, 2701.9,
    ], at_8_gib_us: None },
    Curve { op: Op::Broadcast, gpus: 8, time_us: [
        89.6, 87.4, 84.0, 86.2, 88.7, 86.3, 85.4, 86.3, 85.5,
        82.3, 83.8, 84.3, 89.4, 80.7, 87.6, 75.5, 87.2, 86.7,
        89.6, 72.2, 114.1, 208.0, 392.9, 761.2, 1500.8, 2982.2,
    ], at_8_gib_us: None },
    Curve { op: Op::AllToAll, gpus: 8, time_us: [
        143.7, 142.0, 235.8, 166.7, 142.0, 147.2, 219.8, 178.3, 148.7,
        142.2, 157.5, 161.4, 141.6, 153.7, 177.2, 185.0, 158.7, 174.8,
        163.1, 272.0, 152.4, 209.1, 403.3, 755.8, 1474.1, 2826.0,
    ], at_8_gib_us: None },
    Curve { op: Op::SendRecv, gpus: 8, time_us: [
        79.4, 79.9, 78.1, 80.7, 81.4, 84.6, 78.0, 77.3, 78.2,
        78.0, 84.0, 85.6, 82.0, 83.2, 84.5, 84.1, 84.6, 84.8,
        113.4, 221.0, 422.6, 824.8, 829.3, 884.0, 1512.4, 2980.6,
    ], at_8_gib_us: None },
];

/// The bus bandwidth NCCL reached at 8 GiB on 2× H200 NVLink, as a fraction of the line rate:
/// nccl-tests 2.19.6 with NCCL 2.28.9 (docs/BENCHMARKS.md, "Collectives (issue C)": all_reduce
/// 342.8, all_gather 297.9, reduce_scatter 283.7, broadcast 367.3, alltoall 338.0, sendrecv
/// 366.8 GB/s). Beyond a curve's last point the model adds time at no less than this.
pub fn peak_fraction(op: CollectiveOp) -> f64 {
    let busbw = match op {
        Op::AllReduce => 342.8,
        Op::AllGather => 297.9,
        Op::ReduceScatter => 283.7,
        Op::Broadcast => 367.3,
        Op::AllToAll => 338.0,
        Op::SendRecv => 366.8,
    };
    busbw / 478.1
}

fn size_of(i: usize) -> u64 {
    FIRST << i
}

fn curve(op: CollectiveOp, gpus: usize) -> Option<&'static Curve> {
    CURVES.iter().find(|c| c.op == op && c.gpus == gpus)
}

/// A healthy machine's bus bandwidth for `op` on `gpus` GPUs at `bytes`, GB/s, and where it was
/// measured: interpolated in log2(bytes) between the curve's points. `None` outside 32 MiB–1
/// GiB, for a dtype other than f32, a GPU count not measured, or a slowest link (`line_gbps`,
/// all of them NVLink: `nvlink`) not at the curves' line rate within 1 %.
pub fn healthy_busbw(
    op: CollectiveOp,
    gpus: usize,
    bytes: u64,
    dtype: Dtype,
    line_gbps: f64,
    nvlink: bool,
) -> Option<(f64, String)> {
    if dtype != Dtype::F32 || !nvlink || (line_gbps / LINE_GBPS - 1.0).abs() > 0.01 {
        return None;
    }
    let c = curve(op, gpus)?;
    if !(32 << 20..=1 << 30).contains(&bytes) {
        return None;
    }
    let busbw = |i: usize| size_of(i) as f64 * op.busbw_factor(gpus) / (c.time_us[i] * 1e3);
    let i = (0..POINTS).position(|i| size_of(i) >= bytes)?;
    let value = if size_of(i) == bytes {
        busbw(i)
    } else {
        let (x0, x1) = ((size_of(i - 1) as f64).log2(), (size_of(i) as f64).log2());
        let t = ((bytes as f64).log2() - x0) / (x1 - x0);
        busbw(i - 1) + (busbw(i) - busbw(i - 1)) * t
    };
    let (_, report) = REPORTS.iter().find(|(n, _)| *n == gpus)?;
    Some((
        value,
        format!(
            "{op} measured on {gpus}× H200 SXM (NV18, NCCL 2.28.9, f32, out of place) at this \
             size: assets/reports/{report}"
        ),
    ))
}

/// The closest non-decreasing sequence to `values` in least squares (isotonic regression by
/// pooling adjacent violators): a larger operation never takes less time, and a single sample
/// faster than its neighbours is averaged with them rather than carried to every smaller size.
fn isotonic(values: &[f64]) -> Vec<f64> {
    // Blocks of (sum, count), each mean no larger than the next's.
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &v in values {
        blocks.push((v, 1));
        while blocks.len() >= 2 {
            let (s1, n1) = blocks[blocks.len() - 1];
            let (s0, n0) = blocks[blocks.len() - 2];
            if s0 / n0 as f64 <= s1 / n1 as f64 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s0 + s1, n0 + n1);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(s, n)| std::iter::repeat_n(s / n as f64, n))
        .collect()
}

/// Where a size falls against a curve's points.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Reach {
    Within,
    /// Below 32 B: the time at 32 B.
    Below,
    /// Beyond the last point (1 GiB, all-reduce 8 GiB), in bytes.
    Beyond(u64),
}

/// A curve's points (bytes, µs), fitted non-decreasing ([`isotonic`]): fitted once per curve,
/// in [`CURVES`]' order.
fn fitted(c: &Curve) -> &'static [(f64, f64)] {
    static FITS: std::sync::OnceLock<Vec<Vec<(f64, f64)>>> = std::sync::OnceLock::new();
    let fits = FITS.get_or_init(|| {
        CURVES
            .iter()
            .map(|c| {
                let sizes = (0..POINTS)
                    .map(|i| size_of(i) as f64)
                    .chain(c.at_8_gib_us.map(|_| (8u64 << 30) as f64));
                let raw: Vec<f64> = c.time_us.iter().copied().chain(c.at_8_gib_us).collect();
                sizes.zip(isotonic(&raw)).collect()
            })
            .collect()
    });
    let i = CURVES
        .iter()
        .position(|x| std::ptr::eq(x, c))
        .expect("a curve of CURVES");
    &fits[i]
}

/// A measured curve's time at `bytes`, µs, at [`LINE_GBPS`]: the curve fitted non-decreasing
/// ([`fitted`]), interpolated in log-log between points; below 32 B the time at 32 B; beyond
/// the last point the time there plus the rest at the larger of the last point's bus bandwidth
/// and [`peak_fraction`] of the line rate.
fn measured_time_us(c: &Curve, bytes: u64) -> (f64, Reach) {
    let points = fitted(c);
    let s = bytes as f64;
    let factor = c.op.busbw_factor(c.gpus);
    let (first, last) = (points[0], points[points.len() - 1]);
    if s < first.0 {
        return (first.1, Reach::Below);
    }
    if s > last.0 {
        let last_busbw = last.0 * factor / (last.1 * 1e3);
        let rate = last_busbw.max(peak_fraction(c.op) * LINE_GBPS);
        let time = last.1 + (s - last.0) * factor / (rate * 1e3);
        return (time, Reach::Beyond(last.0 as u64));
    }
    let i = points
        .iter()
        .position(|p| p.0 >= s)
        .unwrap_or(points.len() - 1)
        .max(1);
    let ((x0, y0), (x1, y1)) = (points[i - 1], points[i]);
    if y0 == y1 {
        return (y0, Reach::Within);
    }
    let t = (s.ln() - x0.ln()) / (x1.ln() - x0.ln());
    ((y0.ln() + t * (y1.ln() - y0.ln())).exp(), Reach::Within)
}

/// The reference time of `op` on 2 or 8 GPUs at `bytes` and the curve's latency (its time at 32
/// B), µs. Send/receive moves each rank's buffer to one peer whatever the GPUs: its 8-GPU
/// reference is the 8-GPU latency and the 2-GPU curve beyond its latency — the one 8-GPU run
/// sat at 75–81 GB/s from 8 to 64 MiB and doubled at 128 MiB, unlike every other op and count,
/// and is not modeled.
fn reference_at(op: CollectiveOp, gpus: usize, bytes: u64) -> (f64, f64, Reach) {
    let c = |g: usize| curve(op, g).expect("a curve for every op at 2 and 8 GPUs");
    let latency = |g: usize| fitted(c(g))[0].1;
    let (time, reach) = measured_time_us(c(gpus), bytes);
    if op != Op::SendRecv || gpus != 8 {
        return (time, latency(gpus), reach);
    }
    let (t2, _) = measured_time_us(c(2), bytes);
    (latency(8) + (t2 - latency(2)), latency(8), reach)
}

/// The modeled time of `op` on `n` (≥ 2) GPUs joined by NVLink whose slowest link carries
/// `line_gbps` per direction, at `bytes`, µs, and what it rests on (a phrase for the row's
/// reason). See the module's notes for how each case is made.
pub fn nvlink_time_us(op: CollectiveOp, n: usize, bytes: u64, line_gbps: f64) -> (f64, String) {
    let s = bytes as f64;
    let (time, latency, reach, mut basis) = match n {
        0..=2 => {
            let (t, l, reach) = reference_at(op, 2, bytes);
            (
                t,
                l,
                reach,
                "made from NCCL's curve measured on 2× H200 NVLink".to_string(),
            )
        }
        3..=7 => between(op, n, bytes),
        _ => {
            let (t8, l8, reach) = reference_at(op, 8, bytes);
            let extra = DOUBLING_US * (n as f64 / 8.0).log2();
            // The same bus bandwidth as on 8 GPUs: the time beyond the latency grows with the
            // op's bus factor (all-reduce 2(n−1)/n).
            let beyond = (t8 - l8) * op.busbw_factor(n) / op.busbw_factor(8);
            let basis = if n > 8 {
                format!(
                    "made from NCCL's curve measured on 8× H200 NVLink at the same bus \
                     bandwidth, + {extra:.0} µs latency ({DOUBLING_US} per doubling of the GPUs \
                     beyond 8: assumed, not measured)"
                )
            } else {
                "made from NCCL's curve measured on 8× H200 NVLink".to_string()
            };
            (l8 + extra + beyond, l8 + extra, reach, basis)
        }
    };
    basis.push_str(" (NCCL 2.28.9, f32, out of place)");
    match reach {
        Reach::Within => {}
        Reach::Below => basis.push_str(", below 32 B as at 32 B"),
        Reach::Beyond(last) => basis.push_str(&format!(
            ", beyond its last point ({}) at the larger of that point's rate and nccl-tests' at 8 \
             GiB on another 2× H200 (extrapolated)",
            super::quantities::format_bytes(last)
        )),
    }
    if (line_gbps / LINE_GBPS - 1.0).abs() <= 0.01 {
        return (time, basis);
    }
    basis.push_str(&format!(
        "; its time beyond the {latency:.0} µs latency scaled by {LINE_GBPS:.1} ÷ \
         {line_gbps:.1} GB/s (assumed: measured only at {LINE_GBPS:.1})"
    ));
    // Where the latency overlapped the transfer at the curves' rate, the scaled part is still
    // no faster than the line rate.
    let at_line = s * op.busbw_factor(n) / (line_gbps * 1e3);
    let beyond = ((time - latency) * LINE_GBPS / line_gbps).max(at_line);
    (latency + beyond, basis)
}

/// 3 to 7 GPUs, between the 2- and 8-GPU curves: the latency linear in the GPUs, the rate
/// beyond it (never above the line rate) interpolated in log2 of them, and the time between the
/// 2- and the 8-GPU time. Returns the time, the latency, where the size fell and the basis.
fn between(op: CollectiveOp, n: usize, bytes: u64) -> (f64, f64, Reach, String) {
    let s = bytes as f64;
    let ((t2, l2, reach), (t8, l8, _)) = (reference_at(op, 2, bytes), reference_at(op, 8, bytes));
    let latency = l2 + (l8 - l2) * (n - 2) as f64 / 6.0;
    let basis = "made from NCCL's curves measured on 2× and 8× H200 NVLink (latency linear in \
                 the GPUs, bandwidth in log2 of them)"
        .to_string();
    if bytes == 0 {
        return (latency, latency, reach, basis);
    }
    let rate = |t: f64, l: f64, gpus: usize| {
        let moved = s * op.busbw_factor(gpus);
        moved / (t - l).max(moved / (LINE_GBPS * 1e3))
    };
    let w = (n as f64 / 2.0).log2() / 2.0;
    let (r2, r8) = (rate(t2, l2, 2), rate(t8, l8, 8));
    let time = latency + s * op.busbw_factor(n) / (r2 + w * (r8 - r2));
    (time.clamp(t2.min(t8), t2.max(t8)), latency, reach, basis)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry is its report's figure: read from the bundled reports themselves.
    #[test]
    fn every_curve_is_its_reports_figures() {
        for (gpus, file) in REPORTS {
            let path = format!("{}/assets/reports/{file}", env!("CARGO_MANIFEST_DIR"));
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let results = v["collectives"]["results"].as_array().unwrap();
            let time = |op: CollectiveOp, size: u64| {
                results
                    .iter()
                    .find(|r| {
                        r["op"] == op.id()
                            && r["algo"] == "nccl"
                            && r["dtype"] == "f32"
                            && r["in_place"] == false
                            && r["bytes"] == size
                            && r["gpus"].as_array().unwrap().len() == gpus
                    })
                    .and_then(|r| r["time_us"].as_f64())
            };
            let mut checked = 0;
            for c in CURVES.iter().filter(|c| c.gpus == gpus) {
                for (i, want) in c.time_us.iter().enumerate() {
                    let got = time(c.op, size_of(i))
                        .unwrap_or_else(|| panic!("{file}: no {} at {}", c.op, size_of(i)));
                    assert!(
                        (got - want).abs() < 0.051,
                        "{file} {}: {got} vs {want}",
                        c.op
                    );
                    checked += 1;
                }
                assert_eq!(
                    c.at_8_gib_us.map(|t| t.round()),
                    time(c.op, 8 << 30).map(f64::round),
                    "{file} {} at 8 GiB",
                    c.op
                );
            }
            assert_eq!(checked, 6 * POINTS, "{file}");
        }
    }

    #[test]
    fn between_sizes_the_curve_is_interpolated_and_outside_it_is_not_known() {
        let at = |bytes: u64| {
            healthy_busbw(Op::AllReduce, 2, bytes, Dtype::F32, 478.116, true).map(|(b, _)| b)
        };
        // 128 MiB in 474.4 µs.
        let at_128 = at(128 << 20).unwrap();
        assert!((at_128 - 282.9).abs() < 0.05, "{at_128}");
        let mid = at(181 << 20).unwrap();
        assert!(mid > at_128 && mid < at(256 << 20).unwrap(), "{mid}");
        assert_eq!(at(16 << 20), None);
        assert_eq!(at(2 << 30), None);
        // Another line rate, GPU count, dtype or a PCIe link: not these curves.
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::F32, 900.0, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 4, 128 << 20, Dtype::F32, 478.116, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::Bf16, 478.116, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::F32, 478.116, false).is_none());
    }

    fn modeled_busbw(op: CollectiveOp, n: usize, bytes: u64) -> f64 {
        let (t, _) = nvlink_time_us(op, n, bytes, LINE_GBPS);
        bytes as f64 * op.busbw_factor(n) / (t * 1e3)
    }

    /// Held out: nccl-tests' own figures on another 2× H200 VM (docs/BENCHMARKS.md,
    /// "Collectives (issue C)", run 4, 2026-11-22: all_reduce_perf and the other five, f32, out
    /// of place). The model is within 7.0 % at every size (the formula it replaced: +29 % at 8
    /// MiB, +17 to +22 % at 128 MiB); held to 8 % here. Its 2 GiB figures rest partly on the
    /// same run's 8 GiB figures (the least rate beyond a curve's last point, `peak_fraction`):
    /// only up to 1 GiB are they wholly held out.
    #[test]
    fn two_gpus_within_8_percent_of_nccl_tests_on_another_vm() {
        let (m, g) = (1u64 << 20, 1u64 << 30);
        let nccl_tests = [
            (Op::AllReduce, 8 * m, 168.6),
            (Op::AllReduce, 128 * m, 283.3),
            (Op::AllReduce, 2 * g, 340.3),
            (Op::AllReduce, 8 * g, 342.8),
            (Op::AllGather, 128 * m, 230.3),
            (Op::AllGather, 2 * g, 277.9),
            (Op::ReduceScatter, 128 * m, 224.0),
            (Op::ReduceScatter, 2 * g, 276.1),
            (Op::Broadcast, 128 * m, 343.9),
            (Op::Broadcast, 2 * g, 366.0),
            (Op::AllToAll, 128 * m, 262.0),
            (Op::AllToAll, 2 * g, 334.5),
            (Op::SendRecv, 8 * m, 165.6),
            (Op::SendRecv, 128 * m, 288.8),
            (Op::SendRecv, 2 * g, 363.8),
        ];
        for (op, bytes, want) in nccl_tests {
            let got = modeled_busbw(op, 2, bytes);
            assert!(
                (got / want - 1.0).abs() < 0.08,
                "{op} at {bytes}: modeled {got:.1} GB/s, nccl-tests {want}"
            );
        }
    }

    /// NCCL 2.28.9 all_reduce on 3 and 4 GPUs of a 4× H200 VM, measured by scalescope in two
    /// runs (docs/BENCHMARKS.md, "Collectives on 2, 3, 4 and 8 GPUs", runs 9 and 11) — neither
    /// count is among the curves, but the interpolation's weighting was chosen among three on
    /// these runs. Within 5 % from 64 MiB up. At 1 MiB the two runs of 4 GPUs disagree by 41 %
    /// (36.9 and 52.1 GB/s): the model is held within 5 % of the nearer.
    #[test]
    fn three_and_four_gpus_near_nccls_runs_on_them() {
        let (m, g) = (1u64 << 20, 1u64 << 30);
        let runs = [
            (3, 64 * m, 303.6),
            (3, g, 347.5),
            (4, 64 * m, 313.7),
            (4, g, 355.7),
            (3, 64 * m, 298.3),
            (3, 256 * m, 328.7),
            (3, g, 346.7),
            (4, 64 * m, 310.6),
            (4, 256 * m, 339.8),
            (4, g, 355.6),
        ];
        for (n, bytes, want) in runs {
            let got = modeled_busbw(Op::AllReduce, n, bytes);
            assert!(
                (got / want - 1.0).abs() < 0.05,
                "{n} GPUs at {bytes}: modeled {got:.1}, NCCL {want}"
            );
        }
        for (n, runs) in [(3, [44.8, 43.1]), (4, [36.9, 52.1])] {
            let got = modeled_busbw(Op::AllReduce, n, m);
            let nearer = runs
                .iter()
                .map(|w| (got / w - 1.0).abs())
                .fold(1.0, f64::min);
            assert!(nearer < 0.05, "{n} GPUs at 1 MiB: {got:.1} vs {runs:?}");
        }
    }

    #[test]
    fn another_line_rate_scales_the_time_beyond_the_latency() {
        let op = Op::AllReduce;
        let (tiny, _) = nvlink_time_us(op, 2, 8, LINE_GBPS);
        let (tiny_fast, why) = nvlink_time_us(op, 2, 8, 2.0 * LINE_GBPS);
        assert!(
            (tiny - tiny_fast).abs() < 1e-3,
            "the latency stays: {tiny} {tiny_fast}"
        );
        assert!(why.contains("assumed"), "{why}");
        let (big, _) = nvlink_time_us(op, 2, 8 << 30, LINE_GBPS);
        let (big_fast, _) = nvlink_time_us(op, 2, 8 << 30, 2.0 * LINE_GBPS);
        assert!(((big - tiny) / (big_fast - tiny) - 2.0).abs() < 1e-6);
        // Never above the line rate at any size, whatever the rate.
        for line in [50.0, LINE_GBPS, 900.0] {
            for i in 0..40 {
                let bytes = 8u64 << i;
                for n in [2, 3, 5, 8, 72] {
                    let (t, _) = nvlink_time_us(op, n, bytes, line);
                    let busbw = bytes as f64 * op.busbw_factor(n) / (t * 1e3);
                    assert!(busbw < line, "{n} GPUs, {bytes} B at {line}: {busbw}");
                }
            }
        }
    }

    #[test]
    fn beyond_eight_gpus_the_latency_grows_per_doubling_as_assumed() {
        let (t8, why8) = nvlink_time_us(Op::AllReduce, 8, 8, LINE_GBPS);
        let (t32, why32) = nvlink_time_us(Op::AllReduce, 32, 8, LINE_GBPS);
        assert!((t32 - t8 - 2.0 * DOUBLING_US).abs() < 1e-9);
        assert!(
            !why8.contains("assumed") && why32.contains("assumed"),
            "{why32}"
        );
        // Larger operations never take less time.
        for n in [2, 3, 4, 6, 8, 16] {
            for op in CollectiveOp::ALL {
                let times: Vec<f64> = (0..34)
                    .map(|i| nvlink_time_us(*op, n, 8u64 << i, LINE_GBPS).0)
                    .collect();
                assert!(
                    times.windows(2).all(|w| w[1] >= w[0] - 1e-9),
                    "{op} on {n}: {times:?}"
                );
            }
        }
    }

    /// More GPUs never take less time at the same size (between the curves the 2- and 8-GPU
    /// times bound the interpolation), nor more bus bandwidth beyond 8 GPUs; nothing is NaN at 0
    /// bytes.
    #[test]
    fn more_gpus_never_take_less_time() {
        let counts = [2, 3, 4, 5, 6, 7, 8, 16, 72];
        for op in CollectiveOp::ALL {
            for i in 0..34 {
                let bytes = 8u64 << i;
                let times: Vec<f64> = counts
                    .iter()
                    .map(|&n| nvlink_time_us(*op, n, bytes, LINE_GBPS).0)
                    .collect();
                assert!(
                    times.windows(2).all(|w| w[1] >= w[0] - 1e-9),
                    "{op} at {bytes}: {times:?}"
                );
                let busbw = |n: usize| modeled_busbw(*op, n, bytes);
                assert!(busbw(72) <= busbw(8) * (1.0 + 1e-9), "{op} at {bytes}");
            }
            for n in counts {
                let (t, _) = nvlink_time_us(*op, n, 0, LINE_GBPS);
                assert!(t.is_finite() && t > 0.0, "{op} on {n} at 0 B: {t}");
            }
        }
    }

    /// The fit is the closest non-decreasing curve: a single fast sample is pooled with its
    /// neighbours, not carried to every smaller size.
    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(isotonic(&[1.0, 2.0, 3.0]), vec![1.0, 2.0, 3.0]);
        assert_eq!(isotonic(&[3.0, 1.0, 2.0]), vec![2.0, 2.0, 2.0]);
        assert_eq!(isotonic(&[1.0, 4.0, 2.0, 5.0]), vec![1.0, 3.0, 3.0, 5.0]);
    }
}
