//! The ranges every job is checked against before it runs, whoever sent it: the command line
//! (whose flags are parsed to the same ranges), the app, or a client talking to `scalescope
//! agent` (whose requests are JSON nobody parsed as flags). One place, so that the agent cannot
//! run what the command line would refuse. GPU lists, the watch interval, the energy window and
//! prices are not checked here: their types check them when a job is made or read
//! (`crate::model::options`, `crate::scaling::cost::Pricing`).

use super::{Job, Target};
use crate::bench::{CopyKernelOptions, modeled};

/// Copies per sample (`bench bandwidth --iters`) and timed iterations per size (`bench
/// collectives --iters`): 1 to this.
pub const MAX_ITERS_ARG: u32 = 100_000;
/// Samples per cell (`--samples`): 1 to this.
pub const MAX_SAMPLES: u32 = 10_000;
/// Warm-up iterations per size (`--warmup`): 0 to this.
pub const MAX_WARMUP: u32 = 100_000;
/// Buffer sizes in one request: a doubling sweep from 1 B to 2^63 B is 64.
pub const MAX_SIZES: usize = 64;
/// Import files in one request (a machine's captures: `topo -m`, `-q`, `-q -x`, `nvlink -s/-e`,
/// a second reading of each).
pub const MAX_IMPORT_FILES: usize = 64;
/// Workloads in one scaling request (the catalog holds about a dozen).
pub const MAX_WORKLOADS: usize = 256;
/// The largest `--max-gpus`: 2^20 GPUs, beyond any machine built so far.
pub const MAX_GPUS_LIMIT: usize = 1 << 20;
/// Copy-kernel ranges (hidden tuning flags, docs/BENCHMARKS.md).
pub const UNROLL: (u32, u32) = (1, 16);
pub const BLOCKS_PER_SM: (u32, u32) = (1, 32);
pub const GRID: (u32, u32) = (1, 1_000_000);
pub const VARIANT_MAX: u32 = 6;

impl Job {
    /// `Err(one line naming the field)` when a value is outside what the command line accepts.
    pub fn validate(&self) -> Result<(), String> {
        target(self.target())?;
        match self {
            Job::Topology { .. } => Ok(()),
            Job::Bandwidth { options, pcie, .. } => {
                crate::model::validate::distinct("tests", &options.tests, |t| t.id().to_string())?;
                range("iters", options.iters, 1, MAX_ITERS_ARG)?;
                range("samples", options.samples, 1, MAX_SAMPLES)?;
                sizes(&options.sizes)?;
                copy_kernel(&options.copy_kernel)?;
                match pcie {
                    Some((generation, width)) if !modeled::is_pcie_link(*generation, *width) => {
                        Err(format!(
                            "pcie: gen{generation}x{width} is not a PCIe link (expected e.g. gen4x16, gen5x16)"
                        ))
                    }
                    _ => Ok(()),
                }
            }
            Job::Collectives { options, .. } => {
                crate::model::validate::distinct("ops", &options.ops, |o| o.id().to_string())?;
                crate::model::validate::distinct("algos", &options.algos, |a| a.id().to_string())?;
                range("iters", options.iters, 1, MAX_ITERS_ARG)?;
                range("warmup", options.warmup, 0, MAX_WARMUP)?;
                sizes(&options.sizes)
            }
            Job::Scaling {
                workloads,
                max_gpus,
                ..
            } => {
                if !(1..=MAX_GPUS_LIMIT).contains(max_gpus) {
                    return Err(format!(
                        "max_gpus: {max_gpus} is out of range (1 to {MAX_GPUS_LIMIT})"
                    ));
                }
                if workloads.len() > MAX_WORKLOADS {
                    return Err(format!(
                        "workloads: {} given, at most {MAX_WORKLOADS}",
                        workloads.len()
                    ));
                }
                crate::model::validate::distinct("workloads", workloads, |w| w.name.clone())?;
                for w in workloads {
                    crate::scaling::workload::validate(w).map_err(|(field, why)| {
                        format!(
                            "workload {}: {field}: {why}",
                            crate::model::validate::quoted(&w.name)
                        )
                    })?;
                }
                Ok(())
            }
            Job::Check { options, .. } => {
                soak(options.soak.as_ref())?;
                options
                    .thresholds
                    .validate()
                    .map_err(|e| format!("thresholds: {e}"))
            }
            Job::Suite { options, .. } => soak(options.soak.as_ref()),
        }
    }
}

/// A soak as the command line would have taken it: a duration from a minute to a week (a
/// replay has none), a pace from 0 to 1000.
fn soak(s: Option<&crate::model::SoakOptions>) -> Result<(), String> {
    let Some(s) = s else { return Ok(()) };
    if s.replay.is_none() && !(60.0..=7.0 * 86400.0).contains(&s.duration_s) {
        return Err(format!(
            "soak: duration {} s: a soak lasts from 60 s to 7 days",
            crate::model::validate::number(s.duration_s)
        ));
    }
    if let Some(v) = s.replay_speed
        && !crate::model::soak::replay_speed_ok(v)
    {
        return Err(format!(
            "soak: replay speed {}: 0 (at once) or 0.01 to 1000",
            crate::model::validate::number(v)
        ));
    }
    Ok(())
}

