//! `scalescope bench scaling`: weak and strong scaling of catalog (or the user's) workloads —
//! modeled, or with `--measure` fed by this machine's cuBLAS rates and NCCL all-reduce curve and
//! checked by proxy runs on 1, 2, 4, … and N GPUs.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{CliError, RemoteArgs, SourceArgs, emit, write_file};
use crate::export;
use crate::job::validate::MAX_GPUS_LIMIT;
use crate::job::{Event, Job};
use crate::model::quantities::gpu_list;
use crate::report::ranking::significant;
use crate::scaling::calibrate::{MeasuredStep, UnderDdp};
use crate::scaling::run::{DEFAULT_MAX_GPUS, MeasureOptions, ScalingRun};
use crate::scaling::workload::{self, Workload};
use crate::scaling::{GemmRate, Machine, Mode, RowSource, ScalingPoint};

/// Weak, strong or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Weak,
    Strong,
    Both,
}

/// `scalescope bench scaling` options.
#[derive(Debug, Args)]
#[command(mut_arg("gpus", |a| a.help("GPUs to use, e.g. 0,1 (default: all)")))]
pub struct ScalingArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// A catalog workload name or a workload TOML file; repeat for several (default: the whole
    /// catalog). `--workload list` lists the catalog's workloads.
    #[arg(long, value_name = "NAME|FILE")]
    pub workload: Vec<String>,
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
    /// Weak scaling (per-GPU batch fixed), strong (global batch fixed), or both.
    #[arg(long, value_enum, default_value_t = ModeArg::Both)]
    pub mode: ModeArg,
    /// Measure on this machine: the cuBLAS GEMM rate (the first GPU alone, then all at once),
    /// an NCCL all-reduce sweep that feeds the model, and each workload's real training step
    /// with PyTorch (DDP/FSDP under torchrun) on 1, 2, 4, … and N GPUs — synthetic proxies where
    /// PyTorch is missing. Without it nothing runs on the GPUs.
    #[arg(long, conflicts_with = "modeled")]
    pub measure: bool,
    /// Python with PyTorch for the real training steps (default: SCALESCOPE_PYTHON, python3).
    #[arg(long, value_name = "PATH", requires = "measure")]
    pub python: Option<PathBuf>,
    /// With --measure: run the synthetic proxies only, no PyTorch.
    #[arg(long, requires = "measure")]
    pub no_framework: bool,
    /// Time limit of one PyTorch launch, seconds [default: 600] (with --measure).
    #[arg(long, value_name = "S", requires = "measure")]
    pub framework_timeout: Option<u64>,
    /// Calibrate the model with your own 1-GPU step at the workload's per-GPU batch, ms (one
    /// --workload).
    #[arg(
        long,
        value_name = "MS",
        conflicts_with = "samples_per_s_1gpu",
        allow_negative_numbers = true
    )]
    pub step_ms_1gpu: Option<f64>,
    /// Calibrate the model with your own 1-GPU throughput at the workload's per-GPU batch,
    /// samples/s (one --workload).
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    pub samples_per_s_1gpu: Option<f64>,
    /// Project up to N GPUs over nodes (modeled), 1 to 1048576.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_GPUS, value_parser = parse_max_gpus)]
    pub max_gpus: usize,
    /// NCCL library for --measure (default: SCALESCOPE_NCCL_LIB, the loader path, python3's
    /// nvidia/nccl/lib).
    #[arg(long, value_name = "PATH")]
    pub nccl_lib: Option<PathBuf>,
    /// Write every row as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the run as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Model a catalog or imported machine (with --catalog/--import).
    #[arg(long)]
    pub modeled: bool,
    #[command(flatten)]
    pub price: super::price::PriceArgs,
}

/// `--max-gpus N`: a whole number of GPUs from 1 to [`MAX_GPUS_LIMIT`].
fn parse_max_gpus(s: &str) -> Result<usize, String> {
    let range = format!("expected a whole number of GPUs from 1 to {MAX_GPUS_LIMIT}");
    match s.trim().parse::<u128>() {
        Ok(n) if (1..=MAX_GPUS_LIMIT as u128).contains(&n) => Ok(n as usize),
        Ok(_) => Err(format!("out of range: {range}")),
        Err(_) => Err(range),
    }
}

