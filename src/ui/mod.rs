//! The desktop app: an eframe [`App`] with one file per view, plus offscreen rendering of views
//! for reports and screenshots ([`snapshot`]).
//!
//! Views are pure drawing functions over model types; the App owns the state and runs NVML and
//! file dialogs on worker threads, never inside `ui()`.

mod app;
pub mod bandwidth_view;
pub mod collectives_view;
pub mod compare_view;
pub mod fonts;
pub mod health_view;
mod jobs;
mod layout;
pub mod palette;
mod plots;
pub mod report_view;
pub mod scaling_view;
pub mod snapshot;
pub mod topology_view;
mod widgets;

pub use app::{
    Action, App, FILE_DIALOG_ENV, FileDialogs, FileRequest, OPEN_REPORT, PanelFit, QUIT,
    ReportEntry, SAVE_CSV, SaveKind, ServerEntry, ServerState, Settings, SourceKey, Startup,
    TOGGLE_SIDEBAR, View,
};

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
