//! report.html in a real browser engine: the HTML of both bundled example reports and of a
//! modeled `--bench` run is opened in headless Chromium (Debian's `chromium-headless-shell` or
//! `chromium`; scripts/test.sh installs the first when missing), its DOM must hold the
//! document's tables and figures, and a screenshot of it must not be blank. Each file must be
//! self-contained: no external references, and every inline SVG figure draws something.
//!
//! The layout check: for every catalog machine (a modeled `--bench`, run in-process), both
//! bundled reports and a synthetic soak, a copy of report.html with a measuring script injected
//! (the shipped file has none) is laid out at 1,000 px and at A4's width; the script writes into
//! the DOM every element whose right edge passes the page and every pair of sibling blocks
//! (headings, paragraphs, tables, figures, lists) that overlap, and `--dump-dom` reads it back.
//! A page built to be too wide and to overlap shows that the check can fail.
//!
//! Without a browser the test prints why and passes, unless `SCALESCOPE_BROWSER` names one
//! (scripts/test.sh sets it after installing): then a browser that does not work fails it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use scalescope::document::html;
use scalescope::health::Verdict;
use scalescope::model::Source;
use scalescope::report::{self, Report, summary};

/// The headless browser to use: `$SCALESCOPE_BROWSER`, else the first Chromium on PATH.
fn browser() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("SCALESCOPE_BROWSER").filter(|b| !b.is_empty()) {
        return Some(PathBuf::from(b));
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium-headless-shell", "chromium"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Runs the browser headless on `page` with `args`, in its own profile folder; returns stdout.
fn run_browser(browser: &Path, profile: &Path, args: &[&str], page: &Path) -> String {
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .arg(format!("file://{}", page.display()))
    .env("HOME", profile);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed ({}): {}",
        browser.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(bytes[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(bytes[20..24].try_into().ok()?);
    Some((w, h))
}

/// Every `<svg …>…</svg>` of `text`.
fn svgs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<svg") {
        let Some(len) = rest[start..].find("</svg>") else {
            panic!("an <svg> is not closed");
        };
        out.push(&rest[start..start + len]);
        rest = &rest[start + len..];
    }
    out
}

/// The checks on the file itself: self-contained, figures non-empty, what every document has.
fn check_source(name: &str, text: &str, r: &Report) {
    assert!(text.starts_with("<!DOCTYPE html>"), "{name}: no doctype");
    let lower = text.to_ascii_lowercase();
    for bad in [
        "http", "<link", "<script", "@import", "url(", "src=\"/", "src='/", "<iframe",
    ] {
        assert!(
            !lower.contains(bad),
            "{name}: external reference or script: {bad}"
        );
    }
    // Any src/href left points inside the file.
    for attr in ["src=\"", "href=\""] {
        for (i, _) in lower.match_indices(attr) {
            let v = &lower[i + attr.len()..];
            assert!(
                v.starts_with("data:") || v.starts_with('#'),
                "{name}: {attr} points outside the file"
            );
        }
    }
    let figures = svgs(text);
    for (i, svg) in figures.iter().enumerate() {
        let drawn = svg.matches("<circle").count() + svg.matches("<path d=\"M").count();
        assert!(drawn > 0, "{name}: SVG figure {i} draws nothing");
    }
    for (i, _) in lower.match_indices("src=\"data:image/png;base64,") {
        let data = &lower[i + 27..];
        let end = data.find('"').unwrap_or(0);
        assert!(end > 100, "{name}: embedded PNG {i} is empty");
    }
    // The machine is named by its GPUs, first.
    let h1 = text.find("<h1").expect("a title");
    let machine = html::escape(&summary::machine_name(r));
    assert!(text[h1..].starts_with(&format!("<h1 id=\"machine\">{machine}")));
    // Every key figure is in the document as the report holds it (never a fixed number).
    for k in summary::key_figures(r) {
        assert!(
            text.contains(&format!("<b>{}</b>", html::escape(&k.value_text()))),
            "{name}: key figure {} ({}) missing",
            k.name,
            k.value_text()
        );
    }
}

/// The checks on what the browser made of it.
fn check_in_browser(name: &str, page: &Path, browser: &Path, work: &Path, expect: &[&str]) {
    let profile = work.join(format!("profile-{name}"));
    std::fs::create_dir_all(&profile).unwrap();
    let dom = run_browser(browser, &profile, &["--dump-dom"], page);
    for id in expect {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "{name}: the browser's DOM has no #{id}"
        );
    }
    // The browser kept every figure and every figure still draws.
    let source = std::fs::read_to_string(page).unwrap();
    let (in_file, in_dom) = (svgs(&source).len(), svgs(&dom).len());
    assert_eq!(in_file, in_dom, "{name}: figures lost in parsing");
    for svg in svgs(&dom) {
        assert!(svg.contains("<circle") || svg.contains("<path"));
    }
    assert_eq!(
        source.matches("<table").count(),
        dom.matches("<table").count(),
        "{name}: tables lost in parsing"
    );
    // Rendered: a full-page screenshot is far from blank (a blank page of the same size is the
    // yardstick).
    let shot = work.join(format!("{name}.png"));
    let blank_page = work.join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><html><body></body></html>").unwrap();
    let blank = work.join("blank.png");
    for (page, out) in [(page, &shot), (blank_page.as_path(), &blank)] {
        run_browser(
            browser,
            &profile,
            &[
                &format!("--screenshot={}", out.display()),
                "--window-size=1200,2400",
            ],
            page,
        );
    }
    let (png, blank_png) = (
        std::fs::read(&shot).unwrap(),
        std::fs::read(&blank).unwrap(),
    );
    assert_eq!(png_size(&png), Some((1200, 2400)), "{name}: screenshot");
    assert!(
        png.len() > 8 * blank_png.len().max(1000),
        "{name}: the screenshot looks blank ({} bytes, a blank page {})",
        png.len(),
        blank_png.len()
    );
    // It prints.
    let pdf = work.join(format!("{name}.pdf"));
    run_browser(
        browser,
        &profile,
        &[
            &format!("--print-to-pdf={}", pdf.display()),
            "--no-pdf-header-footer",
        ],
        page,
    );
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(
        bytes.starts_with(b"%PDF") && bytes.len() > 10_000,
        "{name}: PDF"
    );
}

