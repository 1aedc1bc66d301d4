//! Collective-communication results: what `scalescope bench collectives` measures (or models).
//!
//! Sizes, algbw and busbw follow nccl-tests' definitions (doc/PERFORMANCE.md in
//! github.com/NVIDIA/nccl-tests): `bytes` is the size nccl-tests prints for the op (for
//! all-gather, reduce-scatter and all-to-all the whole gathered/scattered buffer), algbw = bytes ÷
//! time, busbw = algbw × a factor that makes the figure comparable to the hardware's bus bandwidth
//! whatever the number of ranks.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Source, Status};

macro_rules! named_enum {
    ($(#[$m:meta])* $name:ident { $( $variant:ident = $id:literal ),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name { $( $variant, )* }

        impl $name {
            /// Every value, in display order.
            pub const ALL: &'static [$name] = &[ $( Self::$variant, )* ];

            /// The stable id used by the CLI, CSV and JSON.
            pub fn id(&self) -> &'static str {
                match self { $( Self::$variant => $id, )* }
            }

            /// The value with this id.
            pub fn from_id(id: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.id() == id)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.id())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.id())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Self::from_id(&s).ok_or_else(|| {
                    serde::de::Error::custom(format!(concat!("unknown ", stringify!($name), " {:?}"), s))
                })
            }
        }
    };
}

named_enum! {
    /// A collective operation.
    CollectiveOp {
        AllReduce = "all_reduce",
        AllGather = "all_gather",
        ReduceScatter = "reduce_scatter",
        Broadcast = "broadcast",
        AllToAll = "alltoall",
        SendRecv = "sendrecv",
    }
}

named_enum! {
    /// Who runs the collective: NCCL, or one of scalescope's own all-reduce algorithms.
    Algo {
        Nccl = "nccl",
        Ring = "ring",
        Tree = "tree",
        Host = "host",
    }
}

named_enum! {
    /// Element type.
    Dtype {
        F32 = "f32",
        Bf16 = "bf16",
        F16 = "f16",
        F64 = "f64",
        I32 = "i32",
    }
}

impl Dtype {
    /// Bytes per element.
    pub fn size(&self) -> u64 {
        match self {
            Self::F32 | Self::I32 => 4,
            Self::Bf16 | Self::F16 => 2,
            Self::F64 => 8,
        }
    }
}

impl CollectiveOp {
    /// nccl-tests' bus-bandwidth factor for `n` ranks (doc/PERFORMANCE.md): all-reduce 2(n−1)/n;
    /// all-gather, reduce-scatter and all-to-all (n−1)/n; broadcast and send/recv 1.
    pub fn busbw_factor(&self, n: usize) -> f64 {
        let n = n.max(1) as f64;
        match self {
            Self::AllReduce => 2.0 * (n - 1.0) / n,
            Self::AllGather | Self::ReduceScatter | Self::AllToAll => (n - 1.0) / n,
            Self::Broadcast | Self::SendRecv => 1.0,
        }
    }

    /// Elements per rank's buffer for a given nccl-tests size in bytes: the size is per rank for
    /// all-reduce, broadcast and send/recv, and the whole buffer (all ranks) for all-gather,
    /// reduce-scatter and all-to-all.
    pub fn count_per_rank(&self, bytes: u64, dtype: Dtype, n: usize) -> u64 {
        let elems = bytes / dtype.size();
        match self {
            Self::AllGather | Self::ReduceScatter | Self::AllToAll => elems / n.max(1) as u64,
            _ => elems,
        }
    }
}

/// Checks the GB/s figures of `results` read from a file against [`super::validate::GBPS`], and
/// that no run lists a GPU twice; the error names the first bad one by `path`
/// (`collectives.results[0].busbw_gbps: …`).
pub fn check_collective_figures(results: &[CollectiveResult], path: &str) -> Result<(), String> {
    for (i, r) in results.iter().enumerate() {
        // A run's GPUs are distinct: a report listing one twice was damaged or edited.
        if let Some(g) = r
            .gpus
            .iter()
            .enumerate()
            .find_map(|(k, g)| r.gpus[..k].contains(g).then_some(g))
        {
            return Err(format!("{path}[{i}].gpus: GPU {g} is listed twice"));
        }
        for (field, v) in [("algbw_gbps", r.algbw_gbps), ("busbw_gbps", r.busbw_gbps)] {
            if let Some(v) = v {
                super::validate::GBPS
                    .check(v)
                    .map_err(|e| format!("{path}[{i}].{field}: {e}"))?;
            }
        }
    }
    Ok(())
}

