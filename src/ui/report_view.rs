//! What the app says about a report beside its views: one line of where its figures come from,
//! where the report itself comes from (its origin badge) and the name it is listed under. The
//! report's pages (report.png, each view's page, report.pdf) are the document's
//! ([`crate::document`]), rendered on the CPU.

use super::palette::SourceBadge;
use crate::model::Source;
use crate::report::Report;
use crate::report::summary as report_summary;

/// Width of the pages the app renders itself (the Compare view's picture), points.
pub const PAGE_WIDTH: u32 = 1400;

/// One line naming the report and where its figures come from, for banners and page headers.
pub fn provenance(r: &Report) -> String {
    let src = |s: Option<Source>| s.map_or("—".to_string(), |s| s.to_string());
    [
        r.title(),
        format!(
            "bandwidth {}, collectives {}, scaling {}",
            src(r.bandwidth.as_ref().map(|b| b.source)),
            r.collectives
                .as_ref()
                .map_or("—".to_string(), |c| c.source_words()),
            src(r.scaling.as_ref().map(|s| s.source)),
        ),
        format!("scalescope {}", r.machine.scalescope_version),
    ]
    .join("  ·  ")
}

/// What an opened report shows, in the app's provenance vocabulary: a short badge (`example`,
/// `report file`, `modeled`) and the words behind it, [`report_summary::origin`]'s
/// (`example (measured on 2× H200 SXM · vm, 2026-11-22)`, `modeled for 2× H200 SXM 141 GB,
/// catalog entry h200-2x-sxm, …`). Nothing in a report is "measured here": only this machine's
/// own runs are; and a report with anything modeled is badged modeled, whatever else it holds.
pub struct Origin {
    /// The badge.
    pub badge: SourceBadge,
    /// The badge's meaning, for hover text and headers.
    pub text: String,
}

/// The [`Origin`] of `r`; `example` for the reports bundled with scalescope.
pub fn origin(r: &Report, example: bool) -> Origin {
    let what = report_summary::origin(r);
    if example {
        Origin {
            badge: SourceBadge::Example,
            text: format!("example ({what})"),
        }
    } else if r.has_modeled() {
        Origin {
            badge: SourceBadge::Modeled,
            text: what,
        }
    } else {
        Origin {
            badge: SourceBadge::ReportFile,
            text: format!("report file ({what})"),
        }
    }
}

/// The name of a report in the Sources list: `2× H200 SXM · vm · 2026-11-22`, with
/// `(modeled)` when any figure is.
pub fn list_name(r: &Report) -> String {
    let name = format!("{} · {}", report_summary::machine_title(r), r.date());
    if r.has_modeled() {
        format!("{name} (modeled)")
    } else {
        name
    }
}
