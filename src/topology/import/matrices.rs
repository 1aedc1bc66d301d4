//! One text → matrices: finds each header, reads the rows under it into a [`RawMatrix`],
//! and collects the NIC legend and `--query-gpu` CSV lines beside them into a [`Parsed`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use super::input::BINARY;
use super::matrix_kind::{MatrixKind, matrix_kind_in_line, matrix_kind_in_name};
use super::query_csv::{CsvGpu, csv_header, parse_csv};
use super::raw::{Device, RawMatrix, Row};
use super::settle::{Block, settle};
use super::tokens::{
    CELLS_EXPECTED, Cell, Extra, gpu_label, header_tokens, is_device_label, is_header, row_tokens,
    row_tokens_up_to, strip_ansi,
};
use super::{MAX_COLUMNS, TopologyError, parse_error, shown};
use crate::model::TopologyNote;

/// Everything one text holds.
pub(super) struct Parsed {
    pub(super) origin: String,
    pub(super) blocks: Vec<Block>,
    /// `NIC0` → `mlx5_0`, from the "NIC Legend:" block.
    pub(super) nic_legend: BTreeMap<String, String>,
    pub(super) csv: Vec<CsvGpu>,
    pub(super) notes: Vec<TopologyNote>,
}

/// Reads one text (named `origin` in errors; `file_name` may name the command that printed
/// it): its matrices, NIC legend and `--query-gpu` CSV lines. A text with none of them is an
/// error that says what was expected.
pub(super) fn parse_text(
    text: &str,
    origin: &str,
    file_name: &str,
) -> Result<Parsed, TopologyError> {
    let lines = text_lines(text, origin)?;
    let Some(first) = lines.iter().position(|l| !l.is_empty()) else {
        return Err(parse_error(
            origin,
            1,
            "empty input: expected `nvidia-smi topo -m` output",
        ));
    };
    let mut reader = TextReader {
        lines: &lines,
        origin,
        name_command: matrix_kind_in_name(file_name),
        parsed: Parsed {
            origin: origin.to_string(),
            blocks: Vec::new(),
            nic_legend: BTreeMap::new(),
            csv: Vec::new(),
            notes: Vec::new(),
        },
        pending: None,
        skipped: None,
    };
    let mut i = first;
    while i < lines.len() {
        i = reader.step(i)?;
    }
    if reader.parsed.blocks.is_empty() && reader.parsed.csv.is_empty() {
        return Err(reader.nothing_found(first));
    }
    Ok(reader.parsed)
}

/// The lines of `text`, trimmed and without terminal escape codes (and a leading byte-order
/// mark); a text with a NUL byte is refused as binary.
fn text_lines<'t>(text: &'t str, origin: &str) -> Result<Vec<Cow<'t, str>>, TopologyError> {
    if let Some(pos) = text.find('\0') {
        let line = 1 + text[..pos].matches('\n').count();
        return Err(parse_error(origin, line, BINARY));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Lines without escape codes (nearly all) are borrowed, not copied.
    Ok(text
        .split('\n')
        .map(|l| {
            if l.contains('\x1b') {
                Cow::Owned(strip_ansi(l).trim().to_string())
            } else {
                Cow::Borrowed(l.trim())
            }
        })
        .collect())
}

/// [`parse_text`] under way: the text's lines and what has been read from them.
struct TextReader<'a> {
    lines: &'a [Cow<'a, str>],
    origin: &'a str,
    /// The command the file's name names, if any.
    name_command: Option<MatrixKind>,
    parsed: Parsed,
    /// The command named since the last matrix, which the next matrix belongs to.
    pending: Option<MatrixKind>,
    /// The first matrix read but not kept (`-p2p p`), for the error when nothing else is there.
    skipped: Option<usize>,
}

