//! The Live overlay drawn: what the Topology view's machine drawing, connectivity matrix and
//! GPU table show of a [`LiveFrame`] — GB/s on each NVLink bond (width and colour by its share of
//! the line rate), PCIe in/out on each GPU, NVLink totals where the peers are NVSwitch ports,
//! hover cards with a sparkline of the window in both directions and where each figure came
//! from, and the per-GPU table (SM activity, memory bandwidth, power, clocks, clock event
//! reasons, processes). Pure drawing: a frame in, shapes out.
//!
//! A reading not taken is "—", never 0.

use eframe::egui::{
    self, Align2, Color32, CornerRadius, FontId, Rect, RichText, Sense, Stroke, Ui, pos2, vec2,
};

use crate::model::decimate::MinMaxLine;
use crate::model::traffic::{
    GpuTraffic, LinkPeer, PairTraffic, ReadingSource, TrafficRecording, TrafficSample, pair_traffic,
};
use crate::model::{GpuProcess, Topology};
use crate::ui::palette;

/// The first series of a sparkline (a→b, in) and the second (b→a, out): Okabe–Ito sky blue and
/// orange.
const SERIES_A: Color32 = Color32::from_rgb(0x56, 0xb4, 0xe9);
const SERIES_B: Color32 = Color32::from_rgb(0xe6, 0x9f, 0x00);
/// Processes listed in a GPU's row (the rest on hover).
const PROCESSES_SHOWN: usize = 3;
/// A sparkline's size.
const SPARK: egui::Vec2 = vec2(300.0, 70.0);

/// GB/s from bytes per second: `312`, `48.7`, `0.42`; "—" when not read.
pub fn gbps(bytes_per_s: Option<f64>) -> String {
    match bytes_per_s.map(|b| b / 1e9) {
        None => "—".into(),
        Some(v) if v >= 99.95 => format!("{v:.0}"),
        Some(v) if v >= 9.995 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// A share of the line rate in per cent (`69 %`); "—" without one.
pub fn share_text(share: Option<f64>) -> String {
    share.map_or("—".into(), |s| format!("{:.0} %", s * 100.0))
}

/// An optional figure with its unit, or "—".
fn figure(v: Option<f64>, decimals: usize, unit: &str) -> String {
    v.map_or("—".into(), |v| format!("{v:.decimals$} {unit}"))
}

/// Where a reading came from, in a sentence's words.
pub fn source_words(source: Option<ReadingSource>) -> &'static str {
    match source {
        None => "not read",
        Some(ReadingSource::Gpm) => {
            "GPU Performance Monitoring (GPM): the counters over the whole interval"
        }
        Some(ReadingSource::NvlinkCounter) => {
            "the NVLink data counters, differenced over the interval"
        }
        Some(ReadingSource::PcieWindow) => {
            "the driver's last 20 ms window, not the whole interval (it misses bursts and reads low)"
        }
        Some(ReadingSource::Utilization) => {
            "the share of time a kernel ran (utilization), not GPM's SM activity"
        }
        Some(ReadingSource::EnergyCounter) => "the energy counter's step over the interval",
        Some(ReadingSource::PowerReading) => "the driver's averaged power reading",
    }
}

/// The colour of a share of the line rate: grey when idle, through orange to vermillion at
/// the line rate (colour-blind safe; the width says it too). `None`: the neutral grey.
pub fn heat(share: Option<f64>) -> Color32 {
    let idle = Color32::from_rgb(0x8a, 0x8f, 0x98);
    let mid = Color32::from_rgb(0xe6, 0x9f, 0x00);
    let full = Color32::from_rgb(0xd5, 0x5e, 0x00);
    let Some(s) = share else {
        return palette::UNKNOWN;
    };
    let s = s.clamp(0.0, 1.0) as f32;
    let lerp = |a: Color32, b: Color32, t: f32| {
        let m = |x: u8, y: u8| (x as f32 + (y as f32 - x as f32) * t).round() as u8;
        Color32::from_rgb(m(a.r(), b.r()), m(a.g(), b.g()), m(a.b(), b.b()))
    };
    if s < 0.5 {
        lerp(idle, mid, s / 0.5)
    } else {
        lerp(mid, full, (s - 0.5) / 0.5)
    }
}

/// The stroke of a line carrying `share` of its line rate: 2 pt idle to 10 pt at the rate.
pub fn load_stroke(share: Option<f64>) -> Stroke {
    let w = 2.0 + 8.0 * share.unwrap_or(0.0).clamp(0.0, 1.0) as f32;
    Stroke::new(w, heat(share))
}

/// GPU `g`'s NVLink line rate per direction, in bytes per second: its links' count × their
/// speed, else the rate of a pair it has with every link (through a switch).
fn gpu_nvlink_rate(topology: &Topology, g: usize) -> Option<f64> {
    let gpu = topology.gpu(g)?;
    match (gpu.nvlinks_active, gpu.nvlink_gbps_per_link) {
        (Some(n), Some(r)) if n > 0 => Some(f64::from(n) * r * 1e9),
        _ => None,
    }
}

/// The busier of two directions' shares of `rate`.
fn busier_share(a: Option<f64>, b: Option<f64>, rate: Option<f64>) -> Option<f64> {
    let rate = rate.filter(|r| *r > 0.0)?;
    let busiest = match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }?;
    Some(busiest / rate)
}

