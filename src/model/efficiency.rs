//! Reference copy efficiencies: the fraction of a link's line rate a healthy copy reaches, per
//! test and kind of path, each with where it comes from. The one table the modeled backend
//! multiplies line rates by (`bench::modeled`) and the health check judges measured figures
//! against (`health::expected`); model/ is below both, so it names them without linking.
//!
//! Measured references are scalescope's own, from the report it bundles of `scalescope --bench
//! --full` on 8× H200 SXM (NVSwitch, PCIe Gen5 x16), 2026-11-22: the median over every GPU or
//! pair at 512 MiB (`report::bundled` checks the figures against that report). The 2× H200
//! report of the same day agrees within 0.1 %. Where scalescope has no measurement of its own
//! the figure is nvbandwidth v0.8's on 2× H200 SXM (docs/REFERENCE.md, the same day), a
//! published one, or an assumption, and says so.

use super::{Endpoint, LinkKind, Shape, TestId, Topology};

/// The bundled report the measured references come from.
pub const BUNDLED_REPORT: &str = "h200-8x-sxm-2026-11-22.json";

/// What a copy crosses, as far as its efficiency goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Host ↔ GPU over the GPU's PCIe link of this generation.
    Host { pcie_gen: u32 },
    /// GPU ↔ GPU over NVLink.
    Nvlink,
    /// GPU ↔ GPU over a PCIe path (`PIX` … `SYS`).
    PciePeer(LinkKind),
}

impl Path {
    /// The path a copy test's cell crosses on `topo` (`gpus`: the GPUs of an exchange such as
    /// `all_pairs`, whose farthest PCIe path bounds it). `None` where the topology does not say
    /// (no PCIe generation, no link kind) or the shape has no single path (local copies).
    pub fn of(
        topo: &Topology,
        shape: Shape,
        src: Endpoint,
        dst: Endpoint,
        gpus: &[usize],
    ) -> Option<Path> {
        let pair = |a: usize, b: usize| -> Option<Path> {
            Some(match topo.link(a, b)?.kind? {
                LinkKind::Nv(_) => Path::Nvlink,
                k => Path::PciePeer(k),
            })
        };
        match shape {
            Shape::HostDevice { .. } | Shape::HostAll { .. } => {
                let g = topo.gpu(src.gpu().or(dst.gpu())?)?;
                Some(Path::Host {
                    pcie_gen: g.pcie.gen_max.or(g.pcie.gen_current)?,
                })
            }
            Shape::Pair { .. } => pair(src.gpu()?, dst.gpu()?),
            Shape::AllPairs | Shape::Fan { .. } => {
                let me = dst.gpu().or(src.gpu())?;
                let kinds: Option<Vec<LinkKind>> = gpus
                    .iter()
                    .filter(|&&g| g != me)
                    .map(|&g| topo.link(me, g).and_then(|l| l.kind))
                    .collect();
                let kinds = kinds?;
                if kinds.iter().all(|k| matches!(k, LinkKind::Nv(_))) {
                    Some(Path::Nvlink)
                } else {
                    // The farthest PCIe path bounds the exchange.
                    kinds
                        .into_iter()
                        .filter(|k| !matches!(k, LinkKind::Nv(_)))
                        .max_by_key(|k| LinkKind::PCIE_PATHS.iter().position(|p| p == k))
                        .map(Path::PciePeer)
                }
            }
            Shape::Local | Shape::Latency { .. } => None,
        }
    }
}

/// A figure scalescope measured, in the report it bundles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// The test whose median the efficiency is.
    pub test: TestId,
    /// The median over every GPU or pair at 512 MiB, GB/s.
    pub gbps: f64,
    /// The line rate it ran against, GB/s.
    pub line_gbps: f64,
}