/// A modeled quick `--bench` of a catalog machine into `dir`.
fn bench_modeled(dir: &Path) -> Report {
    let out = common::process()
        .args(["--bench", "--modeled", "--catalog", "h200-2x-sxm", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "--bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("report.html"),
        "--bench does not name report.html"
    );
    report::load(&dir.join("report.json")).unwrap()
}

#[test]
fn report_html_is_self_contained_and_renders_in_a_browser() {
    let work = tempfile::tempdir().unwrap();
    let mut pages: Vec<(String, PathBuf, Report)> = Vec::new();
    for (file, r) in report::bundled::reports() {
        let r = r.unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = file.trim_end_matches(".json").to_string();
        let page = work.path().join(format!("{name}.html"));
        std::fs::write(&page, scalescope::document::report_html(&r)).unwrap();
        pages.push((name, page, r));
    }
    assert!(pages.len() >= 2, "both bundled examples");
    let bench = work.path().join("bench");
    let r = bench_modeled(&bench);
    pages.push(("bench-modeled".into(), bench.join("report.html"), r));

    for (name, page, r) in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        check_source(name, &text, r);
        // The file --bench wrote is what the exporter makes of its report.json.
        if name == "bench-modeled" {
            assert_eq!(
                text,
                scalescope::document::report_html(r),
                "report.html and report.json disagree"
            );
        }
    }

    // Modeled is said everywhere: in the modeled run no key figure or health row reads as
    // measured, and the verdict says modeled.
    let (_, page, r) = pages.last().unwrap();
    assert_eq!(r.bandwidth.as_ref().unwrap().source, Source::Modeled);
    let text = std::fs::read_to_string(page).unwrap();
    let keys = &text[text.find("id=\"key-figures-table\"").unwrap()..];
    let keys = &keys[..keys.find("</table>").unwrap()];
    assert!(keys.contains("prov modeled"));
    assert!(
        !keys.contains("prov measured"),
        "a modeled figure reads as measured"
    );
    assert!(
        text.contains("(modeled)</span>"),
        "the verdict says modeled"
    );
    // Its checks all pass, modeled (the model judged against itself): counted, not listed.
    assert!(text.contains("id=\"health-modeled-passes\""));
    assert!(!text.contains("id=\"health-table\""));
    // The measured examples say measured, have no health check and name their warnings' count.
    for (name, page, r) in &pages[..2] {
        let text = std::fs::read_to_string(page).unwrap();
        assert!(text.contains("No health check"), "{name}");
        assert!(
            text.contains(&format!("{} warning(s)", r.warnings.len())),
            "{name}: warnings count"
        );
        assert!(text.contains("prov measured"), "{name}");
    }

    let Some(browser) = browser() else {
        println!(
            "SKIPPED the browser half: no chromium-headless-shell or chromium on PATH (scripts/test.sh \
             installs it with apt-get when run as root); the file checks above ran"
        );
        return;
    };
    let common = [
        "machine",
        "verdict",
        "key-figures-table",
        "topology-matrix",
        "bandwidth-table",
        "collectives-table",
        "scaling-table",
        "scaling-curve",
    ];
    for (name, page, r) in &pages {
        let mut expect = common.to_vec();
        if r.topology.gpus.len() > 1 {
            // One GPU has no all-reduce between GPUs to draw over sizes.
            expect.push("busbw-curve");
        }
        if let Some(hr) = &r.health {
            let listed = hr
                .checks
                .iter()
                .any(|c| c.source != Source::Modeled || c.verdict != Verdict::Pass);
            expect.push(if listed {
                "health-table"
            } else {
                "health-modeled-passes"
            });
        }
        if name != "bench-modeled" {
            // The examples' full runs swept sizes: bandwidth curves.
            expect.push("bandwidth-curve");
        }
        check_in_browser(name, page, &browser, work.path(), &expect);
    }
}

