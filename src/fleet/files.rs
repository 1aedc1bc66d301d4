//! A fleet outcome as files: fleet.csv (a row per node × finding, docs/CSV.md), fleet.json
//! (the outcome), and a [`Document`] written as fleet.html by `document::html` and typeset as
//! fleet.png and fleet.pdf by `document::typeset` — the same writers as report.html and its
//! pages. The HTML lists every node; the PNG and PDF the nodes that are not PASS (and how many
//! are), so that a fleet of thousands stays a page or a few. Bytes only: nothing here reads or
//! writes a file (`fleet::report` and the command line write them).

use super::FleetError;
use super::judge::{FleetOutcome, NodeOutcome};
use crate::document::{Block, Cell, Class, Column, Document, Paragraph, Section, Table};
use crate::health::Verdict;

/// Findings the one-page PNG lists before "… and N more": in all, and per node (so that one
/// node's fifty outliers do not hide the next node's one).
const PNG_FINDINGS: usize = 40;
/// Nodes the one-page PNG's drain list names before "… and N more".
const PNG_DRAIN: usize = 40;
const PNG_FINDINGS_PER_NODE: usize = 6;

/// Every file of the fleet report, by name: fleet.csv, fleet.json, fleet.html, fleet.png,
/// fleet.pdf — each its bytes or why it could not be made, so that a page too large to
/// typeset never costs the CSV and JSON beside it.
pub fn all(outcome: &FleetOutcome) -> Vec<(&'static str, Result<Vec<u8>, FleetError>)> {
    let render = |file: &'static str, message: String| FleetError::Render { file, message };
    let csv = csv(outcome).map_err(|e| render("fleet.csv", e.to_string()));
    let json =
        crate::export::json::to_json(outcome).map_err(|e| render("fleet.json", e.to_string()));
    let html = crate::document::html::write(&document(outcome, Scope::Every)).into_bytes();
    let png = crate::document::typeset::png(&document(outcome, Scope::OnePage))
        .map_err(|e| render("fleet.png", e.to_string()));
    let pdf = crate::document::typeset::pdf(&document(outcome, Scope::NotPassing))
        .map_err(|e| render("fleet.pdf", e.to_string()));
    vec![
        ("fleet.csv", csv),
        ("fleet.json", json),
        ("fleet.html", Ok(html)),
        ("fleet.png", png),
        ("fleet.pdf", pdf),
    ]
}

/// fleet.csv's columns (docs/CSV.md).
pub const CSV_COLUMNS: [&str; 17] = [
    "node",
    "node_verdict",
    "node_source",
    "health_verdict",
    "file",
    "slurm_job",
    "kind",
    "finding_verdict",
    "field",
    "subject",
    "gpu",
    "peer",
    "value",
    "fleet_value",
    "deviation_percent",
    "unit",
    "detail",
];

