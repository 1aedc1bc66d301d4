//! `scalescope compare`: key figures of two or more machines side by side, and the purchase
//! ranking — which machine gives the most training per second, per joule and per unit of money
//! for a workload at chosen GPU counts ([`crate::report::ranking`]).

use std::path::PathBuf;

use clap::Args;

use super::{CliError, emit, load_reports};
use crate::report::Report;
use crate::scaling::Mode;

/// `scalescope compare` options. The price flags take one value per machine: their help says so.
#[derive(Debug, Args)]
#[command(
    mut_arg("price_per_gpu_hour", |a| a.value_name("PRICES").help(
        "Rental price per GPU-hour: one for every machine, or one per machine in order \
         (reports, then catalog machines), e.g. 2.5,3.2")),
    mut_arg("capex_per_node", |a| a.value_name("PRICES").help(
        "Ownership: each node's price (one for all, or one per machine)")),
    mut_arg("years", |a| a.help(
        "Ownership: years each node's price is spread over (one for all, or one per machine)")),
    mut_arg("power_price_per_kwh", |a| a.value_name("PRICES").help(
        "Ownership: what a kWh costs (one for all, or one per machine)")),
    mut_arg("pue", |a| a.value_name("RATIOS").help(
        "Ownership: the data center's PUE, 1 to 5 (one for all, or one per machine)")),
    mut_arg("node_overhead_w", |a| a.help(
        "Ownership: each node's power besides its GPUs, W (one for all, or one per machine; \
         default 575 W per GPU in the node)")),
)]
pub struct CompareArgs {
    /// Reports (report.json), or a reference tool's output each (nvbandwidth's text or -j
    /// JSON, nccl-tests' text or -J JSON: told apart by content; '-' = stdin); with --catalog
    /// and --import, two or more machines in all. The first is the reference.
    #[arg(value_name = "REPORT.json|OUTPUT")]
    pub reports: Vec<PathBuf>,
    /// Add one machine made of these files (repeatable: every --import is the same machine):
    /// nvbandwidth and nccl-tests outputs of one node, with its nvidia-smi captures if any.
    #[arg(long, value_name = "FILE")]
    pub import: Vec<String>,
    /// Add a catalog machine, modeled (repeatable; `scalescope --catalog` lists them).
    #[arg(long = "catalog", value_name = "NAME")]
    pub catalogs: Vec<String>,
    /// Print CSV of the key figures instead of the tables.
    #[arg(long)]
    pub csv: bool,
    /// Also write the purchase ranking as CSV to FILE (docs/CSV.md, "compare --ranking-csv").
    #[arg(long, value_name = "FILE")]
    pub ranking_csv: Option<PathBuf>,
    /// Workload compared and ranked (default: the first all machines have).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Scaling mode the ranking reads.
    #[arg(long, value_enum, default_value_t = RankMode::Weak)]
    pub mode: RankMode,
    /// GPU counts to rank at, e.g. 8,64,512 (default: the largest count inside every box, 8,
    /// 64 and 512 where a machine has a row, and each machine's own box size where another
    /// machine has a row there too).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub gpus: Vec<usize>,
    /// A training run of this many samples: the ranking adds each machine's time and cost
    /// for it, e.g. 1.2e9.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub samples: Option<f64>,
    #[command(flatten)]
    pub price: super::price::PriceArgs,
}

/// `--mode` of `compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RankMode {
    Weak,
    Strong,
}

/// A catalog machine modeled in-process: its topology, bandwidth, collectives and scaling
/// rows, as `--bench --modeled --catalog NAME --suite topology,bandwidth,collectives,scaling`
/// would write them (so that its P2P, H2D and all-reduce rows have figures, as the same
/// machine's `--bench --modeled` report has).
fn modeled_report(name: &str) -> Result<Report, CliError> {
    use crate::job::{self, Job, Stage};
    crate::topology::catalog::load(name)
        .map_err(|e| CliError::input(anyhow::anyhow!("--catalog {name}: {e}")))?;
    let job = Job::modeled_catalog(
        name,
        vec![
            Stage::Topology,
            Stage::Bandwidth,
            Stage::Collectives,
            Stage::Scaling,
        ],
    );
    Ok(job::run(
        &job,
        &std::sync::atomic::AtomicBool::new(false),
        &mut |_| {},
    )?)
}

