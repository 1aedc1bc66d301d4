//! `scalescope check`: is this box delivering what it should? One line per GPU, pair and test
//! with the verdict, the figure against what it should be, and below PASS the likely cause and
//! what to do; then the verdict. Exit 0 when nothing failed, 3 when a check failed (a node
//! health check for schedulers), 2 for bad input, 1 when the machine cannot be read.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use super::interrupt::{self, CANCEL};
use super::run_job::{Terminal, drive};
use super::{CliError, emit, write_file};
use crate::export;
use crate::health::run::CheckOptions;
use crate::health::{HealthReport, Thresholds, Verdict};
use crate::job::{Event, Job};
use crate::model::soak::{duration_words, parse_duration, parse_loads};
use crate::model::{SoakOptions, Source, Topology};

/// `scalescope check` options.
#[derive(Debug, Args)]
#[command(mut_arg("gpus", |a| a.help("GPUs to check, e.g. 0,1 (default: all)")))]
pub struct CheckArgs {
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
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
    /// nvbandwidth's output (text or -j JSON) and nccl-tests' (text or -J JSON, any
    /// collective) are judged as measured figures: copies against line rate × efficiency,
    /// collectives against the modeled bus bandwidth.
    #[arg(long, value_name = "FILE", conflicts_with = "catalog")]
    pub import: Vec<String>,
    /// Check a catalog machine: a name (`scalescope --catalog`) or a catalog .toml file, which
    /// may state the links as they run (`[[state]]`). Checked modeled.
    #[arg(long, value_name = "NAME|FILE.toml")]
    pub catalog: Option<String>,
    /// Verdict thresholds from a TOML file: pass, warn (fractions of expected),
    /// busy_util_percent, nvlink_crc_per_s, pcie_replays_per_min, [efficiency] by test id, [soak] (the burn-in's
    /// limits), [fleet] (fleet report's outlier rule), [settings] (power limit, clocks,
    /// persistence, MIG, compute mode). `published`: judge copy figures against the published
    /// figures for this GPU whose conditions match (the catalog's [[reference]]).
    #[arg(long, value_name = "FILE|published")]
    pub thresholds: Option<PathBuf>,
    /// Exit 3 on any WARN or UNKNOWN too, not only on FAIL.
    #[arg(long)]
    pub strict: bool,
    /// After the check, a burn-in of this length (90s, 30m, 2h, 1h30m; at least 1 minute):
    /// every selected GPU under a sustained load in phases, a sample a second, judged for
    /// wrong results, Xid, error counters, jitter, drop, throttling and temperature spread.
    /// Ctrl-C stops it and keeps what was measured.
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub soak: Option<String>,
    /// The soak's loads, in the order they cycle (default: gemm,memory,pcie, and p2p,nccl with
    /// two GPUs or more).
    #[arg(long, value_name = "LIST", requires = "soak")]
    pub soak_load: Option<String>,
    /// Where the soak writes its series, one row per GPU per second (columns in docs/CSV.md),
    /// rewritten as it runs (default: soak.csv in the current folder; a replay writes none
    /// unless asked).
    #[arg(long, value_name = "FILE")]
    pub soak_csv: Option<PathBuf>,
    /// Judge a recorded soak.csv instead of running one (no GPU needed; the thresholds of this
    /// run apply).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["soak", "import", "catalog"])]
    pub soak_replay: Option<PathBuf>,
    /// Play the recording back at this pace (1 = as recorded; default: at once).
    #[arg(
        long,
        value_name = "X",
        requires = "soak_replay",
        allow_hyphen_values = true
    )]
    pub replay_speed: Option<f64>,
    /// NCCL library for the soak's nccl load (default: searched).
    #[arg(long, value_name = "PATH")]
    pub nccl_lib: Option<PathBuf>,
    /// Print every check's line; without it, modeled PASS lines (hundreds on a catalog machine
    /// of 8 GPUs) are counted per check instead, and GPUs whose line reads the same share one
    /// (`GPUs 0–7`).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// Runs `scalescope check`.
