//! How a step's samples are laid out: a strong-scaling global batch split over the GPUs in whole
//! samples, and a per-GPU batch run as micro-batches whose gradients are accumulated
//! (docs/SCALING.md, "The step" and "Memory fit").

/// A global batch split over `n` GPUs in whole samples: `most` samples on `with_most` GPUs and
/// one fewer on the others. Data-parallel GPUs wait for each other at every all-reduce, so the
/// step is the one of the GPUs with the most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchSplit {
    /// Samples over all GPUs.
    pub global: u64,
    /// GPUs.
    pub n: u64,
    /// Samples on each of the GPUs that take the most.
    pub most: u64,
    /// How many GPUs take `most`: all `n` where the global batch divides evenly.
    pub with_most: u64,
}

impl BatchSplit {
    /// `global` samples over `n` GPUs (at least one). Workload files hold whole samples
    /// (`workload::validate`); a fraction from elsewhere is dropped.
    pub fn new(global: f64, n: usize) -> BatchSplit {
        // `as` saturates: a global batch beyond u64 is no input validation lets through.
        let global = if global.is_finite() && global > 0.0 {
            global.floor() as u64
        } else {
            0
        };
        let n = n.max(1) as u64;
        let (q, r) = (global / n, global % n);
        if r == 0 {
            BatchSplit {
                global,
                n,
                most: q,
                with_most: n,
            }
        } else {
            BatchSplit {
                global,
                n,
                most: q + 1,
                with_most: r,
            }
        }
    }

    /// True when every GPU takes the same number of samples.
    pub fn is_even(&self) -> bool {
        self.with_most == self.n
    }

    /// Samples on each of the other GPUs (`most` where the split is even; 0 where there are
    /// more GPUs than samples).
    pub fn least(&self) -> u64 {
        if self.is_even() {
            self.most
        } else {
            self.most - 1
        }
    }

    /// The basis note of an uneven split, e.g. `1024 samples over 3 GPUs in whole samples: 1
    /// GPU takes 342, 2 take 341; the step is modeled at 342, the GPUs with the most setting
    /// it`; `None` where the split is even.
    pub fn note(&self) -> Option<String> {
        if self.is_even() {
            return None;
        }
        let others = self.n - self.with_most;
        Some(format!(
            "{} samples over {} GPUs in whole samples: {} {} {}, {others} {} {}; the step is modeled at {}, the GPUs with the most setting it",
            self.global,
            self.n,
            self.with_most,
            if self.with_most == 1 {
                "GPU takes"
            } else {
                "GPUs take"
            },
            self.most,
            if others == 1 { "takes" } else { "take" },
            self.least(),
            self.most,
        ))
    }
}

/// How many micro-batches of `micro` samples a per-GPU batch of `per_gpu` takes: the last one
/// takes what is left where `micro` does not divide it. 1 where `micro` is not a size.
pub fn accumulation(per_gpu: f64, micro: f64) -> u64 {
    if !(micro.is_finite() && micro > 0.0 && per_gpu.is_finite()) {
        return 1;
    }
    // `as` saturates at u64::MAX, far beyond any accepted batch.
    (per_gpu / micro).ceil().max(1.0) as u64
}

