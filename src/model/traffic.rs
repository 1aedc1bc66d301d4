//! Live traffic (`scalescope watch`, the app's Live overlay, the Prometheus endpoint): what each
//! GPU sent and received over PCIe and each NVLink during one interval, with its SM activity,
//! memory-bandwidth use, power, clocks, clock event reasons and processes. Plain data: the NVML
//! sampler is `telemetry::traffic`, the recording reader `telemetry::traffic::read_recording`.
//!
//! A recording (`watch --record FILE`) is JSON lines: the [`WatchHeader`] first (the machine's
//! topology, the interval, notes on what the GPUs can give), then one [`TrafficSample`] per
//! interval. Every reading says where it came from ([`ReadingSource`]); a reading the GPU cannot
//! give is absent (`null`), never 0.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::validate::{Bounds, quoted};
use super::{GpuProcess, NVLINKS_PER_GPU_MAX, ThrottleReason, Topology};

/// The first line's `format` of a recording.
pub const RECORDING_FORMAT: &str = "scalescope-watch";
/// The recording version this build writes and reads.
pub const RECORDING_VERSION: u32 = 1;

/// `--interval`: 0.1 s (GPM's samples are meaningful from about 100 ms) to an hour.
pub const INTERVAL_S: Bounds = Bounds::closed(0.1, 3600.0, "s");
/// A byte rate one link or one PCIe direction may carry in a recording: up to 10 TB/s (an
/// NVLink 5 GPU carries 0.9 TB/s per direction in all), so a `1e308` is refused, not drawn.
pub const BYTES_PER_S: Bounds = Bounds::closed(0.0, 1e13, "B/s");
/// Percentages (SM activity, memory bandwidth use).
pub const PERCENT: Bounds = Bounds::closed(0.0, 100.0, "%");
/// Power of one GPU in a recording.
pub const WATTS: Bounds = Bounds::closed(0.0, 10_000.0, "W");

/// Where a reading came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingSource {
    /// NVML GPU Performance Monitoring (Hopper and later): the counters between two GPM
    /// samples, one at each end of the interval.
    Gpm,
    /// NVML's per-link NVLink data counters (`NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX/TX`),
    /// differenced over the interval (GPUs without GPM).
    NvlinkCounter,
    /// `nvmlDeviceGetPcieThroughput`: the driver's last 20 ms window, not the whole interval
    /// (GPUs without GPM; it misses bursts and reads low, see docs/CSV.md).
    PcieWindow,
    /// `nvmlDeviceGetUtilizationRates`: the share of time a kernel ran (GPUs without GPM);
    /// not the same as GPM's SM activity.
    Utilization,
    /// The energy counter's step over the interval.
    EnergyCounter,
    /// `nvmlDeviceGetPowerUsage` (the driver's averaged reading).
    PowerReading,
}

impl ReadingSource {
    /// The word used in tables, CSV and Prometheus labels.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Gpm => "gpm",
            Self::NvlinkCounter => "nvlink_counter",
            Self::PcieWindow => "pcie_window",
            Self::Utilization => "utilization",
            Self::EnergyCounter => "energy_counter",
            Self::PowerReading => "power_reading",
        }
    }
}

impl fmt::Display for ReadingSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// What is at the far end of an NVLink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkPeer {
    /// Another GPU of the machine (its index).
    Gpu(usize),
    /// An NVSwitch: the traffic goes to whichever GPU the switch routes it to.
    Switch,
    /// Not known (NVML gave no remote device).
    Unknown,
}

impl fmt::Display for LinkPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gpu(g) => write!(f, "GPU {g}"),
            Self::Switch => f.write_str("NVSwitch"),
            Self::Unknown => f.write_str("unknown"),
        }
    }
}

impl LinkPeer {
    /// The Prometheus label value: the GPU index, `switch` or `unknown`.
    pub fn label(&self) -> String {
        match self {
            Self::Gpu(g) => g.to_string(),
            Self::Switch => "switch".into(),
            Self::Unknown => "unknown".into(),
        }
    }
}

