//! What a copy should reach: the link's line rate × a reference efficiency for that link kind,
//! each efficiency with its source.
//!
//! Measured references are scalescope's own bundled reports, `scalescope --bench --full` on real
//! machines (medians over every GPU or pair at 512 MiB):
//! - `assets/reports/h200-8x-sxm-2026-11-22.json` (8× H200 SXM, NVSwitch, PCIe Gen5 x16): h2d
//!   55.40, d2h 55.28 of 63.0 GB/s; p2p_read_ce 393.80, p2p_write_ce 396.35 of 478.1 GB/s;
//!   p2p_bidir_ce 783.52 of 956.2 GB/s (both directions).
//! - `assets/reports/h200-2x-sxm-2026-11-22.json` (2× H200 SXM, NV18): h2d 55.35, d2h 55.26,
//!   p2p_read_ce 393.79, p2p_write_ce 396.10, p2p_bidir_ce 783.43 — the same within 0.1 %.
//!
//! Borrowed where scalescope has no measurement of its own, and said so in every basis: PCIe
//! Gen4 host copies (≈ 26 of 31.5 GB/s, published, shared/ANCHORS.md), P2P over PCIe (the
//! modeled backend's assumed efficiencies), `all_pairs` (p2p_bidir_ce's per-direction
//! efficiency: in an all-pairs exchange every link carries both directions at once), and NVLink
//! generations other than Hopper's NVLink 4.

use crate::model::{LinkKind, TestId};

use super::Thresholds;

/// A reference efficiency and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Fraction of the line rate a healthy link reaches.
    pub efficiency: f64,
    /// Where the figure comes from, for the check's `basis`.
    pub source: String,
}

/// The kind of link a figure crosses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkClass {
    /// Host ↔ GPU over the GPU's PCIe link of this generation.
    Host { pcie_gen: u32 },
    /// GPU ↔ GPU over NVLink.
    Nvlink,
    /// GPU ↔ GPU over a PCIe path (`PIX` … `SYS`).
    PciePeer(LinkKind),
}

/// A GPU architecture, from the name nvidia-smi gives the GPU.
pub fn architecture(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_uppercase();
    let has = |tags: &[&str]| tags.iter().any(|t| n.contains(t));
    Some(if has(&["B200", "B100", "GB200", "B300", "GB300"]) {
        "Blackwell"
    } else if has(&["H100", "H200", "H800", "H20", "GH200"]) {
        "Hopper"
    } else if has(&["L40", "L4", "RTX 40", "ADA", "RTX 6000 ADA"]) {
        "Ada"
    } else if has(&["A100", "A800", "A30", "A40", "A10", "RTX 30", "RTX A"]) {
        "Ampere"
    } else if has(&["V100"]) {
        "Volta"
    } else {
        return None;
    })
}

const H200_8X: &str = "assets/reports/h200-8x-sxm-2026-11-22.json";

