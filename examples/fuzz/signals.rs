//! `signals`: SIGINT, SIGTERM or SIGHUP at a random moment 0–300 ms into a modeled `--bench`
//! (the first ~70 ms is where reports said `cancelled: false` before). The run must end with
//! 128 + the signal and a report.json that says `cancelled` (or, when the signal came before
//! anything was measured, no report and a line saying so), or with 0 and a whole report when
//! it had finished; never with a `.scalescope-tmp` file left in `--out`.

use std::path::Path;
use std::time::Duration;

use crate::{Campaign, Case, Outcome, Rng, no_hang_panic_or_escape};

pub struct Signals;

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
const CATALOG: &[&str] = &["h200-2x-sxm", "h100-pcie-2x-nvlink", "dgx-h100"];
const SUITES: &[&str] = &[
    "all",
    "topology",
    "bandwidth",
    "collectives",
    "health,scaling",
];

impl Campaign for Signals {
    fn name(&self) -> &'static str {
        "signals"
    }

    fn default_cases(&self) -> usize {
        1_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let sig = *rng.pick(&SIGNALS);
        let ms = rng.below(301) as u64;
        let out = dir.join("out").to_string_lossy().to_string();
        let args = [
            "--bench",
            "--modeled",
            "--quick",
            "--catalog",
            *rng.pick(CATALOG),
            "--suite",
            *rng.pick(SUITES),
            "--out",
            &out,
        ];
        Case {
            args: args.iter().map(|a| a.to_string()).collect(),
            origin: format!("signal {sig} at {ms} ms"),
            signal: Some((sig, Duration::from_millis(ms))),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        no_hang_panic_or_escape(o)?;
        let out = dir.join("out");
        let files: Vec<String> = std::fs::read_dir(&out)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(t) = files.iter().find(|f| f.contains("scalescope-tmp")) {
            return Err(format!("temporary file {t} left in --out"));
        }
        let sig = case.signal.map_or(0, |(s, _)| s);
        let report = out.join("report.json");
        let cancelled = || -> Result<bool, String> {
            let text = std::fs::read_to_string(&report).map_err(|e| format!("report.json: {e}"))?;
            let v: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("report.json: {e}"))?;
            Ok(v["cancelled"] == serde_json::Value::Bool(true))
        };
        match o.code {
            Some(0) if cancelled()? => Err("exit 0 with a report that says cancelled".into()),
            Some(0) => Ok(()),
            Some(c) if c == 128 + sig => {
                if report.exists() {
                    if cancelled()? {
                        Ok(())
                    } else {
                        Err(format!("exit {c} with a report that says cancelled: false"))
                    }
                } else if o.stderr.contains("before anything was measured") {
                    Ok(())
                } else {
                    Err(format!("exit {c}, no report and no word why"))
                }
            }
            // The signal came before the handlers were installed (the first milliseconds of
            // the process): the default action, with nothing in --out yet.
            None if !report.exists() => Ok(()),
            other => Err(format!("exit {other:?} after signal {sig}")),
        }
    }
}
