//! `scalescope check`: is this box delivering what it should? One line per GPU, pair and test
//! with the verdict, the figure against what it should be, and below PASS the likely cause and
//! what to do; then the verdict. Exit 0 when nothing failed, 3 when a check failed (a node
//! health check for schedulers), 2 for bad input, 1 when the machine cannot be read.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;

use super::drive::drive;
use super::{CliError, emit, write_file};
use crate::bench::plan::parse_gpu_list;
use crate::export;
use crate::health::run::CheckOptions;
use crate::health::{HealthReport, Thresholds, Verdict};
use crate::job::{Event, Job};
use crate::model::{Source, Topology};

/// `scalescope check` options.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// GPUs to check, e.g. 0,1 (default: all).
    #[arg(long, value_name = "LIST", default_value = "all")]
    pub gpus: String,
    /// Shorter load tests: 256 MiB, 4 copies × 3 samples (default: 512 MiB, 16 × 5).
    #[arg(long)]
    pub quick: bool,
    /// Write the whole check (every check, the readings, the load tests) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one row per check as CSV to FILE (columns in docs/CSV.md).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Check a machine from captures instead of this one: `nvidia-smi -q -x`, `nvidia-smi -q`,
    /// `nvidia-smi nvlink -s` / `-e` and `nvidia-smi topo -m` output ('-' = stdin); repeat to
    /// merge. A capture kind given twice is read as before and after (error counters).
    #[arg(long, value_name = "FILE", conflicts_with = "catalog")]
    pub import: Vec<String>,
    /// Check a catalog machine: a name (`scalescope --catalog`) or a catalog .toml file, which
    /// may state the links as they run (`[[state]]`). Checked modeled.
    #[arg(long, value_name = "NAME|FILE.toml")]
    pub catalog: Option<String>,
    /// Verdict thresholds from a TOML file: pass, warn (fractions of expected),
    /// busy_util_percent, [efficiency] by test id.
    #[arg(long, value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// Exit 3 on any WARN or UNKNOWN too, not only on FAIL.
    #[arg(long)]
    pub strict: bool,
    /// Print every check's line; without it, modeled PASS lines (hundreds on a catalog machine
    /// of 8 GPUs) are counted per check instead.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// Runs `scalescope check`.
pub fn run(args: CheckArgs, remote: &super::RemoteArgs) -> Result<(), CliError> {
    let thresholds = match &args.thresholds {
        Some(p) => Thresholds::load(p)?,
        None => Thresholds::default(),
    };
    let gpus = parse_gpu_list(&args.gpus)?;
    let opts = CheckOptions {
        gpus: gpus.clone(),
        quick: args.quick,
        thresholds,
        soak: None,
    };
    let source = super::SourceArgs {
        import: args.import.clone(),
        catalog: args.catalog.clone(),
    };
    let live = !source.describes_another_machine();
    let job = Job::Check {
        target: source.target_for(remote)?,
        options: opts,
    };
    let mut runner = remote.runner()?;
    let full = drive(
        &mut runner,
        &job,
        &AtomicBool::new(false),
        false,
        &mut |e, _, term| {
            if let Event::Started { topology, .. } = e
                && live
            {
                term.note(&format!(
                    "scalescope check on {} ({}){}",
                    topology.source.label(),
                    crate::report::compare::gpus(if gpus.is_empty() {
                        topology.gpus.len()
                    } else {
                        gpus.len()
                    }),
                    if args.quick { ", quick" } else { "" }
                ));
            }
            Ok(())
        },
    )
    .map_err(|s| {
        s.or_job(|e| {
            if e.no_driver && live && remote.remote.is_none() {
                CliError::env(anyhow::anyhow!(
                    "{}",
                    e.message.replace(
                        crate::topology::NO_DRIVER_ADVICE,
                        "to check a machine you do not have: scalescope check --import nvidia-smi-q.xml [--import topo-m.txt] or --catalog NAME|FILE.toml"
                    )
                ))
            } else {
                e.into()
            }
        })
    })?;
    for w in &full.warnings {
        eprintln!("warning: {w}");
    }
    let topo = full.topology;
    let Some(report) = full.health else {
        return Err(CliError::env(anyhow::anyhow!(
            "the check produced no result"
        )));
    };
    if let Some(p) = &args.json {
        write_file(p, &export::json::to_json(&report)?)?;
    }
    if let Some(p) = &args.csv {
        write_file(p, &export::csv::health(&report.checks)?)?;
    }
    let c = &report.counts;
    let failed = report.failed() || (args.strict && (c.warn > 0 || c.unknown > 0));
    let code = if failed { super::EXIT_CHECK_FAILED } else { 0 };
    emit(None, render(&topo, &report, code, args.verbose).as_bytes())?;
    if failed {
        return Err(CliError::check_failed(anyhow::anyhow!(
            "check failed: {} fail, {} warn, {} unknown{}",
            c.fail,
            c.warn,
            c.unknown,
            if args.strict && !report.failed() {
                " (--strict)"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// The terminal report: one line per check (modeled PASS lines counted per check unless
/// `verbose`: they only restate line rates), notes, then the verdict.
pub fn render(topo: &Topology, r: &HealthReport, exit: i32, verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scalescope check — {} ({})",
        r.machine,
        crate::report::compare::gpus(topo.gpus.len())
    );
    let folded = |c: &crate::health::Check| {
        !verbose && c.verdict == Verdict::Pass && c.source == Source::Modeled
    };
    // Per check id, in the order the checks come: how many modeled PASS lines were folded.
    let mut counted: Vec<(String, usize)> = Vec::new();
    for c in r.checks.iter().filter(|&c| folded(c)) {
        let id = c.check.to_string();
        match counted.iter_mut().find(|(x, _)| *x == id) {
            Some(e) => e.1 += 1,
            None => counted.push((id, 1)),
        }
    }
    let shown: Vec<&crate::health::Check> = r.checks.iter().filter(|&c| !folded(c)).collect();
    let sw = shown
        .iter()
        .map(|c| c.subject.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let cw = shown
        .iter()
        .map(|c| c.check.id().len())
        .max()
        .unwrap_or(5)
        .max(5);
    let vw = shown
        .iter()
        .map(|c| c.verdict_text().len())
        .max()
        .unwrap_or(4);
    for c in &shown {
        let subject = format!("{:<sw$}", c.subject);
        let _ = write!(
            out,
            "{:<vw$}  {subject}  {:<cw$}  {}",
            c.verdict_text(),
            c.check,
            c.detail
        );
        if c.verdict != Verdict::Pass {
            if let Some(cause) = &c.cause {
                let _ = write!(out, " — likely: {cause}");
            }
            if let Some(fix) = &c.fix {
                let _ = write!(out, " — do: {fix}");
            }
        }
        out.push('\n');
    }
    if !counted.is_empty() {
        let total: usize = counted.iter().map(|(_, n)| n).sum();
        let each: Vec<String> = counted.iter().map(|(id, n)| format!("{id} {n}")).collect();
        let _ = writeln!(
            out,
            "PASS (modeled)  {total} more checks: {} (--verbose lists them)",
            each.join(", ")
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    if r.source == Source::Modeled || r.checks.iter().any(|c| c.source == Source::Modeled) {
        let _ = writeln!(
            out,
            "note: (modeled) lines are derived from the links as read or stated, not measured: a modeled PASS is not a PASS of a real machine"
        );
    }
    let _ = writeln!(out, "verdict: {} (exit {exit})", r.summary_line());
    out
}
