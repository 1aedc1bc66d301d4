//! The health check: the verdict with its worst findings, and every check as a table.

use super::{TABLE_MAX_ROWS, capped, num, provenance_cell};
use crate::document::{Block, Cell, Class, Column, Paragraph, Section, Table};
use crate::health::{Check, Verdict};
use crate::model::Source;
use crate::report::Report;
use crate::report::summary::{self, Provenance};

/// The class of a verdict.
pub(super) fn verdict_class(v: Verdict) -> Class {
    match v {
        Verdict::Pass => Class::Pass,
        Verdict::Warn => Class::Warn,
        Verdict::Fail => Class::Fail,
        Verdict::Unknown => Class::Unknown,
    }
}

/// The verdict: PASS/WARN/FAIL with the counts and the `worst` worst findings, or why there is
/// none.
pub(super) fn verdict(r: &Report, worst: usize) -> Option<Section> {
    let mut s = Section::new("verdict", "Health verdict (scalescope check)");
    let Some(hr) = &r.health else {
        s.push(Paragraph::plain("No health check in this report (it was not run).").into());
        return Some(s);
    };
    let modeled = hr.source == Source::Modeled;
    let c = &hr.counts;
    s.push(Block::Verdict {
        word: format!(
            "{}{}",
            hr.verdict.word(),
            if modeled { " (modeled)" } else { "" }
        ),
        class: verdict_class(hr.verdict),
        counts: format!(
            "{} pass · {} warn · {} fail · {} unknown",
            c.pass, c.warn, c.fail, c.unknown
        ),
    });
    if modeled {
        s.push(
            Paragraph::of(
                Class::Modeled,
                "Modeled: derived from the links as read or stated, not measured — not a PASS \
                 of a real machine.",
            )
            .into(),
        );
    }
    let findings = summary::worst_findings(r, worst);
    if findings.is_empty() {
        s.push(
            Paragraph::plain(if modeled {
                "Every check passed, as modeled."
            } else {
                "Every check passed."
            })
            .into(),
        );
    } else {
        s.push(Paragraph::plain("Worst findings:").into());
        s.push(Block::List {
            ordered: true,
            items: findings
                .into_iter()
                .map(|f| Paragraph::plain(summary::finding_line(f)))
                .collect(),
        });
    }
    for n in &hr.notes {
        s.push(Paragraph::note(n.to_string()).into());
    }
    Some(s)
}

/// Every check: verdict, subject, finding, figure against expected, cause and fix, provenance.
pub(super) fn checks(r: &Report) -> Option<Section> {
    let hr = r.health.as_ref()?;
    let mut s = Section::new("health", "Health checks");
    // A modeled check that passes judges a figure the model gave against what the same model
    // expects (741.6 GB/s, expected 741.6, 100 %): it says nothing, so it is counted, not listed.
    let (self_judged, listed): (Vec<&Check>, Vec<&Check>) = hr
        .checks
        .iter()
        .partition(|c| c.source == Source::Modeled && c.verdict == Verdict::Pass);
    if !self_judged.is_empty() {
        s.blocks.extend(modeled_passes(&self_judged));
    }
    if listed.is_empty() {
        return Some(s);
    }
    // GPUs whose line reads the same share a row; a table cut to its first rows shows the
    // worst: failures, then warnings, then unknowns.
    let mut order = crate::health::alike_gpus(&listed);
    if order.len() > TABLE_MAX_ROWS {
        order.sort_by_key(|(_, c)| match c.verdict {
            Verdict::Fail => 0,
            Verdict::Warn => 1,
            Verdict::Unknown => 2,
            Verdict::Pass => 3,
        });
    }
    s.blocks
        .extend(capped(checks_table("health-table", &order), "health.csv"));
    Some(s)
}

/// The modeled checks that pass, counted by check with an example each: a model judged against
/// itself, which health.csv lists in full.
fn modeled_passes(checks: &[&Check]) -> Vec<Block> {
    let mut by_check: Vec<(String, usize, &Check)> = Vec::new();
    for c in checks {
        let name = c.check.to_string();
        match by_check.iter_mut().find(|(n, _, _)| *n == name) {
            Some((_, count, _)) => *count += 1,
            None => by_check.push((name, 1, c)),
        }
    }
    let rows = by_check
        .into_iter()
        .map(|(name, count, c)| {
            vec![
                Cell::plain(name),
                Cell::plain(count.to_string()),
                Cell::plain(format!("{}: {}", c.subject, c.detail)),
            ]
        })
        .collect();
    vec![
        Paragraph::of(
            Class::Modeled,
            format!(
                "{} modeled checks pass and are counted here, not listed: each judges what the \
                 model derived from the machine as stated against what the same model \
                 expects, so it passes by construction and says nothing about a real machine. \
                 health.csv lists every one.",
                checks.len()
            ),
        )
        .into(),
        Block::Table(Table {
            id: Some("health-modeled-passes".into()),
            columns: vec![
                Column::text("check"),
                Column::figures("modeled passes"),
                Column::text("e.g."),
            ],
            rows,
        }),
    ]
}

/// `checks` (each with the subject to show) as a table: verdict, subject, check, finding,
/// figure against expected, cause and fix, provenance.
pub(super) fn checks_table(id: &str, checks: &[(String, &Check)]) -> Table {
    let rows = checks
        .iter()
        .map(|(subject, c)| {
            let unit = c.unit.as_deref().unwrap_or("");
            let cause = match (c.cause_words(), &c.fix) {
                (Some(a), Some(b)) => format!("{a} — do: {b}"),
                (Some(a), None) => a,
                (None, Some(b)) => format!("do: {b}"),
                (None, None) => String::new(),
            };
            let prov = match c.source {
                Source::Measured => Provenance::Measured,
                Source::Modeled => Provenance::Modeled(c.basis.clone().unwrap_or_default()),
            };
            vec![
                Cell::of(verdict_class(c.verdict), c.verdict_text()),
                Cell::plain(subject),
                Cell::plain(c.check.to_string()),
                Cell::plain(&c.detail),
                Cell::plain(summary::fmt_value(c.figure, unit)),
                Cell::plain(summary::fmt_value(c.expected, unit)),
                Cell::plain(num(c.percent, 0)),
                Cell::of(Class::Note, cause),
                provenance_cell(&prov),
            ]
        })
        .collect();
    Table {
        id: Some(id.into()),
        columns: vec![
            Column::text("verdict"),
            Column::text("subject"),
            Column::text("check"),
            Column::text("finding"),
            Column::figures("figure"),
            Column::figures("expected"),
            Column::figures("%"),
            Column::text("cause and fix"),
            Column::text("provenance"),
        ],
        rows,
    }
}

/// The health panel of the topology page: the verdict and every finding that is not a pass,
/// worst first, with cause and fix.
pub(super) fn panel(r: &Report) -> Option<Section> {
    let hr = r.health.as_ref()?;
    // Every finding on a machine of a few GPUs; the worst 64 on a large one (the table and
    // health.csv hold the rest).
    let mut s = verdict(r, hr.checks.len().min(64))?;
    s.heading = Some("Health (scalescope check)".into());
    Some(s)
}
