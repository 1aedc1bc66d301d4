//! What to run: the selected GPUs, tests and sizes expanded into cases.

use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::model::{Endpoint, GpuSelection, Shape, TestId, Topology};

/// Default buffer size: 512 MiB, as nvbandwidth.
pub const DEFAULT_BYTES: u64 = 512 << 20;
/// Default copies per sample.
pub const DEFAULT_ITERS: u32 = 16;
/// Default samples per cell (the median of these is reported).
pub const DEFAULT_SAMPLES: u32 = 5;
/// Small buffers get more copies per sample, so that a sample moves at least this many bytes
/// and lasts long enough to be stable (16 copies of 4 KiB take ≈ 30 µs, dominated by launch
/// jitter: 27 high-variance warnings in one `--full` run on 2× H200).
pub const SAMPLE_BYTES: u64 = 32 << 20;
/// At most this many copies per sample: all of a sample's copies are queued behind the spin
/// kernel before it is released, and a stream's queue holds about a thousand commands.
pub const MAX_ITERS: u32 = 256;

/// Copies per sample for a buffer of `bytes`: at least `iters`, more for small buffers (up to
/// [`SAMPLE_BYTES`] per sample and [`MAX_ITERS`] copies).
pub fn copies_per_sample(bytes: u64, iters: u32) -> u32 {
    let want = SAMPLE_BYTES
        .div_ceil(bytes.max(1))
        .min(u64::from(MAX_ITERS)) as u32;
    iters.max(want)
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BandwidthOptions {
    /// The GPUs (every GPU when none are named).
    pub gpus: GpuSelection,
    /// Tests; empty = every test.
    pub tests: Vec<TestId>,
    /// Buffer sizes in bytes; empty = [`DEFAULT_BYTES`].
    pub sizes: Vec<u64>,
    /// Copies per sample, at least (small buffers get more: [`copies_per_sample`]; latency
    /// tests: thousands of accesses per sample regardless).
    pub iters: u32,
    /// Samples per cell, at least 3 for a meaningful median.
    pub samples: u32,
    /// Which GPU pairs the pair tests cover.
    #[serde(default)]
    pub pairs: PairScope,
    /// How the SM copy tests' kernel runs (measured runs only). Written only when not the
    /// defaults.
    #[serde(default, skip_serializing_if = "CopyKernelOptions::is_default")]
    pub copy_kernel: CopyKernelOptions,
}

/// How the SM copy tests (`p2p_*_sm`) run scalescope's copy kernel: the tuned defaults, or one
/// of the experiments of docs/BENCHMARKS.md (`scripts/sm-copy-tuning.sh` sweeps them). Rows
/// measured with anything but the defaults say which in their reason.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyKernelOptions {
    /// The 16-byte grid-stride kernel, or Hopper's bulk copy.
    pub kernel: CopyKernel,
    /// Loads in flight per thread, 1 to 16 (grid-stride kernel).
    pub unroll: u32,
    /// Resident blocks per SM, at most as many as fit (`None`: as many as fit, up to 32).
    pub blocks_per_sm: Option<u32>,
    /// A grid of exactly this many blocks instead of SMs × blocks per SM.
    pub grid: Option<u32>,
    /// Blocks per SM of the bulk-copy kernel, 1 to 32.
    pub bulk_blocks_per_sm: u32,
    /// The loads' and stores' cache behaviour, 0 to 6 (`SCALESCOPE_COPY_VARIANT` in bench.cu):
    /// 0 plain, 1 streaming `.cs` (the default), 2 L2-only `.cg`, 3/4 non-coherent loads asking L2 for
    /// 256/128-byte fetches, 5 write-through stores, 6 coherent loads (not the read-only path).
    pub variant: u32,
    /// Each block copies one contiguous range instead of striding over the whole buffer.
    pub contiguous: bool,
    /// GPU↔GPU copies: the fraction, strictly between 0 and 1, of the buffer that the other
    /// GPU's SMs copy at the same time (the reader pulls the head, the writer pushes the tail).
    pub sm_split: Option<f64>,
    /// Each copy of a sample as its own kernel launch, instead of the sample's copies as passes
    /// of one launch (nvbandwidth's `loopCount` inside its kernel, the default).
    pub launch_per_copy: bool,
    /// How the latency tests' pointer chase loads (`SCALESCOPE_CHASE_LOAD` in bench.cu).
    pub chase_load: ChaseLoad,
}