/// A batch as tables print it: whole numbers without decimals, others (reports written before
/// batches were split in whole samples) with up to 3.
pub fn samples(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The per-GPU batch as tables print it: `8`; `8 = 2 × 4` where the step accumulates
/// (micro-batch × micro-batches); `22 = 4 × 5 + 2` where the last micro-batch takes what is
/// left (`342 = 256 + 86` with one full one before it); a leading `≤` where the global batch
/// does not split evenly (`uneven`): the figure is the GPUs with the most, which set the step,
/// and the others take one fewer.
pub fn per_gpu_cell(
    per_gpu: f64,
    uneven: bool,
    micro: Option<f64>,
    accumulate: Option<u64>,
) -> String {
    let head = format!("{}{}", if uneven { "≤" } else { "" }, samples(per_gpu));
    let (Some(micro), Some(acc)) = (micro, accumulate) else {
        return head;
    };
    if acc <= 1 {
        return head;
    }
    let full = acc - 1;
    let rest = per_gpu - micro * full as f64;
    if (rest - micro).abs() < 1e-9 * micro.max(1.0) {
        format!("{head} = {} × {acc}", samples(micro))
    } else if full == 1 {
        format!("{head} = {} + {}", samples(micro), samples(rest))
    } else {
        format!("{head} = {} × {full} + {}", samples(micro), samples(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every GPU's samples, the GPUs with the most first.
    fn per_gpu(s: &BatchSplit) -> Vec<u64> {
        (0..s.n)
            .map(|i| if i < s.with_most { s.most } else { s.least() })
            .collect()
    }

    #[test]
    fn a_strong_split_is_whole_samples_that_sum_to_the_global_batch() {
        for global in [1u64, 7, 8, 64, 100, 1024, 16384] {
            for n in 1..=40usize {
                if (n as u64) > global {
                    continue;
                }
                let s = BatchSplit::new(global as f64, n);
                let each = per_gpu(&s);
                assert_eq!(
                    each.iter().sum::<u64>(),
                    global,
                    "{global} over {n}: {each:?}"
                );
                assert_eq!(each.len(), n);
                // Whole samples, at most one apart; the most first.
                assert!(
                    each.iter()
                        .all(|&b| b >= 1 && b + 1 >= s.most && b <= s.most)
                );
                assert_eq!(s.is_even(), global % n as u64 == 0);
            }
        }
    }

    #[test]
    fn a_remainder_goes_one_sample_each_to_the_first_gpus() {
        // 1024 over 3: 342 + 341 + 341; 64 over 9 (GPT-2 XL on a 9-GPU count): 8 × 1 + 7 × 8.
        let s = BatchSplit::new(1024.0, 3);
        assert_eq!((s.most, s.with_most, s.least()), (342, 1, 341));
        assert_eq!(
            s.note().unwrap(),
            "1024 samples over 3 GPUs in whole samples: 1 GPU takes 342, 2 take 341; \
             the step is modeled at 342, the GPUs with the most setting it"
        );
        let s = BatchSplit::new(64.0, 9);
        assert_eq!((s.most, s.with_most, s.least()), (8, 1, 7));
        let s = BatchSplit::new(1024.0, 72);
        assert_eq!((s.most, s.with_most, s.least()), (15, 16, 14));
        assert_eq!(16 * 15 + 56 * 14, 1024);
        // Even: no note, every GPU the same.
        let s = BatchSplit::new(1024.0, 4);
        assert_eq!((s.most, s.with_most, s.least()), (256, 4, 256));
        assert_eq!(s.note(), None);
        // More GPUs than samples: some GPUs get none.
        assert_eq!(BatchSplit::new(8.0, 16).least(), 0);
    }

    #[test]
    fn micro_batches_cover_the_per_gpu_batch() {
        assert_eq!(accumulation(8.0, 4.0), 2);
        assert_eq!(accumulation(8.0, 8.0), 1);
        assert_eq!(accumulation(342.0, 256.0), 2);
        assert_eq!(accumulation(22.0, 4.0), 6);
        assert_eq!(accumulation(1e12, 1.0), 1_000_000_000_000);
        assert_eq!(accumulation(8.0, 0.0), 1);
    }

    #[test]
    fn the_per_gpu_cell_shows_micro_batch_times_accumulation() {
        assert_eq!(per_gpu_cell(8.0, false, None, None), "8");
        assert_eq!(per_gpu_cell(8.0, false, Some(8.0), Some(1)), "8");
        assert_eq!(per_gpu_cell(8.0, false, Some(2.0), Some(4)), "8 = 2 × 4");
        assert_eq!(
            per_gpu_cell(1024.0, false, Some(256.0), Some(4)),
            "1024 = 256 × 4"
        );
        assert_eq!(
            per_gpu_cell(22.0, false, Some(4.0), Some(6)),
            "22 = 4 × 5 + 2"
        );
        assert_eq!(
            per_gpu_cell(342.0, true, Some(256.0), Some(2)),
            "≤342 = 256 + 86"
        );
        assert_eq!(per_gpu_cell(15.0, true, None, None), "≤15");
        // A report written before the split: its fractional batch as it was.
        assert_eq!(per_gpu_cell(1024.0 / 3.0, false, None, None), "341.333");
        assert_eq!(samples(14.5), "14.5");
    }
}
