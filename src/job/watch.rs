//! `scalescope watch` as a job any runner can run: this machine's live traffic (the NVML
//! sampler of `telemetry::traffic`) streamed as [`LiveEvent`]s until cancelled. The command line,
//! the app and the agent (for a client over ssh) all run it through here.
//!
//! Where live traffic lives (open this file first): the feeds — the NVML sampler, a recording
//! replayed, recordings read — in `src/telemetry/traffic.rs`; a sample and a recording as data in
//! `src/model/traffic.rs`; the terminal lines, CSV and recording of `scalescope watch` in
//! `src/cli/watch.rs` and its `/metrics` endpoint in `src/cli/metrics_server.rs`, written in
//! Prometheus' format by `src/export/prometheus.rs`; the app's Live overlay in
//! `src/ui/views/live/mod.rs` (its feed and controls) and `src/ui/views/live/draw.rs` (the
//! drawing).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::JobError;
use crate::bench::plan::select_gpus;
use crate::model::traffic::LiveEvent;
use crate::model::{GpuSelection, Interval};
use crate::telemetry::traffic;
use crate::topology::live;

/// What to watch: the GPUs and the interval, each checked when it was made (or read).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WatchRequest {
    #[serde(default)]
    pub gpus: GpuSelection,
    pub interval_s: Interval,
}

/// Watches this machine's GPUs, sending the header, then a sample per interval to `sink`, until
/// `cancel` is set (`Ok`) or the sampler fails (the error; what was sent stays sent).
pub fn watch(
    request: &WatchRequest,
    cancel: &AtomicBool,
    sink: &mut dyn FnMut(LiveEvent),
) -> Result<(), JobError> {
    let topo = live::read()?;
    let gpus = select_gpus(&topo, &request.gpus)?;
    let host = match &topo.source {
        crate::model::TopologySource::Live { hostname, .. } => hostname.clone(),
        _ => None,
    };
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let feed = traffic::watch_live(
        &topo,
        &gpus,
        request.interval_s.duration(),
        started_at,
        host,
    )?;
    stream(feed, cancel, sink)
}

/// A recording played back at ten times its pace as if it were this machine's traffic: the
/// agent's test hook (`--test-watch-replay`), so that tests without a GPU stream samples.
pub fn watch_recording(
    path: &std::path::Path,
    cancel: &AtomicBool,
    sink: &mut dyn FnMut(LiveEvent),
) -> Result<(), JobError> {
    let recording = traffic::read_recording(path)?;
    let feed = traffic::replay(recording, 10.0)
        .map_err(|e| JobError::machine(format!("watch: cannot start the replay: {e}")))?;
    stream(feed, cancel, sink)
}

/// Forwards `feed`'s header and samples to `sink` until `cancel` is set or the feed ends (an
/// error when it ended on one).
pub fn stream(
    feed: traffic::LiveFeed,
    cancel: &AtomicBool,
    sink: &mut dyn FnMut(LiveEvent),
) -> Result<(), JobError> {
    loop {
        if cancel.load(Ordering::Relaxed) {
            feed.stop();
            return Ok(());
        }
        match feed.events.recv_timeout(Duration::from_millis(50)) {
            Ok(LiveEvent::End { error: Some(e) }) => {
                return Err(JobError::machine(format!("watch: {e}")));
            }
            Ok(LiveEvent::End { error: None }) | Err(RecvTimeoutError::Disconnected) => {
                return Ok(());
            }
            Ok(event) => sink(event),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
