//! The price flags of `bench scaling` and `--bench`: what the user pays, so that scaling rows
//! carry a cost per million samples (`crate::scaling::cost`).

use clap::Args;

use super::CliError;
use crate::scaling::cost::Pricing;

/// Prices for cost per million samples (none given: energy only, no cost).
#[derive(Clone, Debug, Default, Args)]
pub struct PriceArgs {
    /// Rental: what one GPU costs per hour (power included), e.g. 2.5.
    #[arg(long, value_name = "PRICE", allow_negative_numbers = true)]
    pub price_per_gpu_hour: Option<f64>,
    /// Ownership: what one node costs to buy (with --years and --power-price-per-kwh).
    #[arg(long, value_name = "PRICE", allow_negative_numbers = true)]
    pub capex_per_node: Option<f64>,
    /// Ownership: years the node's price is spread over.
    #[arg(long, value_name = "YEARS", allow_negative_numbers = true)]
    pub years: Option<f64>,
    /// Ownership: what a kWh costs; the GPUs' measured power is billed at it.
    #[arg(long, value_name = "PRICE", allow_negative_numbers = true)]
    pub power_price_per_kwh: Option<f64>,
    /// Ownership: the data center's power usage effectiveness, 1 to 5 (default 1.0: GPUs only).
    #[arg(long, value_name = "RATIO", allow_negative_numbers = true)]
    pub pue: Option<f64>,
    /// Ownership: each node's power besides its GPUs (CPUs, NICs, switches, fans), W
    /// (default 575 W per GPU in the node, from DGX H100's 10.2 kW maximum; 0: GPUs only).
    #[arg(long, value_name = "WATTS", allow_negative_numbers = true)]
    pub node_overhead_w: Option<f64>,
}

impl PriceArgs {
    /// The pricing stated, `None` when no price was given.
    pub fn pricing(&self) -> Result<Option<Pricing>, CliError> {
        Pricing::from_flags(
            self.price_per_gpu_hour,
            self.capex_per_node,
            self.years,
            self.power_price_per_kwh,
            self.pue,
        )
        .and_then(|p| with_overhead(p, self.node_overhead_w))
        .map_err(|e| CliError::input(anyhow::anyhow!(e)))
    }
}

/// `pricing` with `--node-overhead-w` applied; the flag without ownership prices is an error.
pub(crate) fn with_overhead(
    pricing: Option<Pricing>,
    watts: Option<f64>,
) -> Result<Option<Pricing>, String> {
    match (pricing, watts) {
        (Some(p), w) => p.with_node_overhead(w).map(Some),
        (None, Some(_)) => Err(
            "--node-overhead-w needs ownership prices: --capex-per-node, --years and --power-price-per-kwh"
                .into(),
        ),
        (None, None) => Ok(None),
    }
}
