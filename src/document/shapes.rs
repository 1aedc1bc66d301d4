//! What the machine drawing is made of: points and boxes, the kinds of boxes, lines and labels,
//! labels' anchors and fonts, and a laid-out drawing ([`MachineLayout`]) — what the machine
//! layouts produce and the painters (the documents' SVG, the Topology view's egui) read;
//! `machine` re-exports them.

use crate::model::LinkKind;

/// A point, in layout units (egui points on screen, SVG units in documents).
pub type Point = (f32, f32);

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

impl Bounds {
    /// The box with its left-top corner at (`x`, `y`), `w` wide and `h` high.
    pub(super) fn new(x: f32, y: f32, w: f32, h: f32) -> Self {
        Self { x, y, w, h }
    }

    /// The box from its left-top corner `a` to its right-bottom corner `b`.
    pub(super) fn from_corners(a: Point, b: Point) -> Self {
        Self::new(a.0, a.1, b.0 - a.0, b.1 - a.1)
    }

    /// Right edge.
    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    /// Centre.
    pub fn center(&self) -> Point {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

    /// The middle of the top edge.
    pub(super) fn center_top(&self) -> Point {
        (self.x + self.w / 2.0, self.y)
    }

    /// The middle of the bottom edge.
    pub(super) fn center_bottom(&self) -> Point {
        (self.x + self.w / 2.0, self.bottom())
    }
}

/// What a box is (its painter picks fill and outline from it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BoxKind {
    /// A NUMA group's background.
    Group,
    /// A CPU socket or PCIe host.
    Cpu,
    /// A GPU; outlined in NVLink green when it has active NVLinks, PCIe blue otherwise.
    Gpu {
        /// Whether the GPU has active NVLinks.
        nvlink: bool,
    },
    /// A GPU with fewer NVLinks up than its peers: outlined in the FAIL colour.
    GpuDegraded,
    /// A NIC.
    Nic,
    /// A PCIe switch bar: one switch (PIX) or several (PXB).
    Switch(LinkKind),
    /// The NVSwitch fabric bar.
    NvSwitch,
    /// The label pill of a direct NVLink bond of this many links.
    NvPill(u32),
}

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LineKind {
    /// A PCIe connection.
    Pcie,
    /// The socket interconnect (UPI / xGMI).
    Socket,
    /// A GPU's drop to the NVSwitch fabric.
    Fabric,
    /// A direct NVLink bond of this many links.
    NvBond(u32),
}

/// How a label is coloured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tone {
    /// The text colour.
    Text,
    /// Weak (grey) text.
    Weak,
    /// Strong text (NIC names).
    Strong,
    /// Text on a box of this kind's fill (black or white by its luminance).
    On(BoxKind),
}

/// Where a label's anchor point sits on the label.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    /// The label's top left corner.
    LeftTop,
    /// The middle of its left edge.
    LeftCenter,
    /// Its bottom left corner.
    LeftBottom,
    /// The middle of its top edge.
    CenterTop,
    /// Its centre.
    CenterCenter,
    /// The middle of its bottom edge.
    CenterBottom,
}

/// Where along one direction of a label its anchor sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Its left or top edge.
    Start,
    /// Its middle.
    Middle,
    /// Its right or bottom edge.
    End,
}

impl Anchor {
    /// Where the anchor sits across the label and down it.
    pub fn sides(self) -> (Side, Side) {
        match self {
            Anchor::LeftTop => (Side::Start, Side::Start),
            Anchor::LeftCenter => (Side::Start, Side::Middle),
            Anchor::LeftBottom => (Side::Start, Side::End),
            Anchor::CenterTop => (Side::Middle, Side::Start),
            Anchor::CenterCenter => (Side::Middle, Side::Middle),
            Anchor::CenterBottom => (Side::Middle, Side::End),
        }
    }
}

/// What hovering an item shows on screen (documents leave it out).
#[derive(Clone, Debug, PartialEq)]
pub enum Hover {
    /// The GPU's details (the painter draws them).
    Gpu(usize),
    /// A text.
    Text(String),
}

/// One thing to draw.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A box.
    Box {
        /// Where.
        at: Bounds,
        /// Corner radius.
        radius: f32,
        /// What it is.
        kind: BoxKind,
        /// What hovering it shows.
        hover: Option<Hover>,
    },
    /// A straight line.
    Line {
        /// From.
        from: Point,
        /// To.
        to: Point,
        /// Stroke width.
        width: f32,
        /// What it is.
        kind: LineKind,
    },
    /// A quadratic Bézier curve (start, control, end).
    Curve {
        /// Start, control point, end.
        points: [Point; 3],
        /// Stroke width.
        width: f32,
        /// What it is.
        kind: LineKind,
    },
    /// A label.
    Text(Label),
}

/// A label of the drawing.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// The anchor point.
    pub at: Point,
    /// Where the anchor sits on the label.
    pub anchor: Anchor,
    /// The text.
    pub text: String,
    /// A shorter text to use when `text` does not fit `max_width`.
    pub short: Option<String>,
    /// Its size and face.
    pub font: Font,
    /// Its colour.
    pub tone: Tone,
    /// The widest it may be drawn; painters shorten it (or cut it with "…") to fit.
    pub max_width: Option<f32>,
}

/// A label's font: its size, proportional or monospace (painters pick the families).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Font {
    /// Size, layout units.
    pub size: f32,
    /// Monospace rather than proportional.
    pub mono: bool,
}

impl Font {
    /// Proportional at `size`.
    pub fn sans(size: f32) -> Self {
        Self { size, mono: false }
    }

    /// Monospace at `size`.
    pub fn mono(size: f32) -> Self {
        Self { size, mono: true }
    }
}

/// A laid-out machine drawing: its size and what to draw, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineLayout {
    /// Width.
    pub width: f32,
    /// Height.
    pub height: f32,
    /// What to draw, back to front.
    pub items: Vec<Item>,
}
