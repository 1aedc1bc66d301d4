//! Results → bytes. Exporters are pure functions of the data: one place in `cli`/`ui` writes
//! files. Column names and row order are stable (sorted by GPU index), so exports diff cleanly.

pub mod csv;
pub mod json;
pub mod prometheus;
pub mod traffic_csv;

/// Why an export failed (in practice only on a broken writer).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Csv(#[from] ::csv::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl crate::model::Blame for ExportError {
    /// Serializing what scalescope holds is never the user's doing.
    fn fault(&self) -> crate::model::Fault {
        crate::model::Fault::Machine
    }
}

/// Formats an optional value for a CSV cell: empty when unknown, never 0.
pub(crate) fn cell<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Formats an optional float with `decimals` places: empty when unknown.
pub(crate) fn cell_f(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}")).unwrap_or_default()
}
