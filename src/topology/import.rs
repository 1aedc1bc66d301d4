//! Parser for `nvidia-smi topo -m`, `topo -mp` and `topo -p2p r|w|n|a` text.
//!
//! Captures come from terminals, scripts, issue trackers and web pages, so the parser accepts
//! what those do to nvidia-smi's output: ANSI codes around the header, CRLF line endings,
//! trailing tabs, tabs turned into runs of spaces, UTF-16 files (PowerShell's `>`), and several
//! matrices one after another in one file. It rejects anything it cannot read with a
//! [`TopologyError::Parse`] naming the line, what was expected and what was found, and never
//! panics.
//!
//! The format, as nvidia-smi 535–580 prints it (tab-separated, header indented by one tab):
//!
//! ```text
//!         GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
//! GPU0     X      NV18    PXB     0-31            0               N/A
//! GPU1    NV18     X      SYS     0-31            0               N/A
//! NIC0    PXB     SYS      X
//!
//! Legend:
//!
//!   X    = Self
//!   ...
//!
//! NIC Legend:
//!
//!   NIC0: mlx5_0
//! ```
//!
//! Older drivers name NIC columns directly (`mlx5_0`), print `SOC` for `SYS` and only a
//! `CPU Affinity` column. `topo -p2p X` prints the same grid with `OK`/`CNS`/`GNS`/`TNS`/`NS`/`U`
//! (and `DR`, disabled by regkey) cells. The output of `nvidia-smi --query-gpu=index,name,…
//! --format=csv` is also accepted, to fill in GPU names, memory and PCIe links.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use super::TopologyError;
use crate::model::{
    Gpu, GpuLink, LinkKind, Nic, NicLink, P2pCap, P2pPair, P2pStatus, Topology, TopologySource,
};

/// Reads each path ("-" = standard input) and merges what they hold into one Topology.
///
/// Every matrix in every file must cover the same GPUs. `topo -m` decides each pair's link
/// kind, `topo -mp` its PCIe path, and `topo -p2p` matrices fill the P2P capabilities.
pub fn import_paths(paths: &[String]) -> Result<Topology, TopologyError> {
    if paths.is_empty() {
        return Err(parse_error(
            "<none>",
            1,
            "no input files: expected at least one file with `nvidia-smi topo -m` output",
        ));
    }
    let mut parsed = Vec::with_capacity(paths.len());
    for path in paths {
        let (origin, bytes) = read_input(path)?;
        let text = decode(&bytes, &origin)?;
        parsed.push(parse_text(&text, &origin, path)?);
    }
    build(parsed, paths.to_vec())
}

/// Parses one text, which may hold a `topo -m`/`-mp` matrix and/or one or more `-p2p` matrices. `origin` names it in errors.
///
/// `origin` is also read as a file name: a P2P matrix with no command line above it takes its
/// capability from a name like `topo-p2p-r.txt`, and a name like `topo-mp.txt` marks a
/// `topo -mp` capture.
pub fn parse(text: &str, origin: &str) -> Result<Topology, TopologyError> {
    let parsed = parse_text(text, origin, origin)?;
    build(vec![parsed], vec![origin.to_string()])
}

pub(crate) fn parse_error(origin: &str, line: usize, message: impl Into<String>) -> TopologyError {
    TopologyError::Parse {
        origin: origin.to_string(),
        line,
        message: message.into(),
    }
}

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
    let mut bytes = Vec::new();
    // At most one byte past the limit is read, so `/dev/zero` or a huge file ends here; a
    // regular file over the limit is not read at all.
    let limit = MAX_CAPTURE_BYTES + 1;
    if path == "-" {
        std::io::stdin()
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(io_error)?;
    } else {
        let file = std::fs::File::open(path).map_err(io_error)?;
        if file.metadata().map_err(io_error)?.len() > MAX_CAPTURE_BYTES {
            return Err(too_large());
        }
        file.take(limit).read_to_end(&mut bytes).map_err(io_error)?;
    }
    if bytes.len() as u64 > MAX_CAPTURE_BYTES {
        return Err(too_large());
    }
    Ok((origin.to_string(), bytes))
}

/// A piece of the input as an error message quotes it: escaped, at most 60 characters.
fn shown(s: &str) -> String {
    crate::model::validate::quoted(s)
}

/// The most device columns one matrix may have: far beyond one machine's GPUs and NICs, and a
/// bound on the dense grid of cells ([`Grid`]).
const MAX_COLUMNS: usize = 4096;

/// The largest capture read, bytes: a 1000-GPU `topo -m` matrix is about 5 MB, all four
/// `-p2p` matrices beside it about 25 MB.
pub const MAX_CAPTURE_BYTES: u64 = 64 << 20;

const BINARY: &str =
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
        return Ok(text);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_string()),
        Err(e) => Err(parse_error(origin, line_at(e.valid_up_to()), BINARY)),
    }
}

// ---------------------------------------------------------------------------------------------
// Lines and tokens

