//! The price flags of `bench scaling`, `--bench` and `compare`: what the user pays, so that
//! scaling rows and the purchase ranking carry a cost per million samples
//! (`crate::scaling::cost`). Declared once here; `compare` takes one value per machine.

use clap::Args;

use super::CliError;
use crate::scaling::cost::{PriceFigure, PriceFigures, Pricing};

/// One number of a price flag's list, with what is wrong said plainly: an empty entry (a comma
/// with nothing beside it), a word, or a number too large to hold (`1e400`, read as infinity).
/// Ranges are checked where the prices are built ([`PriceFigure`]).
fn price_value(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("an empty entry: a comma with nothing beside it".into());
    }
    let v: f64 = t.parse().map_err(|_| format!("'{t}' is not a number"))?;
    if v.is_infinite() && !t.to_ascii_lowercase().contains("inf") {
        return Err(format!("{t} is too large to be a price"));
    }
    Ok(v)
}

/// Prices for cost per million samples (none given: energy only, no cost). Each flag takes one
/// value, or with `compare` one per machine (comma-separated).
#[derive(Clone, Debug, Default, Args)]
pub struct PriceArgs {
    /// Rental: what one GPU costs per hour (power included), e.g. 2.5.
    #[arg(
        long,
        value_name = "PRICE",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub price_per_gpu_hour: Vec<f64>,
    /// Ownership: what one node costs to buy (with --years and --power-price-per-kwh).
    #[arg(
        long,
        value_name = "PRICE",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub capex_per_node: Vec<f64>,
    /// Ownership: years the node's price is spread over.
    #[arg(
        long,
        value_name = "YEARS",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub years: Vec<f64>,
    /// Ownership: what a kWh costs; the GPUs' measured power is billed at it.
    #[arg(
        long,
        value_name = "PRICE",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub power_price_per_kwh: Vec<f64>,
    /// Ownership: the data center's power usage effectiveness, 1 to 5 (default 1.0: GPUs only).
    #[arg(
        long,
        value_name = "RATIO",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub pue: Vec<f64>,
    /// Ownership: each node's power besides its GPUs (CPUs, NICs, switches, fans), W
    /// (default 575 W per GPU in the node, from DGX H100's 10.2 kW maximum; 0: GPUs only).
    #[arg(
        long,
        value_name = "WATTS",
        value_delimiter = ',',
        allow_negative_numbers = true,
        value_parser = price_value
    )]
    pub node_overhead_w: Vec<f64>,
}

/// The flag that states `figure`.
pub fn flag(figure: PriceFigure) -> &'static str {
    match figure {
        PriceFigure::PerGpuHour => "--price-per-gpu-hour",
        PriceFigure::CapexPerNode => "--capex-per-node",
        PriceFigure::Years => "--years",
        PriceFigure::PerKwh => "--power-price-per-kwh",
        PriceFigure::Pue => "--pue",
        PriceFigure::NodeOverheadW => "--node-overhead-w",
    }
}

impl PriceArgs {
    fn list(&self, figure: PriceFigure) -> &[f64] {
        match figure {
            PriceFigure::PerGpuHour => &self.price_per_gpu_hour,
            PriceFigure::CapexPerNode => &self.capex_per_node,
            PriceFigure::Years => &self.years,
            PriceFigure::PerKwh => &self.power_price_per_kwh,
            PriceFigure::Pue => &self.pue,
            PriceFigure::NodeOverheadW => &self.node_overhead_w,
        }
    }

    /// The pricing stated for one machine, `None` when no price was given.
    pub fn pricing(&self) -> Result<Option<Pricing>, CliError> {
        for figure in PriceFigure::ALL {
            let n = self.list(figure).len();
            if n > 1 {
                return Err(CliError::input(anyhow::anyhow!(
                    "{}: {n} values for one machine: give one",
                    flag(figure)
                )));
            }
        }
        Ok(self.per_machine(1)?.remove(0))
    }

    /// Each of `machines` machines' pricing (`None` where no price was given): every flag
    /// gives one value for all, or one per machine in order.
    pub fn per_machine(&self, machines: usize) -> Result<Vec<Option<Pricing>>, CliError> {
        for figure in PriceFigure::ALL {
            let n = self.list(figure).len();
            if n > 1 && n != machines {
                return Err(CliError::input(anyhow::anyhow!(
                    "{}: {n} prices for {machines} machines: give one for all, or one per machine in order",
                    flag(figure)
                )));
            }
        }
        let at = |figure: PriceFigure, i: usize| {
            let list = self.list(figure);
            list.get(i).or(list.first()).copied()
        };
        (0..machines)
            .map(|i| {
                Pricing::new(PriceFigures {
                    per_gpu_hour: at(PriceFigure::PerGpuHour, i),
                    capex_per_node: at(PriceFigure::CapexPerNode, i),
                    years: at(PriceFigure::Years, i),
                    per_kwh: at(PriceFigure::PerKwh, i),
                    pue: at(PriceFigure::Pue, i),
                    node_overhead_w: at(PriceFigure::NodeOverheadW, i),
                })
                .map_err(|e| CliError::input(anyhow::anyhow!(e.message(flag))))
            })
            .collect()
    }
}
