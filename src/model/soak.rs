//! A burn-in (`scalescope check --soak`): what each GPU did and how it looked, second by second,
//! under a sustained load, and what happened on the way (phase changes, wrong GEMM results, Xid
//! events). Plain data; the verdict rules are `health::soak`, the loads `bench::cuda::soak`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::ThrottleReason;

/// One kind of load a soak runs (`--soak-load gemm,memory,pcie,p2p,nccl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SoakLoad {
    /// bf16 GEMMs (cuBLAS, fp32 accumulate) on deterministic inputs, every result checked.
    Gemm,
    /// Device-memory copies (one buffer into another on the same GPU).
    Memory,
    /// Host↔GPU copies both ways at once (pinned host memory).
    Pcie,
    /// GPU→GPU copies to the next GPU of the selection (needs two GPUs).
    P2p,
    /// NCCL all-reduce over every selected GPU (needs two GPUs).
    Nccl,
}

impl SoakLoad {
    /// Every load, in the order a soak cycles through them.
    pub const ALL: [SoakLoad; 5] = [Self::Gemm, Self::Memory, Self::Pcie, Self::P2p, Self::Nccl];

    /// `gemm`, `memory`, `pcie`, `p2p`, `nccl`.
    pub fn id(&self) -> &'static str {
        match self {
            Self::Gemm => "gemm",
            Self::Memory => "memory",
            Self::Pcie => "pcie",
            Self::P2p => "p2p",
            Self::Nccl => "nccl",
        }
    }

    pub fn from_id(id: &str) -> Option<SoakLoad> {
        Self::ALL.into_iter().find(|l| l.id() == id)
    }

    /// Whether the load needs two GPUs or more.
    pub fn needs_peers(&self) -> bool {
        matches!(self, Self::P2p | Self::Nccl)
    }

    /// What the phase's throughput figure is, for labels: `TFLOP/s` or `GB/s`.
    pub fn unit(&self) -> &'static str {
        match self {
            Self::Gemm => "TFLOP/s",
            _ => "GB/s",
        }
    }

    /// The unit as a line of text shows it: [`Self::unit`], and for `pcie` that the figure adds
    /// both directions (90 GB/s on a link of 63 GB/s each way is not above its line rate).
    pub fn unit_words(&self) -> &'static str {
        match self {
            Self::Pcie => "GB/s both directions",
            _ => self.unit(),
        }
    }

    /// What the figure counts, in words (tables, CSV docs).
    pub fn figure_words(&self) -> &'static str {
        match self {
            Self::Gemm => "bf16 GEMM TFLOP/s (2·d³ per product)",
            Self::Memory => "device-memory copy GB/s (bytes copied; each is read and written)",
            Self::Pcie => "host↔GPU GB/s (both directions added)",
            Self::P2p => "GB/s sent to the next GPU",
            Self::Nccl => "all-reduce bus bandwidth GB/s (nccl-tests' busbw)",
        }
    }
}

impl fmt::Display for SoakLoad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.id())
    }
}

/// Whether `speed` is a soak replay pace: 0 (at once) or a hundredth of the recorded pace to a
/// thousand times it (the same span as `watch --replay-speed`; a pace of 1e-300 would make one
/// interval's wait longer than any clock holds).
pub fn replay_speed_ok(speed: f64) -> bool {
    speed == 0.0 || (0.01..=1000.0).contains(&speed)
}

/// What a soak runs: how long, which loads, or a recording to play back instead.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SoakOptions {
    /// Seconds of load (at least 60: [`parse_duration`]).
    pub duration_s: f64,
    /// Loads in cycle order; empty: gemm, memory, pcie, and p2p, nccl with two GPUs or more.
    pub loads: Vec<SoakLoad>,
    /// Play this recording (a `soak.csv`) back instead of loading the GPUs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    /// Replay pace: 1 = as recorded (one interval per interval), 0 = at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_speed: Option<f64>,
    /// NCCL library for the nccl load.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_lib: Option<std::path::PathBuf>,
}

