//! Colors shared by every view, so that a link kind or a P2P status looks the same everywhere.
//!
//! Cell fills are fixed colors (not theme colors) chosen to read on both the dark and the light
//! theme; text on a fill picks black or white by the fill's luminance.

use eframe::egui::{Color32, Visuals};

use crate::model::{LinkKind, P2pStatus, TopologySource};

/// NVLink fill for the fewest links (a single NVLink).
const NV_LIGHT: Color32 = Color32::from_rgb(0xb7, 0xe4, 0xa8);
/// NVLink fill for a full NVLink 4 bond (18 links).
const NV_DEEP: Color32 = Color32::from_rgb(0x1f, 0x7a, 0x3a);

/// PCIe paths, nearest to farthest: light blue … dark rust.
const PIX: Color32 = Color32::from_rgb(0xa9, 0xd3, 0xf0);
const PXB: Color32 = Color32::from_rgb(0x5c, 0x9c, 0xd6);
const PHB: Color32 = Color32::from_rgb(0xe8, 0xbb, 0x5e);
const NODE: Color32 = Color32::from_rgb(0xd8, 0x7a, 0x32);
const SYS: Color32 = Color32::from_rgb(0x9a, 0x3f, 0x22);

/// Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008,
/// <https://jfly.uni-koeln.de/color/>), for plot series and machines. Their black is left out
/// (it vanishes on the dark theme) and yellow comes last (it is faint on the light theme);
/// series beyond the seventh repeat a colour with another marker ([`series_marker`]).
pub const OKABE_ITO: [Color32; 7] = [
    Color32::from_rgb(0x56, 0xb4, 0xe9), // sky blue
    Color32::from_rgb(0xe6, 0x9f, 0x00), // orange
    Color32::from_rgb(0x00, 0x9e, 0x73), // bluish green
    Color32::from_rgb(0xd5, 0x5e, 0x00), // vermillion
    Color32::from_rgb(0xcc, 0x79, 0xa7), // reddish purple
    Color32::from_rgb(0x00, 0x72, 0xb2), // blue
    Color32::from_rgb(0xf0, 0xe4, 0x42), // yellow
];

/// Marker shapes for plot series, in order; with [`OKABE_ITO`]'s seven colours the first 70
/// series each get a distinct colour and marker pair.
pub const SERIES_MARKERS: [egui_plot::MarkerShape; 10] = [
    egui_plot::MarkerShape::Circle,
    egui_plot::MarkerShape::Square,
    egui_plot::MarkerShape::Diamond,
    egui_plot::MarkerShape::Up,
    egui_plot::MarkerShape::Down,
    egui_plot::MarkerShape::Cross,
    egui_plot::MarkerShape::Plus,
    egui_plot::MarkerShape::Left,
    egui_plot::MarkerShape::Right,
    egui_plot::MarkerShape::Asterisk,
];

/// The colour of the `i`-th series of a plot (or the `i`-th machine of a comparison).
pub fn series_color(i: usize) -> Color32 {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// The marker of the `i`-th series: together with [`series_color`] it tells series apart
/// without relying on colour alone.
pub fn series_marker(i: usize) -> egui_plot::MarkerShape {
    SERIES_MARKERS[i % SERIES_MARKERS.len()]
}

/// A cell whose value is not known.
pub const UNKNOWN: Color32 = Color32::from_rgb(0x80, 0x80, 0x88);
/// P2P: supported.
pub const P2P_OK: Color32 = Color32::from_rgb(0x2e, 0x9a, 0x4b);
/// P2P: not supported (`NS`), the usual answer for NVLink P2P on a PCIe-only pair.
pub const P2P_NS: Color32 = Color32::from_rgb(0xe0, 0x8a, 0x2c);
/// P2P: refused by chipset, GPU or topology (`CNS`, `GNS`, `TNS`).
pub const P2P_REFUSED: Color32 = Color32::from_rgb(0xc8, 0x3a, 0x3a);
/// P2P: the driver said "unknown" (`U`).
pub const P2P_U: Color32 = Color32::from_rgb(0xa8, 0x7a, 0x6a);

/// Health verdicts: PASS, WARN, FAIL; UNKNOWN is [`UNKNOWN`].
pub const VERDICT_PASS: Color32 = Color32::from_rgb(0x2e, 0x9a, 0x4b);
pub const VERDICT_WARN: Color32 = Color32::from_rgb(0xe0, 0xa8, 0x2c);
pub const VERDICT_FAIL: Color32 = Color32::from_rgb(0xc8, 0x3a, 0x3a);

/// The fill for a health verdict.
pub fn verdict_fill(v: crate::health::Verdict) -> Color32 {
    match v {
        crate::health::Verdict::Pass => VERDICT_PASS,
        crate::health::Verdict::Warn => VERDICT_WARN,
        crate::health::Verdict::Fail => VERDICT_FAIL,
        crate::health::Verdict::Unknown => UNKNOWN,
    }
}

/// Text in the WARN colour, readable on the theme's background (the WARN amber is too light on
/// white).
pub fn warn_text(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        VERDICT_WARN
    } else {
        Color32::from_rgb(0x9a, 0x66, 0x00)
    }
}

