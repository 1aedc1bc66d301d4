//! Files in and out of the app: the desktop's file dialogs (rfd, on worker threads), the path
//! field that stands in for them where none can open, files dropped on the window, and reading
//! reports and `nvidia-smi` captures on worker threads.
//!
//! Captures are read through the one import entry the command line's `--import` uses
//! ([`reference_tools::import`]): `nvidia-smi topo -m/-mp/-p2p`, `-q`, `-q -x` and
//! `nvlink -s/-e`, and nvbandwidth's and nccl-tests' outputs (their figures as the machine's
//! bandwidth and collectives), in any mix, as one machine. Traffic recordings (`.jsonl`, `scalescope watch
//! --record`'s, whose first line's format is `scalescope-watch`) through
//! [`traffic::read_recording`], whichever Open item or drop brought them; the Live overlay's
//! window is saved as one. A fleet (File → Open fleet…, a folder or a fleet.json dropped, a
//! folder given on the command line) is judged by [`fleet::read_and_judge`], as `scalescope
//! fleet report` judges it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, Key, RichText};

use super::action::{Action, SaveKind, View};
use super::jobs::Inbox;
use super::palette;
use super::saving::{self, SaveWork};
use crate::fleet::judge::FleetOutcome;
use crate::health::run::{CheckOptions, check_described};
use crate::model::traffic::TrafficRecording;
use crate::report::{Report, reference_tools};
use crate::telemetry::traffic;

/// A file dialog that closes sooner than this without a choice never reached the user: rfd
/// returns `None` at once when the desktop has no file-dialog portal and no zenity.
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(400);
/// Environment variable: `path` always uses the in-app path field instead of file dialogs.
pub const FILE_DIALOG_ENV: &str = "SCALESCOPE_FILE_DIALOG";

/// How the app asks for a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileDialogs {
    /// The desktop's file dialog (rfd: the XDG portal, then zenity); when it cannot open, the
    /// path field takes over with the reason.
    Native,
    /// Always the in-app path field; the text says why (shown in the field's window).
    PathField(String),
}

impl FileDialogs {
    /// The path field when `SCALESCOPE_FILE_DIALOG=path` is set, or on Linux when no dialog
    /// can open: no D-Bus session (so no portal) and no zenity on `PATH` — the usual case over
    /// X forwarding or VNC to a server. Otherwise the desktop's dialog.
    pub fn detect() -> Self {
        if std::env::var_os(FILE_DIALOG_ENV).is_some_and(|v| v == "path") {
            return Self::PathField(format!("{FILE_DIALOG_ENV}=path is set."));
        }
        if !cfg!(target_os = "linux") {
            return Self::Native;
        }
        let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
        let session_bus = set("DBUS_SESSION_BUS_ADDRESS")
            || std::env::var_os("XDG_RUNTIME_DIR")
                .is_some_and(|d| Path::new(&d).join("bus").exists());
        let zenity = std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("zenity").is_file()));
        if session_bus || zenity {
            Self::Native
        } else {
            Self::PathField(
                "This desktop has no file-dialog portal (no D-Bus session) and no zenity.".into(),
            )
        }
    }
}

/// What a file dialog (or the path field standing in for it) is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRequest {
    /// Open reports (`report.json`).
    OpenReport,
    /// Import `nvidia-smi` captures (one machine).
    OpenSmi,
    /// Open traffic recordings (`.jsonl`).
    OpenRecording,
    /// Open a fleet: a folder of node reports (or its fleet.json).
    OpenFleet,
    /// Save the Live overlay's window as a recording.
    SaveRecording,
    /// Save `view` as CSV or PNG, or the report as HTML.
    Save { kind: SaveKind, view: View },
}

impl FileRequest {
    /// The path window's title.
    fn title(&self) -> String {
        match self {
            FileRequest::OpenReport => "Open report".into(),
            FileRequest::OpenSmi => "Open nvidia-smi output".into(),
            FileRequest::OpenRecording => "Open traffic recording".into(),
            FileRequest::OpenFleet => "Open fleet".into(),
            FileRequest::SaveRecording => "Save traffic recording".into(),
            FileRequest::Save { kind, view } => format!(
                "Save {} as {}",
                view.label(),
                match kind {
                    SaveKind::Csv => "CSV",
                    SaveKind::Png => "PNG",
                    SaveKind::Html => "report.html",
                }
            ),
        }
    }