/// A reference efficiency and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    /// Fraction of the line rate a healthy copy reaches.
    pub efficiency: f64,
    /// What the figure is, e.g. `CE read efficiency`.
    pub what: &'static str,
    /// Who measured it where, in a few words (`scalescope on 8× H200 NVLink`); empty for an
    /// assumption, whose `what` says so.
    pub from: &'static str,
    /// The figures behind it and their source, in full, for a check's `basis`.
    pub basis: &'static str,
    /// Measured on Hopper GPUs (H200): for another architecture the figure is borrowed.
    pub hopper: bool,
    /// The bundled report's figure it is taken from, for the measured ones.
    pub measured: Option<Measured>,
}

impl Reference {
    /// `CE read efficiency, scalescope on 8× H200 NVLink`: what a modeled figure's note says.
    pub fn how(&self) -> String {
        if self.from.is_empty() {
            self.what.to_string()
        } else {
            format!("{}, {}", self.what, self.from)
        }
    }
}

const H200_8X_HOST: &str = "scalescope on 8× H200";
const H200_8X_NV: &str = "scalescope on 8× H200 NVLink";

const H2D: Reference = Reference {
    efficiency: 0.879,
    what: "pinned H2D efficiency",
    from: H200_8X_HOST,
    basis: "h2d: 55.40 of 63.0 GB/s on 8× H200, PCIe Gen5 x16 \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    hopper: true,
    measured: Some(Measured {
        test: TestId::H2d,
        gbps: 55.40,
        line_gbps: 63.015,
    }),
};
const D2H: Reference = Reference {
    efficiency: 0.877,
    what: "pinned D2H efficiency",
    from: H200_8X_HOST,
    basis: "d2h: 55.28 of 63.0 GB/s on 8× H200, PCIe Gen5 x16 \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    hopper: true,
    measured: Some(Measured {
        test: TestId::D2h,
        gbps: 55.28,
        line_gbps: 63.015,
    }),
};
const HOST_GEN4: Reference = Reference {
    efficiency: 0.825,
    what: "pinned-copy efficiency on PCIe Gen4 x16",
    from: "published",
    basis: "borrowed: ≈ 26 of 31.5 GB/s on PCIe Gen4 x16, published (docs/REFERENCE.md); not \
            measured by scalescope",
    hopper: false,
    measured: None,
};
const P2P_READ_CE: Reference = Reference {
    efficiency: 0.824,
    what: "CE read efficiency",
    from: H200_8X_NV,
    basis: "p2p_read_ce: 393.80 of 478.1 GB/s on 8× H200, NV18 \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    hopper: true,
    measured: Some(Measured {
        test: TestId::P2pReadCe,
        gbps: 393.80,
        line_gbps: 478.116,
    }),
};
const P2P_WRITE_CE: Reference = Reference {
    efficiency: 0.829,
    what: "CE write efficiency",
    from: H200_8X_NV,
    basis: "p2p_write_ce: 396.35 of 478.1 GB/s on 8× H200, NV18 \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    hopper: true,
    measured: Some(Measured {
        test: TestId::P2pWriteCe,
        gbps: 396.35,
        line_gbps: 478.116,
    }),
};
const P2P_BIDIR_CE: Reference = Reference {
    efficiency: 0.819,
    what: "CE bidirectional efficiency",
    from: H200_8X_NV,
    basis: "p2p_bidir_ce: 783.52 of 956.2 GB/s on 8× H200, NV18 \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    hopper: true,
    measured: Some(Measured {
        test: TestId::P2pBidirCe,
        gbps: 783.52,
        line_gbps: 956.232,
    }),
};
/// Every GPU reading from every other at once: each link carries both directions, as in the
/// bidirectional test (borrowed from it until all_pairs is measured on the device).
const ALL_PAIRS_NV: Reference = Reference {
    what: "CE bidirectional efficiency: every link carries both directions",
    basis: "borrowed from p2p_bidir_ce (783.52 of 956.2 GB/s; every link carries both \
            directions at once), until all_pairs is measured \
            (assets/reports/h200-8x-sxm-2026-11-22.json)",
    ..P2P_BIDIR_CE
};
const P2P_READ_SM: Reference = Reference {
    efficiency: 0.787,
    what: "SM read efficiency",
    from: "nvbandwidth on H200 NVLink",
    basis: "p2p_read_sm: nvbandwidth v0.8 376.2 of 478.1 GB/s on 2× H200, NV18 \
            (docs/REFERENCE.md)",
    hopper: true,
    measured: None,
};
const P2P_WRITE_SM: Reference = Reference {
    efficiency: 0.773,
    what: "SM write efficiency",
    basis: "p2p_write_sm: nvbandwidth v0.8 369.8 of 478.1 GB/s on 2× H200, NV18 \
            (docs/REFERENCE.md)",
    ..P2P_READ_SM
};
const P2P_BIDIR_SM: Reference = Reference {
    efficiency: 0.708,
    what: "SM bidirectional efficiency",
    basis: "p2p_bidir_sm: nvbandwidth v0.8 676.9 of 956.2 GB/s on 2× H200, NV18 \
            (docs/REFERENCE.md)",
    ..P2P_READ_SM
};
// Host copies while the other direction runs, and every GPU copying at once.
const H2D_BIDIR: Reference = Reference {
    efficiency: 0.728,
    what: "H2D efficiency with D2H running",
    from: "nvbandwidth on H200",
    basis: "h2d_bidir: nvbandwidth v0.8 45.84 of 63.0 GB/s on 2× H200, PCIe Gen5 x16 \
            (docs/REFERENCE.md)",
    hopper: true,
    measured: None,
};
const D2H_BIDIR: Reference = Reference {
    efficiency: 0.812,
    what: "D2H efficiency with H2D running",
    basis: "d2h_bidir: nvbandwidth v0.8 51.16 of 63.0 GB/s on 2× H200, PCIe Gen5 x16 \
            (docs/REFERENCE.md)",
    ..H2D_BIDIR
};
const HOST_ALL: Reference = Reference {
    efficiency: 0.82,
    what: "per-GPU efficiency with every GPU copying",
    basis: "host_to_all: nvbandwidth v0.8 50.4–53.2 of 63.0 GB/s per GPU on 2× H200, PCIe Gen5 \
            x16 (docs/REFERENCE.md)",
    ..H2D_BIDIR
};
// Pageable copies go through a driver staging buffer and a CPU memcpy, so they depend on the
// host; with peer access disabled the driver stages GPU→GPU copies through host memory. Both
// from scalescope's own run on 2× H200 (a VM, PCIe Gen5 x16; docs/BENCHMARKS.md).
const H2D_PAGEABLE: Reference = Reference {
    efficiency: 0.14,
    what: "pageable H2D efficiency",
    from: "scalescope on H200",
    basis: "h2d_pageable: 8.8 of 63.0 GB/s, scalescope on 2× H200 (docs/BENCHMARKS.md)",
    hopper: true,
    measured: None,
};
const D2H_PAGEABLE: Reference = Reference {
    efficiency: 0.25,
    what: "pageable D2H efficiency",
    basis: "d2h_pageable: 15.8 of 63.0 GB/s, scalescope on 2× H200 (docs/BENCHMARKS.md)",
    ..H2D_PAGEABLE
};
const STAGED: Reference = Reference {
    efficiency: 0.63,
    what: "efficiency of copies staged through host memory",
    basis: "p2p_*_ce_nopeer: 38.6–40.7 of 63.0 GB/s (the host link), scalescope on 2× H200 \
            (docs/BENCHMARKS.md)",
    ..H2D_PAGEABLE
};
// Assumed without a measurement of ours: P2P over a PCIe switch reaches about what host copies
// reach; across the CPU interconnect less.
const PCIE_P2P: Reference = Reference {
    efficiency: 0.83,
    what: "assumed efficiency of P2P over PCIe switches",
    from: "",
    basis: "assumed for P2P over PCIe, like host copies (not measured by scalescope)",
    hopper: false,
    measured: None,
};
const PCIE_P2P_SYS: Reference = Reference {
    efficiency: 0.65,
    what: "assumed efficiency of P2P across the CPU interconnect",
    basis: "assumed for P2P across the CPU interconnect (not measured by scalescope)",
    ..PCIE_P2P
};