// ---------------------------------------------------------------------------------------------
// Per GPU

/// Whether GPU `g`'s NVLinks lead to switch ports (or places unknown): its pair traffic is not
/// attributable, only its totals.
pub fn through_switch(traffic: &GpuTraffic) -> bool {
    traffic
        .nvlinks
        .iter()
        .any(|l| matches!(l.peer, LinkPeer::Switch | LinkPeer::Unknown))
}

/// GPU `g`'s PCIe data in and out (bytes per second): GPM's packet bytes less their headers
/// and framing ([`crate::model::traffic::PcieFraming`]).
fn pcie_data(t: Option<&crate::model::traffic::GpuTraffic>) -> (Option<f64>, Option<f64>) {
    t.map_or((None, None), |t| t.pcie_data_bytes_per_s())
}

/// The line a GPU box shows while live: `PCIe ↓50.1 ↑0.20 GB/s` (data in, out).
pub fn gpu_box_text(frame: &LiveFrame, g: usize) -> String {
    if !frame.watched(g) {
        return "not watched".into();
    }
    let (rx, tx) = pcie_data(frame.gpu(g));
    format!("PCIe ↓{} ↑{} GB/s", gbps(rx), gbps(tx))
}

/// GPU `g`'s PCIe share (busier direction) of its line rate.
pub fn pcie_share(frame: &LiveFrame, g: usize) -> Option<f64> {
    let t = frame.gpu(g)?;
    let rate = crate::model::traffic::pcie_line_rate_bytes_per_s(&frame.window.header.topology, g);
    busier_share(t.pcie_rx_bytes_per_s, t.pcie_tx_bytes_per_s, rate)
}

/// GPU `g`'s NVLink totals (in, out) and the busier direction's share of its NVLink rate.
pub fn nvlink_totals(frame: &LiveFrame, g: usize) -> (Option<f64>, Option<f64>, Option<f64>) {
    let Some(t) = frame.gpu(g) else {
        return (None, None, None);
    };
    let (rx, tx) = (t.nvlink_rx_bytes_per_s(), t.nvlink_tx_bytes_per_s());
    let rate = gpu_nvlink_rate(&frame.window.header.topology, g);
    (rx, tx, busier_share(rx, tx, rate))
}

