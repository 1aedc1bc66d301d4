//! The layering of `src/`, as one table, checked against the code: every use of another
//! top-level folder (`crate::bench::…`, a `use crate::{a, b}` group, a `super::super::…` path that
//! leaves its folder, an intra-doc link `[`crate::…`]`) must be allowed by [`ALLOWED`]; the
//! folders form no cycle; no file in `src/` is over [`MAX_LINES`] lines. ARCHITECTURE.md draws
//! the same table, and names every file of `src/` (or its folder's `mod.rs` doc does).
//!
//! The scanner reads the code as text, without comments, strings and char literals, so that a
//! sentence or a message naming a layer is not a dependency. Doc comments count only for their
//! intra-doc links: rustdoc resolves those, so they break when the target moves, which makes them
//! a dependency like any import. `#[cfg(test)]` modules count too: a test reaching up a layer is
//! still an arrow pointing up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The one statement of the layering: each top-level folder (or file) of `src/` and the others
/// it may use. Anything not listed is forbidden. `lib.rs` and `main.rs` are the crate roots and
/// are not in it.
const ALLOWED: &[(&str, &[&str])] = &[
    // Plain data: depends on nothing.
    ("model", &[]),
    // The bounded line reader shared by the framework runs and the ssh client.
    ("lines", &[]),
    // Child processes with a time limit (the one wait loop).
    ("process", &[]),
    // Reading a file the user named: bounded, never waiting forever.
    ("input", &[]),
    // Writing a run's files: atomically, devices and FIFOs directly.
    ("output", &[]),
    // The GPU platform layer.
    ("cuda", &["model", "process"]),
    // Where a Topology comes from.
    ("topology", &["model", "cuda", "input"]),
    // The machine sampled over time: NVML threads beside a run and what they keep.
    ("telemetry", &["model", "topology", "input"]),
    // Measurements.
    ("bench", &["model", "cuda", "topology", "telemetry"]),
    // Scaling of workloads.
    (
        "scaling",
        &[
            "model",
            "cuda",
            "bench",
            "topology",
            "telemetry",
            "lines",
            "process",
            "input",
        ],
    ),
    // `scalescope check`.
    (
        "health",
        &["model", "bench", "topology", "telemetry", "input"],
    ),
    // Reports.
    (
        "report",
        &["model", "bench", "health", "scaling", "topology", "input"],
    ),
    // Results → bytes: report and below.
    ("export", &["model", "bench", "scaling", "health", "report"]),
    // The one report document (HTML, PNG, PDF): report and below.
    (
        "document",
        &["model", "topology", "health", "scaling", "report"],
    ),
    // One job API: report and below.
    (
        "job",
        &[
            "model",
            "topology",
            "telemetry",
            "bench",
            "scaling",
            "health",
            "report",
            "process",
        ],
    ),
    // The agent and the ssh client: job and below.
    (
        "remote",
        &["model", "topology", "report", "job", "lines", "process"],
    ),
    // Fleet acceptance: many nodes' reports judged together (report, document, export) and the
    // per-node work started through Slurm or ssh (job, remote).
    (
        "fleet",
        &[
            "model", "health", "report", "export", "document", "job", "remote", "process", "input",
            "output",
        ],
    ),
    // The desktop app: anything below but the platform layer; never the command line.
    (
        "ui",
        &[
            "model",
            "topology",
            "telemetry",
            "bench",
            "scaling",
            "health",
            "report",
            "export",
            "document",
            "job",
            "remote",
            "fleet",
            "output",
        ],
    ),
    // The command line: anything below but the app (main.rs, the crate root, opens the window).
    (
        "cli",
        &[
            "model",
            "topology",
            "telemetry",
            "bench",
            "scaling",
            "health",
            "report",
            "export",
            "document",
            "job",
            "remote",
            "fleet",
            "process",
            "input",
            "output",
        ],
    ),
];

/// The longest a file in `src/` may be.
const MAX_LINES: usize = 1500;

/// The app's shell: frame, menus and routing only; what it grows belongs in a module of `ui/`.
const APP_SHELL: &str = "src/ui/app.rs";

/// The longest the app shell may be.
const APP_SHELL_MAX_LINES: usize = 800;

/// One use of another top-level folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Use {
    file: String,
    line: usize,
    from: String,
    to: String,
}

