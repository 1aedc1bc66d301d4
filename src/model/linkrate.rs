//! Line rates: the most a link can carry per direction, in GB/s (10^9 bytes per second).

/// The widths a PCIe link has (PCI Express Base Specification: x1, x2, x4, x8, x12, x16, x32).
pub const PCIE_WIDTHS: [u32; 7] = [1, 2, 4, 8, 12, 16, 32];

/// Per-direction data rate of one PCIe lane in GB/s for PCIe generation `gen`.
///
/// Transfer rate × encoding efficiency ÷ 8 bits, from the PCI-SIG base specifications:
/// Gen1 2.5 GT/s and Gen2 5 GT/s with 8b/10b; Gen3 8 GT/s, Gen4 16 GT/s and Gen5 32 GT/s with
/// 128b/130b; Gen6 64 GT/s with 1b/1b FLIT mode (242 payload bytes of each 256-byte FLIT).
fn pcie_lane_gbps(generation: u32) -> Option<f64> {
    let (gts, efficiency) = match generation {
        1 => (2.5, 8.0 / 10.0),
        2 => (5.0, 8.0 / 10.0),
        3 => (8.0, 128.0 / 130.0),
        4 => (16.0, 128.0 / 130.0),
        5 => (32.0, 128.0 / 130.0),
        6 => (64.0, 242.0 / 256.0),
        _ => return None,
    };
    Some(gts * efficiency / 8.0)
}

/// Per-direction line rate of a PCIe link of generation `generation` and `width` lanes, in GB/s.
///
/// Gen3 x16 ≈ 15.75, Gen4 x16 ≈ 31.5, Gen5 x16 ≈ 63.0. `None` for an unknown generation or a
/// width of zero.
pub fn pcie_rate_gbps(generation: u32, width: u32) -> Option<f64> {
    if width == 0 {
        return None;
    }
    pcie_lane_gbps(generation).map(|lane| lane * f64::from(width))
}

/// The per-link, per-direction rate scalescope assumes for an NVLink of unknown speed, in GB/s.
///
/// 25 GB/s is the per-link, per-direction rate of NVLink 2, 3 and 4 (V100, A100, H100 datasheets:
/// 300, 600 and 900 GB/s bidirectional over 6, 12 and 18 links).
pub const DEFAULT_NVLINK_GBPS: f64 = 25.0;

/// The per-link, per-direction NVLink rates scalescope accepts from a capture or a catalog
/// entry, in GB/s. The fastest link shipped is NVLink 5's 50 GB/s (below); 1,000 leaves room
/// for generations to come while keeping every sum over links and GPU pairs finite, so a
/// `1e308` or `1e309` in a file is refused instead of turning into `inf`/`NaN` figures.
pub const NVLINK_GBPS_PER_LINK: crate::model::validate::Bounds =
    crate::model::validate::Bounds::closed(1.0, 1000.0, "GB/s");

/// The most NVLinks one GPU may have in a catalog entry or a capture. NVML's
/// `NVML_NVLINK_MAX_LINKS` is 18 (H100, B200); 64 leaves room for future parts while keeping the
/// per-link lists small (`nvlinks = 4294967295` once asked for 309 GB).
pub const NVLINKS_PER_GPU_MAX: u32 = 64;

/// Per-link, per-direction NVLink rate by NVLink generation, in GB/s.
///
/// From NVIDIA's datasheets (total bidirectional bandwidth ÷ links ÷ 2): NVLink 1 (P100) 160 GB/s
/// over 4 links → 20; NVLink 2 (V100) 300/6 → 25; NVLink 3 (A100) 600/12 → 25; NVLink 4 (H100)
/// 900/18 → 25; NVLink 5 (B200) 1800/18 → 50. NVML reports the signalling rate per link where it
/// can (26.562 GB/s on H100/H200), which is preferred over this table.
pub fn nvlink_rate_per_link_gbps(generation: u32) -> Option<f64> {
    match generation {
        1 => Some(20.0),
        2..=4 => Some(25.0),
        5 => Some(50.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_x16_rates_match_the_usual_figures() {
        let close = |a: f64, b: f64| (a - b).abs() < 0.01;
        assert!(close(pcie_rate_gbps(3, 16).unwrap(), 15.754));
        assert!(close(pcie_rate_gbps(4, 16).unwrap(), 31.508));
        assert!(close(pcie_rate_gbps(5, 16).unwrap(), 63.015));
        assert!(close(pcie_rate_gbps(1, 16).unwrap(), 4.0));
        assert!(close(pcie_rate_gbps(4, 8).unwrap(), 15.754));
    }

    #[test]
    fn unknown_pcie_is_none_not_zero() {
        assert_eq!(pcie_rate_gbps(0, 16), None);
        assert_eq!(pcie_rate_gbps(9, 16), None);
        assert_eq!(pcie_rate_gbps(4, 0), None);
    }

    #[test]
    fn nvlink_generations() {
        assert_eq!(nvlink_rate_per_link_gbps(4), Some(25.0));
        assert_eq!(nvlink_rate_per_link_gbps(5), Some(50.0));
        assert_eq!(nvlink_rate_per_link_gbps(0), None);
    }
}
