//! Checks for values that come from outside (flags, TOML files, reports) and the way errors
//! show them: every number with its unit and accepted range, every string from a file escaped
//! and shortened, so that one error stays one line whatever the file held.

use std::fmt;

/// A bandwidth figure read from a file (a report, a between-nodes record): 0 to 100,000 GB/s.
/// The fastest links scalescope measures carry a few TB/s (HBM, a GPU's NVLinks together); a
/// figure beyond this is a damaged or forged file, not a measurement.
pub const GBPS: Bounds = Bounds::closed(0.0, 1e5, "GB/s");

/// The longest piece of a file or flag an error message quotes, in characters.
pub const QUOTE_MAX_CHARS: usize = 60;

/// The accepted range of a numeric input, with its unit for messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest accepted value.
    pub min: f64,
    /// True when `min` itself is accepted; false for "above min".
    pub min_inclusive: bool,
    /// Largest accepted value (always accepted).
    pub max: f64,
    /// The unit, as messages print it after the figures (`GB/s`, `ms`, `samples`); may be empty.
    pub unit: &'static str,
}

impl Bounds {
    /// `min ≤ v ≤ max`.
    pub const fn closed(min: f64, max: f64, unit: &'static str) -> Bounds {
        Bounds {
            min,
            min_inclusive: true,
            max,
            unit,
        }
    }

    /// `min < v ≤ max`.
    pub const fn above(min: f64, max: f64, unit: &'static str) -> Bounds {
        Bounds {
            min,
            min_inclusive: false,
            max,
            unit,
        }
    }

    /// True when `v` is finite and inside the range.
    pub fn contains(&self, v: f64) -> bool {
        let low_ok = if self.min_inclusive {
            v >= self.min
        } else {
            v > self.min
        };
        v.is_finite() && low_ok && v <= self.max
    }

    /// `Ok(v)` inside the range; otherwise a message naming the value, the unit and the range,
    /// e.g. `0 GB/s is out of range: expected above 0 and at most 1e5 GB/s`.
    pub fn check(&self, v: f64) -> Result<f64, String> {
        if self.contains(v) {
            Ok(v)
        } else {
            Err(format!(
                "{}{} is out of range: expected {self}",
                number(v),
                unit_suffix(self.unit)
            ))
        }
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min_inclusive {
            write!(f, "{} to {}", number(self.min), number(self.max))?;
        } else {
            write!(
                f,
                "above {} and at most {}",
                number(self.min),
                number(self.max)
            )?;
        }
        f.write_str(&unit_suffix(self.unit))
    }
}

fn unit_suffix(unit: &str) -> String {
    if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    }
}

/// A number for messages, short whatever its size: `0.5`, `256`, `1e5`, `5e-324`, `NaN`, `inf`
/// (Rust's `{}` writes 1e308 with 309 digits).
pub fn number(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && a != 0.0 && !(1e-4..1e5).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `s` as an error message quotes it: in double quotes, quotes and every
/// [`unsafe_on_terminal`] character escaped (`\n`, `\u{1b}`, `\u{202e}`), cut after
/// [`QUOTE_MAX_CHARS`] characters with the length of the rest.
pub fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars();
    for c in chars.by_ref().take(QUOTE_MAX_CHARS) {
        if matches!(c, '"' | '\\') {
            out.extend(c.escape_debug());
        } else {
            push_for_terminal(&mut out, c);
        }
    }
    let rest = chars.as_str().len();
    out.push('"');
    if rest > 0 {
        out.push_str(&format!("… ({rest} more bytes)"));
    }
    out
}

/// Whether `c` must not reach a terminal as itself: C0/C1 controls (ESC starts every screen,
/// title, clipboard and link sequence; CSI is U+009B), line and paragraph separators (they end a
/// line, so a string could print a line of its own) and the bidirectional marks, embeddings,
/// overrides and isolates (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069: they reorder what
/// is shown, so that a name reads as something else).
pub fn unsafe_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// Appends `c` as the terminal may see it: an [`unsafe_on_terminal`] character as its escape
/// (`\n`, `\t`, `\u{1b}`, `\u{202e}`), any other as itself.
pub fn push_for_terminal(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if unsafe_on_terminal(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// The one escaping for text from outside (a file, a folder's name, a recording, a server, a
/// host) on its way to the terminal: every [`unsafe_on_terminal`] character written as its
/// escape, so that the string prints as one inert run of text on one line. HTML's
/// `document::html::escape` uses the same rule for what it does not turn into entities.
pub fn for_terminal(s: &str) -> String {
    if !s.chars().any(unsafe_on_terminal) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_for_terminal(&mut out, c);
    }
    out
}

/// `s` cut after `max` characters with `…` and how many more there were (a 400 KB GPU name in
/// a report is a label in a table, not a page of its own).
pub fn shortened(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!(
            "{}… ({} more characters)",
            &s[..at],
            s[at..].chars().count()
        ),
    }
}