/// The workloads named by `--workload` (the catalog when none).
pub fn workloads(names: &[String]) -> Result<Vec<Workload>, CliError> {
    if names.is_empty() {
        return Ok(workload::catalog());
    }
    names
        .iter()
        .map(|n| {
            let w = workload::resolve(n).map_err(CliError::from)?;
            // A workload file's own step, held to what a GPU can compute as the flag's is.
            match w
                .step_ms_1gpu
                .map(|ms| crate::scaling::rates::possible_step(&w, ms))
            {
                Some(Err(why)) => Err(CliError::input(anyhow::anyhow!("{n}: step_ms_1gpu: {why}"))),
                _ => Ok(w),
            }
        })
        .collect()
}

/// The catalog's workloads, one line each: what `--workload` takes.
pub fn workload_list() -> String {
    let whole = |v: f64| match v.fract() == 0.0 {
        true => format!("{v:.0}"),
        false => format!("{v:.2}"),
    };
    let mut s = format!(
        "{:<20} {:<18} {:>9} {:>13} {:>8} {:>13}  {}\n",
        "NAME", "PATTERN", "PARAMS", "GFLOP/SAMPLE", "PER GPU", "STRONG GLOBAL", "TITLE"
    );
    for w in workload::catalog() {
        let params = match w.params > 0.0 {
            true => format!("{:.1}M", w.params / 1e6),
            false => "—".to_string(),
        };
        let _ = writeln!(
            s,
            "{:<20} {:<18} {:>9} {:>13.1} {:>8} {:>13}  {}",
            w.name,
            w.pattern.id(),
            params,
            w.flops_per_sample / 1e9,
            whole(w.per_gpu_batch),
            whole(w.strong_global_batch),
            crate::model::validate::for_terminal(&w.title)
        );
    }
    s.push_str("(a workload TOML file is taken too: docs/SCALING.md, \"The workload catalog\")\n");
    s
}

/// `--workload list`: the catalog's workloads. A listing runs nothing: a flag beside it would
/// be ignored, so it is refused.
fn list_workloads(args: &ScalingArgs) -> Result<(), CliError> {
    let others = args.workload.len() > 1
        || args.measure
        || args.modeled
        || args.csv.is_some()
        || args.json.is_some()
        || args.step_ms_1gpu.is_some()
        || args.source.catalog.is_some()
        || !args.source.import.is_empty();
    if others {
        return Err(CliError::input(anyhow::anyhow!(
            "--workload list lists the catalog's workloads and takes no other flag (a \
             workload file named list: ./list)"
        )));
    }
    emit(None, workload_list().as_bytes())
}

