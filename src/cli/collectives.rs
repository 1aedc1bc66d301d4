//! `scalescope bench collectives`: NCCL sweeps and scalescope's own all-reduce algorithms,
//! printed like nccl-tests.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::output::Pacer;
use super::run_job::Terminal;
use super::{CliError, RemoteArgs, SourceArgs, emit, write_file};
use crate::bench::collectives::{CollectiveOptions, Placement, parse_algos, parse_ops};
use crate::bench::{Warning, launcher};
use crate::export;
use crate::job::validate::{MAX_ITERS_ARG, MAX_WARMUP};
use crate::job::{Event, Job};
use crate::model::quantities::parse_sizes;
use crate::model::{CollectiveResult, Dtype, Source, Status, Topology};
use crate::report::Report;

/// `scalescope bench collectives` options.
#[derive(Debug, Args)]
pub struct CollectivesArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
    /// Operations: all_reduce, all_gather, reduce_scatter, broadcast, alltoall, sendrecv, or all.
    #[arg(long, value_name = "LIST", default_value = "all_reduce")]
    pub ops: String,
    /// Algorithms: nccl, ring, tree, host (scalescope's own all-reduce over P2P), or all.
    #[arg(long, value_name = "LIST", default_value = "nccl")]
    pub algo: String,
    /// Sizes as nccl-tests counts them: a list or a doubling sweep (default 8..1G).
    #[arg(
        long,
        value_name = "SIZES",
        default_value = "8..1G",
        hide_default_value = true,
        allow_hyphen_values = true
    )]
    pub sizes: String,
    /// Element type: f32, bf16, f16, f64, i32.
    #[arg(long, default_value = "f32")]
    pub dtype: String,
    /// Run in place (output buffer = input buffer) instead of out of place.
    #[arg(long, conflicts_with = "both_placements")]
    pub in_place: bool,
    /// Run both out of place and in place, as nccl-tests prints them.
    #[arg(long)]
    pub both_placements: bool,
    /// Timed iterations per size, 1 to 100000.
    #[arg(long, default_value_t = crate::bench::collectives::DEFAULT_ITERS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_ITERS_ARG)))]
    pub iters: u32,
    /// Warm-up iterations per size, 0 to 100000.
    #[arg(long, default_value_t = crate::bench::collectives::DEFAULT_WARMUP,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_WARMUP)))]
    pub warmup: u32,
    /// Capture the timed NCCL launches in a CUDA graph (cuts launch overhead at small sizes); the own
    /// ring always runs as one graph over every GPU.
    #[arg(long)]
    pub graph: bool,
    /// NCCL library to load (default: SCALESCOPE_NCCL_LIB, the loader path, then python3's
    /// nvidia/nccl/lib).
    #[arg(long, value_name = "PATH")]
    pub nccl_lib: Option<PathBuf>,
    /// Write every result as CSV to FILE (rewritten after each size).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the run as JSON to FILE (rewritten after each size).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run each test on (untimed) until the GPUs' energy counter has stepped across SECONDS of
    /// it (0.2 to 60), so every test has its energy (measured only).
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, value_parser = super::parse_energy_window)]
    pub energy_window: Option<crate::model::EnergyWindow>,
    /// Model the figures from line rates instead of measuring.
    #[arg(long)]
    pub modeled: bool,
}

/// A collectives run as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct CollectivesRun<'a> {
    pub scalescope_version: &'static str,
    pub backend: String,
    pub source: Source,
    pub options: &'a CollectiveOptions,
    pub topology: Option<&'a Topology>,
    pub results: &'a [CollectiveResult],
    pub warnings: &'a [Warning],
}

