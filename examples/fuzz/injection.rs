//! `injection`: option-looking and shell-looking values in `--remote`, `--remote-command` and
//! `--ssh`, given to a fake `ssh` that records the arguments it received (and, one case in
//! eight, to the real OpenSSH against a host that cannot resolve). Nothing a user gives as the
//! host or the remote command may reach ssh as an option: ssh must see our `--` before the host,
//! the host exactly as given after it, and no file the values try to create may appear (a
//! `ProxyCommand` or a local shell running them would make it).

use std::path::Path;

use crate::server::fake_ssh;
use crate::{Campaign, Case, Outcome, Rng, remote_contract};

/// Values that try to become ssh options or local commands; `{pwned}` is the file they would
/// create.
const VALUES: &[&str] = &[
    "-oProxyCommand=touch {pwned}",
    "-o ProxyCommand=touch {pwned}",
    "-oLocalCommand=touch {pwned} -oPermitLocalCommand=yes",
    "-V",
    "-V x",
    "--",
    "-",
    "-F /dev/null",
    "-p 1",
    "host -oProxyCommand=touch {pwned}",
    "host\n-oProxyCommand=touch {pwned}",
    ";touch {pwned}",
    "$(touch {pwned})",
    "`touch {pwned}`",
    "|touch {pwned}",
    "&& touch {pwned}",
    "'",
    "\"",
    "\\",
    "",
    " ",
    "user@gpu-box",
    "gpu-box",
    "gpu-box.invalid",
    "\u{1b}]0;owned\u{7}",
    "a\u{2028}b",
];

pub struct Injection;

impl Campaign for Injection {
    fn name(&self) -> &'static str {
        "injection"
    }

    fn default_cases(&self) -> usize {
        1_500
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let pwned = dir.join("pwned").to_string_lossy().to_string();
        let pick = |rng: &mut Rng| rng.pick(VALUES).replace("{pwned}", &pwned);
        let real = rng.below(8) == 0 && which_ssh();
        let host = match rng.below(3) {
            0 => pick(rng),
            _ if real => "no-such-host.invalid".to_string(),
            _ => "gpu-box".to_string(),
        };
        let mut args = vec![format!("--remote={host}")];
        let mut shown = vec![format!("--remote {host:?}")];
        if rng.below(3) != 0 {
            let command = pick(rng);
            shown.push(format!("--remote-command {command:?}"));
            args.push(format!("--remote-command={command}"));
        }
        let ssh = if real {
            "ssh -o ConnectTimeout=2 -o BatchMode=yes".to_string()
        } else {
            // The fake ssh, sometimes with options of the user's own (or a value to refuse).
            let fake = fake_ssh(dir, false).display().to_string();
            match rng.below(4) {
                0 => format!("{fake} {}", shell_quote(&pick(rng))),
                _ => fake,
            }
        };
        shown.push(format!("--ssh {ssh:?}"));
        args.push(format!("--ssh={ssh}"));
        args.extend(
            rng.pick(&[
                &["topo"][..],
                &["check", "--catalog", "h200-2x-sxm"],
                &[
                    "bench",
                    "bandwidth",
                    "--modeled",
                    "--catalog",
                    "h200-2x-sxm",
                ],
            ])
            .iter()
            .map(|a| a.to_string()),
        );
        Case {
            args,
            input: host.clone().into_bytes(),
            origin: shown.join(" "),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        remote_contract(case, o)?;
        if dir.join("pwned").exists() {
            return Err("a value ran as a command: the file it creates exists".into());
        }
        let Ok(argv) = std::fs::read(dir.join("argv")) else {
            // Refused before ssh started, or the real ssh.
            return Ok(());
        };
        let argv: Vec<String> = argv
            .split(|&b| b == 0)
            .map(|w| String::from_utf8_lossy(w).to_string())
            .collect();
        let host = String::from_utf8_lossy(&case.input).to_string();
        let ssh = case
            .args
            .iter()
            .find_map(|a| a.strip_prefix("--ssh="))
            .unwrap_or("");
        let own = shell_words::split(ssh)
            .unwrap_or_default()
            .len()
            .saturating_sub(1);
        // Our options, then `--`, then the host as given; the user's --ssh words before ours.
        let Some(dd) = argv
            .iter()
            .skip(own)
            .position(|a| a == "--")
            .map(|p| p + own)
        else {
            return Err(format!("ssh got no `--` after the options: {argv:?}"));
        };
        if argv.get(dd + 1) != Some(&host) {
            return Err(format!("ssh's destination is not the host given: {argv:?}"));
        }
        if argv[..dd].iter().skip(own).any(|a| {
            !matches!(
                a.as_str(),
                "-T" | "-o" | "BatchMode=yes" | "ServerAliveInterval=15"
            )
        }) {
            return Err(format!("ssh got an option that is not ours: {argv:?}"));
        }
        Ok(())
    }
}

/// Whether an `ssh` program is on PATH.
fn which_ssh() -> bool {
    std::process::Command::new("ssh").arg("-V").output().is_ok()
}

/// `s` as one word for a POSIX shell (what `--ssh` is split as).
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
