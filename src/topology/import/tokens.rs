//! Lines and tokens: ANSI codes removed, cells and device labels read, header and row lines
//! split into tokens (tabs and runs of spaces alike; cells glued together split again).

use crate::model::{LinkKind, P2pStatus};

/// Removes ANSI escape sequences: CSI (`ESC [ … final`, which covers SGR codes like `\x1b[4m`
/// that nvidia-smi puts around its header on a terminal), OSC (`ESC ] … BEL`), charset
/// selections (`ESC ( B`, which `tput sgr0` emits) and other two-character escapes.
pub(super) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameter and intermediate bytes, then one final byte.
                while chars.next_if(|n| ('\x20'..='\x3f').contains(n)).is_some() {}
                chars.next_if(|n| ('\x40'..='\x7e').contains(n));
            }
            Some(']') => {
                while let Some(n) = chars.next() {
                    if n == '\x07' || (n == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            Some('(' | ')' | '*' | '+') => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

/// The three extra columns `topo -m` may print after the device columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Extra {
    CpuAffinity,
    NumaAffinity,
    GpuNumaId,
}

impl Extra {
    const ALL: [Extra; 3] = [Self::CpuAffinity, Self::NumaAffinity, Self::GpuNumaId];

    pub(super) fn words(&self) -> &'static [&'static str] {
        match self {
            Self::CpuAffinity => &["CPU", "Affinity"],
            Self::NumaAffinity => &["NUMA", "Affinity"],
            Self::GpuNumaId => &["GPU", "NUMA", "ID"],
        }
    }

    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::CpuAffinity => "CPU Affinity",
            Self::NumaAffinity => "NUMA Affinity",
            Self::GpuNumaId => "GPU NUMA ID",
        }
    }

    pub(super) fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// One cell of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cell {
    /// `X`: the row's own column.
    Own,
    /// A `topo -m` connection.
    Link(LinkKind),
    /// A `topo -p2p` status.
    P2p(P2pStatus),
    /// `DR` (disabled by regkey), which newer drivers print and the model has no status for.
    Disabled,
}

impl Cell {
    /// The longest cell text (`NV` and a u32), so that long words are refused without parsing.
    const MAX_LEN: usize = 12;

    pub(super) fn parse(s: &str) -> Option<Self> {
        if s.len() > Self::MAX_LEN {
            return None;
        }
        match s {
            "X" => Some(Self::Own),
            "DR" => Some(Self::Disabled),
            _ => s
                .parse::<LinkKind>()
                .map(Self::Link)
                .or_else(|_| s.parse::<P2pStatus>().map(Self::P2p))
                .ok(),
        }
    }

    pub(super) fn is_p2p(&self) -> bool {
        matches!(self, Self::P2p(_) | Self::Disabled)
    }
}

pub(super) const CELLS_EXPECTED: &str = "X, NV#, PIX, PXB, PHB, NODE, SYS (or SOC) in a `topo -m` matrix, \
     X, OK, CNS, GNS, TNS, NS, DR or U in a `topo -p2p` matrix";

/// `GPU3` → `Some(Ok(3))`; `GPU` followed by something other than digits → `None`.
pub(super) fn gpu_label(s: &str) -> Option<Result<usize, String>> {
    let digits = s.strip_prefix("GPU")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(
        digits
            .parse::<usize>()
            .ok()
            .filter(|&i| i < 1 << 20)
            .ok_or_else(|| format!("GPU index in {s:?} is out of range")),
    )
}

/// Could `s` name a device column? GPU#, NIC#, or a network device name such as `mlx5_0`,
/// `ib0` or `mlx5_bond_0` (a letter, then letters/digits/`_.:-`, with at least one digit).
pub(super) fn is_device_label(s: &str) -> bool {
    if Cell::parse(s).is_some() {
        return false;
    }
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
        && s.chars().any(|c| c.is_ascii_digit())
}

/// Splits a token where a tab was lost in copying, e.g. `NODENODE` or `NV18PXB` (seen in
/// captures pasted into GitHub issues). Returns `None` unless every piece is a valid cell.
pub(super) fn split_glued_cells(s: &str) -> Option<Vec<&str>> {
    const CODES: [&str; 14] = [
        "NODE", "PIX", "PXB", "PHB", "SYS", "SOC", "CNS", "GNS", "TNS", "OK", "NS", "DR", "X", "U",
    ];
    // A row of 1024 glued cells is under 8 KiB; longer words are not cells.
    if s.len() > 8192 {
        return None;
    }
    let mut pieces = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let len = if let Some(digits) = rest.strip_prefix("NV") {
            let n = digits.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            2 + n
        } else if let Some(code) = CODES.into_iter().find(|c| rest.starts_with(c)) {
            code.len()
        } else {
            return None;
        };
        let (piece, tail) = rest.split_at(len);
        pieces.push(piece);
        rest = tail;
    }
    (pieces.len() > 1 && pieces.iter().all(|p| Cell::parse(p).is_some())).then_some(pieces)
}

/// Splits `NIC8NIC9` or `GPU0GPU1` (a header whose tab was lost) into labels.
pub(super) fn split_glued_labels(s: &str) -> Option<Vec<&str>> {
    let mut pieces = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let prefix = ["GPU", "NIC"].into_iter().find(|p| rest.starts_with(p))?;
        let after = &rest[prefix.len()..];
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        let (piece, tail) = rest.split_at(prefix.len() + n);
        pieces.push(piece);
        rest = tail;
    }
    (pieces.len() > 1).then_some(pieces)
}

