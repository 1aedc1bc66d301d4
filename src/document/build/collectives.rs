//! Collectives: the all-reduce bus bandwidth over sizes and every operation at its largest
//! size.

use std::collections::BTreeMap;

use super::bandwidth::CHART_WIDTH;
use super::{num, provenance_cell, provenance_class};
use crate::document::chart::{self, Axis, Chart, Series};
use crate::document::{Block, Cell, Column, Paragraph, Section, Table};
use crate::model::quantities::format_bytes;
use crate::model::{Algo, CollectiveOp, CollectiveResult, Source, Status};
use crate::report::Report;
use crate::report::summary;

/// Results grouped by (op, algorithm, GPU count, in place).
type Groups<'a> = BTreeMap<(CollectiveOp, Algo, usize, bool), Vec<&'a CollectiveResult>>;

fn groups(results: &[CollectiveResult]) -> Groups<'_> {
    let mut g: Groups = BTreeMap::new();
    for x in results {
        g.entry((x.op, x.algo, x.gpus.len(), x.in_place))
            .or_default()
            .push(x);
    }
    g
}

/// The all-reduce curves (out of place), one per algorithm and GPU count, up to the largest
/// size each measured.
fn busbw_chart(groups: &Groups) -> Option<Block> {
    let series: Vec<Series> = groups
        .iter()
        .filter(|((op, _, _, in_place), _)| *op == CollectiveOp::AllReduce && !in_place)
        .filter_map(|((op, algo, n, _), rows)| {
            let mut points: Vec<(f64, f64)> = rows
                .iter()
                .filter(|x| x.status == Status::Ok)
                .filter_map(|x| Some((x.bytes as f64, x.busbw_gbps.filter(|v| v.is_finite())?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let modeled = rows.iter().any(|x| x.source == Source::Modeled);
            (points.len() > 1).then(|| Series {
                name: format!(
                    "{op} {algo}, {n} GPUs{}",
                    if modeled { " (modeled)" } else { "" }
                ),
                points,
                dashed: modeled,
            })
        })
        .collect();
    chart::chart(&Chart {
        id: "busbw-curve",
        caption: "All-reduce bus bandwidth (nccl-tests' busbw) vs size, out of place",
        x_label: "size",
        y_label: "busbw GB/s",
        axis: Axis::Bytes,
        series: &series,
        width: CHART_WIDTH,
    })
    .map(Block::Figure)
}

/// The report's collectives section.
pub(super) fn section(r: &Report) -> Option<Section> {
    let mut s = Section::new("collectives", "Collectives");
    let Some(c) = &r.collectives else {
        s.push(Paragraph::plain("Not run in this report.").into());
        return Some(s);
    };
    s.push(
        Paragraph::note(format!(
            "{} · {} · busbw is nccl-tests' bus bandwidth (algbw × 2(n−1)/n for all-reduce, × \
             (n−1)/n for all-gather, reduce-scatter and all-to-all)",
            c.source_words(),
            c.backend
        ))
        .into(),
    );
    let groups = groups(&c.results);
    s.blocks.extend(busbw_chart(&groups));
    s.push(Block::Subheading {
        text: "At the largest size of each".into(),
    });
    let rows = groups
        .iter()
        .filter_map(|((op, algo, _, in_place), rows)| {
            let x = rows.iter().max_by_key(|x| x.bytes)?;
            let gpus: Vec<String> = x.gpus.iter().map(|g| g.to_string()).collect();
            Some(vec![
                Cell::plain(op.to_string()),
                Cell::plain(algo.to_string()),
                Cell::plain(gpus.join(",")),
                Cell::plain(if *in_place { "yes" } else { "no" }),
                Cell::plain(format_bytes(x.bytes)),
                Cell::plain(num(x.time_us, 1)),
                Cell::plain(num(x.algbw_gbps, 1)),
                Cell::plain(num(x.busbw_gbps, 1)),
                Cell::plain(summary::verified_text(x.wrong)),
                Cell::plain(x.status.to_string()),
                provenance_cell(&summary::result_provenance(x.source, x.reason.as_deref())),
            ])
        })
        .collect();
    s.push(Block::Table(Table {
        id: Some("collectives-table".into()),
        columns: vec![
            Column::text("op"),
            Column::text("algorithm"),
            Column::text("GPUs"),
            Column::text("in place"),
            Column::figures("size"),
            Column::figures("time µs"),
            Column::figures("algbw GB/s"),
            Column::figures("busbw GB/s"),
            Column::text("data"),
            Column::text("status"),
            Column::text("provenance"),
        ],
        rows,
    }));
    Some(s)
}

/// The one-page report's all-reduce curve, with where it comes from.
pub(super) fn summary(r: &Report) -> Option<Section> {
    let c = r.collectives.as_ref()?;
    let mut s = Section::new(
        "collectives",
        "All-reduce bus bandwidth vs size (nccl-tests' busbw = algbw × 2(n−1)/n)",
    );
    // A modeled run's rows name the efficiency they used.
    if let Some(x) = c
        .results
        .iter()
        .find(|x| x.op == CollectiveOp::AllReduce && x.algo == Algo::Nccl)
    {
        let p = summary::result_provenance(x.source, x.reason.as_deref());
        s.push(Paragraph::of(provenance_class(&p), p.text()).into());
    }
    match busbw_chart(&groups(&c.results)) {
        Some(b) => s.push(b),
        None => s.push(Paragraph::plain("No all-reduce measured at more than one size.").into()),
    }
    Some(s)
}
