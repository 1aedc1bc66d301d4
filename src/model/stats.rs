//! Sample statistics: the one median (and quantile) every figure of scalescope is reported with.

use serde::{Deserialize, Serialize};

/// Median, extremes and spread of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Coefficient of variation: sample standard deviation ÷ mean; `None` for fewer than two
    /// samples or a zero mean.
    pub cv: Option<f64>,
}

impl Stats {
    /// Statistics of the finite values in `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Stats> {
        let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = median_of_sorted(&v);
        let mean = v.iter().sum::<f64>() / n as f64;
        let cv = (n >= 2 && mean != 0.0).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            var.sqrt() / mean.abs()
        });
        Some(Stats {
            median,
            min: v[0],
            max: v[n - 1],
            mean,
            cv,
        })
    }
}

/// The median of the finite values in `samples` (the mean of the middle two for an even count);
/// `None` when there are none.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_of_sorted(&v))
}

/// The median of sorted, non-empty samples.
fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        // Halved before adding: the same figure (halving is exact), but two medians of 1e308
        // give 1e308, not `inf`.
        v[n / 2 - 1] / 2.0 + v[n / 2] / 2.0
    }
}

/// The `q` quantile of sorted samples, linear between neighbours; NaN when there are none.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let k = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, hi) = (k.floor() as usize, k.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (k - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Stats::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Stats::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(median(&[1e308, 1e308]), Some(1e308), "no overflow to inf");
    }

    #[test]
    fn cv_is_sample_stddev_over_mean() {
        let s = Stats::of(&[9.0, 10.0, 11.0]).unwrap();
        assert!((s.cv.unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(Stats::of(&[5.0]).unwrap().cv, None);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 1.0]), Some(1.0));
    }

    #[test]
    fn quantiles_interpolate() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&s, 0.5), 3.0);
        assert_eq!(quantile(&s, 0.0), 1.0);
        assert_eq!(quantile(&s, 1.0), 5.0);
        assert!((quantile(&s, 0.625) - 3.5).abs() < 1e-12);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn non_finite_samples_are_ignored_and_empty_is_none() {
        assert_eq!(Stats::of(&[]), None);
        assert_eq!(Stats::of(&[f64::NAN]), None);
        assert_eq!(Stats::of(&[f64::NAN, 2.0]).unwrap().median, 2.0);
    }
}