/// One row of `collectives.csv`: one op by one algorithm over one GPU set at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveResult {
    pub op: CollectiveOp,
    pub algo: Algo,
    /// e.g. `NCCL 2.28.9`, `scalescope 0.1.0`; `None` when nothing ran.
    pub backend_version: Option<String>,
    /// GPU indices taking part.
    pub gpus: Vec<usize>,
    /// Size as nccl-tests prints it, bytes.
    pub bytes: u64,
    pub dtype: Dtype,
    pub in_place: bool,
    /// Median time of one operation, µs.
    pub time_us: Option<f64>,
    /// bytes ÷ time, GB/s.
    pub algbw_gbps: Option<f64>,
    /// algbw × the op's bus factor, GB/s.
    pub busbw_gbps: Option<f64>,
    /// Each sample's time per operation, µs.
    pub sample_us: Vec<f64>,
    /// Elements found wrong against the expected result; `None` when not checked.
    pub wrong: Option<u64>,
    pub status: Status,
    pub reason: Option<String>,
    pub source: Source,
    /// Processes the run used (1 unless launched by torchrun/Slurm/MPI).
    #[serde(default = "one")]
    pub processes: usize,
    /// Whether the launches were captured in a CUDA graph.
    #[serde(default)]
    pub graph: bool,
    /// The energy the GPUs taking part used over the timed samples (measured in one process,
    /// where the energy counter could cover the window; see `model::energy::TestEnergy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::model::energy::TestEnergy>,
    /// The transports NCCL set up for this process's connections, from its INIT log, e.g.
    /// `NET/IB+GDRDMA (mlx5_0, mlx5_3); P2P/CUMEM/read` (multi-process runs; `None` where not
    /// read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
}

/// Which collective a row is of: the operation, its implementation, the GPUs taking part, the
/// size and element type, and whether it ran in place.
#[derive(Debug, Clone, Copy)]
pub struct CollectiveCase<'a> {
    /// The operation.
    pub op: CollectiveOp,
    /// Whose implementation ran it.
    pub algo: Algo,
    /// The GPUs taking part, one rank each.
    pub gpus: &'a [usize],
    /// The message size, bytes.
    pub bytes: u64,
    /// The element type.
    pub dtype: Dtype,
    /// Whether the output overwrote the input.
    pub in_place: bool,
}

fn one() -> usize {
    1
}

impl CollectiveResult {
    /// A row with nothing measured, for waived/skipped/failed outcomes.
    pub fn empty(
        case: CollectiveCase<'_>,
        source: Source,
        status: Status,
        reason: impl Into<String>,
    ) -> Self {
        let CollectiveCase {
            op,
            algo,
            gpus,
            bytes,
            dtype,
            in_place,
        } = case;
        Self {
            op,
            algo,
            backend_version: None,
            gpus: gpus.to_vec(),
            bytes,
            dtype,
            in_place,
            time_us: None,
            algbw_gbps: None,
            busbw_gbps: None,
            sample_us: Vec::new(),
            wrong: None,
            status,
            reason: Some(reason.into()),
            source,
            processes: 1,
            graph: false,
            energy: None,
            transport: None,
        }
    }

    /// Sets the time and derives algbw and busbw from it.
    pub fn set_time_us(&mut self, time_us: f64) {
        self.time_us = Some(time_us);
        if time_us > 0.0 {
            let algbw = self.bytes as f64 / (time_us * 1e-6) / 1e9;
            self.algbw_gbps = Some(algbw);
            self.busbw_gbps = Some(algbw * self.op.busbw_factor(self.gpus.len()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_match_nccl_tests() {
        assert_eq!(CollectiveOp::AllReduce.busbw_factor(2), 1.0);
        assert_eq!(CollectiveOp::AllReduce.busbw_factor(8), 1.75);
        assert_eq!(CollectiveOp::AllGather.busbw_factor(4), 0.75);
        assert_eq!(CollectiveOp::ReduceScatter.busbw_factor(8), 0.875);
        assert_eq!(CollectiveOp::AllToAll.busbw_factor(2), 0.5);
        assert_eq!(CollectiveOp::Broadcast.busbw_factor(8), 1.0);
        assert_eq!(CollectiveOp::SendRecv.busbw_factor(2), 1.0);
    }

    #[test]
    fn algbw_and_busbw_from_time() {
        let mut r = CollectiveResult::empty(
            CollectiveCase {
                op: CollectiveOp::AllReduce,
                algo: Algo::Nccl,
                gpus: &[0, 1, 2, 3],
                bytes: 1 << 30,
                dtype: Dtype::F32,
                in_place: false,
            },
            Source::Measured,
            Status::Ok,
            "",
        );
        r.set_time_us(10_000.0);
        let algbw = (1u64 << 30) as f64 / 0.01 / 1e9;
        assert!((r.algbw_gbps.unwrap() - algbw).abs() < 1e-9);
        assert!((r.busbw_gbps.unwrap() - algbw * 1.5).abs() < 1e-9);
    }

    #[test]
    fn counts_per_rank() {
        assert_eq!(
            CollectiveOp::AllReduce.count_per_rank(1024, Dtype::F32, 4),
            256
        );
        assert_eq!(
            CollectiveOp::AllGather.count_per_rank(1024, Dtype::F32, 4),
            64
        );
        assert_eq!(
            CollectiveOp::Broadcast.count_per_rank(1024, Dtype::Bf16, 4),
            512
        );
    }

    #[test]
    fn ids_round_trip() {
        for op in CollectiveOp::ALL {
            assert_eq!(CollectiveOp::from_id(op.id()), Some(*op));
        }
        assert_eq!(Algo::from_id("ring"), Some(Algo::Ring));
        assert_eq!(Dtype::from_id("bf16"), Some(Dtype::Bf16));
        assert_eq!(Dtype::from_id("f8"), None);
    }
}