/// The code of a Rust source without comments, string and char literals (replaced by nothing,
/// newlines kept so that line numbers stay), except the targets of intra-doc links
/// (`` [`crate::a::b`] `` or `[text](crate::a::b)`), which stay as code.
fn code_of(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let is_ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            let comment: String = c[i..end].iter().collect();
            if comment.starts_with("///") || comment.starts_with("//!") {
                for target in doc_link_targets(&comment) {
                    out.push(' ');
                    out.push_str(&target);
                    out.push(';');
                }
            }
            i = end;
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
        } else if ch == 'r'
            && (i == 0
                || !is_ident(c[i - 1])
                || (c[i - 1] == 'b' && (i < 2 || !is_ident(c[i - 2]))))
            && matches!(next, Some('"') | Some('#'))
        {
            // A raw string r"…" or r#"…"#, or an identifier starting with r followed by `#`
            // (never in this code base outside raw strings and raw identifiers).
            let hashes = c[i + 1..].iter().take_while(|&&x| x == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(ch);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < c.len() {
                if c[i] == '"'
                    && c[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&x| x == '#')
                        .count()
                        == hashes
                {
                    i += 1 + hashes;
                    break;
                }
                if c[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                let escaped = c[i] == '\\';
                if c[i] == '\n' || (escaped && c.get(i + 1) == Some(&'\n')) {
                    out.push('\n');
                }
                i += if escaped { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{…}'.
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if ch == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

/// The paths an intra-doc comment links to: `` [`path`] `` and `[text](path)`, when they start
/// with `crate::` or `super::`.
fn doc_link_targets(comment: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for (open, close) in [("[`", '`'), ("](", ')')] {
        let mut rest = comment;
        while let Some(p) = rest.find(open) {
            rest = &rest[p + open.len()..];
            let end = rest.find(close).unwrap_or(rest.len());
            let target = rest[..end].trim_end_matches("()").trim_end_matches('!');
            if (target.starts_with("crate::") || target.starts_with("super::"))
                && target
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == ':')
            {
                targets.push(target.to_string());
            }
        }
    }
    targets
}

/// The module path of a file under `src/`: `bench/cuda/measure.rs` → `[bench, cuda, measure]`,
/// `bench/mod.rs` → `[bench]`, `lines.rs` → `[lines]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    if last != "mod.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

/// The first identifier of each item of a `{…}` group starting at `s[0] == '{'`.
fn group_heads(s: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_item_start = true;
    let mut ident = String::new();
    for ch in s.chars() {
        match ch {
            '{' => {
                depth += 1;
                if depth == 1 {
                    at_item_start = true;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    if !ident.is_empty() {
                        heads.push(std::mem::take(&mut ident));
                    }
                    break;
                }
            }
            ',' if depth == 1 => {
                if !ident.is_empty() {
                    heads.push(std::mem::take(&mut ident));
                }
                at_item_start = true;
            }
            c if depth == 1 && at_item_start && (c.is_alphanumeric() || c == '_') => ident.push(c),
            c if depth == 1 && at_item_start && c.is_whitespace() && ident.is_empty() => {}
            _ => {
                if depth == 1 && at_item_start {
                    at_item_start = false;
                    if !ident.is_empty() {
                        heads.push(std::mem::take(&mut ident));
                    }
                }
            }
        }
    }
    heads
        .into_iter()
        .filter(|h| h != "self" && h != "super" && h != "crate")
        .collect()
}

/// Every module path the code of `rel` (relative to `src/`, text `src`) names through `crate::`
/// or `super::`, resolved from the crate root, with its line: `super::live::Frame` in
/// `ui/topology_view.rs` is `[ui, live, Frame]`; a `{…}` group gives one path per item's head.
fn paths_in(rel: &str, src: &str) -> Vec<(usize, Vec<String>)> {
    let module = module_path(rel);
    let code = code_of(src);
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    // Brace depths at which inline `mod name {` bodies opened.
    let mut inline_mods: Vec<usize> = Vec::new();
    let mut pending_mod = false;
    let ident_before =
        |i: usize| i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let b = bytes[i];
        if b == b'\n' {
            line += 1;
        } else if b == b'{' {
            depth += 1;
            if pending_mod {
                inline_mods.push(depth);
                pending_mod = false;
            }
        } else if b == b'}' {
            if inline_mods.last() == Some(&depth) {
                inline_mods.pop();
            }
            depth = depth.saturating_sub(1);
        } else if b == b';' {
            pending_mod = false;
        } else if !ident_before(i) && rest.starts_with("mod ") {
            pending_mod = true;
        }
        let not_inner = !(ident_before(i) || (i > 0 && bytes[i - 1] == b':'));
        if not_inner && rest.starts_with("crate::") {
            for tail in segments_at(&rest["crate::".len()..]) {
                found.push((line, tail));
            }
        } else if not_inner && rest.starts_with("super::") {
            let mut k = 0usize;
            let mut after = rest;
            while let Some(r) = after.strip_prefix("super::") {
                k += 1;
                after = r.trim_start();
            }
            // Supers that only leave inline modules (`mod tests`) stay in this file.
            let up = k.saturating_sub(inline_mods.len());
            if k > inline_mods.len() && up <= module.len() {
                let base = &module[..module.len() - up];
                for tail in segments_at(after) {
                    found.push((line, base.iter().cloned().chain(tail).collect()));
                }
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    found
}

/// The paths that start at `s`: `a::b::C` → `[[a, b, C]]`; `a::{b, c::D}` → `[[a, b], [a, c]]`.
fn segments_at(s: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut s = s.trim_start();
    loop {
        if s.starts_with('{') {
            return group_heads(s)
                .into_iter()
                .map(|h| segs.iter().cloned().chain([h]).collect())
                .collect();
        }
        let ident: String = s
            .chars()
            .take_while(|ch| ch.is_alphanumeric() || *ch == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        s = s[ident.len()..].trim_start();
        segs.push(ident);
        match s.strip_prefix("::") {
            Some(r) => s = r.trim_start(),
            None => break,
        }
    }
    if segs.is_empty() {
        Vec::new()
    } else {
        vec![segs]
    }
}

/// Every use of another top-level name of `src/` in the file `rel` (relative to `src/`), whose
/// text is `src`. `tops` are the top-level names of `src/`.
fn uses_in(rel: &str, src: &str, tops: &BTreeSet<String>) -> Vec<Use> {
    let folder = module_path(rel)[0].clone();
    paths_in(rel, src)
        .into_iter()
        .filter_map(|(line, path)| {
            let to = path.first()?.clone();
            (tops.contains(&to) && to != folder).then(|| Use {
                file: format!("src/{rel}"),
                line,
                from: folder.clone(),
                to,
            })
        })
        .collect()
}

/// The members of the folders on the way to the file `rel` that it uses (`super::live::…`,
/// `crate::ui::views::live::…`), one set per folder: the folder `module[..k]` (`k ≥ 1`) gets the
/// members other than the file's own `module[k]` that it names, `members` giving each folder's
/// files and subfolders by module name. A file in a subfolder speaks for that subfolder in the
/// folders above: `ui/views/live/mod.rs` naming `super::super::saving` is `views → saving` in
/// `ui/`.
fn member_uses(
    rel: &str,
    src: &str,
    members: &BTreeMap<Vec<String>, BTreeSet<String>>,
) -> Vec<(Vec<String>, String, BTreeSet<String>)> {
    let module = module_path(rel);
    let paths = paths_in(rel, src);
    (1..module.len())
        .map(|k| {
            let (folder, own) = (&module[..k], &module[k]);
            let empty = BTreeSet::new();
            let names = members.get(folder).unwrap_or(&empty);
            let used = paths
                .iter()
                .filter_map(|(_, path)| {
                    let next = path.strip_prefix(folder)?.first()?;
                    (next != own && names.contains(next)).then(|| next.clone())
                })
                .collect();
            (folder.to_vec(), own.clone(), used)
        })
        .collect()
}

/// The uses that [`ALLOWED`] does not allow, as readable lines.
fn violations(uses: &[Use], allowed: &[(&str, &[&str])]) -> Vec<String> {
    let table: BTreeMap<&str, &[&str]> = allowed.iter().copied().collect();
    uses.iter()
        .filter(|u| {
            table
                .get(u.from.as_str())
                .is_none_or(|ok| !ok.contains(&u.to.as_str()))
        })
        .map(|u| {
            format!(
                "{}:{}: {} → {} is not allowed",
                u.file, u.line, u.from, u.to
            )
        })
        .collect()
}

/// A cycle in `edges`, as the folders along it (first = last), if there is one.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(2) => return None,
            Some(1) => {
                let start = stack.iter().position(|s| s == n).unwrap_or(0);
                let mut cycle = stack[start..].to_vec();
                cycle.push(n.to_string());
                return Some(cycle);
            }
            _ => {}
        }
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, state, stack) {
                return Some(c);
            }
        }
        stack.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

/// The groups of nodes of `edges` that reach each other (its strongly connected components of
/// more than one node), each sorted.
fn tangles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|n| (n, reach(n))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (n, r) in &reached {
        let group: Vec<String> = r
            .iter()
            .filter(|m| reached.get(m).is_some_and(|back| back.contains(*n)))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as (path relative to `src/` with `/`, text).
fn rust_files(dir: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(src_dir()).unwrap();
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// The crate's top-level names: folders and files of `src/` other than the roots.
fn top_level_names(files: &[(String, String)]) -> BTreeSet<String> {
    files
        .iter()
        .map(|(rel, _)| module_path(rel)[0].clone())
        .filter(|n| n != "lib" && n != "main")
        .collect()
}

fn uses_of_src() -> (Vec<(String, String)>, Vec<Use>) {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let tops = top_level_names(&files);
    let uses = files
        .iter()
        .filter(|(rel, _)| rel != "lib.rs" && rel != "main.rs")
        .flat_map(|(rel, text)| uses_in(rel, text, &tops))
        .collect();
    (files, uses)
}

fn graph(pairs: impl Iterator<Item = (String, String)>) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in pairs {
        g.entry(from).or_default().insert(to);
    }
    g
}

#[test]
fn every_use_between_folders_follows_the_table() {
    let (files, uses) = uses_of_src();
    assert!(files.len() > 50, "read only {} files", files.len());
    // The scan must see the arrows everyone knows are there, or it sees nothing.
    for (from, to) in [("bench", "model"), ("cli", "job"), ("scaling", "bench")] {
        assert!(
            uses.iter().any(|u| u.from == from && u.to == to),
            "the scan found no {from} → {to}"
        );
    }
    let bad = violations(&uses, ALLOWED);
    assert!(
        bad.is_empty(),
        "uses that point the wrong way (the table is ALLOWED in tests/architecture.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_table_grants_only_what_the_code_uses() {
    // A grant nobody uses is a door left open: the table states the layering as it is.
    let (_, uses) = uses_of_src();
    let used: BTreeSet<(&str, &str)> = uses
        .iter()
        .map(|u| (u.from.as_str(), u.to.as_str()))
        .collect();
    let unused: Vec<String> = ALLOWED
        .iter()
        .flat_map(|(from, tos)| tos.iter().map(move |to| (*from, *to)))
        .filter(|pair| !used.contains(pair))
        .map(|(from, to)| format!("{from} → {to}"))
        .collect();
    assert!(
        unused.is_empty(),
        "ALLOWED grants what no code uses (remove them here and in ARCHITECTURE.md):\n{}",
        unused.join("\n")
    );
}

#[test]
fn every_folder_has_a_row_in_the_table() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let listed: BTreeSet<&str> = ALLOWED.iter().map(|(n, _)| *n).collect();
    let missing: Vec<String> = top_level_names(&files)
        .into_iter()
        .filter(|n| !listed.contains(n.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "say what these may use in ALLOWED (and ARCHITECTURE.md): {missing:?}"
    );
}

#[test]
fn there_is_no_cycle_between_folders() {
    let table = graph(
        ALLOWED
            .iter()
            .flat_map(|(from, tos)| tos.iter().map(|to| (from.to_string(), to.to_string()))),
    );
    assert_eq!(find_cycle(&table), None, "the table itself has a cycle");
    let (_, uses) = uses_of_src();
    let found = graph(uses.into_iter().map(|u| (u.from, u.to)));
    assert_eq!(
        find_cycle(&found),
        None,
        "the code has a cycle between folders"
    );
}

/// Each folder of `src/` (by module path) → its members (files and subfolders, by module name)
/// → the members each uses, from `files` (path relative to `src/`, text). A subfolder's uses are
/// those of every file under it, its `mod.rs` included, so that a circle through subfolders
/// (`ui/saving.rs` ↔ `ui/views/live/mod.rs`) shows in the folder where its files meet. A
/// folder's own `mod.rs` is none of its members: it declares them.
fn member_graphs(
    files: &[(String, String)],
) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut members: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    for (rel, _) in files {
        let parts: Vec<String> = rel.split('/').map(str::to_string).collect();
        // Every folder on the way holds the next part as a module (a file or a subfolder).
        for k in 0..parts.len() {
            let name = parts[k].trim_end_matches(".rs").to_string();
            if name != "mod" && name != "lib" && name != "main" {
                members.entry(parts[..k].to_vec()).or_default().insert(name);
            }
        }
    }
    let mut graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (rel, text) in files {
        for (folder, own, uses) in member_uses(rel, text, &members) {
            graphs
                .entry(folder.join("/"))
                .or_default()
                .entry(own)
                .or_default()
                .extend(uses);
        }
    }
    graphs
}

/// The circles of [`member_graphs`], one line per folder and group of members.
fn member_cycles(files: &[(String, String)]) -> Vec<String> {
    member_graphs(files)
        .iter()
        .flat_map(|(folder, g)| {
            tangles(g)
                .into_iter()
                .map(move |t| format!("src/{folder}/: {}", t.join(", ")))
        })
        .collect()
}

/// The uses behind the circles of [`member_graphs`]: within each group, which file makes each
/// arrow (`src/ui/: saving → views by ui/saving.rs`).
fn member_cycle_uses(files: &[(String, String)]) -> Vec<String> {
    let graphs = member_graphs(files);
    let in_circle: BTreeSet<(String, String)> = graphs
        .iter()
        .flat_map(|(folder, g)| {
            tangles(g)
                .into_iter()
                .flatten()
                .map(|m| (folder.clone(), m))
        })
        .collect();
    // Each folder's members as the graphs hold them: every member uses something, if only
    // nothing, so each is a key.
    let members: BTreeMap<Vec<String>, BTreeSet<String>> = graphs
        .iter()
        .map(|(folder, g)| {
            let key = folder.split('/').map(str::to_string).collect();
            (key, g.keys().cloned().collect())
        })
        .collect();
    let mut lines = Vec::new();
    for (rel, text) in files {
        for (folder, own, uses) in member_uses(rel, text, &members) {
            let folder = folder.join("/");
            for to in uses {
                let both = [&own, &to]
                    .iter()
                    .all(|m| in_circle.contains(&(folder.clone(), m.to_string())));
                if both {
                    lines.push(format!("src/{folder}/: {own} → {to} by src/{rel}"));
                }
            }
        }
    }
    lines
}

/// The circles between files the check knows of, each with what closes it: the list only
/// shrinks, and is empty since 2026-11-28 (the two it began with were closed by an intra-doc link
/// alone — a link is a dependency: it breaks when its target moves — and are plain words now).
const KNOWN_CYCLES: &[(&str, &str)] = &[];

#[test]
fn the_files_of_a_folder_form_no_cycle() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let graphs = member_graphs(&files);
    assert!(
        graphs
            .get("ui")
            .is_some_and(|g| g.get("views").is_some_and(|u| !u.is_empty())),
        "the scan found no use from ui/views/ of the files of ui/"
    );
    let cycles = member_cycles(&files);
    let known: BTreeSet<&str> = KNOWN_CYCLES.iter().map(|(c, _)| *c).collect();
    let new: Vec<&str> = cycles
        .iter()
        .map(String::as_str)
        .filter(|c| !known.contains(c))
        .collect();
    assert!(
        new.is_empty(),
        "files of one folder, or of its subfolders, that use each other (move what both need \
         into one of them, or a third file):\n{}\nthrough:\n{}",
        new.join("\n"),
        member_cycle_uses(&files).join("\n")
    );
    let gone: Vec<&str> = known
        .into_iter()
        .filter(|k| !cycles.iter().any(|c| c == k))
        .collect();
    assert!(
        gone.is_empty(),
        "these circles are gone or changed: take them out of KNOWN_CYCLES:\n{}",
        gone.join("\n")
    );
}

/// The cycle check itself, on made-up sources: a circle between two files of one folder, and
/// one between a file and a file deep in a subfolder, in either spelling of the path.
#[test]
fn the_file_cycle_check_sees_into_subfolders() {
    let files = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(rel, text)| (rel.to_string(), text.to_string()))
            .collect()
    };
    let base = [
        ("ui/mod.rs", "mod saving;\nmod views;\nmod widgets;\n"),
        ("ui/widgets.rs", "pub struct Badge;\n"),
        ("ui/views/mod.rs", "pub mod live;\n"),
        (
            "ui/views/live/draw.rs",
            "use super::super::super::widgets::Badge;\n",
        ),
    ];
    // The base with `extra`'s files added, or in place of the base's file of that name.
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut all: Vec<_> = base
            .iter()
            .filter(|(rel, _)| extra.iter().all(|(e, _)| e != rel))
            .copied()
            .collect();
        all.extend_from_slice(extra);
        files(&all)
    };

    // Into a subfolder and back out, through its mod.rs: by `crate::` or by `super::`.
    let saving = ("ui/saving.rs", "use super::views::live::Frame;\n");
    for back in [
        "use crate::ui::saving::recording;\n",
        "pub fn f() { super::super::saving::recording(); }\n",
    ] {
        let cycles = member_cycles(&with(&[saving, ("ui/views/live/mod.rs", back)]));
        assert_eq!(cycles, ["src/ui/: saving, views"], "{back}");
    }
    // From a file deeper down, named through the subfolder's module.
    let deep = (
        "ui/views/live/draw.rs",
        "use crate::ui::{saving, widgets::Badge};\n",
    );
    let cycles = member_cycles(&with(&[saving, ("ui/views/live/mod.rs", ""), deep]));
    assert_eq!(cycles, ["src/ui/: saving, views"]);
    // Two files of one folder, as before.
    let pair = [
        ("ui/views/live/mod.rs", "use super::draw::Frame;\n"),
        (
            "ui/views/live/draw.rs",
            "use super::Live;\nuse super::mod_free::X;\n",
        ),
        ("ui/views/live/sparkline.rs", "use super::draw::Frame;\n"),
        ("ui/views/live/mod_free.rs", "use super::sparkline::S;\n"),
    ];
    let cycles = member_cycles(&with(&pair));
    assert_eq!(cycles, ["src/ui/views/live/: draw, mod_free, sparkline"]);

    // One way only, and a subfolder using its parent's shared files: no circle.
    let one_way = [
        saving,
        ("ui/views/live/mod.rs", "use crate::ui::widgets::Badge;\n"),
    ];
    assert_eq!(member_cycles(&with(&one_way)), Vec::<String>::new());
}

/// Files that hold a pure step: data in, data out, no file read or written and no clock read
/// (`fleet/judge.rs` is handed the time it stamps), each with why it is pure.
const PURE_FILES: &[(&str, &str)] = &[
    (
        "src/fleet/judge.rs",
        "fleet report's judging: read.rs reads, files.rs makes the bytes",
    ),
    (
        "src/fleet/files.rs",
        "fleet report's files as bytes: fleet::report and the command line write them",
    ),
    (
        "src/fleet/finding.rs",
        "a finding and the outlier rule, shared by both judges",
    ),
];

/// What a pure file may not name: file, process, network and environment access, this crate's
/// readers and writers, the clock, the terminal.
const IMPURE: &[&str] = &[
    "std::fs",
    "fs::",
    "File::",
    "read_dir",
    "crate::input",
    "crate::output",
    "SystemTime::now",
    "Instant::now",
    "std::env",
    "std::process",
    "std::net",
    "println!",
    "eprintln!",
    "stderr_line!",
    "stdout_line!",
];

#[test]
fn pure_files_do_no_io() {
    let mut found = Vec::new();
    for (path, why) in PURE_FILES {
        let text = std::fs::read_to_string(src_dir().join(path.trim_start_matches("src/")))
            .unwrap_or_else(|e| panic!("{path} is listed as pure but cannot be read: {e}"));
        let code = code_of(&text);
        for word in IMPURE {
            if code.contains(word) {
                found.push(format!("{path} names {word}, but it is pure ({why})"));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_file_in_src_is_over_the_limit() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut long = Vec::new();
    for (rel, text) in &files {
        let path = format!("src/{rel}");
        let lines = text.lines().count();
        let limit = match path == APP_SHELL {
            true => APP_SHELL_MAX_LINES,
            false => MAX_LINES,
        };
        if lines > limit {
            long.push(format!(
                "{path}: {lines} lines (at most {limit}; split it by a name)"
            ));
        }
    }
    assert!(
        files
            .iter()
            .any(|(rel, _)| format!("src/{rel}") == APP_SHELL),
        "{APP_SHELL} is gone: name the app shell's file in APP_SHELL"
    );
    assert!(long.is_empty(), "{}", long.join("\n"));
}

/// The longest a function in `src/` may be, in lines (signature to closing brace).
const MAX_FN_LINES: usize = 100;

/// Every function in `src/` over [`MAX_FN_LINES`], as (file, name, lines): `file:name` keys;
/// where a file has two of one name, the longer.
fn long_functions() -> BTreeMap<String, usize> {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut long = BTreeMap::new();
    for (rel, text) in &files {
        for (name, lines) in function_lengths(&code_of(text)) {
            if lines > MAX_FN_LINES {
                let e = long.entry(format!("src/{rel}:{name}")).or_insert(0);
                *e = (*e).max(lines);
            }
        }
    }
    long
}

/// Each function with a body in `code` (comments and strings already removed): its name and
/// its lines, from the line of `fn` to the line of its closing brace.
fn function_lengths(code: &str) -> Vec<(String, usize)> {
    let b = code.as_bytes();
    let line_at = |i: usize| code[..i].bytes().filter(|&c| c == b'\n').count();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("fn ") {
        let at = i + p;
        i = at + 3;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let name: String = code[i..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration without a body).
        let Some(open) = code[i..].find(['{', ';']).map(|q| i + q) else {
            break;
        };
        if b[open] == b';' {
            continue;
        }
        let mut depth = 0usize;
        let mut end = open;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, line_at(end) - line_at(at) + 1));
    }
    out
}

/// The functions over [`MAX_FN_LINES`] allowed to stay so, with their lines: 56 on 2026-11-27,
/// none since 2026-11-28. A function here may not grow; one not here may not pass the limit.
const LONG_FUNCTIONS: &[(&str, usize)] = &[];

#[test]
fn no_function_grows_past_the_limit() {
    let long = long_functions();
    assert!(
        !long.is_empty() || LONG_FUNCTIONS.is_empty(),
        "the scan found nothing"
    );
    let known: BTreeMap<&str, usize> = LONG_FUNCTIONS.iter().copied().collect();
    let mut bad = Vec::new();
    for (key, &lines) in &long {
        match known.get(key.as_str()) {
            None => bad.push(format!(
                "{key}: {lines} lines (at most {MAX_FN_LINES}: split it by what its parts do)"
            )),
            Some(&was) if lines > was => bad.push(format!(
                "{key}: {lines} lines, {was} when it was listed: it may only shrink"
            )),
            _ => {}
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The checker itself, on made-up sources: it must fail on an upward import in any of its forms,
/// and pass what is allowed.
#[test]
fn the_checker_catches_an_upward_import() {
    let tops: BTreeSet<String> = ["model", "cuda", "bench", "report", "ui", "cli", "topology"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let model = r##"//! Plain data. Mentions crate::ui in prose, which is no dependency.
use crate::ui::App;
/// Drawn by [`crate::cli::run`].
pub struct Gpu;
// crate::report in a comment is prose too.
const S: &str = "crate::report";
const R: &str = r#"crate::bench"#;
const C: char = '"';
fn f() -> crate::topology::Topology { todo!() }
"##;
    let uses = uses_in("model/gpu.rs", model, &tops);
    let to: Vec<(&str, usize)> = uses.iter().map(|u| (u.to.as_str(), u.line)).collect();
    assert_eq!(to, [("ui", 2), ("cli", 3), ("topology", 9)]);
    assert_eq!(violations(&uses, ALLOWED).len(), 3);

    // A `use crate::{…}` group: each item's head counts.
    let grouped = "use crate::{\n    model::Gpu,\n    bench::{Plan, Case},\n};\n";
    let uses = uses_in("cuda/memory.rs", grouped, &tops);
    let to: Vec<&str> = uses.iter().map(|u| u.to.as_str()).collect();
    assert_eq!(to, ["model", "bench"]);
    assert_eq!(
        violations(&uses, ALLOWED),
        ["src/cuda/memory.rs:1: cuda → bench is not allowed"]
    );

    // `super::super` that leaves the folder counts; one that stays inside does not, also
    // from inside an inline module.
    let supers = "use super::super::cases::Case;\nuse super::super::super::report::Report;\n\
                  mod tests {\n    use super::super::super::super::ui::App;\n    use super::super::super::Case;\n}\n";
    let uses = uses_in("bench/cuda/measure.rs", supers, &tops);
    let to: Vec<(&str, usize)> = uses.iter().map(|u| (u.to.as_str(), u.line)).collect();
    assert_eq!(to, [("report", 2), ("ui", 4)]);
    assert_eq!(violations(&uses, ALLOWED).len(), 2);

    // What the table allows passes.
    let fine = "use crate::model::Topology;\nuse crate::{cuda, topology::import};\n";
    assert!(violations(&uses_in("bench/plan.rs", fine, &tops), ALLOWED).is_empty());
}

#[test]
fn the_function_scan_measures_bodies() {
    let src = "trait T {\n    fn declared(&self);\n}\nfn short() {\n    let s = \"fn inside() {\";\n}\n\
               impl X {\n    pub fn method(&self) -> u8 {\n        if true { 1 } else { 2 }\n    }\n}\n";
    let found = function_lengths(&code_of(src));
    assert_eq!(found, [("short".to_string(), 3), ("method".to_string(), 3)]);
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let g = graph(
        [
            ("ui", "health"),
            ("health", "topology"),
            ("topology", "ui"),
            ("cli", "ui"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string())),
    );
    let cycle = find_cycle(&g).expect("a cycle");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
    let acyclic = graph(
        [("ui", "health"), ("health", "topology"), ("cli", "ui")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string())),
    );
    assert_eq!(find_cycle(&acyclic), None);
}

/// Whether `text` names `name` as a word of its own: not as the tail of a longer name
/// (`run.rs` is not named by `fleet_run.rs`, nor `deep.rs` by `build/deep.rs`).
fn names(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        !text[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '/')
    })
}

/// The section of `map` about `src/{top}/` (from its `## ` heading to the next); `None` where
/// the map has none.
fn section<'m>(map: &'m str, top: &str) -> Option<&'m str> {
    let head = format!("`src/{top}/`");
    map.split("\n## ")
        .find(|s| s.lines().next().is_some_and(|h| h.contains(&head)))
}

/// The files of `src/` that `map` (ARCHITECTURE.md) does not name: a file of a folder must be
/// named as a word of its own in that folder's section, with each subfolder on its path named
/// there too (`build/`); a file at the top of `src/` anywhere. A folder's `mod.rs` module doc
/// may name its files by path instead (`cli/mod.rs` does). The roots and the `mod.rs` files are
/// their folders' sections. A reader finds every file from the map.
fn unmapped(files: &[(String, String)], map: &str) -> Vec<String> {
    let module_doc = |folder: &str| -> String {
        let rel = format!("{folder}/mod.rs");
        files
            .iter()
            .find(|(r, _)| *r == rel)
            .map(|(_, text)| {
                text.lines()
                    .filter(|l| l.trim_start().starts_with("//!"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    let mapped = |rel: &str| -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        let Some((name, folders)) = parts.split_last() else {
            return false;
        };
        let Some((top, subs)) = folders.split_first() else {
            return names(map, name);
        };
        // Named by a path that ends in its subfolder (`collectives/own.rs`), or by its name with
        // every subfolder on its way named (`views/` … `tabs.rs`).
        let named_in = |sec: &str| {
            let by_path =
                (0..subs.len()).any(|i| names(sec, &format!("{}/{name}", subs[i..].join("/"))));
            let folders_named = (0..subs.len())
                .all(|k| (0..=k).any(|i| names(sec, &format!("{}/", subs[i..=k].join("/")))));
            by_path || (names(sec, name) && folders_named)
        };
        let in_section = section(map, top).is_some_and(named_in);
        in_section || module_doc(&folders.join("/")).contains(&format!("src/{rel}"))
    };
    files
        .iter()
        .map(|(rel, _)| rel)
        .filter(|rel| !matches!(rel.as_str(), "lib.rs" | "main.rs") && !rel.ends_with("/mod.rs"))
        .filter(|rel| !mapped(rel))
        .cloned()
        .collect()
}

#[test]
fn every_source_file_is_named_in_the_map() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let map =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let missing = unmapped(&files, &map);
    assert!(
        missing.is_empty(),
        "name these files in ARCHITECTURE.md (or in their folder's mod.rs doc), with what they hold: {missing:?}"
    );
    // The check itself: a file named nowhere is reported; one its mod.rs doc names is not.
    let made_up = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(r, t)| (r.to_string(), t.to_string()))
            .collect()
    };
    let tree = made_up(&[
        (
            "cli/mod.rs",
            "//! `src/cli/listed.rs` does this.\nmod listed;\n",
        ),
        ("cli/listed.rs", ""),
        ("model/hidden.rs", ""),
        ("model/mapped.rs", ""),
        ("model/run.rs", ""),
        ("document/build/health.rs", ""),
        ("health/deep.rs", ""),
    ]);
    let map = "# Map\n## `src/model/` — data\n`mapped.rs` holds …, `fleet_run.rs` …\n\
               ## `src/document/` — pages\n`health.rs` …\n\
               ## `src/health/` — checks\n`build/deep.rs` …\n";
    // Not named; named only as the tail of another name; named without its subfolder; named
    // only after another folder's path.
    assert_eq!(
        unmapped(&tree, map),
        [
            "model/hidden.rs",
            "model/run.rs",
            "document/build/health.rs",
            "health/deep.rs"
        ]
    );
}

/// `eprintln!` and `println!` panic (exit 101, a run's measurements lost) when their stream is
/// a pipe nobody reads any more; every line goes through `stderr_line!` / `stdout_line!`, which
/// lose the line instead.
#[test]
fn nothing_writes_standard_error_with_a_macro_that_panics() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let found: Vec<String> = files
        .iter()
        .filter(|(_, text)| {
            code_of(text).contains("eprintln!") || code_of(text).contains("eprint!")
        })
        .map(|(rel, _)| format!("src/{rel}"))
        .collect();
    assert!(
        found.is_empty(),
        "print macros in {found:?}: use stderr_line! / stdout_line!"
    );
}
