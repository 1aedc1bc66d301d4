//! A machine as it runs: a topology's links changed to the state an inventory reads or states
//! (a PCIe link trained below its maximum, NVLinks down). One function, so that the health
//! check, the modeled backends, the P2P matrix, the collectives and the topology drawing model
//! one machine.

use super::{Inventory, LinkKind, LoadState, PcieLink, Topology, pcie_rate_gbps};

/// `topo` with its links as `inv` reads or states them: each GPU's PCIe link at the generation
/// and width it runs at where that is below its design (an idle reading lowers the width only:
/// GPUs drop their generation to save power), unknown where the reading does not say; each
/// NVLink pair's rate and its `NV#` count scaled by the share of links up (the fewer of the
/// pair's two ends), each GPU's NVLinks up as read or stated (each link keeps its speed). A GPU the inventory does not cover, and every
/// GPU when there is no inventory, stays as designed.
pub fn as_running(topo: &Topology, inv: Option<&Inventory>) -> Topology {
    let read = |g: usize| inv.and_then(|i| i.gpu(g));
    // Per-direction PCIe rate as the link runs: Some((generation, width)), None when the reading
    // does not say, and the design where nothing was read.
    let pcie_now = |g: usize| -> Option<PcieLink> {
        let gpu = topo.gpu(g)?;
        let Some(i) = read(g) else {
            return Some(gpu.pcie);
        };
        let l = i.pcie.link;
        let trusted = matches!(i.pcie.load, Some(LoadState::UnderLoad | LoadState::Stated));
        let (generation, width) = if trusted {
            (l.gen_current.or(l.gen_max), l.width_current.or(l.width_max))
        } else {
            (l.gen_max, l.width_current.or(l.width_max))
        };
        let now = pcie_rate_gbps(generation?, width?)?;
        Some(match gpu.pcie.line_rate_gbps() {
            Some(design) if now < design => PcieLink {
                gen_current: generation,
                gen_max: generation,
                width_current: width,
                width_max: width,
            },
            _ => gpu.pcie,
        })
    };
    // Fraction of a GPU's NVLinks that are up.
    let nv_fraction = |g: usize| -> f64 {
        read(g)
            .and_then(|i| i.nvlinks_up_of())
            .map_or(1.0, |(up, total)| f64::from(up) / f64::from(total))
    };
    let mut t = topo.clone();
    for gpu in &mut t.gpus {
        gpu.pcie = pcie_now(gpu.index).unwrap_or_default();
        // A link down takes its share away; the others run at their speed.
        let links = read(gpu.index).filter(|i| i.nvlinks.as_ref().is_some_and(|v| !v.is_empty()));
        if let Some(up) = links.and_then(|i| i.nvlinks_active()) {
            gpu.nvlinks_active = Some(up);
        }
    }
    let pcie_rate = |g: usize| pcie_now(g)?.line_rate_gbps();
    for link in &mut t.links {
        match link.kind {
            Some(LinkKind::Nv(n)) => {
                let share = nv_fraction(link.a).min(nv_fraction(link.b));
                if share < 1.0 {
                    // The pair's bonded links as `nvidia-smi topo -m` would count them now; a
                    // pair with none up keeps its kind (its rate says 0).
                    let up = (f64::from(n) * share).round() as u32;
                    if up > 0 {
                        link.kind = Some(LinkKind::Nv(up));
                    }
                    if let Some(rate) = link.line_rate.as_mut() {
                        rate.gbps *= share;
                        rate.basis = format!("{} × {up}/{n} NVLinks up", rate.basis);
                    }
                }
            }
            // A PCIe path runs at the slower end's link as it runs.
            _ => match (pcie_rate(link.a), pcie_rate(link.b)) {
                (Some(a), Some(b)) => {
                    if let Some(rate) = link.line_rate.as_mut() {
                        rate.gbps = rate.gbps.min(a).min(b);
                    }
                }
                _ => link.line_rate = None,
            },
        }
    }
    t
}

/// True when `inv` describes any GPU below its design: a PCIe link running below its maximum
/// generation or width, or an NVLink down.
pub fn below_design(inv: &Inventory) -> bool {
    inv.gpus.iter().any(|g| {
        let l = g.pcie.link;
        let lower =
            |now: Option<u32>, max: Option<u32>| matches!((now, max), (Some(n), Some(m)) if n < m);
        lower(l.gen_current, l.gen_max)
            || lower(l.width_current, l.width_max)
            || g.nvlinks
                .as_ref()
                .is_some_and(|v| v.iter().any(|n| n.active == Some(false)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Gpu, InventoryKind, NvLinkState, TopologySource};

    fn two_gpus() -> Topology {
        let mut t = Topology::new(TopologySource::Catalog {
            id: "t".into(),
            name: "t".into(),
        });
        t.gpus = (0..2)
            .map(|i| Gpu {
                index: i,
                nvlinks_active: Some(18),
                nvlink_gbps_per_link: Some(26.562),
                nvlink_generation: Some(4),
                ..Default::default()
            })
            .collect();
        t.normalize();
        t.link_mut(0, 1).unwrap().kind = Some(LinkKind::Nv(18));
        t.derive_line_rates();
        t
    }

    fn links_up(up: u32) -> Inventory {
        let mut inv = Inventory::new(InventoryKind::Catalog, vec!["t".into()]);
        for g in 0..2 {
            let gi = inv.gpu_mut(g);
            gi.nvlinks_expected = Some(18);
            gi.nvlinks = Some(
                (0..18)
                    .map(|link| NvLinkState {
                        link,
                        active: Some(g == 0 || link < up),
                        ..Default::default()
                    })
                    .collect(),
            );
        }
        inv
    }

    #[test]
    fn links_down_lower_the_pair_and_its_count_not_the_speed_of_a_link() {
        let design = two_gpus();
        let full = design.link(0, 1).unwrap().line_rate.clone().unwrap().gbps;
        let inv = links_up(12);
        assert!(below_design(&inv));
        let t = as_running(&design, Some(&inv));
        let l = t.link(0, 1).unwrap();
        assert_eq!(l.kind, Some(LinkKind::Nv(12)));
        let rate = l.line_rate.as_ref().unwrap();
        assert!((rate.gbps - full * 12.0 / 18.0).abs() < 1e-9);
        assert!(rate.basis.contains("12/18 NVLinks up"), "{}", rate.basis);
        assert_eq!(t.gpu(1).unwrap().nvlinks_active, Some(12));
        assert_eq!(t.gpu(1).unwrap().nvlink_gbps_per_link, Some(26.562));
        // Every link up, or nothing read: the design.
        assert!(!below_design(&links_up(18)));
        assert_eq!(as_running(&design, Some(&links_up(18))), design);
        assert_eq!(as_running(&design, None), design);
    }
}
