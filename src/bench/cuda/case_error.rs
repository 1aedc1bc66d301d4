//! Why a case produced no figures — a bandwidth cell or a collective alike — and the status and
//! reason its row then carries.

use super::measure;
use crate::cuda::CudaError;
use crate::cuda::nccl::NcclError;
use crate::model::Status;

/// Why a case produced no figures (turned into a row by [`CaseError::status`]).
#[derive(Debug)]
pub(crate) enum CaseError {
    Cuda(CudaError),
    Nccl(NcclError),
    /// Peer access is unsupported between these two GPUs.
    PeerUnsupported(usize, usize),
    Waived(String),
    Skipped(String),
    Failed(String),
    /// GPU work did not finish before its deadline.
    Timeout(String),
}

impl From<CudaError> for CaseError {
    fn from(e: CudaError) -> Self {
        Self::Cuda(e)
    }
}

impl From<NcclError> for CaseError {
    fn from(e: NcclError) -> Self {
        Self::Nccl(e)
    }
}

impl From<measure::MeasureError> for CaseError {
    fn from(e: measure::MeasureError) -> Self {
        match e {
            measure::MeasureError::Cuda(e) => Self::Cuda(e),
            measure::MeasureError::SpinTimeout => Self::Failed(format!(
                "the host did not release the streams within {} s (too many copies queued \
                 behind the spin kernel?): lower --iters",
                measure::SPIN_TIMEOUT_NS / 1_000_000_000
            )),
        }
    }
}

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cuda(e) => write!(f, "{e}"),
            Self::Nccl(e) => write!(f, "{e}"),
            Self::PeerUnsupported(a, b) => {
                write!(f, "peer access unsupported between GPU {a} and {b}")
            }
            Self::Skipped(s) | Self::Waived(s) | Self::Failed(s) | Self::Timeout(s) => {
                f.write_str(s)
            }
        }
    }
}

impl CaseError {
    /// The row's status and reason for this failure at `bytes`.
    pub(crate) fn status(&self, bytes: u64) -> (Status, String) {
        let size = crate::model::quantities::format_bytes(bytes);
        match self {
            Self::Cuda(e) if e.is_out_of_memory() => {
                (Status::Skipped, format!("out of memory at {size} ({e})"))
            }
            Self::Cuda(e) if e.is_peer_unsupported() => {
                (Status::Waived, format!("peer access unsupported ({e})"))
            }
            Self::PeerUnsupported(..) => (Status::Waived, self.to_string()),
            Self::Skipped(s) => (Status::Skipped, s.clone()),
            Self::Waived(s) => (Status::Waived, s.clone()),
            other => (Status::Failed, other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(
            CaseError::PeerUnsupported(0, 1).status(1),
            (
                Status::Waived,
                "peer access unsupported between GPU 0 and 1".to_string()
            )
        );
        assert_eq!(
            CaseError::Timeout("hung".into()).status(1),
            (Status::Failed, "hung".to_string())
        );
    }
}
