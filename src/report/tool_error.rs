//! Why a reference tool's output (nvbandwidth's, nccl-tests') could not be read: the line where
//! it went wrong, where there is one, and what. The importer (`reference_tools`) adds the file.

/// One line: `line 12: busbw: 1e300 GB/s is out of range …`, or the message alone where the
/// fault has no line (a JSON file's missing key).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct ToolError {
    /// 1-based line of the input, when the fault is on one.
    pub line: Option<usize>,
    /// What is wrong, naming the field.
    pub message: String,
}

impl ToolError {
    /// A fault on line `line` (1-based).
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            message: message.into(),
        }
    }

    /// A fault of the whole input, or of a part with no line of its own.
    pub fn whole(message: impl Into<String>) -> Self {
        Self {
            line: None,
            message: message.into(),
        }
    }
}