impl TextReader<'_> {
    /// Reads what starts at line index `i` (a legend entry, a CSV block, a matrix, a command
    /// line, or something not ours to judge); returns the index of the next line to read.
    fn step(&mut self, i: usize) -> Result<usize, TopologyError> {
        let (lines, origin) = (self.lines, self.origin);
        let line = &lines[i];
        if line.is_empty() {
            return Ok(i + 1);
        }
        if let Some((label, name)) = nic_legend_entry(line) {
            self.parsed.nic_legend.insert(label, name);
            return Ok(i + 1);
        }
        if line.ends_with("Legend:") {
            return Ok(i + 1);
        }
        if let Some(fields) = csv_header(line) {
            return parse_csv(lines, i, &fields, origin, &mut self.parsed.csv);
        }
        let tokens = header_tokens(line);
        if is_header(&tokens) {
            let (matrix, next) = read_matrix(lines, i, &tokens, self.pending.take(), origin)?;
            let header_line = matrix.header_line;
            let name_command = self.name_command.as_ref();
            match settle(matrix, origin, name_command, &mut self.parsed.notes)? {
                Some(block) => self.parsed.blocks.push(block),
                None => _ = self.skipped.get_or_insert(header_line),
            }
            return Ok(next);
        }
        if let Some(cmd) = matrix_kind_in_line(line) {
            self.pending = Some(cmd);
            return Ok(i + 1);
        }
        let row = row_tokens_up_to(line, 2);
        if let (Some(label), Some(second)) = (row.first(), row.get(1))
            && gpu_label(label).is_some()
            && Cell::parse(second).is_some()
        {
            return Err(parse_error(
                origin,
                i + 1,
                format!(
                    "row {label} comes before any header line: expected the header \
                     (GPU0 GPU1 …) that `nvidia-smi topo -m` prints first"
                ),
            ));
        }
        // Anything else (a legend entry like `X = Self`, a shell prompt, a note someone typed)
        // is not ours to judge.
        Ok(i + 1)
    }

    /// The error for a text with no matrix kept and no CSV, its first line at index `first`:
    /// only a `-p2p p` matrix, or nothing recognised.
    fn nothing_found(&self, first: usize) -> TopologyError {
        if let Some(line) = self.skipped {
            return parse_error(
                self.origin,
                line,
                "only a `topo -p2p p` matrix, which scalescope does not store: expected \
                 `nvidia-smi topo -m`, `-mp` or `-p2p r|w|n|a` output",
            );
        }
        let found: String = self
            .lines
            .get(first)
            .map_or("", |l| l.as_ref())
            .chars()
            .take(60)
            .collect();
        parse_error(
            self.origin,
            first + 1,
            format!(
                "expected `nvidia-smi topo -m` output (a header line of GPU0 GPU1 … columns), \
                 found {found:?}"
            ),
        )
    }
}

