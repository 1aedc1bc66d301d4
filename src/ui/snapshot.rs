//! Offscreen rendering of views to PNG, for reports and screenshots.
//!
//! Uses egui_kittest's [`Harness`] with its wgpu renderer, which works without a window (Mesa's
//! llvmpipe or lavapipe is enough). Creating the renderer panics when there is no GL or Vulkan
//! adapter at all; that panic is caught and returned as an error.

use std::panic::{AssertUnwindSafe, catch_unwind};

use anyhow::{Context as _, anyhow};
use eframe::egui;
use egui_kittest::Harness;

use super::views;
use crate::model::Topology;

/// Why offscreen rendering cannot work in this process, once a render found no adapter.
static NO_RENDERER: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Renders the Topology view of `topology` (dark theme) at `width` × `height` points and returns
/// PNG bytes. Content taller than `height` is cut off; [`topology_height`] gives a height that
/// fits.
pub fn render_topology_png(
    topology: &Topology,
    width: u32,
    height: u32,
) -> anyhow::Result<Vec<u8>> {
    let topology = topology.clone();
    render_png(width, height, egui::Theme::Dark, move |ui| {
        views::topology::show(ui, &topology);
    })
}

/// The height in points at which the Topology view of `topology` fits at `width` points.
pub fn topology_height(topology: &Topology, width: u32) -> anyhow::Result<u32> {
    let topology = topology.clone();
    fit_height(width, move |ui| views::topology::show(ui, &topology))
}

/// The height in points at which what `draw` draws inside a central panel fits at `width`
/// points (laid out only, nothing rendered).
pub fn fit_height(width: u32, mut draw: impl FnMut(&mut egui::Ui)) -> anyhow::Result<u32> {
    let measured = catch_unwind(AssertUnwindSafe(move || {
        let mut used = 0.0_f32;
        let mut fonts_ready = false;
        let mut harness = Harness::builder()
            .with_size(egui::vec2(width as f32, 20_000.0))
            .build_ui(|ui| {
                // The fonts that render_png draws with (arrows and other glyphs included).
                if !fonts_ready {
                    super::fonts::install(ui.ctx());
                    fonts_ready = true;
                }
                egui::CentralPanel::default().show(ui, |ui| {
                    used = ui.scope(|ui| draw(ui)).response.rect.height();
                });
            });
        harness.run_ok();
        drop(harness);
        used
    }))
    .map_err(|_| anyhow!("laying out the view failed"))?;
    // The central panel's margins come on top of its contents.
    Ok(measured.ceil() as u32 + 24)
}

/// Renders `draw` inside a central panel at `width` × `height` points and encodes it as PNG.
pub fn render_png(
    width: u32,
    height: u32,
    theme: egui::Theme,
    mut draw: impl FnMut(&mut egui::Ui) + 'static,
) -> anyhow::Result<Vec<u8>> {
    // wgpu's GL backend limits textures to 8192 pixels a side.
    if width == 0 || height == 0 || width > 8192 || height > 8192 {
        return Err(anyhow!(
            "cannot render an image of {width}×{height} pixels (1 to 8192 a side)"
        ));
    }
    let mut fonts_ready = false;
    if let Some(why) = NO_RENDERER.get() {
        return Err(anyhow!("offscreen rendering unavailable: {why}"));
    }
    // egui_kittest panics when no GL/Vulkan adapter exists; keep that panic's message and
    // backtrace off the terminal (it becomes the error below, and one line for the user).
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let rendered = catch_unwind(AssertUnwindSafe(move || {
        let mut harness = Harness::builder()
            .with_size(egui::vec2(width as f32, height as f32))
            .with_theme(theme)
            .wgpu()
            .build_ui(move |ui| {
                if !fonts_ready {
                    super::fonts::install(ui.ctx());
                    fonts_ready = true;
                }
                // The whole image in the page's color: no dark frame around a light page.
                ui.ctx()
                    .layer_painter(egui::LayerId::background())
                    .rect_filled(egui::Rect::EVERYTHING, 0.0, ui.visuals().panel_fill);
                egui::CentralPanel::default().show(ui, |ui| draw(ui));
            });
        harness.run_ok();
        harness.render()
    }));
    std::panic::set_hook(previous_hook);
    let image = match rendered {
        Ok(Ok(image)) => image,
        Ok(Err(e)) => return Err(anyhow!("rendering failed: {e}")),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_else(|| "unknown reason".to_string());
            // Without an adapter every later render fails the same way: remember it.
            if why.contains("adapter") {
                let _ = NO_RENDERER.set(why.clone());
            }
            return Err(anyhow!(
                "offscreen rendering failed: {why}; without a GL or Vulkan adapter install Mesa \
                 (libgl1-mesa-dri or mesa-vulkan-drivers) or run on a machine with a GPU driver"
            ));
        }
    };
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .context("cannot encode the rendered view as PNG")?;
    Ok(bytes)
}