/// A message that came (partly) from outside made safe to print as one line: escaped as
/// [`for_terminal`] does, and any run of more than `max_run` characters without a space
/// shortened (a 1 MB word in a file is not echoed whole).
pub fn one_line(message: &str, max_run: usize) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut run = 0usize;
    let mut skipped = 0usize;
    let flush = |out: &mut String, skipped: &mut usize| {
        if *skipped > 0 {
            out.push_str(&format!("… ({skipped} more characters)"));
            *skipped = 0;
        }
    };
    for c in message.chars() {
        if c == ' ' {
            flush(&mut out, &mut skipped);
            run = 0;
            out.push(c);
            continue;
        }
        run += 1;
        if run > max_run {
            skipped += 1;
            continue;
        }
        push_for_terminal(&mut out, c);
    }
    flush(&mut out, &mut skipped);
    out
}

/// Deserializes a list of at most `N` items, refusing a longer one as soon as item `N + 1`
/// arrives (serde's `Vec` takes any length, so a 190 MB line of `{"gpu":0}` entries became
/// gigabytes of structs before any check could count them). For
/// `#[serde(deserialize_with = "crate::model::validate::at_most::<_, _, 1024>")]`.
pub fn at_most<'de, D, T, const N: usize>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    at_most_or(d, N, || format!("more than {N} items: at most {N}"))
}

/// [`at_most`] with `limit` given at run time and the refusal's words from `refusal`.
pub fn at_most_or<'de, D, T>(
    d: D,
    limit: usize,
    refusal: impl Fn() -> String,
) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    struct Bounded<T, F> {
        limit: usize,
        refusal: F,
        item: std::marker::PhantomData<T>,
    }
    impl<'de, T: serde::Deserialize<'de>, F: Fn() -> String> serde::de::Visitor<'de> for Bounded<T, F> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "a list of at most {} items", self.limit)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut v = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.limit));
            while let Some(item) = seq.next_element()? {
                if v.len() == self.limit {
                    return Err(serde::de::Error::custom((self.refusal)()));
                }
                v.push(item);
            }
            Ok(v)
        }
    }
    d.deserialize_seq(Bounded {
        limit,
        refusal,
        item: std::marker::PhantomData,
    })
}

/// `Err` naming the first entry of `list` given twice (`--tests h2d,h2d` would run and report
/// the test twice, and a client would take the second result for a broken protocol).
pub fn distinct<T>(field: &str, list: &[T], key: impl Fn(&T) -> String) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    match list.iter().map(key).find(|k| !seen.insert(k.clone())) {
        Some(k) => Err(format!(
            "{field}: {} is listed twice (each once)",
            quoted(&k)
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_name_value_unit_and_range() {
        let b = Bounds::above(0.0, 1e5, "GB/s");
        assert!(b.contains(25.0) && b.contains(1e5));
        assert!(!b.contains(0.0) && !b.contains(-1.0) && !b.contains(f64::NAN));
        assert_eq!(
            b.check(0.0).unwrap_err(),
            "0 GB/s is out of range: expected above 0 and at most 1e5 GB/s"
        );
        let c = Bounds::closed(1.0, 1e9, "samples");
        assert_eq!(
            c.check(1e308).unwrap_err(),
            "1e308 samples is out of range: expected 1 to 1e9 samples"
        );
        assert!(c.check(f64::INFINITY).unwrap_err().starts_with("inf "));
        assert_eq!(number(5e-324), "5e-324");
        assert_eq!(number(0.25), "0.25");
    }

    #[test]
    fn quoting_escapes_and_shortens() {
        assert_eq!(quoted("a\nb\x1b[2J"), "\"a\\nb\\u{1b}[2J\"");
        let long = "x".repeat(1000);
        let q = quoted(&long);
        assert!(q.ends_with("… (940 more bytes)"), "{q}");
        assert!(q.len() < 100);
    }

    #[test]
    fn one_line_escapes_newlines_and_cuts_long_words() {
        let m = one_line("bad \"a\nb\" and ", 200);
        assert_eq!(m, "bad \"a\\nb\" and ");
        let m = one_line(&format!("value {} here", "y".repeat(10_000)), 50);
        assert!(m.contains("(9950 more characters) here"), "{m}");
        assert!(!m.contains('\n'));
        let m = one_line("key a\u{2028}b, c\u{2029}d, e\u{85}f", 200);
        assert_eq!(m, "key a\\u{2028}b, c\\u{2029}d, e\\u{85}f");
    }

    #[test]
    fn bidi_controls_are_escaped_everywhere_text_is_printed() {
        let evil = "gpu\u{202E}0.99\u{2066}x\u{2069}\u{200E}\u{200F}\u{061C}\u{202A}";
        for shown in [for_terminal(evil), quoted(evil), one_line(evil, 200)] {
            assert!(!shown.chars().any(unsafe_on_terminal), "{shown}");
            assert!(
                shown.contains("\\u{202e}") && shown.contains("\\u{2066}"),
                "{shown}"
            );
        }
        assert_eq!(for_terminal("a\nb\x1b"), "a\\nb\\u{1b}");
    }

    #[test]
    fn shortening_cuts_at_a_character_and_says_how_much() {
        assert_eq!(shortened("H100", 10), "H100");
        assert_eq!(shortened("–––––", 2), "––… (3 more characters)");
    }
}