/// The measuring script: every element whose box passes the viewport's edges, and every pair of
/// sibling blocks whose boxes overlap, written (URI-encoded JSON) into `#layout-findings`.
const MEASURE: &str = r#"<script>
(function () {
  var vw = document.documentElement.clientWidth;
  var out = [];
  function describe(el) {
    var d = el.tagName.toLowerCase();
    if (el.id) d += '#' + el.id;
    if (typeof el.className === 'string' && el.className) d += '.' + el.className.split(' ').join('.');
    return d + ' "' + (el.textContent || '').trim().slice(0, 60) + '"';
  }
  // The body too: its own children are blocks that may overlap.
  var all = [document.body].concat(Array.prototype.slice.call(document.body.querySelectorAll('*')));
  for (var i = 0; i < all.length; i++) {
    var r = all[i].getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > vw + 1 || r.left < -1) {
      out.push('wider than the page: ' + describe(all[i]) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right) + ' of ' + vw);
    }
  }
  var blocks = 'h1,h2,h3,p,table,figure,ul,ol,details,header,section,footer,div.cols';
  for (var i = 0; i < all.length; i++) {
    var kids = [];
    for (var k = 0; k < all[i].children.length; k++) {
      if (all[i].children[k].matches(blocks)) kids.push(all[i].children[k]);
    }
    for (var a = 0; a < kids.length; a++) {
      for (var b = a + 1; b < kids.length; b++) {
        var p = kids[a].getBoundingClientRect(), q = kids[b].getBoundingClientRect();
        if (p.height === 0 || q.height === 0) continue;
        var ox = Math.min(p.right, q.right) - Math.max(p.left, q.left);
        var oy = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
        if (ox > 1 && oy > 1) out.push('overlap: ' + describe(kids[a]) + ' and ' + describe(kids[b]));
      }
    }
  }
  var pre = document.createElement('pre');
  pre.id = 'layout-findings';
  pre.textContent = encodeURIComponent(JSON.stringify(out));
  document.body.appendChild(pre);
})();
</script>"#;

