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
use crate::model::Refused;
use crate::model::validate::Bounds;

/// The default power of a node's parts other than its GPUs, per GPU it holds, W: NVIDIA DGX
/// H100/H200 draw "~10.2 kW max" (DGX H100/H200 user guide, hardware overview) with eight
/// 700 W GPUs, leaving 4,600 W for the CPUs, NVSwitches, NICs, fans, drives and power
/// conversion — 575 W per GPU. A maximum, so the default errs high.
pub const DEFAULT_OVERHEAD_W_PER_GPU: f64 = 575.0;

/// Hours in a year (365.25 days).
pub const HOURS_PER_YEAR: f64 = 8_766.0;

/// How the user pays for GPUs. Made only by [`Pricing::new`] (reading one runs it too), so
/// that every figure is inside its [`PriceFigure::bounds`] and the mix is one way of paying.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
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

/// One figure of a pricing. Its name in messages is its field's; the command line names the
/// flag that states it instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PriceFigure {
    PerGpuHour,
    CapexPerNode,
    Years,
    PerKwh,
    Pue,
    NodeOverheadW,
}

impl PriceFigure {
    /// Every figure, in the order they are checked.
    pub const ALL: [PriceFigure; 6] = [
        Self::CapexPerNode,
        Self::Years,
        Self::PerKwh,
        Self::PerGpuHour,
        Self::Pue,
        Self::NodeOverheadW,
    ];

    /// The field that holds it in a pricing (`report.json`, jobs).
    pub fn field(self) -> &'static str {
        match self {
            Self::PerGpuHour => "per_gpu_hour",
            Self::CapexPerNode => "capex_per_node",
            Self::Years => "years",
            Self::PerKwh => "per_kwh",
            Self::Pue => "pue",
            Self::NodeOverheadW => "node_overhead_w",
        }
    }

    /// What a stated figure may be: a positive, finite amount no larger than anyone would mean;
    /// a PUE from 1 to 5 and a node's overhead from 0 (GPUs only); years from a tenth (about a
    /// month: the price is divided by them, and 1e-300 years made every cost infinite).
    pub const fn bounds(self) -> Bounds {
        match self {
            Self::PerGpuHour => Bounds::above(0.0, 10_000.0, "per GPU-hour"),
            Self::CapexPerNode => Bounds::above(0.0, 1e9, "per node"),
            Self::Years => Bounds::closed(0.1, 50.0, "years"),
            Self::PerKwh => Bounds::above(0.0, 100.0, "per kWh"),
            Self::Pue => Bounds::closed(1.0, 5.0, ""),
            Self::NodeOverheadW => Bounds::closed(0.0, 1e6, "W"),
        }
    }
}

/// The figures a user states, any of them missing: what [`Pricing::new`] makes a pricing of.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PriceFigures {
    pub per_gpu_hour: Option<f64>,
    pub capex_per_node: Option<f64>,
    pub years: Option<f64>,
    pub per_kwh: Option<f64>,
    pub pue: Option<f64>,
    pub node_overhead_w: Option<f64>,
}

impl PriceFigures {
    /// The figure stated for `f`.
    pub fn get(&self, f: PriceFigure) -> Option<f64> {
        match f {
            PriceFigure::PerGpuHour => self.per_gpu_hour,
            PriceFigure::CapexPerNode => self.capex_per_node,
            PriceFigure::Years => self.years,
            PriceFigure::PerKwh => self.per_kwh,
            PriceFigure::Pue => self.pue,
            PriceFigure::NodeOverheadW => self.node_overhead_w,
        }
    }
}

/// Why stated figures make no pricing.
#[derive(Clone, Debug, PartialEq)]
pub enum PriceError {
    /// A figure outside its [`PriceFigure::bounds`].
    OutOfRange { figure: PriceFigure, value: f64 },
    /// A rental price with ownership figures.
    Mixed { ownership: Vec<PriceFigure> },
    /// A figure of ownership only (PUE, overhead) with a rental price, which includes power.
    OwnershipOnly(PriceFigure),
    /// A figure of ownership only without the ownership prices.
    NeedsOwnership(PriceFigure),
    /// Ownership missing these figures.
    Missing(Vec<PriceFigure>),
}

const OWNERSHIP: [PriceFigure; 3] = [
    PriceFigure::CapexPerNode,
    PriceFigure::Years,
    PriceFigure::PerKwh,
];

