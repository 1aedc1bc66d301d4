//! `scalescope bench bandwidth`: run (or model) copy tests, print nvbandwidth-like matrices.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::output::Pacer;
use super::run_job::Terminal;
use super::{CliError, RemoteArgs, SourceArgs, emit, write_file};
use crate::bench::modeled::parse_pcie;
use crate::bench::plan::{PairScope, parse_test_list};
use crate::bench::{BandwidthOptions, Warning};
use crate::export;
use crate::job::validate::{MAX_ITERS_ARG, MAX_SAMPLES};
use crate::job::{Event, Job};
use crate::model::quantities::{format_bytes, parse_sizes};
use crate::model::{BandwidthResult, Endpoint, Source, Status, TestId, Topology};
use crate::report::Report;

/// `scalescope bench bandwidth` options.
#[derive(Debug, Args)]
#[command(mut_arg("gpus", |a| a.help("GPUs to measure, e.g. 0,1,3 (default: all)")))]
pub struct BandwidthArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
    /// Tests to run, comma-separated ids (default: all; see `--list-tests`).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "all",
        hide_default_value = true
    )]
    pub tests: String,
    /// Buffer sizes: 512M, 4K,1M or a doubling sweep 4K..1G (default 512M).
    #[arg(
        long,
        value_name = "SIZES",
        default_value = "512M",
        hide_default_value = true,
        allow_hyphen_values = true
    )]
    pub sizes: String,
    /// Copies per sample, 1 to 100000.
    #[arg(long, default_value_t = crate::bench::plan::DEFAULT_ITERS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_ITERS_ARG)))]
    pub iters: u32,
    /// Samples per cell, 1 to 10000; the median is reported.
    #[arg(long, default_value_t = crate::bench::plan::DEFAULT_SAMPLES,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SAMPLES)))]
    pub samples: u32,
    /// Write every result as CSV to FILE (rewritten after each finished test).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the run as JSON to FILE (rewritten after each finished test).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Run each test on (untimed) until the GPUs' energy counter has stepped across SECONDS of
    /// it (0.2 to 60), so every test has its energy (measured only).
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, value_parser = super::parse_energy_window)]
    pub energy_window: Option<crate::model::EnergyWindow>,
    /// Model the figures from line rates instead of measuring (for catalog or imported machines).
    #[arg(long)]
    pub modeled: bool,
    /// GPU↔GPU tests on the first pair of each kind of connection (NV18, NODE, SYS, …) instead
    /// of every ordered pair: quicker on a machine of many alike pairs (above 72 GPUs it is the
    /// default unless --gpus names the GPUs).
    #[arg(long)]
    pub pairs_per_link_kind: bool,
    /// PCIe link to assume where the topology has none (modeled only), e.g. gen5x16.
    #[arg(long, value_name = "LINK")]
    pub pcie: Option<String>,
    /// List the test ids and exit.
    #[arg(long)]
    pub list_tests: bool,
    #[command(flatten)]
    pub copy_kernel: super::copy_kernel::CopyKernelArgs,
}

/// A bandwidth run as `--json` writes it.
#[derive(Debug, Serialize)]
pub struct BandwidthRun<'a> {
    pub scalescope_version: &'static str,
    pub backend: String,
    pub source: Source,
    pub options: &'a BandwidthOptions,
    pub topology: &'a Topology,
    pub results: &'a [BandwidthResult],
    pub warnings: &'a [Warning],
    pub cancelled: bool,
}

