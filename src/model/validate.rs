//! Checks for values that come from outside (flags, TOML files, reports) and the way errors
//! show them: every number with its unit and accepted range, every string from a file escaped
//! and shortened, so that one error stays one line whatever the file held.

use std::fmt;

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

/// `s` as an error message quotes it: in double quotes, control characters and quotes escaped
/// (`\n`, `\u{1b}`), cut after [`QUOTE_MAX_CHARS`] characters with the length of the rest.
pub fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    let mut chars = s.chars();
    for c in chars.by_ref().take(QUOTE_MAX_CHARS) {
        out.extend(c.escape_debug());
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
/// line, so a string could print a line of its own) and the bidirectional overrides and isolates
/// (they reorder what is shown).
pub fn unsafe_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The one escaping for the terminal: `s` with every [`unsafe_on_terminal`] character written
/// as its Rust escape (`\u{1b}`, `\n`), so that a string from outside (a server's hostname,
/// a GPU name in a capture) prints as one inert run of text.
pub fn for_terminal(s: &str) -> String {
    if !s.chars().any(unsafe_on_terminal) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_on_terminal(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A message that came (partly) from outside made safe to print as one line: control
/// characters escaped, and any run of more than `max_run` characters without a space shortened
/// (a 1 MB word in a file is not echoed whole).
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
        if breaks_line(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    flush(&mut out, &mut skipped);
    out
}

/// True for a character that ends or alters a line where it is printed: the C0/C1 controls
/// (`\n`, ESC, NEL U+0085) and Unicode's line and paragraph separators U+2028/U+2029, which
/// are not "control" characters to Rust but break the line in terminals, editors and logs.
pub fn breaks_line(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
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
}
