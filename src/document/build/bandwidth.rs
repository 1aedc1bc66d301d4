//! Copy bandwidth and latency: the pair matrices, the curves over sizes, one row per test and
//! size, and what did not run with its reason.

use std::collections::{BTreeMap, BTreeSet};

use super::{MATRIX_MAX_GPUS, gpu_matrix_blocks, matrix_left_out, num, provenance_cell};
use crate::document::chart::{self, Axis, Chart, Series};
use crate::document::{Block, Cell, Class, Column, Paragraph, Section, Table};
use crate::model::quantities::format_bytes;
use crate::model::{BandwidthResult, Endpoint, Source, Status, TestId};
use crate::report::Report;
use crate::report::summary::{self, Provenance};

/// The width charts are drawn at, in SVG units.
pub(super) const CHART_WIDTH: f64 = 760.0;

/// Cells of one test at one size, each (src, dst) once.
fn cells(results: &[BandwidthResult], test: TestId, bytes: u64) -> Vec<&BandwidthResult> {
    let mut v: Vec<&BandwidthResult> = results
        .iter()
        .filter(|r| r.test == test && r.bytes == bytes)
        .collect();
    v.sort_by_key(|r| (r.src, r.dst));
    v.dedup_by_key(|r| (r.src, r.dst));
    v
}

/// A result's figure: GB/s, or ns for latency tests.
fn figure(r: &BandwidthResult) -> Option<f64> {
    if r.test.is_latency() {
        r.latency_ns
    } else {
        r.median_gbps
    }
}

/// A matrix cell's text: the figure, or the status word when there is none.
fn cell_text(r: &BandwidthResult) -> String {
    match (r.status, figure(r).filter(|v| v.is_finite())) {
        (Status::Ok, Some(v)) => format!("{v:.1}"),
        (Status::Ok, None) => "—".to_string(),
        (s, _) => s.to_string(),
    }
}

/// How a group of results came about, in one provenance: measured when all are, else the first
/// modeled one's note.
fn group_provenance(rows: &[&BandwidthResult]) -> Provenance {
    match rows.iter().find(|r| r.source == Source::Modeled) {
        Some(m) => summary::result_provenance(Source::Modeled, m.reason.as_deref()),
        None if rows.is_empty() => Provenance::None,
        None => Provenance::Measured,
    }
}

/// The GPU×GPU matrix of a pair test at the size with every pair.
fn pair_matrix(r: &Report, results: &[BandwidthResult], test: TestId) -> Vec<Block> {
    let Some(bytes) = crate::model::fullest_size(results, test) else {
        return Vec::new();
    };
    let rows = cells(results, test, bytes);
    let gpus = r.topology.gpu_indices();
    if gpus.len() > MATRIX_MAX_GPUS {
        return vec![matrix_left_out(
            gpus.len(),
            &format!("{test}, {}", format_bytes(bytes)),
            "bandwidth.csv (and the table of every test below)",
        )];
    }
    let by_pair: std::collections::HashMap<(Endpoint, Endpoint), &&BandwidthResult> =
        rows.iter().map(|x| ((x.src, x.dst), x)).collect();
    let definition = summary::nvbandwidth_name(test)
        .map(|n| format!(", nvbandwidth's {n}"))
        .unwrap_or_default();
    let unit = if test.is_latency() { "ns" } else { "GB/s" };
    let matrix = gpu_matrix_blocks(None, &gpus, unit, "bandwidth.csv", |a, b| {
        match by_pair.get(&(Endpoint::Gpu(a), Endpoint::Gpu(b))) {
            Some(x) if x.source == Source::Modeled => Cell::of(Class::Modeled, cell_text(x)),
            Some(x) => Cell::plain(cell_text(x)),
            None => Cell::of(Class::None, "—"),
        }
    });
    let mut out = vec![
        Block::Subheading {
            text: format!(
                "{test}, {} — {} (rows: source, columns: destination{definition})",
                format_bytes(bytes),
                if test.is_latency() {
                    "ns per access"
                } else {
                    "GB/s"
                },
            ),
        },
        Paragraph::note(format!(
            "{} · {}",
            test.describe(),
            group_provenance(&rows).text()
        ))
        .into(),
    ];
    out.extend(matrix);
    out
}