pub fn run(args: BandwidthArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    if args.list_tests {
        let mut out = String::new();
        for t in TestId::ALL {
            let _ = writeln!(out, "{:<22} {}", t.id(), t.describe());
        }
        return emit(None, out.as_bytes());
    }
    let opts = BandwidthOptions {
        gpus: args.gpus.selection()?,
        tests: parse_test_list(&args.tests)?,
        sizes: parse_sizes(&args.sizes)
            .map_err(|e| CliError::input(anyhow::anyhow!("--sizes: {e}")))?,
        iters: args.iters,
        samples: args.samples,
        pairs: if args.pairs_per_link_kind {
            PairScope::PerLinkKind
        } else {
            PairScope::All
        },
        copy_kernel: args.copy_kernel.options(),
    };
    let pcie = args
        .pcie
        .as_deref()
        .map(parse_pcie)
        .transpose()
        .map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
    args.source.refuse_measuring_elsewhere(args.modeled)?;
    super::energy_window_needs_measuring(args.energy_window, args.modeled)?;
    super::output::check_outputs(
        &[("--csv", args.csv.as_ref()), ("--json", args.json.as_ref())],
        &args.source.files(),
    )?;
    if pcie.is_some() && !args.modeled {
        return Err(CliError::input(anyhow::anyhow!(
            "--pcie only applies with --modeled"
        )));
    }
    if args.modeled && !opts.copy_kernel.is_default() {
        return Err(CliError::input(anyhow::anyhow!(
            "--copy-* tune the measured SM copy kernel: they do not apply with --modeled"
        )));
    }
    let job = Job::Bandwidth {
        target: args.source.target_for(remote)?,
        options: opts.clone(),
        modeled: args.modeled,
        pcie,
        energy_window_s: args.energy_window,
    };
    // Paced (see `Pacer`): the files are rewritten whole, so one write per result is quadratic.
    let mut pacer = Pacer::new();
    let mut checkpoint = |e: &Event, report: &Report, _: &Terminal| match e {
        Event::Bandwidth { .. } => pacer
            .when_due(|| write_outputs(&args, report, &opts, &[]))
            .unwrap_or(Ok(())),
        _ => Ok(()),
    };
    let report = args.source.run_job_then(
        remote,
        &job,
        args.modeled,
        true,
        &mut checkpoint,
        &mut |report| write_outputs(&args, report, &opts, &report.warnings),
    )?;
    write_outputs(&args, &report, &opts, &report.warnings)?;
    for w in crate::bench::warning::after_run(&report.warnings) {
        crate::stderr_line!("warning: {w}");
    }
    let gpus = opts.gpus.of(&report.topology);
    let results = report.bandwidth.as_ref().map_or(&[][..], |b| &b.results);
    let mut out = render(results, report.cancelled, &gpus);
    let n = report.topology.gpus.len();
    // The job's rule (job/stages.rs, `pairs_for`): every pair of every GPU is bounded above 72.
    if opts.gpus.is_empty() && opts.pairs == PairScope::All && PairScope::bounded(n) != opts.pairs {
        let _ = writeln!(
            out,
            "\nGPU↔GPU tests ran on the first pair of each kind of connection: every ordered pair \
             of {n} GPUs is {} cases per test and size. Name GPUs with --gpus to run every pair \
             among them.",
            n * n.saturating_sub(1)
        );
    }
    emit(None, out.as_bytes())
}

fn write_outputs(
    args: &BandwidthArgs,
    report: &Report,
    opts: &BandwidthOptions,
    warnings: &[Warning],
) -> Result<(), CliError> {
    let (backend, source, results) = match &report.bandwidth {
        Some(b) => (b.backend.as_str(), b.source, &b.results[..]),
        None => ("", Source::Measured, &[][..]),
    };
    let topo = &report.topology;
    if let Some(path) = &args.csv {
        let bytes = export::csv::bandwidth(results)?;
        write_file(path, &bytes)?;
    }
    if let Some(path) = &args.json {
        let run = BandwidthRun {
            scalescope_version: env!("CARGO_PKG_VERSION"),
            backend: backend.to_string(),
            source,
            options: opts,
            topology: topo,
            results,
            warnings,
            cancelled: report.cancelled,
        };
        let bytes = export::json::to_json(&run)?;
        write_file(path, &bytes)?;
    }
    Ok(())
}

/// The matrices over `gpus` (rows source, columns destination) and a summary line per test.
pub fn render(results: &[BandwidthResult], cancelled: bool, gpus: &[usize]) -> String {
    let mut out = String::new();
    let tests: Vec<TestId> = {
        let mut seen = Vec::new();
        for r in results {
            if !seen.contains(&r.test) {
                seen.push(r.test);
            }
        }
        seen
    };
    for test in tests {
        let rows: Vec<&BandwidthResult> = results.iter().filter(|r| r.test == test).collect();
        let sizes: BTreeSet<u64> = rows.iter().map(|r| r.bytes).collect();
        let source = rows.first().map_or(Source::Measured, |r| r.source);
        let unit = if test.is_latency() {
            "ns per access"
        } else {
            "GB/s"
        };
        for &bytes in &sizes {
            let cells: Vec<&&BandwidthResult> = rows.iter().filter(|r| r.bytes == bytes).collect();
            let _ = writeln!(
                out,
                "\n{test} — {} ({unit}, {}, {source})",
                // The unit follows in the parentheses; the list of tests says it in the words.
                test.describe().trim_end_matches(" (ns per access)"),
                format_bytes(bytes)
            );
            matrix(&mut out, &cells, gpus);
        }
        let _ = writeln!(out, "{}", summary(test, &rows));
    }
    if cancelled {
        out.push_str("\nRun cancelled: the figures above are what finished.\n");
    }
    out
}

fn value(r: &BandwidthResult) -> String {
    match r.status {
        Status::Ok => {
            let v = if r.test.is_latency() {
                r.latency_ns
            } else {
                r.median_gbps
            };
            v.map_or("—".to_string(), |v| format!("{v:.1}"))
        }
        other => other.to_string(),
    }
}

/// The most GPUs whose GPU × GPU square is printed: wider, a row no longer fits a screen (the
/// documents' bound, `document::build::MATRIX_MAX_GPUS`); `--csv`/`--json` hold every pair.
const TERMINAL_MATRIX_MAX_GPUS: usize = 72;
/// The most per-pair lines (bidirectional splits, reasons) printed under one matrix.
const TERMINAL_MAX_LINES: usize = 16;

