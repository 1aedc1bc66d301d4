//! The desktop app: an eframe [`App`] with one place per view ([`views`], which the shell loops
//! over as tabs), plus offscreen rendering of views for reports and screenshots ([`snapshot`]).
//!
//! The App is a shell (`app.rs`) routing actions to the parts that own their state: the sources
//! and the report each holds (`sources.rs`, `servers.rs`, `machine.rs`), files in and out
//! (`files.rs`, `saving.rs`). Views draw a report's sections; NVML, ssh and file dialogs run on
//! worker threads, never inside `ui()`.

mod action;
mod app;
mod command;
mod files;
pub mod fonts;
pub mod job_panel;
mod jobs;
mod layout;
mod machine;
mod menus;
mod notices;
pub mod palette;
mod plots;
pub mod report_view;
mod saving;
mod servers;
pub mod snapshot;
mod sources;
pub mod views;
mod widgets;

pub use action::{Action, SaveKind, SourceKey, View};
pub use app::{App, PanelFit, Settings, Startup};
pub use command::Command;
pub use files::{FILE_DIALOG_ENV, FileDialogs, FileRequest, FleetRead, read_fleet};
pub use machine::Machine;
pub use servers::{ServerEntry, ServerState};
pub use sources::ReportEntry;
pub use views::Views;

/// Opens the scalescope window and runs until it is closed.
pub fn run_app(startup: Startup) -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("scalescope")
            .with_app_id("scalescope")
            .with_inner_size([1400.0, 900.0])
            .with_min_inner_size([800.0, 500.0])
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "scalescope",
        options,
        Box::new(|cc| Ok(Box::new(App::new(cc, startup)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the scalescope window: {e}"))
}
