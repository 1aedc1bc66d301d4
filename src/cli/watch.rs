//! `scalescope watch`: the live traffic of every GPU and link, a line per GPU per interval
//! (`nvidia-smi dmon` style) and a line per GPU pair whose NVLinks carry traffic; `--csv`,
//! `--record` (JSON lines that `--replay` plays back), `--prometheus` (`/metrics`). Runs here,
//! on a server (`--remote`), or from a recording. Ctrl-C (or `--count N`) ends it with exit 0;
//! everything written so far stays written (each line is flushed as it comes).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::CliError;
use super::interrupt::{self, CANCEL};
use super::metrics_server::{Latest, MetricsServer, parse_listen};
use crate::export::prometheus::Mode;
use crate::export::traffic_csv;
use crate::model::Interval;
use crate::model::traffic::{
    LiveEvent, TrafficSample, WatchHeader, header_line, pair_traffic, sample_line,
};
use crate::model::validate::Bounds;

/// `--replay-speed`: from a hundredth of the recorded pace to a thousand times it.
const REPLAY_SPEED: Bounds = Bounds::closed(0.01, 1000.0, "×");

/// `scalescope watch` options.
#[derive(Debug, Args)]
#[command(mut_arg("gpus", |a| a.help("GPUs to watch, e.g. 0,1 (default: all; with --replay, those of the recording)")))]
pub struct WatchArgs {
    #[command(flatten)]
    pub gpus: super::flags::GpuArgs,
    /// Sampling interval: 1s (default), 500ms, 2s, 0.25 (seconds); 0.1 s to 1 h.
    #[arg(long, value_name = "DURATION", conflicts_with = "replay")]
    pub interval: Option<String>,
    /// Stop after N samples.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub count: Option<u64>,
    /// Also write each interval as CSV rows to FILE (columns in docs/CSV.md).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Record the samples to FILE as JSON lines (what --replay plays back).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Play a recording (`--record`'s file) back instead of reading GPUs: labeled replay.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With --replay: play at this many times the recorded pace (default 1).
    #[arg(
        long,
        value_name = "X",
        requires = "replay",
        allow_negative_numbers = true
    )]
    pub replay_speed: Option<f64>,
    /// Serve the latest sample at http://ADDR:PORT/metrics in the Prometheus text format
    /// (PORT alone binds 127.0.0.1; give 0.0.0.0:PORT to serve other machines).
    #[arg(long, value_name = "[ADDR:]PORT")]
    pub prometheus: Option<String>,
    /// Print every NVLink with traffic, not only the GPU pairs.
    #[arg(long)]
    pub links: bool,
    /// Print nothing per interval (with --csv, --record or --prometheus).
    #[arg(long)]
    pub quiet: bool,
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