/// A published figure (the catalog's `[[reference]]`) drawn beside ours: a dotted mark.
pub const PUBLISHED: Color32 = Color32::from_rgb(0xb0, 0x8d, 0x1a);

/// The NVLink green for the machine drawing (NVSwitch block, NVLink lines).
pub const NVLINK: Color32 = Color32::from_rgb(0x3f, 0xa3, 0x4d);
/// PCIe lines in the machine drawing.
pub const PCIE_LINE: Color32 = Color32::from_rgb(0x5c, 0x9c, 0xd6);
/// The socket interconnect (UPI / xGMI) in the machine drawing.
pub const SOCKET_LINK: Color32 = SYS;
/// NIC boxes in the machine drawing.
pub const NIC: Color32 = Color32::from_rgb(0x8e, 0x6c, 0xc8);

/// The fill for a connection of this kind.
///
/// NVLink bonds go from light to deep green with the link count (18 links, NVLink 4's full
/// bond, is the deepest); PCIe paths from light blue (PIX) to dark rust (SYS).
pub fn link_fill(kind: LinkKind) -> Color32 {
    match kind {
        LinkKind::Nv(n) => {
            // Square root so that small bonds (NV1–NV4) still differ visibly from each other.
            let t = (n.clamp(1, 18) as f32 / 18.0).sqrt();
            lerp(NV_LIGHT, NV_DEEP, t)
        }
        LinkKind::Pix => PIX,
        LinkKind::Pxb => PXB,
        LinkKind::Phb => PHB,
        LinkKind::Node => NODE,
        LinkKind::Sys => SYS,
    }
}

/// The fill for a P2P status; `None` (not known) is grey.
pub fn p2p_fill(status: Option<P2pStatus>) -> Color32 {
    match status {
        Some(P2pStatus::Ok) => P2P_OK,
        Some(P2pStatus::Ns) => P2P_NS,
        Some(P2pStatus::Cns | P2pStatus::Gns | P2pStatus::Tns) => P2P_REFUSED,
        Some(P2pStatus::U) => P2P_U,
        None => UNKNOWN,
    }
}

/// Black or white, whichever reads better on `fill`.
pub fn text_on(fill: Color32) -> Color32 {
    let lum =
        0.299 * f32::from(fill.r()) + 0.587 * f32::from(fill.g()) + 0.114 * f32::from(fill.b());
    if lum > 150.0 {
        Color32::from_rgb(0x14, 0x18, 0x1c)
    } else {
        Color32::WHITE
    }
}

/// The fill of what is played back from a recording (Okabe–Ito reddish purple): a replay never
/// wears a live colour.
pub const REPLAY: Color32 = Color32::from_rgb(0xcc, 0x79, 0xa7);

/// Where what a badge marks comes from: the source of a machine or of figures. Each kind has its
/// word and colour: green only for what was measured here (this machine, or a server measured
/// through its connection); blue for a report file or imported captures; slate for a bundled
/// example; purple for a recording played back; amber for everything modeled or documented
/// rather than measured (a catalog entry, modeled figures), so that nothing modeled ever looks
/// live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceBadge {
    /// This machine, read or measured here.
    MeasuredHere,
    /// A server, read and measured through its connection.
    Server,
    /// A report file the user opened.
    ReportFile,
    /// A machine read from `nvidia-smi` captures.
    Imported,
    /// A report bundled with scalescope (measured elsewhere).
    Example,
    /// A recording played back (a traffic recording, a soak.csv): what was measured then.
    Recording,
    /// A hardware catalog entry: documented by the vendor, not measured.
    Catalog,
    /// Figures derived from line rates and efficiencies measured elsewhere.
    Modeled,
    /// Modeled figures drawn beside measured ones.
    ModeledOverlay,
}

