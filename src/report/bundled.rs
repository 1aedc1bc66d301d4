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
}