/// `NIC0: mlx5_0` → (`NIC0`, `mlx5_0`).
pub(super) fn nic_legend_entry(line: &str) -> Option<(String, String)> {
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

/// Reads a header and the rows under it; returns the matrix and the index of the first line
/// after it.
pub(super) fn read_matrix(
    lines: &[Cow<'_, str>],
    start: usize,
    tokens: &[&str],
    command: Option<MatrixKind>,
    origin: &str,
) -> Result<(RawMatrix, usize), TopologyError> {
    let header_line = start + 1;
    let Header {
        columns,
        positions,
        extras,
    } = read_header(tokens, header_line, origin)?;
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
    check_every_gpu_row(&matrix, &has_row, lines, i, origin)?;
    check_symmetric(&matrix, origin)?;
    Ok((matrix, i))
}

/// A `topo -m` matrix says the same kind of link of a pair from either GPU's row; two rows that
/// disagree (`NV18` one way, `SYS` the other) are an edited or damaged capture, refused at the
/// later row's line rather than settled by either cell. Two NVLink counts may differ.
fn check_symmetric(matrix: &RawMatrix, origin: &str) -> Result<(), TopologyError> {
    let gpu_rows: HashMap<usize, &super::raw::Row> = matrix
        .rows
        .iter()
        .filter_map(|r| match r.device {
            Device::Gpu(g) => Some((g, r)),
            Device::Nic(_) => None,
        })
        .collect();
    let column = |g: usize| matrix.columns.iter().position(|c| *c == Device::Gpu(g));
    for row in &matrix.rows {
        let Device::Gpu(a) = row.device else { continue };
        for (k, cell) in row.cells.iter().enumerate() {
            let (Some(Device::Gpu(b)), Cell::Link(here)) = (matrix.columns.get(k), cell) else {
                continue;
            };
            let Some(other) = gpu_rows.get(b).filter(|o| o.line < row.line) else {
                continue;
            };
            // Two NVLink counts may differ (a GPU with links down through NVSwitch sees fewer
            // than its peer does): `merge.rs` takes the fewer. Another kind may not.
            let both_nvlink = |x: &crate::model::LinkKind, y: &crate::model::LinkKind| {
                x.nvlinks().is_some() && y.nvlinks().is_some()
            };
            if let Some(Cell::Link(there)) = column(a).and_then(|c| other.cells.get(c))
                && there != here
                && !both_nvlink(here, there)
            {
                return Err(parse_error(
                    origin,
                    row.line,
                    format!(
                        "GPU{a}'s row has {here} towards GPU{b} where GPU{b}'s row (line {}) has \
                         {there}: the matrix is not symmetric (an edited or damaged capture)",
                        other.line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A matrix's header line, read.
struct Header {
    /// The device columns, in order.
    columns: Vec<Device>,
    /// Column label → position: one lookup per row instead of a scan (1000 GPUs: 10^6 scans).
    positions: HashMap<String, usize>,
    /// The extra columns after the devices.
    extras: Vec<Extra>,
}

/// The columns of a header line (its line number `header_line`). Refused: too many columns, a
/// column twice, no GPU column or more GPUs than a topology holds.
fn read_header(tokens: &[&str], header_line: usize, origin: &str) -> Result<Header, TopologyError> {
    let mut columns = Vec::new();
    let mut positions: HashMap<String, usize> = HashMap::new();
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
    let gpu_columns = columns
        .iter()
        .filter(|c| matches!(c, Device::Gpu(_)))
        .count();
    // Before any row is read: the pairs of a larger matrix are what would not fit.
    crate::model::check_gpu_count(gpu_columns)
        .map_err(|why| parse_error(origin, header_line, format!("a header of {why}")))?;
    if gpu_columns == 0 {
        return Err(parse_error(
            origin,
            header_line,
            format!(
                "a matrix with no GPU columns: expected GPU0, GPU1 … in the header, found {}",
                shown(&tokens.join(" "))
            ),
        ));
    }
    Ok(Header {
        columns,
        positions,
        extras,
    })
}

/// Every GPU column of `matrix` has its row (`has_row`, by column); else an error at line
/// index `i`, where the rows ended.
fn check_every_gpu_row(
    matrix: &RawMatrix,
    has_row: &[bool],
    lines: &[Cow<'_, str>],
    i: usize,
    origin: &str,
) -> Result<(), TopologyError> {
    let missing: Vec<String> = matrix
        .columns
        .iter()
        .zip(has_row)
        .filter(|(c, has)| matches!(c, Device::Gpu(_)) && !**has)
        .map(|(c, _)| c.label())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let found = if lines.get(i).is_none_or(|l| l.is_empty()) {
        "the end of the matrix".to_string()
    } else {
        shown(lines.get(i).map_or("", |l| l.as_ref()))
    };
    Err(parse_error(
        origin,
        i + 1,
        format!(
            "no row for {} (the header on line {} has columns {}): expected one row per GPU \
             column, found {found}",
            crate::model::quantities::first_of(&missing, 8),
            matrix.header_line,
            column_list(&matrix.columns)
        ),
    ))
}

/// `GPU0..GPU3, NIC0..NIC1` or `GPU0, GPU1, mlx5_0..mlx5_3`: the device columns, with runs of
/// one kind shortened.
pub(super) fn column_list(columns: &[Device]) -> String {
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

/// The row of `device` on line `line` of `matrix`: one cell per column (X in its own column
/// only), then at most one value per extra column.
pub(super) fn read_row(
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
    let extras = row_extras(matrix, &label, values, line, origin)?;
    let cells = row_cells(matrix, &device, values, line, origin)?;
    Ok(Row {
        line,
        device,
        cells,
        extras,
    })
}

/// The values of row `label` after its cells (`values` holds the cells first): at most one
/// per extra column of the header.
fn row_extras(
    matrix: &RawMatrix,
    label: &str,
    values: &[&str],
    line: usize,
    origin: &str,
) -> Result<Vec<String>, TopologyError> {
    let n = matrix.columns.len();
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
    Ok(extras)
}

/// The cells of `device`'s row (the first of `values`, one per column): X in its own column
/// and nowhere else.
fn row_cells(
    matrix: &RawMatrix,
    device: &Device,
    values: &[&str],
    line: usize,
    origin: &str,
) -> Result<Vec<Cell>, TopologyError> {
    let label = device.label();
    let mut cells = Vec::with_capacity(matrix.columns.len());
    for (value, column) in values.iter().zip(&matrix.columns) {
        let Some(cell) = Cell::parse(value) else {
            // Unreachable: the first n values were checked above; kept as an error, not a panic.
            return Err(parse_error(origin, line, format!("unknown cell {value:?}")));
        };
        let own = column == device;
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
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_legend_entries() {
        assert_eq!(
            nic_legend_entry("NIC0: mlx5_0"),
            Some(("NIC0".to_string(), "mlx5_0".to_string()))
        );
        assert_eq!(nic_legend_entry("NIC Legend:"), None);
        assert_eq!(nic_legend_entry("NIC1:"), None);
    }
}
