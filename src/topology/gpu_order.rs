//! Which number nvidia-smi gives each GPU of a capture that does not print it. `nvidia-smi -q`
//! lists its GPUs by bus id, in nvidia-smi's order, without their index; a GPU that did not
//! answer the driver has no section (it may print `Unable to determine the device handle for
//! GPU 0000:0B:00.0: Unknown Error` instead), so numbering the sections by position would give
//! every GPU after it the number of the one before. nvidia-smi numbers GPUs in PCI bus order
//! (the order it lists them in), so where the lost GPUs' bus ids are in the capture each GPU
//! takes its place among all of them; where an `nvlink` capture beside it names every GPU's
//! index and UUID, the UUIDs say it.

use std::collections::BTreeMap;

use crate::model::{BusKey, Inventory, MissingGpu, pci_bus_key};

/// A GPU nvidia-smi could not reach: `Unable to determine the device handle for GPU
/// 0000:0B:00.0: Unknown Error` → (`0000:0B:00.0`, `Unknown Error`).
#[derive(Clone, Debug, PartialEq)]
pub struct Lost {
    pub bus_id: String,
    pub reason: String,
}

/// Every `Unable to determine the device handle for GPU…` line of `text`.
pub fn lost_gpus(text: &str) -> Vec<Lost> {
    const HEAD: &str = "unable to determine the device handle for gpu";
    text.lines()
        .filter_map(|line| {
            let t = line.trim();
            let head = t.get(..HEAD.len())?;
            if !head.eq_ignore_ascii_case(HEAD) {
                return None;
            }
            let rest = t[HEAD.len()..].trim_start();
            // The bus id ends at the first ": " (it holds colons of its own).
            let (bus, reason) = rest.split_once(": ").unwrap_or((rest, ""));
            let bus = bus.trim().trim_end_matches(':');
            pci_bus_key(bus).map(|_| Lost {
                bus_id: bus.to_string(),
                reason: reason.trim().to_string(),
            })
        })
        .collect()
}

/// Numbers the GPUs of a `-q` capture parsed by position (`inv`, its GPUs 0…k−1 in the order
/// listed) with the `lost` GPUs among them in bus order: each GPU's index is its place among
/// all of them, the lost ones go into `inv.missing`. Leaves `inv` as it is (and says false)
/// where a listed GPU has no bus id or the capture does not list them in bus order.
pub fn place_lost(inv: &mut Inventory, lost: &[Lost], attached: Option<usize>) -> bool {
    if lost.is_empty() {
        return false;
    }
    let listed: Option<Vec<_>> = inv
        .gpus
        .iter()
        .map(|g| g.pci_bus_id.as_deref().and_then(pci_bus_key))
        .collect();
    let Some(listed) = listed else {
        return false;
    };
    if listed.windows(2).any(|w| w[0] >= w[1]) {
        return false;
    }
    let mut all: Vec<(BusKey, Option<&Lost>)> = listed.iter().map(|k| (*k, None)).collect();
    for l in lost {
        let Some(k) = pci_bus_key(&l.bus_id) else {
            continue;
        };
        if all.iter().any(|(x, _)| *x == k) {
            continue;
        }
        all.push((k, Some(l)));
    }
    all.sort_by_key(|(k, _)| *k);
    all.truncate(crate::model::MAX_GPUS);
    let rank: BTreeMap<_, usize> = all.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
    for (g, k) in inv.gpus.iter_mut().zip(&listed) {
        g.index = rank[k];
    }
    inv.gpus.sort_by_key(|g| g.index);
    let total = all.len();
    inv.missing = all
        .iter()
        .enumerate()
        .filter_map(|(index, (_, l))| {
            let l = (*l)?;
            let why = if l.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", l.reason)
            };
            Some(MissingGpu {
                index,
                seen: format!(
                    "nvidia-smi -q could not reach GPU {}{why} (\"Unable to determine the device \
                     handle\"); numbered by its place in bus order among the {total} GPUs",
                    l.bus_id
                ),
                lost: true,
            })
        })
        .collect();
    // Attached GPUs beyond those named (not listed, no line of their own) stay at the end.
    if let Some(a) = attached.filter(|&a| a > total && a <= crate::model::MAX_GPUS) {
        inv.missing.extend((total..a).map(|index| MissingGpu {
            index,
            seen: format!("nvidia-smi -q counts {a} attached GPUs and names {total}"),
            lost: false,
        }));
    }
    true
}

/// Renumbers the GPUs of a capture parsed by position (`inv`, whose `missing` GPUs show it has
/// a gap) by their UUIDs in `named`: index → UUID from a capture that prints both (`nvidia-smi
/// nvlink -s`). Only where every listed GPU's UUID is there; says whether it renumbered.
pub fn renumber_by_uuid(inv: &mut Inventory, named: &BTreeMap<String, usize>) -> bool {
    renumber_by(
        inv,
        |g| g.uuid.as_deref().map(str::to_ascii_lowercase),
        named,
        "their UUIDs in the `nvidia-smi nvlink` capture",
    )
}

/// [`renumber_by_uuid`] by bus id, against a capture nvidia-smi's own lines placed (`named`:
/// bus id → index).
pub fn renumber_by_bus(inv: &mut Inventory, named: &BTreeMap<BusKey, usize>) -> bool {
    renumber_by(
        inv,
        |g| g.pci_bus_id.as_deref().and_then(pci_bus_key),
        named,
        "their bus ids in the capture that names the lost GPU",
    )
}

