//! `bench bandwidth`'s copy-kernel tuning flags: the SM copy tests' experiments of
//! docs/BENCHMARKS.md, swept by `scripts/sm-copy-tuning.sh`. Hidden from `--help`: the defaults
//! are the tuned ones.

use clap::{Args, ValueEnum};

use crate::bench::plan::ChaseLoad;
use crate::bench::{CopyKernel, CopyKernelOptions};
use crate::job::validate::{BLOCKS_PER_SM, GRID, UNROLL, VARIANT_MAX};

/// The flags, flattened into `bench bandwidth`.
#[derive(Debug, Clone, Args)]
pub struct CopyKernelArgs {
    /// SM copy tests: the kernel (grid-stride, or Hopper's bulk copy on sm_90+).
    #[arg(long, value_enum, default_value_t = KernelArg::GridStride, hide = true)]
    pub copy_kernel: KernelArg,
    /// SM copy tests: loads in flight per thread, 1 to 16.
    #[arg(long, value_name = "N", default_value_t = CopyKernelOptions::default().unroll,
          value_parser = clap::value_parser!(u32).range(i64::from(UNROLL.0)..=i64::from(UNROLL.1)), hide = true)]
    pub copy_unroll: u32,
    /// SM copy tests: at most N resident blocks per SM, 1 to 32 (default: as many as fit).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(i64::from(BLOCKS_PER_SM.0)..=i64::from(BLOCKS_PER_SM.1)),
          hide = true)]
    pub copy_blocks_per_sm: Option<u32>,
    /// SM copy tests: a grid of exactly N blocks (default: SMs × blocks per SM).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(i64::from(GRID.0)..=i64::from(GRID.1)),
          hide = true)]
    pub copy_grid: Option<u32>,
    /// SM copy tests with --copy-kernel bulk: blocks per SM, 1 to 32.
    #[arg(long, value_name = "N", default_value_t = CopyKernelOptions::default().bulk_blocks_per_sm,
          value_parser = clap::value_parser!(u32).range(i64::from(BLOCKS_PER_SM.0)..=i64::from(BLOCKS_PER_SM.1)), hide = true)]
    pub copy_bulk_blocks_per_sm: u32,
    /// SM copy tests: load/store variant 0 to 6 (0 plain, 1 .cs, the default, 2 .cg, 3/4 non-coherent loads
    /// with 256/128-byte L2 fetches, 5 write-through stores, 6 coherent loads).
    #[arg(long, value_name = "N", default_value_t = CopyKernelOptions::default().variant,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(VARIANT_MAX)), hide = true)]
    pub copy_variant: u32,
    /// SM copy tests: each block copies one contiguous range instead of striding.
    #[arg(long, hide = true)]
    pub copy_contiguous: bool,
    /// GPU↔GPU SM copy tests: the fraction (strictly between 0 and 1) the other GPU's SMs copy
    /// at the same time.
    #[arg(long, value_name = "FRACTION", value_parser = parse_split, hide = true)]
    pub copy_sm_split: Option<f64>,
    /// SM copy tests: one kernel launch per copy instead of a sample's copies as passes of one
    /// launch.
    #[arg(long, hide = true)]
    pub copy_launch_per_copy: bool,
    /// Latency tests: how the pointer chase loads (plain, as nvbandwidth; volatile; l2-only).
    #[arg(long, value_enum, default_value_t = ChaseArg::Plain, hide = true)]
    pub chase_load: ChaseArg,
}

/// `--chase-load` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChaseArg {
    Plain,
    Volatile,
    L2Only,
}

/// `--copy-kernel` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    GridStride,
    Bulk,
}

impl CopyKernelArgs {
    /// The options the flags ask for.
    pub fn options(&self) -> CopyKernelOptions {
        CopyKernelOptions {
            kernel: match self.copy_kernel {
                KernelArg::GridStride => CopyKernel::GridStride,
                KernelArg::Bulk => CopyKernel::Bulk,
            },
            unroll: self.copy_unroll,
            blocks_per_sm: self.copy_blocks_per_sm,
            grid: self.copy_grid,
            bulk_blocks_per_sm: self.copy_bulk_blocks_per_sm,
            variant: self.copy_variant,
            contiguous: self.copy_contiguous,
            sm_split: self.copy_sm_split,
            launch_per_copy: self.copy_launch_per_copy,
            chase_load: match self.chase_load {
                ChaseArg::Plain => ChaseLoad::Plain,
                ChaseArg::Volatile => ChaseLoad::Volatile,
                ChaseArg::L2Only => ChaseLoad::L2Only,
            },
        }
    }
}

fn parse_split(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f < 1.0 => Ok(f),
        _ => Err(format!(
            "{} is not a fraction strictly between 0 and 1 (e.g. 0.5)",
            crate::model::validate::quoted(s)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Probe {
        #[command(flatten)]
        copy: CopyKernelArgs,
    }

    #[test]
    fn no_flags_are_the_defaults() {
        let p = Probe::try_parse_from(["x"]).unwrap();
        assert_eq!(p.copy.options(), CopyKernelOptions::default());
    }

    #[test]
    fn flags_set_the_options() {
        let p = Probe::try_parse_from([
            "x",
            "--copy-kernel",
            "bulk",
            "--copy-unroll",
            "4",
            "--copy-blocks-per-sm",
            "2",
            "--copy-sm-split",
            "0.35",
            "--copy-contiguous",
            "--copy-launch-per-copy",
            "--chase-load",
            "volatile",
        ])
        .unwrap();
        let o = p.copy.options();
        assert_eq!(o.kernel, CopyKernel::Bulk);
        assert_eq!((o.unroll, o.blocks_per_sm), (4, Some(2)));
        assert_eq!(o.sm_split, Some(0.35));
        assert!(o.contiguous);
        assert_eq!(
            o.to_string(),
            "bulk kernel, 2 bulk blocks per SM, 4 loads in flight per thread, at most 2 blocks \
             per SM, one contiguous range per block, 35 % copied by the other GPU's SMs, one \
             kernel launch per copy, volatile chase loads"
        );
        assert!(Probe::try_parse_from(["x", "--copy-sm-split", "1"]).is_err());
        assert!(Probe::try_parse_from(["x", "--copy-unroll", "17"]).is_err());
    }
}
