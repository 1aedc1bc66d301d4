//! The App: state, the worker threads that fill it, and the shell around the views (top bar with
//! the File and View menus and the view tabs, the collapsible "Sources" side panel, one notice
//! area for the warning banner and error lines, the path field that stands in for file dialogs).
//!
//! NVML and file dialogs never run inside `ui()`: worker threads send their results over a
//! channel and request a repaint; `ui()` drains the channel at the start of each frame. Buttons,
//! menu items and shortcuts push an [`Action`] that is handled after layout.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32, CornerRadius, Key, KeyboardShortcut, Modifiers, RichText, Ui};
use serde::{Deserialize, Serialize};

use super::bandwidth_view::BandwidthView;
use super::collectives_view::CollectivesView;
use super::scaling_view::ScalingView;
use super::{compare_view, palette, report_view, topology_view};
use crate::model::Topology;
use crate::report::Report;
use crate::topology::{catalog, import, live};

/// The catalog entry shown when live data is unavailable, if the catalog has it.
const PREFERRED_CATALOG: &str = "dgx-h100";
/// Storage key for [`Settings`].
const SETTINGS_KEY: &str = "scalescope.settings";

/// File → Open report… (Ctrl+O).
pub const OPEN_REPORT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::O);
/// File → Save CSV… (Ctrl+S).
pub const SAVE_CSV: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::S);
/// File → Quit (Ctrl+Q).
pub const QUIT: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::Q);
/// View → Sources panel (Ctrl+B, as in editors with a side bar).
pub const TOGGLE_SIDEBAR: KeyboardShortcut = KeyboardShortcut::new(Modifiers::COMMAND, Key::B);

/// A file dialog that closes sooner than this without a choice never reached the user: rfd
/// returns `None` at once when the desktop has no file-dialog portal and no zenity.
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(400);
/// Environment variable: `path` always uses the in-app path field instead of file dialogs.
pub const FILE_DIALOG_ENV: &str = "SCALESCOPE_FILE_DIALOG";

/// What the app was started with.
#[derive(Clone, Debug, Default)]
pub struct Startup {
    /// `nvidia-smi topo` text files given on the command line, imported at startup.
    pub open_paths: Vec<String>,
    /// Reports (`report.json`) given on the command line, opened at startup.
    pub report_paths: Vec<PathBuf>,
    /// A server to connect to at startup (`scalescope --remote HOST`); its ssh command and
    /// remote command are also those of every server connected from the app.
    pub remote: Option<crate::remote::RemoteOptions>,
}

/// The views, shown as tabs in the top bar. Each view lives in a file of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum View {
    /// How the GPUs and NICs are connected ([`topology_view`]).
    #[default]
    Topology,
    /// Copy bandwidth and latency ([`super::bandwidth_view`]).
    Bandwidth,
    /// NCCL and scalescope's own collectives ([`super::collectives_view`]).
    Collectives,
    /// Weak and strong scaling of workloads ([`super::scaling_view`]).
    Scaling,
    /// Opened reports side by side ([`super::compare_view`]).
    Compare,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: &[View] = &[
        View::Topology,
        View::Bandwidth,
        View::Collectives,
        View::Scaling,
        View::Compare,
    ];

    /// The tab's label.
    pub fn label(&self) -> &'static str {
        match self {
            View::Topology => "Topology",
            View::Bandwidth => "Bandwidth",
            View::Collectives => "Collectives",
            View::Scaling => "Scaling",
            View::Compare => "Compare",
        }
    }
}

/// Small settings kept between runs (when eframe has storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The open tab.
    pub view: View,
    /// Dark theme (the default) or light.
    pub dark_mode: bool,
    /// Servers connected to recently, newest first.
    pub recent_hosts: Vec<String>,
    /// The Sources side panel is shown (View → Sources panel, Ctrl+B).
    pub sidebar_open: bool,
    /// Names given to machines of opened reports (right-click → Rename in Sources), by
    /// [`rename_key`]: applied whenever that report is opened again.
    pub machine_names: std::collections::BTreeMap<String, String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            view: View::Topology,
            dark_mode: true,
            recent_hosts: Vec::new(),
            sidebar_open: true,
            machine_names: std::collections::BTreeMap::new(),
        }
    }
}

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
    /// Import `nvidia-smi topo` text.
    OpenSmi,
    /// Save `view` as CSV or PNG.
    Save { kind: SaveKind, view: View },
}

impl FileRequest {
    /// The path window's title.
    fn title(&self) -> String {
        match self {
            FileRequest::OpenReport => "Open report".into(),
            FileRequest::OpenSmi => "Open nvidia-smi output".into(),
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
        !matches!(self, FileRequest::Save { .. })
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

/// How one panel's content fits the panel, recorded every frame (for layout tests: content
/// wider or taller than its panel is cut off unless it sits in a scroll area).
#[derive(Clone, Debug)]
pub struct PanelFit {
    /// Which panel: "top bar", "notices", "sources", "central".
    pub panel: &'static str,
    /// The panel's inner area.
    pub available: egui::Rect,
    /// What its content used.
    pub used: egui::Rect,
}

impl PanelFit {
    /// Whether the content reaches past the panel (half a point of rounding allowed).
    pub fn overflows(&self) -> bool {
        self.used.max.x > self.available.max.x + 0.5 || self.used.max.y > self.available.max.y + 0.5
    }
}

/// How many servers "recent" remembers.
const RECENT_HOSTS: usize = 8;

/// Which topology is selected in the side panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceKey {
    /// This machine, read through NVML.
    Live,
    /// A catalog entry, by id.
    Catalog(String),
    /// The n-th imported topology.
    Imported(usize),
    /// The n-th opened (or bundled) report.
    Report(usize),
    /// The n-th server connected to (`--remote`, "Connect to server…").
    Server(usize),
}

/// A server the app connected to (or tries to).
pub struct ServerEntry {
    /// `[user@]host` as typed.
    pub host: String,
    pub state: ServerState,
}

/// Where a server's connection stands.
pub enum ServerState {
    Connecting,
    /// Connected: jobs go through `runner`; `topology` is the server's live machine.
    Ready {
        runner: super::jobs::SharedRunner,
        topology: Box<Topology>,
        /// A quick suite is running there (its report will appear under Reports).
        suite_running: bool,
    },
    /// Why not; `not_installed`: the server has no scalescope (the app offers to copy it).
    Failed {
        reason: String,
        not_installed: bool,
    },
}

/// An opened report and the views filled with its results.
pub struct ReportEntry {
    pub report: Report,
    /// The bundled example (not a file the user opened).
    pub example: bool,
    bandwidth: Option<BandwidthView>,
    collectives: Option<CollectivesView>,
    scaling: Option<ScalingView>,
}

impl ReportEntry {
    /// A report with its views built.
    pub fn new(report: Report, example: bool) -> Self {
        Self {
            bandwidth: report_view::bandwidth_view(&report),
            collectives: report_view::collectives_view(&report),
            scaling: report_view::scaling_view(&report, 2),
            report,
            example,
        }
    }
    /// The Bandwidth view of this report, when it has bandwidth results.
    pub fn bandwidth(&self) -> Option<&BandwidthView> {
        self.bandwidth.as_ref()
    }

    /// The Collectives view of this report, once shown.
    pub fn collectives(&self) -> Option<&CollectivesView> {
        self.collectives.as_ref()
    }
}

/// What a Save button saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveKind {
    Csv,
    Png,
    /// The whole report as one self-contained HTML file (any view).
    Html,
}

/// The state of the live (NVML) read.
enum LiveState {
    /// The `scalescope-nvml` thread is still reading.
    Loading,
    Ready(Box<Topology>),
    /// Why live data is unavailable (the error's text).
    Failed(String),
}

/// What worker threads send back.
enum Msg {
    Live(Result<Topology, String>),
    Imported(Result<Topology, String>),
    /// Reports read from files (each with the error naming its file).
    Reports(Vec<Result<Report, String>>),
    /// A Save finished: where, or why not (`None`: the dialog was closed).
    Saved(Option<Result<String, String>>),
    /// The file dialog closed without a choice.
    DialogClosed,
    /// No file dialog could open for this request (and why): the path field takes over.
    NoDialog {
        request: FileRequest,
        reason: String,
    },
    /// A connection attempt ended: the client and the server's topology, or why not (and
    /// whether scalescope is missing there).
    Server {
        host: String,
        result: Result<(Box<crate::remote::Client>, Box<Topology>), (String, bool)>,
    },
    /// A server's quick suite ended.
    ServerSuite {
        host: String,
        result: Result<Box<Report>, String>,
    },
}

/// Something the user asked for during layout, handled after it.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Show this source.
    Select(SourceKey),
    /// Give the n-th report's machine this name (empty: back to the name from its GPUs).
    RenameReport(usize, String),
    /// Open the file dialog to import `nvidia-smi topo` output.
    OpenDialog,
    /// Open the file dialog to open reports (`report.json`).
    OpenReportDialog,
    /// Save the current view as CSV or PNG (a save dialog on a worker thread).
    Save(SaveKind),
    /// Switch to this view.
    SetView(View),
    /// Toggle dark/light theme.
    ToggleTheme,
    /// Hide the error line.
    DismissError,
    /// Hide the "live data unavailable" banner.
    DismissBanner,
    /// Show or hide the Sources side panel.
    ToggleSidebar,
    /// Close the window.
    Quit,
    /// The path field's OK: open or save the path typed there.
    PromptOk,
    /// Close the path field.
    PromptCancel,
    /// Connect to this server (`[user@]host`).
    Connect(String),
    /// Copy this binary to the n-th server, then connect.
    InstallOn(usize),
    /// Run the quick suite on the n-th server; its report joins Reports (and Compare).
    RunSuiteOn(usize),
}