/// One GPU over one sampling interval (normally a second). Every reading the GPU or the load
/// could not give is `None` (an empty CSV cell), never 0. Counters are the running totals NVML
/// reports (they grow; the verdict looks at growth, not at the value).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SoakSample {
    /// Seconds since the soak's load began, at the end of the interval.
    pub t_s: f64,
    pub gpu: usize,
    /// The load running in the interval; `None` between phases.
    pub phase: Option<SoakLoad>,
    /// The phase's throughput over the interval: TFLOP/s for `gemm`, GB/s otherwise.
    pub rate: Option<f64>,
    pub sm_clock_mhz: Option<u32>,
    pub mem_clock_mhz: Option<u32>,
    /// Mean power over the interval (the energy counter's step ÷ time), else NVML's reading.
    pub power_w: Option<f64>,
    pub gpu_temp_c: Option<f64>,
    pub mem_temp_c: Option<f64>,
    pub fan_percent: Option<u32>,
    /// NVML's GPU utilization (percent of the last period a kernel ran).
    pub util_percent: Option<u32>,
    /// Clock event (throttle) reasons active at the reading; `None` when not read.
    pub throttle: Option<Vec<ThrottleReason>>,
    pub ecc_corrected: Option<u64>,
    pub ecc_uncorrected: Option<u64>,
    pub remapped_correctable: Option<u64>,
    pub remapped_uncorrectable: Option<u64>,
    /// Pages retired (single- and double-bit causes together).
    pub retired_pages: Option<u64>,
    pub pcie_replays: Option<u64>,
    /// NVLink CRC + replay + recovery errors summed over the GPU's links; `None` without NVLink.
    pub nvlink_errors: Option<u64>,
    /// Xid events NVML reported for this GPU in the interval.
    pub xid: Vec<u64>,
    /// GEMM results checked in the interval, and how many of them were wrong.
    pub checked: Option<u64>,
    pub mismatches: Option<u64>,
    /// Other processes with a compute context on the GPU at the reading (their pids).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<u32>,
    /// The power limit in force at the reading, W.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_limit_w: Option<f64>,
    /// The host's CPUs over the interval: percent busy (not idle or waiting on I/O) and percent
    /// taken by the hypervisor (steal), from /proc/stat; the same for every GPU of a reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_percent: Option<f64>,
}

/// Something that happened at one moment of a soak.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SoakEvent {
    /// Seconds since the load began.
    pub t_s: f64,
    /// The GPU it is about, if one.
    pub gpu: Option<usize>,
    pub kind: SoakEventKind,
    /// In words, for tables and the terminal.
    pub text: String,
}

/// What kind of [`SoakEvent`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SoakEventKind {
    /// A phase of this load began on every GPU.
    Phase { load: SoakLoad },
    /// A load could not run (its reason in the text); the soak went on without it.
    Skipped { load: SoakLoad },
    /// A GEMM result differed from the reference: the first wrong element (column-major row and
    /// column of the d×d product), the bits found and expected, and how many elements were wrong.
    Mismatch {
        row: u64,
        col: u64,
        got: u16,
        expected: u16,
        wrong: u64,
        /// What it was compared with: `this GPU's first product`, `GPU 0's product`.
        against: String,
    },
    /// NVML reported an Xid (a driver-detected GPU error).
    Xid { xid: u64 },
    /// Something else worth keeping (an error that ended a load, the interruption).
    Note,
}

/// Everything a soak produced: the series, the events, and how it ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SoakSection {
    /// The recording this section was played back from, if it was (a soak is always measured:
    /// a load cannot be modeled; a replay shows what was measured then).
    pub replay_of: Option<String>,
    /// When the load began (RFC 3339, UTC, milliseconds): `time_s` 0 of the series.
    pub started_at: Option<String>,
    /// The duration asked for, seconds.
    pub duration_s: f64,
    /// Seconds of load actually run (less when interrupted).
    pub elapsed_s: f64,
    /// The sampling interval, seconds.
    pub interval_s: f64,
    /// The loads asked for, in cycle order.
    pub loads: Vec<SoakLoad>,
    /// The GPUs soaked (indices as the report's topology numbers them).
    pub gpus: Vec<usize>,
    /// How the GEMMs ran and how they were checked (`cuBLAS GemmEx bf16 8192³ …`).
    pub gemm: Option<String>,
    /// One per GPU per interval, in time order.
    pub samples: Vec<SoakSample>,
    pub events: Vec<SoakEvent>,
    /// True once the soak ran its whole duration.
    pub finished: bool,
}

