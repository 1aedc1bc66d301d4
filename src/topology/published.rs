//! The published figures that apply to a topology: the `[[reference]]` records of the catalog
//! entries it is, or whose GPU it has (schema in `assets/hardware/README.md`, types in
//! [`crate::model::published`]). A measured 2× H200 box is shown the 8× HGX H200's figures,
//! each with the conditions that differ ("8 GPUs there, 2 here").

use std::sync::OnceLock;

use serde::Deserialize;

use super::catalog::FILES;
use crate::model::published::Reference;
use crate::model::{Topology, TopologySource};

/// One catalog machine's published figures.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// The catalog id, e.g. `dgx-h100`.
    pub machine_id: String,
    /// Its name, e.g. `NVIDIA DGX H100`.
    pub machine_name: String,
    /// Its GPU as nvidia-smi names it.
    pub gpu_model: String,
    /// The figures, in the file's order.
    pub references: Vec<Reference>,
}

/// Just what this module reads of a catalog file (the catalog checks the rest).
#[derive(Deserialize)]
struct Header {
    machine: MachineHeader,
    gpu: GpuHeader,
    #[serde(default)]
    reference: Vec<Reference>,
}

#[derive(Deserialize)]
struct MachineHeader {
    id: String,
    name: String,
}

#[derive(Deserialize)]
struct GpuHeader {
    model: String,
}

/// Every embedded entry's published figures (entries without any left out), read once. A file
/// that does not parse or holds a reference its checks refuse is left out here; the catalog's
/// own tests load every embedded file, so that does not happen in a release.
pub fn all() -> &'static [Published] {
    static ALL: OnceLock<Vec<Published>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(_, text)| toml::from_str::<Header>(text).ok())
            .filter(|h| h.reference.iter().all(|r| r.check().is_ok()))
            .filter(|h| !h.reference.is_empty())
            .map(|h| Published {
                machine_id: h.machine.id,
                machine_name: h.machine.name,
                gpu_model: h.gpu.model,
                references: h.reference,
            })
            .collect()
    })
}

/// The published figures for `topo`: a catalog entry's own; else those of every entry whose
/// GPU model is `topo`'s (nvidia-smi's name, compared without case). Empty when none apply.
pub fn for_topology(topo: &Topology) -> Vec<&'static Published> {
    if let TopologySource::Catalog { id, .. } = &topo.source
        && let Some(p) = all().iter().find(|p| &p.machine_id == id)
    {
        return vec![p];
    }
    let Some(model) = topo.gpus.iter().find_map(|g| g.name.as_deref()) else {
        return Vec::new();
    };
    all()
        .iter()
        .filter(|p| p.gpu_model.trim().eq_ignore_ascii_case(model.trim()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::published::Kind;

    /// The machines sold now each carry at least one published figure with a source.
    #[test]
    fn every_current_machine_has_a_sourced_published_figure() {
        for id in ["dgx-h100", "hgx-h200", "dgx-b200", "gb200-nvl72"] {
            let p = all()
                .iter()
                .find(|p| p.machine_id == id)
                .unwrap_or_else(|| panic!("{id} has no published figure"));
            for r in &p.references {
                assert_eq!(r.check(), Ok(()), "{id}: {r:?}");
            }
        }
    }

    /// Every embedded file's references pass their checks (a bad one would drop the entry).
    #[test]
    fn no_embedded_reference_is_dropped() {
        for (file, text) in FILES {
            let h: Header = toml::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            for (i, r) in h.reference.iter().enumerate() {
                assert_eq!(r.check(), Ok(()), "{file} reference[{i}]");
            }
        }
    }

    /// A catalog machine of the crate's own (2x H200) with one reference appended.
    fn with_reference() -> String {
        let (_, text) = FILES
            .iter()
            .find(|(f, _)| *f == "h200-2x-sxm.toml")
            .expect("embedded");
        format!(
            "{text}{}",
            r#"
[[reference]]
figure = "h2d"
kind = "threshold"
value = 48.0
unit = "GB/s"
conditions = { gpus = 2, method = "ce" }
source = { title = "t", repository = "a/b", file = "c.conf", date = "2024-06-28" }
"#
        )
    }

    /// A bad `[[reference]]` makes the catalog file an error of one line naming the file and
    /// the field; a good one loads.
    #[test]
    fn a_reference_without_a_source_or_in_range_value_is_a_one_line_error() {
        let message = |text: &str| match crate::topology::catalog::parse_entry("two.toml", text) {
            Ok(_) => "ok".to_string(),
            Err(e) => e.to_string(),
        };
        let minimal = with_reference();
        assert_eq!(message(&minimal), "ok");
        for (from, to, want) in [
            (
                r#"source = { title = "t", repository = "a/b", file = "c.conf", date = "2024-06-28" }"#,
                "",
                "missing field `source`",
            ),
            (
                r#"repository = "a/b", file = "c.conf", "#,
                "",
                "reference[0].source has neither url nor repository",
            ),
            (
                "value = 48.0",
                "value = 0.0",
                "reference[0].value: 0 GB/s is out of range",
            ),
            (
                "value = 48.0",
                "value = 1e300",
                "reference[0].value: 1e300 GB/s is out of range",
            ),
            (
                r#"unit = "GB/s""#,
                r#"unit = "ns""#,
                "reference[0].unit: h2d is in GB/s, not ns",
            ),
            (
                r#"figure = "h2d""#,
                r#"figure = "h3d""#,
                "unknown figure \"h3d\"",
            ),
            (
                r#"kind = "threshold""#,
                r#"kind = "rumour""#,
                "unknown variant `rumour`",
            ),
            (
                "gpus = 2,",
                "gpus = 2, nvlz = true,",
                "unknown field `nvlz`",
            ),
            (
                r#"date = "2024-06-28""#,
                r#"date = "June""#,
                "reference[0].source.date \"June\"",
            ),
        ] {
            let text = minimal.replace(from, to);
            let m = message(&text);
            assert!(m.contains(want), "{from} → {to}: {m}");
            assert!(m.contains("two.toml"), "{m}");
            assert!(!m.contains('\n'), "{m}");
        }
    }

    #[test]
    fn a_catalog_machine_gets_its_own_and_a_measured_one_those_of_its_gpu() {
        let t = crate::topology::catalog::load("dgx-h100").unwrap();
        let p = for_topology(&t);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].machine_id, "dgx-h100");
        // A 2x H200 box (its own catalog entry has no figures) is shown the HGX H200's.
        let mut two = crate::topology::catalog::load("h200-2x-sxm").unwrap();
        two.source = TopologySource::Imported {
            paths: vec!["topo.txt".into()],
        };
        let p = for_topology(&two);
        assert!(p.iter().any(|p| p.machine_id == "hgx-h200"));
        assert!(
            p.iter()
                .flat_map(|p| &p.references)
                .any(|r| r.kind == Kind::Measured)
        );
        let mut unknown = two.clone();
        for g in &mut unknown.gpus {
            g.name = Some("NVIDIA Z1".into());
        }
        assert!(for_topology(&unknown).is_empty());
    }
}