/// How the latency tests' pointer chase loads each link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChaseLoad {
    /// Plain loads, as nvbandwidth's `ptrChasingKernel`: a launch never visits a line twice and
    /// starts with an empty L1, so every load travels to the memory's owner.
    #[default]
    Plain,
    /// Volatile loads (`ld.global.cv`: fetched again).
    Volatile,
    /// Loads cached in L2 only (`ld.global.cg`).
    L2Only,
}

impl ChaseLoad {
    /// How the loads read, in a row's reason.
    pub fn label(self) -> &'static str {
        match self {
            ChaseLoad::Plain => "plain",
            ChaseLoad::Volatile => "volatile",
            ChaseLoad::L2Only => "L2-only",
        }
    }

    /// bench.cu's `SCALESCOPE_CHASE_LOAD` for this kind.
    pub fn define(self) -> u32 {
        match self {
            ChaseLoad::Plain => 0,
            ChaseLoad::Volatile => 1,
            ChaseLoad::L2Only => 2,
        }
    }
}

/// Which copy kernel the SM copy tests use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CopyKernel {
    /// 16-byte loads and stores over a grid of blocks (`copy_kernel` in bench.cu).
    #[default]
    GridStride,
    /// The bulk-copy engine (TMA, `copy_bulk`), on sm_90 and later with 16-byte aligned buffers;
    /// elsewhere the grid-stride kernel.
    Bulk,
}

impl Default for CopyKernelOptions {
    fn default() -> Self {
        Self {
            kernel: CopyKernel::GridStride,
            unroll: 8,
            blocks_per_sm: None,
            grid: None,
            bulk_blocks_per_sm: 2,
            variant: 1,
            contiguous: false,
            sm_split: None,
            launch_per_copy: false,
            chase_load: ChaseLoad::Plain,
        }
    }
}

impl CopyKernelOptions {
    /// True for scalescope's tuned defaults.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// The settings that differ from the defaults, e.g. `bulk kernel, 2 blocks per SM`; empty for
/// the defaults.
impl std::fmt::Display for CopyKernelOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = Self::default();
        let mut parts: Vec<String> = Vec::new();
        if self.kernel == CopyKernel::Bulk {
            parts.push(format!(
                "bulk kernel, {} bulk blocks per SM",
                self.bulk_blocks_per_sm
            ));
        } else if self.bulk_blocks_per_sm != d.bulk_blocks_per_sm {
            parts.push(format!("{} bulk blocks per SM", self.bulk_blocks_per_sm));
        }
        if self.unroll != d.unroll {
            parts.push(format!("{} loads in flight per thread", self.unroll));
        }
        if let Some(b) = self.blocks_per_sm {
            parts.push(format!("at most {b} blocks per SM"));
        }
        if let Some(g) = self.grid {
            parts.push(format!("a grid of {g} blocks"));
        }
        if self.variant != d.variant {
            parts.push(format!("load/store variant {}", self.variant));
        }
        if self.contiguous {
            parts.push("one contiguous range per block".into());
        }
        if let Some(s) = self.sm_split {
            parts.push(format!("{:.0} % copied by the other GPU's SMs", s * 100.0));
        }
        if self.launch_per_copy {
            parts.push("one kernel launch per copy".into());
        }
        match self.chase_load {
            ChaseLoad::Plain => {}
            ChaseLoad::Volatile => parts.push("volatile chase loads".into()),
            ChaseLoad::L2Only => parts.push("L2-only chase loads".into()),
        }
        f.write_str(&parts.join(", "))
    }
}

/// The most GPUs whose every pair the presets (`--bench`'s suites, `scalescope check`) copy
/// between. The pairs grow as n²: 72 GPUs (an NVL72 rack) are 5,112 ordered pairs, ten results
/// each; 1,000 GPUs would be ten million results — gigabytes, and days on GPUs. Above it, pair
/// tests run on the first pair of each kind of connection ([`PairScope::PerLinkKind`]), which
/// is what the matrices would repeat; `bench bandwidth` still runs every pair when asked.
pub const ALL_PAIRS_MAX_GPUS: usize = 72;

/// Which GPU pairs the GPU↔GPU tests cover.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairScope {
    /// Every ordered pair of the selected GPUs (nvbandwidth's matrix).
    #[default]
    All,
    /// The first pair (lowest indices, both directions) of each kind of connection the topology
    /// shows (`NV18`, `NODE`, `SYS`, …): one curve per kind instead of N·(N−1) on a machine
    /// whose pairs of a kind are alike, as an NVSwitch box's are.
    PerLinkKind,
}

