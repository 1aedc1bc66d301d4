//! Renders a report's PNGs (report.png and one per view) from its report.json, offscreen, e.g.
//! for a report measured on a machine without GL: `cargo run --release --example render_report
//! -- path/to/report.json OUTDIR`.

use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(report), Some(out)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: render_report REPORT.json OUTDIR");
    };
    let report = scalescope::report::load(&PathBuf::from(&report))?;
    let out = PathBuf::from(out);
    std::fs::create_dir_all(&out)?;
    for (name, png) in scalescope::ui::report_view::render_all(&report) {
        let path = out.join(name);
        match png {
            Ok(bytes) => {
                std::fs::write(&path, bytes)?;
                println!("wrote {}", path.display());
            }
            Err(e) => eprintln!("{name}: {e:#}"),
        }
    }
    Ok(())
}
