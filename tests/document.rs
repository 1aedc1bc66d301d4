//! The report document typeset on the CPU (typst; no GL, Vulkan or display): every page and the
//! PDF of every catalog machine (a modeled `--bench`, run in-process through the job API) and
//! of both bundled reports; what the pages show (light, the machine named first, no empty
//! bottom, no run controls); and `--bench` writing report.png and report.pdf with no graphics
//! stack at all. A burn-in (soak) is its own page, `soak.png`, and a section of the report:
//! verdict, series over time with gaps where a reading is missing, events marked and listed.
//! None of this needs the `gui` feature.

mod common;

use common::modeled;
use scalescope::document::timechart::EVENT_RED;
use scalescope::document::{self, Block, Document, Figure, Page, build, typeset};
use scalescope::report::{self, Report, summary};

/// Every catalog machine, modeled, both bundled reports, and a report with a soak.
fn reports() -> Vec<(String, Report)> {
    let mut out: Vec<(String, Report)> = report::bundled::reports()
        .into_iter()
        .map(|(n, r)| (n.trim_end_matches(".json").to_string(), r.unwrap()))
        .collect();
    assert!(out.len() >= 2, "both bundled reports");
    for e in scalescope::topology::catalog::entries() {
        out.push((e.id.clone(), modeled(&e.id)));
    }
    out.push(("soak".into(), common::soak::report()));
    out
}

/// A PNG as (width, height, RGBA rows).
fn decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut d = png::Decoder::new(std::io::Cursor::new(png));
    d.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = d.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    assert_eq!(
        info.color_type,
        png::ColorType::Rgba,
        "RGBA after expansion"
    );
    (info.width, info.height, buf)
}

/// The checks every PNG page passes: 1,400 px wide, light, and no large empty area at the
/// bottom (the page is as tall as its content).
fn check_png(name: &str, png: &[u8]) {
    let (w, h, px) = decode(png);
    assert_eq!(w, 1400, "{name}: width");
    let at = |x: u32, y: u32| &px[((y * w + x) * 4) as usize..((y * w + x) * 4 + 3) as usize];
    assert!(
        at(2, 2).iter().all(|c| *c > 220),
        "{name}: the corner is not light"
    );
    let mean: f64 =
        px.chunks(4).map(|p| f64::from(p[0])).sum::<f64>() / f64::from(w) / f64::from(h);
    assert!(mean > 200.0, "{name}: mean red {mean}");
    let bg = at(2, 2).to_vec();
    let inked = (h * 85 / 100..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| at(x, y) != bg.as_slice())
        .count();
    assert!(inked > 200, "{name}: the bottom of the page is empty");
}

/// Every text of a document: headings, titles, paragraphs, list items, column heads, cells.
fn texts(d: &Document) -> Vec<String> {
    fn walk(b: &Block, out: &mut Vec<String>) {
        match b {
            Block::Title { text, .. } | Block::Subheading { text } => out.push(text.clone()),
            Block::Paragraph(p) => out.push(p.spans.iter().map(|s| s.text.as_str()).collect()),
            Block::List { items, .. } => out.extend(
                items
                    .iter()
                    .map(|p| p.spans.iter().map(|s| s.text.as_str()).collect()),
            ),
            Block::Verdict { word, counts, .. } => out.extend([word.clone(), counts.clone()]),
            Block::Table(t) => {
                out.extend(t.columns.iter().map(|c| c.head.clone()));
                out.extend(t.rows.iter().flatten().map(|c| c.text.clone()));
            }
            Block::Matrix(m) => out.extend(m.columns.iter().cloned()),
            Block::Figure(f) => out.extend(f.caption.clone()),
            Block::Columns { columns } => columns.iter().flatten().for_each(|b| walk(b, out)),
            Block::Details { summary, blocks } => {
                out.push(summary.clone());
                blocks.iter().for_each(|b| walk(b, out));
            }
        }
    }
    let mut out = Vec::new();
    for s in &d.sections {
        out.extend(s.heading.clone());
        s.blocks.iter().for_each(|b| walk(b, &mut out));
    }
    out
}

