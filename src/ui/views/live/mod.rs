//! The Live overlay's state on one source: the feed (this machine's NVML sampler or a server's,
//! both through [`crate::remote::Runner::watch`] on a worker thread, or a recording played back
//! with [`traffic::replay`]), the window of samples it holds, pause and the sample shown, and
//! the bar of controls above the Topology view. The drawing is [`self::draw`]'s.
//!
//! The window is the report's own [`Report::traffic`] (one shape from feed to file): samples
//! are appended there as they come, so saving or exporting the report keeps what is held. A
//! watch keeps the last [`WINDOW_S`] seconds; a replay holds its whole recording.
//!
//! NVML, ssh and file reads never run here: the feed's thread sends events over a channel and
//! asks for a repaint; [`LiveView::poll`] takes them at the start of a frame.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, TryLockError};
use std::time::Duration;

use eframe::egui::{self, Color32, CornerRadius, Margin, RichText, Stroke, Ui};

use crate::model::TopologySource;
use crate::model::traffic::{LiveEvent, TrafficRecording};
use crate::report::Report;
use crate::telemetry::traffic;
use crate::ui::action::Action;
use crate::ui::jobs::SharedRunner;
use crate::ui::widgets::badge;

// The overlay's frame and its words live with its drawing (`draw.rs`), which the Topology view
// takes without the Live overlay's controls.
pub mod draw;

pub use draw::{FeedKind, LiveFrame, WINDOW_S, minutes};

/// The most samples a window keeps, whatever the interval (10 min at 0.1 s).
pub const WINDOW_MAX_SAMPLES: usize = 6_000;
/// The intervals a watch offers, in seconds.
pub const INTERVALS_S: [f64; 4] = [0.5, 1.0, 2.0, 5.0];
/// Replay speeds offered (`f64::INFINITY`: as fast as the app takes the samples).
pub const SPEEDS: [f64; 4] = [1.0, 10.0, 60.0, f64::INFINITY];

/// The words for a replay speed.
pub fn speed_words(speed: f64) -> String {
    if speed.is_finite() {
        format!("{speed:.0}×")
    } else {
        "at once".into()
    }
}

/// What the source offers.
enum Mode {
    /// A machine: watched where its topology was read live (this machine, or a server through
    /// `runner`); a catalog or imported machine offers nothing.
    Machine {
        runner: Option<(SharedRunner, String)>,
    },
    /// A recording (an opened file, or a report's saved window): replayed, never watched.
    Recording {
        /// What it is, for the bar (`watch-2gpu.jsonl`, "the window saved with this report").
        name: String,
        /// An opened recording file (else a report's saved window).
        file: bool,
    },
}

/// What the feed's thread sends.
enum FeedMsg {
    Event(LiveEvent),
    /// The server's connection is busy with a job: the watch waits for it.
    Waiting,
}

/// A running feed: its thread stops when the flag is set (on drop too); it is never joined on
/// the UI thread (a server's watch may take a moment to hear the cancel).
struct Feed {
    rx: Receiver<FeedMsg>,
    cancel: Arc<AtomicBool>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Feed {
    fn spawn(
        ctx: &egui::Context,
        name: &str,
        work: impl FnOnce(&AtomicBool, &dyn Fn(FeedMsg)) + Send + 'static,
    ) -> Result<Feed, String> {
        let (tx, rx) = channel::<FeedMsg>();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        let ctx = ctx.clone();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let send = |m: FeedMsg| {
                    // The receiver is gone only when the view stopped the feed.
                    let _ = tx.send(m);
                    ctx.request_repaint();
                };
                work(&flag, &send);
            })
            .map_err(|e| format!("cannot start the {name} thread: {e}"))?;
        Ok(Feed { rx, cancel })
    }
}

