//! Renders a report's documents from its report.json: report.html and the PNGs (report.png and
//! one per view), offscreen, e.g. for a report measured on a machine without GL, or for the
//! committed screenshots: `cargo run --release --example render_report -- path/to/report.json
//! OUTDIR [PREFIX]`. With PREFIX the files are named `PREFIX.html`, `PREFIX.png` (report.png)
//! and `PREFIX-topology.png` …; `bundled` instead of a path renders every bundled example
//! report into OUTDIR as `report-example*` (what screenshots/ holds).

use std::path::{Path, PathBuf};

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
    std::fs::write(&html, scalescope::export::html::report(report))?;
    println!("wrote {}", html.display());
    for (file, png) in scalescope::ui::report_view::render_all(report) {
        let path = out.join(name(file));
        match png {
            Ok(bytes) => {
                std::fs::write(&path, bytes)?;
                println!("wrote {}", path.display());
            }
            Err(e) => eprintln!("{file}: {e:#}"),
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(report), Some(out)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: render_report REPORT.json|bundled OUTDIR [PREFIX]");
    };
    let out = PathBuf::from(out);
    if report == "bundled" {
        for (file, r) in scalescope::report::bundled::reports() {
            let r = r.map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
            // The 2-GPU example is `report-example`, others by their GPU count.
            let n = r.topology.gpus.len();
            let prefix = if n == 2 {
                "report-example".to_string()
            } else {
                format!("report-example-{n}x")
            };
            render(&r, &out, Some(&prefix))?;
        }
        return Ok(());
    }
    let report = scalescope::report::load(&PathBuf::from(&report))?;
    render(&report, &out, args.next().as_deref())
}