/// Every page of every catalog machine and bundled report typesets (a template that does not
/// compile against some document is a bug found here), is a light page as tall as its content,
/// and the whole report makes a PDF.
#[test]
fn every_page_and_the_pdf_typeset_for_every_machine() {
    for (name, r) in reports() {
        for p in Page::ALL {
            let Some(png) = document::page_png(&r, p) else {
                assert!(
                    !matches!(p, Page::Report | Page::Topology),
                    "{name}: no {p:?} page"
                );
                continue;
            };
            let png = png.unwrap_or_else(|e| panic!("{name} {p:?}: {e}"));
            check_png(&format!("{name} {}", p.file_name()), &png);
        }
        let pdf = document::report_pdf(&r).unwrap_or_else(|e| panic!("{name} PDF: {e}"));
        assert!(
            pdf.starts_with(b"%PDF") && pdf.len() > 10_000,
            "{name}: PDF"
        );
    }
}

/// report.png opens with what the machine is and where it ran, says why there is no verdict,
/// and counts the warnings.
#[test]
fn report_png_is_light_and_names_the_machine_first() {
    let (_, r) = report::bundled::reports().remove(0);
    let r = r.unwrap();
    let d = build::page(&r, Page::Report).unwrap();
    let first = d.sections[0].blocks.first().unwrap();
    assert!(
        matches!(first, Block::Title { text, .. } if *text == summary::machine_name(&r)),
        "{first:?}"
    );
    assert_eq!(summary::machine_name(&r), "2× H200 SXM");
    let all = texts(&d);
    assert!(
        all.iter().any(|t| t.starts_with("run on host vm")),
        "{all:?}"
    );
    assert!(
        all.iter()
            .any(|t| t.contains("No health check in this report")),
        "{all:?}"
    );
    assert!(all.contains(&format!("Warnings: {}", r.warnings.len())));
    check_png("report.png", &typeset::png(&d).unwrap());
}

/// The documents are pages, not the app: none of the views' run controls appears on them.
#[test]
fn document_pages_show_no_run_controls() {
    const CONTROLS: [&str; 9] = [
        "Run",
        "Cancel",
        "Stop",
        "Sizes",
        "Samples",
        "Copies/sample",
        "Run settings",
        "Show",
        "Model",
    ];
    let mut rs: Vec<Report> = report::bundled::reports()
        .into_iter()
        .map(|(_, r)| r.unwrap())
        .collect();
    rs.push(modeled("h200-2x-sxm"));
    for r in &rs {
        for p in Page::ALL {
            let Some(d) = build::page(r, p) else { continue };
            for t in texts(&d) {
                assert!(
                    !CONTROLS.contains(&t.trim()) && !t.contains('▶'),
                    "{} {p:?} shows a control: {t:?}",
                    r.name()
                );
            }
        }
    }
}

/// `--bench` writes report.png, the view pages and report.pdf with no graphics stack: wgpu is
/// given no backend at all (an empty `WGPU_BACKEND`), so anything drawn through the GPU path
/// would fail. The same code runs in the headless build (`--no-default-features`), which has no
/// GUI libraries to fall back on.
#[test]
fn bench_writes_png_and_pdf_without_any_graphics_stack() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scalescope"))
        .args(["--bench", "--modeled", "--catalog", "dgx-h100", "--out"])
        .arg(dir.path())
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("WGPU_BACKEND", "")
        .env("DISPLAY", "")
        .env("WAYLAND_DISPLAY", "")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not written"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("report.pdf"), "{stdout}");
    for f in [
        "report.png",
        "topology.png",
        "bandwidth.png",
        "collectives.png",
        "scaling.png",
    ] {
        let png = std::fs::read(dir.path().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        check_png(f, &png);
    }
    let pdf = std::fs::read(dir.path().join("report.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF"), "report.pdf");
    // The PDF is the report the JSON holds, A4 pages flowing.
    let r = report::load(&dir.path().join("report.json")).unwrap();
    let pages = typeset::pdf_pages(&build::report(&r)).unwrap();
    assert!(pages > 1, "{pages} page(s)");
}

