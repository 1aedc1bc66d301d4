//! What a million samples cost, from prices the user states: renting GPUs by the hour, or owning
//! nodes (their price spread over the years they serve, and the energy they draw). Without
//! prices there is no cost — never a made-up one.
//!
//! Per hour of `n` GPUs:
//! - rental: `n × price_per_gpu_hour`;
//! - ownership: `nodes × capex_per_node ÷ (years × 8,766 h)` plus
//!   `(n × watts_per_gpu + nodes × node_overhead_w) × pue ÷ 1,000 × power_price_per_kwh`, with
//!   `nodes = ⌈n ÷ gpus_per_node⌉`: the GPUs' power (measured, or modeled where the row is) and
//!   the rest of each node (CPUs, NICs, switches, fans: `--node-overhead-w`, by default
//!   [`DEFAULT_OVERHEAD_W_PER_GPU`] per GPU the node holds), times the data center's PUE.
//!
//! Cost per million samples is the cost per hour ÷ (samples/s × 3,600) × 10⁶.

use serde::{Deserialize, Serialize};

use super::ScalingPoint;

/// The default power of a node's parts other than its GPUs, per GPU it holds, W: NVIDIA DGX
/// H100/H200 draw "~10.2 kW max" (DGX H100/H200 user guide, hardware overview) with eight
/// 700 W GPUs, leaving 4,600 W for the CPUs, NVSwitches, NICs, fans, drives and power
/// conversion — 575 W per GPU. A maximum, so the default errs high.
pub const DEFAULT_OVERHEAD_W_PER_GPU: f64 = 575.0;

/// Hours in a year (365.25 days).
pub const HOURS_PER_YEAR: f64 = 8_766.0;

/// How the user pays for GPUs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Pricing {
    /// Rented by the GPU-hour (power included, as clouds bill it).
    Rental { per_gpu_hour: f64 },
    /// Bought: each node's price spread over `years`, plus the GPUs' energy at `per_kwh` times
    /// the data center's PUE.
    Ownership {
        capex_per_node: f64,
        years: f64,
        per_kwh: f64,
        pue: f64,
        /// The node's power besides its GPUs, W; `None`: [`DEFAULT_OVERHEAD_W_PER_GPU`] per
        /// GPU in the node.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node_overhead_w: Option<f64>,
    },
}

/// The bounds a stated figure must keep: (flag, lowest allowed (exclusive unless `inclusive`),
/// highest allowed, unit).
const BOUNDS: [(&str, f64, f64, &str); 6] = [
    ("--price-per-gpu-hour", 0.0, 10_000.0, "per GPU-hour"),
    ("--capex-per-node", 0.0, 1e9, "per node"),
    ("--years", 0.0, 50.0, "years"),
    ("--power-price-per-kwh", 0.0, 100.0, "per kWh"),
    ("--pue", 1.0, 5.0, ""),
    ("--node-overhead-w", 0.0, 1e6, "W"),
];

/// Checks a stated figure against its flag's bounds: a positive, finite number no larger than
/// anyone would mean (a PUE from 1 to 5). The error names the flag and the value.
pub fn check_figure(flag: &str, v: f64) -> Result<f64, String> {
    let &(_, lo, hi, unit) = BOUNDS
        .iter()
        .find(|b| b.0 == flag)
        .ok_or_else(|| format!("{flag}: not a price"))?;
    // A PUE may be 1 and a node's overhead 0 (GPUs only); prices must be above nothing.
    let inclusive = flag == "--pue" || flag == "--node-overhead-w";
    let ok = v.is_finite() && if inclusive { v >= lo } else { v > lo } && v <= hi;
    if ok {
        Ok(v)
    } else if flag == "--pue" {
        Err(format!("{flag} {v}: expected a ratio from 1 to 5"))
    } else if flag == "--node-overhead-w" {
        Err(format!("{flag} {v}: expected watts from 0 to {hi}"))
    } else {
        Err(format!(
            "{flag} {v}: expected a positive amount {unit} up to {hi}"
        ))
    }
}