/// Every entry of the table (for tests and documents).
pub const ALL: [Reference; 18] = [
    H2D,
    D2H,
    HOST_GEN4,
    P2P_READ_CE,
    P2P_WRITE_CE,
    P2P_BIDIR_CE,
    ALL_PAIRS_NV,
    P2P_READ_SM,
    P2P_WRITE_SM,
    P2P_BIDIR_SM,
    H2D_BIDIR,
    D2H_BIDIR,
    HOST_ALL,
    H2D_PAGEABLE,
    D2H_PAGEABLE,
    STAGED,
    PCIE_P2P,
    PCIE_P2P_SYS,
];

/// The reference efficiency of `test` over `path`; `None` for a test or path it has none for
/// (latency, local copies, SM copies over PCIe have no figure of their own but PCIe's).
pub fn reference(test: TestId, path: Path) -> Option<Reference> {
    use TestId as T;
    let peer = matches!(
        test,
        T::P2pReadCe
            | T::P2pWriteCe
            | T::P2pBidirCe
            | T::P2pReadSm
            | T::P2pWriteSm
            | T::P2pBidirSm
            | T::AllPairs
            | T::AllToOne
            | T::OneToAll
    );
    Some(match (test, path) {
        (T::H2d, Path::Host { pcie_gen: 5.. }) => H2D,
        (T::D2h, Path::Host { pcie_gen: 5.. }) => D2H,
        (T::H2d | T::D2h, Path::Host { .. }) => HOST_GEN4,
        (T::H2dBidir, Path::Host { .. }) => H2D_BIDIR,
        (T::D2hBidir, Path::Host { .. }) => D2H_BIDIR,
        (T::HostToAll | T::AllToHost, Path::Host { .. }) => HOST_ALL,
        (T::H2dPageable, Path::Host { .. }) => H2D_PAGEABLE,
        (T::D2hPageable, Path::Host { .. }) => D2H_PAGEABLE,
        (T::P2pReadCeNopeer | T::P2pWriteCeNopeer | T::P2pBidirCeNopeer, _) => STAGED,
        (T::P2pReadCe, Path::Nvlink) => P2P_READ_CE,
        // Writes into one GPU, or out of one, from every other at once: as a write to one peer.
        (T::P2pWriteCe | T::AllToOne | T::OneToAll, Path::Nvlink) => P2P_WRITE_CE,
        (T::P2pBidirCe, Path::Nvlink) => P2P_BIDIR_CE,
        (T::AllPairs, Path::Nvlink) => ALL_PAIRS_NV,
        (T::P2pReadSm, Path::Nvlink) => P2P_READ_SM,
        (T::P2pWriteSm, Path::Nvlink) => P2P_WRITE_SM,
        (T::P2pBidirSm, Path::Nvlink) => P2P_BIDIR_SM,
        (_, Path::PciePeer(LinkKind::Sys)) if peer => PCIE_P2P_SYS,
        (_, Path::PciePeer(_)) if peer => PCIE_P2P,
        _ => return None,
    })
}