pub fn run(args: CheckArgs, remote: &super::RemoteArgs) -> Result<(), CliError> {
    let thresholds = thresholds(&args)?;
    let gpus = args.gpus.selection()?;
    let soak = soak_options(&args)?;
    let opts = CheckOptions {
        gpus: gpus.clone(),
        quick: args.quick,
        thresholds,
        soak: soak.clone(),
    };
    let source = super::SourceArgs {
        import: args.import.clone(),
        catalog: args.catalog.clone(),
    };
    let live = !source.describes_another_machine() && args.soak_replay.is_none();
    if soak.is_some() && !live && args.soak_replay.is_none() {
        return Err(CliError::input(anyhow::anyhow!(
            "--soak loads this machine's GPUs: it cannot run with --import or --catalog (judge a recording with --soak-replay FILE)"
        )));
    }
    let target = match &args.soak_replay {
        Some(path) => replay_target(path)?,
        None => source.target_for(remote)?,
    };
    let job = Job::Check {
        target,
        options: opts,
    };
    let csv_path = soak_csv_path(&args, soak.is_some())?;
    // A check whose files could not be written ends here, not after an hour's soak.
    check_files(&args, &source, csv_path.as_ref())?;
    let mut runner = remote.runner()?;
    // Ctrl-C stops a soak after the second in flight; what was measured is kept.
    if soak.is_some() {
        interrupt::install(|| {});
    }
    let mut series = SoakWriter::new(csv_path.clone());
    let full = drive(&mut runner, &job, &CANCEL, false, &mut |e, _, term| {
        series.on_event(e, term)?;
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
    })
    .map_err(|s| {
        series.interrupted_note();
        s.or_job(|e| {
            if e.no_driver && live && remote.remote.is_none() {
                no_driver_here(&e.message)
            } else {
                e.into()
            }
        })
    })?;
    for w in &full.warnings {
        crate::stderr_line!("warning: {w}");
    }
    let topo = full.topology;
    let Some(report) = full.health else {
        return Err(CliError::env(anyhow::anyhow!(
            "the check produced no result"
        )));
    };
    // The verdict is printed even where a file could not be written (the disk filled during
    // the run), and a failed check keeps exit 3: a scheduler must not read a failed node as bad
    // input.
    let written = write_outputs(&args, &report, full.soak.as_ref());
    conclude(&args, &topo, &report, csv_path, written)
}

/// Refuses output files that cannot be written, that name one of the check's inputs (the
/// captures, the catalog file, the thresholds, the recording) or each other.
fn check_files(
    args: &CheckArgs,
    source: &super::SourceArgs,
    soak_csv: Option<&PathBuf>,
) -> Result<(), CliError> {
    let mut inputs = source.files();
    inputs.extend(
        args.thresholds
            .iter()
            .map(|p| ("--thresholds", p.as_path())),
    );
    inputs.extend(
        args.soak_replay
            .iter()
            .map(|p| ("--soak-replay", p.as_path())),
    );
    super::output::check_outputs(
        &[
            ("--json", args.json.as_ref()),
            ("--csv", args.csv.as_ref()),
            ("--soak-csv", soak_csv),
        ],
        &inputs,
    )
}

/// Where the soak's series goes: `--soak-csv` (never the recording being replayed), else
/// soak.csv for a soak that runs here, else nowhere.
fn soak_csv_path(args: &CheckArgs, soaks: bool) -> Result<Option<PathBuf>, CliError> {
    Ok(match (&args.soak_csv, &args.soak_replay) {
        (Some(p), Some(r)) => {
            if std::fs::canonicalize(p).ok() == std::fs::canonicalize(r).ok() {
                return Err(CliError::input(anyhow::anyhow!(
                    "--soak-csv {}: that is the recording being replayed",
                    p.display()
                )));
            }
            Some(p.clone())
        }
        (Some(p), None) => Some(p.clone()),
        (None, Some(_)) => None,
        (None, None) => soaks.then(|| PathBuf::from("soak.csv")),
    })
}