impl Pricing {
    /// The pricing the flags state: `None` without any; an error for a bad figure or a mix the
    /// formulas do not take (rental with ownership figures, ownership missing one).
    pub fn from_flags(
        per_gpu_hour: Option<f64>,
        capex_per_node: Option<f64>,
        years: Option<f64>,
        per_kwh: Option<f64>,
        pue: Option<f64>,
    ) -> Result<Option<Pricing>, String> {
        let own = [
            ("--capex-per-node", capex_per_node),
            ("--years", years),
            ("--power-price-per-kwh", per_kwh),
        ];
        for (flag, v) in own.iter().chain(&[("--price-per-gpu-hour", per_gpu_hour)]) {
            if let Some(v) = v {
                check_figure(flag, *v)?;
            }
        }
        if let Some(p) = pue {
            check_figure("--pue", p)?;
        }
        let given: Vec<&str> = own
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(f, _)| *f)
            .collect();
        match (per_gpu_hour, given.is_empty()) {
            (Some(_), false) => Err(format!(
                "--price-per-gpu-hour (rental) does not go with {} (ownership): give one way of paying",
                given.join(", ")
            )),
            (Some(p), true) if pue.is_none() => Ok(Some(Pricing::Rental { per_gpu_hour: p })),
            (Some(_), true) => Err(
                "--pue applies to ownership (--capex-per-node …): a rental price includes power"
                    .into(),
            ),
            (None, true) if pue.is_some() => Err(
                "--pue needs ownership prices: --capex-per-node, --years and --power-price-per-kwh"
                    .into(),
            ),
            (None, true) => Ok(None),
            (None, false) => match (capex_per_node, years, per_kwh) {
                (Some(capex_per_node), Some(years), Some(per_kwh)) => {
                    Ok(Some(Pricing::Ownership {
                        capex_per_node,
                        years,
                        per_kwh,
                        pue: pue.unwrap_or(1.0),
                        node_overhead_w: None,
                    }))
                }
                _ => {
                    let missing: Vec<&str> = own
                        .iter()
                        .filter(|(_, v)| v.is_none())
                        .map(|(f, _)| *f)
                        .collect();
                    Err(format!(
                        "ownership costs need {} too (and --pue, default 1.0)",
                        missing.join(" and ")
                    ))
                }
            },
        }
    }

    /// The same pricing with the node's power besides its GPUs stated (`--node-overhead-w`):
    /// ownership only — a rental price includes power.
    pub fn with_node_overhead(mut self, watts: Option<f64>) -> Result<Pricing, String> {
        let Some(w) = watts else { return Ok(self) };
        check_figure("--node-overhead-w", w)?;
        match &mut self {
            Pricing::Ownership {
                node_overhead_w, ..
            } => {
                *node_overhead_w = Some(w);
                Ok(self)
            }
            Pricing::Rental { .. } => Err(
                "--node-overhead-w applies to ownership (--capex-per-node …): a rental price includes power"
                    .into(),
            ),
        }
    }

    /// Checks every figure against its flag's bounds ([`check_figure`]): a job from elsewhere
    /// (the agent's protocol) is held to what the command line takes.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            Pricing::Rental { per_gpu_hour } => {
                check_figure("--price-per-gpu-hour", per_gpu_hour)?;
            }
            Pricing::Ownership {
                capex_per_node,
                years,
                per_kwh,
                pue,
                node_overhead_w,
            } => {
                check_figure("--capex-per-node", capex_per_node)?;
                check_figure("--years", years)?;
                check_figure("--power-price-per-kwh", per_kwh)?;
                check_figure("--pue", pue)?;
                if let Some(w) = node_overhead_w {
                    check_figure("--node-overhead-w", w)?;
                }
            }
        }
        Ok(())
    }

    /// What `n` GPUs cost per hour, drawing `watts_per_gpu` (ownership needs it), in nodes of
    /// `gpus_per_node`.
    pub fn per_hour(
        &self,
        n: usize,
        gpus_per_node: usize,
        watts_per_gpu: Option<f64>,
    ) -> Option<f64> {
        match *self {
            Pricing::Rental { per_gpu_hour } => Some(n as f64 * per_gpu_hour),
            Pricing::Ownership {
                capex_per_node,
                years,
                per_kwh,
                pue,
                node_overhead_w,
            } => {
                let watts = watts_per_gpu.filter(|w| w.is_finite() && *w > 0.0)?;
                let per_node = gpus_per_node.max(1);
                let nodes = n.div_ceil(per_node) as f64;
                let overhead =
                    node_overhead_w.unwrap_or(DEFAULT_OVERHEAD_W_PER_GPU * per_node as f64);
                let capex = nodes * capex_per_node / (years * HOURS_PER_YEAR);
                let energy = (n as f64 * watts + nodes * overhead) * pue / 1e3 * per_kwh;
                Some(capex + energy)
            }
        }
    }

    /// The cost of a million samples at `samples_per_s` on `n` GPUs.
    pub fn per_million_samples(
        &self,
        n: usize,
        gpus_per_node: usize,
        samples_per_s: Option<f64>,
        watts_per_gpu: Option<f64>,
    ) -> Option<f64> {
        let rate = samples_per_s.filter(|s| s.is_finite() && *s > 0.0)?;
        let per_hour = self.per_hour(n, gpus_per_node, watts_per_gpu)?;
        let cost = per_hour / (rate * 3_600.0) * 1e6;
        cost.is_finite().then_some(cost)
    }

    /// One line saying how costs were figured, for notes and documents.
    pub fn describe(&self) -> String {
        match *self {
            Pricing::Rental { per_gpu_hour } => {
                format!("rental at {per_gpu_hour} per GPU-hour (power included)")
            }
            Pricing::Ownership {
                capex_per_node,
                years,
                per_kwh,
                pue,
                node_overhead_w,
            } => format!(
                "ownership: {capex_per_node} per node over {years} years, energy at {per_kwh} per kWh × PUE {pue} (the GPUs' and {} besides them per node)",
                match node_overhead_w {
                    Some(w) => format!("{w:.0} W"),
                    None => format!("{DEFAULT_OVERHEAD_W_PER_GPU:.0} W per GPU"),
                }
            ),
        }
    }
}