/// Watches where `runner` runs jobs (this machine when `None`) every `interval_s`.
fn spawn_watch(
    ctx: &egui::Context,
    runner: Option<SharedRunner>,
    interval_s: f64,
) -> Result<Feed, String> {
    let interval = crate::model::Interval::new(interval_s).map_err(|e| e.why)?;
    let all = crate::model::GpuSelection::all;
    Feed::spawn(ctx, "scalescope-live", move |cancel, send| {
        let mut sink = |e: LiveEvent| send(FeedMsg::Event(e));
        let result = match runner {
            None => crate::remote::Runner::Local(crate::job::TestHooks::default()).watch(
                all(),
                interval,
                cancel,
                &mut sink,
            ),
            Some(r) => {
                // One connection per server: a job running there holds it; wait for it (the
                // user can still stop the watch meanwhile).
                let mut told = false;
                let mut guard = loop {
                    if cancel.load(Ordering::Relaxed) {
                        return;
                    }
                    match r.try_lock() {
                        Ok(g) => break g,
                        Err(TryLockError::WouldBlock) => {
                            if !told {
                                send(FeedMsg::Waiting);
                                told = true;
                            }
                            std::thread::sleep(Duration::from_millis(100));
                        }
                        Err(TryLockError::Poisoned(_)) => {
                            send(FeedMsg::Event(LiveEvent::End {
                                error: Some("the server connection is broken".into()),
                            }));
                            return;
                        }
                    }
                };
                guard.watch(all(), interval, cancel, &mut sink)
            }
        };
        send(FeedMsg::Event(LiveEvent::End {
            error: result.err().map(|e| e.message),
        }));
    })
}

/// Plays `recording` back at `speed`, forwarding its events.
fn spawn_replay(
    ctx: &egui::Context,
    recording: TrafficRecording,
    speed: f64,
) -> Result<Feed, String> {
    let feed = traffic::replay(recording, speed)
        .map_err(|e| format!("cannot start the replay thread: {e}"))?;
    Feed::spawn(ctx, "scalescope-live-replay", move |cancel, send| {
        loop {
            if cancel.load(Ordering::Relaxed) {
                // Dropping the replay stops its thread.
                return;
            }
            match feed.events.recv_timeout(Duration::from_millis(50)) {
                Ok(e) => {
                    let end = matches!(e, LiveEvent::End { .. });
                    send(FeedMsg::Event(e));
                    if end {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    send(FeedMsg::Event(LiveEvent::End { error: None }));
                    return;
                }
            }
        }
    })
}

/// What the user asked of the feed, carried out at the next poll (which holds the report).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Request {
    Start,
    Stop,
    Pause,
    Resume,
}

/// The Live overlay's state on one source.
pub struct LiveView {
    mode: Mode,
    /// False for an opened report: its machine is not here to watch.
    this_machine: bool,
    feed: Option<Feed>,
    /// The overlay is on (the toggle).
    on: bool,
    paused: bool,
    /// The sample shown while paused (an index into the window); the latest otherwise.
    cursor: Option<usize>,
    /// The interval the next watch asks for.
    interval_s: f64,
    /// The replay's speed.
    speed: f64,
    /// The server's connection is busy; the watch waits.
    waiting: bool,
    /// The feed ended (the words for the bar): "replay finished", "stopped: …".
    ended: Option<String>,
    /// The recording a replay plays (the window is rebuilt from it; a stop puts it back).
    original: Option<TrafficRecording>,
    /// Samples of `original` played so far (a resume goes on from there).
    replayed: usize,
    /// A header from the feed is the window's (false on a replay's resume).
    take_header: bool,
    /// The window has dropped its oldest samples (said once in its notes).
    trimmed: bool,
    /// Samples that came while paused and were left out.
    skipped: usize,
    requests: Vec<Request>,
}

impl LiveView {
    fn new(mode: Mode, this_machine: bool) -> Self {
        Self {
            mode,
            this_machine,
            feed: None,
            on: false,
            paused: false,
            cursor: None,
            interval_s: 1.0,
            speed: 1.0,
            waiting: false,
            ended: None,
            original: None,
            replayed: 0,
            take_header: true,
            trimmed: false,
            skipped: 0,
            requests: Vec::new(),
        }
    }

    /// A machine's: watched where its topology was read live — this machine, or through
    /// `runner` a server's.
    pub fn machine(runner: Option<(SharedRunner, String)>) -> Self {
        Self::new(Mode::Machine { runner }, true)
    }

    /// An opened report's: its saved window (if any) replays; nothing is watched.
    pub fn report() -> Self {
        Self::new(
            Mode::Recording {
                name: "the window saved with this report".into(),
                file: false,
            },
            false,
        )
    }