/// The scalescope window: sources on the left, the selected view in the middle.
pub struct App {
    settings: Settings,
    /// The Bandwidth view's state (selection, running job, results).
    pub bandwidth: BandwidthView,
    /// The Collectives view's state.
    pub collectives: CollectivesView,
    /// The Scaling view's state.
    pub scaling: ScalingView,

    live: LiveState,
    catalog: Vec<catalog::CatalogEntry>,
    imported: Vec<Topology>,
    reports: Vec<ReportEntry>,
    /// A line saying where the last Save went.
    status: Option<String>,
    selected: SourceKey,
    /// The loaded topology of a selected catalog entry (live and imported ones are kept above).
    catalog_topology: Option<Topology>,
    error: Option<String>,
    banner_dismissed: bool,
    /// Whether the user picked a source themselves (then a late live failure does not move them).
    user_selected: bool,
    dialog_open: bool,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    theme_applied: Option<bool>,
    /// Servers connected to (or tried).
    servers: Vec<ServerEntry>,
    /// The "Connect to server…" field.
    pub server_field: String,
    /// The ssh and remote actions every connection uses (from `--ssh`, `--remote-command`).
    remote_defaults: crate::remote::RemoteOptions,
    /// The server named by `--remote`, connected to on the first frame.
    connect_on_start: Option<String>,
    /// File dialogs, or the path field instead.
    dialogs: FileDialogs,
    /// The path field, while it is open.
    prompt: Option<PathPrompt>,
    /// How each panel's content fit last frame.
    fits: Vec<PanelFit>,
}

impl App {
    /// The app as eframe creates it: reads settings, starts the NVML worker and imports the
    /// files given on the command line.
    pub fn new(cc: &eframe::CreationContext<'_>, startup: Startup) -> Self {
        let settings = cc
            .storage
            .and_then(|s| s.get_string(SETTINGS_KEY))
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut app = Self::empty(settings, LiveState::Loading);
        let ctx = cc.egui_ctx.clone();
        let tx = app.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("scalescope-nvml".into())
            .spawn(move || {
                let result = live::read().map_err(|e| e.to_string());
                // The receiver is gone only when the window closed; nothing left to tell.
                let _ = tx.send(Msg::Live(result));
                ctx.request_repaint();
            });
        if let Err(e) = spawned {
            app.live_failed(format!("cannot start the NVML reader thread: {e}"));
        }
        if !startup.open_paths.is_empty() {
            app.spawn_import(cc.egui_ctx.clone(), startup.open_paths);
        }
        if !startup.report_paths.is_empty() {
            app.spawn_open_reports(cc.egui_ctx.clone(), startup.report_paths);
        }
        app.remote_at_start(startup.remote);
        app
    }

    /// An app whose live result is already known, for tests and reports: nothing touches NVML,
    /// and `startup.open_paths` are imported on the calling thread.
    pub fn new_with(live: Result<Topology, String>, startup: Startup) -> Self {
        Self::new_with_settings(live, startup, Settings::default())
    }

    /// [`App::new_with`] with settings as a previous run left them (what eframe's storage
    /// restores in [`App::new`]).
    pub fn new_with_settings(
        live: Result<Topology, String>,
        startup: Startup,
        settings: Settings,
    ) -> Self {
        let mut app = Self::empty(settings, LiveState::Loading);
        app.set_live(live);
        if !startup.open_paths.is_empty() {
            let result = import::import_paths(&startup.open_paths).map_err(|e| e.to_string());
            app.on_imported(result);
        }
        if !startup.report_paths.is_empty() {
            let results = read_reports(&startup.report_paths);
            app.on_reports(results);
        }
        app.remote_at_start(startup.remote);
        app
    }

    /// Takes the ssh settings of `--remote` for every connection, and connects to its host on
    /// the first frame.
    fn remote_at_start(&mut self, remote: Option<crate::remote::RemoteOptions>) {
        if let Some(r) = remote {
            self.connect_on_start = Some(r.host.clone());
            self.remote_defaults = r;
        }
    }

    /// Opens reports already in memory (for tests and scripted use) and shows the last one.
    pub fn open_reports(&mut self, reports: Vec<Report>) {
        self.on_reports(reports.into_iter().map(Ok).collect());
    }

    /// The opened reports (the bundled examples first, when the build has any).
    pub fn reports(&self) -> &[ReportEntry] {
        &self.reports
    }