/// One NVLink of one GPU during an interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NvLinkTraffic {
    /// NVML's link index (0–17 on H100).
    pub link: u32,
    pub peer: LinkPeer,
    /// Bytes per second the GPU received over the link; `None` when not read.
    pub rx_bytes_per_s: Option<f64>,
    /// Bytes per second the GPU sent over the link; `None` when not read.
    pub tx_bytes_per_s: Option<f64>,
}

/// One GPU during one interval. Every `None` is a reading the GPU did not give.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuTraffic {
    pub gpu: usize,
    /// PCIe bytes per second into the GPU (host→GPU copies, peers' writes over PCIe) as the
    /// source counts them: GPM counts packet bytes, headers and framing included (the data in
    /// them: [`GpuTraffic::pcie_data_bytes_per_s`]).
    pub pcie_rx_bytes_per_s: Option<f64>,
    /// PCIe bytes per second out of the GPU, counted the same way.
    pub pcie_tx_bytes_per_s: Option<f64>,
    pub pcie_source: Option<ReadingSource>,
    /// The GPU's active NVLinks; empty when it has none or they could not be read.
    #[serde(
        default,
        deserialize_with = "crate::model::validate::at_most::<_, _, { NVLINKS_PER_GPU_MAX as usize }>"
    )]
    pub nvlinks: Vec<NvLinkTraffic>,
    pub nvlink_source: Option<ReadingSource>,
    /// SM activity in % (GPM: the share of SM cycles busy; else the kernel-time utilization).
    pub sm_activity_pct: Option<f64>,
    pub sm_source: Option<ReadingSource>,
    /// Device-memory bandwidth used, in % of its peak (GPM; else the memory controller's
    /// busy time).
    pub memory_bw_pct: Option<f64>,
    pub memory_bw_source: Option<ReadingSource>,
    pub power_w: Option<f64>,
    pub power_source: Option<ReadingSource>,
    pub sm_clock_mhz: Option<u32>,
    pub memory_clock_mhz: Option<u32>,
    /// Clock event reasons active at the reading; `None` when not read.
    pub throttle: Option<Vec<ThrottleReason>>,
    /// Processes on the GPU; `None` when not read.
    pub processes: Option<Vec<GpuProcess>>,
}

impl GpuTraffic {
    /// An empty reading for GPU `gpu` (every value absent).
    pub fn new(gpu: usize) -> GpuTraffic {
        GpuTraffic {
            gpu,
            ..GpuTraffic::default()
        }
    }

    /// Bytes per second received over every NVLink; `None` when no link was read.
    pub fn nvlink_rx_bytes_per_s(&self) -> Option<f64> {
        sum(self.nvlinks.iter().map(|l| l.rx_bytes_per_s))
    }

    /// Bytes per second sent over every NVLink; `None` when no link was read.
    pub fn nvlink_tx_bytes_per_s(&self) -> Option<f64> {
        sum(self.nvlinks.iter().map(|l| l.tx_bytes_per_s))
    }
}

fn sum(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0.0) + v))
}

/// One interval's readings of every watched GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrafficSample {
    /// Seconds since the watch started, at the end of the interval.
    pub t_s: f64,
    /// The interval this sample covers, in seconds (the rates are over it).
    pub interval_s: f64,
    /// Wall-clock time at the end of the interval, seconds since the Unix epoch (to line a
    /// recording up with other tools' logs); `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_s: Option<f64>,
    /// At most one entry per GPU a topology may have ([`crate::model::MAX_GPUS`]).
    #[serde(
        deserialize_with = "crate::model::validate::at_most::<_, _, { crate::model::MAX_GPUS }>"
    )]
    pub gpus: Vec<GpuTraffic>,
}

impl TrafficSample {
    /// GPU `gpu`'s readings, if it is watched.
    pub fn gpu(&self, gpu: usize) -> Option<&GpuTraffic> {
        self.gpus.iter().find(|g| g.gpu == gpu)
    }
}