pub fn run(args: WatchArgs, remote: &super::RemoteArgs) -> Result<(), CliError> {
    let input = |m: String| CliError::input(anyhow::anyhow!(m));
    let gpus = args.gpus.selection()?;
    let interval = match &args.interval {
        Some(t) => Interval::parse(t).map_err(super::flags::refused("--interval"))?,
        None => Interval::default(),
    };
    if args.count == Some(0) {
        return Err(input(
            "--count: 0 samples; give 1 or more (or leave it out to watch until Ctrl-C)".into(),
        ));
    }
    let speed = match args.replay_speed {
        Some(x) => REPLAY_SPEED
            .check(x)
            .map_err(|e| input(format!("--replay-speed: {e}")))?,
        None => 1.0,
    };
    let listen = args
        .prometheus
        .as_deref()
        .map(parse_listen)
        .transpose()
        .map_err(input)?;
    check_files(&args, remote)?;
    // A recording is read whole before anything starts, so that a bad file is one error.
    let recording = match &args.replay {
        Some(path) => Some(read_replay(path, &gpus)?),
        None => None,
    };
    let mode = if recording.is_some() {
        Mode::Replay
    } else {
        Mode::Live
    };

    let latest = Arc::new(Mutex::new(Latest {
        header: None,
        sample: None,
        samples_total: 0,
        mode,
    }));
    let mut sink = Sink {
        out: None,
        args: &args,
        latest: latest.clone(),
        mode,
        count: args.count,
        taken: 0,
        failure: None,
    };
    let server = match listen {
        Some(addr) => {
            let s = MetricsServer::start(addr, latest).map_err(|e| {
                CliError::input(anyhow::anyhow!("--prometheus {addr}: cannot listen: {e}"))
            })?;
            crate::stderr_line!("serving http://{}/metrics", s.addr);
            Some(s)
        }
        None => None,
    };
    interrupt::install(|| {});

    let result = match recording {
        Some(rec) => {
            let speed = if speed >= REPLAY_SPEED.max {
                f64::INFINITY
            } else {
                speed
            };
            play(rec, speed, &mut |e| sink.take(e))
        }
        None => {
            let mut runner = remote.runner()?;
            runner
                .watch(gpus, interval, &CANCEL, &mut |e| sink.take(e))
                .map_err(|e| no_driver_advice(e, remote.remote.is_some()))
        }
    };
    if let Some(e) = sink.failure {
        return Err(e);
    }
    result?;
    // A replay that ran out while serving: the scrapers keep its last sample until Ctrl-C.
    if server.is_some() && !interrupt::cancelled() {
        crate::stderr_line!("replay ended; still serving its last sample until Ctrl-C");
        while !interrupt::cancelled() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}

/// Refuses files that cannot work together: a replay with `--remote`, an output that is the
/// recording being replayed, `--csv` and `--record` naming one file.
fn check_files(args: &WatchArgs, remote: &super::RemoteArgs) -> Result<(), CliError> {
    let input = |m: String| CliError::input(anyhow::anyhow!(m));
    if let Some(r) = &args.replay {
        if remote.remote.is_some() {
            return Err(input(
                "--replay plays a file on this machine; leave out --remote".into(),
            ));
        }
        for (flag, out) in [("--record", &args.record), ("--csv", &args.csv)] {
            if let Some(o) = out
                && same_file(o, r)
            {
                return Err(input(format!(
                    "{flag} {}: that is the recording being replayed",
                    o.display()
                )));
            }
        }
    }
    if let (Some(a), Some(b)) = (&args.csv, &args.record)
        && same_file(a, b)
    {
        return Err(input(format!(
            "--csv and --record name the same file ({})",
            a.display()
        )));
    }
    super::output::check_writable_in_place(&[
        ("--csv", args.csv.as_ref()),
        ("--record", args.record.as_ref()),
    ])
}

/// The recording at `path`, kept to the GPUs `--gpus` names (each must be in it).
fn read_replay(
    path: &Path,
    gpus: &crate::model::GpuSelection,
) -> Result<crate::model::traffic::TrafficRecording, CliError> {
    let mut rec = crate::telemetry::traffic::read_recording(path)?;
    if !gpus.is_empty() {
        if let Some(g) = gpus.iter().find(|g| !rec.header.gpus.contains(g)) {
            return Err(CliError::input(anyhow::anyhow!(
                "--gpus: GPU {g} is not in the recording {} (it has GPUs {})",
                path.display(),
                list(&rec.header.gpus)
            )));
        }
        rec.header.gpus.retain(|g| gpus.contains(g));
        for s in &mut rec.samples {
            s.gpus.retain(|g| gpus.contains(&g.gpu));
        }
    }
    Ok(rec)
}

/// Where the watch's events go: the outputs, then the sample the metrics server answers with;
/// the watch is cancelled after `count` samples or on the first output that fails.
struct Sink<'a> {
    /// The files and the terminal, opened at the first event: a source that fails to start
    /// (no driver, a server that does not answer) leaves no empty file behind.
    out: Option<Outputs>,
    args: &'a WatchArgs,
    latest: Arc<Mutex<Latest>>,
    mode: Mode,
    count: Option<u64>,
    /// Samples taken so far.
    taken: u64,
    /// The first output error (nothing more is written after it).
    failure: Option<CliError>,
}

impl Sink<'_> {
    /// Writes one event to the outputs and hands it to the metrics server.
    fn take(&mut self, event: LiveEvent) {
        if self.failure.is_some() {
            return;
        }
        let out = match &mut self.out {
            Some(out) => Ok(out),
            None => Outputs::open(self.args).map(|o| self.out.insert(o)),
        };
        let result = out.and_then(|out| match &event {
            LiveEvent::Header(h) => out.header(h, self.mode),
            LiveEvent::Sample(s) => out.sample(s),
            LiveEvent::End { .. } => Ok(()),
        });
        if let Err(e) = result {
            self.failure = Some(e);
            CANCEL.store(true, Ordering::SeqCst);
            return;
        }
        if let Ok(mut l) = self.latest.lock() {
            match event {
                LiveEvent::Header(h) => l.header = Some(*h),
                LiveEvent::Sample(s) => {
                    l.sample = Some(s);
                    l.samples_total += 1;
                    self.taken += 1;
                }
                LiveEvent::End { .. } => {}
            }
        }
        if self.count.is_some_and(|n| self.taken >= n) {
            CANCEL.store(true, Ordering::SeqCst);
        }
    }
}