    /// An opened recording's (`name`: its file name): it starts playing at the next poll.
    pub fn recording(name: String) -> Self {
        let mut v = Self::new(Mode::Recording { name, file: true }, false);
        v.requests.push(Request::Start);
        v
    }

    /// How `report`'s source feeds the overlay, if it can: watched (this machine, a server) or
    /// replayed (a recording, a report's saved window).
    pub fn kind(&self, report: &Report) -> Option<FeedKind> {
        match &self.mode {
            Mode::Machine { runner } => {
                let live = matches!(report.topology.source, TopologySource::Live { .. });
                (self.this_machine && live).then_some(if runner.is_some() {
                    FeedKind::Server
                } else {
                    FeedKind::ThisMachine
                })
            }
            Mode::Recording { .. } => {
                (self.original.is_some() || report.traffic.is_some()).then_some(FeedKind::Replay)
            }
        }
    }

    /// The recording's name when the source is an opened recording (not a report's window).
    pub fn recording_name(&self) -> Option<&str> {
        match &self.mode {
            Mode::Recording { name, file: true } => Some(name),
            _ => None,
        }
    }

    /// What an opened recording is, in [`WatchHeader::replay_label`]'s words (`replay of
    /// watch.jsonl, recorded … on vm`); `None` for any other source.
    ///
    /// [`WatchHeader::replay_label`]: crate::model::traffic::WatchHeader::replay_label
    pub fn replay_label(&self, report: &Report) -> Option<String> {
        let name = self.recording_name()?;
        let header = self
            .original
            .as_ref()
            .or(report.traffic.as_ref())
            .map(|r| &r.header);
        Some(header.map_or_else(|| format!("replay of {name}"), |h| h.replay_label(name)))
    }

    /// Whether the overlay is on.
    pub fn is_on(&self) -> bool {
        self.on
    }

    /// Whether it is paused (the window holds, the drawing too).
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Whether a feed is running.
    pub fn running(&self) -> bool {
        self.feed.is_some()
    }

    /// Why the feed ended, in the bar's words, once it has.
    pub fn ended(&self) -> Option<&str> {
        self.ended.as_deref()
    }

    /// The replay's speed (`f64::INFINITY`: at once); takes effect at the next start or resume.
    pub fn set_speed(&mut self, speed: f64) {
        self.speed = speed;
    }

    /// Turns the overlay on (starting the feed) at the next poll.
    pub fn start(&mut self) {
        self.requests.push(Request::Start);
    }

    /// Turns it off (stopping the feed) at the next poll.
    pub fn stop(&mut self) {
        self.requests.push(Request::Stop);
    }

    /// Pauses: the window stops growing and the drawing holds.
    pub fn pause(&mut self) {
        self.requests.push(Request::Pause);
    }

    /// Resumes after a pause.
    pub fn resume(&mut self) {
        self.requests.push(Request::Resume);
    }

    /// Shows the window's `i`-th sample (pauses first).
    pub fn show_sample(&mut self, i: usize) {
        if !self.paused {
            self.requests.push(Request::Pause);
        }
        self.cursor = Some(i);
    }

    /// Carries out the requests and takes the feed's events into `report`'s window. An error
    /// for the notice area when the feed could not start or ended on one.
    pub fn poll(&mut self, ctx: &egui::Context, report: &mut Report) -> Option<String> {
        let mut error = None;
        for r in std::mem::take(&mut self.requests) {
            if let Err(e) = self.carry_out(ctx, report, r) {
                error = Some(e);
            }
        }
        let Some(feed) = &self.feed else {
            return error;
        };
        let msgs: Vec<FeedMsg> = feed.rx.try_iter().collect();
        for m in msgs {
            match m {
                FeedMsg::Waiting => self.waiting = true,
                FeedMsg::Event(e) => {
                    self.waiting = false;
                    if let Some(e) = self.take(report, e) {
                        error = Some(e);
                    }
                }
            }
        }
        error
    }