impl SourceBadge {
    /// The badge's word (drawn in capitals).
    pub fn word(self) -> &'static str {
        match self {
            Self::MeasuredHere => "measured here",
            Self::Server => "server",
            Self::ReportFile => "report file",
            Self::Imported => "imported",
            Self::Example => "example",
            Self::Recording => "recording",
            Self::Catalog => "catalog",
            Self::Modeled => "modeled",
            Self::ModeledOverlay => "modeled overlay",
        }
    }

    /// The badge's fill.
    pub fn color(self) -> Color32 {
        match self {
            Self::MeasuredHere | Self::Server => Color32::from_rgb(0x2e, 0x9a, 0x4b),
            Self::ReportFile | Self::Imported => Color32::from_rgb(0x3a, 0x7b, 0xc8),
            Self::Example => Color32::from_rgb(0x5f, 0x6b, 0x7a),
            Self::Recording => REPLAY,
            Self::Catalog | Self::Modeled | Self::ModeledOverlay => {
                Color32::from_rgb(0xb0, 0x7a, 0x1c)
            }
        }
    }

    /// The badge of a topology read live (measured here), imported, from the catalog or from
    /// a soak recording.
    pub fn of_topology(source: &TopologySource) -> Self {
        match source {
            TopologySource::Live { .. } => Self::MeasuredHere,
            TopologySource::Imported { .. } | TopologySource::ToolOutput { .. } => Self::Imported,
            TopologySource::Catalog { .. } => Self::Catalog,
            TopologySource::SoakRecording { .. } => Self::Recording,
        }
    }
}

/// The fill of the diagonal (`X`) and of empty cells.
pub fn neutral_cell(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        Color32::from_gray(0x38)
    } else {
        Color32::from_gray(0xdc)
    }
}

/// Background of boxes in the machine drawing.
pub fn box_fill(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        Color32::from_rgb(0x26, 0x2a, 0x30)
    } else {
        Color32::from_rgb(0xf4, 0xf6, 0xf8)
    }
}

/// Background of a NUMA group in the machine drawing.
pub fn group_fill(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        Color32::from_rgb(0x1c, 0x1f, 0x24)
    } else {
        Color32::from_rgb(0xea, 0xee, 0xf2)
    }
}

/// Outline of boxes in the machine drawing.
pub fn box_stroke(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        Color32::from_gray(0x5a)
    } else {
        Color32::from_gray(0xa0)
    }
}

/// CPU / host-bridge blocks in the machine drawing.
pub fn cpu_fill(visuals: &Visuals) -> Color32 {
    if visuals.dark_mode {
        Color32::from_rgb(0x34, 0x42, 0x56)
    } else {
        Color32::from_rgb(0xcf, 0xdb, 0xea)
    }
}

fn lerp(a: Color32, b: Color32, t: f32) -> Color32 {
    let mix = |x: u8, y: u8| (f32::from(x) + (f32::from(y) - f32::from(x)) * t).round() as u8;
    Color32::from_rgb(mix(a.r(), b.r()), mix(a.g(), b.g()), mix(a.b(), b.b()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_nvlinks_is_deeper_green() {
        let lum = |c: Color32| u32::from(c.r()) + u32::from(c.g()) + u32::from(c.b());
        assert!(lum(link_fill(LinkKind::Nv(18))) < lum(link_fill(LinkKind::Nv(4))));
        assert!(lum(link_fill(LinkKind::Nv(4))) < lum(link_fill(LinkKind::Nv(1))));
    }

    #[test]
    fn series_colour_and_marker_pairs_differ_for_70_series() {
        let pairs: Vec<(Color32, egui_plot::MarkerShape)> = (0..70)
            .map(|i| (series_color(i), series_marker(i)))
            .collect();
        for (i, a) in pairs.iter().enumerate() {
            assert!(!pairs[i + 1..].contains(a), "series {i} repeats");
        }
        // Neighbouring series always differ in colour.
        for i in 0..69 {
            assert_ne!(series_color(i), series_color(i + 1));
        }
    }

    #[test]
    fn pcie_paths_get_darker_with_distance() {
        let lum = |c: Color32| u32::from(c.r()) + u32::from(c.g()) + u32::from(c.b());
        assert!(lum(link_fill(LinkKind::Pix)) > lum(link_fill(LinkKind::Sys)));
        assert_eq!(text_on(link_fill(LinkKind::Sys)), Color32::WHITE);
        assert_ne!(text_on(link_fill(LinkKind::Pix)), Color32::WHITE);
    }
}
