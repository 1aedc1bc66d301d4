//! `Report → Document`: the whole report (`report.html`, `report.pdf`) and each page
//! (`report.png`, the view pages). What the document says about the machine, its verdict and
//! key figures comes from [`crate::report::summary`]; the sections are built here, one file per
//! part of the report.

mod bandwidth;
mod collectives;
mod energy;
mod health;
mod published;
mod scaling;
mod soak;
mod topology;

pub use soak::EVENTS_MAX_ROWS;

use super::{
    Block, Cell, Class, Column, Document, Matrix, MatrixRow, Page, Paragraph, Section, Span,
    SpanStyle, Table,
};
use crate::report::Report;
use crate::report::summary::{self, Provenance};

/// The whole report: head, verdict, key figures, topology, bandwidth, collectives, published
/// figures, scaling, health checks, the burn-in, warnings and the foot.
pub fn report(r: &Report) -> Document {
    Document {
        title: format!(
            "{} — scalescope report, {}",
            summary::machine_name(r),
            r.date()
        ),
        sections: [
            Some(head(r)),
            health::verdict(r, 5),
            key_figures(r),
            topology::section(r),
            bandwidth::section(r),
            collectives::section(r),
            published::section(r),
            scaling::section(r),
            energy::section(r),
            health::checks(r),
            soak::section(r),
            warnings(r),
            foot(r),
        ]
        .into_iter()
        .flatten()
        .collect(),
    }
}

/// One page of the report; `None` when the report has nothing for it.
pub fn page(r: &Report, page: Page) -> Option<Document> {
    let title = |what: &str| format!("{} — {what}, {}", summary::machine_name(r), r.date());
    let sections: Vec<Section> = match page {
        Page::Report => [
            Some(head(r)),
            health::verdict(r, 4),
            key_figures(r),
            Some(topology::summary(r)),
            collectives::summary(r),
            scaling::summary(r),
            Some(warnings_counted(r)),
        ]
        .into_iter()
        .flatten()
        .collect(),
        Page::Topology => topology::page(r),
        Page::Bandwidth => {
            r.bandwidth.as_ref()?;
            vec![
                page_head(r, "Copy bandwidth and latency"),
                bandwidth::section(r)?,
            ]
        }
        Page::Collectives => {
            r.collectives.as_ref()?;
            vec![page_head(r, "Collectives"), collectives::section(r)?]
        }
        Page::Scaling => {
            r.scaling.as_ref()?;
            let mut v = vec![page_head(r, "Scaling")];
            v.extend(scaling::page(r));
            v.extend(energy::section(r));
            v
        }
        Page::Soak => {
            r.soak.as_ref()?;
            vec![page_head(r, "Burn-in (soak)"), soak::section(r)?]
        }
    };
    Some(Document {
        title: title(match page {
            Page::Report => "scalescope report",
            Page::Topology => "topology",
            Page::Bandwidth => "bandwidth",
            Page::Collectives => "collectives",
            Page::Scaling => "scaling",
            Page::Soak => "burn-in (soak)",
        }),
        sections,
    })
}

/// The most GPUs whose GPU × GPU matrices documents draw: an NVL72 rack's 72 (5,184 cells).
/// Above it a matrix is tens of thousands of cells no page shows legibly — a 256-GPU machine's
/// took 48 s and 7.7 GB to typeset — so documents give the connections by kind instead, and
/// links.csv and bandwidth.csv keep every pair.
pub const MATRIX_MAX_GPUS: usize = 72;

/// The note that stands for a GPU × GPU matrix of `n` GPUs above [`MATRIX_MAX_GPUS`]: what it
/// would have shown and the file that holds every pair.
pub(super) fn matrix_left_out(n: usize, what: &str, file: &str) -> Block {
    Paragraph::note(format!(
        "{what}: the {n} × {n} matrix is left out of documents above {MATRIX_MAX_GPUS} GPUs; \
         {file} holds every pair."
    ))
    .into()
}

/// The most rows a table of a document shows (a 1,000-GPU machine has 1,000 GPU rows, 7,000
/// health checks and 15,000 scaling rows: minutes to typeset, pages no one reads). Above it
/// the table shows its first rows — the health table its worst — and a note names the CSV that
/// holds every row.
pub const TABLE_MAX_ROWS: usize = 256;