/// The fixed time one copy takes before its bytes move, µs: a copy of `b` bytes at a test's
/// rate `r` takes `us + b / r`, so small copies are set by it (a 4 KiB host copy moves at about
/// 1.7 GB/s, not 55). Read off scalescope's own sweeps in the bundled 2× H200 report of
/// 2026-11-28 (`PER_COPY_REPORT`): `b / figure − b / (figure at 512 MiB)` at 4 KiB to 256 KiB,
/// the median; the seven sizes of each test lie within 0.6 µs of it. A test without a sweep of
/// its own takes the nearest one's, and its `source` says so. The 8× H200 report of 2026-11-22 read
/// 3.1–3.8 µs for the host and write copies, 13.2–14.5 for reads: another VM, the same shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerCopy {
    pub us: f64,
    pub source: &'static str,
}

/// The bundled report the per-copy times are read from.
pub const PER_COPY_REPORT: &str = "h200-2x-sxm-2026-11-28.json";

/// The fixed time of one copy of `test` ([`PerCopy`]); `None` for latency tests (their figure is
/// a time already) and local copies (not modeled).
pub fn per_copy(test: TestId) -> Option<PerCopy> {
    use TestId as T;
    const OWN: &str = "scalescope's sweep on 2× H200, 2026-11-28";
    const AS_H2D: &str = "assumed as h2d's (scalescope's sweep on 2× H200, 2026-11-28)";
    const AS_D2H: &str = "assumed as d2h's (scalescope's sweep on 2× H200, 2026-11-28)";
    const AS_READ: &str = "assumed as p2p_read_ce's (scalescope's sweep on 2× H200, 2026-11-28)";
    const AS_WRITE: &str = "assumed as p2p_write_ce's (scalescope's sweep on 2× H200, 2026-11-28)";
    let (us, source) = match test {
        T::H2d => (2.46, OWN),
        T::D2h => (2.09, OWN),
        T::P2pReadCe => (13.24, OWN),
        T::P2pWriteCe => (2.36, OWN),
        T::H2dPageable | T::H2dBidir | T::HostToAll => (2.46, AS_H2D),
        T::D2hPageable | T::D2hBidir | T::AllToHost => (2.09, AS_D2H),
        T::P2pReadCeNopeer | T::AllPairs => (13.24, AS_READ),
        T::P2pBidirCe
        | T::P2pWriteCeNopeer
        | T::P2pBidirCeNopeer
        | T::AllToOne
        | T::OneToAll
        | T::P2pReadSm
        | T::P2pWriteSm
        | T::P2pBidirSm => (2.36, AS_WRITE),
        T::LocalCopy | T::LatencyD2d | T::LatencyH2d => return None,
    };
    Some(PerCopy { us, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_entries_are_their_figure_over_its_line_rate() {
        for r in ALL {
            if let Some(m) = r.measured {
                assert!(
                    (m.gbps / m.line_gbps - r.efficiency).abs() < 0.0006,
                    "{}: {} ≠ {} / {}",
                    r.what,
                    r.efficiency,
                    m.gbps,
                    m.line_gbps
                );
                assert!(r.basis.contains(BUNDLED_REPORT), "{}", r.basis);
            }
            assert!((0.0..=1.0).contains(&r.efficiency));
            // A modeled figure's note is read back as `from (what)` by report::summary.
            assert!(!r.from.contains(", "), "{}", r.from);
            // …and the note is the reason's last parenthesis: none inside it.
            assert!(!r.how().contains(['(', ')']), "{}", r.how());
        }
    }

    #[test]
    fn host_copies_take_their_pcie_generation_and_p2p_its_path() {
        let host = |g| Path::Host { pcie_gen: g };
        assert_eq!(reference(TestId::H2d, host(5)).unwrap().efficiency, 0.879);
        assert_eq!(reference(TestId::D2h, host(6)).unwrap().efficiency, 0.877);
        assert_eq!(reference(TestId::H2d, host(4)).unwrap().efficiency, 0.825);
        let sys = Path::PciePeer(LinkKind::Sys);
        assert_eq!(reference(TestId::P2pReadSm, sys).unwrap().efficiency, 0.65);
        let pix = Path::PciePeer(LinkKind::Pix);
        assert_eq!(reference(TestId::AllPairs, pix).unwrap().efficiency, 0.83);
        assert_eq!(reference(TestId::H2d, Path::Nvlink), None);
        assert_eq!(reference(TestId::LatencyD2d, Path::Nvlink), None);
        assert_eq!(reference(TestId::LocalCopy, Path::Nvlink), None);
    }
}