impl PriceError {
    /// The message with each figure called by `name` (its field, or the flag stating it).
    pub fn message(&self, name: impl Fn(PriceFigure) -> &'static str) -> String {
        let list = |fs: &[PriceFigure], sep: &str| {
            fs.iter().map(|&f| name(f)).collect::<Vec<_>>().join(sep)
        };
        match self {
            Self::OutOfRange { figure, value } => format!(
                "{} {}: expected {}",
                name(*figure),
                crate::model::validate::number(*value),
                figure.bounds()
            ),
            Self::Mixed { ownership } => format!(
                "{} (rental) does not go with {} (ownership): give one way of paying",
                name(PriceFigure::PerGpuHour),
                list(ownership, ", ")
            ),
            Self::OwnershipOnly(f) => format!(
                "{} applies to ownership ({} …): a rental price includes power",
                name(*f),
                name(PriceFigure::CapexPerNode)
            ),
            Self::NeedsOwnership(f) => format!(
                "{} needs ownership prices: {}, {} and {}",
                name(*f),
                name(PriceFigure::CapexPerNode),
                name(PriceFigure::Years),
                name(PriceFigure::PerKwh)
            ),
            Self::Missing(missing) => format!(
                "ownership costs need {} too (and {}, default 1.0)",
                list(missing, " and "),
                name(PriceFigure::Pue)
            ),
        }
    }
}

/// The message with each figure called by its field.
impl std::fmt::Display for PriceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message(PriceFigure::field))
    }
}

impl std::error::Error for PriceError {}

impl Pricing {
    /// The pricing the figures state: `None` without any; an error for a figure out of its
    /// bounds or a mix the formulas do not take (rental with ownership figures, ownership
    /// missing one, PUE or overhead without ownership).
    pub fn new(figures: PriceFigures) -> Result<Option<Pricing>, PriceError> {
        for figure in PriceFigure::ALL {
            if let Some(value) = figures.get(figure)
                && !figure.bounds().contains(value)
            {
                return Err(PriceError::OutOfRange { figure, value });
            }
        }
        let given: Vec<PriceFigure> = OWNERSHIP
            .into_iter()
            .filter(|&f| figures.get(f).is_some())
            .collect();
        let extra = [PriceFigure::Pue, PriceFigure::NodeOverheadW]
            .into_iter()
            .find(|&f| figures.get(f).is_some());
        match (figures.per_gpu_hour, given.is_empty(), extra) {
            (Some(_), false, _) => Err(PriceError::Mixed { ownership: given }),
            (Some(_), true, Some(f)) => Err(PriceError::OwnershipOnly(f)),
            (Some(per_gpu_hour), true, None) => Ok(Some(Pricing::Rental { per_gpu_hour })),
            (None, true, Some(f)) => Err(PriceError::NeedsOwnership(f)),
            (None, true, None) => Ok(None),
            (None, false, _) => match (figures.capex_per_node, figures.years, figures.per_kwh) {
                (Some(capex_per_node), Some(years), Some(per_kwh)) => {
                    Ok(Some(Pricing::Ownership {
                        capex_per_node,
                        years,
                        per_kwh,
                        pue: figures.pue.unwrap_or(1.0),
                        node_overhead_w: figures.node_overhead_w,
                    }))
                }
                _ => Err(PriceError::Missing(
                    OWNERSHIP
                        .into_iter()
                        .filter(|&f| figures.get(f).is_none())
                        .collect(),
                )),
            },
        }
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

/// The wire form of a [`Pricing`], read before [`Pricing::new`] checks it.
#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum PricingAsRead {
    Rental {
        per_gpu_hour: f64,
    },
    Ownership {
        capex_per_node: f64,
        years: f64,
        per_kwh: f64,
        pue: f64,
        #[serde(default)]
        node_overhead_w: Option<f64>,
    },
}

/// Reads a pricing and checks it as [`Pricing::new`] does: a job from elsewhere (the agent's
/// protocol) is held to what the command line takes.
impl<'de> Deserialize<'de> for Pricing {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let figures = match PricingAsRead::deserialize(d)? {
            PricingAsRead::Rental { per_gpu_hour } => PriceFigures {
                per_gpu_hour: Some(per_gpu_hour),
                ..Default::default()
            },
            PricingAsRead::Ownership {
                capex_per_node,
                years,
                per_kwh,
                pue,
                node_overhead_w,
            } => PriceFigures {
                per_gpu_hour: None,
                capex_per_node: Some(capex_per_node),
                years: Some(years),
                per_kwh: Some(per_kwh),
                pue: Some(pue),
                node_overhead_w,
            },
        };
        let refused = |why: String| Refused::new("pricing", why).into_de();
        Pricing::new(figures)
            .map_err(|e| refused(e.to_string()))?
            .ok_or_else(|| refused("no price stated".into()))
    }
}

