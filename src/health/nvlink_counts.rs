//! What an inventory's NVLinks say, read for the NVLink checks of `state_checks.rs`: each
//! link's error counter, the links listed inactive, and the most links a peer of the same
//! model has.

use super::Evidence;
use crate::model::GpuInventory;

/// The most active NVLinks any other GPU (not `g`) of model `name` had before the tests.
pub(super) fn peers_most_links(ev: &Evidence, g: usize, name: &Option<String>) -> Option<u32> {
    ev.before
        .as_ref()
        .map(|inv| {
            inv.gpus
                .iter()
                .filter(|o| o.index != g && o.name == *name)
                .filter_map(|o| o.nvlinks_active())
                .max()
        })
        .unwrap_or(None)
}

/// ` (links 3, 7 inactive)`: the links listed as inactive; empty when none is.
pub(super) fn inactive_links_text(listed: Option<&[crate::model::NvLinkState]>) -> String {
    let down: Vec<String> = listed
        .map(|v| {
            v.iter()
                .filter(|l| l.active == Some(false))
                .map(|l| l.link.to_string())
                .collect()
        })
        .unwrap_or_default();
    if down.is_empty() {
        return String::new();
    }
    format!(
        " (link{} {} inactive)",
        if down.len() > 1 { "s" } else { "" },
        down.join(", ")
    )
}

/// Reads one error counter of an NVLink.
pub(super) type CounterOf = fn(&crate::model::NvLinkState) -> Option<u64>;

/// One NVLink counter of every link that has it: (link, count).
pub(super) fn nv_counter(g: Option<&GpuInventory>, f: CounterOf) -> Vec<(u32, u64)> {
    g.and_then(|g| g.nvlinks.as_ref())
        .map(|v| v.iter().filter_map(|l| f(l).map(|c| (l.link, c))).collect())
        .unwrap_or_default()
}
