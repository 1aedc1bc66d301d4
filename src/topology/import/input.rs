//! Reading a capture: at most [`MAX_CAPTURE_BYTES`] from a file or standard input, decoded
//! from UTF-8 or UTF-16 (PowerShell's `>`).

use super::{MAX_CAPTURE_BYTES, TopologyError, parse_error};

/// Reads a file, or standard input for `-`; returns the name to use in errors and the bytes.
pub(crate) fn read_input(path: &str) -> Result<(String, Vec<u8>), TopologyError> {
    let origin = if path == "-" { "<stdin>" } else { path };
    let io_error = |source| TopologyError::Io {
        path: origin.to_string(),
        source,
    };
    let too_large = || {
        parse_error(
            origin,
            1,
            format!(
                "larger than {} MiB: not an nvidia-smi capture (a 1000-GPU `topo -m` capture is about 5 MB)",
                MAX_CAPTURE_BYTES >> 20
            ),
        )
    };
    let read = if path == "-" {
        crate::input::read_stdin(MAX_CAPTURE_BYTES)
    } else {
        crate::input::read(std::path::Path::new(path), MAX_CAPTURE_BYTES)
    };
    let bytes = read.map_err(|e| match e {
        crate::input::InputError::TooLarge { .. } => too_large(),
        other => io_error(other.into()),
    })?;
    Ok((origin.to_string(), bytes))
}

pub(super) const BINARY: &str =
    "binary data, not nvidia-smi text: expected the text `nvidia-smi topo -m` prints";

/// Bytes → text: UTF-8 (with or without BOM), or UTF-16 with a BOM, which is what PowerShell's
/// `nvidia-smi topo -m > file` writes on Windows.
pub(crate) fn decode(bytes: &[u8], origin: &str) -> Result<String, TopologyError> {
    let line_at = |pos: usize| 1 + bytes.iter().take(pos).filter(|&&b| b == b'\n').count();
    let utf16 = match bytes {
        [0xFF, 0xFE, rest @ ..] => Some((rest, true)),
        [0xFE, 0xFF, rest @ ..] => Some((rest, false)),
        _ => None,
    };
    if let Some((rest, little_endian)) = utf16 {
        let units = rest.chunks(2).map(|pair| match (pair, little_endian) {
            ([lo, hi], true) => Ok(u16::from_le_bytes([*lo, *hi])),
            ([hi, lo], false) => Ok(u16::from_le_bytes([*lo, *hi])),
            _ => Err(()),
        });
        let mut text = String::with_capacity(rest.len() / 2);
        let mut line = 1;
        for unit in char::decode_utf16(units.map_while(Result::ok)) {
            match unit {
                Ok(c) => {
                    if c == '\n' {
                        line += 1;
                    }
                    text.push(c);
                }
                Err(_) => return Err(parse_error(origin, line, BINARY)),
            }
        }
        if rest.len() % 2 != 0 {
            return Err(parse_error(origin, line, BINARY));
        }
        return printable(text, origin);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => printable(text.to_string(), origin),
        Err(e) => Err(parse_error(origin, line_at(e.valid_up_to()), BINARY)),
    }
}

/// `text` without the ANSI codes nvidia-smi prints on a terminal (its header is underlined),
/// refused when any other character a terminal acts on is left: nvidia-smi never prints one,
/// and a capture's cells and names are printed back to the user.
fn printable(text: String, origin: &str) -> Result<String, TopologyError> {
    let text = if text.contains('\x1b') {
        super::tokens::strip_ansi(&text)
    } else {
        text
    };
    let bad = text.char_indices().find(|&(_, c)| {
        !matches!(c, '\t' | '\n' | '\r') && crate::model::validate::unsafe_on_terminal(c)
    });
    match bad {
        None => Ok(text),
        Some((at, c)) => {
            let line = 1 + text[..at].matches('\n').count();
            Err(parse_error(
                origin,
                line,
                format!(
                    "control character U+{:04X}: not nvidia-smi text",
                    u32::from(c)
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_handles_utf16_and_rejects_binary() {
        let text = "\tGPU0\nGPU0\t X \n";
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decode(&utf16, "f").unwrap(), text);
        let err = decode(b"GPU0\n\xff\xfe\x00", "f").unwrap_err();
        assert!(matches!(err, TopologyError::Parse { line: 2, .. }), "{err}");
        let err = decode(&[0xFF, 0xFE, 0x41], "f").unwrap_err();
        assert!(err.to_string().contains("binary"), "{err}");
    }

    #[test]
    fn ansi_codes_go_and_other_terminal_controls_are_refused_with_their_line() {
        let text = decode(b"\x1b[4m\tGPU0\x1b[0m\nGPU0\t X \r\n", "f").unwrap();
        assert_eq!(text, "\tGPU0\nGPU0\t X \r\n");
        for (bytes, line, code) in [
            (&b"\tGPU0\nGPU0\t X \t0-3\x11\n"[..], 2, "U+0011"),
            (b"GPU 0: NVIDIA H20\x07mlx5\n", 1, "U+0007"),
            ("\tGPU0\n\nGPU0\u{2028}X\n".as_bytes(), 3, "U+2028"),
            (b"\tGPU0\x00\n", 1, "U+0000"),
        ] {
            let err = decode(bytes, "f").unwrap_err();
            assert!(
                matches!(err, TopologyError::Parse { line: l, .. } if l == line),
                "{err}"
            );
            assert!(err.to_string().contains(code), "{err}");
        }
    }
}
