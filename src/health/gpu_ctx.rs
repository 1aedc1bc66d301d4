//! Which GPU a state check is about and where its readings come from: what every inventory
//! check (state_checks, settings_checks, clock_check, temperature_check) writes its lines with.

use super::causes;
use super::{Check, CheckId, Subject, Verdict};
use crate::model::{InventoryKind, Source};

/// Which GPU and where its readings come from.
pub(super) struct Ctx {
    pub(super) g: usize,
    pub(super) source: Source,
    pub(super) kind: Option<InventoryKind>,
}

impl Ctx {
    pub(super) fn check(&self, id: CheckId, verdict: Verdict, detail: impl Into<String>) -> Check {
        Check::new(id, Subject::Gpu(self.g), verdict, self.source, detail)
    }

    pub(super) fn unknown(&self, id: CheckId, what: &str) -> Check {
        let how = match self.kind {
            Some(InventoryKind::Imported) => "not in the captures",
            Some(InventoryKind::Catalog) => "not stated in the catalog entry",
            _ => "not readable through NVML here",
        };
        self.check(id, Verdict::Unknown, format!("{what}: {how}"))
            .because(&causes::NOT_READ)
    }
}