pub fn run(args: ScalingArgs, remote: &RemoteArgs) -> Result<(), CliError> {
    if args.workload.iter().any(|w| w == "list") {
        return list_workloads(&args);
    }
    // clap's `requires` does not hold these to --measure here: said, not ignored.
    super::refuse_unused(
        &[
            ("--python", args.python.is_some()),
            ("--no-framework", args.no_framework),
            ("--framework-timeout", args.framework_timeout.is_some()),
            ("--nccl-lib", args.nccl_lib.is_some()),
        ],
        args.measure,
        "only applies with --measure (the model runs nothing on the GPUs)",
    )?;
    let mut workloads = workloads(&args.workload)?;
    crate::model::validate::distinct("--workload", &workloads, |w| w.name.clone())
        .map_err(|e| CliError::input(anyhow::anyhow!(e)))?;
    let user = match (args.step_ms_1gpu, args.samples_per_s_1gpu) {
        (Some(ms), _) => Some(("--step-ms-1gpu", ms, None)),
        (None, Some(x)) => Some(("--samples-per-s-1gpu", x, Some(x))),
        _ => None,
    };
    if let Some((flag, v, per_s)) = user {
        if !(v.is_finite() && v > 0.0) {
            return Err(CliError::input(anyhow::anyhow!(
                "{flag}: {v} is not a positive number"
            )));
        }
        let [w] = workloads.as_mut_slice() else {
            return Err(CliError::input(anyhow::anyhow!(
                "{flag} calibrates one workload: name it with one --workload"
            )));
        };
        let step = match per_s {
            Some(x) => w.per_gpu_batch / x * 1e3,
            None => v,
        };
        // No GPU computes the step's FLOPs faster than its datasheet's peak: the catalog
        // machine's GPU where one is named, else the fastest datasheet's.
        let gpu = args
            .source
            .catalog
            .as_deref()
            .and_then(|c| crate::topology::catalog::load(c).ok())
            .and_then(|t| t.gpus.first().and_then(|g| g.name.clone()));
        crate::scaling::rates::possible_step_on(w, step, gpu.as_deref())
            .map_err(|why| CliError::input(anyhow::anyhow!("{flag} {v}: {why}")))?;
        w.step_ms_1gpu = Some(step);
    }
    let modes = match args.mode {
        ModeArg::Weak => vec![Mode::Weak],
        ModeArg::Strong => vec![Mode::Strong],
        ModeArg::Both => Mode::ALL.to_vec(),
    };
    let gpus = args.gpus.selection()?;
    args.source.refuse_measuring_elsewhere(args.modeled)?;
    let mut inputs = args.source.files();
    inputs.extend(
        args.workload
            .iter()
            .map(|w| ("--workload", std::path::Path::new(w))),
    );
    super::output::check_outputs(
        &[("--csv", args.csv.as_ref()), ("--json", args.json.as_ref())],
        &inputs,
    )?;
    let measure = args.measure.then(|| MeasureOptions {
        nccl_lib: args.nccl_lib.clone(),
        python: args.python.clone(),
        no_framework: args.no_framework,
        framework_timeout: args.framework_timeout.map(std::time::Duration::from_secs),
        ..Default::default()
    });
    let job = Job::Scaling {
        target: args.source.target_for(remote)?,
        gpus,
        workloads,
        modes,
        max_gpus: args.max_gpus,
        measure,
        pricing: args.price.pricing()?,
    };
    // Only a measured run is long enough to keep what finished along the way.
    let report =
        args.source
            .run_job(remote, &job, args.modeled, false, &mut |e, _, _| match e {
                Event::Scaling { section } if args.measure => write_outputs(&args, &section.run),
                _ => Ok(()),
            })?;
    let run = report.scaling.map(|s| s.run).unwrap_or_default();
    for n in &run.notes {
        crate::stderr_line!("note: {n}");
    }
    write_outputs(&args, &run)?;
    emit(None, render(&run).as_bytes())
}

fn write_outputs(args: &ScalingArgs, run: &ScalingRun) -> Result<(), CliError> {
    if let Some(p) = &args.csv {
        write_file(p, &export::csv::scaling(&run.rows)?)?;
    }
    if let Some(p) = &args.json {
        let bytes = serde_json::to_vec_pretty(run).map_err(CliError::env)?;
        write_file(p, &bytes)?;
    }
    Ok(())
}

fn f(v: Option<f64>, d: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.d$}"))
}

/// The table printed to the terminal: one block per workload and mode.
pub fn render(run: &ScalingRun) -> String {
    let mut s = String::new();
    if let Some(m) = &run.machine {
        machine_header(&mut s, m);
    }
    if let Some(f) = &run.framework {
        let _ = writeln!(s, "#   real framework runs: {f}");
    }
    for w in &run.workloads {
        for mode in Mode::ALL {
            let rows: Vec<&ScalingPoint> = run
                .rows
                .iter()
                .filter(|r| r.workload == w.name && r.mode == mode)
                .collect();
            if !rows.is_empty() {
                mode_block(&mut s, run, w, mode, &rows);
            }
        }
    }
    legend(&mut s, run);
    s
}