/// A positional machine: a report, or a reference tool's output (a machine of its own).
fn load_machine(path: &std::path::Path) -> Result<Report, CliError> {
    let name = path.to_string_lossy().to_string();
    if name == "-" {
        // Standard input: a report, or what `--import` reads; nothing at all said as such.
        let bytes = crate::input::read_stdin(crate::report::MAX_REPORT_BYTES)
            .map_err(|e| CliError::input(anyhow::anyhow!("<stdin>: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        if text.trim().is_empty() {
            return Err(CliError::input(anyhow::anyhow!(
                "<stdin>: empty input: expected a scalescope report, nvidia-smi captures, or \
                 nvbandwidth or nccl-tests output"
            )));
        }
        if text.contains(crate::report::KIND) {
            return crate::report::parse(&text)
                .map_err(|e| CliError::input(anyhow::anyhow!("<stdin>: {e}")));
        }
        let imported = crate::report::reference_tools::import_bytes(vec![(name, bytes)])?;
        return Ok(imported.report());
    }
    if crate::report::reference_tools::sniff(&name)?.is_some() {
        return Ok(crate::report::reference_tools::import(&[name])?.report());
    }
    Ok(load_reports(std::slice::from_ref(&path.to_path_buf()))?.remove(0))
}

/// The machines compared, in order: the positional files, the `--import` machine, the
/// catalog machines.
fn machines(args: &CompareArgs) -> Result<Vec<Report>, CliError> {
    let mut reports = Vec::new();
    for p in &args.reports {
        reports.push(load_machine(p)?);
    }
    if !args.import.is_empty() {
        reports.push(crate::report::reference_tools::import(&args.import)?.report());
    }
    for name in &args.catalogs {
        reports.push(modeled_report(name)?);
    }
    Ok(reports)
}

/// `--gpus`' counts, each once and ascending (`3,3` is one table), within what the model projects.
fn gpu_counts(gpus: &[usize]) -> Result<Vec<usize>, CliError> {
    if gpus.contains(&0) {
        return Err(CliError::input(anyhow::anyhow!(
            "--gpus: a GPU count must be 1 or more"
        )));
    }
    if let Some(&n) = gpus
        .iter()
        .find(|n| **n > crate::scaling::run::DEFAULT_MAX_GPUS)
    {
        return Err(CliError::input(anyhow::anyhow!(
            "--gpus: {n} GPUs is more than the model projects ({} at most)",
            crate::scaling::run::DEFAULT_MAX_GPUS
        )));
    }
    let counts: std::collections::BTreeSet<usize> = gpus.iter().copied().collect();
    Ok(counts.into_iter().collect())
}

pub fn run(args: CompareArgs) -> Result<(), CliError> {
    let mut inputs: Vec<(&str, &std::path::Path)> = args
        .reports
        .iter()
        .map(|p| ("compare", p.as_path()))
        .collect();
    inputs.extend(args.import.iter().map(|p| ("--import", p.as_ref())));
    inputs.extend(super::catalog_files(&args.catalogs));
    super::output::check_outputs(&[("--ranking-csv", args.ranking_csv.as_ref())], &inputs)?;
    let reports = machines(&args)?;
    if reports.len() < 2 {
        return Err(CliError::input(anyhow::anyhow!(
            "compare needs two or more machines (report files, tool outputs, --import FILE… and --catalog NAME), got {}",
            reports.len()
        )));
    }
    let asked = gpu_counts(&args.gpus)?;
    let prices = args.price.per_machine(reports.len())?;
    if let Some(n) = args.samples
        && !(1.0..=1e18).contains(&n)
    {
        return Err(CliError::input(anyhow::anyhow!(
            "--samples {n}: expected a count of samples from 1 to 1e18"
        )));
    }
    let refs: Vec<&Report> = reports.iter().collect();
    if let Some(w) = &args.workload {
        let has = |r: &Report| {
            r.scaling
                .as_ref()
                .is_some_and(|s| s.run.rows.iter().any(|row| &row.workload == w))
        };
        if !refs.iter().any(|r| has(r)) {
            let mut known: Vec<String> = refs
                .iter()
                .filter_map(|r| r.scaling.as_ref())
                .flat_map(|s| s.run.workloads.iter().map(|w| w.name.clone()))
                .collect();
            known.sort();
            known.dedup();
            let known = if known.is_empty() {
                "none: the reports have no scaling results".to_string()
            } else {
                known.join(", ")
            };
            return Err(CliError::input(anyhow::anyhow!(
                "--workload: no report has scaling rows for {} (they have: {})",
                crate::model::validate::quoted(w),
                crate::model::validate::one_line(&known, 100)
            )));
        }
    }
    let c = crate::report::compare::compare(&refs, args.workload.as_deref());
    let ranking = c.workload.as_ref().map(|w| {
        let mode = match args.mode {
            RankMode::Weak => Mode::Weak,
            RankMode::Strong => Mode::Strong,
        };
        let counts = if asked.is_empty() {
            crate::report::ranking::default_counts(&refs, w, mode)
        } else {
            asked.clone()
        };
        let mut ranking = crate::report::ranking::rank(&refs, w, mode, &counts, &prices);
        ranking.run_samples = args.samples;
        ranking
    });
    if let Some(path) = &args.ranking_csv {
        let Some(ranking) = &ranking else {
            return Err(CliError::input(anyhow::anyhow!(
                "--ranking-csv: no workload has scaling rows in every machine, so there is no ranking"
            )));
        };
        let bytes = crate::export::csv::ranking(ranking)?;
        super::output::write_atomic(path, &bytes).map_err(|e| {
            CliError::input(anyhow::anyhow!("--ranking-csv {}: {e}", path.display()))
        })?;
    }
    if args.csv {
        // The CSV goes to the terminal: what the reports' files say is printed escaped, as the
        // table prints it (a machine name with an escape code or a newline is not written raw).
        let bytes = crate::export::csv::comparison(&crate::report::compare::for_terminal(c))?;
        return emit(None, &bytes);
    }
    let mut text = crate::report::compare::to_table(&c);
    if let Some(ranking) = &ranking {
        text.push('\n');
        text.push_str(&crate::report::ranking::to_table(ranking));
    }
    emit(None, text.as_bytes())
}