/// The label beside a GPU's drop to the NVSwitch fabric: its NVLink in and out.
pub fn fabric_text(frame: &LiveFrame, g: usize) -> String {
    let (rx, tx, _) = nvlink_totals(frame, g);
    format!("NVLink ↓{} ↑{}", gbps(rx), gbps(tx))
}

/// The live part of a GPU's hover card: PCIe and NVLink in/out with their sources, a note where
/// the peers are switch ports, and sparklines of the window.
pub fn gpu_hover(ui: &mut Ui, frame: &LiveFrame, g: usize) {
    ui.separator();
    ui.label(RichText::new(format!("{} · {}", frame.feed_word(), sample_time(frame))).strong());
    if !frame.watched(g) {
        ui.label(RichText::new("This GPU is not watched.").weak());
        return;
    }
    let t = frame.gpu(g);
    let topo = &frame.window.header.topology;
    let pcie_rate = crate::model::traffic::pcie_line_rate_bytes_per_s(topo, g);
    let (rx_data, tx_data) = pcie_data(t);
    ui.label(format!(
        "PCIe data in {} GB/s · out {} GB/s",
        gbps(rx_data),
        gbps(tx_data),
    ));
    ui.label(format!(
        "on the link in {} GB/s · out {} GB/s · {} of {} GB/s per direction",
        gbps(t.and_then(|t| t.pcie_rx_bytes_per_s)),
        gbps(t.and_then(|t| t.pcie_tx_bytes_per_s)),
        share_text(pcie_share(frame, g)),
        gbps(pcie_rate)
    ));
    let pcie_source = t.and_then(|t| t.pcie_source);
    ui.label(RichText::new(format!("source: {}", source_words(pcie_source))).weak());
    if pcie_source == Some(ReadingSource::Gpm) {
        ui.label(RichText::new(crate::model::traffic::PcieFraming::WORDS).weak());
    }
    sparkline(ui, frame, |s| pcie_data(s.gpu(g)), ("PCIe in", "PCIe out"));
    let has_links = t.is_some_and(|t| !t.nvlinks.is_empty());
    if has_links {
        let (rx, tx, share) = nvlink_totals(frame, g);
        ui.add_space(4.0);
        ui.label(format!(
            "NVLink in {} GB/s · out {} GB/s · {} of its links' rate",
            gbps(rx),
            gbps(tx),
            share_text(share)
        ));
        ui.label(
            RichText::new(format!(
                "source: {}",
                source_words(t.and_then(|t| t.nvlink_source))
            ))
            .weak(),
        );
        if t.is_some_and(through_switch) {
            ui.label(
                RichText::new(
                    "Its NVLinks lead to NVSwitch ports: the switch routes the traffic to any \
                     GPU, so it cannot be given per GPU pair; these are the GPU's totals.",
                )
                .italics(),
            );
        }
        sparkline(
            ui,
            frame,
            |s| {
                let t = s.gpu(g);
                (
                    t.and_then(|t| t.nvlink_rx_bytes_per_s()),
                    t.and_then(|t| t.nvlink_tx_bytes_per_s()),
                )
            },
            ("NVLink in", "NVLink out"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Per pair

/// The pill on a live NVLink bond: `312 GB/s · 69 %` (the busier direction).
pub fn pair_text(frame: &LiveFrame, a: usize, b: usize) -> String {
    match frame.pair(a, b) {
        Some(p) => format!("{} GB/s · {}", gbps(p.busiest()), share_text(p.share())),
        None => "— GB/s".into(),
    }
}

/// The share of the line rate the pair's busier direction carries.
pub fn pair_share(frame: &LiveFrame, a: usize, b: usize) -> Option<f64> {
    frame.pair(a, b).and_then(|p| p.share())
}

/// The hover card of a directly joined pair: both directions, the line rate, per-link figures,
/// where they came from, and a sparkline of the window.
pub fn pair_hover(ui: &mut Ui, frame: &LiveFrame, a: usize, b: usize) {
    let (a, b) = (a.min(b), a.max(b));
    ui.label(
        RichText::new(format!(
            "GPU{a} ⇄ GPU{b} NVLink · {} · {}",
            frame.feed_word(),
            sample_time(frame)
        ))
        .strong(),
    );
    let p = frame.pair(a, b);
    ui.label(format!(
        "GPU{a} → GPU{b}: {} GB/s",
        gbps(p.and_then(|p| p.a_to_b))
    ));
    ui.label(format!(
        "GPU{b} → GPU{a}: {} GB/s",
        gbps(p.and_then(|p| p.b_to_a))
    ));
    ui.label(format!(
        "Busier direction: {} of the line rate ({} GB/s per direction)",
        share_text(p.and_then(|p| p.share())),
        gbps(p.and_then(|p| p.line_rate_bytes_per_s))
    ));
    if let Some(t) = frame.gpu(a) {
        let links: Vec<String> = t
            .nvlinks
            .iter()
            .filter(|l| l.peer == LinkPeer::Gpu(b))
            .map(|l| format!("{}: {}", l.link, gbps(l.tx_bytes_per_s)))
            .collect();
        if !links.is_empty() {
            ui.add(
                egui::Label::new(
                    RichText::new(format!(
                        "GPU{a}'s links to GPU{b}, sent GB/s: {}",
                        links.join("  ")
                    ))
                    .size(11.5)
                    .weak(),
                )
                .wrap(),
            );
        }
    }
    let source = frame.gpu(a).and_then(|t| t.nvlink_source);
    ui.label(
        RichText::new(format!(
            "source: {} (a GPU's sent figure, else its peer's received)",
            source_words(source)
        ))
        .weak(),
    );
    let topo = &frame.window.header.topology;
    sparkline(
        ui,
        frame,
        |s| {
            pair_traffic(topo, s)
                .into_iter()
                .find(|p| p.a == a && p.b == b)
                .map_or((None, None), |p| (p.a_to_b, p.b_to_a))
        },
        (&format!("GPU{a} → GPU{b}"), &format!("GPU{b} → GPU{a}")),
    );
}

/// A matrix cell's text for a pair: `312 69%`; `None` where the pair has no direct NVLink
/// traffic (PCIe pairs, pairs through a switch).
pub fn cell_text(frame: &LiveFrame, a: usize, b: usize) -> Option<String> {
    let p = frame.pair(a, b)?;
    Some(match (p.busiest(), p.share()) {
        (Some(v), Some(s)) => format!("{} {:.0}%", gbps(Some(v)), s * 100.0),
        (v, _) => gbps(v),
    })
}

/// What a matrix cell of a pair without attributable traffic says on hover while live.
pub fn cell_note(frame: &LiveFrame, a: usize, b: usize) -> Option<String> {
    let through = [a, b]
        .iter()
        .any(|&g| frame.gpu(g).is_some_and(through_switch));
    through.then(|| {
        format!(
            "Live: GPU{a} and GPU{b} reach each other through NVSwitch ports, whose traffic goes \
             to any GPU: it cannot be given per pair (each GPU box shows its NVLink totals)."
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Sparklines

/// When the sample drawn was taken: `t = 20 s`.
fn sample_time(frame: &LiveFrame) -> String {
    frame
        .sample()
        .map_or("no sample yet".into(), |s| format!("t = {:.1} s", s.t_s))
}

/// A sparkline of the window up to the sample drawn: two series (`pick` gives both for a
/// sample), gaps where a reading is missing or samples were left out, min and max kept per
/// pixel column where there are more samples than pixels.
pub fn sparkline(
    ui: &mut Ui,
    frame: &LiveFrame,
    pick: impl Fn(&TrafficSample) -> (Option<f64>, Option<f64>),
    names: (&str, &str),
) {
    let history = frame.history();
    let values: Vec<(f64, f64, Option<f64>, Option<f64>)> = history
        .iter()
        .map(|s| {
            let (a, b) = pick(s);
            (s.t_s, s.interval_s, a, b)
        })
        .collect();
    let top = values
        .iter()
        .flat_map(|v| [v.2, v.3])
        .flatten()
        .fold(0.0_f64, f64::max);
    let (rect, _) = ui.allocate_exact_size(SPARK + vec2(0.0, 14.0), Sense::hover());
    let plot = Rect::from_min_size(rect.min + vec2(0.0, 14.0), SPARK);
    let painter = ui.painter_at(rect.expand(1.0));
    let visuals = ui.visuals();
    painter.rect_filled(plot, CornerRadius::same(3), visuals.extreme_bg_color);
    let weak = visuals.weak_text_color();
    let font = FontId::proportional(11.0);
    let (Some(first), Some(last)) = (values.first(), values.last()) else {
        painter.text(
            plot.center(),
            Align2::CENTER_CENTER,
            "no samples yet",
            font,
            weak,
        );
        return;
    };
    let t0 = (last.0 - WINDOW_S).max(first.0 - first.1);
    let span = (last.0 - t0).max(1e-9);
    painter.text(
        rect.min,
        Align2::LEFT_TOP,
        format!("up to {} GB/s", gbps(Some(top))),
        font.clone(),
        weak,
    );
    painter.text(
        pos2(rect.max.x, rect.min.y),
        Align2::RIGHT_TOP,
        format!("last {}", minutes(last.0 - t0)),
        font.clone(),
        weak,
    );
    let scale = if top > 0.0 { top } else { 1.0 };
    let x_of = |t: f64| plot.min.x + ((t - t0) / span) as f32 * plot.width();
    let y_of = |v: f64| plot.max.y - 3.0 - (v / scale) as f32 * (plot.height() - 6.0);
    for (k, color) in [(0, SERIES_A), (1, SERIES_B)] {
        let mut line = MinMaxLine::default();
        let mut prev_t: Option<f64> = None;
        for &(t, interval, a, b) in &values {
            let v = if k == 0 { a } else { b };
            let gap = prev_t.is_some_and(|p| t - p > 1.5 * interval);
            prev_t = Some(t);
            if v.is_none() || gap {
                line.break_here();
            }
            if let Some(v) = v {
                line.reading(i64::from((x_of(t) - plot.min.x) as i32), t, v);
            }
        }
        // Each pixel column as a vertical stroke from its lowest to its highest value.
        let runs = line.finish().into_iter().map(|run| {
            let mut points = Vec::with_capacity(2 * run.len());
            for (px, e) in run {
                let x = plot.min.x + px as f32;
                points.push(pos2(x, y_of(e.low.1)));
                if e.high.1 > e.low.1 {
                    points.push(pos2(x, y_of(e.high.1)));
                }
            }
            points
        });
        for run in runs {
            match run.len() {
                0 => {}
                1 => {
                    painter.circle_filled(run[0], 1.5, color);
                }
                _ => {
                    painter.add(egui::Shape::line(run, Stroke::new(1.5, color)));
                }
            }
        }
    }
    sparkline_legend(ui, names);
}

/// The sparkline's two series named under it, each after a stroke of its colour.
fn sparkline_legend(ui: &mut Ui, names: (&str, &str)) {
    ui.horizontal(|ui| {
        for (name, color) in [(names.0, SERIES_A), (names.1, SERIES_B)] {
            let (r, _) = ui.allocate_exact_size(vec2(14.0, 10.0), Sense::hover());
            ui.painter()
                .line_segment([r.left_center(), r.right_center()], Stroke::new(2.0, color));
            ui.label(RichText::new(name).size(11.5));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// The table under the drawing

/// One row per watched GPU: PCIe and NVLink in/out, SM activity, memory bandwidth, power,
/// clocks, clock event reasons and processes; "—" where not read, each figure's source on
/// hover.
pub fn gpu_table(ui: &mut Ui, frame: &LiveFrame) {
    let label = match frame.kind {
        FeedKind::Replay => "replay",
        _ => "live",
    };
    ui.label(
        RichText::new(format!("Per GPU ({label}, {})", sample_time(frame)))
            .strong()
            .size(13.5),
    );
    let Some(sample) = frame.sample() else {
        ui.label(RichText::new("No sample yet.").weak());
        return;
    };
    egui::Grid::new("live-gpu-table")
        .striped(true)
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for h in GPU_TABLE_COLUMNS {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for &g in &frame.window.header.gpus {
                gpu_row(ui, g, sample.gpu(g));
                ui.end_row();
            }
        });
    let notes = &frame.window.header.notes;
    if !notes.is_empty() {
        for n in notes {
            ui.add(egui::Label::new(RichText::new(format!("• {n}")).size(11.5).weak()).wrap());
        }
    }
}

/// The per-GPU table's columns.
const GPU_TABLE_COLUMNS: [&str; 12] = [
    "GPU",
    "PCIe in",
    "PCIe out",
    "NVLink in",
    "NVLink out",
    "SM activity",
    "memory BW",
    "power",
    "SM clock",
    "mem clock",
    "clock events",
    "processes",
];

/// GPU `g`'s row of the per-GPU table, from its reading `t` (none: every cell "—").
fn gpu_row(ui: &mut Ui, g: usize, t: Option<&GpuTraffic>) {
    ui.label(format!("GPU{g}"));
    let cell = |ui: &mut Ui, text: String, source: Option<ReadingSource>| {
        ui.label(RichText::new(text).monospace())
            .on_hover_text(format!("source: {}", source_words(source)));
    };
    let pcie = t.and_then(|t| t.pcie_source);
    let (rx_data, tx_data) = pcie_data(t);
    cell(ui, figure(rx_data.map(|b| b / 1e9), 1, "GB/s"), pcie);
    cell(ui, figure(tx_data.map(|b| b / 1e9), 1, "GB/s"), pcie);
    let nv = t.and_then(|t| t.nvlink_source);
    let no_links = t.is_none_or(|t| t.nvlinks.is_empty());
    for v in [
        t.and_then(|t| t.nvlink_rx_bytes_per_s()),
        t.and_then(|t| t.nvlink_tx_bytes_per_s()),
    ] {
        if no_links {
            ui.label(RichText::new("—").monospace())
                .on_hover_text("No active NVLink read on this GPU");
        } else {
            cell(ui, figure(v.map(|b| b / 1e9), 1, "GB/s"), nv);
        }
    }
    let percent_and_power = [
        (
            t.and_then(|t| t.sm_activity_pct),
            "%",
            t.and_then(|t| t.sm_source),
        ),
        (
            t.and_then(|t| t.memory_bw_pct),
            "%",
            t.and_then(|t| t.memory_bw_source),
        ),
        (
            t.and_then(|t| t.power_w),
            "W",
            t.and_then(|t| t.power_source),
        ),
    ];
    for (v, unit, source) in percent_and_power {
        cell(ui, figure(v, 0, unit), source);
    }
    for v in [
        t.and_then(|t| t.sm_clock_mhz),
        t.and_then(|t| t.memory_clock_mhz),
    ] {
        ui.label(RichText::new(figure(v.map(f64::from), 0, "MHz")).monospace())
            .on_hover_text("NVML's current clock at the reading");
    }
    let throttle = match t.and_then(|t| t.throttle.as_ref()) {
        None => "—".to_string(),
        Some(r) if r.is_empty() => "none".to_string(),
        Some(r) => r.iter().map(|r| r.label()).collect::<Vec<_>>().join(", "),
    };
    ui.label(throttle.clone()).on_hover_text(format!(
        "Clock event reasons active at the reading: {throttle}"
    ));
    processes_cell(ui, g, t.and_then(|t| t.processes.as_ref()));
}

/// The processes on GPU `g`: a few in the row, every one on hover; "—" where not read.
fn processes_cell(ui: &mut Ui, g: usize, procs: Option<&Vec<GpuProcess>>) {
    let all = match procs {
        None => "—".to_string(),
        Some(p) if p.is_empty() => "none".to_string(),
        Some(p) => p
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    let shown = match procs {
        Some(p) if p.len() > PROCESSES_SHOWN => {
            let few: Vec<String> = p
                .iter()
                .take(PROCESSES_SHOWN)
                .map(|p| p.to_string())
                .collect();
            format!("{} +{} more", few.join(", "), p.len() - PROCESSES_SHOWN)
        }
        _ => all.clone(),
    };
    ui.label(shown)
        .on_hover_text(format!("Processes with a context on GPU{g}: {all}"));
}

/// How much of a watch the window keeps, in seconds (the sparklines show it all).
pub const WINDOW_S: f64 = 600.0;

/// Where the overlay's samples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FeedKind {
    /// This machine's NVML sampler.
    ThisMachine,
    /// A connected server's sampler, through its agent.
    Server,
    /// A recording played back (an opened `.jsonl`, or the window a report was saved with).
    Replay,
}

/// `10 min`, `45 s`, `1 h 5 min`.
pub fn minutes(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec} s"),
        (0, m, 0) => format!("{m} min"),
        (0, m, sec) => format!("{m} min {sec} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}

/// What the overlay draws: one sample of a window, with the window for the sparklines.
pub struct LiveFrame<'a> {
    /// The window (a watch's last minutes, or a recording).
    pub window: &'a TrafficRecording,
    /// The index of the sample drawn; `None` before the first sample.
    pub at: Option<usize>,
    /// What feeds it.
    pub kind: FeedKind,
    /// The directly joined GPU pairs' NVLink traffic in the sample drawn.
    pub pairs: Vec<PairTraffic>,
}

impl<'a> LiveFrame<'a> {
    /// The frame of `window` at sample `at`.
    pub fn new(window: &'a TrafficRecording, at: Option<usize>, kind: FeedKind) -> Self {
        let pairs = at
            .and_then(|i| window.samples.get(i))
            .map_or_else(Vec::new, |s| pair_traffic(&window.header.topology, s));
        Self {
            window,
            at,
            kind,
            pairs,
        }
    }

    /// The sample drawn.
    pub fn sample(&self) -> Option<&'a TrafficSample> {
        self.window.samples.get(self.at?)
    }

    /// GPU `g`'s readings in the sample drawn.
    pub fn gpu(&self, g: usize) -> Option<&'a crate::model::traffic::GpuTraffic> {
        self.sample()?.gpu(g)
    }

    /// Whether GPU `g` is watched.
    pub fn watched(&self, g: usize) -> bool {
        self.window.header.gpus.contains(&g)
    }

    /// The traffic of the directly joined pair `a`–`b` (either order), as `(a, b)` ordered.
    pub fn pair(&self, a: usize, b: usize) -> Option<&PairTraffic> {
        let (lo, hi) = (a.min(b), a.max(b));
        self.pairs.iter().find(|p| p.a == lo && p.b == hi)
    }

    /// The samples the sparklines show: those of the last [`WINDOW_S`] up to the one drawn.
    pub fn history(&self) -> &'a [TrafficSample] {
        let Some(at) = self.at else {
            return &[];
        };
        let upto = &self.window.samples[..=at.min(self.window.samples.len() - 1)];
        let end = upto.last().map_or(0.0, |s| s.t_s);
        let start = upto.partition_point(|s| s.t_s < end - WINDOW_S);
        &upto[start..]
    }

    /// Words for the feed: `live` or `replay`.
    pub fn feed_word(&self) -> &'static str {
        match self.kind {
            FeedKind::Replay => "replay",
            _ => "live",
        }
    }
}
