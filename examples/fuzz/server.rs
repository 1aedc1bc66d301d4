//! `server`: a hostile or broken server. The client (`--remote`) talks through a fake `ssh`
//! to this build's real agent whose answers pass through [`serve_mutated`] (this fuzz binary
//! run as a filter): strings turned into terminal escapes and fake verdict lines, figures made
//! negative, huge or non-finite, message types and ids changed, lines dropped, repeated by the
//! thousand (a flood), cut, garbage put between them, a protocol version changed, the server
//! silent mid-job or gone. The client's output and exit code must stay its own: the contract,
//! no fake verdict line, no `NaN`/`inf` printed or written, and within the time limit (the
//! silence limit is shortened to 1.5 s through the test hook).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::mutate::{FAKE_VERDICT, TERMINAL, mutate_value};
use crate::{Campaign, Case, Outcome, Rng, no_bad_figures, remote_contract};

/// How the filter spoils the agent's lines.
const PLANS: &[&str] = &[
    "strings", "numbers", "types", "flood", "silence", "eof", "garbage", "hello", "mixed",
];

/// What the client runs (modeled, on a catalog machine; `{csv}` and `{out}` in the case's
/// folder).
const COMMANDS: &[&[&str]] = &[
    &["topo", "--catalog", "h200-2x-sxm"],
    &[
        "bench",
        "bandwidth",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--tests",
        "h2d,p2p_read_ce",
        "--sizes",
        "1M",
        "--csv",
        "{csv}",
    ],
    &["check", "--catalog", "h200-2x-sxm"],
    &[
        "bench",
        "collectives",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--sizes",
        "1M",
        "--csv",
        "{csv}",
    ],
    &[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--workload",
        "resnet50",
    ],
    &[
        "--bench",
        "--modeled",
        "--quick",
        "--catalog",
        "h200-2x-sxm",
        "--suite",
        "topology,bandwidth",
        "--out",
        "{out}",
    ],
];

pub struct Server {
    bin: PathBuf,
    me: PathBuf,
}

impl Server {
    pub fn new(bin: &Path) -> Server {
        Server {
            bin: bin.to_path_buf(),
            me: std::env::current_exe().expect("the fuzz binary's path"),
        }
    }
}

/// A fake `ssh` in `dir` that writes its arguments to `argv` (each NUL-terminated), then runs
/// its last argument (the remote command) with `sh -c` as a server's login shell would, or,
/// when `connects` is false, fails as ssh does for a host it cannot resolve.
pub fn fake_ssh(dir: &Path, connects: bool) -> PathBuf {
    let script = dir.join("ssh");
    let then = if connects {
        "for a; do last=$a; done\nexec sh -c \"$last\""
    } else {
        "echo 'ssh: Could not resolve hostname: Name or service not known' >&2\nexit 255"
    };
    let body = format!(
        "#!/bin/sh\nprintf '%s\\0' \"$@\" > '{}'\n{then}\n",
        dir.join("argv").display()
    );
    let _ = std::fs::write(&script, body);
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755));
    script
}

