//! `report.html`: a report as one self-contained document for print and for a browser. No
//! external links, scripts or fonts; the charts are inline SVG drawn here (no egui, so the
//! headless build writes it too). Every string that came from a report is escaped; a value
//! not measured is "—", never 0; every figure says whether it is measured, modeled (and from
//! what) or projected.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::model::units::format_bytes;
use crate::model::{
    Algo, BandwidthResult, CollectiveOp, CollectiveResult, Endpoint, Source, Status, TestId,
};
use crate::report::Report;
use crate::report::summary::{self, Provenance};
use crate::scaling::{Mode, RowSource, ScalingPoint};

/// Escapes text for HTML (element content and quoted attribute values alike): `& < > " '`, and
/// control characters shown as their escapes (`\u{1b}`) rather than passed through.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.extend(c.escape_debug()),
            c => out.push(c),
        }
    }
    out
}

/// A number with `d` decimals; "—" when unknown or not finite.
fn num(v: Option<f64>, d: usize) -> String {
    match v.filter(|v| v.is_finite()) {
        Some(v) => format!("{v:.d$}"),
        None => "—".to_string(),
    }
}

/// The CSS class and word of a provenance.
fn prov_cell(p: &Provenance) -> String {
    let class = match p {
        Provenance::Measured => "measured",
        Provenance::Modeled(_) => "modeled",
        Provenance::Projected => "projected",
        Provenance::None => "none",
    };
    format!("<td class=\"prov {class}\">{}</td>", escape(&p.text()))
}