    /// The report on screen, if a report is selected.
    pub fn current_report(&self) -> Option<&Report> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i).map(|e| &e.report),
            _ => None,
        }
    }

    fn empty(settings: Settings, live: LiveState) -> Self {
        let (tx, rx) = channel();
        // Every bundled report that parses, as an example (a broken one is caught by
        // `bundled`'s tests rather than shown as an error here), under the name it was given.
        let reports = crate::report::bundled::reports()
            .into_iter()
            .filter_map(|(_, r)| r.ok())
            .map(|mut r| {
                if let Some(n) = settings.machine_names.get(&rename_key(&r)) {
                    r.machine.display_name = Some(n.clone());
                }
                ReportEntry::new(r, true)
            })
            .collect();
        Self {
            settings,
            bandwidth: BandwidthView::default(),
            collectives: CollectivesView::default(),
            scaling: ScalingView::default(),
            live,
            catalog: catalog::entries(),
            imported: Vec::new(),
            reports,
            status: None,
            selected: SourceKey::Live,
            catalog_topology: None,
            error: None,
            banner_dismissed: false,
            user_selected: false,
            dialog_open: false,
            tx,
            rx,
            theme_applied: None,
            servers: Vec::new(),
            server_field: String::new(),
            remote_defaults: Default::default(),
            connect_on_start: None,
            dialogs: FileDialogs::detect(),
            prompt: None,
            fits: Vec::new(),
        }
    }

    /// Chooses file dialogs or the in-app path field (tests force the path field).
    pub fn set_file_dialogs(&mut self, dialogs: FileDialogs) {
        self.dialogs = dialogs;
    }

    /// How each panel's content fit its panel on the last frame.
    pub fn panel_fits(&self) -> &[PanelFit] {
        &self.fits
    }

    /// Whether the path field (the stand-in for a file dialog) is open.
    pub fn path_field_open(&self) -> bool {
        self.prompt.is_some()
    }

    /// The topology on screen, if one is loaded.
    pub fn current_topology(&self) -> Option<&Topology> {
        match &self.selected {
            SourceKey::Live => match &self.live {
                LiveState::Ready(t) => Some(t),
                _ => None,
            },
            SourceKey::Catalog(_) => self.catalog_topology.as_ref(),
            SourceKey::Imported(i) => self.imported.get(*i),
            SourceKey::Report(i) => self.reports.get(*i).map(|e| &e.report.topology),
            SourceKey::Server(i) => match self.servers.get(*i).map(|s| &s.state) {
                Some(ServerState::Ready { topology, .. }) => Some(topology),
                _ => None,
            },
        }
    }

    /// The servers connected to (or tried).
    pub fn servers(&self) -> &[ServerEntry] {
        &self.servers
    }

    /// Adds a connected server as a source and shows it (for tests and scripted use; the app
    /// itself connects on a worker thread).
    pub fn add_server(&mut self, host: &str, client: crate::remote::Client, topology: Topology) {
        self.on_server(host.to_string(), Ok((Box::new(client), Box::new(topology))));
    }

    /// Starts connecting to `host` on a worker thread (after copying this binary there when
    /// `install`); the server shows under Servers at once, connecting.
    fn connect(&mut self, ctx: egui::Context, host: String, install: bool) {
        let host = host.trim().to_string();
        if host.is_empty() {
            return;
        }
        let entry = ServerEntry {
            host: host.clone(),
            state: ServerState::Connecting,
        };
        match self.servers.iter().position(|s| s.host == host) {
            Some(i) => self.servers[i] = entry,
            None => self.servers.push(entry),
        }
        let opts = crate::remote::RemoteOptions {
            host: host.clone(),
            ..self.remote_defaults.clone()
        };
        self.spawn_worker(ctx, "scalescope-connect", move || {
            let result = (|| {
                if install {
                    crate::remote::client::install(&opts).map_err(|e| (e.to_string(), false))?;
                }
                let mut client = crate::remote::Client::connect(&opts).map_err(|e| {
                    let missing = matches!(e, crate::remote::ConnectError::NotInstalled { .. });
                    (e.to_string(), missing)
                })?;
                let topology = client.topology(None).map_err(|e| (e.message, false))?;
                Ok((Box::new(client), Box::new(topology)))
            })();
            Msg::Server { host, result }
        });
    }

    fn on_server(
        &mut self,
        host: String,
        result: Result<(Box<crate::remote::Client>, Box<Topology>), (String, bool)>,
    ) {
        let state = match result {
            Ok((client, topology)) => ServerState::Ready {
                runner: std::sync::Arc::new(std::sync::Mutex::new(crate::remote::Runner::Remote(
                    client,
                ))),
                topology,
                suite_running: false,
            },
            Err((reason, not_installed)) => ServerState::Failed {
                reason,
                not_installed,
            },
        };
        let ready = matches!(state, ServerState::Ready { .. });
        let i = match self.servers.iter().position(|s| s.host == host) {
            Some(i) => {
                self.servers[i].state = state;
                i
            }
            None => {
                self.servers.push(ServerEntry {
                    host: host.clone(),
                    state,
                });
                self.servers.len() - 1
            }
        };
        if ready {
            let recent = &mut self.settings.recent_hosts;
            recent.retain(|h| *h != host);
            recent.insert(0, host);
            recent.truncate(RECENT_HOSTS);
            self.user_selected = true;
            self.select(SourceKey::Server(i));
        }
    }

    /// Runs the quick suite on a connected server; its report joins Reports when it ends.
    fn run_suite_on(&mut self, ctx: egui::Context, i: usize) {
        let Some(ServerEntry {
            host,
            state:
                ServerState::Ready {
                    runner,
                    suite_running,
                    ..
                },
        }) = self.servers.get_mut(i)
        else {
            return;
        };
        if *suite_running {
            return;
        }
        *suite_running = true;
        let (runner, host) = (runner.clone(), host.clone());
        let job = crate::job::Job::Suite {
            target: crate::job::Target::Live,
            options: crate::job::SuiteOptions {
                stages: crate::job::Stage::ALL.to_vec(),
                ..Default::default()
            },
        };
        self.spawn_worker(ctx, "scalescope-server-suite", move || {
            let cancel = std::sync::atomic::AtomicBool::new(false);
            let result = match runner.lock() {
                Ok(mut r) => r
                    .run(&job, &cancel, &mut |_| {})
                    .map(Box::new)
                    .map_err(|e| e.message),
                Err(_) => Err("the server connection is broken".to_string()),
            };
            Msg::ServerSuite { host, result }
        });
    }

    /// The server the selected source belongs to: its connection and name.
    fn current_runner(&self) -> Option<(super::jobs::SharedRunner, String)> {
        match self.selected {
            SourceKey::Server(i) => match self.servers.get(i) {
                Some(ServerEntry {
                    host,
                    state: ServerState::Ready { runner, .. },
                }) => Some((runner.clone(), host.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// The selected source.
    pub fn selected(&self) -> &SourceKey {
        &self.selected
    }

    /// Why live data is unavailable, once the live read failed.
    pub fn live_error(&self) -> Option<&str> {
        match &self.live {
            LiveState::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// The error line's text, if one is shown.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The settings (persisted when eframe has storage).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Carries out one action, as the UI does after layout.
    pub fn apply(&mut self, ctx: &egui::Context, action: Action) {
        match action {
            Action::Select(key) => {
                self.user_selected = true;
                self.select(key);
            }
            Action::OpenDialog => self.open_files(ctx.clone(), FileRequest::OpenSmi),
            Action::OpenReportDialog => self.open_files(ctx.clone(), FileRequest::OpenReport),
            Action::Save(kind) => self.save(ctx.clone(), kind),
            Action::ToggleSidebar => self.settings.sidebar_open = !self.settings.sidebar_open,
            Action::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
            Action::RenameReport(i, name) => self.rename_report(i, &name),
            Action::PromptOk => self.prompt_ok(ctx.clone()),
            Action::PromptCancel => self.prompt = None,
            Action::SetView(v) => self.settings.view = v,
            Action::ToggleTheme => self.settings.dark_mode = !self.settings.dark_mode,
            Action::DismissError => self.error = None,
            Action::DismissBanner => self.banner_dismissed = true,
            Action::Connect(host) => self.connect(ctx.clone(), host, false),
            Action::InstallOn(i) => {
                if let Some(host) = self.servers.get(i).map(|s| s.host.clone()) {
                    self.connect(ctx.clone(), host, true);
                }
            }
            Action::RunSuiteOn(i) => self.run_suite_on(ctx.clone(), i),
        }
    }

    fn set_live(&mut self, live: Result<Topology, String>) {
        match live {
            Ok(t) => {
                self.live = LiveState::Ready(Box::new(t));
            }
            Err(e) => self.live_failed(e),
        }
    }

    fn live_failed(&mut self, reason: String) {
        self.live = LiveState::Failed(reason);
        if self.selected == SourceKey::Live && !self.user_selected {
            // The first bundled example (measured on a real machine) beats a catalog entry.
            if let Some(i) = self.reports.iter().position(|e| e.example) {
                self.select(SourceKey::Report(i));
                return;
            }
            let id = self
                .catalog
                .iter()
                .find(|e| e.id == PREFERRED_CATALOG)
                .or_else(|| self.catalog.first())
                .map(|e| e.id.clone());
            if let Some(id) = id {
                self.select(SourceKey::Catalog(id));
            }
        }
    }

    fn select(&mut self, key: SourceKey) {
        match &key {
            SourceKey::Catalog(id) => match catalog::load(id) {
                Ok(t) => self.catalog_topology = Some(t),
                Err(e) => {
                    self.error = Some(format!("Cannot load catalog entry {id}: {e}"));
                    return;
                }
            },
            SourceKey::Imported(i) if *i >= self.imported.len() => return,
            SourceKey::Report(i) if *i >= self.reports.len() => return,
            SourceKey::Server(i)
                if !matches!(
                    self.servers.get(*i).map(|s| &s.state),
                    Some(ServerState::Ready { .. })
                ) =>
            {
                return;
            }
            SourceKey::Live if matches!(self.live, LiveState::Failed(_)) => return,
            _ => {}
        }
        self.selected = key;
    }

    fn on_imported(&mut self, result: Result<Topology, String>) {
        match result {
            Ok(t) => {
                self.imported.push(t);
                self.user_selected = true;
                self.select(SourceKey::Imported(self.imported.len() - 1));
                self.error = None;
            }
            Err(e) => self.error = Some(format!("Import failed: {e}")),
        }
    }

    /// Names the n-th report's machine (an empty name restores the name from its GPUs) and
    /// remembers it for the next time that report is opened.
    pub fn rename_report(&mut self, i: usize, name: &str) {
        let Some(e) = self.reports.get_mut(i) else {
            return;
        };
        let key = rename_key(&e.report);
        let name = name.trim();
        if name.is_empty() {
            e.report.machine.display_name = None;
            self.settings.machine_names.remove(&key);
        } else {
            // A name, not a document: one line of at most 80 characters.
            let name: String = name.chars().filter(|c| !c.is_control()).take(80).collect();
            e.report.machine.display_name = Some(name.clone());
            self.settings.machine_names.insert(key, name);
        }
    }

    fn apply_machine_name(&self, report: &mut Report) {
        if let Some(n) = self.settings.machine_names.get(&rename_key(report)) {
            report.machine.display_name = Some(n.clone());
        }
    }

    fn on_reports(&mut self, results: Vec<Result<Report, String>>) {
        let mut errors = Vec::new();
        for r in results {
            match r {
                Ok(report) => {
                    // A report already open (a bundled example opened from its file, or a file
                    // opened twice) is selected, not listed again.
                    let i = match self.reports.iter().position(|e| {
                        // A renamed report is still the same report.
                        let mut open = e.report.clone();
                        open.machine.display_name = report.machine.display_name.clone();
                        open == report
                    }) {
                        Some(i) => i,
                        None => {
                            let mut report = report;
                            self.apply_machine_name(&mut report);
                            self.reports.push(ReportEntry::new(report, false));
                            self.reports.len() - 1
                        }
                    };
                    self.user_selected = true;
                    self.select(SourceKey::Report(i));
                }
                Err(e) => errors.push(e),
            }
        }
        self.error =
            (!errors.is_empty()).then(|| format!("Cannot open report: {}", errors.join("; ")));
    }

    /// Runs `work` on a thread named `name`, sends its message and wakes the UI; a thread that
    /// cannot start becomes the error line. Returns whether it started.
    fn spawn_worker(
        &mut self,
        ctx: egui::Context,
        name: &str,
        work: impl FnOnce() -> Msg + Send + 'static,
    ) -> bool {
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                // The receiver is gone only when the window closed; nothing left to tell.
                let _ = tx.send(work());
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => true,
            Err(e) => {
                self.error = Some(format!("Cannot start the {name} thread: {e}"));
                false
            }
        }
    }

    fn spawn_open_reports(&mut self, ctx: egui::Context, paths: Vec<PathBuf>) {
        self.spawn_worker(ctx, "scalescope-report", move || {
            Msg::Reports(read_reports(&paths))
        });
    }

    /// Opens reports or nvidia-smi text: the desktop's file dialog on a worker thread, or the
    /// path field where there is none.
    fn open_files(&mut self, ctx: egui::Context, request: FileRequest) {
        if self.dialog_open {
            return;
        }
        if let FileDialogs::PathField(reason) = &self.dialogs {
            let reason = reason.clone();
            self.open_prompt(request, reason, None);
            return;
        }
        self.dialog_open = self.spawn_worker(ctx, "scalescope-open", move || {
            let (title, kind, extensions): (&str, &str, &[&str]) = match request {
                FileRequest::OpenReport => {
                    ("Open scalescope reports", "scalescope report", &["json"])
                }
                _ => (
                    "Open nvidia-smi topo output",
                    "nvidia-smi output",
                    &["txt", "log", "out"],
                ),
            };
            let started = Instant::now();
            match pick_files(title, kind, extensions) {
                Ok(Some(paths)) => open_msg(request, paths),
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
    }

    /// Opens the path field for `request`, with why no dialog opened; saves start with
    /// `file_name` in the current folder.
    fn open_prompt(&mut self, request: FileRequest, reason: String, file_name: Option<&str>) {
        let dir = std::env::current_dir().unwrap_or_default();
        let text = match file_name {
            Some(name) => dir.join(name).display().to_string(),
            None => format!("{}/", dir.display().to_string().trim_end_matches('/')),
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

    /// The path field's OK: opens the files typed there, or saves to the path.
    fn prompt_ok(&mut self, ctx: egui::Context) {
        let Some(p) = &mut self.prompt else { return };
        let paths: Vec<PathBuf> = p
            .text
            .split(';')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(expand_home)
            .collect();
        if paths.is_empty() || paths.iter().any(|p| p.is_dir()) {
            p.problem = Some("Type the path of a file (a folder is not enough).".into());
            p.confirm_replace = false;
            return;
        }
        match p.request {
            FileRequest::OpenReport | FileRequest::OpenSmi => {
                let request = p.request;
                self.prompt = None;
                self.dialog_open =
                    self.spawn_worker(ctx, "scalescope-open", move || open_msg(request, paths));
            }
            FileRequest::Save { kind, view } => {
                let [path] = paths.as_slice() else {
                    p.problem = Some("Give one file to save to.".into());
                    return;
                };
                if path.exists() && !p.confirm_replace {
                    p.problem = Some(format!(
                        "{} exists: press OK again to replace it.",
                        path.display()
                    ));
                    p.confirm_replace = true;
                    return;
                }
                let path = path.clone();
                let Some((_, work)) = self.save_job(view, kind) else {
                    self.prompt = None;
                    self.error = Some("Nothing to save in this view yet.".into());
                    return;
                };
                self.prompt = None;
                self.spawn_worker(ctx, "scalescope-save", move || {
                    Msg::Saved(Some(write_saved(&path, work)))
                });
            }
        }
    }

    /// What the current view would save: a file name and the bytes, made on the worker thread.
    fn save_job(&self, view: View, kind: SaveKind) -> Option<(String, SaveWork)> {
        let topo = self.current_topology()?.clone();
        if kind == SaveKind::Html {
            let report = self.export_report(&topo);
            let work: SaveWork =
                Box::new(move || Ok(crate::export::html::report(&report).into_bytes()));
            return Some(("report.html".into(), work));
        }
        let base = view.label().to_lowercase();
        // The view's own data as a table, or its picture.
        let csv = kind == SaveKind::Csv;
        let ext = if csv { "csv" } else { "png" };
        let name = format!("{base}.{ext}");
        let w = report_view::PAGE_WIDTH;
        let work: SaveWork = match (view, csv) {
            (View::Topology, true) => {
                Box::new(move || crate::export::csv::links(&topo).map_err(|e| e.to_string()))
            }
            (View::Topology, false) => {
                let health = self.current_report().and_then(|r| r.health.clone());
                Box::new(move || {
                    report_view::render_topology_with_health(&topo, health.as_ref())
                        .map_err(|e| format!("{e:#}"))
                })
            }
            (View::Bandwidth, _) => {
                let data = self.current_bandwidth()?.data()?.clone();
                match csv {
                    true => Box::new(move || {
                        crate::export::csv::bandwidth(&data.results).map_err(|e| e.to_string())
                    }),
                    false => Box::new(move || {
                        let mut v = BandwidthView::with_results(&topo, data);
                        super::snapshot::render_png(w, 1400, self_theme(), move |ui| {
                            v.ui(ui, &topo)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Collectives, _) => {
                let data = self.current_collectives()?.data()?.clone();
                match csv {
                    true => Box::new(move || {
                        crate::export::csv::collectives(&data.results).map_err(|e| e.to_string())
                    }),
                    false => Box::new(move || {
                        let mut v = CollectivesView::with_results(&topo, data);
                        super::snapshot::render_png(w, 1100, self_theme(), move |ui| {
                            v.ui(ui, &topo)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Scaling, _) => {
                let run = self.current_scaling()?.export_run();
                match csv {
                    true => Box::new(move || {
                        crate::export::csv::scaling(&run.rows).map_err(|e| e.to_string())
                    }),
                    false => Box::new(move || {
                        let shown = run.workloads.len().max(1);
                        let h = (420 + 620 * shown as u32).min(8192);
                        let mut v = ScalingView::with_report(run, shown);
                        super::snapshot::render_png(w, h, self_theme(), move |ui| v.ui(ui, &topo))
                            .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
            (View::Compare, _) => {
                let reports: Vec<Report> = self.reports.iter().map(|e| e.report.clone()).collect();
                match csv {
                    true => Box::new(move || {
                        let refs: Vec<&Report> = reports.iter().collect();
                        crate::export::csv::comparison(&crate::report::compare::compare(
                            &refs, None,
                        ))
                        .map_err(|e| e.to_string())
                    }),
                    false => Box::new(move || {
                        super::snapshot::render_png(w, 1600, self_theme(), move |ui| {
                            let refs: Vec<&Report> = reports.iter().collect();
                            compare_view::show(ui, &refs, None)
                        })
                        .map_err(|e| format!("{e:#}"))
                    }),
                }
            }
        };
        Some((name, work))
    }

    /// What Export report.html writes: the selected report as it is, or for this machine, a
    /// catalog entry or an import, a report of the topology and what the views hold (each
    /// section with its own provenance).
    fn export_report(&self, topo: &Topology) -> Report {
        if let Some(r) = self.current_report() {
            return r.clone();
        }
        let mut r = Report::new(crate::job::machine_info(topo, "app"), topo.clone());
        use crate::model::Source;
        let source_of = |modeled: bool| {
            if modeled {
                Source::Modeled
            } else {
                Source::Measured
            }
        };
        if let Some(d) = self.current_bandwidth().and_then(|v| v.data()) {
            r.bandwidth = Some(crate::report::BandwidthSection {
                source: source_of(d.results.iter().all(|x| x.source == Source::Modeled)),
                backend: d.backend.clone(),
                results: d.results.clone(),
            });
            r.warnings.extend(d.warnings.iter().cloned());
        }
        if let Some(d) = self.current_collectives().and_then(|v| v.data()) {
            r.collectives = Some(crate::report::CollectivesSection {
                source: source_of(d.results.iter().all(|x| x.source == Source::Modeled)),
                backend: d.backend.clone(),
                results: d.results.clone(),
            });
            r.warnings.extend(d.warnings.iter().cloned());
        }
        if let Some(v) = self.current_scaling() {
            let run = v.export_run();
            if !run.rows.is_empty() {
                r.scaling = Some(crate::report::ScalingSection {
                    source: source_of(
                        run.rows
                            .iter()
                            .all(|x| x.source == crate::scaling::model::RowSource::Modeled),
                    ),
                    run,
                });
            }
        }
        r
    }

    fn save(&mut self, ctx: egui::Context, kind: SaveKind) {
        let view = self.settings.view;
        let Some((name, work)) = self.save_job(view, kind) else {
            self.error = Some("Nothing to save in this view yet.".into());
            return;
        };
        let request = FileRequest::Save { kind, view };
        if let FileDialogs::PathField(reason) = &self.dialogs {
            let reason = reason.clone();
            self.open_prompt(request, reason, Some(&name));
            return;
        }
        self.spawn_worker(ctx, "scalescope-save", move || {
            let started = Instant::now();
            let picked = std::panic::catch_unwind(|| {
                rfd::FileDialog::new()
                    .set_title("Save")
                    .set_file_name(&name)
                    .save_file()
            });
            match picked {
                Ok(Some(path)) => Msg::Saved(Some(write_saved(&path, work))),
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
        });
    }

    fn current_bandwidth(&self) -> Option<&BandwidthView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.bandwidth.as_ref(),
            _ => Some(&self.bandwidth),
        }
    }

    fn current_collectives(&self) -> Option<&CollectivesView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.collectives.as_ref(),
            _ => Some(&self.collectives),
        }
    }

    fn current_scaling(&self) -> Option<&ScalingView> {
        match self.selected {
            SourceKey::Report(i) => self.reports.get(i)?.scaling.as_ref(),
            _ => Some(&self.scaling),
        }
    }

    fn spawn_import(&mut self, ctx: egui::Context, paths: Vec<String>) {
        self.spawn_worker(ctx, "scalescope-import", move || {
            Msg::Imported(import::import_paths(&paths).map_err(|e| e.to_string()))
        });
    }

    /// Drains the worker channel.
    fn poll_workers(&mut self) {
        loop {
            match self.rx.try_recv() {
                Ok(Msg::Live(r)) => self.set_live(r),
                Ok(Msg::Imported(r)) => {
                    self.dialog_open = false;
                    self.on_imported(r);
                }
                Ok(Msg::Reports(r)) => {
                    self.dialog_open = false;
                    self.on_reports(r);
                }
                Ok(Msg::Saved(Some(Ok(path)))) => self.status = Some(format!("Saved {path}")),
                Ok(Msg::Saved(Some(Err(e)))) => self.error = Some(format!("Save failed: {e}")),
                Ok(Msg::Saved(None)) => {}
                Ok(Msg::DialogClosed) => self.dialog_open = false,
                Ok(Msg::NoDialog { request, reason }) => {
                    self.dialog_open = false;
                    // Later requests go straight to the path field.
                    self.dialogs = FileDialogs::PathField(reason.clone());
                    let name = match request {
                        FileRequest::Save { kind, view } => self.save_job(view, kind).map(|j| j.0),
                        _ => None,
                    };
                    self.open_prompt(request, reason, name.as_deref());
                }
                Ok(Msg::Server { host, result }) => self.on_server(host, result),
                Ok(Msg::ServerSuite { host, result }) => {
                    if let Some(ServerEntry {
                        state: ServerState::Ready { suite_running, .. },
                        ..
                    }) = self.servers.iter_mut().find(|s| s.host == host)
                    {
                        *suite_running = false;
                    }
                    match result {
                        Ok(r) => self.on_reports(vec![Ok(*r)]),
                        Err(e) => self.error = Some(format!("Suite on {host} failed: {e}")),
                    }
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
    }

    /// Imports files dropped onto the window.
    fn handle_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.clone());
        if dropped.is_empty() {
            return;
        }
        // Native drops carry absolute paths; the files are read on worker threads. A .json file
        // is a report; anything else is nvidia-smi text.
        let (reports, texts): (Vec<PathBuf>, Vec<PathBuf>) = dropped
            .iter()
            .map(|f| f.path().to_path_buf())
            .partition(|p| {
                p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
            });
        if !reports.is_empty() {
            self.spawn_open_reports(ctx.clone(), reports);
        }
        if !texts.is_empty() {
            let paths = texts.iter().map(|p| p.display().to_string()).collect();
            self.spawn_import(ctx.clone(), paths);
        }
    }

    /// Draws the whole window into `ui` (eframe's root ui, or a test harness's).
    pub fn show(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        if self.theme_applied.is_none() {
            super::fonts::install(&ctx);
            // Solid scroll bars, always shown where content scrolls: thin bars that appear
            // only on hover hide that a view is wider or taller than the window.
            ctx.all_styles_mut(|s| s.spacing.scroll = egui::style::ScrollStyle::solid());
        }
        if self.theme_applied != Some(self.settings.dark_mode) {
            ctx.set_theme(if self.settings.dark_mode {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
            self.theme_applied = Some(self.settings.dark_mode);
        }
        if let Some(host) = self.connect_on_start.take() {
            self.connect(ctx.clone(), host, false);
        }
        self.poll_workers();
        self.handle_dropped_files(&ctx);

        let mut actions = Vec::new();
        self.shortcuts(&ctx, &mut actions);
        self.fits.clear();
        self.top_bar(ui, &mut actions);
        self.notices(ui, &mut actions);
        self.sources_panel(ui, &mut actions);
        egui::CentralPanel::default().show(ui, |ui| {
            let available = ui.max_rect();
            self.central(ui, &mut actions);
            self.fits.push(PanelFit {
                panel: "central",
                available,
                used: ui.min_rect(),
            });
        });
        self.path_prompt(&ctx, &mut actions);
        drop_overlay(&ctx);

        for c in actions {
            self.apply(&ctx, c);
        }
    }

    /// Ctrl+O, Ctrl+S, Ctrl+B and Ctrl+Q (Cmd on macOS). File shortcuts wait while the path
    /// field is open.
    fn shortcuts(&self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        let pressed = |s: &KeyboardShortcut| ctx.input_mut(|i| i.consume_shortcut(s));
        if pressed(&QUIT) {
            actions.push(Action::Quit);
        }
        if pressed(&TOGGLE_SIDEBAR) {
            actions.push(Action::ToggleSidebar);
        }
        if self.prompt.is_none() {
            if pressed(&OPEN_REPORT) {
                actions.push(Action::OpenReportDialog);
            }
            if pressed(&SAVE_CSV) {
                actions.push(Action::Save(SaveKind::Csv));
            }
        }
    }

    /// The top bar: the File and View menus, the view tabs, and on the right where the data
    /// comes from and the theme switch.
    fn top_bar(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        // What is shown and how it is known: a report says which (an example measured
        // elsewhere, or a report file), never this machine's live label.
        let source = match (self.current_report(), self.selected.clone()) {
            (Some(r), SourceKey::Report(i)) => {
                let example = self.reports.get(i).is_some_and(|e| e.example);
                Some(format!(
                    "{} ({})",
                    report_view::list_name(r),
                    if example { "example" } else { "report file" }
                ))
            }
            _ => self.current_topology().map(|t| t.source.label()),
        };
        let fit = egui::Panel::top("top-bar")
            .show(ui, |ui| {
                let available = ui.max_rect();
                ui.add_space(2.0);
                // One row: the menus, then the tabs (the menu bar takes the full width).
                egui::MenuBar::new().ui(ui, |ui| {
                    ui.menu_button("File", |ui| self.file_menu(ui, actions));
                    ui.menu_button("View", |ui| self.view_menu(ui, actions));
                    ui.separator();
                    let (arrow, tip) = if self.settings.sidebar_open {
                        ("◀ Sources", "Hide the Sources panel")
                    } else {
                        ("▶ Sources", "Show the Sources panel")
                    };
                    let shortcut = ui.ctx().format_shortcut(&TOGGLE_SIDEBAR);
                    if ui
                        .button(arrow)
                        .on_hover_text(format!("{tip} ({shortcut})"))
                        .clicked()
                    {
                        actions.push(Action::ToggleSidebar);
                    }
                    ui.add_space(8.0);
                    for view in View::ALL {
                        let tab = ui.add(egui::Button::selectable(
                            self.settings.view == *view,
                            RichText::new(view.label()).size(14.0),
                        ));
                        if tab.clicked() {
                            actions.push(Action::SetView(*view));
                        }
                    }
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        let (icon, tip) = if self.settings.dark_mode {
                            ("Light theme", "Switch to the light theme")
                        } else {
                            ("Dark theme", "Switch to the dark theme")
                        };
                        if ui.button(icon).on_hover_text(tip).clicked() {
                            actions.push(Action::ToggleTheme);
                        }
                        if let Some(label) = &source {
                            // Cut short (full text on hover) rather than push the bar wider.
                            ui.add(egui::Label::new(RichText::new(label).weak()).truncate())
                                .on_hover_text(label);
                        }
                    });
                });
                ui.add_space(2.0);
                PanelFit {
                    panel: "top bar",
                    available,
                    used: ui.min_rect(),
                }
            })
            .inner;
        self.fits.push(fit);
    }

    fn file_menu(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        // Wide enough for the longest item and its shortcut.
        ui.set_min_width(240.0);
        let ctx = ui.ctx().clone();
        let item = |ui: &mut Ui, text: &str, shortcut: Option<&KeyboardShortcut>, tip: &str| {
            let mut b = egui::Button::new(text);
            if let Some(s) = shortcut {
                b = b.shortcut_text(ctx.format_shortcut(s));
            }
            ui.add_enabled(!self.dialog_open, b)
                .on_hover_text(tip)
                .clicked()
        };
        if item(
            ui,
            "Open report…",
            Some(&OPEN_REPORT),
            "Open report.json files written by `scalescope --bench`",
        ) {
            actions.push(Action::OpenReportDialog);
        }
        if item(
            ui,
            "Open nvidia-smi output…",
            None,
            "Import the text of `nvidia-smi topo -m` (and optionally `topo -p2p r|w|n|a`)",
        ) {
            actions.push(Action::OpenDialog);
        }
        ui.separator();
        if item(
            ui,
            "Save CSV…",
            Some(&SAVE_CSV),
            "Save this view's data as CSV",
        ) {
            actions.push(Action::Save(SaveKind::Csv));
        }
        if item(ui, "Save PNG…", None, "Save this view as a PNG image") {
            actions.push(Action::Save(SaveKind::Png));
        }
        if item(
            ui,
            "Export report.html…",
            None,
            "The whole report as one self-contained HTML file (tables and figures inline; opens \
             offline in any browser, prints as a document)",
        ) {
            actions.push(Action::Save(SaveKind::Html));
        }
        ui.separator();
        if ui
            .add(egui::Button::new("Quit").shortcut_text(ctx.format_shortcut(&QUIT)))
            .clicked()
        {
            actions.push(Action::Quit);
        }
    }

    fn view_menu(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let shortcut = ui.ctx().format_shortcut(&TOGGLE_SIDEBAR);
        let sidebar = egui::Button::selectable(self.settings.sidebar_open, "Sources panel")
            .shortcut_text(shortcut);
        if ui.add(sidebar).clicked() {
            actions.push(Action::ToggleSidebar);
        }
        let theme = if self.settings.dark_mode {
            "Light theme"
        } else {
            "Dark theme"
        };
        if ui.button(theme).clicked() {
            actions.push(Action::ToggleTheme);
        }
        ui.separator();
        for view in View::ALL {
            if ui
                .add(egui::Button::selectable(
                    self.settings.view == *view,
                    view.label(),
                ))
                .clicked()
            {
                actions.push(Action::SetView(*view));
            }
        }
    }

    /// One notice area under the top bar, the same on every tab: the error line, the warning
    /// banner (a plain sentence; the raw reason under "details") and where the last Save went.
    fn notices(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let banner = self.banner();
        if self.error.is_none() && banner.is_none() && self.status.is_none() {
            return;
        }
        let fit = egui::Panel::top("notices")
            .show(ui, |ui| {
                let available = ui.max_rect();
                ui.add_space(4.0);
                if let Some(err) = &self.error {
                    message_line(ui, err, None, Color32::from_rgb(0xc8, 0x3a, 0x3a), || {
                        actions.push(Action::DismissError)
                    });
                    ui.add_space(4.0);
                }
                if let Some((text, details)) = &banner {
                    message_line(
                        ui,
                        text,
                        Some(details),
                        Color32::from_rgb(0xb0, 0x7a, 0x1c),
                        || actions.push(Action::DismissBanner),
                    );
                    ui.add_space(4.0);
                }
                if let Some(status) = &self.status {
                    ui.add(egui::Label::new(RichText::new(status).weak()).truncate());
                }
                ui.add_space(2.0);
                PanelFit {
                    panel: "notices",
                    available,
                    used: ui.min_rect(),
                }
            })
            .inner;
        self.fits.push(fit);
    }

    /// The warning banner, when live data failed and a stand-in is shown: a plain sentence and
    /// the details (the raw reason).
    fn banner(&self) -> Option<(String, String)> {
        let LiveState::Failed(reason) = &self.live else {
            return None;
        };
        if self.banner_dismissed {
            return None;
        }
        // NVML's loader error names the library and the command line's flags: details only.
        let why = if reason.starts_with("no NVIDIA driver found") {
            "No NVIDIA driver was found on this machine"
        } else {
            "This machine could not be read through NVML"
        };
        let text = match self.selected {
            SourceKey::Catalog(_) => format!(
                "{why}. Showing a hardware catalog entry instead: documented by the vendor, not measured on this machine."
            ),
            SourceKey::Report(i) if self.reports.get(i).is_some_and(|e| e.example) => format!(
                "{why}. Showing a bundled example report ({}), measured there, not on this machine.",
                self.reports[i].report.title()
            ),
            _ => return None,
        };
        let details = format!(
            "{reason}\n\nTo look at another machine: File → Open report… or Open nvidia-smi output…, or pick a catalog entry under Sources."
        );
        Some((text, details))
    }

    /// The path field: stands in for a file dialog where none can open.
    fn path_prompt(&mut self, ctx: &egui::Context, actions: &mut Vec<Action>) {
        let Some(p) = &mut self.prompt else { return };
        let mut open = true;
        egui::Window::new(p.request.title())
            .id(egui::Id::unique("path-prompt"))
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 90.0])
            .show(ctx, |ui| {
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
                let hint = if p.request.opens() {
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
            });
        if !open {
            actions.push(Action::PromptCancel);
        }
    }

    /// The Sources side panel; hidden with View → Sources panel, the top bar's button or
    /// Ctrl+B (and dragged open again from the window's left edge).
    fn sources_panel(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        let mut open = self.settings.sidebar_open;
        let fit = egui::Panel::left("sources")
            .default_size(270.0)
            .min_size(200.0)
            .show_collapsible(ui, &mut open, |ui| {
                let available = ui.max_rect();
                egui::ScrollArea::vertical().id_salt("sources-scroll").show(ui, |ui| {
                    ui.add_space(6.0);
                    ui.label(RichText::new("Sources").strong().size(16.0));
                    ui.add_space(6.0);
                    self.live_entry(ui, actions);
                    ui.add_space(8.0);
                    self.servers_section(ui, actions);
                    ui.add_space(8.0);
                    ui.label(RichText::new("Hardware catalog").weak());
                    for entry in &self.catalog {
                        let selected = self.selected == SourceKey::Catalog(entry.id.clone());
                        ui.horizontal(|ui| {
                            topology_view::badge(ui, "catalog", palette::source_badge("catalog"));
                            let r = ui
                                .add(egui::Button::selectable(selected, entry.name.as_str()).wrap())
                                .on_hover_text(format!(
                                    "{}\ncatalog id: {}\nDocumented by the vendor, not measured.",
                                    entry.summary, entry.id
                                ));
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Catalog(entry.id.clone())));
                            }
                        });
                    }
                    ui.add_space(8.0);
                    ui.label(RichText::new("Imported").weak());
                    if self.imported.is_empty() {
                        ui.label(RichText::new("nothing imported yet").italics().weak());
                    }
                    for (i, t) in self.imported.iter().enumerate() {
                        let selected = self.selected == SourceKey::Imported(i);
                        ui.horizontal(|ui| {
                            topology_view::badge(ui, "imported", palette::source_badge("imported"));
                            let r = ui
                                .add(
                                    egui::Button::selectable(selected, topology_view::title(t))
                                        .wrap(),
                                )
                                .on_hover_text(t.source.label());
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Imported(i)));
                            }
                        });
                    }
                    ui.add_space(8.0);
                    ui.label(RichText::new("Reports").weak());
                    if self.reports.is_empty() {
                        ui.label(RichText::new("no report opened").italics().weak());
                    }
                    for (i, e) in self.reports.iter().enumerate() {
                        let selected = self.selected == SourceKey::Report(i);
                        let origin = report_view::origin(&e.report, e.example);
                        ui.horizontal(|ui| {
                            topology_view::badge(
                                ui,
                                origin.badge,
                                palette::source_badge(origin.badge),
                            )
                            .on_hover_text(&origin.text);
                            let r = ui
                                .add(
                                    egui::Button::selectable(
                                        selected,
                                        report_view::list_name(&e.report),
                                    )
                                    .wrap(),
                                )
                                .on_hover_text(format!(
                                    "{}\n{}",
                                    origin.text,
                                    report_view::provenance(&e.report)
                                ));
                            if r.clicked() {
                                actions.push(Action::Select(SourceKey::Report(i)));
                            }
                            // Stays open while the name is typed (a menu closes on any click).
                            egui::Popup::context_menu(&r)
                                .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside)
                                .show(|ui| rename_menu(ui, i, &e.report, actions));
                        });
                    }
                    ui.add_space(10.0);
                    let open_report = ui.add_enabled(
                        !self.dialog_open,
                        egui::Button::new("Open report…"),
                    );
                    if open_report
                        .on_hover_text("Open report.json files written by `scalescope --bench`")
                        .clicked()
                    {
                        actions.push(Action::OpenReportDialog);
                    }
                    let open = ui.add_enabled(
                        !self.dialog_open,
                        egui::Button::new("Open nvidia-smi output…"),
                    );
                    if open
                        .on_hover_text(
                            "Import the text of `nvidia-smi topo -m` (and optionally `topo -p2p r|w|n|a`) \
                             captured on any machine",
                        )
                        .clicked()
                    {
                        actions.push(Action::OpenDialog);
                    }
                    ui.label(
                        RichText::new("or drop report .json or nvidia-smi text files onto this window")
                            .size(11.5)
                            .weak(),
                    );
                });
                PanelFit {
                    panel: "sources",
                    available,
                    used: ui.min_rect(),
                }
            });
        self.settings.sidebar_open = open;
        if let Some(fit) = fit {
            self.fits.push(fit.inner);
        }
    }

    /// Servers: each with its state, and "Connect to server…" with the recent hosts.
    fn servers_section(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.label(RichText::new("Servers (over ssh)").weak());
        for (i, s) in self.servers.iter().enumerate() {
            let selected = self.selected == SourceKey::Server(i);
            match &s.state {
                ServerState::Connecting => {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        ui.label(format!("{} (connecting…)", s.host));
                    });
                }
                ServerState::Ready {
                    topology,
                    suite_running,
                    ..
                } => {
                    ui.horizontal(|ui| {
                        topology_view::badge(ui, "server", palette::source_badge("live"));
                        let r = ui
                            .add(
                                egui::Button::selectable(
                                    selected,
                                    format!("{} · {} GPUs", s.host, topology.gpus.len()),
                                )
                                .wrap(),
                            )
                            .on_hover_text(topology.source.label());
                        if r.clicked() {
                            actions.push(Action::Select(SourceKey::Server(i)));
                        }
                    });
                    ui.horizontal(|ui| {
                        ui.add_space(12.0);
                        if *suite_running {
                            ui.spinner();
                            ui.label(RichText::new("quick suite running…").weak());
                        } else if ui
                            .small_button("▶ Quick suite → report")
                            .on_hover_text(
                                "Run --bench --quick there; the report appears under Reports (and in Compare)",
                            )
                            .clicked()
                        {
                            actions.push(Action::RunSuiteOn(i));
                        }
                        if ui.small_button("Reconnect").clicked() {
                            actions.push(Action::Connect(s.host.clone()));
                        }
                    });
                }
                ServerState::Failed {
                    reason,
                    not_installed,
                } => {
                    ui.label(RichText::new(&s.host).strong());
                    ui.colored_label(palette::P2P_REFUSED, reason);
                    ui.horizontal(|ui| {
                        if *not_installed
                            && ui
                                .button("Copy scalescope there")
                                .on_hover_text(
                                    "Copies this binary (same OS and architecture) to ~/.cache/scalescope on the server",
                                )
                                .clicked()
                        {
                            actions.push(Action::InstallOn(i));
                        }
                        if ui.small_button("Retry").clicked() {
                            actions.push(Action::Connect(s.host.clone()));
                        }
                    });
                }
            }
        }
        ui.horizontal(|ui| {
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.server_field)
                    .hint_text("user@host")
                    .desired_width(130.0),
            );
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let ok = !self.server_field.trim().is_empty();
            let clicked = ui
                .add_enabled(ok, egui::Button::new("Connect to server…"))
                .on_hover_text(
                    "Runs `scalescope agent` there through your ssh (keys, ssh-agent, ~/.ssh/config)",
                )
                .clicked();
            if ok && (clicked || enter) {
                actions.push(Action::Connect(self.server_field.trim().to_string()));
            }
        });
        let recent: Vec<&String> = self
            .settings
            .recent_hosts
            .iter()
            .filter(|h| !self.servers.iter().any(|s| &s.host == *h))
            .collect();
        if !recent.is_empty() {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new("recent:").size(11.5).weak());
                for h in recent {
                    if ui.small_button(h.as_str()).clicked() {
                        actions.push(Action::Connect(h.clone()));
                    }
                }
            });
        }
    }

    fn live_entry(&self, ui: &mut Ui, actions: &mut Vec<Action>) {
        match &self.live {
            LiveState::Loading => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("This machine (reading NVML…)");
                });
            }
            LiveState::Ready(t) => {
                let selected = self.selected == SourceKey::Live;
                ui.horizontal(|ui| {
                    let r = ui.add(egui::Button::selectable(selected, "This machine"));
                    topology_view::badge(ui, "measured here", palette::source_badge("live"));
                    if r.on_hover_text(t.source.label()).clicked() {
                        actions.push(Action::Select(SourceKey::Live));
                    }
                });
            }
            LiveState::Failed(reason) => {
                ui.horizontal(|ui| {
                    ui.add_enabled(false, egui::Button::selectable(false, "This machine"))
                        .on_disabled_hover_text(format!("Live data unavailable: {reason}"));
                    ui.label(RichText::new("unavailable").size(11.5).weak())
                        .on_hover_text(format!("Live data unavailable: {reason}"));
                });
            }
        }
    }

    fn central(&mut self, ui: &mut Ui, actions: &mut Vec<Action>) {
        ui.horizontal(|ui| {
            if ui
                .button("Save CSV…")
                .on_hover_text("Save this view's data as CSV")
                .clicked()
            {
                actions.push(Action::Save(SaveKind::Csv));
            }
            if ui
                .button("Save PNG…")
                .on_hover_text("Save this view as a PNG image")
                .clicked()
            {
                actions.push(Action::Save(SaveKind::Png));
            }
            if let Some(r) = self.current_report() {
                let p = report_view::provenance(r);
                // Cut short (full text on hover) rather than push the view wider.
                ui.add(egui::Label::new(RichText::new(&p).weak()).truncate())
                    .on_hover_text(p);
            }
        });
        ui.add_space(4.0);
        if self.settings.view == View::Compare {
            let refs: Vec<&Report> = self.reports.iter().map(|e| &e.report).collect();
            // Every tab's scroll area has its own id, so each keeps its own offset.
            egui::ScrollArea::both()
                .id_salt("compare-view")
                .auto_shrink([false, false])
                .show(ui, |ui| compare_view::show(ui, &refs, None));
            return;
        }
        if let SourceKey::Report(i) = self.selected
            && self.settings.view != View::Topology
            && let Some(e) = self.reports.get_mut(i)
        {
            let t = e.report.topology.clone();
            let view = self.settings.view;
            match view {
                View::Bandwidth => match &mut e.bandwidth {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "bandwidth"),
                },
                View::Collectives => match &mut e.collectives {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "collectives"),
                },
                _ => match &mut e.scaling {
                    Some(v) => {
                        v.set_this_machine(false);
                        v.ui(ui, &t)
                    }
                    None => no_section(ui, "scaling"),
                },
            }
            return;
        }
        // Measurement views keep running while another view or source is shown; they get a
        // copy of the topology so that they can hold their own state mutably.
        let topology = self.current_topology().cloned();
        // A server's machine is measured there, through its connection.
        let runner = self.current_runner();
        let this_machine = self.selected == SourceKey::Live || runner.is_some();
        match topology {
            Some(t) if self.settings.view == View::Bandwidth => {
                self.bandwidth.set_this_machine(this_machine);
                self.bandwidth.set_runner(runner);
                self.bandwidth.ui(ui, &t)
            }
            Some(t) if self.settings.view == View::Collectives => {
                self.collectives.set_this_machine(this_machine);
                self.collectives.set_runner(runner);
                self.collectives.ui(ui, &t)
            }
            Some(t) if self.settings.view == View::Scaling => {
                self.scaling.set_this_machine(this_machine);
                self.scaling.set_runner(runner);
                self.scaling.ui(ui, &t)
            }
            Some(t) => {
                // A report's health check shows as a panel on its topology.
                let health = self.current_report().and_then(|r| r.health.clone());
                // A report's topology wears the report's provenance, never this machine's.
                let shown_as = match self.selected {
                    SourceKey::Report(i) => self.reports.get(i).map(|e| {
                        let o = report_view::origin(&e.report, e.example);
                        topology_view::ShownAs {
                            badge: o.badge,
                            name: crate::report::summary::machine_title(&e.report),
                            text: o.text,
                        }
                    }),
                    _ => None,
                };
                // The view lays out to the visible width (the scroll area's inner width, less
                // its bars); only content wider than that scrolls. Its own id: every tab keeps
                // its own scroll offset.
                egui::ScrollArea::both()
                    .id_salt("topology-view")
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        topology_view::show_as(ui, &t, health.as_ref(), shown_as.as_ref());
                    });
            }
            None => {
                ui.centered_and_justified(|ui| {
                    if matches!(self.live, LiveState::Loading) {
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.label("Reading this machine through NVML…");
                        });
                    } else {
                        ui.label("Pick a source on the left, or drop nvidia-smi output here.");
                    }
                });
            }
        }
    }
}

