//! A client a hostile or broken server cannot steer (issue O, items 1 and 2): a fake `ssh` that
//! records the argv it was given and runs the remote command here, where the "server" is this
//! build's agent with its answers rewritten by `sed`, or a script that goes silent. The client's
//! exit code and terminal output must stay its own. No sshd needed, except the one check of the
//! real OpenSSH (which needs only the `ssh` program).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_scalescope");

/// A fake ssh in `dir`: writes its arguments (one per line) to `dir/argv`, then runs its last
/// argument (the remote command) with `sh -c`, as a server's login shell would.
fn fake_ssh(dir: &Path) -> String {
    let script = dir.join("ssh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nfor a; do last=$a; done\nexport CUDA_VISIBLE_DEVICES=\nexec sh -c \"$last\"\n",
            dir.join("argv").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// A server script in `dir`: this build's agent with its output piped through `filter` (a
/// shell pipeline stage, e.g. a `sed` program), or `filter` alone when it does not start with
/// `|`.
fn server(dir: &Path, filter: &str) -> PathBuf {
    let p = dir.join("server.sh");
    let body = match filter.strip_prefix('|') {
        Some(f) => format!("'{BIN}' agent |{f}\n"),
        None => format!("{filter}\n"),
    };
    std::fs::write(&p, body).unwrap();
    p
}

fn client(dir: &Path, server: &Path, args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let o = Command::new(BIN)
        .args([
            "--remote",
            "gpu-box",
            "--ssh",
            &fake_ssh(dir),
            "--remote-command",
        ])
        .arg(format!("sh {}", server.display()))
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    (o, start.elapsed())
}

/// Standard output and error, and that neither holds a terminal control character (ESC, BEL,
/// CSI …) or a line separator, and that no line is a verdict the server wrote.
fn clean(o: &Output) -> (String, String) {
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    for text in [&out, &err] {
        assert!(
            !text
                .chars()
                .any(|c| (c.is_control() && !matches!(c, '\n' | '\t'))
                    || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202e}')),
            "a control character reached the terminal: {text:?}"
        );
        assert!(
            !text
                .lines()
                .any(|l| l.starts_with("verdict: PASS (server)")),
            "{text}"
        );
    }
    (out, err)
}

const BANDWIDTH: [&str; 9] = [
    "bench",
    "bandwidth",
    "--modeled",
    "--catalog",
    "h200-2x-sxm",
    "--tests",
    "h2d",
    "--sizes",
    "1M",
];

#[test]
fn no_user_value_reaches_ssh_as_an_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = server(d, "echo never >&2; exit 1");
    // The fake ssh sees `--` before the host, and the remote command after it.
    for command in ["-oProxyCommand=touch pwned", "-V x"] {
        let o = Command::new(BIN)
            .args(["--remote", "gpu-box", "--ssh", &fake_ssh(d)])
            .arg(format!("--remote-command={command}"))
            .arg("topo")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        let argv = std::fs::read_to_string(d.join("argv")).unwrap();
        let argv: Vec<&str> = argv.lines().collect();
        let dd = argv.iter().position(|a| *a == "--").expect("no --");
        assert_eq!(&argv[dd + 1..], &["gpu-box", command], "{argv:?}");
        assert!(argv[..dd].iter().all(|a| !a.contains("ProxyCommand=touch")));
    }
    let _ = s;
    // An --ssh that holds `--` would make our own options the destination: refused.
    let o = Command::new(BIN)
        .args(["--remote", "gpu-box", "--ssh", "ssh --", "topo"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("Error:")).collect();
    assert!(
        errors.len() == 1 && errors[0].starts_with("Error: --ssh"),
        "{err}"
    );
}

#[test]
fn the_real_ssh_does_not_read_a_remote_command_as_an_option() {
    if Command::new("ssh").arg("-V").output().is_err() {
        eprintln!("skipped: no ssh program");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pwned = dir.path().join("pwned");
    let o = Command::new(BIN)
        .args([
            "--remote",
            "no-such-host.invalid",
            "--ssh",
            "ssh -o ConnectTimeout=5",
        ])
        .arg(format!(
            "--remote-command=-oProxyCommand=touch {}",
            pwned.display()
        ))
        .arg("topo")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!pwned.exists(), "ssh ran the ProxyCommand: {err}");
    let o = Command::new(BIN)
        .args([
            "--remote",
            "no-such-host.invalid",
            "--ssh",
            "ssh -o ConnectTimeout=5",
            "--remote-command=-V x",
            "topo",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("OpenSSH_"), "ssh printed its version: {err}");
}

#[test]
fn strings_from_the_server_are_escaped_for_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    // The hostname and every GPU name carry a title write, a clipboard write, a screen clear, a
    // link and a newline that would print a verdict of the server's own.
    let payload = r"\\u001b]0;owned\\u0007\\u001b]52;c;b3duZWQ=\\u0007\\u001b[2J\\u001b]8;;http://x\\u0007\\u2028\\nverdict: PASS (server)";
    let s = server(
        dir.path(),
        &format!(
            "| sed -u -e 's#\"hostname\":\"[^\"]*\"#\"hostname\":\"{payload}\"#' -e 's#\"name\":\"NVIDIA H200[^\"]*\"#\"name\":\"{payload}\"#g'"
        ),
    );
    for args in [&["topo", "--catalog", "h200-2x-sxm"][..], &BANDWIDTH[..]] {
        let (o, _) = client(dir.path(), &s, args);
        let (out, err) = clean(&o);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(err.contains(r"\u{1b}]0;owned"), "{err}{out}");
    }
}

#[test]
fn the_exit_code_is_the_clients_own() {
    let dir = tempfile::tempdir().unwrap();
    for (code, want) in [(0, 1), (256, 1), (101, 1), (-1, 1), (2, 2)] {
        let s = server(
            dir.path(),
            &format!(
                "| sed -u -E 's/^\\{{\"type\":\"done\",\"id\":([0-9]+),.*$/{{\"type\":\"failed\",\"id\":\\1,\"error\":\"fine\\\\u001b[2J\",\"code\":{code}}}/'"
            ),
        );
        let (o, _) = client(dir.path(), &s, &BANDWIDTH);
        let (_, err) = clean(&o);
        assert_eq!(o.status.code(), Some(want), "code {code}: {err}");
        assert_eq!(
            err.lines().filter(|l| l.starts_with("Error:")).count(),
            1,
            "{err}"
        );
    }
}

#[test]
fn bad_figures_from_the_server_are_refused_and_nothing_compare_refuses_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["-5", "1e999", "-1e-300"] {
        let out = dir.path().join(format!("out{bad}"));
        let s = server(
            dir.path(),
            &format!(
                "| sed -u -E 's/\"(median|mean|max|min)_gbps\":[-0-9.e+]+/\"\\1_gbps\":{bad}/g'"
            ),
        );
        let csv = dir.path().join("b.csv");
        let _ = std::fs::remove_file(&csv);
        let mut args = BANDWIDTH.to_vec();
        let (c, j) = (csv.display().to_string(), out.display().to_string());
        args.extend(["--csv", &c, "--json", &j]);
        let (o, _) = client(dir.path(), &s, &args);
        let (_, err) = clean(&o);
        assert_eq!(o.status.code(), Some(1), "{bad}: {err}");
        // 1e999 is not a JSON number this client reads; -5 and -1e-300 are figures it refuses.
        assert!(
            err.contains("figure this client refuses") || err.contains("cannot read"),
            "{err}"
        );
        assert_eq!(
            err.lines().filter(|l| l.starts_with("Error:")).count(),
            1,
            "{err}"
        );
        // What was written before the refusal (nothing here: every event carries the figure)
        // holds no figure a reader would refuse.
        for f in [&csv, &out] {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            for token in text.split(|c: char| ",:[]{}\n ".contains(c)) {
                if let Ok(x) = token.parse::<f64>() {
                    assert!(
                        x.is_finite() && x >= 0.0,
                        "{bad}: {} holds {token}",
                        f.display()
                    );
                }
            }
        }
    }
}

#[test]
fn a_silent_server_or_an_unreadable_topology_ends_in_bounded_time() {
    let dir = tempfile::tempdir().unwrap();
    // Hello, then nothing, the connection held open.
    let silent = server(
        dir.path(),
        &format!("'{BIN}' agent </dev/null | head -n 1; exec sleep 60"),
    );
    for args in [&["topo"][..], &BANDWIDTH[..]] {
        let mut a = vec!["--test-silence-limit-ms", "1500"];
        a.extend_from_slice(args);
        let (o, took) = client(dir.path(), &silent, &a);
        let (_, err) = clean(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("said nothing for 1.5 s"), "{err}");
        assert!(took < Duration::from_secs(15), "{took:?}");
    }
    // An answer (`topo` runs as a job) whose report holds no topology that can be read.
    let bad = server(
        dir.path(),
        "| sed -u -E 's/^\\{\"type\":\"done\",\"id\":([0-9]+),.*$/{\"type\":\"done\",\"id\":\\1,\"report\":{\"topology\":{\"gpus\":7}}}/'",
    );
    let (o, took) = client(dir.path(), &bad, &["topo", "--catalog", "h200-2x-sxm"]);
    let (_, err) = clean(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot read"), "{err}");
    assert!(took < Duration::from_secs(15), "{took:?}");
}

/// A server that says a thing twice is refused: a flood of one repeated result line made a
/// 2-GPU `--bench` hold 86,671 bandwidth results and print its stage line thousands of times,
/// past the 10 s limit. An honest agent's full `--bench` (every stage) passes the same check.
#[test]
fn a_server_that_repeats_results_or_stages_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let bench = |out: &str| {
        vec![
            "--bench".to_string(),
            "--modeled".into(),
            "--quick".into(),
            "--catalog".into(),
            "h200-2x-sxm".into(),
            "--out".into(),
            dir.path().join(out).display().to_string(),
        ]
    };
    let honest = server(dir.path(), "| cat");
    let args = bench("honest");
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, _) = client(dir.path(), &honest, &refs);
    let (_, err) = clean(&o);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{err}");
    // Each bandwidth result line, and each stage's end, sent 5,000 times.
    for (what, pattern) in [
        ("a bandwidth result", "\"event\":\"bandwidth\""),
        ("the end of stage", "\"done\":true"),
    ] {
        let s = server(
            dir.path(),
            &format!(
                "| while IFS= read -r l; do n=1; case \"$l\" in *'{pattern}'*) n=5000;; esac; \
                 while [ $n -gt 0 ]; do printf '%s\\n' \"$l\"; n=$((n-1)); done; done"
            ),
        );
        let args = bench(what);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (o, took) = client(dir.path(), &s, &refs);
        let (_, err) = clean(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("the agent broke the protocol") && err.contains(what),
            "{what}: {err}"
        );
        assert!(took < Duration::from_secs(10), "{what}: took {took:?}");
    }
}