/// The `#` lines on the machine: GEMM rates (each GPU's when measured together), the
/// all-reduce curve, the probes, GPU memory and the network beyond the box.
fn machine_header(s: &mut String, m: &Machine) {
    let _ = writeln!(s, "# {} ({} GPUs per node)", m.label, m.gpus_per_node);
    for (d, r) in [("bf16", &m.rates.bf16), ("fp32", &m.rates.fp32)] {
        if let Some(r) = r {
            let _ = writeln!(
                s,
                "#   {d} GEMM {:.1} TFLOP/s ({}: {})",
                r.tflops, r.source, r.basis
            );
        }
    }
    if !m.concurrent.is_empty() {
        let gpus: Vec<usize> = m.concurrent.iter().map(|g| g.gpu).collect();
        let _ = writeln!(
            s,
            "#   GEMM with GPUs {} running at once (n ≥ 2 uses the slowest of the first n):",
            gpu_list(&gpus)
        );
        for g in &m.concurrent {
            let rate = |r: Option<&GemmRate>| f(r.map(|r| r.tflops), 1);
            let _ = writeln!(
                s,
                "#     GPU {}: bf16 {} TFLOP/s, fp32 {} TFLOP/s",
                g.gpu,
                rate(g.rates.bf16.as_ref()),
                rate(g.rates.fp32.as_ref())
            );
        }
    }
    if let Some(c) = &m.comm {
        let _ = writeln!(s, "#   all-reduce curve: {}", c.basis);
    }
    if let Some(p) = &m.probe {
        let _ = writeln!(
            s,
            "#   framework probe: GEMM {:.0} TFLOP/s, copy {:.0} GB/s ({})",
            p.gemm_tflops, p.copy_gbps, p.basis
        );
    }
    for o in &m.overlap {
        let _ = writeln!(
            s,
            "#   overlap probe, {}: {:.2} of the all-reduce time hidden at matrix share {:.2} ({})",
            o.workload, o.hidden, o.matrix_share, o.basis
        );
    }
    if let Some(g) = m.gpu_memory_gib {
        let _ = writeln!(s, "#   GPU memory: {g:.1} GiB");
    }
    let _ = writeln!(s, "#   beyond the box: {}", m.nic_per_gpu.basis);
}

/// One workload in one mode: its heading, what calibrates the model, the column heads, one line
/// per row, and the notes on any efficiency above 1.00.
fn mode_block(s: &mut String, run: &ScalingRun, w: &Workload, mode: Mode, rows: &[&ScalingPoint]) {
    let _ = writeln!(
        s,
        "\n{} — {} — {} scaling",
        w.name,
        w.pattern.describe(),
        mode
    );
    // What the model's compute term comes from, in one line (the rows' basis has it all).
    if let Some(r) = rows
        .iter()
        .find(|r| r.source == RowSource::Modeled && r.calibration.is_some())
    {
        let first = r.basis.split(';').next().unwrap_or_default();
        let short = first.split(" (").next().unwrap_or(first);
        let _ = writeln!(
            s,
            "  model calibration: {} ({short})",
            r.calibration.map_or("—", |c| c.id())
        );
    }
    let cols = Columns {
        // Energy and cost columns only where the run has them.
        energy: rows.iter().any(|r| r.samples_per_joule.is_some()),
        cost: run.pricing.is_some(),
        cost_needs_power: matches!(
            run.pricing,
            Some(crate::scaling::cost::Pricing::Ownership { .. })
        ),
        // The per-GPU cell is as wide as its longest (`1024 = 256 × 4`, `≤342 = 256 + 86`).
        pw: rows
            .iter()
            .map(|r| r.per_gpu_cell().chars().count())
            .max()
            .unwrap_or(0)
            .max(7),
    };
    cols.header(s);
    for r in rows {
        cols.line(s, r);
        if r.step_time_ms.is_none() && !r.basis.is_empty() {
            let _ = writeln!(s, "       ({})", r.basis);
        }
        // Beside the plain 1-GPU step: the same step under DDP, what the wrapper costs.
        if let Some((step, u)) = run.under_ddp_below(r) {
            cols.under_ddp_line(s, r, step, u);
        }
    }
    // An efficiency above 1.00 is never printed without its cause.
    for line in crate::report::superlinear::notes(&run.rows, Some(&w.name), Some(mode)) {
        let _ = writeln!(s, "{}", crate::model::validate::one_line(&line, 80));
    }
}

/// The columns of one block: whether it has the energy and cost columns, and the per-GPU
/// column's width.
struct Columns {
    energy: bool,
    cost: bool,
    /// The cost pays for the GPUs' energy (ownership prices): at most the figure where the
    /// power is only its upper bound.
    cost_needs_power: bool,
    pw: usize,
}

