//! A matrix as read, before its kind is settled: its header's columns ([`Device`]s), its
//! [`Row`]s and their extra columns. `matrices.rs` reads them, `settle.rs` settles them.

use super::matrix_kind::MatrixKind;
use super::tokens::{Cell, Extra};

/// A row or column of a matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Device {
    Gpu(usize),
    /// A NIC by its column label (`NIC0`, or `mlx5_0` in old output).
    Nic(String),
}

impl Device {
    pub(super) fn label(&self) -> String {
        match self {
            Self::Gpu(i) => format!("GPU{i}"),
            Self::Nic(l) => l.clone(),
        }
    }
}

pub(super) struct Row {
    pub(super) line: usize,
    pub(super) device: Device,
    pub(super) cells: Vec<Cell>,
    /// Values of the extra columns, in header order (`N/A` kept as written).
    pub(super) extras: Vec<String>,
}

/// A matrix as read, before its kind is settled.
pub(super) struct RawMatrix {
    pub(super) header_line: usize,
    pub(super) command: Option<MatrixKind>,
    pub(super) columns: Vec<Device>,
    pub(super) extras: Vec<Extra>,
    pub(super) rows: Vec<Row>,
}
