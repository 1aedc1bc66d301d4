//! The app's commands: what the File and View menus, the Sources panel's buttons and the
//! keyboard do, each with its label, its tooltip, its shortcut and the [`Action`] it pushes —
//! one place, so that a menu item and its key cannot drift apart (rerun's `UICommand` is the
//! pattern).

use eframe::egui::{Key, KeyboardShortcut, Modifiers};

use super::action::{Action, SaveKind};

/// A command the user can give from a menu, a button or the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// Open report.json files (Ctrl+O).
    OpenReport,
    /// Import `nvidia-smi` captures of one machine.
    OpenSmi,
    /// Open a traffic recording and replay it.
    OpenRecording,
    /// Open a fleet's folder (the Fleet tab).
    OpenFleet,
    /// Save the view's data as CSV (Ctrl+S).
    SaveCsv,
    /// Save the view as a PNG image.
    SavePng,
    /// Export the whole report as one HTML file.
    ExportHtml,
    /// Show or hide the Sources panel (Ctrl+B, as in editors with a side bar).
    ToggleSidebar,
    /// Close the window (Ctrl+Q).
    Quit,
}

impl Command {
    /// Every command with a shortcut, in the order the keys are read in a frame.
    pub const WITH_SHORTCUTS: [Command; 4] = [
        Command::Quit,
        Command::ToggleSidebar,
        Command::OpenReport,
        Command::SaveCsv,
    ];

    /// The File menu's Open group.
    pub const OPEN: [Command; 4] = [
        Command::OpenReport,
        Command::OpenSmi,
        Command::OpenRecording,
        Command::OpenFleet,
    ];

    /// The File menu's Save group.
    pub const SAVE: [Command; 3] = [Command::SaveCsv, Command::SavePng, Command::ExportHtml];

    /// The menu item's (or button's) label.
    pub fn label(self) -> &'static str {
        match self {
            Command::OpenReport => "Open report…",
            Command::OpenSmi => "Open nvidia-smi output…",
            Command::OpenRecording => "Open traffic recording…",
            Command::OpenFleet => "Open fleet…",
            Command::SaveCsv => "Save CSV…",
            Command::SavePng => "Save PNG…",
            Command::ExportHtml => "Export report.html…",
            Command::ToggleSidebar => "Sources panel",
            Command::Quit => "Quit",
        }
    }

    /// What it does, on hover (the Sources panel and Quit say it in their label).
    pub fn tooltip(self) -> Option<&'static str> {
        Some(match self {
            Command::OpenReport => "Open report.json files written by `scalescope --bench`",
            Command::OpenSmi => {
                "Import captures of one machine, as `--import` reads them: \
                 `nvidia-smi topo -m` (and `-mp`, `-p2p r|w|n|a`), `nvidia-smi -q` or `-q -x`, \
                 `nvidia-smi nvlink -s` / `-e`, in any mix"
            }
            Command::OpenRecording => {
                "Open a recording of live traffic (.jsonl, from `scalescope watch --record` or \
                 the Topology view's Save recording…) and replay it on its machine"
            }
            Command::OpenFleet => {
                "Open a fleet's folder (`scalescope fleet run`'s OUT, or any folder of node \
                 report.json files) and judge its nodes together, as `scalescope fleet report` \
                 does: the Fleet tab"
            }
            Command::SaveCsv => "Save this view's data as CSV",
            Command::SavePng => "Save this view as a PNG image",
            Command::ExportHtml => {
                "The whole report as one self-contained HTML file (tables and figures inline; \
                 opens offline in any browser, prints as a document)"
            }
            Command::ToggleSidebar | Command::Quit => return None,
        })
    }

    /// Its keyboard shortcut (Cmd on macOS, Ctrl elsewhere), if it has one.
    pub fn kb_shortcut(self) -> Option<KeyboardShortcut> {
        let key = match self {
            Command::OpenReport => Key::O,
            Command::SaveCsv => Key::S,
            Command::ToggleSidebar => Key::B,
            Command::Quit => Key::Q,
            _ => return None,
        };
        Some(KeyboardShortcut::new(Modifiers::COMMAND, key))
    }

    /// Whether it opens or saves a file: then it waits while a file dialog (or the path field
    /// standing in for one) is open.
    pub fn uses_a_file(self) -> bool {
        !matches!(self, Command::ToggleSidebar | Command::Quit)
    }

    /// What it asks the shell for.
    pub fn action(self) -> Action {
        match self {
            Command::OpenReport => Action::OpenReportDialog,
            Command::OpenSmi => Action::OpenDialog,
            Command::OpenRecording => Action::OpenRecordingDialog,
            Command::OpenFleet => Action::OpenFleetDialog,
            Command::SaveCsv => Action::Save(SaveKind::Csv),
            Command::SavePng => Action::Save(SaveKind::Png),
            Command::ExportHtml => Action::Save(SaveKind::Html),
            Command::ToggleSidebar => Action::ToggleSidebar,
            Command::Quit => Action::Quit,
        }
    }
}