/// A recording's first line: what was watched and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchHeader {
    /// Always [`RECORDING_FORMAT`].
    pub format: String,
    /// [`RECORDING_VERSION`].
    pub version: u32,
    /// When the watch started, RFC 3339 UTC.
    pub started_at: String,
    /// The interval asked for, in seconds.
    pub interval_s: f64,
    /// The host's name, when known.
    pub host: Option<String>,
    /// scalescope's version that recorded it.
    pub scalescope_version: String,
    /// The GPUs watched (indices of `topology`).
    pub gpus: Vec<usize>,
    /// What the GPUs could not give and why (`GPU 1: no GPM (Ampere): PCIe from 20 ms
    /// windows`), in the order found.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The machine, for drawing the traffic on it and for the line rates.
    pub topology: Topology,
}

impl WatchHeader {
    /// A header for watching `gpus` of `topology` every `interval_s`.
    pub fn new(topology: Topology, gpus: Vec<usize>, interval_s: f64, started_at: String) -> Self {
        WatchHeader {
            format: RECORDING_FORMAT.into(),
            version: RECORDING_VERSION,
            started_at,
            interval_s,
            host: None,
            scalescope_version: env!("CARGO_PKG_VERSION").into(),
            gpus,
            notes: Vec::new(),
            topology,
        }
    }

    /// What a recording played back is, in the words the terminal (`watch --replay`) and the
    /// app (its top bar, the Live bar, the Sources list) both use: `replay of watch.jsonl,
    /// recorded 2026-11-26T09:00:00Z on vm`. Never the words of a live machine: the topology
    /// inside says `live`, but that was there and then.
    pub fn replay_label(&self, file: &str) -> String {
        format!(
            "replay of {file}, recorded {} on {}",
            self.started_at,
            self.host.as_deref().unwrap_or("an unnamed host")
        )
    }
}

/// A whole recording: the header and the samples, oldest first. The app keeps its Live window
/// as one and saves it with the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrafficRecording {
    pub header: WatchHeader,
    pub samples: Vec<TrafficSample>,
}

impl TrafficRecording {
    /// The recording as JSON lines (what `--record` writes and `--replay` reads).
    pub fn to_jsonl(&self) -> String {
        let mut out = header_line(&self.header);
        for s in &self.samples {
            out.push_str(&sample_line(s));
        }
        out
    }
}

/// The header as one JSON line, newline included.
pub fn header_line(header: &WatchHeader) -> String {
    let mut line = serde_json::to_string(header).unwrap_or_default();
    line.push('\n');
    line
}

/// A sample as one JSON line, newline included.
pub fn sample_line(sample: &TrafficSample) -> String {
    let mut line = serde_json::to_string(sample).unwrap_or_default();
    line.push('\n');
    line
}

/// What is wrong with a recording, and on which line (1-based; 0 for an empty file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for RecordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Parses a recording's text. Errors name the line and the field
/// (`line 7: gpus[0].pcie_rx_bytes_per_s: -5 B/s is out of range: …`).
pub fn parse_recording(text: &str) -> Result<TrafficRecording, RecordingError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((first_no, first)) = lines.next() else {
        return Err(RecordingError {
            line: 0,
            message: "empty: a recording starts with its header line".into(),
        });
    };
    let at = |no: usize| {
        move |message| RecordingError {
            line: no + 1,
            message,
        }
    };
    let mut header = parse_header(first).map_err(at(first_no))?;
    let mut samples = Vec::new();
    // A recorder killed mid-write leaves its last line cut (no newline after it): that line is
    // left out and the header says so; a bad line anywhere else is an error.
    let cut_last = !text.ends_with('\n');
    let mut lines = lines.peekable();
    while let Some((no, line)) = lines.next() {
        let s = match parse_sample(line, &header) {
            Ok(s) => s,
            Err(_) if cut_last && lines.peek().is_none() => {
                header.notes.push(format!(
                    "line {}: cut short (the recorder stopped while writing it): left out",
                    no + 1
                ));
                break;
            }
            Err(e) => return Err(at(no)(e)),
        };
        if let Some(prev) = samples.last().map(|p: &TrafficSample| p.t_s)
            && s.t_s <= prev
        {
            return Err(at(no)(format!(
                "t_s: {} {} (the line before has {prev})",
                s.t_s,
                if s.t_s < prev {
                    "goes back in time"
                } else {
                    "repeats the line before's time"
                }
            )));
        }
        samples.push(s);
    }
    Ok(TrafficRecording { header, samples })
}

