//! `report.html`: written by [`crate::document`] (the document model's HTML writer); kept here
//! under its old name for the callers that export it with the other formats.

pub use crate::document::html::escape;

/// The whole report as one self-contained HTML document ([`crate::document::report_html`]).
pub fn report(r: &crate::report::Report) -> String {
    crate::document::report_html(r)
}