/// Removes ANSI escape sequences: CSI (`ESC [ … final`, which covers SGR codes like `\x1b[4m`
/// that nvidia-smi puts around its header on a terminal), OSC (`ESC ] … BEL`), charset
/// selections (`ESC ( B`, which `tput sgr0` emits) and other two-character escapes.
fn strip_ansi(s: &str) -> String {
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
enum Extra {
    CpuAffinity,
    NumaAffinity,
    GpuNumaId,
}

impl Extra {
    const ALL: [Extra; 3] = [Self::CpuAffinity, Self::NumaAffinity, Self::GpuNumaId];

    fn words(&self) -> &'static [&'static str] {
        match self {
            Self::CpuAffinity => &["CPU", "Affinity"],
            Self::NumaAffinity => &["NUMA", "Affinity"],
            Self::GpuNumaId => &["GPU", "NUMA", "ID"],
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::CpuAffinity => "CPU Affinity",
            Self::NumaAffinity => "NUMA Affinity",
            Self::GpuNumaId => "GPU NUMA ID",
        }
    }

    fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// One cell of a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
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

    fn parse(s: &str) -> Option<Self> {
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

    fn is_p2p(&self) -> bool {
        matches!(self, Self::P2p(_) | Self::Disabled)
    }
}

const CELLS_EXPECTED: &str = "X, NV#, PIX, PXB, PHB, NODE, SYS (or SOC) in a `topo -m` matrix, \
     X, OK, CNS, GNS, TNS, NS, DR or U in a `topo -p2p` matrix";

/// `GPU3` → `Some(Ok(3))`; `GPU` followed by something other than digits → `None`.
fn gpu_label(s: &str) -> Option<Result<usize, String>> {
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
fn is_device_label(s: &str) -> bool {
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
fn split_glued_cells(s: &str) -> Option<Vec<&str>> {
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
fn split_glued_labels(s: &str) -> Option<Vec<&str>> {
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
fn row_tokens(line: &str) -> Vec<&str> {
    row_tokens_up_to(line, usize::MAX)
}

/// The first `max` tokens of a row (at least; glued cells may add a few).
fn row_tokens_up_to(line: &str, max: usize) -> Vec<&str> {
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
fn header_tokens(line: &str) -> Vec<&str> {
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

// ---------------------------------------------------------------------------------------------
// Which command printed a matrix

/// Which `nvidia-smi topo` matrix comes next, as a command line (or a file name) says (the
/// matrix's counterpart of `smi_query::CaptureKind`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum MatrixKind {
    /// `topo -m`.
    TopoM,
    /// `topo -mp`: PCIe paths only.
    TopoMp,
    /// `topo -p2p r|w|n|a`.
    P2p(P2pCap),
    /// `topo -p2p p` (prop), which the model does not store.
    P2pProp,
    /// `topo -p2p` with a letter nvidia-smi does not take.
    P2pUnknown(String),
}

fn p2p_word(word: &str) -> MatrixKind {
    match word {
        "r" | "read" => MatrixKind::P2p(P2pCap::Read),
        "w" | "write" => MatrixKind::P2p(P2pCap::Write),
        "n" | "nvlink" => MatrixKind::P2p(P2pCap::Nvlink),
        "a" | "atomics" | "atomic" => MatrixKind::P2p(P2pCap::Atomics),
        "p" | "prop" => MatrixKind::P2pProp,
        other => MatrixKind::P2pUnknown(other.to_string()),
    }
}

/// The matrix a command line names, e.g. `$ nvidia-smi topo -p2p r`, `# nvidia-smi topo -mp`,
/// `echo "== nvidia-smi topo --p2pstatus=w =="`, or any line holding `-p2p a`.
fn matrix_kind_in_line(line: &str) -> Option<MatrixKind> {
    // A command line is short; a long line (a matrix row of 1000 GPUs, a pasted blob) is not.
    if line.len() > 4096 {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    let tokens: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | ';' | '|' | '(' | ')'))
        .filter(|t| !t.is_empty())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        if let Some(word) = token.strip_prefix("--p2pstatus=") {
            return Some(p2p_word(word));
        }
        if matches!(*token, "-p2p" | "--p2pstatus") {
            return Some(p2p_word(tokens.get(i + 1).copied().unwrap_or("")));
        }
    }
    if !tokens.iter().any(|t| t.ends_with("topo")) {
        return None;
    }
    if tokens.iter().any(|t| matches!(*t, "-mp" | "--matrix_pci")) {
        Some(MatrixKind::TopoMp)
    } else if tokens.iter().any(|t| matches!(*t, "-m" | "--matrix")) {
        Some(MatrixKind::TopoM)
    } else {
        None
    }
}

/// What a file name says about a matrix with no command line above it: `…p2p-r…`, `…p2p_w…`,
/// `p2p.n`, `p2p-read` → that capability; `…topo-mp…`, `…_mp.txt` → `topo -mp`.
fn matrix_kind_in_name(path: &str) -> Option<MatrixKind> {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, word) in words.iter().enumerate() {
        // `p2p-r` splits into `p2p`, `r`; `p2pr` stays one word.
        let letter = if *word == "p2p" {
            words.get(i + 1).copied()
        } else {
            word.strip_prefix("p2p").filter(|rest| !rest.is_empty())
        };
        if let Some(letter) = letter
            && let cmd @ (MatrixKind::P2p(_) | MatrixKind::P2pProp) = p2p_word(letter)
        {
            return Some(cmd);
        }
    }
    words
        .iter()
        .any(|w| matches!(*w, "mp" | "topomp"))
        .then_some(MatrixKind::TopoMp)
}

// ---------------------------------------------------------------------------------------------
// One text → matrices

/// A row or column of a matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Device {
    Gpu(usize),
    /// A NIC by its column label (`NIC0`, or `mlx5_0` in old output).
    Nic(String),
}

impl Device {
    fn label(&self) -> String {
        match self {
            Self::Gpu(i) => format!("GPU{i}"),
            Self::Nic(l) => l.clone(),
        }
    }
}

struct Row {
    line: usize,
    device: Device,
    cells: Vec<Cell>,
    /// Values of the extra columns, in header order (`N/A` kept as written).
    extras: Vec<String>,
}

/// A matrix as read, before its kind is settled.
struct RawMatrix {
    header_line: usize,
    command: Option<MatrixKind>,
    columns: Vec<Device>,
    extras: Vec<Extra>,
    rows: Vec<Row>,
}

/// How a topo matrix's cells are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavor {
    /// `topo -m`.
    M,
    /// `topo -mp`.
    Mp,
    /// No command line or file name said; settled once every file is read.
    Unlabeled,
}

/// Per-GPU facts from a `topo -m` row's extra columns.
#[derive(Clone, Debug, Default)]
struct GpuExtras {
    cpu_affinity: Option<String>,
    numa_node: Option<u32>,
}

/// The cells of one matrix between GPUs: a dense square over the block's GPUs sorted by index,
/// one cell per ordered (row, column) pair as printed. Lookups are O(1) and iteration runs in
/// (row, column) order: a 1000-GPU matrix is 10^6 cells, which maps would spend most of an
/// import on.
struct Grid<T> {
    /// The GPUs, sorted.
    gpus: Vec<usize>,
    /// Row-major, `gpus.len()` squared.
    cells: Vec<Option<T>>,
}

impl<T: Copy> Grid<T> {
    fn new(gpus: &BTreeSet<usize>) -> Grid<T> {
        let n = gpus.len();
        Grid {
            gpus: gpus.iter().copied().collect(),
            cells: vec![None; n * n],
        }
    }

    /// Position of `gpu` among the grid's GPUs.
    fn pos(&self, gpu: usize) -> Option<usize> {
        self.gpus.binary_search(&gpu).ok()
    }

    fn set(&mut self, i: usize, j: usize, v: T) {
        let n = self.gpus.len();
        if let Some(c) = self.cells.get_mut(i * n + j) {
            *c = Some(v);
        }
    }

    fn get(&self, i: usize, j: usize) -> Option<T> {
        self.cells.get(i * self.gpus.len() + j).copied().flatten()
    }

    /// (row position, column position, value) of every filled cell, row by row.
    fn iter(&self) -> impl Iterator<Item = (usize, usize, T)> + '_ {
        let n = self.gpus.len().max(1);
        self.cells
            .iter()
            .enumerate()
            .filter_map(move |(k, c)| c.map(|v| (k / n, k % n, v)))
    }
}