    fn opens(&self) -> bool {
        !matches!(self, FileRequest::Save { .. } | FileRequest::SaveRecording)
    }
}

/// The in-app path field: a small window asking for a path where no file dialog opened.
struct PathPrompt {
    request: FileRequest,
    text: String,
    /// Why no file dialog opened.
    reason: String,
    /// What was wrong with the last OK (or the question before replacing a file).
    problem: Option<String>,
    /// OK was pressed on an existing file: the next OK replaces it.
    confirm_replace: bool,
    /// Give the field keyboard focus on its first frame.
    focus: bool,
}

/// What the file workers send back.
enum Msg {
    /// What was read (a choice of files may hold recordings beside reports or captures).
    Read(Vec<Opened>),
    /// A Save finished: where, or why not (`None`: the dialog was closed).
    Saved(Option<Result<String, String>>),
    /// The file dialog closed without a choice.
    DialogClosed,
    /// No file dialog could open for this request (and why): the path field takes over.
    NoDialog {
        request: FileRequest,
        reason: String,
    },
}

/// What was read, for the shell to show.
pub enum Opened {
    /// Reports, each or the error naming its file.
    Reports(Vec<Result<Report, String>>),
    /// A machine read from `nvidia-smi` captures, or why not.
    Machine(Result<Box<Report>, String>),
    /// Traffic recordings with their file names, each or the error naming its file.
    Recordings(Vec<Result<(TrafficRecording, String), String>>),
    /// A fleet judged, or the one line that says why not.
    Fleet(Result<Box<FleetRead>, String>),
    /// Where a Save went, or why it failed.
    Saved(Result<String, String>),
}

/// A fleet as read and judged.
pub struct FleetRead {
    pub outcome: FleetOutcome,
    /// The folders (or files) judged.
    pub inputs: Vec<PathBuf>,
}

/// File dialogs (or the path field), and the workers that read and write files.
pub struct Files {
    dialogs: FileDialogs,
    /// The path field, while it is open.
    prompt: Option<PathPrompt>,
    /// A file dialog (or a read it started) is in flight: the Open items wait.
    dialog_open: bool,
    /// What Save recording… writes, while the path field asks where.
    recording: Option<SaveWork>,
    inbox: Inbox<Msg>,
    /// Fleets being read and judged on worker threads.
    fleets_in_flight: usize,
}

impl Default for Files {
    fn default() -> Self {
        Self {
            dialogs: FileDialogs::detect(),
            prompt: None,
            dialog_open: false,
            recording: None,
            inbox: Inbox::default(),
            fleets_in_flight: 0,
        }
    }
}

impl Files {
    /// Chooses file dialogs or the in-app path field.
    pub fn set_dialogs(&mut self, dialogs: FileDialogs) {
        self.dialogs = dialogs;
    }

    /// Whether the path field is open.
    pub fn prompt_open(&self) -> bool {
        self.prompt.is_some()
    }

    /// Whether a file dialog is open (the Open items wait for it).
    pub fn dialog_open(&self) -> bool {
        self.dialog_open
    }

    /// Closes the path field.
    pub fn close_prompt(&mut self) {
        self.prompt = None;
    }

    /// Reads reports on a worker thread.
    pub fn read_reports(&mut self, ctx: &egui::Context, paths: Vec<PathBuf>) -> Result<(), String> {
        self.inbox.spawn(ctx, "scalescope-report", move || {
            Msg::Read(vec![Opened::Reports(read_reports_or_soaks(&paths))])
        })
    }

    /// Reads `nvidia-smi` captures (one machine) on a worker thread.
    pub fn read_captures(
        &mut self,
        ctx: &egui::Context,
        paths: Vec<PathBuf>,
    ) -> Result<(), String> {
        self.inbox.spawn(ctx, "scalescope-import", move || {
            Msg::Read(vec![Opened::Machine(read_captures(&paths).map(Box::new))])
        })
    }

