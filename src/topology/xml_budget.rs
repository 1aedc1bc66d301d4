//! A bound on what the entities of an XML capture expand to, checked before the XML is parsed.
//!
//! `nvidia-smi -q -x` declares no entities (its DOCTYPE only names its DTD file), but a file
//! named as a capture can. roxmltree refuses external entities and deep nesting (billion laughs),
//! yet an internal entity used many times at the top level is expanded each time: a 213 KB file
//! using a large entity 20,000 times asked for 2 GB. This module adds up what every reference
//! to a declared entity would expand to, nested references included, and refuses the file when
//! the sum passes [`EXPANDED_MAX`].

use std::collections::BTreeMap;

/// The most bytes all entity references of one capture may expand to. A real capture expands
/// none; 1 MiB is ~5 × a whole 8-GPU `-q -x` capture, room for any hand-edited file.
pub const EXPANDED_MAX: u64 = 1 << 20;

/// Why the entities of a file are refused: a message and the 1-based line of the reference that
/// passed the budget (or of the DOCTYPE).
#[derive(Debug, PartialEq)]
pub struct Refused {
    /// The line the error points at.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Checks `text`'s entity references against [`EXPANDED_MAX`]; `Ok` when it declares none.
pub fn check(text: &str) -> Result<(), Refused> {
    let Some(subset) = internal_subset(text) else {
        return Ok(());
    };
    let decls = declarations(&text[subset.clone()]);
    if decls.is_empty() {
        return Ok(());
    }
    let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0u64;
    let body_start = subset.end;
    let line_at = |at: usize| 1 + text[..at].matches('\n').count();
    for (at, name) in references(&text[body_start..]) {
        let Some(size) = expanded_size(name, &decls, &mut sizes, 0) else {
            return Err(Refused {
                line: line_at(body_start + at),
                message: format!(
                    "entity &{name}; refers to itself or nests more than {NESTING_MAX} deep"
                ),
            });
        };
        total = total.saturating_add(size);
        if total > EXPANDED_MAX {
            return Err(Refused {
                line: line_at(body_start + at),
                message: format!(
                    "its entity references expand to more than {} KiB (nvidia-smi writes none); refused",
                    EXPANDED_MAX >> 10
                ),
            });
        }
    }
    Ok(())
}

/// Deeper nesting than this is refused (roxmltree's own limit is 10).
const NESTING_MAX: usize = 10;

/// The byte range of the DOCTYPE's internal subset (between `[` and `]`), if any.
fn internal_subset(text: &str) -> Option<std::ops::Range<usize>> {
    let doctype = text.find("<!DOCTYPE")?;
    let rest = &text[doctype..];
    let open = rest.find(['[', '>'])?;
    if rest.as_bytes()[open] != b'[' {
        return None;
    }
    let start = doctype + open + 1;
    // The subset ends at the first `]` outside a quoted entity value.
    let mut quote: Option<char> = None;
    for (i, c) in text[start..].char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ']') => return Some(start..start + i),
            _ => {}
        }
    }
    Some(start..text.len())
}

/// `<!ENTITY name "value">` declarations (general and parameter) of an internal subset, by name;
/// an external one (`SYSTEM`/`PUBLIC`) has no value here and counts as empty (roxmltree refuses
/// it when used). The first declaration of a name wins, as in XML.
fn declarations(subset: &str) -> BTreeMap<&str, &str> {
    let mut out = BTreeMap::new();
    let mut rest = subset;
    while let Some(p) = rest.find("<!ENTITY") {
        rest = rest[p + "<!ENTITY".len()..].trim_start();
        rest = rest.strip_prefix('%').unwrap_or(rest).trim_start();
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == '>')
            .unwrap_or(rest.len());
        let name = &rest[..name_end];
        rest = rest[name_end..].trim_start();
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => match rest[1..].find(q) {
                Some(end) => {
                    let v = &rest[1..1 + end];
                    rest = &rest[end + 2..];
                    v
                }
                None => {
                    let v = &rest[1..];
                    rest = "";
                    v
                }
            },
            _ => "",
        };
        if !name.is_empty() {
            out.entry(name).or_insert(value);
        }
    }
    out
}

/// `(offset, name)` of every `&name;` or `%name;` reference in `text` (character references
/// `&#…;` are not entities).
fn references(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.match_indices(['&', '%']).filter_map(move |(at, _)| {
        let after = &text[at + 1..];
        let end =
            after.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))?;
        (end > 0 && after[end..].starts_with(';')).then(|| (at, &after[..end]))
    })
}

/// What `&name;` expands to, bytes (capped just past [`EXPANDED_MAX`]); 0 for an undeclared
/// name (a predefined entity such as `&amp;`, or one roxmltree will refuse); `None` for a
/// reference cycle or nesting deeper than [`NESTING_MAX`].
fn expanded_size<'a>(
    name: &'a str,
    decls: &BTreeMap<&'a str, &'a str>,
    sizes: &mut BTreeMap<&'a str, u64>,
    depth: usize,
) -> Option<u64> {
    if let Some(&s) = sizes.get(name) {
        return Some(s);
    }
    let Some(&value) = decls.get(name) else {
        return Some(0);
    };
    if depth >= NESTING_MAX {
        return None;
    }
    let mut size = value.len() as u64;
    for (_, inner) in references(value) {
        let s = expanded_size(inner, decls, sizes, depth + 1)?;
        size = size.saturating_add(s).min(EXPANDED_MAX + 1);
    }
    sizes.insert(name, size);
    Some(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(decls: &str, body: &str) -> String {
        format!(
            "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi.dtd\" [\n{decls}\n]>\n<nvidia_smi_log>{body}</nvidia_smi_log>\n"
        )
    }

    #[test]
    fn plain_captures_and_small_entities_pass() {
        assert_eq!(
            check("<!DOCTYPE nvidia_smi_log SYSTEM \"x.dtd\">\n<a>&amp;</a>"),
            Ok(())
        );
        let few = capture("<!ENTITY gpu \"H200\">", &"&gpu;".repeat(100));
        assert_eq!(check(&few), Ok(()));
    }

    #[test]
    fn an_entity_used_thousands_of_times_is_refused() {
        let big = "x".repeat(10_000);
        let many = capture(&format!("<!ENTITY e \"{big}\">"), &"&e;\n".repeat(20_000));
        let r = check(&many).unwrap_err();
        assert!(r.message.contains("more than 1024 KiB"), "{}", r.message);
        // The first reference past the budget: 1 MiB / 10,000 bytes = the 105th, on line 108.
        assert_eq!(r.line, 4 + 105 - 1 + 1);
    }

    #[test]
    fn nested_entities_count_their_whole_expansion() {
        let decls = "<!ENTITY a \"0123456789\">\n<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n<!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>\n<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">";
        let r = check(&capture(decls, &"&d;".repeat(200))).unwrap_err();
        assert!(r.message.contains("expand to more than"), "{}", r.message);
        let cyc = capture("<!ENTITY a \"&b;\">\n<!ENTITY b \"&a;\">", "&a;");
        assert!(
            check(&cyc)
                .unwrap_err()
                .message
                .contains("refers to itself")
        );
    }
}