/// A report whose measured copy tests carry energy shows them in "Energy and cost": the mean
/// power, the idle power and joules per GB (W ÷ GB/s), even with no scaling results; one
/// without energy figures shows no such table.
#[test]
fn measured_tests_with_energy_are_in_the_energy_section() {
    use scalescope::model::energy::{EnergyBasis, TestEnergy};
    let mut r = modeled("dgx-h100");
    r.scaling = None;
    let before = texts(&build::report(&r));
    assert!(!before.iter().any(|t| t == "J/GB"), "no energy table yet");
    let bw = r.bandwidth.as_mut().expect("bandwidth results");
    let row = bw.results.first_mut().unwrap();
    row.median_gbps = Some(50.0);
    row.energy = Some(TestEnergy {
        joules: 260.0,
        mean_power_w: 130.0,
        idle_power_w: Some(99.0),
        seconds: 2.0,
        measured_s: 1.9,
        basis: EnergyBasis::Counter,
        gpus: vec![0],
        window_unix_s: [1.0, 3.0],
    });
    let after = texts(&build::report(&r));
    for want in ["J/GB", "2.600", "130", "99"] {
        assert!(after.iter().any(|t| t == want), "{want} missing: {after:?}");
    }
}

/// Every figure of a document.
fn figures(d: &Document) -> Vec<&Figure> {
    fn walk<'a>(b: &'a Block, out: &mut Vec<&'a Figure>) {
        match b {
            Block::Figure(f) => out.push(f),
            Block::Columns { columns } => columns.iter().flatten().for_each(|b| walk(b, out)),
            Block::Details { blocks, .. } => blocks.iter().for_each(|b| walk(b, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for s in &d.sections {
        s.blocks.iter().for_each(|b| walk(b, &mut out));
    }
    out
}

/// The figure `id` of a document.
fn figure<'a>(d: &'a Document, id: &str) -> &'a Figure {
    figures(d)
        .into_iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no figure {id}"))
}

/// Each `<path d="…">` of an SVG as its runs (one per `M`) of (x, y) points.
fn paths(svg: &str) -> Vec<Vec<Vec<(f64, f64)>>> {
    svg.split("<path d=\"")
        .skip(1)
        .map(|p| {
            p[..p.find('"').unwrap()]
                .split('M')
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(|run| {
                    run.split('L')
                        .map(|xy| {
                            let (x, y) = xy.trim().split_once(',').unwrap();
                            (x.parse().unwrap(), y.parse().unwrap())
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

/// The x of every red event line of an SVG.
fn event_lines(svg: &str) -> Vec<f64> {
    svg.split("<line x1=\"")
        .skip(1)
        .filter(|l| l[..l.find("/>").unwrap()].contains(EVENT_RED))
        .map(|l| l[..l.find('"').unwrap()].parse().unwrap())
        .collect()
}

/// The y of the y axis' tick labelled `label`, if there is one.
fn y_tick(svg: &str, label: &str) -> Option<f64> {
    let end = format!("text-anchor=\"end\">{label}</text>");
    let at = svg.find(&end)?;
    let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
    let y = &tag[tag.find(" y=\"").unwrap() + 4..];
    // Tick labels sit 4 units below their grid line.
    Some(y[..y.find('"').unwrap()].parse::<f64>().unwrap() - 4.0)
}

/// A report with `soak` and no health check (the document alone is under test).
fn bare(soak: scalescope::model::SoakSection) -> Report {
    let mut r = common::soak::report_with(soak);
    r.health = None;
    r
}

/// A soak is its own page, soak.png, listed by render_all, with the summary, the soak's checks,
/// a chart per series and the events; a report without a soak has no such page or section.
#[test]
fn a_soak_is_its_own_page_and_a_section_of_the_report() {
    let r = common::soak::report();
    let d = build::page(&r, Page::Soak).expect("a soak page");
    let all = texts(&d);
    for want in [
        "Burn-in (soak)",
        "soak_correctness",
        "soak_xid",
        "GEMM result differs from GPU 0's product: 3 elements, first at (17, 4093)",
        "Xid 79: GPU has fallen off the bus",
        "wrong result",
        "2:15",
        "2:20",
        "Events",
    ] {
        assert!(all.iter().any(|t| t == want), "{want:?} missing: {all:?}");
    }
    assert!(
        all.iter().any(|t| t.starts_with(
            "Ran 5 min 00 s of 5 min 00 s asked · loads: gemm, memory, pcie · GPUs 0, 1"
        )),
        "{all:?}"
    );
    // GPU 1 fails correctness, GPU 0 passes: the checks come with their subject.
    let checks = match d.sections[1]
        .blocks
        .iter()
        .find(|b| matches!(b, Block::Table(t) if t.id.as_deref() == Some("soak-checks-table")))
    {
        Some(Block::Table(t)) => t,
        _ => panic!("no soak checks table"),
    };
    let row = |subject: &str, check: &str| {
        checks
            .rows
            .iter()
            .find(|r| r[1].text == subject && r[2].text == check)
            .map(|r| r[0].text.clone())
    };
    assert_eq!(row("GPU 1", "soak_correctness").as_deref(), Some("FAIL"));
    assert_eq!(row("GPU 0", "soak_correctness").as_deref(), Some("PASS"));
    let ids: Vec<&str> = figures(&d).iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "soak-gemm",
            "soak-memory",
            "soak-pcie",
            "soak-sm-clock",
            "soak-power",
            "soak-temperature"
        ]
    );
    // Every chart marks both events, labelled.
    for f in figures(&d) {
        assert_eq!(event_lines(&f.svg).len(), 2, "{}", f.id);
        assert!(f.svg.contains(">wrong result · GPU 1</text>"), "{}", f.id);
        assert!(f.svg.contains(">Xid 79 · GPU 1</text>"), "{}", f.id);
    }
    let files: Vec<&str> = document::render_all(&r).iter().map(|f| f.0).collect();
    assert!(files.contains(&"soak.png"), "{files:?}");
    check_png(
        "soak.png",
        &document::page_png(&r, Page::Soak).unwrap().unwrap(),
    );

    let mut without = r.clone();
    without.soak = None;
    assert!(build::page(&without, Page::Soak).is_none());
    let files: Vec<&str> = document::render_all(&without).iter().map(|f| f.0).collect();
    assert!(!files.contains(&"soak.png"), "{files:?}");
    assert!(
        !build::report(&without)
            .sections
            .iter()
            .any(|s| s.id == "soak"),
        "no soak, no section"
    );
}

/// GPU 1's dip from 120 to 150 s shows on its GEMM line and GPU 0's line stays flat; the red
/// event lines (135 and 140 s) fall inside the dip on the same axis.
#[test]
fn the_gemm_dip_shows_on_its_gpu_with_the_events_inside_it() {
    let d = build::page(&common::soak::report(), Page::Soak).unwrap();
    let svg = &figure(&d, "soak-gemm").svg;
    let lines = paths(svg);
    assert_eq!(lines.len(), 2, "one line per GPU");
    let ys = |runs: &Vec<Vec<(f64, f64)>>| -> (f64, f64) {
        runs.iter()
            .flatten()
            .fold((f64::INFINITY, 0.0_f64), |(a, b), p| {
                (a.min(p.1), b.max(p.1))
            })
    };
    let (top0, bottom0) = ys(&lines[0]);
    let (top1, bottom1) = ys(&lines[1]);
    assert!(bottom0 - top0 < 5.0, "GPU 0 is steady: {top0}..{bottom0}");
    assert!(bottom1 - top1 > 50.0, "GPU 1 dips: {top1}..{bottom1}");
    // Where GPU 1 is low (below half-way on screen), in x.
    let mid = (top1 + bottom1) / 2.0;
    let low: Vec<f64> = lines[1]
        .iter()
        .flatten()
        .filter(|p| p.1 > mid)
        .map(|p| p.0)
        .collect();
    let (from, to) = (
        low.iter().copied().fold(f64::INFINITY, f64::min),
        low.iter().copied().fold(0.0_f64, f64::max),
    );
    let events = event_lines(svg);
    assert!(
        events.iter().all(|x| *x > from && *x < to),
        "events {events:?} outside the dip {from}..{to}"
    );
    // The gemm line ends where the gemm phase ends: the memory and pcie phases are gaps in it.
    let last = lines[0]
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(0.0_f64, f64::max);
    let power = paths(&figure(&d, "soak-power").svg);
    let power_last = power[0]
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(0.0_f64, f64::max);
    assert!(
        last < power_last * 0.7,
        "gemm line runs to {last} of {power_last}"
    );
}

/// report.html and report.pdf hold the section: its heading, the charts inline, the checks and
/// the events table with both events.
#[test]
fn report_html_and_pdf_hold_the_soak() {
    let r = common::soak::report();
    let html = document::report_html(&r);
    let at = html
        .find("<section id=\"soak\">")
        .expect("the soak section");
    let section = &html[at..at + html[at..].find("</section>").unwrap()];
    assert!(section.contains("<h2>Burn-in (soak)</h2>"));
    for id in [
        "soak-checks-table",
        "soak-gemm",
        "soak-power",
        "soak-gpus-table",
        "soak-events-table",
    ] {
        assert!(section.contains(&format!("id=\"{id}\"")), "no #{id}");
    }
    let events = &section[section.find("id=\"soak-events-table\"").unwrap()..];
    assert!(
        events.contains("<td class=\"n\">2:15</td><td>GPU 1</td>"),
        "{events}"
    );
    assert!(events.contains("Xid 79: GPU has fallen off the bus"));
    assert!(
        section.matches(EVENT_RED).count() >= 12,
        "markers in every chart"
    );

    let mut without = r.clone();
    without.soak = None;
    let pages = typeset::pdf_pages(&build::report(&r)).unwrap();
    let fewer = typeset::pdf_pages(&build::report(&without)).unwrap();
    assert!(
        pages > fewer,
        "the soak adds pages to the PDF: {pages} vs {fewer}"
    );
    let pdf = document::report_pdf(&r).unwrap();
    assert!(pdf.starts_with(b"%PDF"));
}

/// A GPU whose power was not read for a stretch has a gap in its power line, never a drop to
/// 0; a GPU never read has no line and a line names it; with no power reading at all the chart
/// is left out and a line says so, and the pages still render.
#[test]
fn missing_power_is_a_gap_never_a_zero() {
    let mut soak = common::soak::section();
    for x in soak.samples.iter_mut() {
        if x.gpu == 1 && (100.0..=200.0).contains(&x.t_s) {
            x.power_w = None;
        }
    }
    let r = bare(soak.clone());
    let d = build::page(&r, Page::Soak).unwrap();
    let svg = &figure(&d, "soak-power").svg;
    let lines = paths(svg);
    assert_eq!(lines[0].len(), 1, "GPU 0's line is whole");
    assert_eq!(lines[1].len(), 2, "GPU 1's line breaks once");
    if let Some(zero) = y_tick(svg, "0") {
        for p in lines.iter().flatten().flatten() {
            assert!((p.1 - zero).abs() > 1.0, "a point drawn at 0: {p:?}");
        }
    }
    check_png(
        "soak.png",
        &document::page_png(&r, Page::Soak).unwrap().unwrap(),
    );

    // No power from GPU 1 at all: GPU 0's line alone, and a line naming GPU 1.
    for x in soak.samples.iter_mut().filter(|x| x.gpu == 1) {
        x.power_w = None;
    }
    let d = build::page(&bare(soak.clone()), Page::Soak).unwrap();
    assert_eq!(paths(&figure(&d, "soak-power").svg).len(), 1);
    assert!(
        texts(&d)
            .iter()
            .any(|t| t == "Power: no reading from GPU 1."),
        "{:?}",
        texts(&d)
    );

    for x in soak.samples.iter_mut() {
        x.power_w = None;
    }
    let r = bare(soak);
    let d = build::page(&r, Page::Soak).unwrap();
    assert!(!figures(&d).iter().any(|f| f.id == "soak-power"));
    assert!(
        texts(&d)
            .iter()
            .any(|t| t == "Power: no reading from any GPU."),
        "{:?}",
        texts(&d)
    );
    let html = document::report_html(&r);
    assert!(!html.contains("id=\"soak-power\""));
    check_png(
        "soak.png",
        &document::page_png(&r, Page::Soak).unwrap().unwrap(),
    );
    document::report_pdf(&r).unwrap();
}

/// Odd soaks render without a panic: no samples, one sample, readings all unknown, a replay
/// stopped early, and hundreds of events (the table shows 50 and counts the rest).
#[test]
fn odd_soaks_render_without_panicking() {
    use scalescope::model::{SoakEvent, SoakEventKind, SoakLoad, SoakSample, SoakSection};
    let base = common::soak::section();
    let one = SoakSample {
        t_s: 1.0,
        gpu: 0,
        phase: Some(SoakLoad::Gemm),
        rate: Some(600.0),
        ..Default::default()
    };
    let unknown = SoakSample {
        t_s: 1.0,
        gpu: 3,
        phase: Some(SoakLoad::Gemm),
        ..Default::default()
    };
    let many_events: Vec<SoakEvent> = (0..200)
        .map(|i| SoakEvent {
            t_s: f64::from(i),
            gpu: Some(0),
            kind: SoakEventKind::Xid { xid: 13 },
            text: format!("Xid 13 number {i}"),
        })
        .collect();
    let cases: Vec<(&str, SoakSection)> = vec![
        ("empty", SoakSection::default()),
        (
            "one sample",
            SoakSection {
                samples: vec![one],
                ..Default::default()
            },
        ),
        (
            "all unknown",
            SoakSection {
                samples: vec![
                    unknown.clone(),
                    SoakSample {
                        t_s: 2.0,
                        ..unknown
                    },
                ],
                loads: vec![SoakLoad::Gemm, SoakLoad::Nccl],
                ..Default::default()
            },
        ),
        (
            "replay stopped early",
            SoakSection {
                replay_of: Some("soak.csv".into()),
                duration_s: 1800.0,
                elapsed_s: 300.0,
                finished: false,
                ..base.clone()
            },
        ),
        (
            "many events",
            SoakSection {
                events: base.events.iter().cloned().chain(many_events).collect(),
                ..base
            },
        ),
    ];
    for (name, soak) in cases {
        let r = bare(soak);
        let d = build::page(&r, Page::Soak).unwrap_or_else(|| panic!("{name}: no page"));
        let all = texts(&d);
        document::page_png(&r, Page::Soak)
            .unwrap()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        document::report_pdf(&r).unwrap_or_else(|e| panic!("{name} PDF: {e}"));
        let html = document::report_html(&r);
        assert!(html.contains("<section id=\"soak\">"), "{name}");
        assert!(
            all.iter().any(|t| t.starts_with("No verdict on the soak")),
            "{name}: {all:?}"
        );
        match name {
            "empty" => assert!(all.iter().any(|t| t == "No samples were recorded.")),
            "all unknown" => {
                assert!(figures(&d).is_empty(), "{name}: a chart of nothing");
                assert!(
                    all.iter()
                        .any(|t| t == "GEMM throughput: no reading from any GPU.")
                );
            }
            "replay stopped early" => {
                assert!(
                    all.iter().any(|t| t.contains("replay of soak.csv")),
                    "{all:?}"
                );
                assert!(
                    all.iter().any(|t| t.starts_with("Stopped early")),
                    "{all:?}"
                );
                assert!(
                    all.iter().any(|t| t.contains("of 30 min 00 s asked")),
                    "{all:?}"
                );
            }
            "many events" => {
                // The wrong result, then the earliest 49 Xid events (Xid 13 from 0 s on).
                let rows = html.matches("Xid 13 number").count();
                assert_eq!(rows, build::EVENTS_MAX_ROWS - 1, "{name}");
                assert!(
                    all.iter().any(|t| t
                        .starts_with(&format!("{} of 205 events shown", build::EVENTS_MAX_ROWS))),
                    "{all:?}"
                );
                // The wrong result is among those shown, though later than 50 Xid events.
                assert!(all.iter().any(|t| t == "wrong result"), "{name}");
                assert!(
                    !all.iter().any(|t| t == "phase"),
                    "{name}: phases before Xids"
                );
            }
            _ => {}
        }
    }
}

/// The page objects of a PDF counted from its bytes: typst writes each page dictionary
/// uncompressed as `/Type/Page` (the page tree is `/Type/Pages`).
fn pdf_page_objects(pdf: &[u8]) -> usize {
    let needle = b"/Type/Page";
    pdf.windows(needle.len() + 1)
        .filter(|w| &w[..needle.len()] == needle && w[needle.len()] != b's')
        .count()
}

/// The modeled DGX B200's report.pdf stays short: its 200-odd modeled checks that pass (a
/// model judged against itself, "741.6, expected 741.6, 100 %") are counted by check, not
/// listed over twenty pages; and poppler reads the file without a "Syntax Error" (no
/// `/Suspects false` in the catalog's MarkInfo, which it misreads).
#[test]
fn the_modeled_dgx_b200_pdf_counts_its_modeled_passes_in_a_dozen_pages() {
    use scalescope::document::Block;
    let r = modeled("dgx-b200");
    let hr = r
        .health
        .as_ref()
        .expect("a modeled --bench has a health check");
    assert!(hr.checks.len() > 100, "{} checks", hr.checks.len());
    let pdf = document::report_pdf(&r).unwrap();
    let pages = pdf_page_objects(&pdf);
    assert_eq!(pages, typeset::pdf_pages(&build::report(&r)).unwrap());
    assert!((2..=12).contains(&pages), "{pages} pages");
    assert!(
        pdf.windows(b"/MarkInfo".len()).any(|w| w == b"/MarkInfo"),
        "still tagged"
    );
    assert!(
        !pdf.windows(b"/Suspects false".len())
            .any(|w| w == b"/Suspects false"),
        "poppler misreads /Suspects false"
    );
    // The health section counts them: one row per check, the counts adding up to every check.
    let d = build::report(&r);
    let health = d.sections.iter().find(|s| s.id == "health").unwrap();
    let counted: usize = health
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) if t.id.as_deref() == Some("health-modeled-passes") => Some(t),
            _ => None,
        })
        .flat_map(|t| &t.rows)
        .map(|row| row[1].text.parse::<usize>().unwrap())
        .sum();
    assert_eq!(counted, hr.checks.len(), "every check passes, modeled");
    assert!(
        !health
            .blocks
            .iter()
            .any(|b| matches!(b, Block::Table(t) if t.id.as_deref() == Some("health-table"))),
        "no table of self-judged passes"
    );
}

/// A modeled check that does not pass is still listed with its cause: the counted rows are
/// only the modeled passes.
#[test]
fn a_modeled_check_that_fails_is_listed_beside_the_counted_passes() {
    use scalescope::document::Block;
    use scalescope::health::Verdict;
    let mut r = modeled("dgx-h100");
    let hr = r.health.as_mut().unwrap();
    hr.checks[0].verdict = Verdict::Fail;
    let subject = hr.checks[0].subject.clone();
    let d = build::report(&r);
    let health = d.sections.iter().find(|s| s.id == "health").unwrap();
    let listed: Vec<_> = health
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Table(t) if t.id.as_deref() == Some("health-table") => Some(t),
            _ => None,
        })
        .flat_map(|t| &t.rows)
        .collect();
    assert_eq!(listed.len(), 1, "only the failing check is listed");
    assert_eq!(listed[0][1].text, subject);
}

/// A rack's GPU × GPU matrices (72 × 72 cells of one colour, no figures) are summarised by
/// figure on report.png and topology.png: a row per distinct figure with its pairs, which
/// together are every ordered pair.
#[test]
fn a_rack_of_72_shows_its_matrices_summarised_by_figure() {
    use scalescope::document::Block;
    let r = modeled("gb200-nvl72");
    let n = r.topology.gpus.len();
    assert_eq!(n, 72);
    for page in [Page::Report, Page::Topology] {
        let d = build::page(&r, page).unwrap();
        let blocks: Vec<&Block> = d.sections.iter().flat_map(|s| &s.blocks).collect();
        assert!(
            !blocks.iter().any(
                |b| matches!(b, Block::Matrix(m) if m.columns.len() > build::DENSE_MATRIX_GPUS)
            ),
            "{page:?}: a {n}-column matrix"
        );
        let id = match page {
            Page::Report => "p2p-bandwidth-matrix",
            _ => "line-rate-matrix",
        };
        let t = blocks
            .iter()
            .find_map(|b| match b {
                Block::Table(t) if t.id.as_deref() == Some(id) => Some(t),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{page:?}: no {id} summary"));
        let pairs: usize = t
            .rows
            .iter()
            .map(|row| {
                let (k, of) = row[1].text.split_once(" of ").unwrap();
                assert_eq!(of, (n * (n - 1)).to_string());
                assert!(row[0].text.ends_with("GB/s"), "{}", row[0].text);
                k.parse::<usize>().unwrap()
            })
            .sum();
        assert_eq!(pairs, n * (n - 1), "{page:?}");
    }
}