    /// Reads traffic recordings on a worker thread.
    pub fn read_recordings(
        &mut self,
        ctx: &egui::Context,
        paths: Vec<PathBuf>,
    ) -> Result<(), String> {
        self.inbox.spawn(ctx, "scalescope-recording", move || {
            Msg::Read(vec![Opened::Recordings(read_recordings(&paths))])
        })
    }

    /// Reads and judges a fleet on a worker thread.
    pub fn read_fleet(&mut self, ctx: &egui::Context, paths: Vec<PathBuf>) -> Result<(), String> {
        self.inbox
            .spawn(ctx, "scalescope-fleet", move || {
                Msg::Read(vec![Opened::Fleet(read_fleet(&paths).map(Box::new))])
            })
            .inspect(|()| self.fleets_in_flight += 1)
    }

    /// Opens reports or `nvidia-smi` captures: the desktop's file dialog on a worker thread, or
    /// the path field where there is none.
    pub fn open(&mut self, ctx: &egui::Context, request: FileRequest) -> Result<(), String> {
        if self.dialog_open {
            return Ok(());
        }
        if let FileDialogs::PathField(reason) = &self.dialogs {
            let reason = reason.clone();
            self.open_prompt(request, reason);
            return Ok(());
        }
        let spawned = self.inbox.spawn(ctx, "scalescope-open", move || {
            let (title, kind, extensions): (&str, &str, &[&str]) = match request {
                FileRequest::OpenReport => (
                    "Open scalescope reports or soak recordings",
                    "scalescope report, check --json or soak.csv",
                    &["json", "csv"],
                ),
                FileRequest::OpenRecording => (
                    "Open traffic recordings",
                    "traffic recording",
                    &["jsonl", "ndjson"],
                ),
                _ => (
                    "Open nvidia-smi output",
                    "nvidia-smi output",
                    &["txt", "log", "out", "xml"],
                ),
            };
            let started = Instant::now();
            let picked = if request == FileRequest::OpenFleet {
                pick_folder("Open fleet (fleet run's folder, or a folder of reports)")
            } else {
                pick_files(title, kind, extensions)
            };
            match picked {
                Ok(Some(paths)) => Msg::Read(read(request, &paths)),
                Ok(None) if started.elapsed() < NO_DIALOG_WITHIN => Msg::NoDialog {
                    request,
                    reason: no_dialog_reason(),
                },
                Ok(None) => Msg::DialogClosed,
                Err(()) => Msg::NoDialog {
                    request,
                    reason: "The file dialog failed to open.".into(),
                },
            }
        });
        self.dialog_open = spawned.is_ok();
        spawned
    }

    /// Saves what `work` makes for `view`: the desktop's save dialog on a worker thread, or the
    /// path field where there is none.
    pub fn save(
        &mut self,
        ctx: &egui::Context,
        view: View,
        kind: SaveKind,
        work: SaveWork,
    ) -> Result<(), String> {
        let request = FileRequest::Save { kind, view };
        if let FileDialogs::PathField(reason) = &self.dialogs {
            let reason = reason.clone();
            self.open_prompt(request, reason);
            return Ok(());
        }
        let name = saving::file_name(view, kind);
        self.save_dialog(ctx, request, "Save", name, None, work)
    }

