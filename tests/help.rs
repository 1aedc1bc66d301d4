//! `--help` holds to the README and to the truth (issue O, item 7): what `--bench` writes, the
//! presets' times as the README gives them (measured: `--bench` on 2× H200 and one H100), and
//! what `--full` runs now (real PyTorch steps, not proxy runs).

mod common;

use common::{crate_file, scalescope};

/// The text with clap's and Markdown's line wrapping collapsed, so that phrases can be found.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn help(args: &[&str]) -> String {
    let out = scalescope().args(args).output().expect("runs");
    assert!(out.status.success(), "{args:?}");
    flat(&String::from_utf8(out.stdout).expect("utf-8"))
}

#[test]
fn help_agrees_with_the_readme() {
    let readme = flat(&std::fs::read_to_string(crate_file("README.md")).expect("README.md"));
    let h = help(&["--help"]);
    assert!(
        h.contains("CSV, report.json, report.html, PNGs and report.pdf"),
        "--help's --bench omits files: {h}"
    );
    for figure in ["10 s on 2× H200", "over 170 s on 2× H200"] {
        assert!(readme.contains(figure), "README lacks {figure:?}");
        assert!(h.contains(figure), "--help lacks {figure:?}: {h}");
    }
    assert!(h.contains("real PyTorch training steps"), "{h}");
    for stale in ["≈30 s", "proxy runs", "≈5 min"] {
        assert!(!h.contains(stale), "--help still says {stale:?}");
        assert!(!readme.contains(stale), "README still says {stale:?}");
    }
    let c = help(&["check", "--help"]);
    assert!(c.contains("--verbose"), "{c}");
}