/// Parses the flags into options.
pub fn options(args: &CollectivesArgs) -> Result<CollectiveOptions, CliError> {
    Ok(CollectiveOptions {
        gpus: args.gpus.selection()?,
        ops: parse_ops(&args.ops)?,
        algos: parse_algos(&args.algo)?,
        sizes: parse_sizes(&args.sizes)
            .map_err(|e| CliError::input(anyhow::anyhow!("--sizes: {e}")))?,
        dtype: Dtype::from_id(&args.dtype).ok_or_else(|| {
            CliError::input(anyhow::anyhow!(
                "--dtype: unknown type {:?} (known: f32, bf16, f16, f64, i32)",
                args.dtype
            ))
        })?,
        placement: if args.both_placements {
            Placement::Both
        } else if args.in_place {
            Placement::InPlace
        } else {
            Placement::OutOfPlace
        },
        iters: args.iters,
        warmup: args.warmup,
        graph: args.graph,
    })
}

pub fn run(args: CollectivesArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    let opts = options(&args)?;
    let launch = launcher::detect(&launcher::process_env())
        .map_err(|e| CliError::input(anyhow::anyhow!("launcher environment: {e}")))?;
    args.source.refuse_measuring_elsewhere(args.modeled)?;
    super::energy_window_needs_measuring(args.energy_window, args.modeled)?;
    super::refuse_unused(
        &[
            ("--graph", args.graph),
            ("--nccl-lib", args.nccl_lib.is_some()),
        ],
        !args.modeled,
        "runs NCCL on the GPUs: it does not apply with --modeled",
    )?;
    super::output::check_outputs(
        &[("--csv", args.csv.as_ref()), ("--json", args.json.as_ref())],
        &args.source.files(),
    )?;
    if let Some(l) = launch {
        if remote.remote.is_some() {
            return Err(CliError::input(anyhow::anyhow!(
                "{} started this process: a multi-process run measures here, not with --remote",
                l.launcher
            )));
        }
        if args.modeled {
            return Err(CliError::input(anyhow::anyhow!(
                "--modeled runs in one process; start it without {}",
                l.launcher
            )));
        }
        let mut write_error = None;
        let results = crate::bench::cuda::collectives::run_multiprocess(
            &l,
            &opts,
            args.nccl_lib.as_deref(),
            &mut |results| {
                if write_error.is_none()
                    && let Err(e) = write_outputs(
                        &args,
                        "NCCL, multi-process",
                        Source::Measured,
                        &opts,
                        None,
                        results,
                        &[],
                    )
                {
                    write_error = Some(e);
                }
            },
        )?;
        if let Some(e) = write_error {
            return Err(e);
        }
        // Only rank 0 gets results back; the other ranks print nothing.
        if results.is_empty() {
            return Ok(());
        }
        return emit(None, render(&results).as_bytes());
    }
    let job = Job::Collectives {
        target: args.source.target_for(remote)?,
        options: opts.clone(),
        modeled: args.modeled,
        nccl_lib: args.nccl_lib.clone(),
        energy_window_s: args.energy_window,
    };
    // Paced (see `Pacer`): the files are rewritten whole, so one write per result is quadratic.
    let mut pacer = Pacer::new();
    let mut checkpoint = |e: &Event, report: &Report, _: &Terminal| match e {
        Event::Collectives { .. } => pacer
            .when_due(|| write_report(&args, &opts, report, &[]))
            .unwrap_or(Ok(())),
        _ => Ok(()),
    };
    let report = args.source.run_job_then(
        remote,
        &job,
        args.modeled,
        true,
        &mut checkpoint,
        &mut |report| write_report(&args, &opts, report, &report.warnings),
    )?;
    write_report(&args, &opts, &report, &report.warnings)?;
    let results = report.collectives.as_ref().map_or(&[][..], |c| &c.results);
    for w in crate::bench::warning::after_run(&report.warnings) {
        crate::stderr_line!("warning: {w}");
    }
    emit(None, render(results).as_bytes())
}