fn target(t: &Target) -> Result<(), String> {
    match t {
        Target::Import { paths } if paths.is_empty() => Err("import: no files given".into()),
        Target::Import { paths } if paths.len() > MAX_IMPORT_FILES => Err(format!(
            "import: {} files given, at most {MAX_IMPORT_FILES}",
            paths.len()
        )),
        Target::Catalog { name } if name.trim().is_empty() => Err(
            "catalog: an empty name; run `scalescope --catalog` to list the machines it holds"
                .into(),
        ),
        _ => Ok(()),
    }
}

fn range(name: &str, v: u32, lo: u32, hi: u32) -> Result<(), String> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(format!("{name}: {v} is out of range ({lo} to {hi})"))
    }
}

fn sizes(list: &[u64]) -> Result<(), String> {
    if list.len() > MAX_SIZES {
        return Err(format!("sizes: {} given, at most {MAX_SIZES}", list.len()));
    }
    if list.contains(&0) {
        return Err("sizes: a size must be greater than zero".into());
    }
    if let Some(b) = list
        .iter()
        .find(|&&b| b > crate::model::quantities::MAX_SIZE)
    {
        return Err(format!(
            "sizes: {b} bytes is larger than any GPU's memory (at most 16 TiB)"
        ));
    }
    Ok(())
}

fn copy_kernel(k: &CopyKernelOptions) -> Result<(), String> {
    range("copy_kernel.unroll", k.unroll, UNROLL.0, UNROLL.1)?;
    if let Some(b) = k.blocks_per_sm {
        range(
            "copy_kernel.blocks_per_sm",
            b,
            BLOCKS_PER_SM.0,
            BLOCKS_PER_SM.1,
        )?;
    }
    if let Some(g) = k.grid {
        range("copy_kernel.grid", g, GRID.0, GRID.1)?;
    }
    range(
        "copy_kernel.bulk_blocks_per_sm",
        k.bulk_blocks_per_sm,
        BLOCKS_PER_SM.0,
        BLOCKS_PER_SM.1,
    )?;
    range("copy_kernel.variant", k.variant, 0, VARIANT_MAX)?;
    match k.sm_split {
        Some(f) if !(f > 0.0 && f < 1.0) => Err(format!(
            "copy_kernel.sm_split: {f} is not a fraction strictly between 0 and 1"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BandwidthOptions;
    use crate::model::GpuSelection;
    use crate::scaling::{table::Mode, workload};

    fn bandwidth(options: BandwidthOptions) -> Job {
        Job::Bandwidth {
            target: Target::Live,
            options,
            modeled: true,
            pcie: None,
            energy_window_s: None,
        }
    }

    fn scaling(w: workload::Workload) -> Job {
        Job::Scaling {
            target: Target::Live,
            gpus: GpuSelection::all(),
            workloads: vec![w],
            modes: vec![Mode::Weak],
            max_gpus: 8,
            measure: None,
            pricing: None,
        }
    }

    #[test]
    fn what_the_command_line_builds_passes() {
        let options = BandwidthOptions {
            gpus: GpuSelection::new(vec![0, 1]).unwrap(),
            tests: vec![],
            sizes: vec![1 << 20],
            iters: 16,
            samples: 5,
            pairs: Default::default(),
            copy_kernel: Default::default(),
        };
        assert_eq!(bandwidth(options).validate(), Ok(()));
        for w in workload::catalog() {
            assert_eq!(scaling(w).validate(), Ok(()));
        }
    }

    #[test]
    fn values_the_command_line_refuses_are_refused_naming_the_field() {
        let ok = BandwidthOptions {
            gpus: GpuSelection::all(),
            tests: vec![],
            sizes: vec![],
            iters: 16,
            samples: 5,
            pairs: Default::default(),
            copy_kernel: Default::default(),
        };
        let cases: Vec<(BandwidthOptions, &str)> = vec![
            (
                BandwidthOptions {
                    iters: 0,
                    ..ok.clone()
                },
                "iters: 0",
            ),
            (
                BandwidthOptions {
                    samples: 4_000_000_000,
                    ..ok.clone()
                },
                "samples: 4000000000",
            ),
            (
                BandwidthOptions {
                    sizes: vec![0],
                    ..ok.clone()
                },
                "sizes:",
            ),
            (
                BandwidthOptions {
                    copy_kernel: CopyKernelOptions {
                        sm_split: Some(f64::NAN),
                        ..Default::default()
                    },
                    ..ok.clone()
                },
                "copy_kernel.sm_split",
            ),
        ];
        for (options, want) in cases {
            let e = bandwidth(options).validate().unwrap_err();
            assert!(e.starts_with(want), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let pcie = Job::Bandwidth {
            target: Target::Live,
            options: ok,
            modeled: true,
            pcie: Some((5, 3)),
            energy_window_s: None,
        };
        assert!(pcie.validate().unwrap_err().starts_with("pcie: gen5x3"));
    }

    #[test]
    fn workloads_are_checked_as_a_workload_file_is() {
        let base = workload::catalog().remove(0);
        let mut huge = base.clone();
        huge.per_gpu_batch = 1e300;
        let mut negative = base.clone();
        negative.params = -1.0;
        let mut idle = base.clone();
        idle.utilization = -0.5;
        let mut free = base;
        free.flops_per_sample = 0.0;
        for (w, field) in [
            (huge, "per_gpu_batch"),
            (negative, "params"),
            (idle, "utilization"),
            (free, "flops_per_sample"),
        ] {
            let e = scaling(w).validate().unwrap_err();
            assert!(e.contains(field), "{field}: {e}");
        }
    }
}