impl PairScope {
    /// Every pair over up to [`ALL_PAIRS_MAX_GPUS`] GPUs, else the first pair of each kind.
    pub fn bounded(gpus: usize) -> Self {
        if gpus > ALL_PAIRS_MAX_GPUS {
            PairScope::PerLinkKind
        } else {
            PairScope::All
        }
    }
}

impl Default for BandwidthOptions {
    fn default() -> Self {
        Self {
            gpus: GpuSelection::all(),
            tests: Vec::new(),
            sizes: Vec::new(),
            iters: DEFAULT_ITERS,
            samples: DEFAULT_SAMPLES,
            pairs: PairScope::All,
            copy_kernel: CopyKernelOptions::default(),
        }
    }
}

/// One unit of work for a backend: one test, one (src, dst), one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub test: TestId,
    pub src: Endpoint,
    pub dst: Endpoint,
    /// All selected GPUs (for `all_to_one`, `host_to_all` and friends), shared by every case
    /// of a plan (a copy per case was 8 GB for every pair of 1,000 GPUs).
    pub gpus: std::sync::Arc<[usize]>,
    pub bytes: u64,
    pub iters: u32,
    pub samples: u32,
}

impl Case {
    /// The rows the case reports, as (src, dst): one per GPU for `host_to_all`, `all_to_host`
    /// and `all_pairs`, else one.
    pub fn cells(&self) -> Vec<(Endpoint, Endpoint)> {
        match self.test.shape() {
            Shape::HostAll { to_device: true } => self
                .gpus
                .iter()
                .map(|&g| (Endpoint::Host, Endpoint::Gpu(g)))
                .collect(),
            Shape::HostAll { to_device: false } => self
                .gpus
                .iter()
                .map(|&g| (Endpoint::Gpu(g), Endpoint::Host))
                .collect(),
            Shape::AllPairs => self
                .gpus
                .iter()
                .map(|&g| (Endpoint::All, Endpoint::Gpu(g)))
                .collect(),
            _ => vec![(self.src, self.dst)],
        }
    }
}

/// The expanded list of cases.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub gpus: Vec<usize>,
    pub cases: Vec<Case>,
}

/// Parses `--tests h2d,p2p_read_ce` (or `all`).
pub fn parse_test_list(s: &str) -> Result<Vec<TestId>, BenchError> {
    if s.trim() == "all" {
        return Ok(Vec::new());
    }
    let known = || {
        TestId::ALL
            .iter()
            .map(|t| t.id())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let out: Vec<TestId> = s
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|id| {
            TestId::from_id(id).ok_or_else(|| BenchError::UnknownTest {
                id: crate::model::validate::quoted(id),
                known: known(),
            })
        })
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(BenchError::BadOption(format!(
            "--tests: no test given (known: {}, all)",
            known()
        )));
    }
    crate::model::validate::distinct("--tests", &out, |t| t.id().to_string())
        .map_err(BenchError::BadOption)?;
    Ok(out)
}

impl Plan {
    /// Expands options over a topology. Fails on a GPU index the topology does not have, or on
    /// iters/samples of zero.
    pub fn new(topo: &Topology, opts: &BandwidthOptions) -> Result<Plan, BenchError> {
        let gpus = select_gpus(topo, &opts.gpus)?;
        if opts.iters == 0 {
            return Err(BenchError::BadOption("--iters must be at least 1".into()));
        }
        if opts.samples == 0 {
            return Err(BenchError::BadOption("--samples must be at least 1".into()));
        }
        let tests: Vec<TestId> = if opts.tests.is_empty() {
            TestId::ALL.to_vec()
        } else {
            opts.tests.clone()
        };
        let sizes = if opts.sizes.is_empty() {
            vec![DEFAULT_BYTES]
        } else {
            opts.sizes.clone()
        };
        let mut cases = Vec::new();
        let shared: std::sync::Arc<[usize]> = gpus.as_slice().into();
        for &test in &tests {
            for &bytes in &sizes {
                for (src, dst) in endpoints(test, &gpus, opts.pairs, topo) {
                    cases.push(Case {
                        test,
                        src,
                        dst,
                        gpus: shared.clone(),
                        bytes,
                        iters: copies_per_sample(bytes, opts.iters),
                        samples: opts.samples,
                    });
                }
            }
        }
        Ok(Plan { gpus, cases })
    }
}

