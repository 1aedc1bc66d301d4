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
    for figure in ["10 s on 2× H200", "248 s on 2× H200"] {
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

/// Every command's help, flattened.
fn every_help() -> Vec<(String, String)> {
    [
        &["--help"][..],
        &["topo", "--help"],
        &["bench", "--help"],
        &["bench", "bandwidth", "--help"],
        &["bench", "collectives", "--help"],
        &["bench", "scaling", "--help"],
        &["compare", "--help"],
        &["check", "--help"],
        &["watch", "--help"],
        &["fleet", "run", "--help"],
        &["fleet", "report", "--help"],
        &["agent", "--help"],
    ]
    .iter()
    .map(|args| (args.join(" "), help(args)))
    .collect()
}

/// Issue X's newcomer found help that said less than the commands do, or said it twice.
#[test]
fn help_says_what_the_commands_do_once() {
    let top = help(&["--help"]);
    let bench = help(&["bench", "--help"]);
    // `bench` runs three kinds of subcommand, not only copies: its line in the command list
    // and its own about say so.
    let listed = top.split(" bench ").nth(1).unwrap_or("");
    let about = bench.split("Usage:").next().unwrap_or("");
    for line in [listed.split(" compare ").next().unwrap_or(""), about] {
        assert!(
            line.contains("copy bandwidth")
                && line.contains("collectives")
                && line.contains("scaling"),
            "bench's about: {line}"
        );
    }
    // `bench scaling --measure` runs PyTorch's steps; proxies only without PyTorch.
    for h in [&bench, &help(&["bench", "scaling", "--help"])] {
        assert!(!h.contains("measured with proxy runs"), "{h}");
        assert!(h.contains("PyTorch"), "{h}");
    }
    // --thresholds names every table its file may have.
    let check = help(&["check", "--help"]);
    let thresholds = check.split("--thresholds").nth(1).unwrap_or("");
    let thresholds: String = thresholds.chars().take(400).collect();
    for table in ["[efficiency]", "[soak]", "[fleet]", "[settings]"] {
        assert!(
            thresholds.contains(table),
            "--thresholds omits {table}: {thresholds}"
        );
    }
    // A default given in the words of the help is not repeated by clap's "[default: …]".
    for (cmd, h) in every_help() {
        for option in h.split(" --") {
            let Some(at) = option.find("[default: ") else {
                continue;
            };
            let value = option[at + 10..].split(']').next().unwrap_or("");
            let words = option[..at].to_string();
            assert!(
                !words.contains(&format!("default: {value}"))
                    && !words.contains(&format!("default {value}")),
                "{cmd}: --{option}"
            );
        }
    }
}

/// The flags that reach servers sit under their own heading, after each command's own options
/// (not between compare's price flags), and only where they mean something: not in `agent`
/// (the server's end), `compare` or `fleet report` (files read here); `fleet run` has --ssh,
/// --remote-command and --remote-install for its hosts but not --remote.
#[test]
fn remote_flags_have_their_own_heading_and_only_where_they_apply() {
    let options = [
        "--remote <",
        "--remote-command <",
        "--ssh <",
        "--remote-install ",
    ];
    for args in [
        &["check", "--help"][..],
        &["watch", "--help"],
        &["topo", "--help"],
        &["bench", "bandwidth", "--help"],
        &["bench", "scaling", "--help"],
        &["fleet", "run", "--help"],
    ] {
        let h = help(args);
        let (own, remote) = h
            .split_once("Remote (over ssh):")
            .unwrap_or_else(|| panic!("{args:?}: no remote heading: {h}"));
        for o in options {
            assert!(!own.contains(o), "{args:?}: {o} among the own options");
            let expected = !(args[0] == "fleet" && o == "--remote <");
            assert_eq!(remote.contains(o), expected, "{args:?}: {o}");
        }
    }
    for args in [
        &["agent", "--help"][..],
        &["compare", "--help"],
        &["fleet", "report", "--help"],
    ] {
        let h = help(args);
        assert!(!h.contains("Remote (over ssh)"), "{args:?}");
        for o in options {
            assert!(!h.contains(o), "{args:?}: {o}");
        }
    }
    // Hidden is not ignored: --remote where it cannot apply is refused, naming what to do.
    let out = scalescope()
        .args(["compare", "a.json", "--remote", "gpu01"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--remote") && err.contains("compare"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