enum Content {
    Topo {
        flavor: Flavor,
        /// (row GPU, column GPU) → kind, both directions as printed.
        pairs: Grid<LinkKind>,
        /// NIC column labels in header order.
        nics: Vec<String>,
        /// (NIC label, GPU) → kind, from GPU rows first, then NIC rows.
        nic_links: Vec<(String, usize, LinkKind)>,
        extras: BTreeMap<usize, GpuExtras>,
    },
    P2p {
        cap: P2pCap,
        /// (row GPU, column GPU) → status.
        pairs: Grid<P2pStatus>,
    },
}

/// A matrix whose kind is known.
struct Block {
    origin: String,
    line: usize,
    gpus: BTreeSet<usize>,
    content: Content,
}

/// One row of `nvidia-smi --query-gpu=… --format=csv`.
#[derive(Default)]
struct CsvGpu {
    line: usize,
    index: usize,
    name: Option<String>,
    uuid: Option<String>,
    pci_bus_id: Option<String>,
    memory_mib: Option<u64>,
    gen_current: Option<u32>,
    gen_max: Option<u32>,
    width_current: Option<u32>,
    width_max: Option<u32>,
}

/// Everything one text holds.
struct Parsed {
    origin: String,
    blocks: Vec<Block>,
    /// `NIC0` → `mlx5_0`, from the "NIC Legend:" block.
    nic_legend: BTreeMap<String, String>,
    csv: Vec<CsvGpu>,
    notes: Vec<String>,
}

