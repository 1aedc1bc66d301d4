//! Published figures beside a report's own: for each `[[reference]]` that applies to the
//! machine ([`crate::topology::published::for_topology`]), scalescope's figure it stands
//! beside and the conditions that differ. The report, `check` and the app read this one list.

use crate::model::published::{self, Figure, Ours, Reference};
use crate::model::{BandwidthResult, CollectiveResult, Topology, TopologySource};
use crate::topology::published::{Published, for_topology};

/// One published figure and ours beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Beside {
    /// The catalog machine the figure is recorded on.
    pub machine: &'static Published,
    pub reference: &'static Reference,
    /// Our figure; `None` when the report did not run it.
    pub ours: Option<Ours>,
}

impl Beside {
    /// One line: the published figure, its conditions and source, ours, what differs.
    pub fn line(&self) -> String {
        published::beside_line(self.reference, self.ours.as_ref())
    }

    /// Ours ÷ the published value; `None` without ours.
    pub fn ratio(&self) -> Option<f64> {
        self.ours.as_ref().map(|o| o.value / self.reference.value)
    }
}

/// Every published figure for `topo`, in catalog order, with ours from `bandwidth` and
/// `collectives` beside it.
pub fn beside(
    topo: &Topology,
    bandwidth: &[BandwidthResult],
    collectives: &[CollectiveResult],
) -> Vec<Beside> {
    let driver = match &topo.source {
        TopologySource::Live { driver_version, .. } => driver_version.as_deref(),
        _ => None,
    };
    for_topology(topo)
        .into_iter()
        .flat_map(|m| m.references.iter().map(move |r| (m, r)))
        .map(|(machine, reference)| Beside {
            machine,
            reference,
            ours: published::ours(reference, bandwidth, collectives, topo.gpus.len(), driver),
        })
        .collect()
}

/// The copy figures among `list` (what `check` measures), ours present, by figure (catalog
/// order within one).
pub fn copies_run(list: &[Beside]) -> Vec<&Beside> {
    let mut out: Vec<&Beside> = list
        .iter()
        .filter(|b| matches!(b.reference.figure, Figure::Copy(_)) && b.ours.is_some())
        .collect();
    out.sort_by_key(|b| b.reference.figure);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::published::Kind;
    use crate::model::{CollectiveOp, Source, TestId};

    fn bundled_8x_h200() -> crate::report::Report {
        crate::report::bundled::reports()
            .into_iter()
            .find(|(name, _)| name.starts_with("h200-8x"))
            .unwrap()
            .1
            .unwrap()
    }

    /// The bundled 8x H200 report (measured, live) is shown the HGX H200's figures, its own
    /// beside each, with what differs.
    #[test]
    fn a_measured_8x_h200_gets_the_hgx_h200_figures_with_its_own_beside() {
        let r = bundled_8x_h200();
        let list = beside(
            &r.topology,
            &r.bandwidth.as_ref().unwrap().results,
            &r.collectives.as_ref().unwrap().results,
        );
        assert!(list.iter().all(|b| b.machine.machine_id == "hgx-h200"));
        let h2d: Vec<&Beside> = list
            .iter()
            .filter(|b| b.reference.figure == Figure::Copy(TestId::H2d))
            .collect();
        assert!(h2d.iter().any(|b| b.reference.kind == Kind::Threshold));
        for b in &h2d {
            let ours = b.ours.as_ref().expect("h2d measured");
            assert_eq!(ours.source, Source::Measured);
            assert_eq!(ours.here.driver.as_deref(), Some("580.159.04"));
        }
        // The SM-copy figure says so against our copy-engine h2d.
        assert!(
            h2d.iter()
                .any(|b| b.line().contains("SM copy there, copy engine here")),
            "{h2d:?}"
        );
        // NCCL's all-reduce beside Azure's NVLS figure: NVLS not recorded here.
        let ar = list
            .iter()
            .find(|b| {
                b.reference.figure == Figure::Collective(CollectiveOp::AllReduce)
                    && b.reference.kind == Kind::Threshold
            })
            .unwrap();
        let ours = ar.ours.as_ref().unwrap();
        assert_eq!(ours.here.gpus, Some(8));
        assert!(ar.line().contains("GB/s measured ("), "{}", ar.line());
        assert!(copies_run(&list).iter().all(|b| b.ours.is_some()));
        assert!(
            copies_run(&list)
                .iter()
                .all(|b| matches!(b.reference.figure, Figure::Copy(_)))
        );
    }
}
