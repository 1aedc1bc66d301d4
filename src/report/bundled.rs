//! The example reports embedded from `assets/reports/*.json` at build time (see `build.rs`).

include!(concat!(env!("OUT_DIR"), "/bundled_reports.rs"));

use super::{Report, ReportError, parse};

/// Every bundled report, parsed, with its file name. A bundled file that does not parse is
/// returned as its error rather than dropped, so that tests catch it.
pub fn reports() -> Vec<(&'static str, Result<Report, ReportError>)> {
    BUNDLED
        .iter()
        .map(|(name, text)| (*name, parse(text)))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_bundled_report_parses() {
        for (name, r) in super::reports() {
            if let Err(e) = r {
                panic!("assets/reports/{name}: {e}");
            }
        }
    }

    /// The bundled examples predate real framework runs: they say so, and their scaling
    /// machine is named as its topology names it, not `live: vm` as schema 1 wrote it.
    #[test]
    fn the_examples_say_they_are_the_older_method() {
        for (name, r) in super::reports() {
            let r = r.unwrap();
            if r.schema_version >= 2 {
                continue;
            }
            let note = r.older_method().unwrap_or_else(|| panic!("{name}"));
            assert!(note.contains("synthetic proxy steps"), "{note}");
            let label = &r
                .scaling
                .as_ref()
                .unwrap()
                .run
                .machine
                .as_ref()
                .unwrap()
                .label;
            assert!(!label.starts_with("live:"), "{name}: {label}");
            assert!(label.contains("measured live"), "{name}: {label}");
        }
    }
}
