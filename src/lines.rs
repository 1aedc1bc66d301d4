//! Bounded line reading for what other programs print: the framework runs' output, the agent's
//! requests and answers. A line longer than the limit is cut (its rest skipped, never held in
//! memory); invalid UTF-8 is replaced.

use std::io::{BufRead, BufReader, Read};

/// Reads lines of at most `max` bytes from `r` until EOF or an error, calling `each` with the
/// line (without its newline) and whether it was cut.
pub fn read_lines(r: impl Read, max: usize, each: &mut dyn FnMut(String, bool)) {
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let mut cut = false;
        loop {
            let chunk = match r.fill_buf() {
                Ok([]) => {
                    if !buf.is_empty() {
                        each(String::from_utf8_lossy(&buf).into_owned(), cut);
                    }
                    return;
                }
                Ok(c) => c,
                Err(_) => return,
            };
            let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            let room = max.saturating_sub(buf.len());
            buf.extend_from_slice(&chunk[..take.min(room)]);
            cut |= take > room;
            r.consume(if end { take + 1 } else { take });
            if end {
                break;
            }
        }
        each(String::from_utf8_lossy(&buf).into_owned(), cut);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_long_lines_and_keeps_the_rest() {
        let input = format!("short\n{}\nlast", "x".repeat(100));
        let mut got = Vec::new();
        read_lines(input.as_bytes(), 10, &mut |l, cut| got.push((l, cut)));
        assert_eq!(
            got,
            vec![
                ("short".to_string(), false),
                ("x".repeat(10), true),
                ("last".to_string(), false)
            ]
        );
    }
}