/// What a live feed (the NVML sampler, a replay, a server's agent) sends, in order: the
/// header, samples, then the end (with the reason when it ended on an error).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveEvent {
    Header(Box<WatchHeader>),
    Sample(TrafficSample),
    End { error: Option<String> },
}

/// Parses and checks a header line.
pub fn parse_header(line: &str) -> Result<WatchHeader, String> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let format = value.get("format").and_then(|f| f.as_str());
    if format != Some(RECORDING_FORMAT) {
        return Err(format!(
            "not a scalescope watch recording (the first line's format is {}, expected \"{RECORDING_FORMAT}\")",
            format.map_or("missing".to_string(), quoted)
        ));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(u64::from(RECORDING_VERSION)) {
        return Err(format!(
            "recording version {} is not one this build reads (it reads {RECORDING_VERSION})",
            version.map_or("missing".to_string(), |v| v.to_string())
        ));
    }
    let header: WatchHeader = serde_path_to_error::deserialize(value)
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    check_header(&header)?;
    Ok(header)
}

/// Checks a header's figures and GPUs (a parsed line, or one a server sent).
pub fn check_header(header: &WatchHeader) -> Result<(), String> {
    INTERVAL_S
        .check(header.interval_s)
        .map_err(|e| format!("interval_s: {e}"))?;
    super::validate::distinct("gpus", &header.gpus, |g| g.to_string())?;
    for &g in &header.gpus {
        if header.topology.gpu(g).is_none() {
            return Err(format!(
                "gpus: GPU {g} is not in the recording's topology ({} GPUs)",
                header.topology.gpus.len()
            ));
        }
    }
    Ok(())
}

/// Parses and checks a sample line against its recording's header.
pub fn parse_sample(line: &str, header: &WatchHeader) -> Result<TrafficSample, String> {
    let mut de = serde_json::Deserializer::from_str(line);
    let sample: TrafficSample =
        serde_path_to_error::deserialize(&mut de).map_err(|e| match e.path().to_string() {
            p if p == "." => format!("not a sample: {}", e.inner()),
            p => format!("{p}: {}", e.inner()),
        })?;
    de.end().map_err(|e| format!("not one JSON object: {e}"))?;
    check_sample(&sample, header)?;
    Ok(sample)
}

/// The most a GPU's PCIe byte counts may be over its link's line rate per direction.
const PCIE_COUNT_OVER_LINE: f64 = 2.0;

/// A sample's time since the watch started: up to ten years (a later one is no recording, and
/// played back it would wait past any clock).
pub const T_S: Bounds = Bounds::closed(0.0, 3.2e8, "s");

