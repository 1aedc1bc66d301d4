//! What a healthy machine's NCCL collectives measure between 32 MiB and 1 GiB, for the check of
//! an imported nccl-tests run: the modeled curve (a fixed latency and a peak fraction of line
//! rate) is pinned at 8 B and at 8 GiB and reads 92–108 % of every healthy run from 1 GiB up,
//! but 17 % over at 128 MiB on two GPUs and 25 % under at 8 MiB on eight, so a healthy 2× H200
//! run of nccl-tests up to 128 MiB warned at 86 %. Below 1 GiB a run is held to these curves,
//! measured on H200 SXM (NV18, 478.1 GB/s per direction) and used only for GPUs joined at that
//! line rate (H100 and H200 SXM), by NCCL 2.28.9, f32, out of place:
//!
//! - 2 GPUs: `assets/reports/h200-2x-sxm-2026-11-28.json` (its collectives stage);
//! - 8 GPUs: `assets/reports/h200-8x-sxm-2026-11-22.json` (the same stage, NVSwitch).
//!
//! A test reads both reports and holds every entry to them.

use super::{CollectiveOp, Dtype};

/// The sizes of the curves, bytes: 32 MiB to 1 GiB by doublings.
const SIZES: [u64; 6] = [32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30];

/// The line rate the curves were measured at, GB/s per direction (18 × 26.562).
pub const LINE_GBPS: f64 = 478.116;

/// The bundled report each GPU count's curves were read from.
const REPORTS: [(usize, &str); 2] = [
    (2, "h200-2x-sxm-2026-11-28.json"),
    (8, "h200-8x-sxm-2026-11-22.json"),
];

/// One measured curve: bus bandwidth GB/s at [`SIZES`].
struct Curve {
    op: CollectiveOp,
    gpus: usize,
    busbw: [f64; 6],
}

use CollectiveOp as Op;

#[rustfmt::skip]
const CURVES: &[Curve] = &[
    Curve { op: Op::AllReduce, gpus: 2, busbw: [234.2, 261.8, 282.9, 299.9, 314.4, 325.7] },
    Curve { op: Op::AllGather, gpus: 2, busbw: [187.1, 213.6, 233.0, 246.0, 258.1, 272.3] },
    Curve { op: Op::ReduceScatter, gpus: 2, busbw: [184.2, 208.9, 227.2, 239.8, 258.9, 276.7] },
    Curve { op: Op::Broadcast, gpus: 2, busbw: [296.9, 324.9, 343.2, 353.6, 359.2, 361.7] },
    Curve { op: Op::AllToAll, gpus: 2, busbw: [207.5, 244.5, 266.1, 281.6, 294.0, 331.7] },
    Curve { op: Op::SendRecv, gpus: 2, busbw: [236.9, 268.0, 289.8, 306.2, 355.7, 360.8] },
    Curve { op: Op::AllReduce, gpus: 8, busbw: [282.6, 325.1, 338.1, 346.8, 355.8, 360.4] },
    Curve { op: Op::AllGather, gpus: 8, busbw: [244.7, 286.8, 309.2, 324.3, 336.5, 345.4] },
    Curve { op: Op::ReduceScatter, gpus: 8, busbw: [265.1, 293.8, 314.4, 329.3, 340.1, 347.7] },
    Curve { op: Op::Broadcast, gpus: 8, busbw: [294.1, 322.6, 341.6, 352.7, 357.7, 360.0] },
    Curve { op: Op::AllToAll, gpus: 8, busbw: [192.7, 280.8, 291.2, 310.8, 318.7, 332.5] },
    Curve { op: Op::SendRecv, gpus: 8, busbw: [79.4, 81.4, 161.8, 303.6, 355.0, 360.2] },
];

/// A healthy machine's bus bandwidth for `op` on `gpus` GPUs at `bytes`, GB/s, and where it was
/// measured: interpolated in log2(bytes) between the curve's sizes. `None` outside 32 MiB–1
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
    let c = CURVES.iter().find(|c| c.op == op && c.gpus == gpus)?;
    if bytes < SIZES[0] || bytes > SIZES[SIZES.len() - 1] {
        return None;
    }
    let x = (bytes as f64).log2();
    let i = SIZES
        .windows(2)
        .position(|w| bytes <= w[1])
        .unwrap_or(SIZES.len() - 2);
    let (x0, x1) = ((SIZES[i] as f64).log2(), (SIZES[i + 1] as f64).log2());
    let t = (x - x0) / (x1 - x0);
    let busbw = c.busbw[i] + (c.busbw[i + 1] - c.busbw[i]) * t;
    let (_, report) = REPORTS.iter().find(|(n, _)| *n == gpus)?;
    Some((
        busbw,
        format!(
            "{op} measured on {gpus}× H200 SXM (NV18, NCCL 2.28.9, f32, out of place) at this \
             size: assets/reports/{report}"
        ),
    ))
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
            let mut checked = 0;
            for c in CURVES.iter().filter(|c| c.gpus == gpus) {
                for (size, want) in SIZES.iter().zip(c.busbw) {
                    let got = results
                        .iter()
                        .find(|r| {
                            r["op"] == c.op.id()
                                && r["algo"] == "nccl"
                                && r["dtype"] == "f32"
                                && r["in_place"] == false
                                && r["bytes"] == *size
                                && r["gpus"].as_array().unwrap().len() == gpus
                        })
                        .and_then(|r| r["busbw_gbps"].as_f64())
                        .unwrap_or_else(|| panic!("{file}: no {} at {size}", c.op.id()));
                    assert!(
                        (got - want).abs() < 0.051,
                        "{file} {} {size}: {got} vs {want}",
                        c.op.id()
                    );
                    checked += 1;
                }
            }
            assert_eq!(checked, 36, "{file}");
        }
    }

    #[test]
    fn between_sizes_the_curve_is_interpolated_and_outside_it_is_not_known() {
        let at = |bytes: u64| {
            healthy_busbw(Op::AllReduce, 2, bytes, Dtype::F32, 478.116, true).map(|(b, _)| b)
        };
        assert_eq!(at(128 << 20), Some(282.9));
        let mid = at(181 << 20).unwrap();
        assert!(mid > 282.9 && mid < 299.9, "{mid}");
        assert_eq!(at(16 << 20), None);
        assert_eq!(at(2 << 30), None);
        // Another line rate, GPU count, dtype or a PCIe link: not these curves.
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::F32, 900.0, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 4, 128 << 20, Dtype::F32, 478.116, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::Bf16, 478.116, true).is_none());
        assert!(healthy_busbw(Op::AllReduce, 2, 128 << 20, Dtype::F32, 478.116, false).is_none());
    }
}
