//! `hostile`: the surfaces of issue X — a `soak.csv` played back (`check --soak-replay`, cells
//! given hostile values, events text with escapes and bidi overrides, times far apart, a
//! replay pace), a `watch --record` recording played back (`watch --replay`, figures and times
//! replaced), and a fleet folder judged (`fleet report`: node folders with hostile names, one
//! a symbolic link out of the folder, reports with figures replaced, between-node records).
//! Each must end with finite figures or one line of error, print nothing a terminal acts on,
//! and write nothing outside `--out`.

use std::path::Path;

use crate::{Campaign, Case, Outcome, Rng, contract, no_bad_figures};

/// Values a cell or a JSON figure is replaced with.
const VALUES: &[&str] = &[
    "-500",
    "-1",
    "0",
    "5e-324",
    "1e308",
    "1e20",
    "1e13",
    "nan",
    "inf",
    "4294967295",
    "0.5",
    "700",
    "60",
    "",
];

/// Text given to names, events and transports.
const TEXTS: &[&str] = &[
    "\u{1b}]0;pwned\u{7}",
    "\u{1b}[2J",
    "evil\u{202e}gnp.exe",
    "a\u{2066}b\u{2069}",
    "\u{200f}x\u{061c}",
    "a\u{2028}b",
    "plain",
];

pub struct Hostile {
    soak: Vec<(String, Vec<u8>)>,
    watch: Vec<(String, Vec<u8>)>,
}

impl Hostile {
    pub fn new(root: &Path) -> Hostile {
        let data = root.join("tests/data");
        let pick = |prefix: &str| -> Vec<(String, Vec<u8>)> {
            crate::corpus(&data, &["csv", "jsonl"])
                .into_iter()
                .filter(|(n, _)| n.starts_with(prefix))
                .collect()
        };
        let (soak, watch) = (pick("soak-"), pick("watch-"));
        assert!(!soak.is_empty() && !watch.is_empty());
        Hostile { soak, watch }
    }
}

/// The first `rows` lines of `text` with cells replaced.
fn soak_csv(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .take(2 + rng.below(60))
        .map(String::from)
        .collect();
    let columns = lines[0].split(',').count();
    for _ in 0..1 + rng.below(4) {
        let row = 1 + rng.below(lines.len().saturating_sub(1).max(1));
        if row >= lines.len() {
            break;
        }
        let mut cells: Vec<String> = lines[row].split(',').map(String::from).collect();
        cells.resize(columns, String::new());
        let c = rng.below(columns);
        cells[c] = if c + 1 == columns || rng.below(4) == 0 {
            format!("\"{}\"", rng.pick(TEXTS))
        } else {
            rng.pick(VALUES).to_string()
        };
        lines[row] = cells.join(",");
    }
    lines.join("\n") + "\n"
}

/// A recording with one figure, time or list replaced.
fn recording(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .take(2 + rng.below(20))
        .map(String::from)
        .collect();
    if lines.len() < 2 {
        return text.to_string();
    }
    let row = 1 + rng.below(lines.len() - 1);
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(&lines[row]) else {
        return text.to_string();
    };
    let value = |rng: &mut Rng| -> serde_json::Value {
        let text = VALUES[rng.below(VALUES.len())];
        serde_json::from_str(text).unwrap_or(serde_json::json!(1e300))
    };
    match rng.below(5) {
        0 => v["t_s"] = value(rng),
        1 => v["gpus"][0]["pcie_rx_bytes_per_s"] = value(rng),
        2 => v["gpus"][0]["power_w"] = value(rng),
        3 => v["gpus"] = serde_json::json!(vec![serde_json::json!({"gpu": 0}); 2000]),
        _ => v["interval_s"] = value(rng),
    }
    lines[row] = v.to_string();
    lines.join("\n") + "\n"
}