/// Checks a sample's figures against its header (a parsed line, or one a server sent).
pub fn check_sample(s: &TrafficSample, header: &WatchHeader) -> Result<(), String> {
    T_S.check(s.t_s).map_err(|e| format!("t_s: {e}"))?;
    INTERVAL_S
        .check(s.interval_s)
        .map_err(|e| format!("interval_s: {e}"))?;
    let gpus = header.topology.gpus.len();
    // One reading per GPU, and per NVLink of a GPU: a second would be drawn over the first.
    super::validate::distinct("gpus[].gpu", &s.gpus, |g| format!("GPU {}", g.gpu))?;
    for (i, g) in s.gpus.iter().enumerate() {
        super::validate::distinct(&format!("gpus[{i}].nvlinks[].link"), &g.nvlinks, |l| {
            format!("link {}", l.link)
        })?;
        let at = |field: &str| format!("gpus[{i}].{field}");
        if !header.gpus.contains(&g.gpu) {
            return Err(format!(
                "{}: GPU {} is not one the header watches (GPUs: {})",
                at("gpu"),
                g.gpu,
                super::quantities::gpu_list(&header.gpus)
            ));
        }
        let checks = [
            ("pcie_rx_bytes_per_s", g.pcie_rx_bytes_per_s, BYTES_PER_S),
            ("pcie_tx_bytes_per_s", g.pcie_tx_bytes_per_s, BYTES_PER_S),
            ("sm_activity_pct", g.sm_activity_pct, PERCENT),
            ("memory_bw_pct", g.memory_bw_pct, PERCENT),
            ("power_w", g.power_w, WATTS),
        ];
        for (field, value, bounds) in checks {
            if let Some(v) = value {
                bounds.check(v).map_err(|e| format!("{}: {e}", at(field)))?;
            }
        }
        // PCIe counts packet bytes (headers, framing, read requests): a little over the line
        // rate at most, never twice it. 1e13 B/s on a Gen5 x16 link is no reading.
        if let Some(line) = header
            .topology
            .gpu(g.gpu)
            .and_then(|gpu| gpu.pcie.line_rate_gbps())
        {
            let most = Bounds::closed(0.0, PCIE_COUNT_OVER_LINE * line * 1e9, "B/s");
            for (field, value) in [
                ("pcie_rx_bytes_per_s", g.pcie_rx_bytes_per_s),
                ("pcie_tx_bytes_per_s", g.pcie_tx_bytes_per_s),
            ] {
                if let Some(v) = value {
                    most.check(v).map_err(|e| {
                        format!(
                            "{}: {e} (twice GPU {}'s PCIe line rate, {} GB/s)",
                            at(field),
                            g.gpu,
                            super::validate::number(line)
                        )
                    })?;
                }
            }
        }
        for (j, l) in g.nvlinks.iter().enumerate() {
            let at = |field: &str| format!("gpus[{i}].nvlinks[{j}].{field}");
            if l.link >= NVLINKS_PER_GPU_MAX {
                return Err(format!(
                    "{}: link {} is above the most a GPU has ({})",
                    at("link"),
                    l.link,
                    NVLINKS_PER_GPU_MAX - 1
                ));
            }
            if let LinkPeer::Gpu(p) = l.peer
                && (p >= gpus || p == g.gpu)
            {
                return Err(format!(
                    "{}: GPU {p} is not another GPU of the recording's topology ({gpus} GPUs)",
                    at("peer")
                ));
            }
            for (field, value) in [
                ("rx_bytes_per_s", l.rx_bytes_per_s),
                ("tx_bytes_per_s", l.tx_bytes_per_s),
            ] {
                if let Some(v) = value {
                    BYTES_PER_S
                        .check(v)
                        .map_err(|e| format!("{}: {e}", at(field)))?;
                }
            }
        }
    }
    Ok(())
}

/// How PCIe packs data into packets, for estimating the data in GPM's PCIe counts.
///
/// GPM counts the bytes of PCIe transaction-layer packets — headers and framing included, as
/// DCGM documents for the same counters (`DCGM_FI_PROF_PCIE_TX_BYTES`: "including both protocol
/// headers and data payloads"). On PCIe 3.0 and later each packet carries 4 bytes of framing
/// (the STP token with the sequence number), a 12-byte (completion) or 16-byte (64-bit address
/// write or read request) header and a 4-byte LCRC (PCI Express Base Specification 3.0+, §4.2.2
/// and §2.2): 20 bytes around a completion's data, 24 around a write's. A GPU copy engine pulls
/// host→GPU copies (the host's completions arrive, its read requests leave) and pushes
/// GPU→host copies (posted writes leave).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PcieFraming {
    /// Data bytes per packet: the link's Max_Payload_Size (256 B on the servers scalescope
    /// has seen; not read from the device).
    pub payload_bytes: f64,
    /// Bytes around each data packet: the mean of a completion's 20 and a write's 24.
    pub overhead_bytes: f64,
    /// A read request's size on the link (framing, 16-byte header, LCRC).
    pub read_request_bytes: f64,
    /// Data each read request asks for: Max_Read_Request_Size (512 B assumed).
    pub read_request_data: f64,
}