    fn carry_out(
        &mut self,
        ctx: &egui::Context,
        report: &mut Report,
        r: Request,
    ) -> Result<(), String> {
        match r {
            Request::Start => {
                let Some(kind) = self.kind(report) else {
                    return Ok(());
                };
                self.halt(report);
                self.on = true;
                self.paused = false;
                self.cursor = None;
                self.ended = None;
                self.skipped = 0;
                self.trimmed = false;
                self.take_header = true;
                let feed = match (kind, &self.mode) {
                    (FeedKind::Replay, _) => {
                        let rec = match self.original.take() {
                            Some(r) => r,
                            None => report.traffic.clone().ok_or("nothing to replay")?,
                        };
                        self.replayed = 0;
                        // The window is rebuilt as the samples come.
                        report.traffic = Some(TrafficRecording {
                            header: rec.header.clone(),
                            samples: Vec::new(),
                        });
                        let feed = spawn_replay(ctx, rec.clone(), self.speed);
                        self.original = Some(rec);
                        feed
                    }
                    (_, Mode::Machine { runner }) => {
                        let runner = runner.as_ref().map(|(r, _)| r.clone());
                        spawn_watch(ctx, runner, self.interval_s)
                    }
                    _ => return Ok(()),
                };
                match feed {
                    Ok(f) => self.feed = Some(f),
                    Err(e) => {
                        self.ended = Some(format!("stopped: {e}"));
                        return Err(self.failure(&e));
                    }
                }
            }
            Request::Stop => {
                self.halt(report);
                self.on = false;
                self.paused = false;
                self.cursor = None;
            }
            Request::Pause if self.on && !self.paused => {
                self.paused = true;
                // A replay stops where it is and goes on from there; a watch keeps running
                // and its samples are left out of the window until resumed.
                if self.original.is_some() && self.feed.is_some() {
                    self.feed = None;
                }
            }
            Request::Resume if self.paused => {
                self.paused = false;
                self.cursor = None;
                if let Some(rec) = &self.original
                    && self.ended.is_none()
                    && self.feed.is_none()
                {
                    let rest = TrafficRecording {
                        header: rec.header.clone(),
                        samples: rec.samples[self.replayed.min(rec.samples.len())..].to_vec(),
                    };
                    self.take_header = false;
                    match spawn_replay(ctx, rest, self.speed) {
                        Ok(f) => self.feed = Some(f),
                        Err(e) => return Err(self.failure(&e)),
                    }
                }
            }
            Request::Pause | Request::Resume => {}
        }
        Ok(())
    }

    /// Stops the feed; a replay's report gets its whole recording back.
    fn halt(&mut self, report: &mut Report) {
        self.feed = None;
        self.waiting = false;
        if let Some(rec) = self.original.take() {
            report.traffic = Some(rec);
        }
    }

    /// Takes one event into the window; an error for the notice area when the feed ended on
    /// one.
    fn take(&mut self, report: &mut Report, e: LiveEvent) -> Option<String> {
        match e {
            LiveEvent::Header(h) => {
                if self.take_header {
                    report.traffic = Some(TrafficRecording {
                        header: *h,
                        samples: Vec::new(),
                    });
                    self.take_header = false;
                }
                None
            }
            LiveEvent::Sample(s) => {
                if self.paused {
                    self.skipped += 1;
                    return None;
                }
                self.replayed += 1;
                let replay = self.original.is_some();
                let window = report.traffic.as_mut()?;
                window.samples.push(s);
                if !replay {
                    self.trim(window);
                }
                None
            }
            LiveEvent::End { error } => {
                self.feed = None;
                self.waiting = false;
                match error {
                    Some(e) => {
                        self.ended = Some(format!("stopped: {e}"));
                        Some(self.failure(&e))
                    }
                    None => {
                        self.ended = Some(if self.original.is_some() {
                            "replay finished".into()
                        } else {
                            "the watch ended".into()
                        });
                        None
                    }
                }
            }
        }
    }

    /// Drops the window's samples older than [`WINDOW_S`] (or past [`WINDOW_MAX_SAMPLES`]),
    /// and says so once in the recording's notes.
    fn trim(&mut self, window: &mut TrafficRecording) {
        let Some(last) = window.samples.last().map(|s| s.t_s) else {
            return;
        };
        let old = window
            .samples
            .iter()
            .take_while(|s| s.t_s < last - WINDOW_S)
            .count()
            .max(window.samples.len().saturating_sub(WINDOW_MAX_SAMPLES));
        if old == 0 {
            return;
        }
        window.samples.drain(..old);
        if !self.trimmed {
            self.trimmed = true;
            window.header.notes.push(format!(
                "The app keeps the last {} of a watch: samples before that are not in this recording.",
                minutes(WINDOW_S)
            ));
        }
    }