/// Every test measured at more than one size, as a curve of its median over the cells per size.
fn curves(results: &[BandwidthResult]) -> Option<Block> {
    let tests: BTreeSet<TestId> = results
        .iter()
        .filter(|x| !x.test.is_latency())
        .map(|x| x.test)
        .collect();
    let mut series = Vec::new();
    for test in tests {
        let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        let mut modeled = false;
        for x in results
            .iter()
            .filter(|x| x.test == test && x.status == Status::Ok)
        {
            if let Some(v) = x.median_gbps.filter(|v| v.is_finite()) {
                by_size.entry(x.bytes).or_default().push(v);
                modeled |= x.source == Source::Modeled;
            }
        }
        if by_size.len() < 2 {
            continue;
        }
        let points = by_size
            .iter()
            .filter_map(|(b, v)| Some((*b as f64, crate::model::Stats::of(v)?.median)))
            .collect();
        series.push(Series {
            name: format!("{test}{}", if modeled { " (modeled)" } else { "" }),
            points,
            dashed: modeled,
        });
    }
    chart::chart(&Chart {
        id: "bandwidth-curve",
        caption: "Copy bandwidth vs buffer size (median over the cells measured at each size)",
        x_label: "buffer size",
        y_label: "GB/s",
        axis: Axis::Bytes,
        series: &series,
        width: CHART_WIDTH,
    })
    .map(Block::Figure)
}

/// Whether a group's data was checked: `verified`, `N wrong[, M not verified]`, `not verified`.
fn verified(rows: &[&BandwidthResult]) -> String {
    let wrong: Vec<Option<u64>> = rows.iter().map(|x| x.wrong).collect();
    if wrong.iter().all(|w| w.is_none()) {
        "not verified".to_string()
    } else if wrong.iter().all(|w| *w == Some(0)) {
        "verified".to_string()
    } else {
        let bad: u64 = wrong.iter().flatten().sum();
        let unchecked = wrong.iter().filter(|w| w.is_none()).count();
        let mut s = format!("{bad} wrong");
        if unchecked > 0 {
            s.push_str(&format!(", {unchecked} not verified"));
        }
        s
    }
}

/// One row per test and size: cells, median, the worst cell, % of line rate, data check.
fn every_test(results: &[BandwidthResult]) -> Table {
    let mut groups: BTreeMap<(TestId, u64), Vec<&BandwidthResult>> = BTreeMap::new();
    for x in results {
        groups.entry((x.test, x.bytes)).or_default().push(x);
    }
    let rows = groups
        .iter()
        .map(|((test, bytes), rows)| {
            let unit = if test.is_latency() { "ns" } else { "GB/s" };
            let ok: Vec<f64> = rows
                .iter()
                .filter(|x| x.status == Status::Ok)
                .filter_map(|x| figure(x).filter(|v| v.is_finite()))
                .collect();
            let stats = crate::model::Stats::of(&ok);
            // Least bandwidth, or most latency: the worst cell.
            let worst = if test.is_latency() {
                ok.iter().copied().reduce(f64::max)
            } else {
                ok.iter().copied().reduce(f64::min)
            };
            let effs: Vec<f64> = rows
                .iter()
                .filter_map(|x| x.efficiency.filter(|e| e.is_finite()))
                .collect();
            let eff = crate::model::Stats::of(&effs).map(|s| s.median * 100.0);
            // A cell above the line rate is a measurement to distrust (no link carries more):
            // said in its cell, as the app's table says it.
            let above = rows.iter().filter(|x| x.above_line_rate()).count();
            let eff_cell = if above > 0 {
                Cell::of(
                    Class::Warning,
                    format!(
                        "{} — {above} of {} above the line rate: distrust",
                        num(eff, 0),
                        effs.len()
                    ),
                )
            } else {
                Cell::plain(num(eff, 0))
            };
            let not_ok = rows.iter().filter(|x| x.status != Status::Ok).count();
            let definition = summary::nvbandwidth_name(*test)
                .map(|n| format!("nvbandwidth {n}"))
                .unwrap_or_else(|| test.describe().to_string());
            vec![
                Cell::plain(test.to_string()),
                Cell::plain(format_bytes(*bytes)),
                Cell::plain(rows.len().to_string()),
                Cell::plain(summary::fmt_value(stats.map(|s| s.median), unit)),
                Cell::plain(summary::fmt_value(worst, unit)),
                eff_cell,
                Cell::plain(not_ok.to_string()),
                Cell::plain(verified(rows)),
                Cell::of(Class::Note, definition),
                provenance_cell(&group_provenance(rows)),
            ]
        })
        .collect();
    Table {
        id: Some("bandwidth-table".into()),
        columns: vec![
            Column::text("test"),
            Column::figures("size"),
            Column::figures("cells"),
            Column::figures("median"),
            Column::figures("least"),
            Column::figures("% of line rate"),
            Column::figures("not ok"),
            Column::text("data"),
            Column::text("definition"),
            Column::text("provenance"),
        ],
        rows,
    }
}

