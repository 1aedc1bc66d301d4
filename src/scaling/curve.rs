//! All-reduce bus bandwidth as a function of size, from a collectives sweep (measured, or
//! modeled by [`model_case`], the modeled collectives), interpolated linearly in
//! log(size).
//!
//! busbw is nccl-tests' rank-independent figure (doc/PERFORMANCE.md in NVIDIA/nccl-tests), so a
//! curve measured over the box's GPUs gives the all-reduce time for any n within the box:
//! t(S, n) = 2(n−1)/n · S ÷ busbw(S).

use serde::{Deserialize, Serialize};

use crate::bench::collectives::{CollCase, default_sizes, model_case};
use crate::model::{Algo, CollectiveOp, CollectiveResult, Dtype, Source, Status, Topology};

/// busbw(size) for all-reduce, sorted by size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommCurve {
    /// (bytes, busbw GB/s), sorted by bytes, sizes unique.
    pub points: Vec<(f64, f64)>,
    /// measured (a sweep on GPUs) or modeled.
    pub source: Source,
    /// Where the curve came from, e.g. `NCCL 2.28.9, GPUs 0,1`.
    pub basis: String,
}

impl CommCurve {
    /// The curve of the ok all-reduce rows (NCCL first; scalescope's ring when no NCCL row),
    /// out-of-place preferred. `None` when no row has a busbw.
    pub fn from_results(results: &[CollectiveResult]) -> Option<CommCurve> {
        let usable = |algo: Algo, in_place: bool| -> Vec<&CollectiveResult> {
            results
                .iter()
                .filter(|r| {
                    r.op == CollectiveOp::AllReduce
                        && r.algo == algo
                        && r.in_place == in_place
                        && r.status == Status::Ok
                        && r.busbw_gbps.is_some_and(|b| b > 0.0)
                })
                .collect()
        };
        let rows = [Algo::Nccl, Algo::Ring]
            .into_iter()
            .flat_map(|a| [(a, false), (a, true)])
            .map(|(a, p)| usable(a, p))
            .find(|v| !v.is_empty())?;
        let mut points: Vec<(f64, f64)> = Vec::new();
        for r in &rows {
            let (b, bw) = (r.bytes as f64, r.busbw_gbps?);
            match points.iter_mut().find(|(x, _)| *x == b) {
                Some(p) => p.1 = p.1.max(bw),
                None => points.push((b, bw)),
            }
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let first = rows[0];
        let source = if rows.iter().all(|r| r.source == Source::Measured) {
            Source::Measured
        } else {
            Source::Modeled
        };
        let gpus = first
            .gpus
            .iter()
            .map(|g| g.to_string())
            .collect::<Vec<_>>()
            .join(",");
        Some(CommCurve {
            points,
            source,
            basis: format!(
                "{} all_reduce {}, GPUs {gpus}",
                first.backend_version.as_deref().unwrap_or(first.algo.id()),
                source
            ),
        })
    }

    /// The modeled curve over `gpus` of `topo` (the default 8 B … 1 GiB sweep through
    /// [`model_case`]); `None` when the links' rates are unknown, a pair has no NVLink up, or
    /// fewer than 2 GPUs.
    pub fn modeled(topo: &Topology, gpus: &[usize]) -> Option<CommCurve> {
        Self::modeled_or_why(topo, gpus).ok()
    }

    /// [`Self::modeled`], or why there is none: the model's reason where it gave one (a pair
    /// with no NVLink up), `None` for fewer than 2 GPUs or rates unknown.
    pub fn modeled_or_why(topo: &Topology, gpus: &[usize]) -> Result<CommCurve, Option<String>> {
        if gpus.len() < 2 {
            return Err(None);
        }
        let results: Vec<CollectiveResult> = default_sizes()
            .into_iter()
            .map(|bytes| {
                model_case(
                    topo,
                    &CollCase {
                        op: CollectiveOp::AllReduce,
                        algo: Algo::Nccl,
                        gpus: gpus.to_vec(),
                        bytes,
                        dtype: Dtype::F32,
                        in_place: false,
                        iters: 1,
                        warmup: 0,
                        graph: false,
                    },
                )
            })
            .collect();
        let Some(mut c) = Self::from_results(&results) else {
            let why = results
                .iter()
                .filter_map(|r| r.reason.as_deref())
                .find(|r| r.contains(crate::bench::collectives::NCCL_WITHOUT_NVLINK));
            return Err(why.map(str::to_string));
        };
        c.basis = format!(
            "all_reduce modeled from the line rates of {}",
            topo.source.label()
        );
        Ok(c)
    }

    /// busbw at `bytes`, GB/s: linear in log(size) between points; the first point's *time*
    /// below the sweep (latency floor: busbw shrinks with size), the last point's busbw above.
    pub fn busbw_gbps(&self, bytes: f64) -> Option<f64> {
        let (first, last) = (self.points.first()?, self.points.last()?);
        if bytes <= first.0 {
            return Some(first.1 * bytes / first.0);
        }
        if bytes >= last.0 {
            return Some(last.1);
        }
        let i = self.points.iter().position(|p| p.0 >= bytes)?;
        let (a, b) = (self.points[i - 1], self.points[i]);
        let t = (bytes.ln() - a.0.ln()) / (b.0.ln() - a.0.ln());
        Some(a.1 + t * (b.1 - a.1))
    }

    /// Time of one all-reduce of `bytes` over `n` GPUs, ms: 2(n−1)/n · S ÷ busbw(S). 0 for one
    /// GPU or no bytes.
    pub fn all_reduce_ms(&self, bytes: f64, n: usize) -> Option<f64> {
        if n <= 1 || bytes <= 0.0 {
            return Some(0.0);
        }
        let bw = self.busbw_gbps(bytes)?;
        let factor = CollectiveOp::AllReduce.busbw_factor(n);
        Some(factor * bytes / (bw * 1e9) * 1e3)
    }

    /// Time of one point-to-point transfer of `bytes` between two GPUs, ms: a 2-GPU all-reduce
    /// has busbw = algbw and moves S each way, so S ÷ busbw(S) is one exchange.
    pub fn exchange_ms(&self, bytes: f64) -> Option<f64> {
        if bytes <= 0.0 {
            return Some(0.0);
        }
        Some(bytes / (self.busbw_gbps(bytes)? * 1e9) * 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve() -> CommCurve {
        CommCurve {
            points: vec![(1024.0, 1.0), (1048576.0, 100.0), (1073741824.0, 300.0)],
            source: Source::Measured,
            basis: String::new(),
        }
    }

    #[test]
    fn interpolates_in_log_size() {
        let c = curve();
        // 32 KiB is halfway between 1 KiB and 1 MiB in log2 (10 → 15 → 20): 1 + 0.5 × 99.
        assert!((c.busbw_gbps(32768.0).unwrap() - 50.5).abs() < 1e-9);
        assert_eq!(c.busbw_gbps(1048576.0), Some(100.0));
        // Above the sweep: the last busbw; below: the first point's time (busbw ∝ size).
        assert_eq!(c.busbw_gbps(4e9), Some(300.0));
        assert!((c.busbw_gbps(512.0).unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn all_reduce_time_uses_the_ring_factor() {
        let c = curve();
        // 1 GiB over 4 GPUs: 2·3/4 × 1073741824 B ÷ 300e9 B/s = 5.36871 ms.
        let t = c.all_reduce_ms(1073741824.0, 4).unwrap();
        assert!((t - 5.368709).abs() < 1e-5, "{t}");
        assert_eq!(c.all_reduce_ms(1e9, 1), Some(0.0));
    }
}
