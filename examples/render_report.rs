//! Renders a report's documents from its report.json: report.html, the PNGs (report.png and one
//! per view) and report.pdf, typeset on the CPU (no GL, no display; the headless build runs it
//! too), e.g. for a report measured before scalescope wrote PDFs, or for the committed
//! screenshots: `cargo run --release --example render_report -- path/to/report.json OUTDIR
//! [PREFIX]`. With PREFIX the files are named `PREFIX.html`, `PREFIX.png` (report.png),
//! `PREFIX.pdf` and `PREFIX-topology.png` …; `bundled` instead of a path renders every bundled
//! example report into OUTDIR as `report-example*` (the 2-GPU one of today's method, the one the
//! app opens on, as `report-example`: what screenshots/ holds); `catalog ID`
//! renders a modeled `--bench` of catalog machine ID as `report-ID-modeled*`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use scalescope::job::{self, Job};

fn render(
    report: &scalescope::report::Report,
    out: &Path,
    prefix: Option<&str>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)?;
    let name = |file: &str| match prefix {
        None => file.to_string(),
        Some(p) => match file.strip_prefix("report") {
            Some(ext) => format!("{p}{ext}"),
            None => format!("{p}-{file}"),
        },
    };
    let html = out.join(name("report.html"));
    std::fs::write(&html, scalescope::document::report_html(report))?;
    println!("wrote {}", html.display());
    for (file, bytes) in scalescope::document::render_all(report) {
        let path = out.join(name(file));
        match bytes {
            Ok(bytes) => {
                std::fs::write(&path, bytes)?;
                println!("wrote {}", path.display());
            }
            Err(e) => eprintln!("{file}: {e}"),
        }
    }
    Ok(())
}

/// A modeled quick `--bench` of catalog machine `id`, run in-process.
fn modeled(id: &str) -> anyhow::Result<scalescope::report::Report> {
    let job = Job::modeled_catalog(id, job::Stage::ALL.to_vec());
    let mut r = job::run(&job, &AtomicBool::new(false), &mut |_| {})?;
    r.machine.command_line = vec![
        "scalescope".into(),
        "--bench".into(),
        "--modeled".into(),
        "--catalog".into(),
        id.into(),
    ];
    Ok(r)
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(report), Some(out)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: render_report REPORT.json|bundled|catalog ID OUTDIR [PREFIX]");
    };
    if report == "catalog" {
        let id = out;
        let Some(out) = args.next() else {
            anyhow::bail!("usage: render_report catalog ID OUTDIR");
        };
        let r = modeled(&id)?;
        return render(
            &r,
            &PathBuf::from(out),
            Some(&format!("report-{id}-modeled")),
        );
    }
    let out = PathBuf::from(out);
    if report == "bundled" {
        let mut reports = Vec::new();
        for (file, r) in scalescope::report::bundled::reports() {
            reports.push((file, r.map_err(|e| anyhow::anyhow!("{file}: {e}"))?));
        }
        // Today's method first, the newest first (the examples are listed oldest first): the
        // 2-GPU report the app opens on is `report-example`, the first of another GPU count
        // `report-example-{n}x`; any other is named by its file, so that none overwrites
        // another.
        let order = |i: usize| (reports[i].1.older_method().is_some(), usize::MAX - i);
        let mut indices: Vec<usize> = (0..reports.len()).collect();
        indices.sort_by_key(|&i| order(i));
        let mut used: Vec<String> = Vec::new();
        for i in indices {
            let (file, r) = &reports[i];
            let n = r.topology.gpus.len();
            let mut prefix = if n == 2 {
                "report-example".to_string()
            } else {
                format!("report-example-{n}x")
            };
            if used.contains(&prefix) {
                prefix = format!("report-example-{}", file.trim_end_matches(".json"));
            }
            render(r, &out, Some(&prefix))?;
            used.push(prefix);
        }
        return Ok(());
    }
    let report = scalescope::report::load(&PathBuf::from(&report))?;
    render(&report, &out, args.next().as_deref())
}
