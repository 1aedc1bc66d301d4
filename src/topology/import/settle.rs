//! A matrix as read → a [`Block`] of known kind: a `topo -m`/`-mp` matrix of link kinds (with
//! each GPU's affinity columns) or a `topo -p2p` matrix of one capability, in a dense [`Grid`].

use std::collections::{BTreeMap, BTreeSet};

use super::matrix_kind::MatrixKind;
use super::raw::{Device, RawMatrix, Row};
use super::tokens::{Cell, Extra};
use super::{TopologyError, parse_error};
use crate::model::{LinkKind, P2pCap, P2pStatus, TopologyNote};

/// How a topo matrix's cells are to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flavor {
    /// `topo -m`.
    M,
    /// `topo -mp`.
    Mp,
    /// No command line or file name said; settled once every file is read.
    Unlabeled,
}

/// Per-GPU facts from a `topo -m` row's extra columns.
#[derive(Clone, Debug, Default)]
pub(super) struct GpuExtras {
    pub(super) cpu_affinity: Option<String>,
    pub(super) numa_node: Option<u32>,
}

/// The cells of one matrix between GPUs: a dense square over the block's GPUs sorted by index,
/// one cell per ordered (row, column) pair as printed. Lookups are O(1) and iteration runs in
/// (row, column) order: a 1000-GPU matrix is 10^6 cells, which maps would spend most of an
/// import on.
pub(super) struct Grid<T> {
    /// The GPUs, sorted.
    pub(super) gpus: Vec<usize>,
    /// Row-major, `gpus.len()` squared.
    pub(super) cells: Vec<Option<T>>,
}

impl<T: Copy> Grid<T> {
    pub(super) fn new(gpus: &BTreeSet<usize>) -> Grid<T> {
        let n = gpus.len();
        Grid {
            gpus: gpus.iter().copied().collect(),
            cells: vec![None; n * n],
        }
    }

    /// Position of `gpu` among the grid's GPUs.
    pub(super) fn pos(&self, gpu: usize) -> Option<usize> {
        self.gpus.binary_search(&gpu).ok()
    }

    pub(super) fn set(&mut self, i: usize, j: usize, v: T) {
        let n = self.gpus.len();
        if let Some(c) = self.cells.get_mut(i * n + j) {
            *c = Some(v);
        }
    }

    pub(super) fn get(&self, i: usize, j: usize) -> Option<T> {
        self.cells.get(i * self.gpus.len() + j).copied().flatten()
    }

    /// (row position, column position, value) of every filled cell, row by row.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, usize, T)> + '_ {
        let n = self.gpus.len().max(1);
        self.cells
            .iter()
            .enumerate()
            .filter_map(move |(k, c)| c.map(|v| (k / n, k % n, v)))
    }
}

pub(super) enum Content {
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
pub(super) struct Block {
    pub(super) origin: String,
    pub(super) line: usize,
    pub(super) gpus: BTreeSet<usize>,
    pub(super) content: Content,
}

/// Decides what a matrix is (topo or P2P, which capability) and turns it into a [`Block`];
/// `None` for a matrix we do not store (`-p2p p`).
pub(super) fn settle(
    matrix: RawMatrix,
    origin: &str,
    name_command: Option<&MatrixKind>,
    notes: &mut Vec<TopologyNote>,
) -> Result<Option<Block>, TopologyError> {
    let line = matrix.header_line;
    let is_p2p = holds_p2p(&matrix);
    check_one_family(&matrix, is_p2p, origin)?;
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
        let Some(cap) = p2p_capability(&matrix, name_command, origin)? else {
            return Ok(None);
        };
        p2p_content(&matrix, cap, &gpus, &column_pos, origin, notes)
    } else {
        topo_content(&matrix, name_command, &gpus, &column_pos)
    };
    Ok(Some(Block {
        origin: origin.to_string(),
        line,
        gpus,
        content,
    }))
}

/// Whether `matrix` holds P2P statuses: as its command says, else as its first cell is.
fn holds_p2p(matrix: &RawMatrix) -> bool {
    match &matrix.command {
        Some(MatrixKind::TopoM | MatrixKind::TopoMp) => false,
        Some(_) => true,
        None => matrix
            .rows
            .iter()
            .flat_map(|r| r.cells.iter())
            .find(|c| **c != Cell::Own)
            .is_some_and(|c| c.is_p2p()),
    }
}

