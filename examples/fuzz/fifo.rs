//! `fifo`: files that are no regular file as every file argument — a FIFO nothing writes to
//! (silent for longer than scalescope waits), a FIFO with no writer, a FIFO that sends a few
//! bytes and then nothing, `/dev/zero`, `/dev/urandom`, `/dev/null`, a directory, a dangling
//! link, a file of no permission. Each command must end within the time limit (a silent FIFO
//! is given up after 5 s, here 1 s through the hidden `--test-stall-ms` so that 1,000 cases
//! take minutes) with one line of error naming the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::xml::verdict_or_contract;
use crate::{Campaign, Case, Outcome, Rng};

/// Every command line that reads a file the user names, with `{}` where the file goes.
const COMMANDS: &[&[&str]] = &[
    &["topo", "--import", "{}"],
    &["check", "--import", "{}"],
    &["bench", "bandwidth", "--modeled", "--import", "{}"],
    &["bench", "collectives", "--modeled", "--import", "{}"],
    &[
        "--bench",
        "--modeled",
        "--quick",
        "--import",
        "{}",
        "--out",
        "{out}",
    ],
    &["compare", "{}", "{report}"],
    &["compare", "{report}", "{}"],
    &["{}"],
    &["check", "--catalog", "h200-2x-sxm", "--thresholds", "{}"],
    &[
        "bench",
        "scaling",
        "--modeled",
        "--catalog",
        "h200-2x-sxm",
        "--workload",
        "{}",
    ],
    &["topo", "--catalog", "{}"],
    &["check", "--catalog", "{}"],
    &["bench", "bandwidth", "--modeled", "--catalog", "{}"],
];

/// The silence after which scalescope gives up on a FIFO in these cases (5 s when not shortened).
const STALL_MS: u64 = 1_000;

pub struct Fifo {
    report: String,
}

impl Fifo {
    pub fn new(root: &Path) -> Fifo {
        Fifo {
            report: root
                .join("assets/reports/h200-2x-sxm-2026-11-22.json")
                .to_string_lossy()
                .to_string(),
        }
    }
}

fn mkfifo(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path that lives across the call.
    unsafe { libc::mkfifo(c.as_ptr(), 0o600) == 0 }
}

/// Holds a FIFO's write end open for `hold` after writing `bytes`, from a thread of its own, so
/// that the reader sees data (or none) and no end of file.
fn silent_writer(path: PathBuf, bytes: Vec<u8>, hold: Duration) {
    std::thread::spawn(move || {
        // Read-write: opening does not wait for the reader (Linux).
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
        {
            let _ = std::io::Write::write_all(&mut f, &bytes);
            std::thread::sleep(hold);
        }
    });
}

impl Campaign for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn default_cases(&self) -> usize {
        1_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let fifo = dir.join("input");
        // A silent FIFO, or one with no writer, costs the whole (shortened) wait; the others
        // end at once.
        let (file, what): (PathBuf, &str) = match rng.below(16) {
            0 => {
                mkfifo(&fifo);
                silent_writer(fifo.clone(), Vec::new(), Duration::from_secs(9));
                (fifo, "silent FIFO")
            }
            2 => {
                mkfifo(&fifo);
                silent_writer(fifo.clone(), b"GPU0\tX \n".to_vec(), Duration::from_secs(9));
                (fifo, "FIFO silent after a few bytes")
            }
            1 | 3 | 4 => {
                mkfifo(&fifo);
                (fifo, "FIFO with no writer")
            }
            5..=7 => ("/dev/zero".into(), "/dev/zero"),
            8 => ("/dev/urandom".into(), "/dev/urandom"),
            9 | 10 => ("/dev/null".into(), "/dev/null"),
            11 => (dir.to_path_buf(), "a directory"),
            12 => {
                let link = dir.join("dangling");
                let _ = std::os::unix::fs::symlink(dir.join("nowhere"), &link);
                (link, "a dangling link")
            }
            13 => {
                let loop_a = dir.join("loop");
                let _ = std::os::unix::fs::symlink(&loop_a, &loop_a);
                (loop_a, "a link to itself")
            }
            14 => {
                let p = dir.join("noperm");
                let _ = std::fs::write(&p, "x");
                let _ =
                    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o0));
                (p, "a file of no permission")
            }
            _ => ("/proc/self/mem".into(), "/proc/self/mem"),
        };
        let template = rng.pick(COMMANDS);
        let out = dir.join("out").to_string_lossy().to_string();
        let f = file.to_string_lossy().to_string();
        let mut args: Vec<String> = template
            .iter()
            .map(|a| {
                a.replace("{}", &f)
                    .replace("{out}", &out)
                    .replace("{report}", &self.report)
            })
            .collect();
        args.extend(["--test-stall-ms".to_string(), STALL_MS.to_string()]);
        Case {
            args,
            input: Vec::new(),
            origin: what.to_string(),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        verdict_or_contract(case, o)?;
        // None of these is a usable input, but /dev/null is an empty file, and an empty
        // thresholds file means the defaults.
        if matches!(o.code, Some(0 | 3)) && case.origin != "/dev/null" {
            return Err("accepted a file that is no input".into());
        }
        Ok(())
    }
}
