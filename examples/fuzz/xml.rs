//! `xml`: `nvidia-smi -q -x` captures from `tests/data/` with entity tricks — an internal entity
//! used thousands of times, entities nested in entities, self-reference, external and parameter
//! entities, broken declarations — and byte mutations on top, through `topo --import` and
//! `check --import`. Each must end within the time limit with a result or one line of error
//! (roxmltree refuses the nesting; scalescope bounds what the references expand to).

use std::path::Path;

use crate::mutate::mutate_bytes;
use crate::{Campaign, Case, Outcome, Rng, contract, corpus, no_bad_figures};

pub struct Xml {
    seeds: Vec<(String, Vec<u8>)>,
}

impl Xml {
    pub fn new(root: &Path) -> Xml {
        let seeds = corpus(&root.join("tests/data"), &["xml"]);
        assert!(!seeds.is_empty(), "no -q -x capture in tests/data");
        Xml { seeds }
    }
}

/// An entity value: short text, a large run, markup, or references to the others.
fn value(rng: &mut Rng, names: &[String]) -> String {
    match rng.below(8) {
        0 | 6 | 7 => "H200".into(),
        1 => "x".repeat(1 + rng.below(60_000)),
        2 => "<gpu_name>a</gpu_name>".repeat(1 + rng.below(200)),
        3 if !names.is_empty() => {
            let r = format!("&{};", rng.pick(names));
            r.repeat(1 + rng.below(300))
        }
        4 if rng.below(4) == 0 => "\u{1b}]0;title\u{7}\u{2028}".into(),
        _ => String::new(),
    }
}

/// A DOCTYPE with an internal subset of hostile declarations, and the names it declares.
fn doctype(rng: &mut Rng) -> (String, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let mut decls = String::new();
    let count = 1 + rng.below(6);
    // At most one declaration of a hostile form, in half the cases: one broken declaration
    // spoils the file, and well-formed ones let the references be expanded and checked.
    let hostile = if rng.below(2) == 0 {
        Some(rng.below(count))
    } else {
        None
    };
    for i in 0..count {
        let name = format!("e{i}");
        let form = if hostile == Some(i) {
            rng.below(4)
        } else {
            4 + rng.below(2)
        };
        let decl = match form {
            0 => format!("<!ENTITY {name} SYSTEM \"file:///etc/passwd\">"),
            1 => format!("<!ENTITY % {name} \"{}\">", value(rng, &names)),
            2 => format!("<!ENTITY {name} \"&{name};\">"),
            3 => format!("<!ENTITY {name} \"{}", value(rng, &names)),
            4 => format!("<!ENTITY {name} '{}'>", value(rng, &names)),
            _ => format!("<!ENTITY {name} \"{}\">", value(rng, &names)),
        };
        decls.push_str(&decl);
        decls.push('\n');
        names.push(name);
    }
    (
        format!("<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\" [\n{decls}]>\n"),
        names,
    )
}

impl Campaign for Xml {
    fn name(&self) -> &'static str {
        "xml"
    }

    fn default_cases(&self) -> usize {
        1_500
    }

    fn case(&self, rng: &mut Rng, dir: &Path) -> Case {
        let (name, seed) = &self.seeds[rng.below(self.seeds.len())];
        let text = String::from_utf8_lossy(seed).to_string();
        let (dt, names) = doctype(rng);
        // Replace nvidia-smi's own DOCTYPE line, or add ours after the declaration.
        let mut out = String::new();
        let mut placed = false;
        for line in text.lines() {
            if line.starts_with("<!DOCTYPE") {
                if !placed {
                    out.push_str(&dt);
                    placed = true;
                }
                continue;
            }
            out.push_str(line);
            out.push('\n');
            if !placed && line.starts_with("<?xml") {
                out.push_str(&dt);
                placed = true;
            }
        }
        // References in element text: once, or thousands of times.
        let refs = match rng.below(3) {
            0 => 1,
            1 => 1 + rng.below(100),
            _ => 1 + rng.below(30_000),
        };
        let reference = format!("&{};", rng.pick(&names));
        let target = [
            "<product_name>",
            "<driver_version>",
            "<uuid>",
            "<minor_number>",
        ];
        let tag = *rng.pick(&target);
        if let Some(p) = out.find(tag) {
            out.insert_str(p + tag.len(), &reference.repeat(refs));
        }
        let mut bytes = out.into_bytes();
        if rng.below(4) == 0 {
            bytes = mutate_bytes(rng, &bytes, seed);
        }
        let file = dir.join(if rng.below(2) == 0 { name } else { "case.xml" });
        let _ = std::fs::write(&file, &bytes);
        let f = file.to_string_lossy().to_string();
        let args: Vec<&str> = match rng.below(3) {
            0 => vec!["topo", "--import", &f, "--format", "json"],
            1 => vec!["topo", "--import", &f],
            _ => vec!["check", "--import", &f],
        };
        Case {
            args: args.into_iter().map(String::from).collect(),
            input: bytes,
            origin: format!("from {name}, {refs} reference(s)"),
            ..Case::default()
        }
    }

    fn check(&self, case: &Case, _dir: &Path, o: &Outcome) -> Result<(), String> {
        verdict_or_contract(case, o)?;
        no_bad_figures(o)
    }
}

/// [`contract`], where `check` may also exit 3 (a FAIL verdict, not a broken contract): then
/// its output is held to the rest of the contract as a successful run's.
pub fn verdict_or_contract(case: &Case, o: &Outcome) -> Result<(), String> {
    if case.args.first().is_some_and(|a| a == "check") && o.code == Some(3) {
        return contract(&Outcome {
            code: Some(0),
            timed_out: o.timed_out,
            stdout: o.stdout.clone(),
            stderr: o.stderr.clone(),
        });
    }
    contract(o)
}