/// A fleet folder of a few nodes whose reports are the bundled example's, edited.
fn fleet(rng: &mut Rng, dir: &Path, root: &Path) -> Vec<u8> {
    let base = std::fs::read_to_string(root.join("assets/reports/h200-2x-sxm-2026-11-22.json"))
        .unwrap_or_default();
    let nodes = dir.join("fleet").join("nodes");
    let mut made = String::new();
    for i in 0..2 + rng.below(4) {
        let name = if rng.below(3) == 0 {
            format!("n{i}{}", rng.pick(TEXTS))
        } else {
            format!("n{i}")
        };
        let folder = nodes.join(&name);
        if rng.below(8) == 0 {
            let _ = std::fs::create_dir_all(&nodes);
            let _ = std::os::unix::fs::symlink(dir.join("outside"), &folder);
            made.push_str(&format!("{name} → outside\n"));
            continue;
        }
        let _ = std::fs::create_dir_all(&folder);
        let mut report: serde_json::Value =
            serde_json::from_str(&base).unwrap_or(serde_json::Value::Null);
        if rng.below(2) == 0 {
            let text = VALUES[rng.below(VALUES.len())];
            let v: serde_json::Value = serde_json::from_str(text).unwrap_or(serde_json::json!(-1));
            report["bandwidth"]["results"][rng.below(4)]["median_gbps"] = v;
        }
        if rng.below(3) == 0 {
            report["machine"]["hostname"] = serde_json::json!(rng.pick(TEXTS));
        }
        let _ = std::fs::write(folder.join("report.json"), report.to_string());
        made.push_str(&format!("{name}\n"));
    }
    made.into_bytes()
}

impl Campaign for Hostile {
    fn name(&self) -> &'static str {
        "hostile"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let _ = std::fs::create_dir_all(dir.join("outside"));
        match rng.below(10) {
            0..=5 => {
                let (name, bytes) = rng.pick(&self.soak);
                let text = soak_csv(rng, &String::from_utf8_lossy(bytes));
                let file = dir.join("soak.csv");
                let _ = std::fs::write(&file, &text);
                let mut args = vec![
                    "check".to_string(),
                    "--soak-replay".into(),
                    file.display().to_string(),
                ];
                if rng.below(3) == 0 {
                    // Paces that finish in time or are refused (0.5 would be a slow replay).
                    let pace = ["0", "1000", "1e-300", "5e-324", "-1", "nan", "inf", "1e20"];
                    args.extend(["--replay-speed".into(), rng.pick(&pace).to_string()]);
                }
                Case {
                    args,
                    input: text.into_bytes(),
                    origin: format!("soak {name}"),
                    ..Case::default()
                }
            }
            6..=8 => {
                let (name, bytes) = rng.pick(&self.watch);
                let text = recording(rng, &String::from_utf8_lossy(bytes));
                let file = dir.join("rec.jsonl");
                let _ = std::fs::write(&file, &text);
                Case {
                    args: vec![
                        "watch".into(),
                        "--replay".into(),
                        file.display().to_string(),
                        "--replay-speed".into(),
                        "1000".into(),
                        "--quiet".into(),
                    ],
                    input: text.into_bytes(),
                    origin: format!("watch {name}"),
                    ..Case::default()
                }
            }
            _ => {
                let root = Path::new(env!("CARGO_MANIFEST_DIR"));
                let input = fleet(rng, dir, root);
                Case {
                    args: vec![
                        "fleet".into(),
                        "report".into(),
                        dir.join("fleet").display().to_string(),
                        "--out".into(),
                        dir.join("fleet/report").display().to_string(),
                    ],
                    input,
                    origin: "fleet".into(),
                    ..Case::default()
                }
            }
        }
    }

    fn check(&self, case: &Case, dir: &Path, o: &Outcome) -> Result<(), String> {
        let outside = std::fs::read_dir(dir.join("outside")).map_or(0, |d| d.count());
        if outside > 0 {
            return Err(format!("{outside} file(s) written outside --out"));
        }
        // `check` exits 3 on a FAIL verdict and `fleet report` when a node fails.
        if o.code == Some(3) && matches!(case.args[0].as_str(), "check" | "fleet") {
            return crate::no_hang_panic_or_escape(o);
        }
        contract(o)?;
        no_bad_figures(o)
    }
}