/// The work of a Save: makes the file's bytes (on the save thread).
type SaveWork = Box<dyn FnOnce() -> Result<Vec<u8>, String> + Send>;

/// Saved PNGs use the dark theme, like `--bench`'s.
fn self_theme() -> egui::Theme {
    egui::Theme::Dark
}

/// What a worker sends after the user chose files to open.
fn open_msg(request: FileRequest, paths: Vec<PathBuf>) -> Msg {
    match request {
        FileRequest::OpenReport => Msg::Reports(read_reports(&paths)),
        _ => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            Msg::Imported(import::import_paths(&paths).map_err(|e| e.to_string()))
        }
    }
}

/// Why the path field shows when a dialog returned at once.
fn no_dialog_reason() -> String {
    "No file dialog opened: this desktop seems to have no file-dialog portal or zenity \
     (usual over X forwarding or VNC)."
        .into()
}

/// Makes a Save's bytes and writes them to `path`: where it went, or why not.
fn write_saved(path: &Path, work: SaveWork) -> Result<String, String> {
    let bytes = work()?;
    std::fs::write(path, bytes)
        .map(|_| path.display().to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// A typed path with a leading `~/` taken as the home folder.
fn expand_home(text: &str) -> PathBuf {
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(text),
    }
}

/// Reads reports, each error naming its file.
fn read_reports(paths: &[PathBuf]) -> Vec<Result<Report, String>> {
    paths
        .iter()
        .map(|p| crate::report::load_named(p).map_err(|e| e.to_string()))
        .collect()
}

/// Says that a report has no section for this view.
fn no_section(ui: &mut Ui, what: &str) {
    ui.label(
        RichText::new(format!(
            "This report has no {what} results (the stage was not run)."
        ))
        .weak(),
    );
}

/// A colored line with a message, optional details (collapsed) and a Dismiss button.
fn message_line(
    ui: &mut Ui,
    text: &str,
    details: Option<&str>,
    color: Color32,
    mut on_dismiss: impl FnMut(),
) {
    egui::Frame::new()
        .fill(color.gamma_multiply(0.22))
        .stroke(egui::Stroke::new(1.0, color))
        .corner_radius(CornerRadius::same(6))
        .inner_margin(egui::Margin::symmetric(10, 6))
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(RichText::new("!").color(color).strong().size(16.0));
                // Leave room for the Dismiss button on the right.
                let w = ui.available_width() - 90.0;
                ui.vertical(|ui| {
                    ui.set_width(w.max(100.0));
                    ui.add(egui::Label::new(RichText::new(text)).wrap());
                    if let Some(details) = details {
                        egui::CollapsingHeader::new(RichText::new("details").size(11.5))
                            .id_salt("banner-details")
                            .show(ui, |ui| {
                                ui.add(
                                    egui::Label::new(RichText::new(details).size(11.5).weak())
                                        .wrap(),
                                );
                            });
                    }
                });
                if ui.small_button("Dismiss").clicked() {
                    on_dismiss();
                }
            });
        });
}