/// [`write_outputs`] of what `report` holds.
fn write_report(
    args: &CollectivesArgs,
    opts: &CollectiveOptions,
    report: &Report,
    warnings: &[Warning],
) -> Result<(), CliError> {
    let (backend, source, results) = match &report.collectives {
        Some(c) => (c.backend.as_str(), c.source, &c.results[..]),
        None => ("", Source::Measured, &[][..]),
    };
    write_outputs(
        args,
        backend,
        source,
        opts,
        Some(&report.topology),
        results,
        warnings,
    )
}

fn write_outputs(
    args: &CollectivesArgs,
    backend: &str,
    source: Source,
    opts: &CollectiveOptions,
    topo: Option<&Topology>,
    results: &[CollectiveResult],
    warnings: &[Warning],
) -> Result<(), CliError> {
    if let Some(path) = &args.csv {
        write_file(path, &export::csv::collectives(results)?)?;
    }
    if let Some(path) = &args.json {
        let run = CollectivesRun {
            scalescope_version: env!("CARGO_PKG_VERSION"),
            backend: backend.to_string(),
            source,
            options: opts,
            topology: topo,
            results,
            warnings,
        };
        write_file(path, &export::json::to_json(&run)?)?;
    }
    Ok(())
}

/// An nccl-tests-like table: one block per (op, algo, placement), one line per size.
pub fn render(results: &[CollectiveResult]) -> String {
    let mut out = String::new();
    let mut keys: Vec<(String, String, bool)> = Vec::new();
    for r in results {
        let k = (r.op.id().to_string(), r.algo.id().to_string(), r.in_place);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (op, algo, in_place) in keys {
        let rows: Vec<&CollectiveResult> = results
            .iter()
            .filter(|r| r.op.id() == op && r.algo.id() == algo && r.in_place == in_place)
            .collect();
        let first = rows[0];
        let _ = writeln!(
            out,
            "\n# {op} · {algo} · {} · GPUs {} · {} · {}{}",
            first.backend_version.as_deref().unwrap_or("—"),
            first
                .gpus
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(","),
            first.dtype,
            if in_place { "in-place" } else { "out-of-place" },
            if first.source == Source::Modeled {
                " · MODELED"
            } else {
                ""
            },
        );
        if let Some(t) = rows.iter().rev().find_map(|r| r.transport.as_deref()) {
            let _ = writeln!(out, "# transport: {t}");
        }
        let _ = writeln!(
            out,
            "#{:>12} {:>12} {:>6} {:>10} {:>9} {:>9} {:>8}  status",
            "size(B)", "count", "type", "time(us)", "algbw", "busbw", "#wrong"
        );
        for r in rows {
            let f = |v: Option<f64>, d: usize| v.map_or("—".to_string(), |v| format!("{v:.d$}"));
            let count = r.op.count_per_rank(r.bytes, r.dtype, r.gpus.len());
            let _ = writeln!(
                out,
                " {:>12} {:>12} {:>6} {:>10} {:>9} {:>9} {:>8}  {}{}",
                r.bytes,
                count,
                r.dtype.id(),
                f(r.time_us, 2),
                f(r.algbw_gbps, 2),
                f(r.busbw_gbps, 2),
                r.wrong.map_or("—".to_string(), |w| w.to_string()),
                r.status,
                match (&r.reason, r.status) {
                    (Some(reason), s) if s != Status::Ok => format!(": {reason}"),
                    _ => String::new(),
                }
            );
        }
    }
    let wrong: u64 = results.iter().filter_map(|r| r.wrong).sum();
    let big: Vec<f64> = results
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.busbw_gbps)
        .collect();
    // A modeled row was never checked: say so instead of "0 wrong".
    let checked = results.iter().any(|r| r.wrong.is_some());
    let verified = if checked {
        format!("{wrong} wrong in total")
    } else if results.iter().all(|r| r.source == Source::Modeled) {
        "modeled: no data was checked".to_string()
    } else {
        "no data was checked".to_string()
    };
    if let Some(max) = big.iter().copied().reduce(f64::max) {
        let _ = writeln!(out, "\n# peak busbw {max:.1} GB/s, {verified}");
    }
    out
}