impl PcieFraming {
    /// The assumptions scalescope makes (see the fields).
    pub const ASSUMED: PcieFraming = PcieFraming {
        payload_bytes: 256.0,
        overhead_bytes: 22.0,
        read_request_bytes: 24.0,
        read_request_data: 512.0,
    };

    /// In words, for notes and hovers.
    pub const WORDS: &'static str = "data estimated from GPM's PCIe packet bytes: 22 bytes of header and framing per 256-byte payload, and the read requests of host-to-GPU copies, taken out";

    /// The data in `rx` and `tx` link bytes per second: each direction's packet overhead
    /// taken out, and from `tx` the read requests that fetched `rx`'s data.
    pub fn data(&self, rx: Option<f64>, tx: Option<f64>) -> (Option<f64>, Option<f64>) {
        let keep = self.payload_bytes / (self.payload_bytes + self.overhead_bytes);
        let rx_data = rx.map(|r| r * keep);
        let requests = rx_data.map_or(0.0, |d| {
            d / self.read_request_data * self.read_request_bytes
        });
        let tx_data = tx.map(|t| (t - requests).max(0.0) * keep);
        (rx_data, tx_data)
    }
}

impl GpuTraffic {
    /// PCIe data in and out, bytes per second: GPM's packet bytes with the packets' overhead
    /// taken out ([`PcieFraming::ASSUMED`]); other sources as they read.
    pub fn pcie_data_bytes_per_s(&self) -> (Option<f64>, Option<f64>) {
        match self.pcie_source {
            Some(ReadingSource::Gpm) => {
                PcieFraming::ASSUMED.data(self.pcie_rx_bytes_per_s, self.pcie_tx_bytes_per_s)
            }
            _ => (self.pcie_rx_bytes_per_s, self.pcie_tx_bytes_per_s),
        }
    }
}

/// NVLink traffic between two GPUs joined directly (not through a switch) during an interval:
/// what the drawing's line and the matrix cell of the pair show.
#[derive(Clone, Debug, PartialEq)]
pub struct PairTraffic {
    pub a: usize,
    pub b: usize,
    /// Bytes per second from `a` to `b` (a's transmit on its links to b, else b's receive).
    pub a_to_b: Option<f64>,
    /// Bytes per second from `b` to `a`.
    pub b_to_a: Option<f64>,
    /// The pair's per-direction line rate, in bytes per second, when known.
    pub line_rate_bytes_per_s: Option<f64>,
}

impl PairTraffic {
    /// The busier direction, in bytes per second.
    pub fn busiest(&self) -> Option<f64> {
        match (self.a_to_b, self.b_to_a) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        }
    }

    /// The busier direction's share of the line rate, 0–1 (may pass 1 slightly: counters
    /// include protocol overhead); `None` without a line rate.
    pub fn share(&self) -> Option<f64> {
        let rate = self.line_rate_bytes_per_s.filter(|r| *r > 0.0)?;
        Some(self.busiest()? / rate)
    }
}