/// A matrix row's tokens. Tabs and runs of spaces both separate cells: tab-separated output
/// has empty cells (`0\t\tN/A`), pasted output has none, and no cell contains a space.
pub(super) fn row_tokens(line: &str) -> Vec<&str> {
    row_tokens_up_to(line, usize::MAX)
}

/// The first `max` tokens of a row (at least; glued cells may add a few).
pub(super) fn row_tokens_up_to(line: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for word in line.split_whitespace() {
        if out.len() >= max {
            break;
        }
        if Cell::parse(word).is_some() {
            out.push(word);
            continue;
        }
        match split_glued_cells(word) {
            Some(pieces) => out.extend(pieces),
            None => out.push(word),
        }
    }
    out
}

/// A header's tokens, with the multi-word column names (`CPU Affinity`, `NUMA Affinity`,
/// `GPU NUMA ID`) joined again, so that headers whose tabs became spaces split the same way.
pub(super) fn header_tokens(line: &str) -> Vec<&str> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let phrase = Extra::ALL
            .into_iter()
            .find(|e| words.get(i..i + e.words().len()) == Some(e.words()));
        if let Some(extra) = phrase {
            out.push(extra.name());
            i += extra.words().len();
            continue;
        }
        match split_glued_labels(word) {
            Some(pieces) => out.extend(pieces),
            None => out.push(*word),
        }
        i += 1;
    }
    out
}

/// A header: device labels (at least one GPU, or else followed by an extra column), then the
/// extra columns.
pub(super) fn is_header(tokens: &[&str]) -> bool {
    let devices: Vec<&&str> = tokens
        .iter()
        .take_while(|t| Extra::from_name(t).is_none())
        .collect();
    let has_extra = devices.len() < tokens.len();
    !tokens.is_empty()
        && devices.iter().all(|t| is_device_label(t))
        && (has_extra || devices.iter().any(|t| gpu_label(t).is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_parse_including_old_and_p2p_codes() {
        assert_eq!(Cell::parse("X"), Some(Cell::Own));
        assert_eq!(Cell::parse("NV12"), Some(Cell::Link(LinkKind::Nv(12))));
        assert_eq!(Cell::parse("SOC"), Some(Cell::Link(LinkKind::Sys)));
        assert_eq!(Cell::parse("NODE"), Some(Cell::Link(LinkKind::Node)));
        assert_eq!(Cell::parse("OK"), Some(Cell::P2p(P2pStatus::Ok)));
        assert_eq!(Cell::parse("NS"), Some(Cell::P2p(P2pStatus::Ns)));
        assert_eq!(Cell::parse("U"), Some(Cell::P2p(P2pStatus::U)));
        assert_eq!(Cell::parse("DR"), Some(Cell::Disabled));
        for bad in ["", "x", "NV", "NV0", "0-31", "N/A", "GPU0", "mlx5_0"] {
            assert_eq!(Cell::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ansi_codes_are_removed() {
        assert_eq!(strip_ansi("\x1b[4m\tGPU0\tGPU1\x1b[0m"), "\tGPU0\tGPU1");
        assert_eq!(strip_ansi("\x1b[1;31mSYS\x1b[m"), "SYS");
        assert_eq!(strip_ansi("\x1b(B\x1b[mNODE"), "NODE");
        assert_eq!(strip_ansi("\x1b]0;title\x07GPU0"), "GPU0");
        assert_eq!(strip_ansi("GPU0\x1b"), "GPU0");
        assert_eq!(strip_ansi("\x1b[4"), "");
        assert_eq!(strip_ansi("plain ä"), "plain ä");
    }

    #[test]
    fn header_splits_tabs_and_spaces_alike() {
        let want = [
            "GPU0",
            "GPU1",
            "mlx5_0",
            "CPU Affinity",
            "NUMA Affinity",
            "GPU NUMA ID",
        ];
        let tabs = "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID";
        let spaces = "        GPU0    GPU1    mlx5_0  CPU Affinity    NUMA Affinity   GPU NUMA ID";
        assert_eq!(header_tokens(tabs), want);
        assert_eq!(header_tokens(spaces), want);
        assert!(is_header(&header_tokens(tabs)));
        assert_eq!(header_tokens("NIC7\tNIC8NIC9"), ["NIC7", "NIC8", "NIC9"]);
    }

    #[test]
    fn headers_and_rows_are_told_apart() {
        assert!(is_header(&header_tokens(" \tGPU0\tGPU1\t")));
        assert!(is_header(&header_tokens("GPU0 CPU Affinity")));
        assert!(is_header(&header_tokens("\tNIC0\tCPU Affinity")));
        assert!(!is_header(&header_tokens("GPU0\t X \tNV18")));
        assert!(!is_header(&header_tokens("GPU0\tNV18")));
        assert!(!is_header(&header_tokens("$ nvidia-smi topo -m")));
        assert!(!is_header(&header_tokens("GPU0 is broken")));
        assert!(!is_header(&header_tokens("  X    = Self")));
    }

    #[test]
    fn rows_drop_empty_cells_and_split_glued_ones() {
        assert_eq!(
            row_tokens("GPU0\t X \tNV18\t0-79\t0\t\tN/A\t"),
            ["GPU0", "X", "NV18", "0-79", "0", "N/A"]
        );
        assert_eq!(
            row_tokens("GPU4 NODENODE NV18PXB"),
            ["GPU4", "NODE", "NODE", "NV18", "PXB"]
        );
        assert_eq!(split_glued_cells("0-31"), None);
        assert_eq!(split_glued_cells("NODE"), None);
        assert_eq!(split_glued_cells("NVNODE"), None);
    }
}
