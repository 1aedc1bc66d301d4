//! JSON exports: the model types as they are, pretty-printed.

use serde::Serialize;

use super::ExportError;

/// Pretty JSON of any result or topology, with a trailing newline.
pub fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, ExportError> {
    let mut out = serde_json::to_vec_pretty(value)?;
    out.push(b'\n');
    Ok(out)
}

/// A report's JSON: pretty, or on one line for a machine above
/// [`crate::bench::plan::ALL_PAIRS_MAX_GPUS`] GPUs, whose topology alone is a million pair
/// entries (indentation made a 1,000-GPU report 351 MB, past what a report may be).
pub fn report(r: &crate::report::Report) -> Result<Vec<u8>, ExportError> {
    if r.topology.gpus.len() <= crate::bench::plan::ALL_PAIRS_MAX_GPUS {
        return to_json(r);
    }
    let mut out = serde_json::to_vec(r)?;
    out.push(b'\n');
    Ok(out)
}