/// What `watch` can do without a driver here: play a recording back (it takes no --import or
/// --catalog, so the topology commands' advice would lead nowhere).
pub const NO_DRIVER_WATCH_ADVICE: &str = "to watch without a GPU, play a recording back: scalescope watch --replay FILE (made with --record on a machine with GPUs), or watch a server's GPUs with --remote HOST";

/// A watch error, with [`NO_DRIVER_WATCH_ADVICE`] in place of the topology commands' advice
/// where this machine has no driver.
fn no_driver_advice(e: crate::job::JobError, remote: bool) -> CliError {
    if e.no_driver && !remote {
        return CliError::env(anyhow::anyhow!(
            "{}",
            e.message
                .replace(crate::topology::NO_DRIVER_ADVICE, NO_DRIVER_WATCH_ADVICE)
        ));
    }
    e.into()
}

fn list(gpus: &[usize]) -> String {
    gpus.iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Plays `rec` into `sink` until it ends or Ctrl-C.
fn play(
    rec: crate::model::traffic::TrafficRecording,
    speed: f64,
    sink: &mut dyn FnMut(LiveEvent),
) -> Result<(), CliError> {
    let feed = crate::telemetry::traffic::replay(rec, speed)
        .map_err(|e| CliError::env(anyhow::anyhow!("cannot start the replay: {e}")))?;
    crate::job::watch::stream(feed, &CANCEL, sink).map_err(CliError::from)
}

/// Where each interval goes: the terminal, the CSV file, the recording.
struct Outputs {
    quiet: bool,
    links: bool,
    csv: Option<(PathBuf, csv::Writer<std::fs::File>)>,
    record: Option<(PathBuf, std::io::BufWriter<std::fs::File>)>,
    header: Option<WatchHeader>,
    /// The recording replayed (`--replay`), as given: the header line names it.
    replay: Option<String>,
    stdout: std::io::Stdout,
}

fn create(path: &Path) -> Result<std::fs::File, CliError> {
    std::fs::File::create(path).map_err(|e| super::output::write_error(path, e))
}

impl Outputs {
    fn open(args: &WatchArgs) -> Result<Outputs, CliError> {
        let csv = match &args.csv {
            Some(p) => {
                let mut w = csv::Writer::from_writer(create(p)?);
                w.write_record(traffic_csv::COLUMNS)
                    .and_then(|_| w.flush().map_err(Into::into))
                    .map_err(|e| super::output::write_error(p, e.into()))?;
                Some((p.clone(), w))
            }
            None => None,
        };
        let record = match &args.record {
            Some(p) => Some((p.clone(), std::io::BufWriter::new(create(p)?))),
            None => None,
        };
        Ok(Outputs {
            quiet: args.quiet,
            links: args.links,
            csv,
            record,
            header: None,
            replay: args.replay.as_ref().map(|p| p.display().to_string()),
            stdout: std::io::stdout(),
        })
    }

    fn write_record(&mut self, line: &str) -> Result<(), CliError> {
        if let Some((p, w)) = &mut self.record {
            w.write_all(line.as_bytes())
                .and_then(|_| w.flush())
                .map_err(|e| super::output::write_error(p, e))?;
        }
        Ok(())
    }

    fn say(&mut self, line: &str) -> Result<(), CliError> {
        if self.quiet {
            return Ok(());
        }
        // A closed pipe (`watch | head`) ends the watch like Ctrl-C.
        if writeln!(self.stdout, "{line}").is_err() {
            CANCEL.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    fn header(&mut self, h: &WatchHeader, mode: Mode) -> Result<(), CliError> {
        self.write_record(&header_line(h))?;
        let what = match (mode, &h.host) {
            // The app's words for a replay too (its top bar, its Live bar).
            (Mode::Replay, _) => h.replay_label(self.replay.as_deref().unwrap_or("a recording")),
            (Mode::Live, Some(host)) => format!("{host} (live)"),
            (Mode::Live, None) => "live".to_string(),
        };
        let what = crate::model::validate::for_terminal(&what);
        self.say(&format!(
            "# watch {what}: GPUs {}, every {} s; rates in GB/s (10^9 B/s), — = not read",
            list(&h.gpus),
            h.interval_s
        ))?;
        self.say(&format!(
            "# pcie_rx/tx: the data in the PCIe traffic ({}; --csv keeps the packet bytes too)",
            crate::model::traffic::PcieFraming::WORDS
        ))?;
        for n in &h.notes {
            let n = crate::model::validate::for_terminal(n);
            self.say(&format!("# {n}"))?;
        }
        self.say(&format!(
            "#{:>8} {:>4} {:>8} {:>8} {:>8} {:>8} {:>5} {:>5} {:>7} {:>6} {:>7} {:>5}  {}",
            "time_s",
            "gpu",
            "pcie_rx",
            "pcie_tx",
            "nvl_rx",
            "nvl_tx",
            "sm%",
            "mem%",
            "power_W",
            "sm_MHz",
            "mem_MHz",
            "procs",
            "clock_events"
        ))?;
        self.header = Some(h.clone());
        Ok(())
    }

    fn sample(&mut self, s: &TrafficSample) -> Result<(), CliError> {
        self.write_record(&sample_line(s))?;
        if let Some((p, w)) = &mut self.csv {
            for row in traffic_csv::rows(s) {
                w.write_record(&row)
                    .map_err(|e| super::output::write_error(p, e.into()))?;
            }
            w.flush().map_err(|e| super::output::write_error(p, e))?;
        }
        if self.quiet {
            return Ok(());
        }
        let gb = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{:.2}", v / 1e9));
        let pct = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.0}"));
        let mut lines = Vec::new();
        for g in &s.gpus {
            let (rx_data, tx_data) = g.pcie_data_bytes_per_s();
            let reasons = match &g.throttle {
                None => "—".to_string(),
                Some(r) if r.is_empty() => "none".to_string(),
                Some(r) => r.iter().map(|r| r.id()).collect::<Vec<_>>().join(","),
            };
            lines.push(format!(
                " {:>8.1} {:>4} {:>8} {:>8} {:>8} {:>8} {:>5} {:>5} {:>7} {:>6} {:>7} {:>5}  {}",
                s.t_s,
                g.gpu,
                gb(rx_data),
                gb(tx_data),
                gb(g.nvlink_rx_bytes_per_s()),
                gb(g.nvlink_tx_bytes_per_s()),
                pct(g.sm_activity_pct),
                pct(g.memory_bw_pct),
                g.power_w.map_or("—".to_string(), |w| format!("{w:.1}")),
                g.sm_clock_mhz.map_or("—".to_string(), |m| m.to_string()),
                g.memory_clock_mhz
                    .map_or("—".to_string(), |m| m.to_string()),
                g.processes
                    .as_ref()
                    .map_or("—".to_string(), |p| p.len().to_string()),
                reasons
            ));
            if self.links {
                for l in &g.nvlinks {
                    let busy = l.rx_bytes_per_s.unwrap_or(0.0) + l.tx_bytes_per_s.unwrap_or(0.0);
                    if busy >= 1e7 {
                        lines.push(format!(
                            " {:>8.1} {:>4}   link {:>2} to {}: rx {} tx {} GB/s",
                            s.t_s,
                            g.gpu,
                            l.link,
                            l.peer,
                            gb(l.rx_bytes_per_s),
                            gb(l.tx_bytes_per_s)
                        ));
                    }
                }
            }
        }
        if let Some(h) = &self.header {
            for p in pair_traffic(&h.topology, s) {
                if p.busiest().unwrap_or(0.0) < 1e7 {
                    continue;
                }
                let kind = h
                    .topology
                    .link(p.a, p.b)
                    .and_then(|l| l.kind)
                    .map_or(String::new(), |k| format!(" {k}"));
                let share = |v: Option<f64>| match (v, p.line_rate_bytes_per_s) {
                    (Some(v), Some(r)) if r > 0.0 => {
                        format!(" ({:.0} % of line rate)", v / r * 100.0)
                    }
                    _ => String::new(),
                };
                lines.push(format!(
                    " {:>8.1} pair {}-{}{kind}: {}→{} {} GB/s{}, {}→{} {} GB/s{}",
                    s.t_s,
                    p.a,
                    p.b,
                    p.a,
                    p.b,
                    gb(p.a_to_b),
                    share(p.a_to_b),
                    p.b,
                    p.a,
                    gb(p.b_to_a),
                    share(p.b_to_a)
                ));
            }
        }
        for l in lines {
            self.say(&l)?;
        }
        Ok(())
    }
}