fn parse_text(text: &str, origin: &str, file_name: &str) -> Result<Parsed, TopologyError> {
    if let Some(pos) = text.find('\0') {
        let line = 1 + text[..pos].matches('\n').count();
        return Err(parse_error(origin, line, BINARY));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Lines without escape codes (nearly all) are borrowed, not copied.
    let lines: Vec<Cow<'_, str>> = text
        .split('\n')
        .map(|l| {
            if l.contains('\x1b') {
                Cow::Owned(strip_ansi(l).trim().to_string())
            } else {
                Cow::Borrowed(l.trim())
            }
        })
        .collect();
    let Some(first) = lines.iter().position(|l| !l.is_empty()) else {
        return Err(parse_error(
            origin,
            1,
            "empty input: expected `nvidia-smi topo -m` output",
        ));
    };

    let name_command = matrix_kind_in_name(file_name);
    let mut parsed = Parsed {
        origin: origin.to_string(),
        blocks: Vec::new(),
        nic_legend: BTreeMap::new(),
        csv: Vec::new(),
        notes: Vec::new(),
    };
    // The command named since the last matrix, which the next matrix belongs to.
    let mut pending: Option<MatrixKind> = None;
    // The first matrix read but not kept (`-p2p p`), for the error when nothing else is there.
    let mut skipped: Option<usize> = None;
    let mut i = first;
    while let Some(line) = lines.get(i) {
        let line_no = i + 1;
        if line.is_empty() {
            i += 1;
            continue;
        }
        if let Some((label, name)) = nic_legend_entry(line) {
            parsed.nic_legend.insert(label, name);
            i += 1;
            continue;
        }
        if line.ends_with("Legend:") {
            i += 1;
            continue;
        }
        if let Some(fields) = csv_header(line) {
            i = parse_csv(&lines, i, &fields, origin, &mut parsed.csv)?;
            continue;
        }
        let tokens = header_tokens(line);
        if is_header(&tokens) {
            let (matrix, next) = read_matrix(&lines, i, &tokens, pending.take(), origin)?;
            let header_line = matrix.header_line;
            match settle(matrix, origin, name_command.as_ref(), &mut parsed.notes)? {
                Some(block) => parsed.blocks.push(block),
                None => _ = skipped.get_or_insert(header_line),
            }
            i = next;
            continue;
        }
        if let Some(cmd) = matrix_kind_in_line(line) {
            pending = Some(cmd);
            i += 1;
            continue;
        }
        let row = row_tokens_up_to(line, 2);
        if let (Some(label), Some(second)) = (row.first(), row.get(1))
            && gpu_label(label).is_some()
            && Cell::parse(second).is_some()
        {
            return Err(parse_error(
                origin,
                line_no,
                format!(
                    "row {label} comes before any header line: expected the header \
                     (GPU0 GPU1 …) that `nvidia-smi topo -m` prints first"
                ),
            ));
        }
        // Anything else (a legend entry like `X = Self`, a shell prompt, a note someone typed)
        // is not ours to judge.
        i += 1;
    }

    if parsed.blocks.is_empty() && parsed.csv.is_empty() {
        if let Some(line) = skipped {
            return Err(parse_error(
                origin,
                line,
                "only a `topo -p2p p` matrix, which scalescope does not store: expected \
                 `nvidia-smi topo -m`, `-mp` or `-p2p r|w|n|a` output",
            ));
        }
        let found: String = lines
            .get(first)
            .map_or("", |l| l.as_ref())
            .chars()
            .take(60)
            .collect();
        return Err(parse_error(
            origin,
            first + 1,
            format!(
                "expected `nvidia-smi topo -m` output (a header line of GPU0 GPU1 … columns), \
                 found {found:?}"
            ),
        ));
    }
    Ok(parsed)
}

/// `NIC0: mlx5_0` → (`NIC0`, `mlx5_0`).
fn nic_legend_entry(line: &str) -> Option<(String, String)> {
    let (label, name) = line.split_once(':')?;
    let label = label.trim();
    let name = name.trim();
    let digits = label.strip_prefix("NIC")?;
    let ok = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !name.is_empty()
        && !name.contains(char::is_whitespace);
    ok.then(|| (label.to_string(), name.to_string()))
}

/// A header: device labels (at least one GPU, or else followed by an extra column), then the
/// extra columns.
fn is_header(tokens: &[&str]) -> bool {
    let devices: Vec<&&str> = tokens
        .iter()
        .take_while(|t| Extra::from_name(t).is_none())
        .collect();
    let has_extra = devices.len() < tokens.len();
    !tokens.is_empty()
        && devices.iter().all(|t| is_device_label(t))
        && (has_extra || devices.iter().any(|t| gpu_label(t).is_some()))
}

/// Reads a header and the rows under it; returns the matrix and the index of the first line
/// after it.
fn read_matrix(
    lines: &[Cow<'_, str>],
    start: usize,
    tokens: &[&str],
    command: Option<MatrixKind>,
    origin: &str,
) -> Result<(RawMatrix, usize), TopologyError> {
    let header_line = start + 1;
    let mut columns = Vec::new();
    // Column label → position: one lookup per row instead of a scan (1000 GPUs: 10^6 scans).
    let mut positions: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut extras = Vec::new();
    if tokens.len() > MAX_COLUMNS {
        return Err(parse_error(
            origin,
            header_line,
            format!(
                "a header of {} columns: expected at most {MAX_COLUMNS} (GPUs and NICs of one machine)",
                tokens.len()
            ),
        ));
    }
    for token in tokens {
        if let Some(extra) = Extra::from_name(token) {
            extras.push(extra);
            continue;
        }
        if !extras.is_empty() {
            // nvidia-smi prints no device column after the extra columns; ignore what we do
            // not know rather than misread it.
            continue;
        }
        let device = match gpu_label(token) {
            Some(Ok(index)) => Device::Gpu(index),
            Some(Err(message)) => return Err(parse_error(origin, header_line, message)),
            None => Device::Nic((*token).to_string()),
        };
        if positions.insert(device.label(), columns.len()).is_some() {
            return Err(parse_error(
                origin,
                header_line,
                format!("column {} appears twice in the header", shown(token)),
            ));
        }
        columns.push(device);
    }
    if !columns.iter().any(|c| matches!(c, Device::Gpu(_))) {
        return Err(parse_error(
            origin,
            header_line,
            format!(
                "a matrix with no GPU columns: expected GPU0, GPU1 … in the header, found {}",
                shown(&tokens.join(" "))
            ),
        ));
    }

    let mut matrix = RawMatrix {
        header_line,
        command,
        columns,
        extras,
        rows: Vec::new(),
    };
    let mut has_row = vec![false; matrix.columns.len()];
    let mut i = start + 1;
    while let Some(line) = lines.get(i) {
        if line.is_empty() || line.ends_with("Legend:") {
            break;
        }
        let tokens = row_tokens(line);
        let Some(label) = tokens.first() else { break };
        let Some(&position) = positions.get(*label) else {
            let looks_like_row = gpu_label(label).is_some()
                || (is_device_label(label)
                    && tokens.get(1).is_some_and(|t| Cell::parse(t).is_some()));
            if looks_like_row {
                return Err(parse_error(
                    origin,
                    i + 1,
                    format!(
                        "row label {label} is not a column of the header on line {header_line} \
                         (columns: {})",
                        column_list(&matrix.columns)
                    ),
                ));
            }
            break;
        };
        if has_row[position] {
            return Err(parse_error(
                origin,
                i + 1,
                format!("a second row {label}: expected one row per column"),
            ));
        }
        has_row[position] = true;
        let device = matrix.columns[position].clone();
        let row = read_row(&matrix, device, &tokens, i + 1, origin)?;
        matrix.rows.push(row);
        i += 1;
    }

    let missing: Vec<String> = matrix
        .columns
        .iter()
        .zip(&has_row)
        .filter(|(c, has)| matches!(c, Device::Gpu(_)) && !**has)
        .map(|(c, _)| c.label())
        .collect();
    if !missing.is_empty() {
        let found = if lines.get(i).is_none_or(|l| l.is_empty()) {
            "the end of the matrix".to_string()
        } else {
            shown(lines.get(i).map_or("", |l| l.as_ref()))
        };
        return Err(parse_error(
            origin,
            i + 1,
            format!(
                "no row for {} (the header on line {header_line} has columns {}): expected one \
                 row per GPU column, found {found}",
                if missing.len() > 8 {
                    format!("{} and {} more", missing[..8].join(", "), missing.len() - 8)
                } else {
                    missing.join(", ")
                },
                column_list(&matrix.columns)
            ),
        ));
    }
    Ok((matrix, i))
}

/// `GPU0..GPU3, NIC0..NIC1` or `GPU0, GPU1, mlx5_0..mlx5_3`: the device columns, with runs of
/// one kind shortened.
fn column_list(columns: &[Device]) -> String {
    let gpus: Vec<String> = columns
        .iter()
        .filter(|c| matches!(c, Device::Gpu(_)))
        .map(Device::label)
        .collect();
    let nics: Vec<String> = columns
        .iter()
        .filter(|c| matches!(c, Device::Nic(_)))
        .map(Device::label)
        .collect();
    let run = |v: &[String]| match v {
        [] => None,
        [one] => Some(one.clone()),
        [first, .., last] => Some(format!("{first}..{last}")),
    };
    [run(&gpus), run(&nics)]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}

fn read_row(
    matrix: &RawMatrix,
    device: Device,
    tokens: &[&str],
    line: usize,
    origin: &str,
) -> Result<Row, TopologyError> {
    let label = device.label();
    let values = tokens.get(1..).unwrap_or_default();
    let n = matrix.columns.len();
    let leading = values
        .iter()
        .take_while(|v| Cell::parse(v).is_some())
        .count();
    let expected = || {
        format!(
            "expected {n} (one per column {})",
            column_list(&matrix.columns)
        )
    };
    if leading < n {
        // Either the cells ran out (what follows can only be the extra columns), or one of
        // them is not a cell.
        if values.len() - leading <= matrix.extras.len() {
            return Err(parse_error(
                origin,
                line,
                format!("row {label} has {leading} cells, {}", expected()),
            ));
        }
        let column = matrix
            .columns
            .get(leading)
            .map_or(String::new(), Device::label);
        let found = shown(values.get(leading).copied().unwrap_or(""));
        return Err(parse_error(
            origin,
            line,
            format!(
                "unknown cell {found} in row {label}, column {column}: expected {CELLS_EXPECTED}"
            ),
        ));
    }
    if leading > n {
        return Err(parse_error(
            origin,
            line,
            format!("row {label} has {leading} cells, {}", expected()),
        ));
    }
    let extras: Vec<String> = values
        .get(n..)
        .unwrap_or_default()
        .iter()
        .map(|v| (*v).to_string())
        .collect();
    if extras.len() > matrix.extras.len() {
        return Err(parse_error(
            origin,
            line,
            format!(
                "row {label} has {} values after its {n} cells, expected at most {} ({})",
                extras.len(),
                matrix.extras.len(),
                if matrix.extras.is_empty() {
                    "the header has no CPU/NUMA Affinity columns".to_string()
                } else {
                    matrix
                        .extras
                        .iter()
                        .map(Extra::name)
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        ));
    }
    let mut cells = Vec::with_capacity(n);
    for (value, column) in values.iter().zip(&matrix.columns) {
        let Some(cell) = Cell::parse(value) else {
            // Unreachable: the first n values were checked above; kept as an error, not a panic.
            return Err(parse_error(origin, line, format!("unknown cell {value:?}")));
        };
        let own = *column == device;
        if own != (cell == Cell::Own) {
            let message = if own {
                format!("row {label} has {value} in its own column: expected X")
            } else {
                format!(
                    "row {label} has X in column {}: X marks a row's own column only (is a cell \
                     missing before it?)",
                    column.label()
                )
            };
            return Err(parse_error(origin, line, message));
        }
        cells.push(cell);
    }
    Ok(Row {
        line,
        device,
        cells,
        extras,
    })
}

/// Decides what a matrix is (topo or P2P, which capability) and turns it into a [`Block`];
/// `None` for a matrix we do not store (`-p2p p`).
fn settle(
    matrix: RawMatrix,
    origin: &str,
    name_command: Option<&MatrixKind>,
    notes: &mut Vec<String>,
) -> Result<Option<Block>, TopologyError> {
    let line = matrix.header_line;
    let first_cell = matrix
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().map(move |c| (r, c)))
        .find(|(_, c)| **c != Cell::Own);
    let is_p2p = match &matrix.command {
        Some(MatrixKind::TopoM | MatrixKind::TopoMp) => false,
        Some(_) => true,
        None => first_cell.is_some_and(|(_, c)| c.is_p2p()),
    };
    // Every cell must belong to the same family.
    for row in &matrix.rows {
        for (cell, column) in row.cells.iter().zip(&matrix.columns) {
            if *cell != Cell::Own && cell.is_p2p() != is_p2p {
                let (found, want) = if is_p2p {
                    ("a link type", "P2P statuses (OK, CNS, GNS, TNS, NS, DR, U)")
                } else {
                    ("a P2P status", "link types (NV#, PIX, PXB, PHB, NODE, SYS)")
                };
                return Err(parse_error(
                    origin,
                    row.line,
                    format!(
                        "cell {} in row {}, column {} is {found}, but the matrix from line {line} \
                         holds {want}",
                        cell_text(cell),
                        row.device.label(),
                        column.label()
                    ),
                ));
            }
        }
    }
    let gpus: BTreeSet<usize> = matrix
        .columns
        .iter()
        .filter_map(|c| match c {
            Device::Gpu(i) => Some(*i),
            Device::Nic(_) => None,
        })
        .collect();
    // Each column's position in the grid (None for NIC columns), computed once.
    let sorted: Vec<usize> = gpus.iter().copied().collect();
    let column_pos: Vec<Option<usize>> = matrix
        .columns
        .iter()
        .map(|c| match c {
            Device::Gpu(i) => sorted.binary_search(i).ok(),
            Device::Nic(_) => None,
        })
        .collect();

    let content = if is_p2p {
        let command = matrix.command.clone().or_else(|| name_command.cloned());
        let cap = match command {
            Some(MatrixKind::P2p(cap)) => cap,
            Some(MatrixKind::P2pProp) => return Ok(None),
            Some(MatrixKind::P2pUnknown(word)) => {
                return Err(parse_error(
                    origin,
                    line,
                    format!(
                        "a P2P matrix for `-p2p {word}`: expected the capability r, w, n or a \
                         (or p, which is skipped)"
                    ),
                ));
            }
            _ => {
                return Err(parse_error(
                    origin,
                    line,
                    "a P2P matrix whose capability (r, w, n or a) is unknown: put the \
                     `nvidia-smi topo -p2p r` command line above it, or name the file like \
                     topo-p2p-r.txt",
                ));
            }
        };
        let mut pairs = Grid::new(&gpus);
        let mut disabled = false;
        for row in &matrix.rows {
            let Device::Gpu(a) = row.device else { continue };
            let Some(i) = pairs.pos(a) else { continue };
            for (cell, j) in row.cells.iter().zip(&column_pos) {
                let Some(j) = *j else { continue };
                let status = match cell {
                    Cell::P2p(s) => *s,
                    Cell::Disabled => {
                        disabled = true;
                        P2pStatus::Ns
                    }
                    Cell::Own | Cell::Link(_) => continue,
                };
                pairs.set(i, j, status);
            }
        }
        if disabled {
            notes.push(format!(
                "{origin}: `-p2p {}` cells DR (disabled by regkey) are shown as NS",
                cap.letter()
            ));
        }
        Content::P2p { cap, pairs }
    } else {
        let flavor = match matrix.command.as_ref().or(name_command) {
            Some(MatrixKind::TopoMp) => Flavor::Mp,
            Some(MatrixKind::TopoM) => Flavor::M,
            _ => Flavor::Unlabeled,
        };
        let mut pairs = Grid::new(&gpus);
        let mut nic_links = Vec::new();
        let mut extras = BTreeMap::new();
        let nics: Vec<String> = matrix
            .columns
            .iter()
            .filter_map(|c| match c {
                Device::Nic(l) => Some(l.clone()),
                Device::Gpu(_) => None,
            })
            .collect();
        // GPU rows first, so that a GPU row's NIC cell wins over the NIC row's GPU cell.
        let mut rows: Vec<&Row> = matrix.rows.iter().collect();
        rows.sort_by_key(|r| matches!(r.device, Device::Nic(_)));
        for row in rows {
            let row_pos = match row.device {
                Device::Gpu(a) => pairs.pos(a),
                Device::Nic(_) => None,
            };
            for ((cell, column), col_pos) in row.cells.iter().zip(&matrix.columns).zip(&column_pos)
            {
                let Cell::Link(kind) = *cell else { continue };
                match (&row.device, column) {
                    (Device::Gpu(_), Device::Gpu(_)) => {
                        if let (Some(i), Some(j)) = (row_pos, *col_pos) {
                            pairs.set(i, j, kind);
                        }
                    }
                    (Device::Gpu(g), Device::Nic(n)) | (Device::Nic(n), Device::Gpu(g)) => {
                        nic_links.push((n.clone(), *g, kind));
                    }
                    (Device::Nic(_), Device::Nic(_)) => {}
                }
            }
            if let Device::Gpu(g) = row.device {
                extras.insert(g, read_extras(&matrix.extras, &row.extras));
            }
        }
        Content::Topo {
            flavor,
            pairs,
            nics,
            nic_links,
            extras,
        }
    };
    Ok(Some(Block {
        origin: origin.to_string(),
        line,
        gpus,
        content,
    }))
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Own => "X".to_string(),
        Cell::Link(k) => k.to_string(),
        Cell::P2p(s) => s.to_string(),
        Cell::Disabled => "DR".to_string(),
    }
}

/// `N/A` (and anything else that is not a value) → `None`.
fn value(s: &str) -> Option<&str> {
    let s = s.trim();
    let missing = s.is_empty()
        || s.eq_ignore_ascii_case("N/A")
        || s.eq_ignore_ascii_case("[N/A]")
        || s.starts_with("[Not")
        || s.starts_with("[Unknown");
    (!missing).then_some(s)
}

fn read_extras(columns: &[Extra], values: &[String]) -> GpuExtras {
    let mut out = GpuExtras::default();
    for (column, v) in columns.iter().zip(values) {
        match column {
            Extra::CpuAffinity => out.cpu_affinity = value(v).map(str::to_string),
            // A GPU near several nodes prints e.g. `0-1`; the model keeps one node, so only a
            // single number is taken.
            Extra::NumaAffinity => out.numa_node = value(v).and_then(|v| v.parse().ok()),
            // The GPU's own memory node (Grace Hopper); the model has no field for it.
            Extra::GpuNumaId => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi --query-gpu=… --format=csv

/// The model fields a `--query-gpu` column fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CsvField {
    Index,
    Name,
    Uuid,
    PciBusId,
    MemoryTotal,
    GenCurrent,
    GenMax,
    WidthCurrent,
    WidthMax,
    Other,
}

/// `index, name, memory.total [MiB], …` → the fields, if the line is such a header.
fn csv_header(line: &str) -> Option<Vec<CsvField>> {
    // `--query-gpu` headers name a few dozen fields at most.
    if line.len() > 4096 || !line.contains(',') {
        return None;
    }
    let fields: Vec<CsvField> = line
        .split(',')
        .map(|f| {
            // `memory.total [MiB]` → `memory.total`.
            let name = f
                .split('[')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            match name.as_str() {
                "index" => CsvField::Index,
                "name" | "gpu_name" => CsvField::Name,
                "uuid" | "gpu_uuid" => CsvField::Uuid,
                "pci.bus_id" | "gpu_bus_id" => CsvField::PciBusId,
                "memory.total" => CsvField::MemoryTotal,
                "pcie.link.gen.current" | "pcie.link.gen.gpucurrent" => CsvField::GenCurrent,
                "pcie.link.gen.max" | "pcie.link.gen.gpumax" => CsvField::GenMax,
                "pcie.link.width.current" => CsvField::WidthCurrent,
                "pcie.link.width.max" => CsvField::WidthMax,
                _ => CsvField::Other,
            }
        })
        .collect();
    let known = fields.iter().filter(|f| **f != CsvField::Other).count();
    (fields.contains(&CsvField::Index) && known >= 2).then_some(fields)
}

/// Reads the rows under a `--query-gpu` header at `start`; returns the next line's index.
fn parse_csv(
    lines: &[Cow<'_, str>],
    start: usize,
    fields: &[CsvField],
    origin: &str,
    out: &mut Vec<CsvGpu>,
) -> Result<usize, TopologyError> {
    let mut i = start + 1;
    while let Some(line) = lines.get(i) {
        let values: Vec<&str> = line.split(',').map(str::trim).collect();
        let index_at = fields.iter().position(|f| *f == CsvField::Index);
        let index = index_at
            .and_then(|p| values.get(p))
            .and_then(|v| v.parse::<usize>().ok());
        let Some(index) = index.filter(|_| !line.is_empty()) else {
            break;
        };
        let line_no = i + 1;
        if values.len() != fields.len() {
            return Err(parse_error(
                origin,
                line_no,
                format!(
                    "`--query-gpu` row for GPU {index} has {} fields, expected {} (one per \
                     header field on line {})",
                    values.len(),
                    fields.len(),
                    start + 1
                ),
            ));
        }
        let number = |v: &str| value(v).and_then(|v| v.split_whitespace().next()?.parse().ok());
        let mut gpu = CsvGpu {
            line: line_no,
            index,
            ..Default::default()
        };
        for (field, v) in fields.iter().zip(&values) {
            match field {
                CsvField::Name => gpu.name = value(v).map(str::to_string),
                CsvField::Uuid => gpu.uuid = value(v).map(str::to_string),
                CsvField::PciBusId => gpu.pci_bus_id = value(v).map(str::to_string),
                CsvField::MemoryTotal => gpu.memory_mib = number(v),
                CsvField::GenCurrent => gpu.gen_current = number(v).and_then(|n| n.try_into().ok()),
                CsvField::GenMax => gpu.gen_max = number(v).and_then(|n| n.try_into().ok()),
                CsvField::WidthCurrent => {
                    gpu.width_current = number(v).and_then(|n| n.try_into().ok());
                }
                CsvField::WidthMax => gpu.width_max = number(v).and_then(|n| n.try_into().ok()),
                CsvField::Index | CsvField::Other => {}
            }
        }
        out.push(gpu);
        i += 1;
    }
    Ok(i)
}

// ---------------------------------------------------------------------------------------------
// Matrices from every text → one Topology

fn index_list(set: &BTreeSet<usize>) -> String {
    set.iter()
        .map(|i| format!("GPU{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn build(parsed: Vec<Parsed>, paths: Vec<String>) -> Result<Topology, TopologyError> {
    let mut topology = Topology::new(TopologySource::Imported { paths });

    // Every matrix must describe the same GPUs.
    let mut reference: Option<(&Block, &BTreeSet<usize>)> = None;
    for block in parsed.iter().flat_map(|p| &p.blocks) {
        match reference {
            None => reference = Some((block, &block.gpus)),
            Some((first, gpus)) if *gpus != block.gpus => {
                return Err(parse_error(
                    &block.origin,
                    block.line,
                    format!(
                        "this matrix has {}, but the matrix at {}:{} has {}: every capture must \
                         come from the same machine",
                        index_list(&block.gpus),
                        first.origin,
                        first.line,
                        index_list(gpus)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    let mut gpu_set: BTreeSet<usize> = reference.map(|(_, g)| g.clone()).unwrap_or_default();
    let csv: Vec<(&Parsed, &CsvGpu)> = parsed
        .iter()
        .flat_map(|p| p.csv.iter().map(move |c| (p, c)))
        .collect();
    if reference.is_none() {
        gpu_set = csv.iter().map(|(_, c)| c.index).collect();
    } else if let Some((p, c)) = csv.iter().find(|(_, c)| !gpu_set.contains(&c.index)) {
        return Err(parse_error(
            &p.origin,
            c.line,
            format!(
                "`--query-gpu` row for GPU{}, which no matrix has (they have {}): every capture \
                 must come from the same machine",
                c.index,
                index_list(&gpu_set)
            ),
        ));
    }

    let any_nvlink = parsed.iter().flat_map(|p| &p.blocks).any(|b| {
        matches!(&b.content, Content::Topo { pairs, .. } if pairs.iter().any(|(_, _, k)| k.nvlinks().is_some()))
    });
    let mut gpus: BTreeMap<usize, Gpu> = gpu_set
        .iter()
        .map(|&index| {
            let gpu = Gpu {
                index,
                ..Default::default()
            };
            (index, gpu)
        })
        .collect();
    // (a, b) with a < b → (kind from -m, kind from -mp).
    // (kind from -m, kind from -mp) of each pair a < b, by position in the sorted GPUs (every
    // matrix has the same GPUs, so its grid positions are these): dense, like the grids.
    let gpu_list: Vec<usize> = gpu_set.iter().copied().collect();
    let n = gpu_list.len();
    let mut kinds: Vec<(Option<LinkKind>, Option<LinkKind>)> = vec![(None, None); n * n];
    let mut asymmetric = Vec::new();
    let mut nics: Vec<Nic> = Vec::new();
    let mut nic_links: BTreeMap<(usize, usize), LinkKind> = BTreeMap::new();
    let mut p2p: BTreeMap<(usize, usize), P2pPair> = BTreeMap::new();
    let mut notes: Vec<String> = Vec::new();

    for text in &parsed {
        notes.extend(text.notes.iter().cloned());
        for block in &text.blocks {
            match &block.content {
                Content::Topo {
                    flavor,
                    pairs,
                    nics: labels,
                    nic_links: links,
                    extras,
                } => {
                    // An unlabeled matrix without NVLink cells, imported beside one with them,
                    // can only be `topo -mp`.
                    let pci_only = match flavor {
                        Flavor::Mp => true,
                        Flavor::M => false,
                        Flavor::Unlabeled => {
                            any_nvlink && !pairs.iter().any(|(_, _, k)| k.nvlinks().is_some())
                        }
                    };
                    // Checked above: every matrix covers the same GPUs.
                    debug_assert_eq!(pairs.gpus, gpu_list);
                    for (i, j, kind) in pairs.iter() {
                        let (a, b) = (pairs.gpus[i], pairs.gpus[j]);
                        if a > b
                            && let Some(k) = pairs.get(j, i)
                        {
                            if k != kind {
                                asymmetric.push(format!("GPU{a}–GPU{b}"));
                            }
                            continue;
                        }
                        let Some(entry) = kinds.get_mut(i.min(j) * n + i.max(j)) else {
                            continue;
                        };
                        let slot = if pci_only { &mut entry.1 } else { &mut entry.0 };
                        slot.get_or_insert(kind);
                    }
                    for label in labels {
                        let name = text.nic_legend.get(label).cloned();
                        if name.is_none() && label.starts_with("NIC") {
                            notes.push(format!(
                                "{}: no \"NIC Legend:\" entry for {label}; its device name is \
                                 unknown",
                                text.origin
                            ));
                        }
                        let name = name.unwrap_or_else(|| label.clone());
                        if !nics.iter().any(|n| n.name == name) {
                            let index = nics.len();
                            nics.push(Nic {
                                index,
                                label: (name != *label).then(|| label.clone()),
                                name,
                                line_rate_gbps: None,
                            });
                        }
                    }
                    for (label, gpu, kind) in links {
                        let name = text.nic_legend.get(label).unwrap_or(label);
                        if let Some(nic) = nics.iter().find(|n| n.name == *name) {
                            nic_links.entry((nic.index, *gpu)).or_insert(*kind);
                        }
                    }
                    for (index, extra) in extras {
                        if let Some(gpu) = gpus.get_mut(index) {
                            if gpu.cpu_affinity.is_none() {
                                gpu.cpu_affinity.clone_from(&extra.cpu_affinity);
                            }
                            gpu.numa_node = gpu.numa_node.or(extra.numa_node);
                        }
                    }
                }
                Content::P2p { cap, pairs } => {
                    for (i, j, status) in pairs.iter() {
                        let (a, b) = (pairs.gpus[i], pairs.gpus[j]);
                        let pair = p2p.entry((a, b)).or_insert_with(|| P2pPair {
                            a,
                            b,
                            ..Default::default()
                        });
                        if pair.caps.get(*cap).is_none() {
                            pair.caps.set(*cap, Some(status));
                        }
                    }
                }
            }
        }
    }
    if !asymmetric.is_empty() {
        notes.push(format!(
            "the matrix is not symmetric for {}; the upper row's cell was used",
            asymmetric.join(", ")
        ));
    }

    for (_, c) in &csv {
        if let Some(gpu) = gpus.get_mut(&c.index) {
            gpu.name = gpu.name.take().or_else(|| c.name.clone());
            gpu.uuid = gpu.uuid.take().or_else(|| c.uuid.clone());
            gpu.pci_bus_id = gpu.pci_bus_id.take().or_else(|| c.pci_bus_id.clone());
            gpu.memory_mib = gpu.memory_mib.or(c.memory_mib);
            gpu.pcie.gen_current = gpu.pcie.gen_current.or(c.gen_current);
            gpu.pcie.gen_max = gpu.pcie.gen_max.or(c.gen_max);
            gpu.pcie.width_current = gpu.pcie.width_current.or(c.width_current);
            gpu.pcie.width_max = gpu.pcie.width_max.or(c.width_max);
        }
    }

    topology.gpus = gpus.into_values().collect();
    topology.links = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .map(|(i, j)| {
            let (m, mp) = kinds[i * n + j];
            GpuLink {
                kind: m.or(mp),
                // A `-m` cell that is not NVLink is the PCIe path itself.
                pcie_path: mp.or(m.filter(|k| k.nvlinks().is_none())),
                ..GpuLink::unknown(gpu_list[i], gpu_list[j])
            }
        })
        .collect();
    topology.nics = nics;
    topology.nic_links = nic_links
        .into_iter()
        .map(|((nic, gpu), kind)| NicLink { nic, gpu, kind })
        .collect();
    topology.p2p = p2p.into_values().collect();
    topology.normalize();

    if csv.is_empty() {
        notes.push(
            "line rates unknown: `nvidia-smi topo` output names how GPUs connect, not how fast \
             (import `nvidia-smi --query-gpu=index,name,pcie.link.gen.max,pcie.link.width.max \
             --format=csv` output as well for PCIe rates)"
                .to_string(),
        );
    } else {
        topology.derive_line_rates();
        notes.push(
            "PCIe line rates come from the `--query-gpu` CSV; NVLink line rates are unknown: \
             `nvidia-smi topo` output carries no NVLink speeds"
                .to_string(),
        );
    }
    topology.notes = notes;
    Ok(topology)
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

    #[test]
    fn capability_from_command_lines() {
        let p2p = |c| Some(MatrixKind::P2p(c));
        assert_eq!(
            matrix_kind_in_line("$ nvidia-smi topo -p2p r"),
            p2p(P2pCap::Read)
        );
        assert_eq!(
            matrix_kind_in_line("# nvidia-smi topo -p2p w"),
            p2p(P2pCap::Write)
        );
        assert_eq!(
            matrix_kind_in_line("echo \"$ nvidia-smi topo -p2p n\""),
            p2p(P2pCap::Nvlink)
        );
        assert_eq!(
            matrix_kind_in_line("user@h200:~$ nvidia-smi topo --p2pstatus a"),
            p2p(P2pCap::Atomics)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo --p2pstatus=r"),
            p2p(P2pCap::Read)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo -p2p p"),
            Some(MatrixKind::P2pProp)
        );
        assert_eq!(
            matrix_kind_in_line("nvidia-smi topo -p2p rw"),
            Some(MatrixKind::P2pUnknown("rw".to_string()))
        );
        assert_eq!(
            matrix_kind_in_line("$ nvidia-smi topo -mp"),
            Some(MatrixKind::TopoMp)
        );
        assert_eq!(
            matrix_kind_in_line("root@node2:~# nvidia-smi topo -m"),
            Some(MatrixKind::TopoM)
        );
        assert_eq!(matrix_kind_in_line("$ ls -m"), None);
        assert_eq!(matrix_kind_in_line("the -p2path is long"), None);
    }

    #[test]
    fn capability_from_file_names() {
        let p2p = |c| Some(MatrixKind::P2p(c));
        assert_eq!(
            matrix_kind_in_name("caps/h200-topo-p2p-r.txt"),
            p2p(P2pCap::Read)
        );
        assert_eq!(matrix_kind_in_name("x_p2p_w.log"), p2p(P2pCap::Write));
        assert_eq!(matrix_kind_in_name("p2p.n"), p2p(P2pCap::Nvlink));
        assert_eq!(
            matrix_kind_in_name("C:\\caps\\p2pa.txt"),
            p2p(P2pCap::Atomics)
        );
        assert_eq!(matrix_kind_in_name("p2p-read.txt"), p2p(P2pCap::Read));
        assert_eq!(
            matrix_kind_in_name("topo-p2p-p.txt"),
            Some(MatrixKind::P2pProp)
        );
        assert_eq!(
            matrix_kind_in_name("dgx-topo-mp.txt"),
            Some(MatrixKind::TopoMp)
        );
        assert_eq!(matrix_kind_in_name("dgx-topo-m.txt"), None);
        assert_eq!(matrix_kind_in_name("p2p-all.txt"), None);
        assert_eq!(matrix_kind_in_name("<stdin>"), None);
    }

    #[test]
    fn nic_legend_entries() {
        assert_eq!(
            nic_legend_entry("NIC0: mlx5_0"),
            Some(("NIC0".to_string(), "mlx5_0".to_string()))
        );
        assert_eq!(nic_legend_entry("NIC Legend:"), None);
        assert_eq!(nic_legend_entry("NIC1:"), None);
    }

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
    fn small_matrix_round_trip() {
        let text = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
                    GPU0\t X \tNV18\t0-31\t0\t\tN/A\n\
                    GPU1\tNV18\t X \t0-31\t0\t\tN/A\n";
        let t = parse(text, "t.txt").unwrap();
        assert_eq!(t.gpu_indices(), [0, 1]);
        let link = t.link(0, 1).unwrap();
        assert_eq!(link.kind, Some(LinkKind::Nv(18)));
        assert_eq!(link.pcie_path, None);
        assert_eq!(t.gpus[1].cpu_affinity.as_deref(), Some("0-31"));
        assert_eq!(t.gpus[1].numa_node, Some(0));
        assert!(t.notes.iter().any(|n| n.contains("line rates unknown")));
    }

    #[test]
    fn csv_fills_gpus_and_pcie_rates() {
        let text = "\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \n\n\
                    index, name, memory.total [MiB], pcie.link.gen.max, pcie.link.width.max\n\
                    0, NVIDIA L40S, 46068 MiB, 4, 16\n\
                    1, NVIDIA L40S, 46068 MiB, 4, 16\n";
        let t = parse(text, "t.txt").unwrap();
        assert_eq!(t.gpus[0].name.as_deref(), Some("NVIDIA L40S"));
        assert_eq!(t.gpus[0].memory_mib, Some(46068));
        let rate = t.link(0, 1).unwrap().line_rate.as_ref().unwrap();
        assert_eq!(rate.basis, "PCIe Gen4 x16");
    }
}