/// The most results not ok listed one by one; above it they are grouped by test, status and
/// reason (with the GPU numbers taken out), one line per group with its count and first cell —
/// a 72-GPU machine whose cross-domain pairs were not modeled has 41,000 of them.
const NOT_OK_LISTED: usize = 64;

/// One line per result not ok, or per group of them above [`NOT_OK_LISTED`].
fn not_ok_lines(failed: &[&BandwidthResult]) -> Vec<String> {
    let line = |x: &BandwidthResult| {
        format!(
            "{} {}→{} {}: {} — {}",
            x.test,
            x.src,
            x.dst,
            format_bytes(x.bytes),
            x.status,
            x.reason.as_deref().unwrap_or("no reason given")
        )
    };
    if failed.len() <= NOT_OK_LISTED {
        return failed.iter().map(|x| line(x)).collect();
    }
    // The reason with every number that follows "GPU " replaced, so that pairs group.
    let shape = |reason: &str| {
        let mut out = String::with_capacity(reason.len());
        let mut rest = reason;
        while let Some(i) = rest.find("GPU ") {
            out.push_str(&rest[..i + 4]);
            rest = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
            out.push('#');
        }
        out.push_str(rest);
        out
    };
    // (count, first result) per test, status and reason shape, in order of appearance.
    let mut groups: Vec<(usize, &BandwidthResult)> = Vec::new();
    let mut index: BTreeMap<(TestId, String, String), usize> = BTreeMap::new();
    for x in failed {
        let reason = shape(x.reason.as_deref().unwrap_or("no reason given"));
        let at = *index
            .entry((x.test, x.status.to_string(), reason))
            .or_insert_with(|| {
                groups.push((0, x));
                groups.len() - 1
            });
        groups[at].0 += 1;
    }
    groups
        .iter()
        .map(|&(count, first)| match count {
            1 => line(first),
            n => format!("{n} cells like: {}", line(first)),
        })
        .collect()
}

/// The report's bandwidth section.
pub(super) fn section(r: &Report) -> Option<Section> {
    let mut s = Section::new("bandwidth", "Copy bandwidth and latency");
    let Some(b) = &r.bandwidth else {
        s.push(Paragraph::plain("Not run in this report.").into());
        return Some(s);
    };
    s.push(Paragraph::note(format!("{} · {}", b.source, b.backend)).into());
    let results = &b.results;
    for test in [TestId::P2pReadCe, TestId::P2pWriteCe, TestId::LatencyD2d] {
        if results.iter().any(|x| x.test == test) {
            s.blocks.extend(pair_matrix(r, results, test));
        }
    }
    s.blocks.extend(curves(results));
    s.push(Block::Subheading {
        text: "Every test".into(),
    });
    s.push(Block::Table(every_test(results)));
    let failed: Vec<&BandwidthResult> = results.iter().filter(|x| x.status != Status::Ok).collect();
    if !failed.is_empty() {
        s.push(Block::Details {
            summary: format!("{} result(s) not ok, with the reason", failed.len()),
            blocks: vec![Block::List {
                ordered: false,
                items: not_ok_lines(&failed)
                    .into_iter()
                    .map(Paragraph::plain)
                    .collect(),
            }],
        });
    }
    Some(s)
}
