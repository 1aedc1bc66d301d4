//! The text cells of a catalog file, read without its types: an n × n matrix of codes with its
//! `X` diagonal ([`grid`]) and a `topo -m` style matrix of link kinds ([`link_matrix`]) (a PCI bus
//! id is read by `model::pci_bus_key`). `catalog.rs` builds the machine from them.

use crate::model::LinkKind;

/// Splits `rows` into an n × n grid of cells, checking the shape and the `X` diagonal.
pub(super) fn grid<'a>(
    what: &str,
    rows: &'a [String],
    n: usize,
) -> Result<Vec<Vec<&'a str>>, String> {
    if rows.len() != n {
        return Err(format!(
            "{what}: {} rows, expected {n} (one per GPU, as [gpu] count says)",
            rows.len()
        ));
    }
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let cells: Vec<&str> = row.split_whitespace().collect();
            if cells.len() != n {
                return Err(format!(
                    "{what} row {i} (GPU{i}): {} cells, expected {n}",
                    cells.len()
                ));
            }
            if cells[i] != "X" {
                return Err(format!(
                    "{what} row {i} (GPU{i}), column {i}: the diagonal must be X, found {:?}",
                    cells[i]
                ));
            }
            Ok(cells)
        })
        .collect()
}

/// A `topo -m` style matrix of link codes; symmetric, `None` on the diagonal.
pub(super) fn link_matrix(
    what: &str,
    rows: &[String],
    n: usize,
) -> Result<Vec<Vec<Option<LinkKind>>>, String> {
    let cells = grid(what, rows, n)?;
    let mut out = vec![vec![None; n]; n];
    for (i, row) in cells.iter().enumerate() {
        for (j, cell) in row.iter().enumerate() {
            if i != j {
                out[i][j] = Some(
                    cell.parse::<LinkKind>()
                        .map_err(|e| format!("{what} row {i} (GPU{i}), column {j}: {e}"))?,
                );
            }
        }
    }
    for i in 0..n {
        for j in i + 1..n {
            if out[i][j] != out[j][i] {
                return Err(format!(
                    "{what}: GPU{i}→GPU{j} is {} but GPU{j}→GPU{i} is {}; the matrix must be symmetric",
                    cells[i][j], cells[j][i]
                ));
            }
        }
    }
    Ok(out)
}