/// A row's cost per million samples at `pricing` in nodes of `gpus_per_node`: `None` without a
/// throughput (or, for ownership, a power per GPU).
pub fn of_row(pricing: &Pricing, row: &ScalingPoint, gpus_per_node: usize) -> Option<f64> {
    pricing.per_million_samples(row.n_gpus, gpus_per_node, row.throughput, row.watts_per_gpu)
}

/// Fills `cost_per_million_samples` on every row ([`of_row`]): the cost a run's rows carry,
/// which the purchase ranking reads where the run's own prices stand.
pub fn apply(rows: &mut [ScalingPoint], pricing: &Pricing, gpus_per_node: usize) {
    for r in rows {
        r.cost_per_million_samples = of_row(pricing, r, gpus_per_node);
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
        let owned = PriceFigures {
            capex_per_node: Some(300_000.0),
            years: Some(4.0),
            per_kwh: Some(0.12),
            pue: Some(1.3),
            ..Default::default()
        };
        let default = Pricing::new(owned).unwrap().unwrap();
        let per_hour = default.per_hour(9, 8, Some(700.0)).unwrap();
        let want = 600_000.0 / (4.0 * 8_766.0) + (9.0 * 0.7 + 9.2) * 1.3 * 0.12;
        assert!((per_hour - want).abs() < 1e-9, "{per_hour} vs {want}");
        // Stated only with ownership, and in bounds (0: the GPUs alone).
        let overhead = |w: f64| PriceFigures {
            node_overhead_w: Some(w),
            ..owned
        };
        let rental = PriceFigures {
            per_gpu_hour: Some(2.5),
            node_overhead_w: Some(100.0),
            ..Default::default()
        };
        assert_eq!(
            Pricing::new(rental),
            Err(PriceError::OwnershipOnly(PriceFigure::NodeOverheadW))
        );
        assert!(Pricing::new(overhead(-1.0)).is_err());
        assert!(Pricing::new(overhead(f64::NAN)).is_err());
        let zero = Pricing::new(overhead(0.0)).unwrap().unwrap();
        let gpus_only = zero.per_hour(9, 8, Some(700.0)).unwrap();
        assert!((gpus_only - (600_000.0 / (4.0 * 8_766.0) + 9.0 * 0.7 * 1.3 * 0.12)).abs() < 1e-9);
    }

    fn rental(per_gpu_hour: f64) -> PriceFigures {
        PriceFigures {
            per_gpu_hour: Some(per_gpu_hour),
            ..Default::default()
        }
    }

    #[test]
    fn stated_figures_are_checked_and_mixes_refused() {
        for bad in [0.0, -1.0, f64::NAN, 1e308, f64::INFINITY] {
            let e = Pricing::new(rental(bad)).unwrap_err().to_string();
            assert!(e.starts_with("per_gpu_hour "), "{e}");
        }
        assert_eq!(
            Pricing::new(rental(-1.0)).unwrap_err().to_string(),
            "per_gpu_hour -1: expected above 0 and at most 10000 per GPU-hour"
        );
        let pue = PriceFigures {
            pue: Some(0.9),
            ..Default::default()
        };
        assert!(Pricing::new(pue).is_err());
        assert_eq!(Pricing::new(PriceFigures::default()), Ok(None));
        assert_eq!(
            Pricing::new(rental(2.5)),
            Ok(Some(Pricing::Rental { per_gpu_hour: 2.5 }))
        );
        let mixed = Pricing::new(PriceFigures {
            capex_per_node: Some(1e5),
            ..rental(2.5)
        })
        .unwrap_err()
        .to_string();
        assert!(mixed.contains("does not go with capex_per_node"), "{mixed}");
        let part = PriceFigures {
            capex_per_node: Some(1e5),
            years: Some(4.0),
            ..Default::default()
        };
        let e = Pricing::new(part).unwrap_err().to_string();
        assert!(e.contains("per_kwh"), "{e}");
        assert!(matches!(
            Pricing::new(PriceFigures { per_kwh: Some(0.1), ..part }),
            Ok(Some(Pricing::Ownership { pue, .. })) if pue == 1.0
        ));
    }

    #[test]
    fn reading_a_pricing_runs_the_same_check() {
        let p = Pricing::new(rental(2.5)).unwrap().unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Pricing>(&json).unwrap(), p);
        let (read, refused) = crate::model::options::refusal_in(|| {
            serde_json::from_str::<Pricing>(r#"{"kind":"rental","per_gpu_hour":-1}"#)
        });
        assert!(read.is_err());
        let refused = refused.expect("a refusal");
        assert_eq!(
            refused.to_string(),
            format!("pricing: {}", Pricing::new(rental(-1.0)).unwrap_err())
        );
    }
}