/// Fills `cost_per_million_samples` on every row that has a throughput (and, for ownership, a
/// power per GPU); clears it on the others.
pub fn apply(rows: &mut [ScalingPoint], pricing: &Pricing, gpus_per_node: usize) {
    for r in rows {
        r.cost_per_million_samples =
            pricing.per_million_samples(r.n_gpus, gpus_per_node, r.throughput, r.watts_per_gpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rental_cost_per_million_samples_by_hand() {
        // 8 GPUs at 2.50 per GPU-hour = 20 per hour; 1,000 samples/s = 3.6 M samples per hour:
        // 20 ÷ 3.6 = 5.5556 per million.
        let p = Pricing::Rental { per_gpu_hour: 2.5 };
        let c = p.per_million_samples(8, 8, Some(1_000.0), None).unwrap();
        assert!((c - 20.0 / 3.6).abs() < 1e-9, "{c}");
        assert_eq!(p.per_million_samples(8, 8, None, None), None);
        assert_eq!(p.per_million_samples(8, 8, Some(0.0), None), None);
    }

    #[test]
    fn ownership_cost_per_million_samples_by_hand() {
        // 9 GPUs in nodes of 8: 2 nodes × 300,000 over 4 years = 600,000 ÷ 35,064 h = 17.1116
        // per hour; energy (9 × 700 W + 2 nodes × 2,000 W) × 1.3 = 13.39 kW × 0.12 = 1.6068
        // per hour. At 2,000 samples/s (7.2 M per hour): 18.7184 ÷ 7.2 = 2.5998 per million.
        let p = Pricing::Ownership {
            capex_per_node: 300_000.0,
            years: 4.0,
            per_kwh: 0.12,
            pue: 1.3,
            node_overhead_w: Some(2_000.0),
        };
        let per_hour = p.per_hour(9, 8, Some(700.0)).unwrap();
        let want = 600_000.0 / (4.0 * 8_766.0) + (9.0 * 0.7 + 2.0 * 2.0) * 1.3 * 0.12;
        assert!((per_hour - 18.7184).abs() < 1e-4, "{per_hour}");
        assert!((per_hour - want).abs() < 1e-9, "{per_hour} vs {want}");
        let c = p
            .per_million_samples(9, 8, Some(2_000.0), Some(700.0))
            .unwrap();
        assert!((c - want / 7.2).abs() < 1e-9, "{c}");
        // No power measured: no ownership cost (rental needs none).
        assert_eq!(p.per_million_samples(9, 8, Some(2_000.0), None), None);
        // Unstated, the overhead is 575 W per GPU the node holds: 2 nodes × 8 × 575 = 9,200 W.
        let default = Pricing::from_flags(None, Some(300_000.0), Some(4.0), Some(0.12), Some(1.3))
            .unwrap()
            .unwrap();
        let per_hour = default.per_hour(9, 8, Some(700.0)).unwrap();
        let want = 600_000.0 / (4.0 * 8_766.0) + (9.0 * 0.7 + 9.2) * 1.3 * 0.12;
        assert!((per_hour - want).abs() < 1e-9, "{per_hour} vs {want}");
        // Stated only with ownership, and in bounds (0: the GPUs alone).
        let rental = Pricing::Rental { per_gpu_hour: 2.5 };
        assert!(rental.with_node_overhead(Some(100.0)).is_err());
        assert!(default.with_node_overhead(Some(-1.0)).is_err());
        assert!(default.with_node_overhead(Some(f64::NAN)).is_err());
        let zero = default.with_node_overhead(Some(0.0)).unwrap();
        let gpus_only = zero.per_hour(9, 8, Some(700.0)).unwrap();
        assert!((gpus_only - (600_000.0 / (4.0 * 8_766.0) + 9.0 * 0.7 * 1.3 * 0.12)).abs() < 1e-9);
    }

    #[test]
    fn stated_figures_are_checked_and_mixes_refused() {
        for bad in [0.0, -1.0, f64::NAN, 1e308, f64::INFINITY] {
            let e = Pricing::from_flags(Some(bad), None, None, None, None).unwrap_err();
            assert!(e.starts_with("--price-per-gpu-hour "), "{e}");
        }
        assert!(Pricing::from_flags(None, None, None, None, Some(0.9)).is_err());
        assert_eq!(Pricing::from_flags(None, None, None, None, None), Ok(None));
        assert_eq!(
            Pricing::from_flags(Some(2.5), None, None, None, None),
            Ok(Some(Pricing::Rental { per_gpu_hour: 2.5 }))
        );
        let mixed = Pricing::from_flags(Some(2.5), Some(1e5), None, None, None).unwrap_err();
        assert!(
            mixed.contains("does not go with --capex-per-node"),
            "{mixed}"
        );
        let part = Pricing::from_flags(None, Some(1e5), Some(4.0), None, None).unwrap_err();
        assert!(part.contains("--power-price-per-kwh"), "{part}");
        assert!(matches!(
            Pricing::from_flags(None, Some(1e5), Some(4.0), Some(0.1), None),
            Ok(Some(Pricing::Ownership { pue, .. })) if pue == 1.0
        ));
    }
}