/// A machine without a driver, checked here: the job's message with advice on checking a
/// machine one does not have in place of the generic advice.
fn no_driver_here(message: &str) -> CliError {
    CliError::env(anyhow::anyhow!(
        "{}",
        message.replace(
            crate::topology::NO_DRIVER_ADVICE,
            "to check a machine you do not have: scalescope check --import nvidia-smi-q.xml [--import topo-m.txt] or --catalog NAME|FILE.toml"
        )
    ))
}

/// Writes `--json` (the check, and the soak when there was one) and `--csv` (one row per
/// check).
fn write_outputs(
    args: &CheckArgs,
    report: &HealthReport,
    soak: Option<&crate::model::SoakSection>,
) -> Result<(), CliError> {
    if let Some(p) = &args.json {
        // With a soak, the file also holds it (`soak`: the series, events, start time).
        #[derive(serde::Serialize)]
        struct WithSoak<'a> {
            #[serde(flatten)]
            health: &'a HealthReport,
            #[serde(skip_serializing_if = "Option::is_none")]
            soak: Option<&'a crate::model::SoakSection>,
        }
        let body = WithSoak {
            health: report,
            soak,
        };
        write_file(p, &export::json::to_json(&body)?)?;
    }
    if let Some(p) = &args.csv {
        write_file(p, &export::csv::health(&report.checks)?)?;
    }
    Ok(())
}

