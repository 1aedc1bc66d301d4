//! `scalescope fleet report`: the per-node reports judged together (`fleet::read_and_judge`), its files
//! written atomically into `--out`, a line per finding and a verdict line on the terminal.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use super::{CliError, output};
use crate::fleet::judge::FleetOutcome;
use crate::health::{Thresholds, Verdict};
use crate::model::validate::{for_terminal, one_line};

/// `scalescope fleet report` options.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Per-node reports: folders holding them (DIR/*.json, DIR/*/report.json,
    /// DIR/nodes/*/report.json), or report.json / `check --json` files.
    #[arg(value_name = "DIR|FILE", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where fleet.csv, fleet.json, fleet.html, fleet.png and fleet.pdf go (created if missing).
    #[arg(long, value_name = "DIR", default_value = "fleet")]
    pub out: PathBuf,
    /// Thresholds TOML; its `[fleet]` table sets the outlier rule (mad_k, warn, fail) and what
    /// a consistency difference is (consistency = "fail" | "warn").
    #[arg(long, value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
}

/// Runs `scalescope fleet report`: exit 3 when a node fails.
pub fn run(args: ReportArgs) -> Result<(), CliError> {
    let thresholds = match &args.thresholds {
        Some(p) => Thresholds::load(p)?,
        None => Thresholds::default(),
    };
    output::prepare_out_dir(&args.out)?;
    output::remove_stale_temps(&args.out);
    let outcome = crate::fleet::read_and_judge(&args.inputs, &thresholds)?;
    // What rendered is written even when a page could not be: fleet.json is never lost to
    // fleet.png.
    let mut files = Vec::new();
    let mut failed = None;
    for (name, bytes) in crate::fleet::files::all(&outcome) {
        match bytes {
            Ok(b) => files.push((args.out.join(name), b)),
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    for (p, _) in &files {
        output::refuse_links_below(&args.out, p)?;
    }
    let staged: Vec<(&std::path::Path, &[u8])> = files
        .iter()
        .map(|(p, b)| (p.as_path(), b.as_slice()))
        .collect();
    output::write_all_atomic(&staged).map_err(|(p, e)| output::write_error(p, e))?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let failed = outcome.verdict == Verdict::Fail;
    let code = if failed { super::EXIT_CHECK_FAILED } else { 0 };
    super::emit(None, render(&outcome, &args.out, code).as_bytes())?;
    if failed {
        return Err(CliError::check_failed(anyhow::anyhow!(
            "fleet report: {} of {} nodes fail; drain {}",
            outcome.counts.fail,
            outcome.nodes.len(),
            one_line(&outcome.drain.join(", "), 300)
        )));
    }
    Ok(())
}

/// One line per finding (node, verdict, rule, the finding), the notes and a verdict line.
pub fn render(o: &FleetOutcome, out: &std::path::Path, exit: i32) -> String {
    let mut s = String::new();
    let width = o
        .nodes
        .iter()
        .filter(|n| !n.findings.is_empty())
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(0);
    for n in &o.nodes {
        for f in &n.findings {
            let name = one_line(&n.name, 80);
            let _ = writeln!(
                s,
                "{name:<width$}  {:<4}  {:<11}  {}",
                f.verdict.word(),
                f.kind.word(),
                one_line(&f.detail, 200)
            );
        }
    }
    for n in &o.nodes {
        if let Some(g) = n.suspect_gpu {
            let outliers = n
                .findings
                .iter()
                .filter(|f| f.kind == crate::fleet::finding::FindingKind::Outlier)
                .count();
            let _ = writeln!(
                s,
                "{:<width$}  suspect GPU {g}: every one of its {outliers} outliers involves it",
                one_line(&n.name, 80)
            );
        }
    }
    if !o.between.is_empty() {
        let line = crate::fleet::between::summary_line(&o.between);
        let _ = writeln!(s, "between nodes: {}", one_line(&line, 300));
    }
    for note in &o.notes {
        let _ = writeln!(s, "note: {}", one_line(note, 200));
    }
    let c = &o.counts;
    let _ = writeln!(
        s,
        "fleet report  fleet.csv, fleet.json, fleet.html, fleet.png, fleet.pdf in {}",
        for_terminal(&out.display().to_string())
    );
    if !o.drain.is_empty() {
        let _ = writeln!(s, "drain: {}", one_line(&o.drain.join(" "), 300));
    }
    let _ = writeln!(
        s,
        "verdict: {} — {} {}{}: {} pass, {} warn, {} fail, {} unknown (exit {exit})",
        o.verdict_text(),
        o.nodes.len(),
        if o.nodes.len() == 1 { "node" } else { "nodes" },
        o.modeled_share(),
        c.pass,
        c.warn,
        c.fail,
        c.unknown
    );
    s
}