/// The NVLink traffic of every directly joined GPU pair in `sample`, from the links' peers.
/// Pairs joined through an NVSwitch have none: a switch port's traffic goes to any GPU.
pub fn pair_traffic(topology: &Topology, sample: &TrafficSample) -> Vec<PairTraffic> {
    let mut pairs: Vec<PairTraffic> = Vec::new();
    let direction = |from: usize, to: usize| -> Option<f64> {
        let tx = sample.gpu(from).and_then(|g| {
            sum(g
                .nvlinks
                .iter()
                .filter(|l| l.peer == LinkPeer::Gpu(to))
                .map(|l| l.tx_bytes_per_s))
        });
        let rx = || {
            sample.gpu(to).and_then(|g| {
                sum(g
                    .nvlinks
                    .iter()
                    .filter(|l| l.peer == LinkPeer::Gpu(from))
                    .map(|l| l.rx_bytes_per_s))
            })
        };
        tx.or_else(rx)
    };
    let mut seen = std::collections::BTreeSet::new();
    for g in &sample.gpus {
        for l in &g.nvlinks {
            if let LinkPeer::Gpu(p) = l.peer {
                let (a, b) = (g.gpu.min(p), g.gpu.max(p));
                if a != b && seen.insert((a, b)) {
                    pairs.push(PairTraffic {
                        a,
                        b,
                        a_to_b: direction(a, b),
                        b_to_a: direction(b, a),
                        line_rate_bytes_per_s: topology
                            .link(a, b)
                            .and_then(|l| l.line_rate.as_ref())
                            .map(|r| r.gbps * 1e9),
                    });
                }
            }
        }
    }
    pairs.sort_by_key(|p| (p.a, p.b));
    pairs
}