    /// The desktop's save dialog on a worker thread, titled `title` with `name` proposed (and
    /// `filter`'s extensions), writing what `work` makes; a dialog that closes at once or fails
    /// to open falls back to the path field for `request`.
    fn save_dialog(
        &mut self,
        ctx: &egui::Context,
        request: FileRequest,
        title: &'static str,
        name: String,
        filter: Option<(&'static str, &'static [&'static str])>,
        work: SaveWork,
    ) -> Result<(), String> {
        self.inbox.spawn(ctx, "scalescope-save", move || {
            let started = Instant::now();
            let picked = std::panic::catch_unwind(|| {
                let mut dialog = rfd::FileDialog::new().set_title(title).set_file_name(&name);
                if let Some((what, extensions)) = filter {
                    dialog = dialog.add_filter(what, extensions);
                }
                dialog.save_file()
            });
            match picked {
                Ok(Some(path)) => Msg::Saved(Some(saving::write(&path, work))),
                // The path field asks again (a recording's window is taken again then).
                Ok(None) if started.elapsed() < NO_DIALOG_WITHIN => Msg::NoDialog {
                    request,
                    reason: no_dialog_reason(),
                },
                Ok(None) => Msg::Saved(None),
                Err(_) => Msg::NoDialog {
                    request,
                    reason: "The save dialog failed to open.".into(),
                },
            }
        })
    }

    /// Saves the Live overlay's window as a recording (what `work` makes): the desktop's save
    /// dialog on a worker thread, or the path field where there is none.
    pub fn save_recording(&mut self, ctx: &egui::Context, work: SaveWork) -> Result<(), String> {
        let request = FileRequest::SaveRecording;
        if let FileDialogs::PathField(reason) = &self.dialogs {
            let reason = reason.clone();
            self.recording = Some(work);
            self.open_prompt(request, reason);
            return Ok(());
        }
        self.save_dialog(
            ctx,
            request,
            "Save traffic recording",
            RECORDING_FILE.to_string(),
            Some(("traffic recording", &["jsonl"])),
            work,
        )
    }

    /// Opens the path field for `request`, with why no dialog opened; saves start with their
    /// file name in the current folder.
    fn open_prompt(&mut self, request: FileRequest, reason: String) {
        let dir = std::env::current_dir().unwrap_or_default();
        let text = match request {
            FileRequest::Save { kind, view } => dir
                .join(saving::file_name(view, kind))
                .display()
                .to_string(),
            FileRequest::SaveRecording => dir.join(RECORDING_FILE).display().to_string(),
            _ => format!("{}/", dir.display().to_string().trim_end_matches('/')),
        };
        self.prompt = Some(PathPrompt {
            request,
            text,
            reason,
            problem: None,
            confirm_replace: false,
            focus: true,
        });
    }

    /// The path field's OK: opens the files typed there, or saves to the path what
    /// `save_work` makes for the view (`None`: nothing to save).
    pub fn prompt_ok(
        &mut self,
        ctx: &egui::Context,
        save_work: impl FnOnce(View, SaveKind) -> Result<SaveWork, String>,
    ) -> Result<(), String> {
        let Some(p) = &mut self.prompt else {
            return Ok(());
        };
        let paths: Vec<PathBuf> = p
            .text
            .split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(expand_home)
            .collect();
        let folders = p.request == FileRequest::OpenFleet;
        if paths.is_empty() || (!folders && paths.iter().any(|p| p.is_dir())) {
            p.problem = Some("Type the path of a file (a folder is not enough).".into());
            p.confirm_replace = false;
            return Ok(());
        }
        if p.request.opens() {
            let request = p.request;
            self.prompt = None;
            let spawned = self.inbox.spawn(ctx, "scalescope-open", move || {
                Msg::Read(read(request, &paths))
            });
            self.dialog_open = spawned.is_ok();
            return spawned;
        }
        let [path] = paths.as_slice() else {
            p.problem = Some("Give one file to save to.".into());
            return Ok(());
        };
        if path.exists() && !p.confirm_replace {
            p.problem = Some(format!(
                "{} exists: press OK again to replace it.",
                path.display()
            ));
            p.confirm_replace = true;
            return Ok(());
        }
        let path = path.clone();
        let request = p.request;
        self.prompt = None;
        let work = match request {
            FileRequest::Save { kind, view } => save_work(view, kind)?,
            _ => self
                .recording
                .take()
                .ok_or("Save recording: nothing to save (press Save recording… again).")?,
        };
        self.inbox.spawn(ctx, "scalescope-save", move || {
            Msg::Saved(Some(saving::write(&path, work)))
        })
    }

    /// Reads files dropped onto the window: a folder or a fleet.json is a fleet, a `.json`
    /// file a report, a `.jsonl` one a traffic recording, the others are `nvidia-smi` captures
    /// of one machine.
    pub fn dropped(&mut self, ctx: &egui::Context) -> Result<(), String> {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        // Native drops carry absolute paths; the files are read on worker threads.
        let (fleets, rest): (Vec<PathBuf>, Vec<PathBuf>) = dropped
            .iter()
            .map(|f| f.path().to_path_buf())
            .partition(|p| is_fleet(p));
        if !fleets.is_empty() {
            self.read_fleet(ctx, fleets)?;
        }
        let (recordings, rest): (Vec<PathBuf>, Vec<PathBuf>) =
            rest.into_iter().partition(|p| is_recording(p));
        let (reports, captures): (Vec<PathBuf>, Vec<PathBuf>) =
            rest.into_iter().partition(|p| is_report(p));
        if !recordings.is_empty() {
            self.read_recordings(ctx, recordings)?;
        }
        if !reports.is_empty() {
            self.read_reports(ctx, reports)?;
        }
        if !captures.is_empty() {
            self.read_captures(ctx, captures)?;
        }
        Ok(())
    }

    /// Whether a fleet is being read and judged (a thousand nodes take about a second).
    pub fn judging_fleet(&self) -> bool {
        self.fleets_in_flight > 0
    }

    /// What the workers read or wrote since the last frame.
    pub fn poll(&mut self) -> Vec<Opened> {
        let mut out = Vec::new();
        for msg in self.inbox.drain() {
            match msg {
                Msg::Read(opened) => {
                    self.dialog_open = false;
                    let fleets = opened
                        .iter()
                        .filter(|o| matches!(o, Opened::Fleet(_)))
                        .count();
                    self.fleets_in_flight = self.fleets_in_flight.saturating_sub(fleets);
                    out.extend(opened);
                }
                Msg::Saved(Some(result)) => out.push(Opened::Saved(result)),
                Msg::Saved(None) => {}
                Msg::DialogClosed => self.dialog_open = false,
                Msg::NoDialog { request, reason } => {
                    self.dialog_open = false;
                    // Later requests go straight to the path field.
                    self.dialogs = FileDialogs::PathField(reason.clone());
                    self.open_prompt(request, reason);
                }
            }
        }
        out
    }

    /// The path field: stands in for a file dialog where none can open.
    pub fn prompt_ui(&mut self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        let Some(p) = &mut self.prompt else { return };
        let mut open = true;
        egui::Window::new(p.request.title())
            .id(egui::Id::unique("path-prompt"))
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 90.0])
            .show(ctx, |ui| prompt_contents(ui, p, actions));
        if !open {
            actions.push(Action::PromptCancel);
        }
    }
}