impl Columns {
    /// The energy (W/GPU, samples/J) and cost cells, where the block has those columns.
    fn extra(&self, w: &str, spj: &str, c: &str) -> String {
        let mut e = String::new();
        if self.energy {
            let _ = write!(e, " {w:>7} {spj:>10}");
        }
        if self.cost {
            let _ = write!(e, " {c:>10}");
        }
        e
    }

    /// The column heads.
    fn header(&self, s: &mut String) {
        let pw = self.pw;
        let _ = writeln!(
            s,
            "{:>6} {:>8} {:>pw$} {:>11} {:>12} {:>10} {:>6} {:>9} {:<13} {:<18} {:>7} {:>7}{}",
            "GPUs",
            "global",
            "per GPU",
            "step ms",
            "samples/s",
            "speedup",
            "eff",
            "mem GiB",
            "bound",
            "source",
            "error",
            "uncal",
            self.extra("W/GPU", "samples/J", "cost/M")
        );
    }

    /// One row's line.
    fn line(&self, s: &mut String, r: &ScalingPoint) {
        let pw = self.pw;
        let src = match (r.source, r.projected) {
            (RowSource::Modeled, true) => "projected",
            (src, _) => src.id(),
        };
        let mem = match (r.memory_gib_per_gpu, r.fits) {
            (Some(g), Some(false)) => format!("{g:.1}!"),
            (Some(g), _) => format!("{g:.1}"),
            (None, _) => "—".into(),
        };
        let _ = writeln!(
            s,
            "{:>6} {:>8.0} {:>pw$} {:>11} {:>12} {:>10} {:>6} {:>9} {:<13} {:<18} {:>7} {:>7}{}",
            r.n_gpus,
            r.global_batch,
            r.per_gpu_cell(),
            f(r.step_time_ms, 3),
            f(r.throughput, 1),
            r.speedup_cell(),
            crate::report::superlinear::cell(r),
            mem,
            r.bound.map_or("—", |b| b.id()),
            src,
            r.error_cell(),
            r.uncalibrated_error_cell(),
            self.extra(
                &r.bounded(f(r.watts_per_gpu, 0), '≤'),
                // Three significant digits: a 7B model's 0.00213 samples/J is no 0.00.
                &r.bounded(
                    f(r.samples_per_joule, significant(r.samples_per_joule, 3)),
                    '≥'
                ),
                &crate::scaling::bound_mark(
                    f(
                        r.cost_per_million_samples,
                        significant(r.cost_per_million_samples, 3)
                    ),
                    r.power_upper_bound() && self.cost_needs_power,
                    '≤'
                )
            ),
        );
    }
}

impl Columns {
    /// The "1 GPU under DDP" row below the plain 1-GPU row `plain` (same batch), and its words.
    fn under_ddp_line(
        &self,
        s: &mut String,
        plain: &ScalingPoint,
        step: &MeasuredStep,
        u: &UnderDdp,
    ) {
        let pw = self.pw;
        let _ = writeln!(
            s,
            "{:>6} {:>8.0} {:>pw$} {:>11} {:>12} {:>10} {:>6} {:>9} {:<13} {:<18} {:>7} {:>7}{}",
            1,
            plain.global_batch,
            plain.per_gpu_cell(),
            f(Some(u.wrapped_ms), 3),
            f(Some(u.samples_per_s(plain.per_gpu_batch)), 1),
            "—",
            "—",
            "—",
            "—",
            UNDER_DDP,
            "—",
            "—",
            self.extra("—", "—", "—"),
        );
        let _ = writeln!(s, "       ({})", u.describe(step));
    }
}

/// The source cell of the "1 GPU under DDP" row.
const UNDER_DDP: &str = "1 GPU under DDP";

