//! The report document typeset on the CPU (typst; no GL, Vulkan or display): every page and the
//! PDF of every catalog machine (a modeled `--bench`, run in-process through the job API) and
//! of both bundled reports; what the pages show (light, the machine named first, no empty
//! bottom, no run controls); and `--bench` writing report.png and report.pdf with no graphics
//! stack at all. None of this needs the `gui` feature.

mod common;

use common::modeled;
use scalescope::document::{self, Block, Document, Page, build, typeset};
use scalescope::report::{self, Report, summary};

/// Every catalog machine, modeled, and both bundled reports.
fn reports() -> Vec<(String, Report)> {
    let mut out: Vec<(String, Report)> = report::bundled::reports()
        .into_iter()
        .map(|(n, r)| (n.trim_end_matches(".json").to_string(), r.unwrap()))
        .collect();
    assert!(out.len() >= 2, "both bundled reports");
    for e in scalescope::topology::catalog::entries() {
        out.push((e.id.clone(), modeled(&e.id)));
    }
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
