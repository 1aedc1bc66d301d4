//! What a copy should reach: the path's line rate × the reference efficiency of the one table
//! ([`crate::model::efficiency`]: the bundled reports' medians, borrowed figures said so), which
//! the modeled backend uses too. A `[efficiency]` entry of the thresholds replaces it, and a
//! figure measured on Hopper says that it is borrowed for another architecture.

use crate::model::TestId;
use crate::model::efficiency::{self, Path};

use super::Thresholds;

/// A reference efficiency and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Fraction of the line rate a healthy link reaches.
    pub efficiency: f64,
    /// Where the figure comes from, for the check's `basis`.
    pub source: String,
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

/// The reference efficiency of `test` over `path` for a GPU named `gpu_name`; `None` for tests
/// the table has none for. A `[efficiency]` entry of the thresholds replaces the table's.
pub fn reference(
    test: TestId,
    path: Path,
    gpu_name: Option<&str>,
    thresholds: &Thresholds,
) -> Option<Reference> {
    if let Some(&eff) = thresholds.efficiency.get(test.id()) {
        return Some(Reference {
            efficiency: eff,
            source: format!("{:.1} % of line rate (--thresholds)", eff * 100.0),
        });
    }
    let r = efficiency::reference(test, path)?;
    let borrowed = match gpu_name.and_then(architecture) {
        Some(a) if r.hopper && a != "Hopper" => format!("; measured on Hopper, borrowed for {a}"),
        _ => String::new(),
    };
    Some(Reference {
        efficiency: r.efficiency,
        source: format!("{}{borrowed}", r.basis),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h200_figures_come_from_the_bundled_report() {
        let t = Thresholds::default();
        let r = reference(TestId::P2pReadCe, Path::Nvlink, Some("NVIDIA H200"), &t).unwrap();
        assert!((r.efficiency * 478.116 - 393.8).abs() < 0.5);
        assert!(r.source.contains(efficiency::BUNDLED_REPORT) && !r.source.contains("borrowed"));
        let r = reference(
            TestId::P2pReadCe,
            Path::Nvlink,
            Some("NVIDIA A100-SXM4-80GB"),
            &t,
        )
        .unwrap();
        assert!(r.source.contains("borrowed for Ampere"), "{}", r.source);
        let r = reference(TestId::H2d, Path::Host { pcie_gen: 4 }, None, &t).unwrap();
        assert_eq!(r.efficiency, 0.825);
        assert!(r.source.contains("borrowed"));
        assert!(
            reference(TestId::LatencyD2d, Path::Nvlink, None, &t).is_none(),
            "latency is not judged"
        );
    }

    #[test]
    fn thresholds_override_the_reference() {
        let mut t = Thresholds::default();
        t.efficiency.insert("h2d".into(), 0.5);
        let r = reference(TestId::H2d, Path::Host { pcie_gen: 5 }, None, &t).unwrap();
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