/// The reference efficiency of `test` over `link` for a GPU named `gpu_name`; `None` for tests
/// the check does not judge. A `[efficiency]` entry of the thresholds replaces the built-in one.
pub fn reference(
    test: TestId,
    link: LinkClass,
    gpu_name: Option<&str>,
    thresholds: &Thresholds,
) -> Option<Reference> {
    if let Some(&eff) = thresholds.efficiency.get(test.id()) {
        return Some(Reference {
            efficiency: eff,
            source: format!("{:.1} % of line rate (--thresholds)", eff * 100.0),
        });
    }
    let arch = gpu_name.and_then(architecture);
    let measured_on = |what: &str| {
        let borrowed = match arch {
            Some("Hopper") | None => String::new(),
            Some(a) => format!("; measured on Hopper, borrowed for {a}"),
        };
        format!("{what} ({H200_8X}){borrowed}")
    };
    let (eff, source) = match (test, link) {
        (TestId::H2d, LinkClass::Host { pcie_gen: 5.. }) => (
            0.879,
            measured_on("h2d: 55.40 of 63.0 GB/s on 8× H200, PCIe Gen5 x16"),
        ),
        (TestId::D2h, LinkClass::Host { pcie_gen: 5.. }) => (
            0.877,
            measured_on("d2h: 55.28 of 63.0 GB/s on 8× H200, PCIe Gen5 x16"),
        ),
        (TestId::H2d | TestId::D2h, LinkClass::Host { .. }) => (
            0.825,
            "borrowed: ≈ 26 of 31.5 GB/s on PCIe Gen4 x16, published (shared/ANCHORS.md); not \
             measured by scalescope"
                .to_string(),
        ),
        (TestId::P2pReadCe, LinkClass::Nvlink) => (
            0.824,
            measured_on("p2p_read_ce: 393.80 of 478.1 GB/s on 8× H200, NV18"),
        ),
        (TestId::P2pWriteCe, LinkClass::Nvlink) => (
            0.829,
            measured_on("p2p_write_ce: 396.35 of 478.1 GB/s on 8× H200, NV18"),
        ),
        (TestId::P2pBidirCe, LinkClass::Nvlink) => (
            0.819,
            measured_on("p2p_bidir_ce: 783.52 of 956.2 GB/s on 8× H200, NV18"),
        ),
        (TestId::AllPairs, LinkClass::Nvlink) => (
            0.819,
            measured_on(
                "borrowed from p2p_bidir_ce (783.52 of 956.2 GB/s; every link carries both \
                 directions at once), until all_pairs is measured",
            ),
        ),
        (
            TestId::P2pReadCe | TestId::P2pWriteCe | TestId::P2pBidirCe | TestId::AllPairs,
            LinkClass::PciePeer(LinkKind::Sys),
        ) => (
            0.65,
            "assumed for P2P across the CPU interconnect (not measured by scalescope)".to_string(),
        ),
        (
            TestId::P2pReadCe | TestId::P2pWriteCe | TestId::P2pBidirCe | TestId::AllPairs,
            LinkClass::PciePeer(_),
        ) => (
            0.83,
            "assumed for P2P over PCIe, like host copies (not measured by scalescope)".to_string(),
        ),
        _ => return None,
    };
    Some(Reference {
        efficiency: eff,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h200_figures_come_from_the_bundled_report() {
        let t = Thresholds::default();
        let r = reference(
            TestId::P2pReadCe,
            LinkClass::Nvlink,
            Some("NVIDIA H200"),
            &t,
        )
        .unwrap();
        assert!((r.efficiency * 478.116 - 393.8).abs() < 0.5);
        assert!(r.source.contains(H200_8X) && !r.source.contains("borrowed"));
        let r = reference(
            TestId::P2pReadCe,
            LinkClass::Nvlink,
            Some("NVIDIA A100-SXM4-80GB"),
            &t,
        )
        .unwrap();
        assert!(r.source.contains("borrowed for Ampere"), "{}", r.source);
        let r = reference(TestId::H2d, LinkClass::Host { pcie_gen: 4 }, None, &t).unwrap();
        assert_eq!(r.efficiency, 0.825);
        assert!(r.source.contains("borrowed"));
        assert!(
            reference(TestId::LatencyD2d, LinkClass::Nvlink, None, &t).is_none(),
            "latency is not judged"
        );
    }

    #[test]
    fn thresholds_override_the_reference() {
        let mut t = Thresholds::default();
        t.efficiency.insert("h2d".into(), 0.5);
        let r = reference(TestId::H2d, LinkClass::Host { pcie_gen: 5 }, None, &t).unwrap();
        assert_eq!(r.efficiency, 0.5);
        assert!(r.source.contains("--thresholds"));
    }

    #[test]
    fn architectures() {
        assert_eq!(architecture("NVIDIA H200"), Some("Hopper"));
        assert_eq!(architecture("NVIDIA H100 80GB HBM3"), Some("Hopper"));
        assert_eq!(architecture("NVIDIA L40S"), Some("Ada"));
        assert_eq!(architecture("NVIDIA A100-SXM4-40GB"), Some("Ampere"));
        assert_eq!(architecture("Tesla V100-SXM2-32GB"), Some("Volta"));
        assert_eq!(architecture("Something"), None);
    }
}
