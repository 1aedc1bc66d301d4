//! Bad input a hostile-input audit found after issue O's bounds (2026-12-07): arguments that are
//! not UTF-8, an output flag naming one of the command's own input files, a list naming an entry
//! twice. Each is refused with one line naming what and where, before anything is written.
//! Runs the real binary; needs no GPU and no display.

mod common;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use common::headless;

/// Runs scalescope with `args` (any bytes): exit code and stderr.
fn run_os(args: &[OsString]) -> (Option<i32>, String) {
    let out = headless().args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn an_argument_that_is_not_utf8_is_refused_with_its_place_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = dir.path().as_os_str().to_owned().into_vec();
    bad.extend_from_slice(b"/nu\xff.txt");
    let bad = OsString::from_vec(bad);
    let s = |t: &str| OsString::from(t);
    let lines: Vec<Vec<OsString>> = vec![
        vec![s("topo"), s("--import"), bad.clone()],
        vec![
            s("topo"),
            s("--catalog"),
            s("dgx-h100"),
            s("-o"),
            bad.clone(),
        ],
        vec![
            s("check"),
            s("--catalog"),
            s("dgx-h100"),
            s("--json"),
            bad.clone(),
        ],
        vec![
            s("--bench"),
            s("--modeled"),
            s("--catalog"),
            s("dgx-h100"),
            s("--suite"),
            s("topology"),
            s("--out"),
            bad.clone(),
        ],
        vec![s("compare"), bad.clone()],
    ];
    for args in lines {
        let (code, stderr) = run_os(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        let shown: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(shown.len(), 1, "{args:?}: {stderr}");
        assert!(
            shown[0].starts_with("Error: argument ") && shown[0].contains("not valid UTF-8"),
            "{args:?}: {stderr}"
        );
        assert!(shown[0].contains("nu\u{fffd}.txt"), "{args:?}: {stderr}");
    }
    // Nothing was created under the bad name (the --bench line checked before any folder).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
