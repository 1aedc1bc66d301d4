//! P2P checks: each GPU pair's P2P status, as the driver reports it, against what the link
//! between them allows.

use super::causes;
use super::{Check, CheckId, Subject, Verdict};
use crate::model::{LinkKind, P2pStatus, Source, Topology};

/// P2P status of every pair against what its connection allows.
pub fn p2p_status(topo: &Topology, gpus: &[usize], source: Source) -> Vec<Check> {
    let mut out = Vec::new();
    for (i, &a) in gpus.iter().enumerate() {
        for &b in &gpus[i + 1..] {
            let Some(link) = topo.link(a, b) else {
                continue;
            };
            let Some(kind) = link.kind else {
                continue;
            };
            let statuses: Vec<P2pStatus> = [(a, b), (b, a)]
                .iter()
                .filter_map(|&(x, y)| topo.p2p(x, y))
                .flat_map(|p| [p.caps.read, p.caps.write])
                .flatten()
                .collect();
            if statuses.is_empty() {
                continue;
            }
            let refused: Vec<P2pStatus> = statuses
                .iter()
                .copied()
                .filter(|s| *s != P2pStatus::Ok)
                .collect();
            let subject = Subject::Pair(a, b);
            let codes = || {
                let mut c: Vec<&str> = refused.iter().map(|s| s.code()).collect();
                c.dedup();
                c.join("/")
            };
            // A pair whose NVLinks are all down keeps its kind (`as_running`): its rate says 0,
            // or a GPU of it has none active.
            let none_up: Vec<usize> = [a, b]
                .into_iter()
                .filter(|&g| topo.gpu(g).and_then(|x| x.nvlinks_active) == Some(0))
                .collect();
            let down = link.no_nvlink_up() || !none_up.is_empty();
            let check = match kind {
                LinkKind::Nv(_) if refused.is_empty() && down => {
                    nvlinks_down((a, b), &none_up, kind, source)
                }
                LinkKind::Nv(_) if refused.is_empty() => Check::new(
                    CheckId::P2pStatus,
                    subject,
                    Verdict::Pass,
                    source,
                    format!("P2P read/write OK over {kind}"),
                ),
                LinkKind::Nv(_) => Check::new(
                    CheckId::P2pStatus,
                    subject,
                    Verdict::Fail,
                    source,
                    format!(
                        "the driver reports P2P {} between GPUs joined by {kind}",
                        codes()
                    ),
                )
                .because(&causes::P2P_NVLINK),
                LinkKind::Pix | LinkKind::Pxb | LinkKind::Phb if refused.is_empty() => Check::new(
                    CheckId::P2pStatus,
                    subject,
                    Verdict::Pass,
                    source,
                    format!("P2P read/write OK over PCIe ({kind})"),
                ),
                LinkKind::Pix | LinkKind::Pxb | LinkKind::Phb
                    if refused
                        .iter()
                        .all(|s| matches!(s, P2pStatus::Ns | P2pStatus::Cns)) =>
                {
                    // Under one switch (PIX/PXB) P2P should work; through the host bridge (PHB)
                    // chipsets may legitimately refuse it.
                    let v = if kind == LinkKind::Phb {
                        Verdict::Warn
                    } else {
                        Verdict::Fail
                    };
                    Check::new(
                        CheckId::P2pStatus,
                        subject,
                        v,
                        source,
                        format!(
                            "the driver reports P2P {} on a {kind} path, which allows P2P",
                            codes()
                        ),
                    )
                    .because(&causes::P2P_ACS_IOMMU)
                }
                // GNS (the GPU model has no P2P), TNS, or a path across sockets: by design.
                _ => continue,
            };
            out.push(check);
        }
    }
    out
}

/// A pair whose driver reports P2P OK while none of its NVLinks is up (`none_up`: its GPUs
/// with no NVLink active): P2P cannot take them.
fn nvlinks_down(
    (a, b): (usize, usize),
    none_up: &[usize],
    kind: LinkKind,
    source: Source,
) -> Check {
    let none: Vec<String> = none_up.iter().map(|g| format!("GPU {g}")).collect();
    Check::new(
        CheckId::P2pStatus,
        Subject::Pair(a, b),
        Verdict::Pass,
        source,
        format!(
            "P2P read/write OK, but no NVLink of the pair's {kind} is up{}: P2P cannot run over \
             NVLink now (nvlink_links)",
            if none.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} {} none active)",
                    none.join(" and "),
                    if none.len() > 1 { "have" } else { "has" }
                )
            }
        ),
    )
}