/// Dims the window while files are dragged over it.
fn drop_overlay(ctx: &egui::Context) {
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
        "Drop nvidia-smi topo output to import it",
        egui::FontId::proportional(22.0),
        Color32::WHITE,
    );
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if let Ok(s) = serde_json::to_string(&self.settings) {
            storage.set_string(SETTINGS_KEY, s);
        }
    }
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

/// Which report a remembered machine name belongs to: its host (or label) and when it ran.
pub fn rename_key(r: &Report) -> String {
    format!(
        "{}|{}",
        r.machine.hostname.as_deref().unwrap_or(&r.machine.label),
        r.machine.created_at
    )
}

/// Right-click on a report in Sources: a name for its machine (kept between runs).
fn rename_menu(ui: &mut Ui, i: usize, r: &Report, actions: &mut Vec<Action>) {
    let id = egui::Id::unique(("rename-report", i));
    let mut text = ui.data_mut(|d| {
        d.get_temp::<String>(id)
            .unwrap_or_else(|| crate::report::summary::machine_name(r))
    });
    let label = ui.label("Machine name");
    let edit = ui.text_edit_singleline(&mut text).labelled_by(label.id);
    let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
    ui.data_mut(|d| d.insert_temp(id, text.clone()));
    ui.horizontal(|ui| {
        if ui.button("Rename").clicked() || enter {
            actions.push(Action::RenameReport(i, text.clone()));
            ui.data_mut(|d| d.remove::<String>(id));
            ui.close();
        }
        if r.machine.display_name.is_some() && ui.button("Name from its GPUs").clicked() {
            actions.push(Action::RenameReport(i, String::new()));
            ui.data_mut(|d| d.remove::<String>(id));
            ui.close();
        }
    });
}