/// `%XX` escapes decoded (what `encodeURIComponent` wrote).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the measuring script found in `html` laid out `width` px wide.
fn layout_findings(browser: &Path, work: &Path, name: &str, html: &str, width: u32) -> Vec<String> {
    let page = work.join(format!("{name}-measured.html"));
    let measured = html.replacen("</body>", &format!("{MEASURE}\n</body>"), 1);
    assert_ne!(
        measured, html,
        "{name}: no </body> to inject the script before"
    );
    std::fs::write(&page, measured).unwrap();
    let profile = work.join(format!("profile-layout-{name}"));
    std::fs::create_dir_all(&profile).unwrap();
    let dom = run_browser(
        browser,
        &profile,
        &["--dump-dom", &format!("--window-size={width},1200")],
        &page,
    );
    let start = dom
        .find("<pre id=\"layout-findings\">")
        .unwrap_or_else(|| panic!("{name}: the measuring script did not run"));
    let text = &dom[start + "<pre id=\"layout-findings\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    serde_json::from_str(&percent_decode(text)).unwrap()
}

/// A4's width at 96 px per inch (210 mm).
const A4_PX: u32 = 794;

/// Nothing in report.html is wider than the page, and no two blocks overlap, for every catalog
/// machine (8 GPUs + 8 NICs included), both bundled reports and a report with a soak, at 1,000 px
/// and at A4's width.
#[test]
fn report_html_fits_the_page_for_every_machine() {
    let Some(browser) = browser() else {
        println!(
            "SKIPPED: no chromium-headless-shell or chromium on PATH (scripts/test.sh installs it)"
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut reports: Vec<(String, Report)> = report::bundled::reports()
        .into_iter()
        .map(|(f, r)| (f.trim_end_matches(".json").to_string(), r.unwrap()))
        .collect();
    for e in scalescope::topology::catalog::entries() {
        reports.push((e.id.clone(), common::modeled(&e.id)));
    }
    assert!(
        reports.len() >= 9,
        "7 catalog machines and 2 bundled reports"
    );
    // A burn-in: its checks, charts over time and events table fit too.
    reports.push(("soak".into(), common::soak::report()));
    let mut problems = Vec::new();
    for (name, r) in &reports {
        let html = scalescope::document::report_html(r);
        for width in [1000, A4_PX] {
            for f in layout_findings(&browser, work.path(), name, &html, width) {
                problems.push(format!("{name} at {width} px: {f}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check can fail: a table wider than the page and a paragraph pulled over a heading are
/// both caught, and the same page without them passes.
#[test]
fn the_layout_check_catches_a_wide_table_and_overlapping_blocks() {
    let Some(browser) = browser() else {
        println!(
            "SKIPPED: no chromium-headless-shell or chromium on PATH (scripts/test.sh installs it)"
        );
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let page = |body: &str| {
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body><h2>Heading</h2>{body}</body></html>"
        )
    };
    let fine = layout_findings(
        &browser,
        work.path(),
        "fine",
        &page("<p>A paragraph.</p><table><tr><td>a cell</td></tr></table>"),
        A4_PX,
    );
    assert!(fine.is_empty(), "{fine:?}");
    let wide = layout_findings(
        &browser,
        work.path(),
        "wide",
        &page(&format!(
            "<table id=\"wide\"><tr><td style=\"white-space:nowrap\">{}</td></tr></table>",
            "does not fit: ".repeat(40)
        )),
        A4_PX,
    );
    assert!(
        wide.iter()
            .any(|f| f.contains("wider than the page: table#wide")),
        "{wide:?}"
    );
    let overlap = layout_findings(
        &browser,
        work.path(),
        "overlap",
        &page("<p style=\"margin-top:-30px\">Pulled over the heading.</p>"),
        A4_PX,
    );
    assert!(
        overlap.iter().any(|f| f.starts_with("overlap: h2")),
        "{overlap:?}"
    );
}