    /// The notice area's line for a feed that failed.
    fn failure(&self, e: &str) -> String {
        match &self.mode {
            Mode::Machine {
                runner: Some((_, host)),
            } => format!("Live on {host}: {e}"),
            Mode::Machine { runner: None } => format!("Live on this machine: {e}"),
            Mode::Recording { name, .. } => format!("Replay of {name}: {e}"),
        }
    }

    /// What the overlay draws now, if it is on and has a window: the sample shown (the cursor's
    /// while paused, else the latest) with the window before it.
    pub fn frame<'a>(&self, report: &'a Report) -> Option<LiveFrame<'a>> {
        if !self.on {
            return None;
        }
        let kind = self.kind(report)?;
        let window = report.traffic.as_ref()?;
        let last = window.samples.len().checked_sub(1);
        let at = match (self.paused, self.cursor, last) {
            (true, Some(c), Some(l)) => Some(c.min(l)),
            (_, _, l) => l,
        };
        Some(LiveFrame::new(window, at, kind))
    }

    /// The bar above the Topology view: the toggle, what feeds it (badge and words), pause,
    /// the interval or speed, the sample shown while paused, and Save recording….
    pub fn bar(&mut self, ui: &mut Ui, report: &Report, actions: &mut Vec<Action>) {
        let Some(kind) = self.kind(report) else {
            return;
        };
        let window = report.traffic.as_ref();
        group(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                self.toggle(ui, kind);
                if self.on {
                    self.pause_button(ui);
                }
                match kind {
                    FeedKind::Replay => self.speed_choice(ui, window),
                    _ => self.interval_choice(ui),
                }
                if save_button(ui, window).clicked() {
                    actions.push(Action::SaveRecording);
                }
            });
            ui.add(egui::Label::new(RichText::new(self.status(kind, window)).weak()).wrap());
            if self.paused
                && let Some(w) = window.filter(|w| w.samples.len() > 1)
            {
                self.scrubber(ui, w);
            }
        });
    }

    /// The feed's badge (live or replay) and the checkbox that starts and stops it.
    fn toggle(&mut self, ui: &mut Ui, kind: FeedKind) {
        let words = FeedWords::of(kind);
        badge(ui, words.badge, words.fill).on_hover_text(words.badge_tip);
        let mut on = self.on;
        if ui
            .checkbox(&mut on, words.toggle)
            .on_hover_text(words.toggle_tip)
            .changed()
        {
            if on {
                self.start();
            } else {
                self.stop();
            }
        }
    }

    /// Pause, or Resume while paused.
    fn pause_button(&mut self, ui: &mut Ui) {
        let (text, tip) = if self.paused {
            ("▶ Resume", "Go on: the window grows again")
        } else {
            ("Pause", "Hold the drawing; the window stops growing")
        };
        if ui.button(text).on_hover_text(tip).clicked() {
            if self.paused {
                self.resume();
            } else {
                self.pause();
            }
        }
    }

    /// A replay's interval (the recording's) and the speed it plays at.
    fn speed_choice(&mut self, ui: &mut Ui, window: Option<&TrafficRecording>) {
        let interval = window.map(|w| w.header.interval_s);
        ui.label(format!("interval {}", interval.map_or("—".into(), seconds)))
            .on_hover_text("The interval the recording was made at");
        let label = ui.label("speed");
        egui::ComboBox::from_id_salt("live-speed")
            .selected_text(speed_words(self.speed))
            .width(70.0)
            .show_ui(ui, |ui| {
                for s in SPEEDS {
                    ui.selectable_value(&mut self.speed, s, speed_words(s));
                }
            })
            .response
            .labelled_by(label.id)
            .on_hover_text("Takes effect at the next start or resume");
    }

    /// A watch's interval, fixed while it runs.
    fn interval_choice(&mut self, ui: &mut Ui) {
        let label = ui.label("interval");
        let enabled = !self.running();
        ui.add_enabled_ui(enabled, |ui| {
            egui::ComboBox::from_id_salt("live-interval")
                .selected_text(seconds(self.interval_s))
                .width(60.0)
                .show_ui(ui, |ui| {
                    for s in INTERVALS_S {
                        ui.selectable_value(&mut self.interval_s, s, seconds(s));
                    }
                })
                .response
                .labelled_by(label.id);
        })
        .response
        .on_disabled_hover_text("Stop the watch to change its interval");
    }

    /// The bar's state words: what feeds it, how much the window holds, and how it stands.
    fn status(&self, kind: FeedKind, window: Option<&TrafficRecording>) -> String {
        let n = window.map_or(0, |w| w.samples.len());
        let mut parts = Vec::new();
        match (kind, &self.mode) {
            (FeedKind::Replay, Mode::Recording { name, .. }) => {
                parts.push(window.map_or_else(
                    || format!("replay of {name}"),
                    |w| w.header.replay_label(name),
                ));
            }
            (
                FeedKind::Server,
                Mode::Machine {
                    runner: Some((_, host)),
                },
            ) => {
                parts.push(format!("{host}, through its agent"));
            }
            _ => parts.push("this machine, NVML".into()),
        }
        let span = window
            .and_then(|w| Some((w.samples.first()?, w.samples.last()?)))
            .map(|(a, b)| b.t_s - a.t_s + a.interval_s);
        parts.push(match (kind, span) {
            (_, None) => "no samples yet".into(),
            (FeedKind::Replay, Some(s)) => format!("{n} samples ({})", minutes(s)),
            (_, Some(s)) => format!(
                "{n} samples ({}; the last {} are kept)",
                minutes(s),
                minutes(WINDOW_S)
            ),
        });
        if self.waiting {
            parts.push("waiting: a run on the server holds its connection".into());
        } else if self.paused {
            parts.push(if self.skipped > 0 {
                format!("paused ({} samples left out)", self.skipped)
            } else {
                "paused".into()
            });
        } else if let Some(e) = &self.ended {
            parts.push(e.clone());
        } else if self.on && self.running() && n == 0 {
            parts.push("waiting for the first sample…".into());
        } else if !self.on && n > 0 {
            parts.push("not drawn (turn it on to see it)".into());
        }
        parts.join(" · ")
    }

    /// While paused: a slider over the window picks the sample drawn.
    fn scrubber(&mut self, ui: &mut Ui, window: &TrafficRecording) {
        let last = window.samples.len() - 1;
        let mut i = self.cursor.unwrap_or(last).min(last);
        ui.horizontal(|ui| {
            let label = ui.label("sample");
            let t = |i: usize| window.samples.get(i).map_or(0.0, |s| s.t_s);
            let slider = egui::Slider::new(&mut i, 0..=last)
                .show_value(false)
                .custom_formatter(move |v, _| format!("t = {:.1} s", t(v as usize)));
            if ui.add(slider).labelled_by(label.id).changed() {
                self.cursor = Some(i);
            }
            ui.label(format!("{} of {} · t = {:.1} s", i + 1, last + 1, t(i)));
        });
    }
}