/// `table` as a block, cut to [`TABLE_MAX_ROWS`] with a note naming `file` when longer.
pub(super) fn capped(mut table: Table, file: &str) -> Vec<Block> {
    let n = table.rows.len();
    if n <= TABLE_MAX_ROWS {
        return vec![Block::Table(table)];
    }
    table.rows.truncate(TABLE_MAX_ROWS);
    vec![
        Block::Table(table),
        Paragraph::note(format!(
            "The first {TABLE_MAX_ROWS} of {n} rows; {file} holds every row."
        ))
        .into(),
    ]
}

/// A GPU × GPU matrix over `gpus` (rows: source, columns: destination), headed `GPU0` …, "X" on
/// the diagonal and `cell(row GPU, column GPU)` everywhere else.
pub(super) fn gpu_matrix(
    id: Option<&str>,
    gpus: &[usize],
    cell: impl Fn(usize, usize) -> Cell,
) -> Matrix {
    // Above DENSE_MATRIX_GPUS a page has room for the colours, not the figures: the columns are
    // headed by number and the cells keep their figure as the HTML's hover title.
    let dense = gpus.len() > DENSE_MATRIX_GPUS;
    Matrix {
        id: id.map(Into::into),
        columns: gpus
            .iter()
            .map(|g| {
                if dense {
                    g.to_string()
                } else {
                    format!("GPU{g}")
                }
            })
            .collect(),
        rows: gpus
            .iter()
            .map(|&a| MatrixRow {
                head: format!("GPU{a}"),
                cells: gpus
                    .iter()
                    .map(|&b| {
                        let mut c = if a == b { diag() } else { cell(a, b) };
                        if dense && a != b && c.parts.is_empty() {
                            c.title = Some(match c.title.take() {
                                Some(t) => format!("{} — {t}", c.text),
                                None => c.text.clone(),
                            });
                            c.text = String::new();
                        }
                        c
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// A GPU × GPU matrix as a reader can read it: [`gpu_matrix`] up to [`DENSE_MATRIX_GPUS`];
/// above it (a rack of 72: 5,112 cells of colour without figures) the off-diagonal cells
/// grouped by figure — a row per distinct figure with how many ordered pairs have it and the
/// first of them — when there are at most [`DENSE_SUMMARY_FIGURES`], else the colour matrix
/// with a note of its most common figures. `unit` follows each figure; `file` holds
/// every pair.
pub(super) fn gpu_matrix_blocks(
    id: Option<&str>,
    gpus: &[usize],
    unit: &str,
    file: &str,
    cell: impl Fn(usize, usize) -> Cell,
) -> Vec<Block> {
    if gpus.len() <= DENSE_MATRIX_GPUS {
        return vec![Block::Matrix(gpu_matrix(id, gpus, cell))];
    }
    // (class, figure) → the ordered pairs with it, in the order first met.
    let mut groups: Vec<Group> = Vec::new();
    let mut index: std::collections::HashMap<(&'static str, String), usize> =
        std::collections::HashMap::new();
    for &a in gpus {
        for &b in gpus.iter().filter(|&&b| b != a) {
            let c = cell(a, b);
            let slot = *index
                .entry((c.class.name(), c.text.clone()))
                .or_insert_with(|| {
                    groups.push(((c.class, c.text), c.title, Vec::new()));
                    groups.len() - 1
                });
            groups[slot].2.push((a, b));
        }
    }
    let total: usize = groups.iter().map(|g| g.2.len()).sum();
    if groups.len() > DENSE_SUMMARY_FIGURES {
        groups.sort_by_key(|g| std::cmp::Reverse(g.2.len()));
        let legend: Vec<String> = groups
            .iter()
            .map(|((_, text), _, pairs)| format!("{text}: {} pairs", pairs.len()))
            .take(DENSE_SUMMARY_FIGURES)
            .collect();
        return vec![
            Block::Matrix(gpu_matrix(id, gpus, cell)),
            Paragraph::note(format!(
                "{} GPUs: cells are colour only ({} distinct figures, {unit}; the most common: \
                 {} …); {file} holds every pair.",
                gpus.len(),
                groups.len(),
                legend.join(" · ")
            ))
            .into(),
        ];
    }
    let titled = groups.iter().any(|g| g.1.is_some());
    let rows = groups
        .into_iter()
        .map(|((class, text), title, pairs)| {
            let first: Vec<String> = pairs
                .iter()
                .take(3)
                .map(|(a, b)| format!("GPU{a}→GPU{b}"))
                .collect();
            let more = if pairs.len() > first.len() {
                ", …"
            } else {
                ""
            };
            let figure = if text == "—" || text.is_empty() || unit.is_empty() {
                text
            } else {
                format!("{text} {unit}")
            };
            let mut row = vec![
                Cell::of(class, figure).strong(),
                Cell::plain(format!("{} of {total}", pairs.len())),
                Cell::plain(format!("{}{more}", first.join(", "))),
            ];
            if titled {
                row.push(Cell::of(Class::Note, title.unwrap_or_default()));
            }
            row
        })
        .collect();
    let mut columns = vec![
        Column::figures("figure"),
        Column::figures("ordered pairs"),
        Column::text("e.g."),
    ];
    if titled {
        columns.push(Column::text("basis"));
    }
    vec![
        Block::Table(Table {
            id: id.map(Into::into),
            columns,
            rows,
        }),
        Paragraph::note(format!(
            "{n} × {n} matrix summarised by figure: {n} GPUs are too many for a cell's figure on \
             a page; {file} holds every pair.",
            n = gpus.len()
        ))
        .into(),
    ]
}

/// A figure of a matrix summarised: (its class and text), the first cell's title, the ordered
/// pairs with it.
type Group = ((Class, String), Option<String>, Vec<(usize, usize)>);

/// The most distinct figures a matrix above [`DENSE_MATRIX_GPUS`] is summarised by, a row each.
pub const DENSE_SUMMARY_FIGURES: usize = 12;

/// The most GPUs whose matrices print each cell's figure; above it (a rack of 72) the cells
/// are colour only, the figure in the HTML's hover title, and the CSVs hold every figure.
pub const DENSE_MATRIX_GPUS: usize = 32;

/// The diagonal of a matrix (a GPU or NIC with itself).
pub(super) fn diag() -> Cell {
    Cell::of(Class::Diag, "X")
}

/// A number with `d` decimals; "—" when unknown or not finite.
pub(super) fn num(v: Option<f64>, d: usize) -> String {
    match v.filter(|v| v.is_finite()) {
        Some(v) => format!("{v:.d$}"),
        None => "—".to_string(),
    }
}

/// The class of a provenance.
pub(super) fn provenance_class(p: &Provenance) -> Class {
    match p {
        Provenance::Measured => Class::Measured,
        Provenance::Modeled(_) => Class::Modeled,
        Provenance::Projected => Class::Projected,
        Provenance::None => Class::None,
    }
}

/// A provenance as a table cell: its words in its class.
pub(super) fn provenance_cell(p: &Provenance) -> Cell {
    Cell::of(provenance_class(p), p.text())
}

/// The head of the document: what the machine is first, then how it is connected, where the
/// figures come from, whether the run was interrupted and the command that made it.
fn head(r: &Report) -> Section {
    let mut s = Section::untitled("head");
    s.push(Block::Title {
        id: "machine".into(),
        text: summary::machine_name(r),
        badge: r
            .has_modeled()
            .then(|| "contains modeled figures".to_string()),
    });
    if let Some(i) = summary::interconnect(r) {
        s.push(Paragraph::of(Class::Sub, format!("GPUs connected by {i}")).into());
    }
    s.push(Paragraph::of(Class::Sub, summary::identity_line(r)).into());
    s.push(Paragraph::note(summary::origin_line(r)).into());
    older_method(&mut s, r);
    if r.cancelled {
        s.push(
            Paragraph {
                class: Class::Sub,
                spans: vec![
                    Span::styled("Interrupted run", SpanStyle::Strong),
                    Span::plain(format!(
                        " ({}): the figures are what finished.",
                        r.cancelled_by.as_deref().unwrap_or("signal unknown")
                    )),
                ],
            }
            .into(),
        );
    }
    if !r.machine.command_line.is_empty() {
        s.push(
            Paragraph {
                class: Class::Note,
                spans: vec![
                    Span::plain("Command: "),
                    Span::styled(r.machine.command_line.join(" "), SpanStyle::Code),
                ],
            }
            .into(),
        );
    }
    s
}

/// The head of a view's page: the machine and what the page shows.
fn page_head(r: &Report, what: &str) -> Section {
    let mut s = Section::untitled("head");
    s.push(Block::Title {
        id: "machine".into(),
        text: summary::machine_title(r),
        badge: r
            .has_modeled()
            .then(|| "contains modeled figures".to_string()),
    });
    s.push(Paragraph::of(Class::Sub, what).into());
    s.push(Paragraph::note(summary::identity_line(r)).into());
    older_method(&mut s, r);
    s
}

/// A report of the older method (the bundled examples) says so under its head, on every page.
fn older_method(s: &mut Section, r: &Report) {
    if let Some(note) = r.older_method() {
        s.push(
            Paragraph {
                class: Class::Warning,
                spans: vec![
                    Span::styled("Older method: ", SpanStyle::Strong),
                    Span::plain(format!("{note}.")),
                ],
            }
            .into(),
        );
    }
}

/// The key figures: name, value, the definition it follows, detail and provenance.
fn key_figures(r: &Report) -> Option<Section> {
    let mut s = Section::new("key-figures", "Key figures");
    let rows = summary::key_figures(r)
        .into_iter()
        .map(|k| {
            vec![
                Cell::plain(&k.name),
                Cell::plain(k.value_text()).strong(),
                Cell::plain(&k.definition),
                Cell::of(Class::Note, &k.detail),
                provenance_cell(&k.provenance),
            ]
        })
        .collect();
    s.push(Block::Table(Table {
        id: Some("key-figures-table".into()),
        columns: vec![
            Column::text("figure"),
            Column::figures("value"),
            Column::text("definition"),
            Column::text("detail"),
            Column::text("provenance"),
        ],
        rows,
    }));
    Some(s)
}

/// Every warning: their count and the worst, then all of them folded.
fn warnings(r: &Report) -> Option<Section> {
    let mut s = Section::new("warnings", "Warnings");
    if r.warnings.is_empty() {
        s.push(Paragraph::plain("None.").into());
        return Some(s);
    }
    s.push(Paragraph::plain(format!("{} warning(s); the worst:", r.warnings.len())).into());
    s.push(Block::List {
        ordered: false,
        items: summary::warnings_lines(r, 6)
            .into_iter()
            .map(Paragraph::plain)
            .collect(),
    });
    s.push(Block::Details {
        summary: "Every warning".into(),
        blocks: vec![Block::List {
            ordered: false,
            items: r
                .warnings
                .iter()
                .map(|w| Paragraph::plain(w.to_string()))
                .collect(),
        }],
    });
    Some(s)
}

/// The warnings as the one-page report counts them: the worst three, the rest elsewhere.
fn warnings_counted(r: &Report) -> Section {
    let mut s = Section::new("warnings", format!("Warnings: {}", r.warnings.len()));
    if r.warnings.is_empty() {
        s.push(Paragraph::plain("None.").into());
        return s;
    }
    for w in summary::warnings_lines(r, 3) {
        s.push(Paragraph::of(Class::Warning, w).into());
    }
    s.push(Paragraph::note("Every warning: report.json, report.html and report.pdf.").into());
    s
}

/// What the provenance words mean, and what wrote the document.
fn foot(r: &Report) -> Option<Section> {
    let mut s = Section::untitled("foot");
    s.push(
        Paragraph::note(
            "measured: run on GPUs (copies verified where the table says so) · modeled: line \
             rates × efficiencies measured elsewhere, named beside each figure · projected: the \
             scaling model beyond one node. A value not measured is “—”.",
        )
        .into(),
    );
    s.push(
        Paragraph::note(format!(
            "Written by scalescope {} from report.json (schema {}).",
            r.machine.scalescope_version, r.schema_version
        ))
        .into(),
    );
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::html;
    use crate::scaling::{Mode, RowSource};

    fn html(r: &Report) -> String {
        html::write(&report(r))
    }

    #[test]
    fn hostile_strings_from_a_report_stay_text() {
        let (_, r) = crate::report::bundled::reports().remove(0);
        let mut r = r.unwrap();
        let evil = "<script>alert(1)</script>\"'\u{7}";
        r.machine.hostname = Some(evil.into());
        r.machine.gpu_names = vec![evil.into(); r.topology.gpus.len()];
        r.machine.command_line = vec![evil.into()];
        if let Some(b) = &mut r.bandwidth {
            b.backend = evil.into();
        }
        let html = html(&r);
        assert!(!html.contains("<script"), "a report's string became markup");
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains('\u{7}'));
    }

    #[test]
    fn an_empty_report_says_what_was_not_run() {
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let r = Report::new(Default::default(), topo);
        let html = html(&r);
        assert!(html.contains("No health check"));
        assert!(html.contains("Not run in this report"));
        // Unknown figures are dashes, not zeros.
        assert!(html.contains("<b>—</b>"));
        assert!(!html.contains("<svg"), "no data, no chart");
        // Pages without data are not made.
        assert!(page(&r, Page::Bandwidth).is_none());
        assert!(page(&r, Page::Report).is_some() && page(&r, Page::Topology).is_some());
    }

    #[test]
    fn the_scaling_table_shows_the_model_error_and_the_calibration_point() {
        let topo = crate::topology::catalog::load("hgx-h200").unwrap();
        let mut r = Report::new(Default::default(), topo);
        let run = crate::scaling::run::fixtures::calibrated_gpt2_xl();
        let two = run
            .rows
            .iter()
            .find(|p| p.source == RowSource::Framework && p.n_gpus == 2)
            .unwrap()
            .error_cell();
        r.scaling = Some(crate::report::ScalingSection {
            source: crate::model::Source::Measured,
            run,
        });
        let html = html(&r);
        let table = &html[html.find("id=\"scaling-table\"").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert!(table.contains("<th>model error</th>"), "{table}");
        let row = |n: usize| {
            table
                .lines()
                .find(|l| l.contains(&format!("<td class=\"n\">{n}</td><td>measured_framework")))
                .unwrap_or_else(|| panic!("no measured row at {n}: {table}"))
        };
        assert!(row(1).contains("<td class=\"n\">cal.</td>"), "{}", row(1));
        assert!(
            row(2).contains(&format!("<td class=\"n\">{two}</td>")),
            "{}",
            row(2)
        );
        assert!(two.ends_with('%'));
    }

    #[test]
    fn the_step_under_ddp_at_one_gpu_is_a_row_of_its_own_with_its_words() {
        let topo = crate::topology::catalog::load("hgx-h200").unwrap();
        let mut r = Report::new(Default::default(), topo);
        let mut run = crate::scaling::run::fixtures::calibrated_gpt2_xl();
        run.machine.as_mut().unwrap().framework_steps[0].under_ddp =
            crate::scaling::calibrate::UnderDdp::new(Some(404.0), Some(380.0), Some(9.0));
        r.scaling = Some(crate::report::ScalingSection {
            source: crate::model::Source::Measured,
            run,
        });
        let html = html(&r);
        let table = &html[html.find("id=\"scaling-table\"").unwrap()..];
        let (table, after) = table.split_at(table.find("</table>").unwrap());
        let lines: Vec<&str> = table.lines().collect();
        let at = lines
            .iter()
            .position(|l| {
                l.contains("<td>1 GPU under DDP (the plain step beside it: 380.00 ms)</td>")
            })
            .unwrap_or_else(|| panic!("no row under DDP: {table}"));
        // Right below the plain 1-GPU weak row, with the wrapped step and no speedup.
        assert!(
            lines[at - 1].contains("<td class=\"n\">380.00</td>"),
            "{}",
            lines[at - 1]
        );
        assert!(
            lines[at].contains("<td class=\"n\">404.00</td>"),
            "{}",
            lines[at]
        );
        assert!(
            !lines[at].contains("1.00"),
            "no speedup of its own: {}",
            lines[at]
        );
        // Its words under the table: the cost against the plain step timed beside it.
        let note = &after[..after.find("</p>").unwrap()];
        assert!(note.contains("+24.00 ms a step (+6.3 %)"), "{note}");
    }

    #[test]
    fn a_workload_that_fits_nowhere_is_listed_as_such() {
        // Llama-2-7B with plain DDP fits no 80 GB GPU: the per-workload table says so instead of
        // leaving the workload out, in a cell that wraps.
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let mut r = Report::new(Default::default(), topo.clone());
        let w = crate::scaling::workload::resolve("llama2-7b-ddp").unwrap();
        let run = crate::scaling::run::run_modeled(&topo, &[], &[w], &Mode::ALL, 16);
        r.scaling = Some(crate::report::ScalingSection {
            source: crate::model::Source::Modeled,
            run,
        });
        let html = html(&r);
        let table = &html[html.find("id=\"workloads-table\"").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.contains("llama2-7b-ddp"))
            .collect();
        assert_eq!(rows.len(), 2, "{table}");
        for row in rows {
            assert!(row.contains("<td class=\"n\">8</td>"), "{row}");
            assert!(
                row.contains(">does not fit: ") && row.contains("fsdp"),
                "{row}"
            );
            assert!(
                !row.contains("class=\"n\">does not fit"),
                "prose in a nowrap cell: {row}"
            );
        }
    }
}