fn matrix(out: &mut String, cells: &[&&BandwidthResult], gpus: &[usize]) {
    let mut srcs: Vec<Endpoint> = Vec::new();
    let mut dsts: Vec<Endpoint> = Vec::new();
    let mut seen_src = std::collections::HashSet::new();
    let mut seen_dst = std::collections::HashSet::new();
    let mut by_pair = std::collections::HashMap::with_capacity(cells.len());
    for c in cells {
        if seen_src.insert(c.src) {
            srcs.push(c.src);
        }
        if seen_dst.insert(c.dst) {
            dsts.push(c.dst);
        }
        by_pair.entry((c.src, c.dst)).or_insert(**c);
    }
    // P2P-style tests get the full GPU × GPU square.
    let gpu_square =
        srcs.iter().chain(&dsts).all(|e| e.gpu().is_some()) && cells.iter().any(|c| c.src != c.dst);
    if gpu_square {
        if gpus.len() > TERMINAL_MATRIX_MAX_GPUS {
            let _ = writeln!(
                out,
                "  the {n} × {n} matrix is not printed above {TERMINAL_MATRIX_MAX_GPUS} GPUs: \
                 --csv FILE or --json FILE holds all {} cells (or choose GPUs with --gpus)",
                cells.len(),
                n = gpus.len()
            );
        } else {
            srcs = gpus.iter().map(|&g| Endpoint::Gpu(g)).collect();
            dsts = srcs.clone();
        }
    }
    if !gpu_square || gpus.len() <= TERMINAL_MATRIX_MAX_GPUS {
        srcs.sort();
        dsts.sort();
        let _ = write!(out, "{:>10}", "src\\dst");
        for d in &dsts {
            let _ = write!(out, "{:>10}", d.to_string());
        }
        out.push('\n');
        for s in &srcs {
            let _ = write!(out, "{:>10}", s.to_string());
            for d in &dsts {
                let cell = by_pair
                    .get(&(*s, *d))
                    .map_or_else(|| "—".to_string(), |c| value(c));
                let _ = write!(out, "{cell:>10}");
            }
            out.push('\n');
        }
    }
    let bidir: Vec<&&&BandwidthResult> = cells
        .iter()
        .filter(|c| c.fwd_gbps.is_some() && c.status == Status::Ok)
        .collect();
    for c in bidir.iter().take(TERMINAL_MAX_LINES) {
        let _ = writeln!(
            out,
            "  {}→{}: {:.1} + {}→{}: {:.1} = {:.1} GB/s total",
            c.src,
            c.dst,
            c.fwd_gbps.unwrap_or_default(),
            c.dst,
            c.src,
            c.rev_gbps.unwrap_or_default(),
            c.median_gbps.unwrap_or_default()
        );
    }
    more_lines(out, bidir.len(), "bidirectional split");
    let reasons: Vec<&&&BandwidthResult> = cells
        .iter()
        .filter(|c| c.status != Status::Ok && c.reason.is_some())
        .collect();
    for c in reasons.iter().take(TERMINAL_MAX_LINES) {
        if let Some(reason) = &c.reason {
            let _ = writeln!(out, "  {}→{} {}: {reason}", c.src, c.dst, c.status);
        }
    }
    more_lines(out, reasons.len(), "cell(s) not measured, with the reason");
}

/// "… and N more …" under a list of per-pair lines cut at [`TERMINAL_MAX_LINES`].
fn more_lines(out: &mut String, total: usize, what: &str) {
    if total > TERMINAL_MAX_LINES {
        let _ = writeln!(
            out,
            "  … and {} more {what} (--csv or --json holds them all)",
            total - TERMINAL_MAX_LINES
        );
    }
}

/// One test's line under its table: its figure at one size ([`crate::model::headline`]: 512 MiB,
/// nvbandwidth's default, where it ran there; never a pool of a sweep's sizes), the worst cell
/// and the share of line rate, then every row's data check and what did not run.
fn summary(test: TestId, rows: &[&BandwidthResult]) -> String {
    let ok = rows.iter().filter(|r| r.status == Status::Ok).count();
    let wrong: u64 = rows.iter().filter_map(|r| r.wrong).sum();
    let checked = rows.iter().any(|r| r.wrong.is_some());
    let not_ok = rows.len() - ok;
    let mut s = format!("summary {test}: ");
    match crate::model::headline(rows.iter().copied(), test) {
        Some(h) => {
            let unit = if test.is_latency() { "ns" } else { "GB/s" };
            let worst = if test.is_latency() {
                "slowest"
            } else {
                "least"
            };
            let _ = write!(
                s,
                "at {}: median {:.1} {unit} over {} cell(s)",
                crate::model::quantities::format_bytes(h.bytes),
                h.median,
                h.cells,
            );
            if format!("{:.1}", h.worst) != format!("{:.1}", h.median) {
                let _ = write!(s, " ({worst} {:.1})", h.worst);
            }
            if let Some(e) = h.efficiency {
                let _ = write!(s, ", {:.0}% of line rate", e * 100.0);
            }
        }
        None => s.push_str("no figures"),
    }
    if checked {
        let _ = write!(s, ", {wrong} wrong");
    }
    if not_ok > 0 {
        let _ = write!(s, ", {not_ok} not ok");
    }
    s
}