/// What the bar says of a feed of one kind.
struct FeedWords {
    badge: &'static str,
    fill: Color32,
    badge_tip: &'static str,
    toggle: &'static str,
    toggle_tip: &'static str,
}

impl FeedWords {
    fn of(kind: FeedKind) -> Self {
        match kind {
            FeedKind::Replay => Self {
                badge: "replay",
                fill: REPLAY_FILL,
                badge_tip: "A recording played back: what the GPUs did then, not now",
                toggle: "Replay",
                toggle_tip: "Play the recording's traffic on the drawing, at its own pace (or \
                             faster)",
            },
            FeedKind::ThisMachine => Self {
                badge: "live",
                fill: LIVE_FILL,
                badge_tip: "Read from this machine's GPUs through NVML, now",
                toggle: "Live",
                toggle_tip: "Draw this machine's PCIe and NVLink traffic as it happens (NVML). A \
                             new watch replaces the window held (Save it first).",
            },
            FeedKind::Server => Self {
                badge: "live",
                fill: LIVE_FILL,
                badge_tip: "Read from the server's GPUs by its agent, now",
                toggle: "Live",
                toggle_tip: "Draw the server's PCIe and NVLink traffic as it happens, through \
                             its agent. While it runs, runs on that server wait (one \
                             connection). A new watch replaces the window held.",
            },
        }
    }
}