/// A row per node × finding; a node without findings has one row with the finding columns
/// empty. Unknown values are empty cells.
pub fn csv(outcome: &FleetOutcome) -> Result<Vec<u8>, ::csv::Error> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    let opt = |v: Option<String>| v.unwrap_or_default();
    for n in &outcome.nodes {
        let head = [
            n.name.clone(),
            n.verdict.word().to_string(),
            opt(n.source.map(|s| s.to_string())),
            opt(n.health.map(|h| h.word().to_string())),
            n.file.clone(),
            opt(n.slurm_job.clone()),
        ];
        if n.findings.is_empty() {
            let mut row = head.to_vec();
            row.resize(CSV_COLUMNS.len(), String::new());
            w.write_record(&row)?;
        }
        for f in &n.findings {
            let mut row = head.to_vec();
            row.extend([
                f.kind.word().to_string(),
                f.verdict.word().to_string(),
                f.field.clone(),
                opt(f.subject.clone()),
                opt(f.gpu.map(|g| g.to_string())),
                opt(f.peer.map(|g| g.to_string())),
                opt(f.figure.map(|x| x.to_string()).or_else(|| f.value.clone())),
                opt(f
                    .median
                    .map(|x| x.to_string())
                    .or_else(|| f.fleet_value.clone())),
                opt(f.deviation_percent.map(|p| format!("{p:.2}"))),
                opt(f.unit.clone()),
                f.detail.clone(),
            ]);
            w.write_record(&row)?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// Which nodes a document lists.
#[derive(Clone, Copy, PartialEq)]
pub enum Scope {
    /// Every node (fleet.html).
    Every,
    /// Nodes below PASS, every finding (fleet.pdf).
    NotPassing,
    /// Nodes below PASS, the first findings (fleet.png).
    OnePage,
}

fn verdict_class(v: Verdict) -> Class {
    match v {
        Verdict::Pass => Class::Pass,
        Verdict::Warn => Class::Warn,
        Verdict::Fail => Class::Fail,
        Verdict::Unknown => Class::Unknown,
    }
}

/// The fleet report as a document.
pub fn document(o: &FleetOutcome, scope: Scope) -> Document {
    let mut sections = vec![
        head_section(o),
        drain_section(o, scope),
        findings_section(o, scope),
    ];
    if !o.between.is_empty() {
        sections.push(between_section(o, scope));
    }
    if scope != Scope::OnePage {
        sections.push(nodes_section(o, scope));
    }
    if !o.notes.is_empty() && scope != Scope::OnePage {
        let mut notes = Section::new("notes", "Notes");
        notes.push(Block::List {
            ordered: false,
            items: o.notes.iter().map(Paragraph::note).collect(),
        });
        sections.push(notes);
    }
    Document {
        title: format!("Fleet of {} nodes — scalescope", o.nodes.len()),
        sections,
    }
}

/// The title, when it was made, the fleet's verdict with the nodes counted, and the rules.
fn head_section(o: &FleetOutcome) -> Section {
    let c = &o.counts;
    let mut head = Section::untitled("head");
    head.push(Block::Title {
        id: "title".into(),
        text: format!("Fleet of {} nodes", o.nodes.len()),
        badge: None,
    });
    head.push(
        Paragraph::of(
            Class::Sub,
            format!("scalescope fleet report · {}", o.created_at),
        )
        .into(),
    );
    head.push(Block::Verdict {
        word: o.verdict_text(),
        class: verdict_class(o.verdict),
        counts: format!(
            "{} pass · {} warn · {} fail · {} unknown (nodes){}",
            c.pass,
            c.warn,
            c.fail,
            c.unknown,
            o.modeled_share()
        ),
    });
    let rules = &o.thresholds;
    head.push(
        Paragraph::note(format!(
            "Outliers: worse than the fleet's median by more than {} × the scaled MAD and {:.0} % (WARN) or {:.0} % (FAIL) of the median; a node that differs from the majority: {}.",
            rules.mad_k,
            rules.warn * 100.0,
            rules.fail * 100.0,
            rules.consistency.verdict().word()
        ))
        .into(),
    );
    head
}

/// The nodes that fail, each with its failing findings counted and its suspect GPU (the first
/// [`PNG_DRAIN`] on the one-page PNG).
fn drain_section(o: &FleetOutcome, scope: Scope) -> Section {
    let mut drain = Section::new("drain", "Drain list");
    if o.drain.is_empty() {
        drain.push(Paragraph::plain("No node fails.").into());
        return drain;
    }
    let shown = if scope == Scope::OnePage {
        PNG_DRAIN
    } else {
        usize::MAX
    };
    let mut items: Vec<Paragraph> = o
        .nodes
        .iter()
        .filter(|n| n.verdict == Verdict::Fail)
        .take(shown)
        .map(|n| {
            let fails = n
                .findings
                .iter()
                .filter(|f| f.verdict == Verdict::Fail)
                .count();
            let mut line = format!(
                "{} — {fails} failing finding{}",
                n.name,
                if fails == 1 { "" } else { "s" }
            );
            if let Some(g) = n.suspect_gpu {
                line.push_str(&format!("; suspect GPU {g} (in every outlier)"));
            }
            Paragraph::plain(line)
        })
        .collect();
    if o.drain.len() > items.len() {
        items.push(Paragraph::note(format!(
            "… and {} more: fleet.html and fleet.csv list every one.",
            o.drain.len() - items.len()
        )));
    }
    drain.push(Block::List {
        ordered: false,
        items,
    });
    drain
}

/// Every finding of every node as a table (on the one-page PNG the first [`PNG_FINDINGS`], at
/// most [`PNG_FINDINGS_PER_NODE`] a node, and how many more).
fn findings_section(o: &FleetOutcome, scope: Scope) -> Section {
    let mut findings = Section::new("findings", "Findings");
    let mut rows = Vec::new();
    let mut more = 0usize;
    for n in &o.nodes {
        for (i, f) in n.findings.iter().enumerate() {
            if scope == Scope::OnePage && (rows.len() >= PNG_FINDINGS || i >= PNG_FINDINGS_PER_NODE)
            {
                more += 1;
                continue;
            }
            rows.push(vec![
                Cell::plain(n.name.clone()).strong(),
                Cell::of(verdict_class(f.verdict), f.verdict.word()),
                Cell::plain(f.kind.word()),
                Cell::plain(f.detail.clone()),
            ]);
        }
    }
    if rows.is_empty() {
        findings.push(Paragraph::plain("Every node agrees with the fleet.").into());
    } else {
        findings.push(Block::Table(Table {
            id: Some("findings".into()),
            columns: vec![
                Column::text("Node"),
                Column::text("Verdict"),
                Column::text("Rule"),
                Column::text("Finding"),
            ],
            rows,
        }));
    }
    if more > 0 {
        findings.push(
            Paragraph::note(format!(
                "… and {more} more findings: fleet.csv and fleet.html list every one."
            ))
            .into(),
        );
    }
    findings
}

/// The nodes with their verdicts, own checks, findings counted and report files: every node in
/// fleet.html, those below PASS elsewhere (and how many pass).
fn nodes_section(o: &FleetOutcome, scope: Scope) -> Section {
    let mut nodes = Section::new("nodes", "Nodes");
    let listed: Vec<&NodeOutcome> = o
        .nodes
        .iter()
        .filter(|n| scope == Scope::Every || n.verdict != Verdict::Pass)
        .collect();
    if scope != Scope::Every && listed.len() < o.nodes.len() {
        nodes.push(
            Paragraph::note(format!(
                "{} nodes pass and are not listed here; fleet.html and fleet.csv list every node.",
                o.nodes.len() - listed.len()
            ))
            .into(),
        );
    }
    if !listed.is_empty() {
        nodes.push(Block::Table(Table {
            id: Some("nodes".into()),
            columns: vec![
                Column::text("Node"),
                Column::text("Verdict"),
                Column::text("Own check"),
                Column::figures("Findings"),
                Column::text("Report"),
            ],
            rows: listed
                .iter()
                .map(|n| {
                    vec![
                        Cell::plain(n.name.clone()).strong(),
                        Cell::of(verdict_class(n.verdict), n.verdict_text()),
                        n.health
                            .zip(n.health_text())
                            .map(|(h, text)| Cell::of(verdict_class(h), text))
                            .unwrap_or_else(|| Cell::plain("—")),
                        Cell::plain(n.findings.len().to_string()),
                        Cell::plain(n.file.clone()),
                    ]
                })
                .collect(),
        }));
    }
    nodes
}

/// The all-reduce runs between nodes: every run in fleet.html; the runs over all nodes and the
/// halves, and the pairs that are not PASS, in fleet.pdf and fleet.png.
fn between_section(o: &FleetOutcome, scope: Scope) -> Section {
    use crate::fleet::between::Span;
    let mut section = Section::new("between", "Between nodes (NCCL all-reduce)");
    let shown: Vec<_> = o
        .between
        .iter()
        .filter(|r| {
            scope == Scope::Every
                || r.span != Span::Pair
                || r.verdict.is_none_or(|v| v != Verdict::Pass)
        })
        .collect();
    let hidden = o.between.len() - shown.len();
    let gbps = |v: Option<f64>| {
        v.map_or_else(
            || Cell::plain("—"),
            |x| Cell::plain(super::finding::figure_text(x)),
        )
    };
    let rows = shown
        .iter()
        .map(|r| {
            let state = match (r.verdict, r.status) {
                (Some(v), _) => Cell::of(verdict_class(v), v.word()),
                (None, crate::model::Status::Ok) => Cell::plain("ran"),
                (None, s) => Cell::of(Class::Unknown, s.to_string()),
            };
            vec![
                Cell::plain(r.name.clone()).strong(),
                Cell::plain(if r.nodes.len() <= 4 {
                    r.nodes.join(", ")
                } else {
                    format!(
                        "{} nodes: {} … {}",
                        r.nodes.len(),
                        r.nodes[0],
                        r.nodes[r.nodes.len() - 1]
                    )
                }),
                Cell::plain(r.tasks_per_node.to_string()),
                Cell::plain(r.transport.clone().unwrap_or_else(|| "—".into())),
                Cell::plain(
                    r.bytes
                        .map_or("—".into(), crate::model::quantities::format_bytes),
                ),
                gbps(r.busbw_gbps),
                Cell::plain(
                    r.deviation_percent
                        .map_or("—".into(), |d| format!("{d:+.1} %")),
                ),
                state,
                Cell::plain(
                    r.detail
                        .clone()
                        .or_else(|| r.reason.clone())
                        .unwrap_or_default(),
                ),
            ]
        })
        .collect();
    section.push(Block::Table(Table {
        id: Some("between".into()),
        columns: vec![
            Column::text("Run"),
            Column::text("Nodes"),
            Column::figures("GPUs/node"),
            Column::text("NCCL transport"),
            Column::figures("Size"),
            Column::figures("busbw GB/s"),
            Column::figures("vs typical pair"),
            Column::text("Verdict"),
            Column::text("Why"),
        ],
        rows,
    }));
    if hidden > 0 {
        section.push(
            Paragraph::note(format!(
                "{hidden} pairs pass and are not listed here; fleet.html and fleet.json list every run."
            ))
            .into(),
        );
    }
    section
}
