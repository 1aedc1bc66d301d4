//! The first two campaigns: mutated `nvidia-smi` captures from `tests/data/` through `topo
//! --import` and the modeled bandwidth bench, and mutated reports from `assets/reports/` through
//! `compare`.

use std::path::Path;

use crate::mutate::{mutate_bytes, mutate_json};
use crate::{Campaign, Case, Outcome, Rng, contract, corpus, no_bad_figures};

/// Mutated captures: `topo --import` (table, CSV, JSON) and `bench bandwidth --modeled --import`.
pub struct Captures {
    seeds: Vec<(String, Vec<u8>)>,
}

impl Captures {
    pub fn new(root: &Path) -> Captures {
        let seeds = corpus(&root.join("tests/data"), &["txt", "csv"]);
        assert!(!seeds.is_empty(), "no capture in tests/data");
        Captures { seeds }
    }
}

impl Campaign for Captures {
    fn name(&self) -> &'static str {
        "captures"
    }

    fn default_cases(&self) -> usize {
        20_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let (name, seed) = &self.seeds[rng.below(self.seeds.len())];
        let other = &self.seeds[rng.below(self.seeds.len())].1;
        let bytes = mutate_bytes(rng, seed, other);
        // File names that still say what the file is (p2p-r, mp) half the time.
        let file = if rng.below(2) == 0 {
            dir.join(name)
        } else {
            dir.join("case.txt")
        };
        let _ = std::fs::write(&file, &bytes);
        let f = file.to_string_lossy().to_string();
        let args: Vec<&str> = match rng.below(4) {
            0 => vec!["topo", "--import", &f, "--format", "csv"],
            1 => vec!["topo", "--import", &f, "--format", "json"],
            2 => vec!["topo", "--import", &f],
            _ => vec![
                "bench",
                "bandwidth",
                "--modeled",
                "--import",
                &f,
                "--tests",
                "p2p_read_ce,h2d",
                "--sizes",
                "64M",
            ],
        };
        Case {
            args: args.into_iter().map(String::from).collect(),
            input: bytes,
            origin: format!("from {name}"),
            ..Case::default()
        }
    }
}

/// Mutated reports compared with the first bundled report, either way round.
pub struct Reports {
    seeds: Vec<(String, Vec<u8>)>,
}

impl Reports {
    pub fn new(root: &Path) -> Reports {
        let seeds = corpus(&root.join("assets/reports"), &["json"]);
        assert!(!seeds.is_empty(), "no report in assets/reports");
        Reports { seeds }
    }
}

impl Campaign for Reports {
    fn name(&self) -> &'static str {
        "reports"
    }

    fn default_cases(&self) -> usize {
        5_000
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let (name, seed) = &self.seeds[rng.below(self.seeds.len())];
        let other = &self.seeds[rng.below(self.seeds.len())].1;
        let bytes = mutate_json(rng, seed, other);
        let reference = dir.join("reference.json");
        let _ = std::fs::write(&reference, &self.seeds[0].1);
        let file = if rng.below(2) == 0 {
            dir.join(name)
        } else {
            dir.join("case.json")
        };
        let _ = std::fs::write(&file, &bytes);
        let (f, r) = (
            file.to_string_lossy().to_string(),
            reference.to_string_lossy().to_string(),
        );
        let args = if rng.below(4) == 0 {
            vec!["compare".to_string(), r, f, "--csv".to_string()]
        } else {
            vec!["compare".to_string(), f, r]
        };
        Case {
            args,
            input: bytes,
            origin: format!("from {name}"),
            ..Case::default()
        }
    }

    fn check(&self, _case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        contract(o)?;
        no_bad_figures(o)
    }
}
