//! The views as the shell sees them: one [`Tab`] each, looped over for the tab bar and for the
//! view on screen (egui demo's `Demo` trait and `apps_iter_mut` are the pattern).
//!
//! A tab says which [`View`] it is (the key the settings keep, and the tab's label), whether
//! the selected source has it, and draws it from a [`ViewCtx`]. Most views keep their state on
//! each source ([`Views`]), so their tabs hold nothing and reach it through [`ViewSources`], the
//! seam `ui::sources::Sources` implements: the selected source's report with the views' state
//! on it, or every opened report — one at a time, since the selected source can be one of
//! those reports. The Fleet view keeps its own state: [`FleetView`] is its tab.

use eframe::egui::{self, RichText, Ui};

use super::super::action::{Action, View};
use super::super::report_view;
use super::Views;
use super::compare::{self, CostSettings};
use super::fleet::FleetView;
use super::topology::{self, ShownAs};
use crate::report::Report;

/// One view as a tab of the top bar.
pub trait Tab {
    /// Which view this is: the key the settings keep and the tab's label ([`View::label`]).
    fn view(&self) -> View;

    /// Whether the tab shows for the selected source (every view but Soak and Fleet always).
    fn available(&self, _sources: &dyn ViewSources) -> bool {
        true
    }

    /// Draws the view into the central panel.
    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>);
}

/// What the views are handed of the sources. Implemented by `ui::sources::Sources`; views see
/// this and never the Sources panel.
pub trait ViewSources {
    /// The selected source's report and the views' state on it, if it is loaded.
    fn selected_source(&self) -> Option<(&Report, &Views)>;

    /// [`Self::selected_source`], to change.
    fn selected_source_mut(&mut self) -> Option<(&mut Report, &mut Views)>;

    /// The selected source when it is an opened (or bundled) report, and whether it is a
    /// bundled example.
    fn opened_report(&self) -> Option<(&Report, bool)>;

    /// Every opened report, the bundled examples first.
    fn opened_reports(&self) -> Vec<&Report>;

    /// True while this machine is being read.
    fn loading(&self) -> bool;
}

/// What a tab draws from: the sources, the Compare view's prices (kept in the settings), and
/// where buttons push their actions.
pub struct ViewCtx<'a> {
    /// The sources: the selected one, the opened reports.
    pub sources: &'a mut dyn ViewSources,
    /// The Compare view's Cost panel: prices per machine and the ranking's mode.
    pub cost: &'a mut CostSettings,
    /// Actions for the shell to carry out after layout.
    pub actions: &'a mut Vec<Action>,
}

/// Every tab, in [`View::ALL`]'s order.
#[derive(Default)]
pub struct Tabs {
    topology: TopologyTab,
    bandwidth: BandwidthTab,
    collectives: CollectivesTab,
    scaling: ScalingTab,
    soak: SoakTab,
    compare: CompareTab,
    /// The open fleet, if any (the Fleet tab).
    pub fleet: FleetView,
}

impl Tabs {
    /// Every tab, in tab order.
    pub fn iter(&self) -> [&dyn Tab; 7] {
        [
            &self.topology,
            &self.bandwidth,
            &self.collectives,
            &self.scaling,
            &self.soak,
            &self.compare,
            &self.fleet,
        ]
    }

    /// Every tab, in tab order, to draw.
    pub fn iter_mut(&mut self) -> [&mut dyn Tab; 7] {
        [
            &mut self.topology,
            &mut self.bandwidth,
            &mut self.collectives,
            &mut self.scaling,
            &mut self.soak,
            &mut self.compare,
            &mut self.fleet,
        ]
    }
}

/// The Topology view of the selected source, with a report's or an import's health check,
/// and the Live overlay's bar and traffic where the source can be watched or replayed.
#[derive(Default)]
struct TopologyTab;

impl Tab for TopologyTab {
    fn view(&self) -> View {
        View::Topology
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        // A report's topology wears the report's provenance, never this machine's.
        let shown_as = ctx.sources.opened_report().map(|(r, example)| {
            let o = report_view::origin(r, example);
            ShownAs {
                badge: o.badge,
                name: crate::report::summary::machine_title(r),
                text: o.text,
            }
        });
        let loading = ctx.sources.loading();
        let Some((r, views)) = ctx.sources.selected_source_mut() else {
            return placeholder(ui, loading);
        };
        // The view lays out to the visible width (the scroll area's inner width, less its
        // bars); only content wider than that scrolls. Its own id: every tab and every report
        // keeps its own scroll offset (another report opens at its top).
        let actions = &mut *ctx.actions;
        egui::ScrollArea::both()
            .id_salt(("topology-view", r.name()))
            .auto_shrink([false, false])
            .show(ui, |ui| {
                topology::show_report(ui, r, &mut views.live, shown_as, actions)
            });
    }
}