/// Every cell of `matrix` belongs to one family: P2P statuses when `is_p2p`, else link types.
fn check_one_family(matrix: &RawMatrix, is_p2p: bool, origin: &str) -> Result<(), TopologyError> {
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
                        "cell {} in row {}, column {} is {found}, but the matrix from line {} \
                         holds {want}",
                        cell_text(cell),
                        row.device.label(),
                        column.label(),
                        matrix.header_line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The capability a P2P matrix shows, from the command above it or the file's name
/// (`name_command`); `None` for `-p2p p`, which is not stored; unknown is an error.
fn p2p_capability(
    matrix: &RawMatrix,
    name_command: Option<&MatrixKind>,
    origin: &str,
) -> Result<Option<P2pCap>, TopologyError> {
    let line = matrix.header_line;
    match matrix.command.clone().or_else(|| name_command.cloned()) {
        Some(MatrixKind::P2p(cap)) => Ok(Some(cap)),
        Some(MatrixKind::P2pProp) => Ok(None),
        Some(MatrixKind::P2pUnknown(word)) => Err(parse_error(
            origin,
            line,
            format!(
                "a P2P matrix for `-p2p {word}`: expected the capability r, w, n or a \
                 (or p, which is skipped)"
            ),
        )),
        _ => Err(parse_error(
            origin,
            line,
            "a P2P matrix whose capability (r, w, n or a) is unknown: put the \
             `nvidia-smi topo -p2p r` command line above it, or name the file like \
             topo-p2p-r.txt",
        )),
    }
}

/// A P2P matrix of `cap` as each GPU pair's status (`column_pos`: each column's place in the
/// grid of `gpus`); DR cells count as NS, with a note.
fn p2p_content(
    matrix: &RawMatrix,
    cap: P2pCap,
    gpus: &BTreeSet<usize>,
    column_pos: &[Option<usize>],
    origin: &str,
    notes: &mut Vec<TopologyNote>,
) -> Content {
    let mut pairs = Grid::new(gpus);
    let mut disabled = false;
    for row in &matrix.rows {
        let Device::Gpu(a) = row.device else { continue };
        let Some(i) = pairs.pos(a) else { continue };
        for (cell, j) in row.cells.iter().zip(column_pos) {
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
        notes.push(TopologyNote::new(format!(
            "{origin}: `-p2p {}` cells DR (disabled by regkey) are shown as NS",
            cap.letter()
        )));
    }
    Content::P2p { cap, pairs }
}

/// A topo matrix as each GPU pair's link kind (`column_pos`: each column's place in the grid
/// of `gpus`), its NIC columns and their links, and each GPU's extra columns; `-m` or `-mp`
/// as its command or the file's name (`name_command`) says.
fn topo_content(
    matrix: &RawMatrix,
    name_command: Option<&MatrixKind>,
    gpus: &BTreeSet<usize>,
    column_pos: &[Option<usize>],
) -> Content {
    let flavor = match matrix.command.as_ref().or(name_command) {
        Some(MatrixKind::TopoMp) => Flavor::Mp,
        Some(MatrixKind::TopoM) => Flavor::M,
        _ => Flavor::Unlabeled,
    };
    let mut pairs = Grid::new(gpus);
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
        for ((cell, column), col_pos) in row.cells.iter().zip(&matrix.columns).zip(column_pos) {
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
}

pub(super) fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Own => "X".to_string(),
        Cell::Link(k) => k.to_string(),
        Cell::P2p(s) => s.to_string(),
        Cell::Disabled => "DR".to_string(),
    }
}

/// `N/A` (and anything else that is not a value) → `None`.
pub(super) fn value(s: &str) -> Option<&str> {
    let s = s.trim();
    let missing = s.is_empty()
        || s.eq_ignore_ascii_case("N/A")
        || s.eq_ignore_ascii_case("[N/A]")
        || s.starts_with("[Not")
        || s.starts_with("[Unknown");
    (!missing).then_some(s)
}

pub(super) fn read_extras(columns: &[Extra], values: &[String]) -> GpuExtras {
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