/// The path field's window: why, the field, the hint, what was wrong, OK and Cancel.
fn prompt_contents(ui: &mut egui::Ui, p: &mut PathPrompt, actions: &mut Vec<Action>) {
    ui.set_max_width(520.0);
    ui.label(RichText::new(&p.reason).weak());
    ui.label(RichText::new("Type the path instead:").weak());
    ui.add_space(4.0);
    let mut submitted = false;
    ui.horizontal(|ui| {
        let l = ui.label("Path");
        let before = p.text.clone();
        let field = ui
            .add(egui::TextEdit::singleline(&mut p.text).desired_width(440.0))
            .labelled_by(l.id);
        if p.focus {
            field.request_focus();
            p.focus = false;
        }
        if p.text != before {
            p.confirm_replace = false;
            p.problem = None;
        }
        submitted = field.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
    });
    let hint = if p.request == FileRequest::OpenFleet {
        "The fleet's folder (fleet run's OUT, or a folder of report.json files) or its fleet.json"
    } else if p.request.opens() {
        "Several files: separate them with ;  · ~/ is your home folder"
    } else {
        "~/ is your home folder"
    };
    ui.label(RichText::new(hint).size(11.5).weak());
    if let Some(problem) = &p.problem {
        ui.colored_label(palette::P2P_NS, problem);
    }
    ui.horizontal(|ui| {
        let ok = if p.confirm_replace { "Replace" } else { "OK" };
        if ui.button(ok).clicked() || submitted {
            actions.push(Action::PromptOk);
        }
        if ui.button("Cancel").clicked() {
            actions.push(Action::PromptCancel);
        }
    });
}