/// Save recording…, enabled once the window holds a sample.
fn save_button(ui: &mut Ui, window: Option<&TrafficRecording>) -> egui::Response {
    let has = window.is_some_and(|w| !w.samples.is_empty());
    ui.add_enabled(has, egui::Button::new("Save recording…"))
        .on_hover_text(
            "The window held, as a recording (.jsonl, as `scalescope watch --record` writes it; \
             File ▸ Open or `watch --replay` reads it). Only the window held is saved; a report \
             saved or exported now keeps it too.",
        )
        .on_disabled_hover_text("No samples held yet")
}

/// The live badge's colour (Okabe–Ito bluish green) and the replay badge's (reddish purple,
/// every recording's: [`crate::ui::palette::REPLAY`]): a replay never wears the live colour.
pub const LIVE_FILL: Color32 = Color32::from_rgb(0x00, 0x9e, 0x73);
/// See [`LIVE_FILL`].
pub const REPLAY_FILL: Color32 = crate::ui::palette::REPLAY;

/// The bar's frame, titled "Live traffic" (like the views' "Run settings" group).
fn group(ui: &mut Ui, add_contents: impl FnOnce(&mut Ui)) {
    let visuals = ui.visuals();
    egui::Frame::new()
        .fill(visuals.faint_bg_color)
        .stroke(Stroke::new(
            1.0,
            visuals.widgets.noninteractive.bg_stroke.color,
        ))
        .corner_radius(CornerRadius::same(6))
        .inner_margin(Margin::symmetric(10, 8))
        .show(ui, |ui| {
            ui.set_min_width(ui.available_width());
            ui.label(RichText::new("Live traffic").strong())
                .on_hover_text(
                    "PCIe and NVLink traffic drawn on the machine, per GPU pair and per GPU",
                );
            ui.add_space(2.0);
            add_contents(ui);
        });
    ui.add_space(6.0);
}

/// `1 s`, `0.5 s`.
pub fn seconds(s: f64) -> String {
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Topology;
    use crate::model::traffic::{TrafficSample, WatchHeader};

    fn report() -> Report {
        let t = Topology::new(TopologySource::Imported { paths: vec![] });
        let machine = crate::job::machine_info(&t, "test");
        Report::new(machine, t)
    }

    fn sample(t: f64) -> TrafficSample {
        serde_json::from_value(serde_json::json!({ "t_s": t, "interval_s": 1.0, "gpus": [] }))
            .expect("a sample")
    }

    fn header() -> LiveEvent {
        let h = WatchHeader::new(
            Topology::new(TopologySource::Imported { paths: vec![] }),
            Vec::new(),
            1.0,
            "2026-11-26T00:00:00Z".into(),
        );
        LiveEvent::Header(Box::new(h))
    }

    #[test]
    fn a_watch_keeps_its_last_ten_minutes_and_says_so_once() {
        let mut v = LiveView::machine(None);
        let mut r = report();
        v.take(&mut r, header());
        for i in 1..=700 {
            v.take(&mut r, LiveEvent::Sample(sample(f64::from(i))));
        }
        let w = r.traffic.as_ref().unwrap();
        assert_eq!(w.samples.len(), 601);
        assert_eq!(w.samples[0].t_s, 100.0);
        assert_eq!(w.header.notes.len(), 1, "{:?}", w.header.notes);
        assert!(w.header.notes[0].contains("last 10 min"));
    }

    #[test]
    fn paused_samples_are_left_out_and_an_error_ends_the_feed() {
        let mut v = LiveView::machine(None);
        let mut r = report();
        v.on = true;
        v.take(&mut r, header());
        v.take(&mut r, LiveEvent::Sample(sample(1.0)));
        v.paused = true;
        v.take(&mut r, LiveEvent::Sample(sample(2.0)));
        assert_eq!(r.traffic.as_ref().unwrap().samples.len(), 1);
        assert_eq!(v.skipped, 1);
        let e = v.take(
            &mut r,
            LiveEvent::End {
                error: Some("NVML: gone".into()),
            },
        );
        assert_eq!(e.as_deref(), Some("Live on this machine: NVML: gone"));
        assert!(!v.running());
        // The window stays: the drawing holds what was seen.
        assert_eq!(r.traffic.as_ref().unwrap().samples.len(), 1);
    }
}
