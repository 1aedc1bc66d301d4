//! One text → matrices: finds each header, reads the rows under it into a [`RawMatrix`],
//! and collects the NIC legend and `--query-gpu` CSV lines beside them into a [`Parsed`].

use std::borrow::Cow;
use std::collections::BTreeMap;

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

pub(super) fn parse_text(
    text: &str,
    origin: &str,
    file_name: &str,
) -> Result<Parsed, TopologyError> {
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
                crate::model::quantities::first_of(&missing, 8),
                column_list(&matrix.columns)
            ),
        ));
    }
    Ok((matrix, i))
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