/// The GPUs `asked` names (empty: every GPU of `topo`), each checked against the topology.
pub fn select_gpus(topo: &Topology, asked: &GpuSelection) -> Result<Vec<usize>, BenchError> {
    let available = topo.gpu_indices();
    let gpus = if asked.is_all() {
        available.clone()
    } else {
        for &g in asked.indices() {
            if !available.contains(&g) {
                return Err(BenchError::NoSuchGpu {
                    index: g,
                    available: if available.is_empty() {
                        "none".to_string()
                    } else {
                        available
                            .iter()
                            .map(|i| i.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                });
            }
        }
        asked.indices().to_vec()
    };
    if gpus.is_empty() {
        return Err(BenchError::Unavailable("no GPUs to measure".to_string()));
    }
    Ok(gpus)
}

/// The (src, dst) cells a test covers over the selected GPUs.
fn endpoints(
    test: TestId,
    gpus: &[usize],
    scope: PairScope,
    topo: &Topology,
) -> Vec<(Endpoint, Endpoint)> {
    let g = Endpoint::Gpu;
    // Unordered pairs (a listed before b in the selection), narrowed to one per link kind.
    let mut seen = Vec::new();
    let unordered: Vec<(usize, usize)> = gpus
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| gpus[i + 1..].iter().map(move |&b| (a.min(b), a.max(b))))
        .filter(|&(a, b)| match scope {
            PairScope::All => true,
            PairScope::PerLinkKind => {
                let kind = topo.link(a, b).and_then(|l| l.kind);
                let fresh = !seen.contains(&kind);
                if fresh {
                    seen.push(kind);
                }
                fresh
            }
        })
        .collect();
    // A set, not a scan of `unordered` per ordered pair: that was n⁴ over every pair (a
    // 1,000-GPU plan never finished).
    let chosen: std::collections::HashSet<(usize, usize)> = unordered.iter().copied().collect();
    let pairs = || {
        gpus.iter()
            .flat_map(|&a| gpus.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| chosen.contains(&(a.min(b), a.max(b))))
            .map(|(a, b)| (g(a), g(b)))
            .collect::<Vec<_>>()
    };
    match test.shape() {
        Shape::HostDevice { to_device, .. } => gpus
            .iter()
            .map(|&i| {
                if to_device {
                    (Endpoint::Host, g(i))
                } else {
                    (g(i), Endpoint::Host)
                }
            })
            .collect(),
        Shape::Pair { bidir: true, .. } => unordered.iter().map(|&(a, b)| (g(a), g(b))).collect(),
        Shape::Pair { .. } | Shape::Latency { d2d: true } => pairs(),
        Shape::Local => gpus.iter().map(|&i| (g(i), g(i))).collect(),
        Shape::Fan { to_one } if gpus.len() >= 2 => gpus
            .iter()
            .map(|&i| {
                if to_one {
                    (Endpoint::All, g(i))
                } else {
                    (g(i), Endpoint::All)
                }
            })
            .collect(),
        Shape::Fan { .. } => Vec::new(),
        // One case covers every GPU at once; the backend reports a row per GPU.
        Shape::HostAll { to_device } => {
            if to_device {
                vec![(Endpoint::Host, Endpoint::All)]
            } else {
                vec![(Endpoint::All, Endpoint::Host)]
            }
        }
        Shape::Latency { d2d: false } => gpus.iter().map(|&i| (Endpoint::Host, g(i))).collect(),
        // One case moves data between every pair at once; the backend reports a row per
        // reading GPU.
        Shape::AllPairs if gpus.len() >= 2 => vec![(Endpoint::All, Endpoint::All)],
        Shape::AllPairs => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_get_more_copies_per_sample() {
        // 512 MiB: the asked-for 16; 4 KiB: 32 MiB worth, capped at 256; 1 MiB: 32.
        assert_eq!(copies_per_sample(512 << 20, 16), 16);
        assert_eq!(copies_per_sample(4096, 16), MAX_ITERS);
        assert_eq!(copies_per_sample(1 << 20, 16), 32);
        assert_eq!(copies_per_sample(1 << 20, 100), 100);
    }
    use crate::model::{Gpu, TopologySource};

    fn topo(n: usize) -> Topology {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        t.gpus = (0..n)
            .map(|index| Gpu {
                index,
                ..Default::default()
            })
            .collect();
        t.normalize();
        t
    }

    #[test]
    fn expands_pairs_and_sizes() {
        let opts = BandwidthOptions {
            tests: vec![
                TestId::P2pReadCe,
                TestId::P2pBidirCe,
                TestId::H2d,
                TestId::HostToAll,
            ],
            sizes: vec![4096, 1 << 20],
            ..Default::default()
        };
        let plan = Plan::new(&topo(3), &opts).unwrap();
        let count = |t: TestId| plan.cases.iter().filter(|c| c.test == t).count();
        assert_eq!(count(TestId::P2pReadCe), 6 * 2);
        assert_eq!(count(TestId::AllPairs), 0, "not asked for");
        assert_eq!(count(TestId::P2pBidirCe), 3 * 2);
        assert_eq!(count(TestId::H2d), 3 * 2);
        assert_eq!(count(TestId::HostToAll), 2);
    }

    #[test]
    fn per_link_kind_keeps_the_first_pair_of_each_kind() {
        // 0–1 and 2–3 on NVLink, every other pair across the SMP link.
        let mut t = topo(4);
        for l in &mut t.links {
            l.kind = Some(if (l.a, l.b) == (0, 1) || (l.a, l.b) == (2, 3) {
                crate::model::LinkKind::Nv(4)
            } else {
                crate::model::LinkKind::Sys
            });
        }
        let opts = BandwidthOptions {
            tests: vec![TestId::P2pReadCe, TestId::P2pBidirCe, TestId::H2d],
            pairs: PairScope::PerLinkKind,
            ..Default::default()
        };
        let plan = Plan::new(&t, &opts).unwrap();
        let cells = |test: TestId| -> Vec<(Endpoint, Endpoint)> {
            plan.cases
                .iter()
                .filter(|c| c.test == test)
                .map(|c| (c.src, c.dst))
                .collect()
        };
        let g = Endpoint::Gpu;
        assert_eq!(
            cells(TestId::P2pReadCe),
            vec![(g(0), g(1)), (g(0), g(2)), (g(1), g(0)), (g(2), g(0))]
        );
        assert_eq!(cells(TestId::P2pBidirCe), vec![(g(0), g(1)), (g(0), g(2))]);
        // Host tests still cover every GPU.
        assert_eq!(cells(TestId::H2d).len(), 4);
        // The default covers every ordered pair.
        let all = Plan::new(
            &t,
            &BandwidthOptions {
                pairs: PairScope::All,
                ..opts
            },
        )
        .unwrap();
        assert_eq!(
            all.cases
                .iter()
                .filter(|c| c.test == TestId::P2pReadCe)
                .count(),
            12
        );
    }

    #[test]
    fn all_pairs_is_one_case_over_every_gpu() {
        let opts = BandwidthOptions {
            tests: vec![TestId::AllPairs],
            sizes: vec![1 << 20],
            ..Default::default()
        };
        let plan = Plan::new(&topo(4), &opts).unwrap();
        assert_eq!(plan.cases.len(), 1);
        let c = &plan.cases[0];
        assert_eq!((c.src, c.dst), (Endpoint::All, Endpoint::All));
        assert_eq!(&*c.gpus, &[0, 1, 2, 3]);
        assert!(TestId::AllPairs.needs_peer() && TestId::AllPairs.needs_pairs());
        assert!(Plan::new(&topo(1), &opts).unwrap().cases.is_empty());
    }

    #[test]
    fn single_gpu_has_no_pair_cases() {
        let plan = Plan::new(&topo(1), &BandwidthOptions::default()).unwrap();
        assert!(plan.cases.iter().all(|c| !c.test.needs_pairs()));
        assert!(plan.cases.iter().any(|c| c.test == TestId::H2d));
    }

    #[test]
    fn bad_gpu_index_names_it() {
        let opts = BandwidthOptions {
            gpus: GpuSelection::new(vec![0, 7]).unwrap(),
            ..Default::default()
        };
        let err = Plan::new(&topo(2), &opts).unwrap_err().to_string();
        assert!(err.contains("no GPU 7") && err.contains("0, 1"), "{err}");
    }

    #[test]
    fn parses_lists() {
        assert_eq!(
            parse_test_list("h2d,latency_d2d").unwrap(),
            vec![TestId::H2d, TestId::LatencyD2d]
        );
        let err = parse_test_list("h2d,nope").unwrap_err().to_string();
        assert!(
            err.contains("\"nope\"") && err.contains("p2p_read_ce"),
            "{err}"
        );
    }
}