/// Dims the window while files are dragged over it.
pub fn drop_overlay(ctx: &egui::Context) {
    if ctx.input(|i| i.raw.hovered_files.is_empty()) {
        return;
    }
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("drop-overlay"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, Color32::from_black_alpha(170));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        "Drop reports, nvidia-smi output, traffic recordings or a fleet folder to open them",
        egui::FontId::proportional(22.0),
        Color32::WHITE,
    );
}

/// The file name Save recording… offers.
const RECORDING_FILE: &str = "traffic.jsonl";

/// A folder (of node reports) or a fleet.json is a fleet.
fn is_fleet(path: &Path) -> bool {
    path.is_dir() || path.file_name().is_some_and(|n| n == "fleet.json")
}

/// The folder to judge for a fleet path: a folder as it is; for a fleet.json, the fleet's
/// folder — the one above it when that holds `nodes/` (`fleet run` writes its report into
/// OUT/report/, beside OUT/nodes/), else the folder that holds it.
fn fleet_root(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_path_buf();
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    match dir.parent() {
        Some(up) if !dir.join("nodes").is_dir() && up.join("nodes").is_dir() => up.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// Reads and judges a fleet (folders, or fleet.json files standing for their fleet's folder)
/// with the default thresholds, as `scalescope fleet report` does without `--thresholds`.
pub fn read_fleet(paths: &[PathBuf]) -> Result<FleetRead, String> {
    let mut inputs: Vec<PathBuf> = Vec::new();
    for p in paths {
        let root = if is_fleet(p) {
            fleet_root(p)
        } else {
            p.clone()
        };
        if !inputs.contains(&root) {
            inputs.push(root);
        }
    }
    let thresholds = crate::health::Thresholds::default();
    crate::fleet::read_and_judge(&inputs, &thresholds)
        .map(|outcome| FleetRead { outcome, inputs })
        .map_err(|e| format!("Cannot open fleet: {e}"))
}

/// A `.json` file is a report (or `check --json`'s), a `.csv` one a soak recording; anything
/// else an `nvidia-smi` capture.
fn is_report(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || crate::job::soak_file::is_soak_csv(path)
}

/// Reads what File → Open report, a drop or the command line brought: reports as
/// [`read_reports`] reads them, and burn-ins as reports holding the soak — a soak.csv judged
/// as `check --soak-replay` judges it, the file `check --json` writes after a soak.
pub fn read_reports_or_soaks(paths: &[PathBuf]) -> Vec<Result<Report, String>> {
    use crate::job::soak_file;
    paths
        .iter()
        .map(|p| {
            if soak_file::is_soak_csv(p) {
                return soak_file::replay_csv(p);
            }
            let read = read_reports(std::slice::from_ref(p)).into_iter().next();
            match read {
                Some(Ok(r)) => Ok(r),
                // Not a report: a check's file with a soak opens as that soak.
                Some(Err(e)) => soak_file::open(p).ok().flatten().ok_or(e),
                None => Err(format!("nothing read: {}", p.display())),
            }
        })
        .collect()
}

/// A `.jsonl` (or `.ndjson`) file is a traffic recording (its first line says whether it is
/// one: [`traffic::read_recording`] refuses any other).
fn is_recording(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"))
}

/// Reads what the user chose to open: recordings as recordings whichever Open item chose
/// them, the rest as the item asked.
fn read(request: FileRequest, paths: &[PathBuf]) -> Vec<Opened> {
    if request == FileRequest::OpenRecording {
        return vec![Opened::Recordings(read_recordings(paths))];
    }
    if request == FileRequest::OpenFleet {
        return vec![Opened::Fleet(read_fleet(paths).map(Box::new))];
    }
    let (recordings, rest): (Vec<PathBuf>, Vec<PathBuf>) =
        paths.iter().cloned().partition(|p| is_recording(p));
    let mut out = Vec::new();
    if !recordings.is_empty() {
        out.push(Opened::Recordings(read_recordings(&recordings)));
    }
    if !rest.is_empty() {
        out.push(match request {
            FileRequest::OpenReport => Opened::Reports(read_reports_or_soaks(&rest)),
            _ => Opened::Machine(read_captures(&rest).map(Box::new)),
        });
    }
    out
}

/// Reads traffic recordings, each with its file name or the error naming its file.
pub fn read_recordings(paths: &[PathBuf]) -> Vec<Result<(TrafficRecording, String), String>> {
    paths
        .iter()
        .map(|p| {
            let name = p
                .file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
            traffic::read_recording(p)
                .map(|r| (r, name))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// Reads reports, each error naming its file; a reference tool's JSON output (nvbandwidth's
/// `-j`, nccl-tests' `-J`) among them is a machine of its own, as [`read_captures`] reads it.
pub fn read_reports(paths: &[PathBuf]) -> Vec<Result<Report, String>> {
    paths
        .iter()
        .map(|p| {
            let tool = reference_tools::sniff(&p.display().to_string()).is_ok_and(|t| t.is_some());
            if tool {
                read_captures(std::slice::from_ref(p))
            } else {
                crate::report::load_named(p).map_err(|e| e.to_string())
            }
        })
        .collect()
}

/// Reads `nvidia-smi` captures and the reference tools' outputs (nvbandwidth, nccl-tests) as
/// one machine, as `--import` does: its topology, the tools' figures as its bandwidth and
/// collectives, and the health check they describe (`scalescope check --import`): the tools'
/// figures judged, or, from captures that state the GPUs' condition (`-q`, `-q -x`,
/// `nvlink`) alone, modeled.
pub fn read_captures(paths: &[PathBuf]) -> Result<Report, String> {
    let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let imported = reference_tools::import(&paths).map_err(|e| e.to_string())?;
    let m = imported.machine.clone();
    let opts = CheckOptions::default();
    let health = if imported.has_tools() {
        Some(crate::health::run::check_imported(
            &m.topology,
            m.inventory,
            m.after,
            imported.bandwidth().map(|b| b.results).unwrap_or_default(),
            &imported
                .collectives()
                .map(|c| c.results)
                .unwrap_or_default(),
            &imported.source_words(),
            &opts,
        ))
    } else {
        m.inventory.is_some().then(|| {
            check_described(
                &m.topology,
                m.inventory,
                m.after,
                &opts,
                &crate::job::modeled_as_stated,
            )
        })
    };
    // The machine as its state captures say it runs, as `--import` loads it (the check above
    // judges it against the design).
    let running = imported.machine.running();
    let mut report = if imported.has_tools() {
        let mut r = imported.report();
        r.topology = running;
        r
    } else {
        Report::new(crate::job::machine_info(&running, "import"), running)
    };
    report.health = health;
    Ok(report)
}

/// Why the path field shows when a dialog returned at once.
fn no_dialog_reason() -> String {
    "No file dialog opened: this desktop seems to have no file-dialog portal or zenity \
     (usual over X forwarding or VNC)."
        .into()
}

/// A typed path with a leading `~/` taken as the home folder.
fn expand_home(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(text),
    }
}

/// The folder dialog of Open fleet…, as [`pick_files`] answers.
fn pick_folder(title: &str) -> Result<Option<Vec<PathBuf>>, ()> {
    std::panic::catch_unwind(|| {
        rfd::FileDialog::new()
            .set_title(title)
            .pick_folder()
            .map(|p| vec![p])
    })
    .map_err(|_| ())
}

/// A file dialog for opening files of one kind (plus "All files"). `Ok(None)` when closed with no
/// choice — rfd also returns that when no portal or zenity exists; `Err` when the dialog backend
/// panicked instead (caught, so the worker thread still reports).
fn pick_files(title: &str, kind: &str, extensions: &[&str]) -> Result<Option<Vec<PathBuf>>, ()> {
    std::panic::catch_unwind(|| {
        rfd::FileDialog::new()
            .set_title(title)
            .add_filter(kind, extensions)
            .add_filter("All files", &["*"])
            .pick_files()
            .filter(|p| !p.is_empty())
    })
    .map_err(|_| ())
}
