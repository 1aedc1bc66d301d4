//! Published figures: what others measured, stated or set as a floor on machines like this
//! one (the catalog's `[[reference]]` records), each beside the report's own figure with the
//! conditions that differ and where it was published.

use super::num;
use crate::document::{Block, Cell, Class, Column, Paragraph, Section, Table};
use crate::model::Source;
use crate::report::Report;
use crate::report::published::{Beside, beside};

/// The section; `None` when no published figure applies to the machine.
pub(super) fn section(r: &Report) -> Option<Section> {
    let list = beside(
        &r.topology,
        r.bandwidth.as_ref().map_or(&[][..], |b| &b.results),
        r.collectives.as_ref().map_or(&[][..], |c| &c.results),
    );
    if list.is_empty() {
        return None;
    }
    let mut s = Section::new("published", "Published figures");
    let machines: Vec<&str> = {
        let mut m: Vec<&str> = list
            .iter()
            .map(|b| b.machine.machine_name.as_str())
            .collect();
        m.dedup();
        m
    };
    s.push(
        Paragraph::note(format!(
            "Figures others published for {} (the hardware catalog's references), beside this \
             report's. A threshold is an acceptance floor, not a measurement; a figure read \
             under other conditions says so under \"differs\".",
            machines.join(", ")
        ))
        .into(),
    );
    s.push(Block::Table(Table {
        id: Some("published-table".into()),
        columns: vec![
            Column::text("figure"),
            Column::figures("published"),
            Column::text("kind"),
            Column::text("conditions there"),
            Column::figures("here"),
            Column::figures("here ÷ published"),
            Column::text("differs"),
            Column::text("source"),
        ],
        rows: list.iter().map(row).collect(),
    }));
    Some(s)
}

fn row(b: &Beside) -> Vec<Cell> {
    let r = b.reference;
    let (here, class) = match &b.ours {
        Some(o) => (
            format!("{} {}", num(Some(o.value), 1), r.unit),
            if o.source == Source::Modeled {
                Class::Modeled
            } else {
                Class::Measured
            },
        ),
        None => ("not run".to_string(), Class::None),
    };
    // As the terminal's line says it: the worst of several against a threshold, and the
    // slowest cell beside a median it is well under.
    let here = match &b.ours {
        Some(o) => {
            let mut text = format!("{here} ({})", o.source);
            if let Some(n) = o.worst_of {
                text.push_str(&format!(", the slowest of {n}"));
            }
            if let Some(w) = o.slowest {
                text.push_str(&format!(
                    "; the slowest here {} {}",
                    num(Some(w), 1),
                    r.unit
                ));
            }
            text
        }
        None => here,
    };
    let differs = b
        .ours
        .as_ref()
        .map(|o| r.differences(&o.here).join("; "))
        .unwrap_or_default();
    let mut source = Cell::plain(r.source.short()).titled(r.source.title.clone());
    // The address without its scheme: a report is one self-contained file that links nowhere.
    if let Some(u) = &r.source.url {
        let bare = u
            .trim_start_matches("https://")
            .trim_start_matches("http://");
        source = source.titled(format!("{} — {bare}", r.source.title));
    }
    let mut conditions = Cell::plain(r.conditions_text());
    if let Some(n) = &r.note {
        conditions = conditions.titled(n.clone());
    }
    vec![
        Cell::plain(r.figure.to_string()),
        Cell::plain(format!("{} {}", num(Some(r.value), 1), r.unit)).strong(),
        Cell::plain(r.kind.to_string()),
        conditions,
        Cell::of(class, here),
        Cell::plain(match b.ratio() {
            Some(x) => format!("{:.0} %", x * 100.0),
            None => "—".into(),
        }),
        Cell::of(Class::Note, differs),
        source,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One GPU's host copies at half the other's: the cell says the slowest beside the median,
    /// as the terminal line does.
    #[test]
    fn the_here_cell_names_the_slowest_gpu_beside_a_median_it_is_well_under() {
        let mut r = crate::report::bundled::reports()
            .into_iter()
            .find(|(name, _)| name.starts_with("h200-2x-sxm-2026-11-28"))
            .unwrap()
            .1
            .unwrap();
        for x in &mut r.bandwidth.as_mut().unwrap().results {
            if x.test == crate::model::TestId::H2d && x.dst == crate::model::Endpoint::Gpu(1) {
                x.median_gbps = x.median_gbps.map(|v| v / 2.0);
            }
        }
        let s = section(&r).expect("H200 has published figures");
        let Some(Block::Table(t)) = s.blocks.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("no table")
        };
        let cells: Vec<&str> = t.rows.iter().flatten().map(|c| c.text.as_str()).collect();
        assert!(
            cells
                .iter()
                .any(|c| c.contains("(measured); the slowest here")),
            "{cells:#?}"
        );
        assert!(
            cells
                .iter()
                .any(|c| c.contains("(measured), the slowest of 2")),
            "{cells:#?}"
        );
    }

    #[test]
    fn the_bundled_8x_h200_report_shows_the_hgx_h200_figures_with_sources() {
        let r = crate::report::bundled::reports()
            .into_iter()
            .find(|(name, _)| name.starts_with("h200-8x"))
            .unwrap()
            .1
            .unwrap();
        let s = section(&r).expect("H200 has published figures");
        let Some(Block::Table(t)) = s.blocks.iter().find(|b| matches!(b, Block::Table(_))) else {
            panic!("no table")
        };
        assert!(t.rows.len() >= 5);
        let text: Vec<String> = t
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| c.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect();
        assert!(
            text.iter().any(|l| l.contains("all_reduce busbw | 480.0 GB/s | measured")
                && l.contains("Azure/AI-benchmarking-guide Azure_Results/ND_H200_v5_results.md, 2024-09-24")),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|l| l.contains("SM copy there, copy engine here")),
            "{text:#?}"
        );
        // A machine whose GPU no catalog entry has gets no section.
        let mut other = r.clone();
        for g in &mut other.topology.gpus {
            g.name = Some("NVIDIA Z1".into());
        }
        assert!(section(&other).is_none());
    }
}