/// GPU `gpu`'s PCIe line rate per direction in bytes per second, when known (what a PCIe
/// reading's share is of).
pub fn pcie_line_rate_bytes_per_s(topology: &Topology, gpu: usize) -> Option<f64> {
    topology
        .gpu(gpu)
        .and_then(|g| g.pcie.line_rate_gbps())
        .map(|r| r * 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuLink, LineRate, LinkKind, TopologySource};

    fn two_gpus() -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        for index in 0..2 {
            let mut g = crate::model::Gpu {
                index,
                ..Default::default()
            };
            g.pcie.gen_current = Some(5);
            g.pcie.width_current = Some(16);
            t.gpus.push(g);
        }
        let mut link = GpuLink::unknown(0, 1);
        link.kind = Some(LinkKind::Nv(18));
        link.line_rate = Some(LineRate {
            gbps: 450.0,
            basis: "test".into(),
        });
        t.links.push(link);
        t
    }

    fn sample() -> TrafficSample {
        let link = |link, peer, rx, tx| NvLinkTraffic {
            link,
            peer: LinkPeer::Gpu(peer),
            rx_bytes_per_s: rx,
            tx_bytes_per_s: tx,
        };
        let mut g0 = GpuTraffic::new(0);
        g0.pcie_rx_bytes_per_s = Some(50e9);
        g0.nvlinks = vec![
            link(0, 1, Some(10e9), Some(100e9)),
            link(1, 1, Some(10e9), Some(100e9)),
        ];
        let mut g1 = GpuTraffic::new(1);
        g1.nvlinks = vec![link(0, 0, Some(190e9), None), link(1, 0, None, None)];
        TrafficSample {
            t_s: 1.0,
            interval_s: 1.0,
            unix_s: Some(1.8e9),
            gpus: vec![g0, g1],
        }
    }

    /// A replay names its file, when and where it was recorded — never the live words of the
    /// topology inside.
    #[test]
    fn a_replay_label_names_the_file_and_the_recording() {
        let mut t = two_gpus();
        t.source = TopologySource::Live {
            hostname: Some("vm".into()),
            driver_version: None,
            nvml_version: None,
            cuda_driver_version: None,
        };
        let mut h = WatchHeader::new(t, vec![0, 1], 1.0, "2026-11-26T19:16:14Z".into());
        assert_eq!(
            h.replay_label("w.jsonl"),
            "replay of w.jsonl, recorded 2026-11-26T19:16:14Z on an unnamed host"
        );
        h.host = Some("vm".into());
        let label = h.replay_label("w.jsonl");
        assert_eq!(
            label,
            "replay of w.jsonl, recorded 2026-11-26T19:16:14Z on vm"
        );
        assert!(!label.contains("live"));
    }

    #[test]
    fn pair_traffic_sums_links_and_falls_back_to_the_peers_receive() {
        let pairs = pair_traffic(&two_gpus(), &sample());
        assert_eq!(pairs.len(), 1);
        let p = &pairs[0];
        assert_eq!((p.a, p.b), (0, 1));
        assert_eq!(p.a_to_b, Some(200e9));
        // GPU 1 gave no transmit figure: GPU 0's receive stands in.
        assert_eq!(p.b_to_a, Some(20e9));
        assert!((p.share().unwrap() - 200.0 / 450.0).abs() < 1e-9);
    }

    #[test]
    fn pcie_data_takes_the_packet_overhead_and_read_requests_out() {
        let f = PcieFraming::ASSUMED;
        // Writes only (GPU→host): 256 of every 278 bytes are data.
        let (rx, tx) = f.data(Some(0.0), Some(278e9));
        assert_eq!(rx, Some(0.0));
        assert!((tx.unwrap() - 256e9).abs() < 1e3);
        // Host→GPU: completions in, their read requests out (24 B per 512 B of data).
        let (rx, tx) = f.data(Some(278e9), Some(12e9));
        assert!((rx.unwrap() - 256e9).abs() < 1e3);
        assert!(tx.unwrap().abs() < 1e3, "{tx:?}");
        // Absent stays absent; other sources pass through.
        assert_eq!(f.data(None, None), (None, None));
        let mut g = GpuTraffic::new(0);
        g.pcie_rx_bytes_per_s = Some(1e9);
        g.pcie_source = Some(ReadingSource::PcieWindow);
        assert_eq!(g.pcie_data_bytes_per_s(), (Some(1e9), None));
    }

    #[test]
    fn absent_links_sum_to_none_not_zero() {
        let mut g = GpuTraffic::new(0);
        assert_eq!(g.nvlink_rx_bytes_per_s(), None);
        g.nvlinks.push(NvLinkTraffic {
            link: 0,
            peer: LinkPeer::Switch,
            rx_bytes_per_s: None,
            tx_bytes_per_s: Some(1.0),
        });
        assert_eq!(g.nvlink_rx_bytes_per_s(), None);
        assert_eq!(g.nvlink_tx_bytes_per_s(), Some(1.0));
    }

    #[test]
    fn a_recording_round_trips_and_bad_lines_are_named() {
        let header = WatchHeader::new(two_gpus(), vec![0, 1], 1.0, "2026-11-26T00:00:00Z".into());
        let rec = TrafficRecording {
            header,
            samples: vec![sample()],
        };
        let text = rec.to_jsonl();
        assert_eq!(parse_recording(&text).unwrap(), rec);

        let bad = text.replace("50000000000.0", "-5.0");
        let err = parse_recording(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("line 2: gpus[0].pcie_rx_bytes_per_s: -5"),
            "{err}"
        );

        let bad = text.replace(
            "\"rx_bytes_per_s\":10000000000.0",
            "\"rx_bytes_per_s\":\"x\"",
        );
        let err = parse_recording(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with("line 2: gpus[0].nvlinks[0].rx_bytes_per_s:"),
            "{err}"
        );

        let err = parse_recording("{\"format\":\"other\"}\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a scalescope watch recording"), "{err}");
        assert!(
            parse_recording("")
                .unwrap_err()
                .message
                .starts_with("empty")
        );

        let mut back = rec.clone();
        back.samples.push(TrafficSample {
            t_s: 0.5,
            ..sample()
        });
        let err = parse_recording(&back.to_jsonl()).unwrap_err().to_string();
        assert!(err.contains("goes back in time"), "{err}");

        // A last line cut mid-write is left out and said; the same line ended is an error.
        let cut = &text[..text.len() - 20];
        let read = parse_recording(cut).unwrap();
        assert!(read.samples.is_empty());
        assert!(
            read.header.notes[0].contains("cut short"),
            "{:?}",
            read.header.notes
        );
        assert!(parse_recording(&format!("{cut}\n")).is_err());
    }
}