impl SoakSection {
    /// The samples of `gpu`, in time order.
    pub fn gpu_samples(&self, gpu: usize) -> impl Iterator<Item = &SoakSample> {
        self.samples.iter().filter(move |s| s.gpu == gpu)
    }

    /// When each phase began (from the phase events), in time order.
    pub fn phase_starts(&self) -> Vec<(f64, SoakLoad)> {
        let mut v: Vec<(f64, SoakLoad)> = self
            .events
            .iter()
            .filter_map(|e| match e.kind {
                SoakEventKind::Phase { load } if e.t_s.is_finite() => Some((e.t_s, load)),
                _ => None,
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    }

    /// The GPUs that have samples, in order (the selection when there are none yet).
    pub fn sampled_gpus(&self) -> Vec<usize> {
        let mut g: Vec<usize> = self.samples.iter().map(|s| s.gpu).collect();
        g.sort_unstable();
        g.dedup();
        if g.is_empty() {
            return self.gpus.clone();
        }
        g
    }
}

/// How a soak's duration is written: `90s`, `30m`, `2h`, `1h30m`, or bare seconds; at least a
/// minute, at most a week.
pub fn parse_duration(text: &str) -> Result<f64, String> {
    const MIN_S: f64 = 60.0;
    const MAX_S: f64 = 7.0 * 24.0 * 3600.0;
    let t = text.trim();
    let bad = || {
        format!(
            "soak duration {}: expected a duration like 90s, 30m, 2h or 1h30m",
            super::validate::quoted(text)
        )
    };
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = 0.0;
    let mut num = String::new();
    let mut any_unit = false;
    for c in t.chars() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let scale = match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            'd' => 86400.0,
            _ => return Err(bad()),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        total += v * scale;
        num.clear();
        any_unit = true;
    }
    if !num.is_empty() {
        if any_unit {
            return Err(bad());
        }
        total = num.parse().map_err(|_| bad())?;
    }
    if !total.is_finite() {
        return Err(bad());
    }
    if total < MIN_S {
        return Err(format!(
            "soak duration {}: at least 1 minute (60s) is needed to judge stability",
            super::validate::quoted(text)
        ));
    }
    if total > MAX_S {
        return Err(format!(
            "soak duration {}: at most 7 days (168h)",
            super::validate::quoted(text)
        ));
    }
    Ok(total)
}

/// A duration in words: `45 s`, `4 min 10 s`, `2 h 05 min`.
pub fn duration_words(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// Parses `--soak-load`: ids separated by commas, each once.
pub fn parse_loads(text: &str) -> Result<Vec<SoakLoad>, String> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let Some(l) = SoakLoad::from_id(part) else {
            return Err(format!(
                "--soak-load {}: unknown load (gemm, memory, pcie, p2p, nccl)",
                super::validate::quoted(part)
            ));
        };
        if out.contains(&l) {
            return Err(format!("--soak-load: {l} given twice"));
        }
        out.push(l);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30m"), Ok(1800.0));
        assert_eq!(parse_duration("1h30m"), Ok(5400.0));
        assert_eq!(parse_duration("90"), Ok(90.0));
        assert_eq!(parse_duration("1m"), Ok(60.0));
        for bad in ["0", "abc", "1e9h", "", "59s", "5x", "1m30", "-5m", "8d"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.starts_with("soak duration"), "{bad}: {e}");
        }
        assert_eq!(duration_words(250.0), "4 min 10 s");
        assert_eq!(duration_words(7500.0), "2 h 05 min");
    }

    #[test]
    fn loads() {
        assert_eq!(
            parse_loads("gemm, pcie"),
            Ok(vec![SoakLoad::Gemm, SoakLoad::Pcie])
        );
        assert!(parse_loads("gemm,gemm").is_err());
        assert!(parse_loads("gemm,disk").unwrap_err().contains("\"disk\""));
    }
}