/// The notes under the tables, each only where a row needs it: the error columns, energy,
/// cost, memory that does not fit, accumulated and uneven batches.
fn legend(s: &mut String, run: &ScalingRun) {
    let has_measured = run.rows.iter().any(|r| r.source.is_measured());
    if has_measured {
        let _ = writeln!(
            s,
            "\nerror: (model − measured) ÷ measured step time, the model calibrated by this run's 1-GPU steps \
             (cal.: the step it is calibrated from, no error to report); \
             uncal: the model with catalog figures only (no step measured here; this machine's probe rates and host speed)"
        );
    }
    if run.rows.iter().any(|r| r.samples_per_joule.is_some()) {
        let _ = writeln!(
            s,
            "W/GPU, samples/J: measured rows from the GPUs' energy over the timed steps (NVML), the model's rows from modeled power (the rows' basis says how){}",
            if run.rows.iter().any(ScalingPoint::power_upper_bound) {
                "; ≤ W and ≥ samples/J: the power is only its upper bound (the GPU's idle power unknown: the board limit, or a reference's power kept whole)"
            } else {
                ""
            }
        );
    }
    if let Some(p) = &run.pricing {
        let _ = writeln!(
            s,
            "cost/M: cost of a million samples, {}{}",
            p.describe(),
            match p {
                crate::scaling::cost::Pricing::Ownership { .. } =>
                    "; only rows with a power per GPU, modeled rows' cost modeled",
                crate::scaling::cost::Pricing::Rental { .. } =>
                    "; modeled rows' cost is modeled too",
            }
        );
    }
    if run.rows.iter().any(|r| r.fits == Some(false)) {
        let _ = writeln!(
            s,
            "mem GiB with !: does not fit the GPU's memory (no step time)"
        );
    }
    if run.rows.iter().any(ScalingPoint::accumulates) {
        let _ = writeln!(
            s,
            "per GPU: samples per GPU per step; `8 = 2 × 4`: 4 micro-batches of 2, gradients accumulated \
             (`22 = 4 × 5 + 2`: the last takes what is left); mem GiB is per micro-batch: a GPU holds one at a time"
        );
    }
    if run.rows.iter().any(ScalingPoint::splits_unevenly) {
        let _ = writeln!(
            s,
            "per GPU with ≤: the global batch does not split evenly in whole samples; the GPUs with the most \
             (shown) set the step, the others take one fewer (the row's basis says how many)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Source;
    use crate::scaling::{GpuRates, Machine, PerGpuRates};

    #[test]
    fn header_lists_each_gpus_rate_measured_together() {
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let mut m = Machine::modeled(&topo);
        let rate = |tflops| GemmRate {
            tflops,
            source: Source::Measured,
            basis: "test".into(),
            watts: None,
        };
        m.concurrent = [720.0, 700.0]
            .into_iter()
            .enumerate()
            .map(|(gpu, t)| PerGpuRates {
                gpu,
                rates: GpuRates {
                    bf16: Some(rate(t)),
                    fp32: None,
                },
            })
            .collect();
        let run = ScalingRun {
            machine: Some(m),
            ..Default::default()
        };
        let text = render(&run);
        assert!(text.contains("GPUs 0–1 running at once"), "{text}");
        assert!(
            text.contains("#     GPU 1: bf16 700.0 TFLOP/s, fp32 — TFLOP/s"),
            "{text}"
        );
    }

    #[test]
    fn the_step_under_ddp_at_one_gpu_is_its_own_labeled_row_below_the_plain_one() {
        let mut run = crate::scaling::run::fixtures::calibrated_gpt2_xl();
        let plain = render(&run);
        assert!(!plain.contains(UNDER_DDP), "{plain}");
        run.machine.as_mut().unwrap().framework_steps[0].under_ddp =
            UnderDdp::new(Some(404.0), Some(380.0), Some(9.0));
        let text = render(&run);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(UNDER_DDP) && l.contains("404.000"))
            .unwrap_or_else(|| panic!("no row under DDP:\n{text}"));
        // Right below the plain 1-GPU weak row, its samples/s from the wrapped step.
        let above = lines[at - 1];
        assert!(
            above.contains("measured_framework") && above.contains("380.000"),
            "{above}"
        );
        let per = run.workloads[0].per_gpu_batch;
        assert!(
            lines[at].contains(&format!("{:.1}", per / 0.404)),
            "{}",
            lines[at]
        );
        // Its words: both steps and the cost, +24.00 ms (+6.3 %); no speedup of its own.
        assert!(
            lines[at + 1].contains("+24.00 ms a step (+6.3 %)"),
            "{}",
            lines[at + 1]
        );
        assert!(
            lines[at + 1].contains("against the plain step"),
            "{}",
            lines[at + 1]
        );
        // Only where it was timed: the strong block has a plain 1-GPU row but no such step.
        assert_eq!(
            text.matches(UNDER_DDP).count(),
            2,
            "the row and its words, once:\n{text}"
        );
    }

    #[test]
    fn the_calibration_point_reports_no_error() {
        let mut run = crate::scaling::run::fixtures::calibrated_gpt2_xl();
        let measured_in = |run: &ScalingRun, n: usize, mode: Mode| {
            run.rows
                .iter()
                .find(|r| r.source == RowSource::Framework && r.n_gpus == n && r.mode == mode)
                .cloned()
                .unwrap()
        };
        let measured = |run: &ScalingRun, n: usize| measured_in(run, n, Mode::Weak);
        // The 1-GPU step the model is calibrated from: no error (it would be 0 by construction).
        let one = measured(&run, 1);
        assert!(one.calibration_point);
        assert_eq!(one.model_error, None);
        assert_eq!(one.error_cell(), "cal.");
        // The 2-GPU step is a real check of the model.
        let two = measured(&run, 2);
        let model2 = run
            .rows
            .iter()
            .find(|r| r.source == RowSource::Modeled && r.n_gpus == 2 && r.mode == Mode::Weak)
            .and_then(|r| r.step_time_ms)
            .unwrap();
        assert!(!two.calibration_point);
        assert!((two.model_error.unwrap() - (model2 - 395.0) / 395.0).abs() < 1e-12);
        // The strong model comes from the weak step (another batch): its 1-GPU row checks it.
        let strong = measured_in(&run, 1, Mode::Strong);
        assert!(!strong.calibration_point);
        assert!(strong.model_error.is_some_and(|e| e != 0.0), "{strong:?}");
        // Attached again (the run re-attaches after each stage): one note, still no error.
        crate::scaling::table::attach_errors(&mut run.rows);
        let one = measured(&run, 1);
        assert_eq!(
            one.basis.matches(crate::scaling::CALIBRATION_POINT).count(),
            1
        );
        assert_eq!(one.model_error, None);
        let text = render(&run);
        let line = |n: &str| {
            text.lines()
                .find(|l| l.contains("measured_framework") && l.trim_start().starts_with(n))
                .unwrap_or_else(|| panic!("no measured row at {n} in\n{text}"))
                .to_string()
        };
        assert!(line("1 ").contains(" cal. "), "{text}");
        assert!(!line("1 ").contains("+0.0%"), "{text}");
        assert!(line("2 ").contains(&two.error_cell()), "{text}");
        assert!(
            text.contains("cal.: the step it is calibrated from"),
            "{text}"
        );
        assert!(
            text.contains(
                "  model calibration: framework (framework 1-GPU step measured here: 380.0 ms at 8 samples)"
            ),
            "{text}"
        );
    }

    /// The bundled reports' runs as the table prints them: an efficiency above 1.00 is marked
    /// and a note under its workload and mode gives the cause.
    #[test]
    fn an_efficiency_above_one_is_printed_with_its_cause() {
        use crate::report::superlinear;
        for (name, r) in crate::report::bundled::reports() {
            let Some(s) = r.unwrap().scaling else {
                continue;
            };
            let text = render(&s.run);
            for row in s.run.rows.iter().filter(|x| superlinear::above(x)) {
                assert!(text.contains(&superlinear::cell(row)), "{name}");
                let why = superlinear::cause(row, &s.run.rows).unwrap();
                let note = text
                    .lines()
                    .find(|l| {
                        l.starts_with(&format!("* {} {},", row.workload, row.mode))
                            && l.contains(&format!(
                                "{}:",
                                if row.source == RowSource::Modeled {
                                    "modeled"
                                } else {
                                    row.source.id()
                                }
                            ))
                    })
                    .unwrap_or_else(|| panic!("{name}: no note for {} {}", row.workload, row.mode));
                assert!(note.contains("above 1.00"), "{note}");
                assert!(why.contains("GPUs do not speed each other up"), "{why}");
            }
        }
    }
}