const STYLE: &str = "
body{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif;color:#1b1f24;background:#fff;
margin:24px auto;max-width:1100px;padding:0 16px;font-size:14px;line-height:1.4}
h1{font-size:28px;margin:0 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid #ccd;
padding-bottom:3px}h3{font-size:15px;margin:16px 0 6px}
.sub{color:#444;margin:2px 0}.note{color:#555;font-size:12.5px}
table{border-collapse:collapse;margin:6px 0 10px}th,td{border:1px solid #ccd;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#eef1f5}td.n{text-align:right;white-space:nowrap;
font-variant-numeric:tabular-nums}
table.matrix td{text-align:center;min-width:56px}.diag{color:#999}
.nv{background:#cdeccd}.pcie{background:#fde7c8}.sys{background:#f6cfcf}
.prov{font-size:12.5px}.measured{color:#14532d}.modeled{color:#7c4a03;font-style:italic}
.projected{color:#5b21b6;font-style:italic}.none{color:#777}
.verdict{display:inline-block;font-weight:bold;padding:2px 10px;border-radius:4px;color:#fff}
.v-pass{background:#15803d}.v-warn{background:#b45309}.v-fail{background:#b91c1c}
.v-unknown{background:#6b7280}.badge{display:inline-block;border:1px solid #b45309;color:#7c4a03;
border-radius:4px;padding:0 6px;font-size:12px;margin-left:6px}
figure{margin:8px 0 14px}figcaption{font-size:12.5px;color:#444}
svg text{font-family:'DejaVu Sans','Liberation Sans',Arial,sans-serif}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}table,figure{break-inside:avoid}}
";

/// The whole report as one HTML document.
pub fn report(r: &Report) -> String {
    let mut h = String::with_capacity(64 << 10);
    let name = summary::machine_name(r);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} — scalescope report, {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&name),
        escape(r.date())
    );
    header(&mut h, r, &name);
    verdict(&mut h, r);
    key_figures(&mut h, r);
    topology(&mut h, r);
    bandwidth(&mut h, r);
    collectives(&mut h, r);
    scaling(&mut h, r);
    health_checks(&mut h, r);
    warnings(&mut h, r);
    let _ = write!(
        h,
        "<footer class=\"note\"><p>measured: run on GPUs (copies verified where the table says \
         so) · modeled: line rates × efficiencies measured elsewhere, named beside each figure · \
         projected: the scaling model beyond one node. A value not measured is “—”.</p>\
         <p>Written by scalescope {} from report.json (schema {}).</p></footer>\n</body>\n</html>\n",
        escape(&r.machine.scalescope_version),
        r.schema_version
    );
    h
}

fn header(h: &mut String, r: &Report, name: &str) {
    let _ = write!(h, "<header>\n<h1 id=\"machine\">{}", escape(name));
    if r.has_modeled() {
        h.push_str("<span class=\"badge\">contains modeled figures</span>");
    }
    h.push_str("</h1>\n");
    if let Some(i) = summary::interconnect(r) {
        let _ = writeln!(h, "<p class=\"sub\">GPUs connected by {}</p>", escape(&i));
    }
    let _ = writeln!(
        h,
        "<p class=\"sub\">{}</p>\n<p class=\"note\">{}</p>",
        escape(&summary::identity_line(r)),
        escape(&summary::origin_line(r))
    );
    if r.cancelled {
        let _ = writeln!(
            h,
            "<p class=\"sub\"><b>Interrupted run</b> ({}): the figures are what finished.</p>",
            escape(r.cancelled_by.as_deref().unwrap_or("signal unknown"))
        );
    }
    if !r.machine.command_line.is_empty() {
        let _ = writeln!(
            h,
            "<p class=\"note\">Command: <code>{}</code></p>",
            escape(&r.machine.command_line.join(" "))
        );
    }
    h.push_str("</header>\n");
}

fn verdict(h: &mut String, r: &Report) {
    h.push_str("<section id=\"verdict\">\n<h2>Health verdict (scalescope check)</h2>\n");
    let Some(hr) = &r.health else {
        h.push_str("<p>No health check in this report (it was not run).</p>\n</section>\n");
        return;
    };
    let class = format!("v-{}", hr.verdict.word().to_ascii_lowercase());
    let c = &hr.counts;
    let _ = writeln!(
        h,
        "<p><span class=\"verdict {class}\">{}{}</span> {} pass · {} warn · {} fail · {} unknown</p>",
        hr.verdict.word(),
        if hr.source == Source::Modeled {
            " (modeled)"
        } else {
            ""
        },
        c.pass,
        c.warn,
        c.fail,
        c.unknown
    );
    if hr.source == Source::Modeled {
        h.push_str(
            "<p class=\"note modeled\">Modeled: derived from the links as read or stated, not \
             measured — not a PASS of a real machine.</p>\n",
        );
    }
    let worst = summary::worst_findings(r, 5);
    if worst.is_empty() {
        h.push_str(if hr.source == Source::Modeled {
            "<p>Every check passed, as modeled.</p>\n"
        } else {
            "<p>Every check passed.</p>\n"
        });
    } else {
        h.push_str("<p>Worst findings:</p>\n<ol>\n");
        for f in worst {
            let _ = writeln!(h, "<li>{}</li>", escape(&summary::finding_line(f)));
        }
        h.push_str("</ol>\n");
    }
    for n in &hr.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(n));
    }
    h.push_str("</section>\n");
}

fn key_figures(h: &mut String, r: &Report) {
    h.push_str(
        "<section id=\"key-figures\">\n<h2>Key figures</h2>\n<table id=\"key-figures-table\">\n\
         <tr><th>figure</th><th>value</th><th>definition</th><th>detail</th><th>provenance</th></tr>\n",
    );
    for k in summary::key_figures(r) {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td class=\"n\"><b>{}</b></td><td>{}</td><td class=\"note\">{}</td>{}</tr>",
            escape(&k.name),
            escape(&k.value_text()),
            escape(&k.definition),
            escape(&k.detail),
            prov_cell(&k.provenance)
        );
    }
    h.push_str("</table>\n</section>\n");
}

fn topology(h: &mut String, r: &Report) {
    let t = &r.topology;
    h.push_str("<section id=\"topology\">\n<h2>Topology (nvidia-smi topo -m)</h2>\n");
    let _ = writeln!(
        h,
        "<p class=\"note\">{} · {}</p>",
        escape(&t.source.label()),
        match t.source.kind() {
            "live" => "read live through NVML",
            "catalog" => "documented by the vendor, not measured",
            _ => "parsed from nvidia-smi captures",
        }
    );
    let gpus = t.gpu_indices();
    if gpus.is_empty() {
        h.push_str("<p>No GPU in the topology.</p>\n</section>\n");
        return;
    }
    h.push_str("<table class=\"matrix\" id=\"topology-matrix\">\n<tr><th></th>");
    for g in &gpus {
        let _ = write!(h, "<th>GPU{g}</th>");
    }
    h.push_str("<th>CPU affinity</th><th>NUMA</th></tr>\n");
    for &a in &gpus {
        let _ = write!(h, "<tr><th>GPU{a}</th>");
        for &b in &gpus {
            if a == b {
                h.push_str("<td class=\"diag\">X</td>");
                continue;
            }
            let kind = t.link(a, b).and_then(|l| l.kind);
            let class = match kind {
                Some(k) if k.nvlinks().is_some() => "nv",
                Some(crate::model::LinkKind::Sys) => "sys",
                Some(_) => "pcie",
                None => "none",
            };
            let text = kind.map_or("—".to_string(), |k| k.to_string());
            let _ = write!(h, "<td class=\"{class}\">{}</td>", escape(&text));
        }
        let g = t.gpu(a);
        let _ = writeln!(
            h,
            "<td>{}</td><td>{}</td></tr>",
            escape(g.and_then(|g| g.cpu_affinity.as_deref()).unwrap_or("—")),
            g.and_then(|g| g.numa_node)
                .map_or("—".to_string(), |n| n.to_string())
        );
    }
    h.push_str("</table>\n");
    if gpus.len() > 1 {
        h.push_str(
            "<h3>Line rate, GB/s per direction</h3>\n<table class=\"matrix\" id=\"line-rate-matrix\">\n<tr><th></th>",
        );
        for g in &gpus {
            let _ = write!(h, "<th>GPU{g}</th>");
        }
        h.push_str("</tr>\n");
        for &a in &gpus {
            let _ = write!(h, "<tr><th>GPU{a}</th>");
            for &b in &gpus {
                if a == b {
                    h.push_str("<td class=\"diag\">X</td>");
                } else {
                    let rate = t.link(a, b).and_then(|l| l.line_rate.as_ref());
                    let _ = write!(
                        h,
                        "<td title=\"{}\">{}</td>",
                        escape(rate.map_or("", |l| l.basis.as_str())),
                        num(rate.map(|l| l.gbps), 0)
                    );
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
    }
    h.push_str(
        "<h3>GPUs</h3>\n<table id=\"gpu-table\">\n<tr><th>GPU</th><th>name</th><th>memory</th>\
         <th>PCIe</th><th>NVLinks active</th><th>PCI bus</th></tr>\n",
    );
    for g in &t.gpus {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            g.index,
            escape(g.name.as_deref().unwrap_or("—")),
            g.memory_mib.map_or("—".to_string(), |m| format!(
                "{:.0} GiB",
                m as f64 / 1024.0
            )),
            escape(&g.pcie.describe()),
            g.nvlinks_active.map_or("—".to_string(), |n| n.to_string()),
            escape(g.pci_bus_id.as_deref().unwrap_or("—"))
        );
    }
    h.push_str("</table>\n");
    // Long lists of notes (one per pair on big boxes) fold away.
    if t.notes.len() > 3 {
        let _ = writeln!(
            h,
            "<details><summary class=\"note\">{} notes on how the topology was read</summary>",
            t.notes.len()
        );
    }
    for n in &t.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(&n.to_string()));
    }
    if t.notes.len() > 3 {
        h.push_str("</details>\n");
    }
    h.push_str("</section>\n");
}

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

/// The GPU×GPU matrix of a pair test at one size.
fn pair_matrix(h: &mut String, r: &Report, results: &[BandwidthResult], test: TestId) {
    let Some(bytes) = crate::model::fullest_size(results, test) else {
        return;
    };
    let rows = cells(results, test, bytes);
    let gpus = r.topology.gpu_indices();
    let definition = summary::nvbandwidth_name(test)
        .map(|n| format!(", nvbandwidth's {n}"))
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "<h3>{test}, {} — {} (rows: source, columns: destination{})</h3>\n<p class=\"note\">{} · {}</p>",
        format_bytes(bytes),
        if test.is_latency() {
            "ns per access"
        } else {
            "GB/s"
        },
        escape(&definition),
        escape(test.describe()),
        escape(&group_provenance(&rows).text())
    );
    let _ = write!(
        h,
        "<table class=\"matrix bw-matrix\" data-test=\"{}\">\n<tr><th></th>",
        test.id()
    );
    for g in &gpus {
        let _ = write!(h, "<th>GPU{g}</th>");
    }
    h.push_str("</tr>\n");
    for &a in &gpus {
        let _ = write!(h, "<tr><th>GPU{a}</th>");
        for &b in &gpus {
            if a == b {
                h.push_str("<td class=\"diag\">X</td>");
                continue;
            }
            match rows
                .iter()
                .find(|x| x.src == Endpoint::Gpu(a) && x.dst == Endpoint::Gpu(b))
            {
                Some(x) => {
                    let class = if x.source == Source::Modeled {
                        " class=\"modeled\""
                    } else {
                        ""
                    };
                    let _ = write!(h, "<td{class}>{}</td>", escape(&cell_text(x)));
                }
                None => h.push_str("<td class=\"none\">—</td>"),
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

fn bandwidth(h: &mut String, r: &Report) {
    h.push_str("<section id=\"bandwidth\">\n<h2>Copy bandwidth and latency</h2>\n");
    let Some(b) = &r.bandwidth else {
        h.push_str("<p>Not run in this report.</p>\n</section>\n");
        return;
    };
    let _ = writeln!(
        h,
        "<p class=\"note\">{} · {}</p>",
        escape(&b.source.to_string()),
        escape(&b.backend)
    );
    let results = &b.results;
    for test in [TestId::P2pReadCe, TestId::P2pWriteCe, TestId::LatencyD2d] {
        if results.iter().any(|x| x.test == test) {
            pair_matrix(h, r, results, test);
        }
    }
    // Curves: every test measured at more than one size, median over its cells per size.
    let mut series = Vec::new();
    let tests: BTreeSet<TestId> = results
        .iter()
        .filter(|x| !x.test.is_latency())
        .map(|x| x.test)
        .collect();
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
    if !series.is_empty() {
        h.push_str(&chart(
            "bandwidth-curve",
            "Copy bandwidth vs buffer size (median over the cells measured at each size)",
            "buffer size",
            "GB/s",
            Axis::Bytes,
            &series,
        ));
    }
    // One row per test and size.
    h.push_str(
        "<h3>Every test</h3>\n<table id=\"bandwidth-table\">\n<tr><th>test</th><th>size</th>\
         <th>cells</th><th>median</th><th>least</th><th>% of line rate</th><th>not ok</th>\
         <th>data</th><th>definition</th><th>provenance</th></tr>\n",
    );
    let mut groups: BTreeMap<(TestId, u64), Vec<&BandwidthResult>> = BTreeMap::new();
    for x in results {
        groups.entry((x.test, x.bytes)).or_default().push(x);
    }
    for ((test, bytes), rows) in &groups {
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
        let not_ok = rows.iter().filter(|x| x.status != Status::Ok).count();
        let verified = {
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
        };
        let definition = summary::nvbandwidth_name(*test)
            .map(|n| format!("nvbandwidth {n}"))
            .unwrap_or_else(|| test.describe().to_string());
        let _ = writeln!(
            h,
            "<tr><td>{test}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{not_ok}</td><td>{}</td>\
             <td class=\"note\">{}</td>{}</tr>",
            format_bytes(*bytes),
            rows.len(),
            escape(&summary::fmt_value(stats.map(|s| s.median), unit)),
            escape(&summary::fmt_value(worst, unit)),
            num(eff, 0),
            escape(&verified),
            escape(&definition),
            prov_cell(&group_provenance(rows))
        );
    }
    h.push_str("</table>\n");
    let failed: Vec<&BandwidthResult> = results.iter().filter(|x| x.status != Status::Ok).collect();
    if !failed.is_empty() {
        let _ = writeln!(
            h,
            "<details><summary>{} result(s) not ok, with the reason</summary>\n<ul>",
            failed.len()
        );
        for x in failed {
            let _ = writeln!(
                h,
                "<li>{} {}→{} {}: {} — {}</li>",
                x.test,
                escape(&x.src.to_string()),
                escape(&x.dst.to_string()),
                format_bytes(x.bytes),
                x.status,
                escape(x.reason.as_deref().unwrap_or("no reason given"))
            );
        }
        h.push_str("</ul></details>\n");
    }
    h.push_str("</section>\n");
}

fn collectives(h: &mut String, r: &Report) {
    h.push_str("<section id=\"collectives\">\n<h2>Collectives</h2>\n");
    let Some(c) = &r.collectives else {
        h.push_str("<p>Not run in this report.</p>\n</section>\n");
        return;
    };
    let _ = writeln!(
        h,
        "<p class=\"note\">{} · {} · busbw is nccl-tests' bus bandwidth (algbw × 2(n−1)/n for \
         all-reduce, × (n−1)/n for all-gather, reduce-scatter and all-to-all)</p>",
        escape(&c.source.to_string()),
        escape(&c.backend)
    );
    // One curve per (op, algo, GPU count, in place) with more than one size.
    type Key = (CollectiveOp, Algo, usize, bool);
    let mut groups: BTreeMap<Key, Vec<&CollectiveResult>> = BTreeMap::new();
    for x in &c.results {
        groups
            .entry((x.op, x.algo, x.gpus.len(), x.in_place))
            .or_default()
            .push(x);
    }
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
    if !series.is_empty() {
        h.push_str(&chart(
            "busbw-curve",
            "All-reduce bus bandwidth (nccl-tests' busbw) vs size, out of place",
            "size",
            "busbw GB/s",
            Axis::Bytes,
            &series,
        ));
    }
    h.push_str(
        "<h3>At the largest size of each</h3>\n<table id=\"collectives-table\">\n<tr><th>op</th>\
         <th>algorithm</th><th>GPUs</th><th>in place</th><th>size</th><th>time µs</th>\
         <th>algbw GB/s</th><th>busbw GB/s</th><th>data</th><th>status</th><th>provenance</th></tr>\n",
    );
    for ((op, algo, _, in_place), rows) in &groups {
        let Some(x) = rows.iter().max_by_key(|x| x.bytes) else {
            continue;
        };
        let _ = writeln!(
            h,
            "<tr><td>{op}</td><td>{algo}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td>{}</tr>",
            escape(
                &x.gpus
                    .iter()
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            if *in_place { "yes" } else { "no" },
            format_bytes(x.bytes),
            num(x.time_us, 1),
            num(x.algbw_gbps, 1),
            num(x.busbw_gbps, 1),
            escape(&summary::verified_text(x.wrong)),
            x.status,
            prov_cell(&summary::result_provenance(x.source, x.reason.as_deref()))
        );
    }
    h.push_str("</table>\n</section>\n");
}

/// A scaling row's provenance: measured (framework or proxy), modeled, or projected.
fn row_provenance(p: &ScalingPoint) -> Provenance {
    if p.projected {
        Provenance::Projected
    } else if p.source.is_measured() {
        Provenance::Measured
    } else {
        Provenance::Modeled("scalescope's step-time model".to_string())
    }
}

fn scaling(h: &mut String, r: &Report) {
    h.push_str("<section id=\"scaling\">\n<h2>Scaling</h2>\n");
    let Some(s) = &r.scaling else {
        h.push_str("<p>Not run in this report.</p>\n</section>\n");
        return;
    };
    let _ = writeln!(
        h,
        "<p class=\"note\">{} · efficiency = throughput(n) ÷ (n × throughput(1)); \
         measured_framework rows are real PyTorch steps, proxy rows synthetic steps (GEMMs + NCCL \
         all-reduce), modeled rows scalescope's model (docs/SCALING.md), projected rows the model \
         beyond one node; model error = (model − measured) ÷ measured step time on measured rows \
         (cal.: the step the model is calibrated from, so no error), catalog-only error the same \
         for the model with catalog figures only</p>",
        escape(&s.source.to_string())
    );
    if let Some(w) = crate::report::compare::default_workload(&[r]) {
        let rows: Vec<&ScalingPoint> = s.run.rows.iter().filter(|p| p.workload == w).collect();
        let mut series = Vec::new();
        for mode in Mode::ALL {
            for (src, dashed) in [
                (RowSource::Framework, false),
                (RowSource::Proxy, false),
                (RowSource::Modeled, true),
            ] {
                let points: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|p| p.mode == mode && p.source == src)
                    .filter_map(|p| {
                        Some((p.n_gpus as f64, p.efficiency.filter(|e| e.is_finite())?))
                    })
                    .collect();
                if !points.is_empty() {
                    series.push(Series {
                        name: format!("{mode}, {}", src.id()),
                        points,
                        dashed,
                    });
                }
            }
        }
        if !series.is_empty() {
            h.push_str(&chart(
                "scaling-curve",
                &format!(
                    "Scaling efficiency of {w} vs GPUs (dashed: modeled; beyond the box: projected)"
                ),
                "GPUs",
                "efficiency",
                Axis::Gpus,
                &series,
            ));
        }
        let _ = writeln!(
            h,
            "<h3>{}</h3>\n<table id=\"scaling-table\">\n<tr><th>mode</th><th>GPUs</th><th>row</th>\
             <th>step ms</th><th>samples/s</th><th>speedup</th><th>efficiency</th><th>bound</th>\
             <th>model error</th><th>catalog-only error</th><th>memory GiB/GPU</th>\
             <th>fits memory</th><th>provenance</th></tr>",
            escape(&w)
        );
        for p in rows {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td>{}</td>{}</tr>",
                p.mode,
                p.n_gpus,
                p.source.id(),
                num(p.step_time_ms, 2),
                num(p.throughput, 0),
                num(p.speedup, 2),
                num(p.efficiency, 2),
                p.bound.map_or("—".to_string(), |b| b.id().to_string()),
                escape(&p.error_cell()),
                escape(&p.uncalibrated_error_cell()),
                num(p.memory_gib_per_gpu, 1),
                match p.fits {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "—",
                },
                prov_cell(&row_provenance(p))
            );
        }
        h.push_str("</table>\n");
    }
    // Every workload at the largest GPU count inside the box.
    h.push_str(
        "<h3>Every workload, largest GPU count in the box</h3>\n<table id=\"workloads-table\">\n\
         <tr><th>workload</th><th>mode</th><th>GPUs</th><th>efficiency</th><th>row</th>\
         <th>provenance</th></tr>\n",
    );
    for w in &s.run.workloads {
        for mode in Mode::ALL {
            let in_box = || {
                s.run
                    .rows
                    .iter()
                    .filter(|p| p.workload == w.name && p.mode == mode && !p.projected)
            };
            let best = in_box()
                .filter(|p| p.efficiency.is_some())
                .max_by_key(|p| (p.n_gpus, p.source.is_measured()));
            // A workload that fits at no count in the box is listed as such, with what would fit.
            let (p, efficiency) = match best {
                Some(p) => (p, num(p.efficiency, 2)),
                None => match in_box()
                    .filter(|p| p.fits == Some(false))
                    .max_by_key(|p| (p.n_gpus, p.source.is_measured()))
                {
                    // The basis says it: "does not fit: …", "out of GPU memory (measured): …".
                    Some(p) => (p, escape(&p.basis)),
                    None => continue,
                },
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{mode}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td>{}</td>{}</tr>",
                escape(&w.name),
                p.n_gpus,
                efficiency,
                p.source.id(),
                prov_cell(&row_provenance(p))
            );
        }
    }
    h.push_str("</table>\n");
    for n in &s.run.notes {
        let _ = writeln!(h, "<p class=\"note\">{}</p>", escape(n));
    }
    h.push_str("</section>\n");
}

fn health_checks(h: &mut String, r: &Report) {
    let Some(hr) = &r.health else {
        return;
    };
    h.push_str(
        "<section id=\"health\">\n<h2>Health checks</h2>\n<table id=\"health-table\">\n<tr>\
         <th>verdict</th><th>subject</th><th>check</th><th>finding</th><th>figure</th>\
         <th>expected</th><th>%</th><th>cause and fix</th><th>provenance</th></tr>\n",
    );
    for c in &hr.checks {
        let unit = c.unit.as_deref().unwrap_or("");
        let class = format!("v-{}", c.verdict.word().to_ascii_lowercase());
        let cause = match (&c.cause, &c.fix) {
            (Some(a), Some(b)) => format!("likely: {a} — do: {b}"),
            (Some(a), None) => format!("likely: {a}"),
            (None, Some(b)) => format!("do: {b}"),
            (None, None) => String::new(),
        };
        let prov = match c.source {
            Source::Measured => Provenance::Measured,
            Source::Modeled => Provenance::Modeled(c.basis.clone().unwrap_or_default()),
        };
        let _ = writeln!(
            h,
            "<tr><td><span class=\"verdict {class}\">{}</span></td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"note\">{}</td>{}</tr>",
            escape(&c.verdict_text()),
            escape(&c.subject),
            escape(c.check.id()),
            escape(&c.detail),
            escape(&summary::fmt_value(c.figure, unit)),
            escape(&summary::fmt_value(c.expected, unit)),
            num(c.percent, 0),
            escape(&cause),
            prov_cell(&prov)
        );
    }
    h.push_str("</table>\n</section>\n");
}

fn warnings(h: &mut String, r: &Report) {
    h.push_str("<section id=\"warnings\">\n<h2>Warnings</h2>\n");
    if r.warnings.is_empty() {
        h.push_str("<p>None.</p>\n</section>\n");
        return;
    }
    let _ = writeln!(
        h,
        "<p>{} warning(s); the worst:</p>\n<ul>",
        r.warnings.len()
    );
    for l in summary::warnings_lines(r, 6) {
        let _ = writeln!(h, "<li>{}</li>", escape(&l));
    }
    h.push_str("</ul>\n<details><summary>Every warning</summary>\n<ul>\n");
    for w in &r.warnings {
        let _ = writeln!(h, "<li>{}</li>", escape(&w.to_string()));
    }
    h.push_str("</ul></details>\n</section>\n");
}

/// One line of a chart.
struct Series {
    name: String,
    /// (x, y), x > 0.
    points: Vec<(f64, f64)>,
    /// Modeled lines are dashed.
    dashed: bool,
}

/// What the x axis counts; both are drawn in log2.
#[derive(Clone, Copy)]
enum Axis {
    Bytes,
    Gpus,
}

const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

/// A "nice" step for about `target` ticks over `span`.
fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// An inline SVG line chart with log2 x, linear y from 0, a legend, in a `<figure>`. Empty when
/// no series has a finite point.
fn chart(
    id: &str,
    caption: &str,
    x_label: &str,
    y_label: &str,
    axis: Axis,
    series: &[Series],
) -> String {
    let pts: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0)
        .collect();
    if pts.is_empty() {
        return String::new();
    }
    let (w, hgt) = (860.0_f64, 320.0_f64);
    let (ml, mr, mt, mb) = (64.0, 220.0, 14.0, 46.0);
    let (pw, ph) = (w - ml - mr, hgt - mt - mb);
    let lx = |x: f64| x.log2();
    let x0 = pts.iter().map(|p| lx(p.0)).fold(f64::INFINITY, f64::min);
    let mut x1 = pts
        .iter()
        .map(|p| lx(p.0))
        .fold(f64::NEG_INFINITY, f64::max);
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    let ymax_data = pts.iter().map(|p| p.1).fold(0.0_f64, f64::max);
    let ystep = nice_step(if ymax_data > 0.0 { ymax_data } else { 1.0 }, 5.0);
    let ymax = ((ymax_data / ystep).ceil() * ystep).max(ystep);
    let sx = |x: f64| ml + (lx(x) - x0) / (x1 - x0) * pw;
    let sy = |y: f64| mt + ph - (y / ymax) * ph;
    let mut s = String::new();
    let _ = write!(
        s,
        "<figure class=\"chart\" id=\"{id}\">\n<svg \
         viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"{}\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{hgt}\" fill=\"#ffffff\"/>\n",
        escape(caption)
    );
    // Grid and y ticks.
    let mut y = 0.0;
    while y <= ymax + ystep * 0.01 {
        let py = sy(y);
        let _ = writeln!(
            s,
            "<line x1=\"{ml:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" stroke=\"#dde\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            ml + pw,
            ml - 6.0,
            py + 4.0,
            if ystep < 1.0 {
                format!("{y:.2}")
            } else {
                format!("{y:.0}")
            }
        );
        y += ystep;
    }
    // X ticks: powers of 2 (GPUs) or of 1024 with a few between (bytes).
    let (k0, k1) = (x0.floor() as i64, x1.ceil() as i64);
    let every = match axis {
        Axis::Gpus => 1,
        Axis::Bytes => {
            if k1 - k0 > 12 {
                10
            } else {
                2
            }
        }
    };
    for k in k0..=k1 {
        if k.rem_euclid(every) != 0 || (k as f64) < x0 - 1e-9 || (k as f64) > x1 + 1e-9 {
            continue;
        }
        let v = 2f64.powi(k as i32);
        let px = sx(v);
        let label = match axis {
            Axis::Gpus => format!("{v:.0}"),
            Axis::Bytes => format_bytes(v as u64),
        };
        let _ = writeln!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{mt:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#eef\"/>\
             <text x=\"{px:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            mt + ph,
            mt + ph + 16.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        s,
        "<rect x=\"{ml}\" y=\"{mt}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#889\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{} (log scale)</text>\
         <text x=\"14\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text>",
        ml + pw / 2.0,
        hgt - 8.0,
        escape(x_label),
        mt + ph / 2.0,
        mt + ph / 2.0,
        escape(y_label)
    );
    for (i, se) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let p: Vec<(f64, f64)> = se
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0)
            .collect();
        if p.is_empty() {
            continue;
        }
        let d: Vec<String> = p
            .iter()
            .enumerate()
            .map(|(j, (x, y))| {
                format!(
                    "{}{:.1},{:.1}",
                    if j == 0 { "M" } else { "L" },
                    sx(*x),
                    sy(*y)
                )
            })
            .collect();
        let dash = if se.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "<path d=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            d.join(" ")
        );
        for (x, y) in &p {
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\"/>",
                sx(*x),
                sy(*y)
            );
        }
        s.push('\n');
        let ly = mt + 8.0 + i as f64 * 17.0;
        let lx0 = ml + pw + 14.0;
        let _ = writeln!(
            s,
            "<line x1=\"{lx0:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            lx0 + 22.0,
            lx0 + 28.0,
            ly + 4.0,
            escape(&se.name)
        );
    }
    let _ = write!(
        s,
        "</svg>\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_quotes_and_control_characters() {
        assert_eq!(
            escape("<b a=\"x\" b='y'>&\u{1b}[31m"),
            "&lt;b a=&quot;x&quot; b=&#39;y&#39;&gt;&amp;\\u{1b}[31m"
        );
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
        let html = report(&r);
        assert!(!html.contains("<script"), "a report's string became markup");
        assert!(html.contains("&lt;script&gt;"));
        assert!(!html.contains('\u{7}'));
    }

    #[test]
    fn an_empty_report_says_what_was_not_run() {
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let r = Report::new(Default::default(), topo);
        let html = report(&r);
        assert!(html.contains("No health check"));
        assert!(html.contains("Not run in this report"));
        // Unknown figures are dashes, not zeros.
        assert!(html.contains("<b>—</b>"));
        assert!(!html.contains("<svg"), "no data, no chart");
    }

    #[test]
    fn charts_ignore_points_that_cannot_be_drawn() {
        let s = Series {
            name: "x".into(),
            points: vec![(0.0, 1.0), (f64::NAN, 2.0), (4.0, f64::INFINITY)],
            dashed: false,
        };
        assert_eq!(chart("c", "c", "x", "y", Axis::Bytes, &[s]), "");
        let s = Series {
            name: "x".into(),
            points: vec![(4096.0, 1.0)],
            dashed: true,
        };
        let svg = chart("c", "c", "x", "y", Axis::Bytes, &[s]);
        assert!(svg.contains("<circle") && svg.contains("stroke-dasharray"));
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
        let html = report(&r);
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
    fn a_workload_that_fits_nowhere_is_listed_as_such() {
        // Llama-2-7B with plain DDP fits no 80 GB GPU: the per-workload table says so instead of
        // leaving the workload out.
        let topo = crate::topology::catalog::load("dgx-h100").unwrap();
        let mut r = Report::new(Default::default(), topo.clone());
        let w = crate::scaling::workload::resolve("llama2-7b-ddp").unwrap();
        let run = crate::scaling::run::run_modeled(&topo, &[], &[w], &Mode::ALL, 16);
        r.scaling = Some(crate::report::ScalingSection {
            source: crate::model::Source::Modeled,
            run,
        });
        let html = report(&r);
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
        }
    }
}