fn renumber_by<K: Ord>(
    inv: &mut Inventory,
    key: impl Fn(&crate::model::GpuInventory) -> Option<K>,
    named: &BTreeMap<K, usize>,
    by: &str,
) -> bool {
    // No gap, or one nvidia-smi's own lines placed already.
    if inv.missing.is_empty() || inv.missing.iter().any(|m| m.lost) {
        return false;
    }
    let to: Option<Vec<usize>> = inv
        .gpus
        .iter()
        .map(|g| key(g).and_then(|k| named.get(&k).copied()))
        .collect();
    let Some(to) = to else {
        return false;
    };
    // Numbers nvidia-smi could give, one GPU each (a UUID twice, or `GPU 4000000000:`, is not
    // a numbering to follow).
    let distinct: std::collections::BTreeSet<usize> = to.iter().copied().collect();
    if distinct.len() != to.len() || to.iter().any(|&t| t >= crate::model::MAX_GPUS) {
        return false;
    }
    if to.iter().zip(&inv.gpus).all(|(t, g)| *t == g.index) {
        return false;
    }
    let attached = inv.gpus.len() + inv.missing.len();
    for (g, t) in inv.gpus.iter_mut().zip(&to) {
        g.index = *t;
    }
    inv.gpus.sort_by_key(|g| g.index);
    let described = inv.gpus.len();
    inv.missing = (0..attached.max(to.iter().max().map_or(0, |m| m + 1)))
        .filter(|i| !to.contains(i))
        .map(|index| MissingGpu {
            index,
            seen: format!(
                "nvidia-smi -q describes {}, numbered by {by}; GPU {index} is not among them",
                crate::model::quantities::gpus(described)
            ),
            lost: false,
        })
        .collect();
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{GpuInventory, InventoryKind};

    fn inv(buses: &[&str]) -> Inventory {
        let mut inv = Inventory::new(InventoryKind::Imported, vec!["q.txt".into()]);
        for (i, b) in buses.iter().enumerate() {
            inv.gpus.push(GpuInventory {
                index: i,
                pci_bus_id: Some(b.to_string()),
                uuid: Some(format!("GPU-{b}")),
                ..Default::default()
            });
        }
        inv
    }

    #[test]
    fn lost_lines_are_read_with_or_without_the_space() {
        let text = "Unable to determine the device handle for GPU 0000:0B:00.0: Unknown Error\n\
                    Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost. Reboot the system to recover this GPU\n\
                    Unable to determine the device handle for GPU something\n";
        let l = lost_gpus(text);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[0].bus_id, "0000:0B:00.0");
        assert_eq!(l[0].reason, "Unknown Error");
        assert_eq!(l[1].bus_id, "0000:3B:00.0");
        assert!(l[1].reason.starts_with("GPU is lost"));
    }

    #[test]
    fn a_lost_gpu_in_the_middle_keeps_the_others_numbers() {
        let mut q = inv(&["00000000:0A:00.0", "00000000:2C:00.0", "00000000:3D:00.0"]);
        let lost =
            lost_gpus("Unable to determine the device handle for GPU 0000:1B:00.0: Unknown Error");
        assert!(place_lost(&mut q, &lost, Some(4)));
        let idx: Vec<usize> = q.gpus.iter().map(|g| g.index).collect();
        assert_eq!(idx, [0, 2, 3]);
        assert_eq!(q.missing.len(), 1);
        assert_eq!(q.missing[0].index, 1);
        assert!(
            q.missing[0].seen.contains("0000:1B:00.0: Unknown Error"),
            "{}",
            q.missing[0].seen
        );
    }

    #[test]
    fn out_of_order_or_unnamed_captures_are_left_by_position() {
        let lost = lost_gpus("Unable to determine the device handle for GPU 0000:1B:00.0: x");
        let mut q = inv(&["00000000:3D:00.0", "00000000:0A:00.0"]);
        assert!(!place_lost(&mut q, &lost, None));
        assert_eq!(q.gpus[0].index, 0);
        let mut q = inv(&["00000000:0A:00.0"]);
        q.gpus[0].pci_bus_id = None;
        assert!(!place_lost(&mut q, &lost, None));
    }

    #[test]
    fn uuids_from_an_nvlink_capture_renumber_a_capture_with_a_gap() {
        let mut q = inv(&["a", "c", "d"]);
        q.missing.push(MissingGpu {
            index: 3,
            seen: "counted".into(),
            lost: false,
        });
        let named: BTreeMap<String, usize> =
            [("gpu-a", 0), ("gpu-b", 1), ("gpu-c", 2), ("gpu-d", 3)]
                .into_iter()
                .map(|(u, i)| (u.to_string(), i))
                .collect();
        assert!(renumber_by_uuid(&mut q, &named));
        let idx: Vec<usize> = q.gpus.iter().map(|g| g.index).collect();
        assert_eq!(idx, [0, 2, 3]);
        assert_eq!(q.missing.iter().map(|m| m.index).collect::<Vec<_>>(), [1]);
        // Without a gap nothing moves.
        let mut full = inv(&["a", "b"]);
        assert!(!renumber_by_uuid(&mut full, &named));
        // A UUID under two numbers, or a number no machine has: not followed.
        for bad in [
            [("gpu-a", 0), ("gpu-c", 0)],
            [("gpu-a", 0), ("gpu-c", 4_000_000_000)],
        ] {
            let mut q = inv(&["a", "c"]);
            q.missing.push(MissingGpu {
                index: 2,
                seen: "counted".into(),
                lost: false,
            });
            let named: BTreeMap<String, usize> =
                bad.into_iter().map(|(u, i)| (u.to_string(), i)).collect();
            assert!(!renumber_by_uuid(&mut q, &named));
            assert_eq!(q.gpus[1].index, 1);
        }
    }
}
