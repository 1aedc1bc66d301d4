//! `args`: hostile values for the flags of every subcommand — empty, `-`, option-looking,
//! `0,,1`, `gen5`, huge, negative, non-finite, terminal escapes, line separators, 10 KB words,
//! paths that are no file — on modeled catalog machines. Each must end with a result or one
//! line of error, with nothing a terminal acts on printed and no `NaN`/`inf` figure.

use std::path::Path;

use crate::xml::verdict_or_contract;
use crate::{Campaign, Case, Outcome, Rng, no_bad_figures};

/// Values a flag is given.
const VALUES: &[&str] = &[
    "",
    " ",
    "-",
    "--",
    "-1",
    "--help",
    "-oProxyCommand=x",
    "0",
    "0,,1",
    "0,1,",
    ",0",
    "0,0",
    "1,0",
    "all",
    "all,",
    "4294967296",
    "18446744073709551616",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "5e-324",
    "0x10",
    "１",
    "gen5",
    "gen5x16",
    "gen9x16",
    "gen4x3",
    "4K..1G",
    "1G..4K",
    "0K",
    "1T",
    "16E",
    "512M,,1G",
    "h2d,,d2h",
    "nope",
    "\u{1b}]0;pwned\u{7}",
    "\u{1b}[2J",
    "a\u{2028}b",
    "a\nb",
    "../../etc/passwd",
    "/dev/null",
    "/",
    "dgx-h100",
    "h200-2x-sxm",
    "resnet50",
    "weak",
    "json",
];

/// A subcommand and the flags whose values are varied; the rest of the command line fixed.
const COMMANDS: &[(&[&str], &[&str])] = &[
    (
        &["topo", "--catalog", "{catalog}"],
        &["--format", "--table", "--catalog"],
    ),
    (
        &["bench", "bandwidth", "--modeled", "--catalog", "{catalog}"],
        &[
            "--gpus",
            "--tests",
            "--sizes",
            "--iters",
            "--samples",
            "--pcie",
            "--catalog",
        ],
    ),
    (
        &[
            "bench",
            "collectives",
            "--modeled",
            "--catalog",
            "{catalog}",
        ],
        &[
            "--gpus", "--ops", "--algo", "--sizes", "--dtype", "--iters", "--warmup",
        ],
    ),
    (
        &["bench", "scaling", "--modeled", "--catalog", "{catalog}"],
        &[
            "--workload",
            "--gpus",
            "--mode",
            "--max-gpus",
            "--step-ms-1gpu",
            "--samples-per-s-1gpu",
        ],
    ),
    (
        &["check", "--catalog", "{catalog}"],
        &["--gpus", "--catalog", "--thresholds"],
    ),
    (
        &[
            "--bench",
            "--modeled",
            "--quick",
            "--catalog",
            "{catalog}",
            "--out",
            "{out}",
        ],
        &["--gpus", "--suite", "--catalog"],
    ),
    (&["compare", "{report}", "{report}"], &["--workload"]),
];

/// Values that some flag takes, so that a share of the cases runs through to figures.
const GOOD: &[&str] = &[
    "all",
    "0",
    "1",
    "0,1",
    "16",
    "json",
    "csv",
    "links",
    "weak",
    "strong",
    "resnet50",
    "512M",
    "4K..1M",
    "gen5x16",
    "h2d",
    "p2p_read_ce",
    "all_reduce",
    "nccl",
    "ring",
    "f32",
    "topology,bandwidth",
    "h200-2x-sxm",
];

const CATALOG: &[&str] = &["h200-2x-sxm", "dgx-h100", "hgx-a100"];

pub struct Args {
    report: String,
}

impl Args {
    pub fn new(root: &Path) -> Args {
        Args {
            report: root
                .join("assets/reports/h200-2x-sxm-2026-11-22.json")
                .to_string_lossy()
                .to_string(),
        }
    }
}

impl Campaign for Args {
    fn name(&self) -> &'static str {
        "args"
    }

    fn default_cases(&self) -> usize {
        2_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let (fixed, flags) = rng.pick(COMMANDS);
        let out = dir.join("out").to_string_lossy().to_string();
        let catalog = CATALOG[rng.below(CATALOG.len())];
        let mut args: Vec<String> = fixed
            .iter()
            .map(|a| {
                a.replace("{catalog}", catalog)
                    .replace("{out}", &out)
                    .replace("{report}", &self.report)
            })
            .collect();
        let mut shown = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let flag = *rng.pick(flags);
            let value = match rng.below(12) {
                0 => "w".repeat(10_000),
                1 => format!("{},{}", rng.pick(VALUES), rng.pick(VALUES)),
                2..=5 => rng.pick(GOOD).to_string(),
                _ => rng.pick(VALUES).to_string(),
            };
            // `--flag=value` keeps a value that starts with `-` a value.
            if rng.below(2) == 0 || value.starts_with('-') {
                args.push(format!("{flag}={value}"));
            } else {
                args.push(flag.to_string());
                args.push(value.clone());
            }
            shown.push(format!(
                "{flag} {:?}",
                value.chars().take(40).collect::<String>()
            ));
        }
        Case {
            args,
            input: Vec::new(),
            origin: shown.join(" "),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        verdict_or_contract(case, o)?;
        no_bad_figures(o)
    }
}