/// Prints the report and ends the run: interrupted (the soak stopped early; `csv_path` keeps
/// what was measured), failed (or, with `--strict`, any WARN or UNKNOWN), its files not
/// `written` (said after the verdict; the exit code a passing check then ends with), or passed.
fn conclude(
    args: &CheckArgs,
    topo: &Topology,
    report: &HealthReport,
    csv_path: Option<PathBuf>,
    written: Result<(), CliError>,
) -> Result<(), CliError> {
    let c = &report.counts;
    let failed = report.failed() || (args.strict && (c.warn > 0 || c.unknown > 0));
    let interrupted = interrupt::signalled();
    let code = if interrupted {
        interrupt::exit_code()
    } else if failed {
        super::EXIT_CHECK_FAILED
    } else {
        written.as_ref().err().map_or(0, |e| e.code)
    };
    emit(None, render(topo, report, code, args.verbose).as_bytes())?;
    if let Err(w) = written {
        if !(interrupted || failed) {
            return Err(w);
        }
        crate::stderr_line!("{}", super::error_line(&w.error));
    }
    if interrupted {
        return Err(CliError::interrupted(anyhow::anyhow!(
            "interrupted: the soak stopped early{}",
            csv_path
                .map(|p| format!("; {} keeps every second measured", p.display()))
                .unwrap_or_default()
        )));
    }
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

/// The thresholds `--thresholds` names: a file, or `published` (the catalog's published
/// figures, where they match; a file of that name is read as a file).
fn thresholds(args: &CheckArgs) -> Result<Thresholds, CliError> {
    Ok(match &args.thresholds {
        Some(p) if p.as_os_str() == "published" && !p.exists() => Thresholds {
            published: true,
            ..Thresholds::default()
        },
        Some(p) => Thresholds::load(p)?,
        None => Thresholds::default(),
    })
}

/// The terminal report: one line per check (unless `verbose`, modeled PASS lines counted per
/// check — they only restate line rates — and GPUs whose line reads the same on one), notes,
/// then the verdict.
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
    let shown: Vec<(String, &crate::health::Check)> = if verbose {
        shown.iter().map(|&c| (c.subject.clone(), c)).collect()
    } else {
        crate::health::alike_gpus(&shown)
    };
    let sw = shown
        .iter()
        .map(|(subject, _)| subject.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let cw = shown
        .iter()
        .map(|(_, c)| c.check.id().len())
        .max()
        .unwrap_or(5)
        .max(5);
    let vw = shown
        .iter()
        .map(|(_, c)| c.verdict_text().len())
        .max()
        .unwrap_or(4);
    for (subject, c) in &shown {
        let subject = format!("{subject:<sw$}");
        let _ = write!(
            out,
            "{:<vw$}  {subject}  {:<cw$}  {}",
            c.verdict_text(),
            c.check,
            c.detail
        );
        if c.verdict != Verdict::Pass {
            if let Some(cause) = c.cause_words() {
                let _ = write!(out, " — {cause}");
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
    // Published figures for machines like this one, beside the copy figures judged above.
    let published = crate::report::published::beside(topo, &r.bandwidth, &[]);
    for b in crate::report::published::copies_run(&published) {
        let _ = writeln!(out, "{}", crate::model::validate::for_terminal(&b.line()));
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

/// The soak the flags ask for (`None` without `--soak` or `--soak-replay`).
fn soak_options(args: &CheckArgs) -> Result<Option<SoakOptions>, CliError> {
    let bad = |e: String| CliError::input(anyhow::anyhow!("{e}"));
    // clap's `requires` does not hold these here: said, not ignored.
    super::refuse_unused(
        &[("--replay-speed", args.replay_speed.is_some())],
        args.soak_replay.is_some(),
        "paces a replay: give --soak-replay FILE",
    )?;
    super::refuse_unused(
        &[("--soak-load", args.soak_load.is_some())],
        args.soak.is_some(),
        "chooses the burn-in's loads: give --soak DURATION",
    )?;
    super::refuse_unused(
        &[("--quick", args.quick)],
        args.soak_replay.is_none(),
        "shortens the check's tests: a replay (--soak-replay) runs none",
    )?;
    if let Some(path) = &args.soak_replay {
        let speed = args
            .replay_speed
            .map(|v| {
                if crate::model::soak::replay_speed_ok(v) {
                    Ok(v)
                } else {
                    Err(bad(format!(
                        "--replay-speed {}: expected 0 (at once) or 0.01 to 1000",
                        crate::model::validate::number(v)
                    )))
                }
            })
            .transpose()?;
        return Ok(Some(SoakOptions {
            duration_s: 0.0,
            loads: Vec::new(),
            replay: Some(path.display().to_string()),
            replay_speed: speed,
            nccl_lib: None,
        }));
    }
    let Some(d) = &args.soak else {
        return Ok(None);
    };
    let duration_s = parse_duration(d).map_err(|e| bad(format!("--soak: {e}")))?;
    let loads = match &args.soak_load {
        Some(l) => parse_loads(l).map_err(bad)?,
        None => Vec::new(),
    };
    Ok(Some(SoakOptions {
        duration_s,
        loads,
        replay: None,
        replay_speed: None,
        nccl_lib: args.nccl_lib.clone(),
    }))
}

/// The machine a replayed soak is judged on: its GPUs as the recording numbers them (nothing
/// else is known), named as the recording it is.
fn replay_target(path: &std::path::Path) -> Result<crate::job::Target, CliError> {
    let soak = crate::health::soak_csv::read(path)
        .map_err(|e| CliError::input(anyhow::anyhow!("--soak-replay {e}")))?;
    let topo = crate::job::soak_file::recording_topology(&path.display().to_string(), &soak.gpus);
    Ok(crate::job::Target::Topology {
        topology: Box::new(topo),
    })
}

/// Writes soak.csv as the soak runs (rewritten once a second, so that an interrupted or killed
/// soak keeps every second measured) and prints a line a minute.
struct SoakWriter {
    path: Option<PathBuf>,
    bytes: Vec<u8>,
    rows: usize,
    last_line: f64,
    /// Where `path` is a stream (`/dev/stdout`, a FIFO): it is opened once and each row is
    /// written once, after the header, rather than the whole file again every second.
    stream: Option<(std::fs::File, usize)>,
}

impl SoakWriter {
    fn new(path: Option<PathBuf>) -> Self {
        Self {
            path,
            bytes: Vec::new(),
            rows: 0,
            last_line: 0.0,
            stream: None,
        }
    }

    /// Writes what is new: the whole file again (atomically), or to a stream the bytes not
    /// sent yet.
    fn write(&mut self) -> Result<(), CliError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let is_stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if !is_stream && self.stream.is_none() {
            return write_file(path, &self.bytes);
        }
        if self.stream.is_none() {
            let f = super::output::open_stream(path)
                .map_err(|e| super::output::write_error(path, e))?;
            self.stream = Some((f, 0));
        }
        if let Some((f, sent)) = &mut self.stream {
            use std::io::Write as _;
            f.write_all(&self.bytes[*sent..])
                .and_then(|()| f.flush())
                .map_err(|e| super::output::write_error(path, e))?;
            *sent = self.bytes.len();
        }
        Ok(())
    }

    fn on_event(&mut self, e: &Event, term: &Terminal) -> Result<(), CliError> {
        let target = self
            .path
            .as_ref()
            .map(|p| format!(" → {}", p.display()))
            .unwrap_or_default();
        match e {
            Event::SoakStarted { section } => {
                self.bytes = crate::health::soak_csv::rows(&[], &[], true);
                if section.replay_of.is_none() {
                    term.note(&format!(
                        "soak: {} of {} on GPU {} (a row per GPU per second{}){}",
                        duration_words(section.duration_s),
                        section
                            .loads
                            .iter()
                            .map(|l| l.id())
                            .collect::<Vec<_>>()
                            .join(", "),
                        section
                            .gpus
                            .iter()
                            .map(|g| g.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        target,
                        section
                            .gemm
                            .as_ref()
                            .map(|g| format!("\n  gemm: {g}"))
                            .unwrap_or_default()
                    ));
                }
                Ok(())
            }
            Event::SoakSamples {
                samples,
                events,
                elapsed_s,
                ..
            } => {
                for ev in events {
                    if !matches!(ev.kind, crate::model::SoakEventKind::Phase { .. }) {
                        term.note(&format!(
                            "soak {}: {}",
                            crate::health::soak::clock(ev.t_s),
                            crate::model::validate::one_line(&ev.text, 200)
                        ));
                    }
                }
                self.bytes
                    .extend(crate::health::soak_csv::rows(samples, events, false));
                self.rows += samples.len();
                if *elapsed_s - self.last_line >= 60.0 && !samples.is_empty() {
                    self.last_line = *elapsed_s;
                    term.note(&minute_line(*elapsed_s, samples));
                }
                self.write()
            }
            _ => Ok(()),
        }
    }

    fn interrupted_note(&self) {
        if let Some(p) = &self.path
            && self.rows > 0
        {
            crate::stderr_line!("soak: {} rows kept in {}", self.rows, p.display());
        }
    }
}

/// `soak 2:00  gemm  GPU 0 712 TFLOP/s 699 W 1755 MHz 64 °C`.
fn minute_line(t: f64, samples: &[crate::model::SoakSample]) -> String {
    let mut out = format!("soak {}", crate::health::soak::clock(t));
    for s in samples {
        let _ = write!(
            out,
            "  GPU {} {}{}{}{}",
            s.gpu,
            match (s.rate, s.phase) {
                (Some(r), Some(p)) => format!("{p} {r:.0} {} ", p.unit_words()),
                _ => String::new(),
            },
            s.power_w.map(|w| format!("{w:.0} W ")).unwrap_or_default(),
            s.sm_clock_mhz
                .map(|m| format!("{m} MHz "))
                .unwrap_or_default(),
            s.gpu_temp_c
                .map(|c| format!("{c:.0} °C"))
                .unwrap_or_default()
        );
    }
    out
}
