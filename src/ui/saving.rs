//! Save CSV, Save PNG and Export report.html: what to write for the view on screen, made from
//! the source's report (never rebuilt from what a view holds), on the save thread.
//!
//! A view's PNG is the report's page as `--bench` writes it ([`crate::document::page_png`]),
//! typeset on the CPU; only the Compare view, which has no page in a report, is drawn by egui.
//! The Fleet view saves the open fleet as `fleet report` writes it: fleet.csv, and fleet.png's
//! one-page summary.

use std::path::Path;

use eframe::egui::Ui;

use super::action::{Action, SaveKind, View};
use super::views;
use super::{report_view, snapshot};
use crate::document::Page;
use crate::fleet::judge::FleetOutcome;
use crate::report::Report;

/// The work of a Save: makes the file's bytes (on the save thread).
pub type SaveWork = Box<dyn FnOnce() -> Result<Vec<u8>, String> + Send>;

/// Why there is nothing to save.
pub const NOTHING_TO_SAVE: &str = "Nothing to save in this view yet.";

/// The file name a Save offers: `bandwidth.csv`, `soak.png`, `report.html`.
pub fn file_name(view: View, kind: SaveKind) -> String {
    let base = view.label().to_lowercase();
    match kind {
        SaveKind::Csv => format!("{base}.csv"),
        SaveKind::Png => format!("{base}.png"),
        SaveKind::Html => "report.html".into(),
    }
}

/// What a Save of `view` writes: `shown` is the source's report (none while nothing is
/// loaded), `reports` every opened report (what Compare shows), `fleet` the open fleet. An
/// error: why there is nothing to save, for the error line.
pub fn work(
    view: View,
    kind: SaveKind,
    shown: Option<&Report>,
    reports: &[&Report],
    cost: &views::compare::CostSettings,
    fleet: Option<&FleetOutcome>,
) -> Result<SaveWork, String> {
    if view == View::Compare && kind != SaveKind::Html {
        return Ok(compare(kind, reports, cost.clone()));
    }
    if view == View::Fleet && kind != SaveKind::Html {
        return Ok(fleet_file(kind, fleet.ok_or(NOTHING_TO_SAVE)?.clone()));
    }
    let r = shown.ok_or(NOTHING_TO_SAVE)?.clone();
    let has_section = match view {
        View::Bandwidth => r.bandwidth.is_some(),
        View::Collectives => r.collectives.is_some(),
        View::Scaling => r.scaling.is_some(),
        View::Soak => r.soak.is_some(),
        View::Topology | View::Compare | View::Fleet => true,
    };
    if kind != SaveKind::Html && !has_section {
        return Err(NOTHING_TO_SAVE.into());
    }
    Ok(match kind {
        SaveKind::Html => Box::new(move || Ok(crate::document::report_html(&r).into_bytes())),
        // The samples as `check --soak-csv` writes them (a replay reads them back).
        SaveKind::Csv if view == View::Soak => Box::new(move || {
            let s = r.soak.as_ref().ok_or(NOTHING_TO_SAVE)?;
            Ok(crate::health::soak_csv::rows(&s.samples, &s.events, true))
        }),
        SaveKind::Csv => Box::new(move || csv(view, &r)),
        SaveKind::Png => Box::new(move || png(view, &r)),
    })
}

/// The view's data as a table.
fn csv(view: View, r: &Report) -> Result<Vec<u8>, String> {
    use crate::export::csv;
    let written = match view {
        // The Soak view's CSV is written above.
        View::Topology | View::Compare | View::Soak | View::Fleet => csv::links(&r.topology),
        View::Bandwidth => csv::bandwidth(r.bandwidth.as_ref().map_or(&[], |b| &b.results)),
        View::Collectives => csv::collectives(r.collectives.as_ref().map_or(&[], |c| &c.results)),
        View::Scaling => csv::scaling(r.scaling.as_ref().map_or(&[], |s| &s.run.rows)),
    };
    written.map_err(|e| e.to_string())
}

/// The view's page of the report, as `--bench` writes it.
fn png(view: View, r: &Report) -> Result<Vec<u8>, String> {
    let page = match view {
        View::Topology | View::Compare | View::Fleet => Page::Topology,
        View::Soak => Page::Soak,
        View::Bandwidth => Page::Bandwidth,
        View::Collectives => Page::Collectives,
        View::Scaling => Page::Scaling,
    };
    crate::document::page_png(r, page)
        .ok_or_else(|| format!("the report has no {}", page.file_name()))?
        .map_err(|e| e.to_string())
}

/// The open fleet as `fleet report` writes it: fleet.csv (a row per node × finding), or
/// fleet.png (the one-page summary of the nodes that are not PASS).
fn fleet_file(kind: SaveKind, outcome: FleetOutcome) -> SaveWork {
    use crate::fleet::files;
    Box::new(move || match kind {
        SaveKind::Csv => files::csv(&outcome).map_err(|e| e.to_string()),
        _ => crate::document::typeset::png(&files::document(&outcome, files::Scope::OnePage))
            .map_err(|e| e.to_string()),
    })
}

/// The comparison of every opened report: its key figures as CSV, or the view as a picture.
fn compare(kind: SaveKind, reports: &[&Report], cost: views::compare::CostSettings) -> SaveWork {
    let reports: Vec<Report> = reports.iter().map(|r| (*r).clone()).collect();
    if kind == SaveKind::Csv {
        return Box::new(move || {
            let refs: Vec<&Report> = reports.iter().collect();
            let c = crate::report::compare::compare(&refs, None);
            crate::export::csv::comparison(&c).map_err(|e| e.to_string())
        });
    }
    Box::new(move || {
        let draw = move |ui: &mut eframe::egui::Ui| {
            let refs: Vec<&Report> = reports.iter().collect();
            views::compare::show(ui, &refs, None, &mut cost.clone())
        };
        let mut measure = draw.clone();
        let w = report_view::PAGE_WIDTH;
        let h = snapshot::fit_height(w, &mut measure).map_err(|e| format!("{e:#}"))?;
        snapshot::render_png(w, h.min(8192), eframe::egui::Theme::Light, draw)
            .map_err(|e| format!("{e:#}"))
    })
}

/// The view's Save CSV… and Save PNG… buttons.
pub fn buttons(ui: &mut Ui, actions: &mut Vec<Action>) {
    for (kind, text, tip) in [
        (SaveKind::Csv, "Save CSV…", "Save this view's data as CSV"),
        (SaveKind::Png, "Save PNG…", "Save this view as a PNG image"),
    ] {
        if ui.button(text).on_hover_text(tip).clicked() {
            actions.push(Action::Save(kind));
        }
    }
}

/// Makes a Save's bytes and writes them to `path` atomically (an open file never shows a
/// half-written save): where it went, or why not.
pub fn write(path: &Path, work: SaveWork) -> Result<String, String> {
    let bytes = work()?;
    crate::output::write_atomic(path, &bytes)
        .map(|_| path.display().to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// What Save recording… writes for `shown`'s report: its window as JSON lines; why not when it
/// holds no samples.
pub fn recording_work(shown: Option<&Report>) -> Result<SaveWork, String> {
    match shown.and_then(|r| r.traffic.clone()) {
        Some(w) if !w.samples.is_empty() => Ok(Box::new(move || Ok(w.to_jsonl().into_bytes()))),
        _ => Err("Save recording: no samples held yet.".into()),
    }
}
