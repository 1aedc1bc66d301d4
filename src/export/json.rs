//! JSON exports: the model types as they are, pretty-printed.

use serde::Serialize;

use super::ExportError;

/// Pretty JSON of any result or topology, with a trailing newline.
pub fn to_json<T: Serialize>(value: &T) -> Result<Vec<u8>, ExportError> {
    let mut out = serde_json::to_vec_pretty(value)?;
    out.push(b'\n');
    Ok(out)
}
