//! `toml`: catalog entries (`assets/hardware/`), workloads (`assets/workloads/`) and thresholds
//! files with hostile values — a number replaced by `-5`, `nan`, `1e309`, `5e-324`,
//! `4294967295` …, a string or key given a terminal escape or a line separator, a table
//! repeated — through `topo --catalog`, `bench scaling --modeled --workload` and
//! `check --thresholds`. Each must end with figures that are finite or one line of error.

use std::path::Path;

use crate::mutate::mutate_bytes;
use crate::xml::verdict_or_contract;
use crate::{Campaign, Case, Outcome, Rng, corpus, no_bad_figures};

/// Values a number or string of a TOML file is replaced with.
pub const HOSTILE_VALUES: &[&str] = &[
    "-5",
    "0",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "1e309",
    "5e-324",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "9223372036854775807",
    "1e9",
    "1e300",
    "0.5",
    "\"\"",
    "\"\u{1b}]0;pwned\u{7}\"",
    "\"a\u{2028}b\"",
    "\"\\u2028\"",
    "\"\u{1b}[2J\"",
    "[]",
    "[1e309]",
    "true",
    "{}",
];

const THRESHOLD_KEYS: &[&str] = &["pass", "warn", "busy_util_percent", "nvlink_crc_per_s"];
const EFFICIENCY_KEYS: &[&str] = &["p2p_read_ce", "h2d", "d2h", "p2p_write_ce", "nope"];

pub struct Toml {
    catalog: Vec<(String, Vec<u8>)>,
    workloads: Vec<(String, Vec<u8>)>,
}

impl Toml {
    pub fn new(root: &Path) -> Toml {
        let catalog = corpus(&root.join("assets/hardware"), &["toml"]);
        let workloads = corpus(&root.join("assets/workloads"), &["toml"]);
        assert!(!catalog.is_empty() && !workloads.is_empty());
        Toml { catalog, workloads }
    }
}

/// `text` with the value of one `key = value` line replaced, or a key spoilt.
fn hostile(rng: &mut Rng, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let candidates: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(" = ") && !lines[i].trim_start().starts_with('#'))
        .collect();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for _ in 0..1 + rng.below(3) {
        if candidates.is_empty() {
            break;
        }
        let i = *rng.pick(&candidates);
        let (key, _) = out[i].split_once(" = ").unwrap_or(("x", ""));
        let key = key.to_string();
        out[i] = match rng.below(6) {
            0 => format!("\"{key}\u{2028}\" = 1"),
            1 => format!("{key} = {}\n{key} = 1", rng.pick(HOSTILE_VALUES)),
            _ => format!("{key} = {}", rng.pick(HOSTILE_VALUES)),
        };
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

fn thresholds(rng: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(3) {
        s.push_str(&format!(
            "{} = {}\n",
            rng.pick(THRESHOLD_KEYS),
            rng.pick(HOSTILE_VALUES)
        ));
    }
    if rng.below(2) == 0 {
        s.push_str("[efficiency]\n");
        for _ in 0..1 + rng.below(3) {
            let key = *rng.pick(EFFICIENCY_KEYS);
            let key = if rng.below(6) == 0 {
                format!("\"{key}\u{2028}x\"")
            } else {
                key.to_string()
            };
            s.push_str(&format!("{key} = {}\n", rng.pick(HOSTILE_VALUES)));
        }
    }
    s
}

impl Campaign for Toml {
    fn name(&self) -> &'static str {
        "toml"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let kind = rng.below(3);
        let (origin, text) = match kind {
            0 => {
                let (name, seed) = rng.pick(&self.catalog);
                (name.clone(), hostile(rng, &String::from_utf8_lossy(seed)))
            }
            1 => {
                let (name, seed) = rng.pick(&self.workloads);
                (name.clone(), hostile(rng, &String::from_utf8_lossy(seed)))
            }
            _ => ("thresholds".to_string(), thresholds(rng)),
        };
        let mut bytes = text.into_bytes();
        if rng.below(5) == 0 {
            let other = bytes.clone();
            bytes = mutate_bytes(rng, &other, &other);
        }
        let file = dir.join("case.toml");
        let _ = std::fs::write(&file, &bytes);
        let f = file.to_string_lossy().to_string();
        let args: Vec<&str> = match (kind, rng.below(2)) {
            (0, 0) => vec!["topo", "--catalog", &f],
            (0, _) => vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--catalog",
                &f,
                "--sizes",
                "64M",
            ],
            (1, _) => vec![
                "bench",
                "scaling",
                "--modeled",
                "--catalog",
                "h200-2x-sxm",
                "--workload",
                &f,
            ],
            _ => vec!["check", "--catalog", "h200-2x-sxm", "--thresholds", &f],
        };
        Case {
            args: args.into_iter().map(String::from).collect(),
            input: bytes,
            origin,
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        verdict_or_contract(case, o)?;
        no_bad_figures(o)
    }
}