/// The Bandwidth view of the selected source.
#[derive(Default)]
struct BandwidthTab;

impl Tab for BandwidthTab {
    fn view(&self) -> View {
        View::Bandwidth
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        if let Some((report, views)) = measured(ui, ctx, "bandwidth", |r| r.bandwidth.is_some()) {
            views.bandwidth.ui(ui, report);
        }
    }
}

/// The Collectives view of the selected source.
#[derive(Default)]
struct CollectivesTab;

impl Tab for CollectivesTab {
    fn view(&self) -> View {
        View::Collectives
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        let has = |r: &Report| r.collectives.is_some();
        if let Some((report, views)) = measured(ui, ctx, "collectives", has) {
            views.collectives.ui(ui, report);
        }
    }
}

/// The Scaling view of the selected source.
#[derive(Default)]
struct ScalingTab;

impl Tab for ScalingTab {
    fn view(&self) -> View {
        View::Scaling
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        if let Some((report, views)) = measured(ui, ctx, "scaling", |r| r.scaling.is_some()) {
            views.scaling.ui(ui, report);
        }
    }
}

/// The selected source's report and views for a measurement view, or `None` once the panel
/// says why there is nothing to draw: no source loaded (the placeholder), or an opened report
/// without the view's section (`what`), which offers no run (its machine is not here).
fn measured<'a>(
    ui: &mut Ui,
    ctx: &'a mut ViewCtx<'_>,
    what: &str,
    has_section: impl Fn(&Report) -> bool,
) -> Option<(&'a mut Report, &'a mut Views)> {
    let of_report = ctx.sources.opened_report().is_some();
    let loading = ctx.sources.loading();
    let Some((report, views)) = ctx.sources.selected_source_mut() else {
        placeholder(ui, loading);
        return None;
    };
    if of_report && !has_section(report) {
        no_section(ui, what);
        return None;
    }
    Some((report, views))
}

/// The Soak view of the selected source; its tab only where the report holds a soak or the
/// source's GPUs can run one from here.
#[derive(Default)]
struct SoakTab;

impl Tab for SoakTab {
    fn view(&self) -> View {
        View::Soak
    }

    fn available(&self, sources: &dyn ViewSources) -> bool {
        sources
            .selected_source()
            .is_some_and(|(r, v)| v.has_soak_tab(r))
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        let loading = ctx.sources.loading();
        match ctx.sources.selected_source_mut() {
            Some((report, views)) => views.soak.ui(ui, report),
            None => placeholder(ui, loading),
        }
    }
}

/// The opened reports side by side, whatever source is selected.
#[derive(Default)]
struct CompareTab;

impl Tab for CompareTab {
    fn view(&self) -> View {
        View::Compare
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        let reports = ctx.sources.opened_reports();
        let cost = &mut *ctx.cost;
        // Every tab's scroll area has its own id, so each keeps its own offset.
        egui::ScrollArea::both()
            .id_salt("compare-view")
            .auto_shrink([false, false])
            .show(ui, |ui| compare::show(ui, &reports, None, cost));
    }
}

/// The open fleet; its tab only while a fleet is open.
impl Tab for FleetView {
    fn view(&self) -> View {
        View::Fleet
    }

    fn available(&self, _sources: &dyn ViewSources) -> bool {
        self.is_open()
    }

    fn ui(&mut self, ui: &mut Ui, ctx: &mut ViewCtx<'_>) {
        FleetView::ui(self, ui, ctx.actions);
    }
}

/// What the central panel says while no source is loaded (`loading`: this machine is being
/// read).
fn placeholder(ui: &mut Ui, loading: bool) {
    ui.centered_and_justified(|ui| {
        if loading {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Reading this machine through NVML…");
            });
        } else {
            ui.label("Pick a source on the left, or drop nvidia-smi output here.");
        }
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tabs_are_every_view_in_tab_order() {
        let tabs = Tabs::default();
        let views: Vec<View> = tabs.iter().iter().map(|t| t.view()).collect();
        assert_eq!(views, View::ALL);
    }
}
