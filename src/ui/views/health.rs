//! The Health panel: `scalescope check`'s verdict drawn over the topology — every GPU (the
//! diagonal) and every pair colored by its worst verdict, and the findings below PASS with their
//! likely cause and what to do. Pure drawing over a [`HealthReport`].

use eframe::egui::{self, RichText, Ui, vec2};

use crate::health::{Check, HealthReport, Verdict};
use crate::model::{Source, Topology};
use crate::ui::palette;
use crate::ui::widgets::{Cell, badge, matrix};

/// Findings listed under the matrix, at most.
const MAX_FINDINGS: usize = 24;

/// The panel: verdict badge and counts, the verdict matrix, the findings.
pub fn panel(ui: &mut Ui, topology: &Topology, h: &HealthReport) {
    ui.horizontal(|ui| {
        let word = if h.source == Source::Modeled {
            format!("{} (modeled)", h.verdict)
        } else {
            h.verdict.to_string()
        };
        badge(ui, &word, palette::verdict_fill(h.verdict));
        let c = &h.counts;
        ui.label(
            RichText::new(format!(
                "{} fail · {} warn · {} pass · {} unknown",
                c.fail, c.warn, c.pass, c.unknown
            ))
            .strong(),
        );
        ui.label(RichText::new(format!("checked {}", h.created_at)).weak());
    });
    if h.source == Source::Modeled {
        ui.label(
            RichText::new(
                "Modeled: derived from the links as read or stated, not measured — not a PASS of a real machine.",
            )
            .weak(),
        );
    }
    ui.add_space(6.0);
    verdict_matrix(ui, topology, h);
    ui.add_space(4.0);
    legend(ui);
    ui.add_space(8.0);
    findings(ui, h);
}

fn checks_of(h: &HealthReport, a: usize, b: Option<usize>) -> Vec<&Check> {
    h.checks
        .iter()
        .filter(|c| match b {
            None => c.gpu == Some(a) && c.peer.is_none(),
            Some(b) => matches!((c.gpu, c.peer), (Some(x), Some(y)) if (x, y) == (a, b) || (x, y) == (b, a)),
        })
        .collect()
}

fn hover(checks: &[&Check]) -> String {
    if checks.is_empty() {
        return "no check".to_string();
    }
    checks
        .iter()
        .map(|c| {
            format!(
                "{}  {} {}: {}",
                c.verdict_text(),
                c.subject,
                c.check,
                c.detail
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// GPUs × GPUs: the diagonal is each GPU's own worst verdict (PCIe, NVLink, memory, clocks, host
/// copies), the other cells each pair's (P2P status and copies both ways).
pub fn verdict_matrix(ui: &mut Ui, topology: &Topology, h: &HealthReport) {
    let gpus = topology.gpu_indices();
    let labels: Vec<String> = gpus.iter().map(|g| format!("GPU{g}")).collect();
    matrix(
        ui,
        "health",
        &labels,
        &labels,
        vec2(58.0, 26.0),
        &[],
        |r, c| {
            let (a, b) = (gpus[r], gpus[c]);
            let (checks, verdict, what) = if r == c {
                let k = checks_of(h, a, None);
                (k.clone(), h.gpu_verdict(a), format!("GPU{a}"))
            } else {
                let k = checks_of(h, a, Some(b));
                (k.clone(), h.pair_verdict(a, b), format!("GPU{a}–GPU{b}"))
            };
            let text = verdict.map_or("—".to_string(), |v| v.word().to_string());
            Some(Cell::single(
                text.clone(),
                verdict.map(palette::verdict_fill),
                format!("health {what} {text}"),
                hover(&checks),
            ))
        },
    );
}

fn legend(ui: &mut Ui) {
    ui.horizontal(|ui| {
        for v in [
            Verdict::Pass,
            Verdict::Warn,
            Verdict::Fail,
            Verdict::Unknown,
        ] {
            badge(ui, v.word(), palette::verdict_fill(v));
        }
        ui.label(
            RichText::new("diagonal: the GPU itself · off the diagonal: the pair, both ways")
                .size(11.5)
                .weak(),
        );
    });
}

/// Every FAIL, then WARN, then UNKNOWN check, with cause and fix.
fn findings(ui: &mut Ui, h: &HealthReport) {
    let mut list: Vec<&Check> = h
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .collect();
    list.sort_by_key(|c| std::cmp::Reverse(c.verdict));
    if list.is_empty() {
        ui.label(if h.source == Source::Modeled {
            "Every check passed, as modeled."
        } else {
            "Every check passed."
        });
        return;
    }
    for c in list.iter().take(MAX_FINDINGS) {
        check_row(ui, c);
    }
    if list.len() > MAX_FINDINGS {
        ui.label(
            RichText::new(format!(
                "… and {} more (scalescope check lists them all)",
                list.len() - MAX_FINDINGS
            ))
            .weak(),
        );
    }
}

/// One check as the findings list it: verdict badge, subject and check, what was found; under
/// it the likely cause and what to do, when the check says.
pub fn check_row(ui: &mut Ui, c: &Check) {
    ui.horizontal_wrapped(|ui| {
        badge(ui, &c.verdict_text(), palette::verdict_fill(c.verdict));
        ui.label(RichText::new(format!("{} · {}", c.subject, c.check)).strong());
        ui.label(&c.detail);
    });
    let mut more = Vec::new();
    if let Some(cause) = c.cause_words() {
        more.push(cause);
    }
    if let Some(fix) = &c.fix {
        more.push(format!("do: {fix}"));
    }
    if !more.is_empty() {
        ui.add(egui::Label::new(RichText::new(more.join("  —  ")).size(11.5).weak()).wrap());
    }
}

/// One line for report pages: the verdict and counts.
pub fn summary_line(ui: &mut Ui, h: &HealthReport) {
    ui.horizontal(|ui| {
        ui.label(RichText::new("Health").strong().size(16.0));
        badge(
            ui,
            &if h.source == Source::Modeled {
                format!("{} (modeled)", h.verdict)
            } else {
                h.verdict.to_string()
            },
            palette::verdict_fill(h.verdict),
        );
        let c = &h.counts;
        ui.label(format!(
            "{} fail · {} warn · {} pass · {} unknown",
            c.fail, c.warn, c.pass, c.unknown
        ));
    });
    let mut worst: Vec<&Check> = h
        .checks
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn))
        .collect();
    worst.sort_by_key(|c| std::cmp::Reverse(c.verdict));
    // Wrap at the visible width even where a long title widened the page's layout.
    let width = (ui.clip_rect().width() - 24.0).max(200.0);
    ui.scope(|ui| {
        ui.set_max_width(width);
        for c in worst.iter().take(6) {
            let mut t = format!(
                "{} {} {}: {}",
                c.verdict_text(),
                c.subject,
                c.check,
                c.detail
            );
            if let Some(fix) = &c.fix {
                t.push_str(&format!(" — {fix}"));
            }
            ui.add(
                egui::Label::new(RichText::new(t).color(palette::verdict_fill(c.verdict))).wrap(),
            );
        }
    });
}
