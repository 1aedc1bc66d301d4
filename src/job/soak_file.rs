//! A burn-in opened on its own, without a GPU: a recorded `soak.csv`, judged as `check
//! --soak-replay FILE` judges it (the same job, played back at once), or the file `check --json`
//! writes when a soak ran (its health check with the soak beside it). Either becomes a report
//! whose topology is the recording's GPUs, numbered as it numbers them (nothing else is known),
//! so that the app's Soak view, and anything that takes a report, shows it.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::Deserialize;

use super::{Job, Target};
use crate::health::HealthReport;
use crate::health::run::CheckOptions;
use crate::model::{Gpu, SoakOptions, SoakSection, Topology, TopologySource};
use crate::report::Report;

/// What `check --json` writes when a soak ran: the health report with the soak beside it.
#[derive(Deserialize)]
struct CheckWithSoak {
    #[serde(flatten)]
    health: HealthReport,
    soak: Option<SoakSection>,
}

/// The machine of a recorded soak: its GPUs as the recording numbers them, named as the
/// recording it is.
pub fn recording_topology(path: &str, gpus: &[usize]) -> Topology {
    let mut topo = Topology::new(TopologySource::SoakRecording {
        path: path.to_string(),
    });
    topo.gpus = gpus
        .iter()
        .map(|&index| Gpu {
            index,
            ..Default::default()
        })
        .collect();
    topo
}

/// A `.csv` file is taken for a soak recording.
pub fn is_soak_csv(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// `soak.csv` judged as `check --soak-replay FILE` judges it, with the default thresholds: a
/// report holding the soak and its verdict. The error is one line naming the file.
pub fn replay_csv(path: &Path) -> Result<Report, String> {
    let shown = path.display().to_string();
    let soak = crate::health::soak_csv::read(path)?;
    let job = Job::Check {
        target: Target::Topology {
            topology: Box::new(recording_topology(&shown, &soak.gpus)),
        },
        options: CheckOptions {
            gpus: Default::default(),
            quick: false,
            thresholds: Default::default(),
            soak: Some(SoakOptions {
                duration_s: 0.0,
                loads: Vec::new(),
                replay: Some(shown.clone()),
                replay_speed: None,
                nccl_lib: None,
            }),
        },
    };
    super::run(&job, &AtomicBool::new(false), &mut |_| {}).map_err(|e| format!("{e}: {shown}"))
}

/// The file `check --json` wrote after a soak, as a report (`None` when `text` is not such a
/// file, or one without a soak).
pub fn from_check_json(text: &str, path: &Path) -> Option<Report> {
    let CheckWithSoak { health, soak } = serde_json::from_str(text).ok()?;
    let soak = soak?;
    let topo = recording_topology(
        soak.replay_of
            .as_deref()
            .unwrap_or(&path.display().to_string()),
        &soak.gpus,
    );
    let mut info = super::machine_info(&topo, "check");
    info.created_at = health.created_at.clone();
    let mut report = Report::new(info, topo);
    report.health = Some(health);
    report.soak = Some(soak);
    Some(report)
}

/// Reads `path` as a burn-in: a soak.csv replayed, or a `check --json` file with a soak;
/// `Ok(None)` when it is neither (a `.json` file of something else), an error naming the file
/// when it is one but cannot be read.
pub fn open(path: &Path) -> Result<Option<Report>, String> {
    if is_soak_csv(path) {
        return replay_csv(path).map(Some);
    }
    let text = crate::report::read_text(path).map_err(|e| format!("{e}: {}", path.display()))?;
    Ok(from_check_json(&text, path))
}