impl Campaign for Server {
    fn name(&self) -> &'static str {
        "server"
    }

    fn default_cases(&self) -> usize {
        1_500
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let plan = *rng.pick(PLANS);
        let seed = rng.next_u64();
        let csv = dir.join("out.csv").to_string_lossy().to_string();
        let out = dir.join("out").to_string_lossy().to_string();
        let template = rng.pick(COMMANDS);
        let command = format!(
            "'{}' agent | '{}' --serve-mutated {plan} {seed}",
            self.bin.display(),
            self.me.display()
        );
        let mut args = vec![
            "--remote".to_string(),
            "gpu-box".into(),
            format!("--ssh={}", fake_ssh(dir, true).display()),
            format!("--remote-command={command}"),
            "--test-silence-limit-ms".into(),
            "1500".into(),
        ];
        args.extend(
            template
                .iter()
                .map(|a| a.replace("{csv}", &csv).replace("{out}", &out)),
        );
        Case {
            args,
            input: command.into_bytes(),
            origin: format!("{plan} {seed} {}", template[..2].join(" ")),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        remote_contract(case, o)?;
        no_bad_figures(o)?;
        if o.stdout
            .lines()
            .chain(o.stderr.lines())
            .any(|l| l.trim_start().starts_with(FAKE_VERDICT))
        {
            return Err("the server's verdict line was printed as a line of ours".into());
        }
        // What the client wrote holds no figure a reader refuses.
        for f in [dir.join("out.csv"), dir.join("out/report.json")] {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            for token in text.split(|c: char| ",:[]{}\n\" ".contains(c)) {
                let t = token.trim_start_matches('-');
                if matches!(t, "NaN" | "nan" | "inf" | "Infinity")
                    || token.parse::<f64>().is_ok_and(|x| !x.is_finite())
                {
                    return Err(format!("{} holds the figure {token:?}", f.display()));
                }
            }
        }
        Ok(())
    }
}

/// The filter: copies the agent's lines from standard input to standard output (each flushed),
/// spoiling them as `plan` says, with its own seeded generator. Runs as `fuzz --serve-mutated
/// PLAN SEED` on the fake server.
pub fn serve_mutated(plan: &str, seed: u64) {
    let mut rng = Rng::new(seed, 0);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut emit = |line: &str| {
        let ok = out
            .write_all(line.as_bytes())
            .and_then(|_| out.write_all(b"\n"))
            .and_then(|_| out.flush());
        if ok.is_err() {
            // The client is gone.
            std::process::exit(0);
        }
    };
    // The line at which silence or the end comes.
    let stop_at = 1 + rng.below(6);
    for (n, line) in stdin.lock().lines().enumerate() {
        let Ok(line) = line else { return };
        let plan = if plan == "mixed" {
            *rng.pick(&PLANS[..PLANS.len() - 1])
        } else {
            plan
        };
        match plan {
            "silence" if n == stop_at => {
                std::thread::sleep(Duration::from_secs(30));
                return;
            }
            "eof" if n == stop_at => return,
            "flood" if n > 0 && rng.below(3) == 0 => {
                for _ in 0..1 + rng.below(20_000) {
                    emit(&line);
                }
                continue;
            }
            "garbage" if rng.below(2) == 0 => {
                let junk = match rng.below(5) {
                    0 => rng.pick(TERMINAL).to_string(),
                    1 => "{\"type\":".to_string(),
                    2 => "x".repeat(1 << 20),
                    3 => format!(
                        "{{\"type\":\"event\",\"id\":1,\"event\":{{\"event\":\"progress\",\"done\":1,\"total\":0,\"label\":{}}}}}",
                        serde_json::json!(rng.pick(TERMINAL))
                    ),
                    _ => "SSH banner: welcome".to_string(),
                };
                emit(&junk);
            }
            _ => {}
        }
        let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&line) else {
            emit(&line);
            continue;
        };
        match plan {
            "strings" | "numbers" if rng.below(2) == 0 => mutate_value(&mut rng, &mut v, 3),
            "types" if rng.below(3) == 0 => {
                let (field, value) = match rng.below(4) {
                    0 => (
                        "type",
                        serde_json::json!(rng.pick(&[
                            "done",
                            "failed",
                            "hello",
                            "cancelled",
                            "event",
                            "nope"
                        ])),
                    ),
                    1 => ("id", serde_json::json!(rng.pick(&[0, 2, 99]))),
                    2 => (
                        "code",
                        serde_json::json!(rng.pick(&[0i64, 256, -1, 101, 3, i64::MAX])),
                    ),
                    _ => ("id", serde_json::json!("1")),
                };
                v[field] = value;
            }
            "hello" if n == 0 => {
                v["protocol"] = serde_json::json!(rng.pick(&[0, 1, 3, u64::MAX]));
            }
            _ => {}
        }
        emit(&serde_json::to_string(&v).unwrap_or(line));
    }
}
