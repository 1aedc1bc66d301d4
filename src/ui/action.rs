//! What the user can ask of the app: the views (tabs), the sources, what a Save writes, and the
//! [`Action`]s that buttons, menu items and shortcuts push during layout and the shell carries
//! out after it. The vocabulary the shell and its parts share, so that no part needs another.

use serde::{Deserialize, Serialize};

/// The views, shown as tabs in the top bar. Each view lives in a file of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum View {
    /// How the GPUs and NICs are connected (`ui/views/topology/`).
    #[default]
    Topology,
    /// Copy bandwidth and latency (`ui/views/bandwidth.rs`).
    Bandwidth,
    /// NCCL and scalescope's own collectives (`ui/views/collectives.rs`).
    Collectives,
    /// Weak and strong scaling of workloads (`ui/views/scaling.rs`).
    Scaling,
    /// A burn-in's series, events and verdict (`ui/views/soak/`); its tab shows only where
    /// the report holds a soak or the source's GPUs can run one.
    Soak,
    /// Opened reports side by side (`ui/views/compare.rs`).
    Compare,
    /// A fleet's nodes judged together, as a heat table (`ui/views/fleet/`); its tab
    /// shows only while a fleet is open.
    Fleet,
}

impl View {
    /// Every view, in tab order.
    pub const ALL: &[View] = &[
        View::Topology,
        View::Bandwidth,
        View::Collectives,
        View::Scaling,
        View::Soak,
        View::Compare,
        View::Fleet,
    ];

    /// The tab's label.
    pub fn label(&self) -> &'static str {
        match self {
            View::Topology => "Topology",
            View::Bandwidth => "Bandwidth",
            View::Collectives => "Collectives",
            View::Scaling => "Scaling",
            View::Soak => "Soak",
            View::Compare => "Compare",
            View::Fleet => "Fleet",
        }
    }
}

/// Which source is selected in the side panel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceKey {
    /// This machine, read through NVML.
    Live,
    /// A catalog entry, by id.
    Catalog(String),
    /// The n-th imported machine.
    Imported(usize),
    /// The n-th opened (or bundled) report.
    Report(usize),
    /// The n-th server connected to (`--remote`, "Connect to server…").
    Server(usize),
}

/// What a Save button saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveKind {
    Csv,
    Png,
    /// The whole report as one self-contained HTML file (any view).
    Html,
}

/// Something the user asked for during layout, handled after it.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Show this source.
    Select(SourceKey),
    /// Give the n-th report's machine this name (empty: back to the name from its GPUs).
    RenameReport(usize, String),
    /// Open the file dialog to import `nvidia-smi` captures.
    OpenDialog,
    /// Open the file dialog to open reports (`report.json`).
    OpenReportDialog,
    /// Open the folder dialog to open a fleet (`fleet run`'s folder, or a folder of reports).
    OpenFleetDialog,
    /// Open a fleet node's report (its report.json, as Open report does) and show it.
    OpenFleetNode(std::path::PathBuf),
    /// Close the open fleet.
    CloseFleet,
    /// Open the file dialog to open traffic recordings (`scalescope watch --record`'s `.jsonl`).
    OpenRecordingDialog,
    /// Save the Live overlay's window as a recording (`.jsonl`; a save dialog on a worker
    /// thread).
    SaveRecording,
    /// Save the current view as CSV or PNG, or the source's report as HTML (a save dialog on a
    /// worker thread).
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
