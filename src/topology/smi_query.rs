//! Parsers for the captures a vendor or operator sends about a machine's state:
//! `nvidia-smi -q -x` (XML), `nvidia-smi -q` (text, also `-q -d ECC,PERFORMANCE,…`),
//! `nvidia-smi nvlink -s` (link states) and `nvidia-smi nvlink -e` (link error counters).
//!
//! Each gives an [`Inventory`]: PCIe current and maximum generation and width, replay counter,
//! NVLink states and error counters, ECC counters, retired pages and remapped rows, clock event
//! reasons, utilization and processes. `topology/machine_import.rs` reads any mix of these and
//! `nvidia-smi topo` captures (one machine) into a topology and its inventory.
//!
//! Values nvidia-smi prints as `N/A`, `[Not Supported]`, `Unknown Error` and the like are
//! unknown (`None`). A value that should be a number and is something else is an error naming the
//! file, the line and the field; so are XML that does not parse and files that are none of
//! these captures. Nothing here panics on any input.

use super::TopologyError;
use super::import::parse_error;
use crate::model::validate::quoted;
use crate::model::{
    ComputeMode, EccState, GpuInventory, GpuProcess, GpuSettings, Inventory, InventoryKind,
    LoadState, NvLinkState, PcieLink, ThrottleReason,
};

/// PCIe throughput (either direction) at or above which a capture's reading counts as taken
/// under load, KB/s: 1 GB/s. An idle GPU moves a few MB/s (the H200 captures: ~1 MB/s).
pub const UNDER_LOAD_KBPS: u64 = 1_000_000;

/// What a capture holds, judged from its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureKind {
    /// `nvidia-smi -q -x`.
    QueryXml,
    /// `nvidia-smi -q` (with or without `-d`).
    QueryText,
    /// `nvidia-smi nvlink -s`, `-e` or `-c` (lines `Link N: …` under `GPU N: … (UUID: …)`).
    Nvlink,
    /// Anything else: handed to the `nvidia-smi topo` parser.
    Topo,
}

impl CaptureKind {
    /// `nvidia-smi -q` as text or XML: the captures that describe each GPU (by position).
    pub fn is_query(self) -> bool {
        matches!(self, Self::QueryText | Self::QueryXml)
    }
}

/// Tells the capture kinds apart. Strict enough that no `nvidia-smi topo` capture is mistaken
/// for another kind: those never start with `<`, never hold the `NVSMI LOG` banner and never
/// name a UUID.
pub fn capture_kind(text: &str) -> CaptureKind {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('<') {
        return CaptureKind::QueryXml;
    }
    let mut gpu_header = false;
    for line in t.lines().take(4000) {
        let l = line.trim();
        if l.contains("NVSMI LOG") && l.starts_with('=') {
            return CaptureKind::QueryText;
        }
        if nvlink_gpu_header(l).is_some() {
            gpu_header = true;
        } else if gpu_header && l.starts_with("Link ") && l.contains(':') {
            return CaptureKind::Nvlink;
        }
    }
    CaptureKind::Topo
}

/// Parses one state capture of a known kind.
pub fn parse_capture(
    kind: CaptureKind,
    text: &str,
    origin: &str,
) -> Result<Inventory, TopologyError> {
    match kind {
        CaptureKind::QueryXml => parse_query_xml(text, origin),
        CaptureKind::QueryText => parse_query_text(text, origin),
        CaptureKind::Nvlink => parse_nvlink(text, origin),
        CaptureKind::Topo => Err(parse_error(
            origin,
            1,
            "an `nvidia-smi topo` capture holds no GPU state",
        )),
    }
}

/// True for the words nvidia-smi prints where it has no value.
fn absent(v: &str) -> bool {
    let v = v.trim();
    v.is_empty()
        || v.starts_with('[')
        || v.eq_ignore_ascii_case("N/A")
        || v.eq_ignore_ascii_case("None")
        || v.contains("Not Supported")
        || v.contains("Not Found")
        || v.contains("Not Available")
        || v.contains("Unknown")
        || v.contains("Insufficient Permissions")
        || v.contains("deprecated")
}

/// A count or number: `16x`, `1110 KB/s`, `0 %`, `143771 MiB`, `5`; `None` when nvidia-smi has
/// no value; `Err` naming what was found otherwise.
fn number(v: &str) -> Result<Option<u64>, String> {
    if absent(v) {
        return Ok(None);
    }
    let t = v.trim();
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    let rest = t[digits.len()..].trim_start();
    let unit_ok = rest.is_empty()
        || rest == "x"
        || rest == "%"
        || rest.starts_with("KB/s")
        || rest.starts_with("MiB")
        || rest.starts_with("us")
        || rest.starts_with("bank");
    match digits.parse::<u64>() {
        Ok(n) if unit_ok => Ok(Some(n)),
        _ => Err(format!("expected a number, found {}", quoted(t))),
    }
}

fn number_u32(v: &str) -> Result<Option<u32>, String> {
    number(v)?
        .map(u32::try_from)
        .transpose()
        .map_err(|_| format!("{} is out of range", quoted(v.trim())))
}

/// `Yes`/`No`, `Enabled`/`Disabled`, `Active`/`Not Active`.
fn flag(v: &str) -> Result<Option<bool>, String> {
    if absent(v) {
        return Ok(None);
    }
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "enabled" | "active" | "true" => Ok(Some(true)),
        "no" | "disabled" | "not active" | "false" => Ok(Some(false)),
        _ => Err(format!(
            "expected Yes/No, Enabled/Disabled or Active/Not Active, found {}",
            quoted(v.trim())
        )),
    }
}

fn value_str(v: &str) -> Option<String> {
    (!absent(v)).then(|| v.trim().to_string())
}

/// A figure with its unit, `700.00 W` or `1980 MHz`, bounded to `0..=max`; `None` when
/// nvidia-smi has no value.
fn with_unit(v: &str, unit: &str, max: f64) -> Result<Option<f64>, String> {
    if absent(v) {
        return Ok(None);
    }
    let t = v.trim();
    let figure = t.strip_suffix(unit).map(str::trim_end).unwrap_or(t);
    match figure.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=max).contains(&x) => Ok(Some(x)),
        Ok(_) => Err(format!("{} is out of range (0–{max} {unit})", quoted(t))),
        Err(_) => Err(format!("expected a figure in {unit}, found {}", quoted(t))),
    }
}

/// Watts: a board limit above 100 kW is no GPU's.
fn watts(v: &str) -> Result<Option<f64>, String> {
    with_unit(v, "W", 100_000.0)
}

/// MHz: no GPU clock reaches 100 GHz.
fn mhz(v: &str) -> Result<Option<u32>, String> {
    Ok(with_unit(v, "MHz", 100_000.0)?.map(|x| x.round() as u32))
}

/// `Default`, `Exclusive_Process`, … as nvidia-smi prints the compute mode.
fn compute_mode(v: &str) -> Result<Option<ComputeMode>, String> {
    if absent(v) {
        return Ok(None);
    }
    ComputeMode::from_label(v).map(Some).ok_or_else(|| {
        format!(
            "expected Default, Exclusive_Process, Exclusive_Thread or Prohibited, found {}",
            quoted(v.trim())
        )
    })
}

/// Adds up optional counts: `None` only when none is known.
fn sum(values: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
    values
        .into_iter()
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0) + v))
}

/// A reading's load state from the PCIe throughput it shows.
fn load_from_throughput(tx: Option<u64>, rx: Option<u64>) -> Option<LoadState> {
    match (tx, rx) {
        (None, None) => None,
        _ if tx.unwrap_or(0) >= UNDER_LOAD_KBPS || rx.unwrap_or(0) >= UNDER_LOAD_KBPS => {
            Some(LoadState::UnderLoad)
        }
        _ => Some(LoadState::Idle),
    }
}

/// Clock event reason by the name nvidia-smi gives it (XML element suffix or text label).
fn throttle_reason(name: &str) -> Option<ThrottleReason> {
    let n = name.to_ascii_lowercase().replace(['_', ' '], "");
    let n = n
        .trim_start_matches("clockseventreason")
        .trim_start_matches("clocksthrottlereason");
    Some(match n {
        "gpuidle" | "idle" => ThrottleReason::GpuIdle,
        "applicationsclockssetting" => ThrottleReason::ApplicationsClocks,
        "swpowercap" => ThrottleReason::SwPowerCap,
        "hwslowdown" => ThrottleReason::HwSlowdown,
        "hwthermalslowdown" => ThrottleReason::HwThermalSlowdown,
        "hwpowerbrakeslowdown" => ThrottleReason::HwPowerBrake,
        "syncboost" => ThrottleReason::SyncBoost,
        "swthermalslowdown" => ThrottleReason::SwThermalSlowdown,
        "displayclockssetting" | "displayclocksetting" => ThrottleReason::DisplayClocks,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi -q -x

/// Parses `nvidia-smi -q -x` output.
pub fn parse_query_xml(text: &str, origin: &str) -> Result<Inventory, TopologyError> {
    let doc = xml_document(text, origin)?;
    let root = doc.root_element();
    let line_of = |n: roxmltree::Node| doc.text_pos_at(n.range().start).row as usize;
    if root.tag_name().name() != "nvidia_smi_log" {
        return Err(parse_error(
            origin,
            line_of(root),
            format!(
                "expected `nvidia-smi -q -x` output (an <nvidia_smi_log> element), found <{}>",
                root.tag_name().name()
            ),
        ));
    }
    let mut inv = Inventory::new(InventoryKind::Imported, vec![origin.to_string()]);
    inv.captured_at = xml_text(root, &["timestamp"]).and_then(value_str);
    inv.driver_version = xml_text(root, &["driver_version"]).and_then(value_str);
    let gpus: Vec<roxmltree::Node> = root.children().filter(|n| n.has_tag_name("gpu")).collect();
    if gpus.is_empty() {
        return Err(parse_error(
            origin,
            line_of(root),
            "no <gpu> element: the capture lists no GPU",
        ));
    }
    crate::model::check_gpu_count(gpus.len())
        .map_err(|why| parse_error(origin, line_of(root), format!("<gpu> elements: {why}")))?;
    let attached = xml_text(root, &["attached_gpus"]).and_then(|v| v.trim().parse::<usize>().ok());
    inv.missing = unanswered(attached, gpus.len());
    for (index, g) in gpus.into_iter().enumerate() {
        let gpu = XmlGpu {
            doc: &doc,
            g,
            origin,
            index,
        };
        gpu.read(inv.gpu_mut(index))?;
    }
    Ok(inv)
}

/// `text` as an XML document, within the budget of [`super::xml_budget`]; a DTD is allowed
/// (nvidia-smi names one) but nothing external is fetched.
fn xml_document<'i>(text: &'i str, origin: &str) -> Result<roxmltree::Document<'i>, TopologyError> {
    super::xml_budget::check(text).map_err(|r| {
        parse_error(
            origin,
            r.line,
            format!("not a usable `nvidia-smi -q -x` capture: {}", r.message),
        )
    })?;
    let opts = roxmltree::ParsingOptions {
        // nvidia-smi writes a DOCTYPE naming its DTD file; nothing external is ever fetched.
        allow_dtd: true,
        nodes_limit: 4_000_000,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(text, opts).map_err(|e| {
        let line = match e {
            // roxmltree places the end of the stream at the start; the end is the last line.
            roxmltree::Error::UnexpectedEndOfStream => text.lines().count().max(1),
            _ => e.pos().row as usize,
        };
        let what = match e {
            roxmltree::Error::UnexpectedEndOfStream => {
                "the XML ends early (a truncated capture?)".to_string()
            }
            _ => e.to_string(),
        };
        parse_error(
            origin,
            line,
            format!("not valid `nvidia-smi -q -x` XML: {what}"),
        )
    })
}

/// One `<gpu>` element of an `nvidia-smi -q -x` capture (GPU `index` of the capture `origin`),
/// read field by field; a malformed value is an error naming its element and line.
struct XmlGpu<'a, 'i> {
    doc: &'a roxmltree::Document<'i>,
    g: roxmltree::Node<'a, 'i>,
    origin: &'a str,
    index: usize,
}

impl XmlGpu<'_, '_> {
    /// The error for element `n`: message `m` with the GPU, the element and its line.
    fn err(&self, n: roxmltree::Node, m: String) -> TopologyError {
        parse_error(
            self.origin,
            self.doc.text_pos_at(n.range().start).row as usize,
            format!("GPU {}: <{}>: {m}", self.index, n.tag_name().name()),
        )
    }

    /// The number at `path`, if the element is there.
    fn num(&self, path: &[&str]) -> Result<Option<u64>, TopologyError> {
        match xml_node(self.g, path) {
            Some(n) => number(n.text().unwrap_or("")).map_err(|m| self.err(n, m)),
            None => Ok(None),
        }
    }

    /// The number at `path` that fits 32 bits, if the element is there.
    fn num32(&self, path: &[&str]) -> Result<Option<u32>, TopologyError> {
        match xml_node(self.g, path) {
            Some(n) => number_u32(n.text().unwrap_or("")).map_err(|m| self.err(n, m)),
            None => Ok(None),
        }
    }

    /// The yes/no (enabled/disabled, active/not active) at `path`, if the element is there.
    fn flg(&self, path: &[&str]) -> Result<Option<bool>, TopologyError> {
        match xml_node(self.g, path) {
            Some(n) => flag(n.text().unwrap_or("")).map_err(|m| self.err(n, m)),
            None => Ok(None),
        }
    }

    /// Everything the element says of its GPU, into `gi`.
    fn read(&self, gi: &mut GpuInventory) -> Result<(), TopologyError> {
        let g = self.g;
        gi.name = xml_text(g, &["product_name"]).and_then(value_str);
        gi.recovery_action = xml_text(g, &["gpu_recovery_action"]).and_then(value_str);
        gi.fabric_status = xml_text(g, &["fabric", "status"]).and_then(value_str);
        gi.vbios = xml_text(g, &["vbios_version"]).and_then(value_str);
        gi.uuid = xml_text(g, &["uuid"]).and_then(value_str);
        gi.pci_bus_id = xml_text(g, &["pci", "pci_bus_id"])
            .and_then(value_str)
            .or_else(|| g.attribute("id").map(str::to_string));
        gi.memory_mib = self.num(&["fb_memory_usage", "total"])?;
        let link = ["pci", "pci_gpu_link_info"];
        let at = |tail: &[&'static str]| -> Vec<&'static str> {
            link.iter().chain(tail).copied().collect()
        };
        gi.pcie.link = PcieLink {
            gen_current: self.num32(&at(&["pcie_gen", "current_link_gen"]))?,
            gen_max: self.num32(&at(&["pcie_gen", "max_link_gen"]))?,
            width_current: self.num32(&at(&["link_widths", "current_link_width"]))?,
            width_max: self.num32(&at(&["link_widths", "max_link_width"]))?,
        };
        if let Some(why) = gi.pcie.link.implausible() {
            let node = xml_node(g, &link).unwrap_or(g);
            return Err(self.err(node, why));
        }
        gi.pcie.gen_device_max = self.num32(&at(&["pcie_gen", "max_device_link_gen"]))?;
        gi.pcie.gen_host_max = self.num32(&at(&["pcie_gen", "max_host_link_gen"]))?;
        gi.pcie.replay_counter = self.num(&["pci", "replay_counter"])?;
        gi.pcie.tx_kbps = self.num(&["pci", "tx_util"])?;
        gi.pcie.rx_kbps = self.num(&["pci", "rx_util"])?;
        gi.pcie.load = load_from_throughput(gi.pcie.tx_kbps, gi.pcie.rx_kbps);
        gi.utilization_gpu_percent = self.num32(&["utilization", "gpu_util"])?;
        gi.utilization_memory_percent = self.num32(&["utilization", "memory_util"])?;
        gi.throttle = self.throttle()?;
        gi.ecc = self.ecc()?;
        if let Some(procs) = self.processes()? {
            gi.processes = Some(procs);
        }
        gi.settings = capture_settings(&XML_SETTINGS, |p| {
            xml_node(g, p).map(|n| (n, n.text().unwrap_or("").to_string()))
        })
        .map_err(|(n, m)| self.err(n, m))?;
        gi.temperature = super::smi_temperature::read(&super::smi_temperature::XML, |p| {
            xml_node(g, p)
                .map(|n| (n, n.text().unwrap_or("").to_string()))
                .filter(|(_, v)| !absent(v))
        })
        .map_err(|(n, m)| self.err(n, m))?;
        Ok(())
    }

    /// The active clock event reasons (driver 535+) or clock throttle reasons (older
    /// drivers); `None` without either section.
    fn throttle(&self) -> Result<Option<Vec<ThrottleReason>>, TopologyError> {
        let reasons = xml_node(self.g, &["clocks_event_reasons"])
            .or_else(|| xml_node(self.g, &["clocks_throttle_reasons"]));
        let Some(section) = reasons else {
            return Ok(None);
        };
        let mut active = Vec::new();
        for n in section.children().filter(|n| n.is_element()) {
            let Some(reason) = throttle_reason(n.tag_name().name()) else {
                continue;
            };
            if flag(n.text().unwrap_or("")).map_err(|m| self.err(n, m))? == Some(true) {
                active.push(reason);
            }
        }
        Ok(Some(active))
    }

    /// ECC: the mode, the volatile and aggregate error counts, retired pages and remapped rows.
    fn ecc(&self) -> Result<EccState, TopologyError> {
        let mut ecc = EccState {
            enabled: self.flg(&["ecc_mode", "current_ecc"])?,
            ..Default::default()
        };
        for section in ["volatile", "aggregate"] {
            let Some(sec) = xml_node(self.g, &["ecc_errors", section]) else {
                continue;
            };
            let (mut c, mut u) = (Vec::new(), Vec::new());
            for n in sec.children().filter(|n| n.is_element()) {
                let name = n.tag_name().name();
                let text = |n: roxmltree::Node| -> Result<Option<u64>, TopologyError> {
                    number(n.text().unwrap_or("")).map_err(|m| self.err(n, m))
                };
                if name.contains("uncorrectable") {
                    u.push(text(n)?);
                } else if name.contains("correctable") {
                    c.push(text(n)?);
                } else if name == "single_bit" || name == "double_bit" {
                    // Older drivers: <single_bit><total>, <double_bit><total>.
                    if let Some(t) = xml_node(n, &["total"]) {
                        let v = text(t)?;
                        if name == "single_bit" {
                            c.push(v)
                        } else {
                            u.push(v)
                        }
                    }
                }
            }
            let (c, u) = (sum(c), sum(u));
            if section == "volatile" {
                ecc.volatile_corrected = c;
                ecc.volatile_uncorrected = u;
            } else {
                ecc.aggregate_corrected = c;
                ecc.aggregate_uncorrected = u;
            }
        }
        let retired = |tail: &'static str| ["retired_pages", tail, "retired_count"];
        ecc.retired_pages_sbe = self.num(&retired("multiple_single_bit_retirement"))?;
        ecc.retired_pages_dbe = self.num(&retired("double_bit_retirement"))?;
        ecc.retired_pending = match self.flg(&["retired_pages", "pending_retirement"])? {
            Some(v) => Some(v),
            None => self.flg(&["retired_pages", "pending_blacklist"])?,
        };
        ecc.remapped_rows_correctable = self.num(&["remapped_rows", "remapped_row_corr"])?;
        ecc.remapped_rows_uncorrectable = self.num(&["remapped_rows", "remapped_row_unc"])?;
        ecc.remap_pending = self.flg(&["remapped_rows", "remapped_row_pending"])?;
        ecc.remap_failure = self.flg(&["remapped_rows", "remapped_row_failure"])?;
        ecc.unrepairable = self.flg(&["ecc_errors", "unrepairable_memory"])?;
        ecc.sram_threshold_exceeded =
            self.flg(&["ecc_errors", "aggregate", "sram_threshold_exceeded"])?;
        Ok(ecc)
    }

    /// The processes on the GPU; `None` without a `<processes>` element.
    fn processes(&self) -> Result<Option<Vec<GpuProcess>>, TopologyError> {
        let Some(p) = xml_node(self.g, &["processes"]) else {
            return Ok(None);
        };
        let mut procs = Vec::new();
        for info in p.children().filter(|n| n.has_tag_name("process_info")) {
            let pid = match xml_node(info, &["pid"]) {
                Some(n) => number(n.text().unwrap_or("")).map_err(|m| self.err(n, m))?,
                None => None,
            };
            if let Some(pid) = pid.and_then(|p| u32::try_from(p).ok()) {
                procs.push(GpuProcess {
                    pid,
                    name: xml_text(info, &["process_name"]).and_then(value_str),
                });
            }
        }
        Ok(Some(procs))
    }
}

fn xml_node<'a, 'i>(n: roxmltree::Node<'a, 'i>, path: &[&str]) -> Option<roxmltree::Node<'a, 'i>> {
    let mut cur = n;
    for p in path {
        cur = cur.children().find(|c| c.has_tag_name(*p))?;
    }
    Some(cur)
}

fn xml_text<'a>(n: roxmltree::Node<'a, '_>, path: &[&str]) -> Option<&'a str> {
    xml_node(n, path).map(|n| n.text().unwrap_or(""))
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi -q (text)

/// One `Key : value` line (or a section heading) of `nvidia-smi -q`, with its children.
#[derive(Debug, Default)]
struct Entry {
    name: String,
    /// The names from the GPU section down, for messages: `PCI › GPU Link Info › …`.
    path: String,
    value: Option<String>,
    line: usize,
    children: Vec<Entry>,
}

impl Entry {
    fn get(&self, path: &[&str]) -> Option<&Entry> {
        let mut cur = self;
        for p in path {
            cur = cur.children.iter().find(|c| c.name == *p)?;
        }
        Some(cur)
    }

    /// The first of `names` that exists.
    fn any(&self, names: &[&[&str]]) -> Option<&Entry> {
        names.iter().find_map(|p| self.get(p))
    }

    /// The value of the entry at `path`, if any.
    fn value_at(&self, path: &[&str]) -> Option<&str> {
        self.get(path).and_then(|e| e.value.as_deref())
    }

    fn walk<'a>(&'a self, out: &mut Vec<&'a Entry>) {
        for c in &self.children {
            out.push(c);
            c.walk(out);
        }
    }
}

/// Parses `nvidia-smi -q` output (also with `-d` sections).
pub fn parse_query_text(text: &str, origin: &str) -> Result<Inventory, TopologyError> {
    let root = entry_tree(text);
    let mut inv = Inventory::new(InventoryKind::Imported, vec![origin.to_string()]);
    let top = |k: &str| root.value_at(&[k]).and_then(value_str);
    inv.captured_at = top("Timestamp");
    inv.driver_version = top("Driver Version");
    let gpus: Vec<&Entry> = root
        .children
        .iter()
        .filter(|e| e.name.starts_with("GPU ") && e.value.is_none())
        .collect();
    let lost = super::gpu_order::lost_gpus(text);
    if gpus.is_empty() && !lost.is_empty() {
        // Every GPU lost: no section, only nvidia-smi's line for each.
        let attached = top("Attached GPUs").and_then(|v| v.trim().parse::<usize>().ok());
        super::gpu_order::place_lost(&mut inv, &lost, attached);
        return Ok(inv);
    }
    if gpus.is_empty() {
        return Err(parse_error(
            origin,
            1,
            "no `GPU 00000000:…` section: the `nvidia-smi -q` capture lists no GPU",
        ));
    }
    crate::model::check_gpu_count(gpus.len())
        .map_err(|why| parse_error(origin, 1, format!("`GPU …` sections: {why}")))?;
    let described = gpus.len();
    for (index, g) in gpus.into_iter().enumerate() {
        let gpu = TextGpu { g, origin, index };
        gpu.read(inv.gpu_mut(index))?;
    }
    let attached = top("Attached GPUs").and_then(|v| v.trim().parse::<usize>().ok());
    if !super::gpu_order::place_lost(&mut inv, &lost, attached) {
        inv.missing = unanswered(attached, described);
    }
    Ok(inv)
}

/// The GPUs `nvidia-smi -q` counts among its attached GPUs (`attached`) beyond the `described`
/// ones it has a section for: nvidia-smi lists a GPU it cannot reach in the count only.
fn unanswered(attached: Option<usize>, described: usize) -> Vec<crate::model::MissingGpu> {
    let attached = attached.filter(|&a| a > described && a <= crate::model::MAX_GPUS);
    (described..attached.unwrap_or(described))
        .map(|index| crate::model::MissingGpu {
            lost: false,
            index,
            seen: format!(
                "nvidia-smi -q counts {} attached GPUs and describes {described}; it does not \
                 say which one it left out, so the GPUs listed after it may be numbered lower \
                 here than nvidia-smi numbers them (give `nvidia-smi nvlink -s` beside it: its \
                 UUIDs number them)",
                attached.unwrap_or(described)
            ),
        })
        .collect()
}

/// The lines of an `nvidia-smi -q` capture as a tree by indentation: each line is a child of
/// the nearest line above it indented less.
fn entry_tree(text: &str) -> Entry {
    let mut root = Entry::default();
    let mut stack: Vec<(usize, Vec<usize>)> = Vec::new(); // (indent, path of child indices)
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        let content = line.trim();
        if content.is_empty() || (content.starts_with('=') && content.contains("NVSMI LOG")) {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let (name, value) = match content.find(" : ").or_else(|| {
            content
                .strip_suffix(" :")
                .map(|k| k.len())
                .or_else(|| content.ends_with(':').then(|| content.len() - 1))
        }) {
            Some(p) => (
                content[..p].trim().to_string(),
                Some(
                    content[p..]
                        .trim_start_matches([' ', ':'])
                        .trim()
                        .to_string(),
                ),
            ),
            None => (content.to_string(), None),
        };
        while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
            stack.pop();
        }
        let parent_path: Vec<usize> = stack.last().map(|(_, p)| p.clone()).unwrap_or_default();
        let mut parent = &mut root;
        for &k in &parent_path {
            parent = &mut parent.children[k];
        }
        // Below a GPU section the path starts at the section's children.
        let path = if parent_path.len() <= 1 {
            name.clone()
        } else {
            format!("{} › {name}", parent.path)
        };
        parent.children.push(Entry {
            name,
            path,
            value,
            line: i + 1,
            children: Vec::new(),
        });
        let mut path = parent_path;
        path.push(parent.children.len() - 1);
        stack.push((indent, path));
    }
    root
}

/// One `GPU …` section of an `nvidia-smi -q` capture (GPU `index` of the capture `origin`),
/// read field by field; a malformed value is an error naming its path and line.
struct TextGpu<'a> {
    g: &'a Entry,
    origin: &'a str,
    index: usize,
}

impl TextGpu<'_> {
    /// The error for entry `e`: message `m` with the GPU, the entry's path and its line.
    fn err(&self, e: &Entry, m: String) -> TopologyError {
        parse_error(
            self.origin,
            e.line,
            format!("GPU {}: {}: {m}", self.index, e.path),
        )
    }

    /// The number `e` holds, if it is there.
    fn num(&self, e: Option<&Entry>) -> Result<Option<u64>, TopologyError> {
        match e {
            Some(e) => number(e.value.as_deref().unwrap_or("")).map_err(|m| self.err(e, m)),
            None => Ok(None),
        }
    }

    /// The number `e` holds, fitting 32 bits, if it is there.
    fn num32(&self, e: Option<&Entry>) -> Result<Option<u32>, TopologyError> {
        match e {
            Some(e) => number_u32(e.value.as_deref().unwrap_or("")).map_err(|m| self.err(e, m)),
            None => Ok(None),
        }
    }

    /// The yes/no (enabled/disabled, active/not active) `e` holds, if it is there.
    fn flg(&self, e: Option<&Entry>) -> Result<Option<bool>, TopologyError> {
        match e {
            Some(e) => flag(e.value.as_deref().unwrap_or("")).map_err(|m| self.err(e, m)),
            None => Ok(None),
        }
    }

    /// Everything the section says of its GPU, into `gi`.
    fn read(&self, gi: &mut GpuInventory) -> Result<(), TopologyError> {
        let g = self.g;
        gi.name = g.value_at(&["Product Name"]).and_then(value_str);
        gi.recovery_action = g.value_at(&["GPU Recovery Action"]).and_then(value_str);
        gi.fabric_status = g.value_at(&["Fabric", "Status"]).and_then(value_str);
        gi.uuid = g.value_at(&["GPU UUID"]).and_then(value_str);
        gi.vbios = g.value_at(&["VBIOS Version"]).and_then(value_str);
        gi.pci_bus_id = g
            .value_at(&["PCI", "Bus Id"])
            .and_then(value_str)
            .or_else(|| g.name.strip_prefix("GPU ").map(|s| s.trim().to_string()));
        gi.memory_mib = self.num(g.get(&["FB Memory Usage", "Total"]))?;
        let link = g.get(&["PCI", "GPU Link Info"]);
        let at = |p: &[&str]| link.and_then(|l| l.get(p));
        gi.pcie.link = PcieLink {
            gen_current: self.num32(at(&["PCIe Generation", "Current"]))?,
            gen_max: self.num32(at(&["PCIe Generation", "Max"]))?,
            width_current: self.num32(at(&["Link Width", "Current"]))?,
            width_max: self.num32(at(&["Link Width", "Max"]))?,
        };
        if let (Some(why), Some(l)) = (gi.pcie.link.implausible(), link) {
            return Err(self.err(l, why));
        }
        gi.pcie.gen_device_max = self.num32(at(&["PCIe Generation", "Device Max"]))?;
        gi.pcie.gen_host_max = self.num32(at(&["PCIe Generation", "Host Max"]))?;
        gi.pcie.replay_counter = self.num(g.get(&["PCI", "Replays Since Reset"]))?;
        gi.pcie.tx_kbps = self.num(g.get(&["PCI", "Tx Throughput"]))?;
        gi.pcie.rx_kbps = self.num(g.get(&["PCI", "Rx Throughput"]))?;
        gi.pcie.load = load_from_throughput(gi.pcie.tx_kbps, gi.pcie.rx_kbps);
        gi.utilization_gpu_percent = self.num32(g.get(&["Utilization", "GPU"]))?;
        gi.utilization_memory_percent = self.num32(g.get(&["Utilization", "Memory"]))?;
        if let Some(section) = g.any(&[&["Clocks Event Reasons"], &["Clocks Throttle Reasons"]]) {
            let mut all = Vec::new();
            section.walk(&mut all);
            let mut active = Vec::new();
            for e in all {
                let Some(reason) = throttle_reason(&e.name) else {
                    continue;
                };
                if self.flg(Some(e))? == Some(true) {
                    active.push(reason);
                }
            }
            gi.throttle = Some(active);
        }
        self.ecc(&mut gi.ecc)?;
        if let Some(p) = g.get(&["Processes"]) {
            gi.processes = Some(self.processes(p)?);
        }
        gi.settings = capture_settings(&TEXT_SETTINGS, |p| {
            g.get(p).map(|e| (e, e.value.clone().unwrap_or_default()))
        })
        .map_err(|(e, m)| self.err(e, m))?;
        gi.temperature = super::smi_temperature::read(&super::smi_temperature::TEXT, |p| {
            g.get(p)
                .map(|e| (e, e.value.clone().unwrap_or_default()))
                .filter(|(_, v)| !absent(v))
        })
        .map_err(|(e, m)| self.err(e, m))?;
        Ok(())
    }

    /// ECC into `ecc`: the mode, the volatile and aggregate error counts, retired pages and
    /// remapped rows, where the capture has them.
    fn ecc(&self, ecc: &mut EccState) -> Result<(), TopologyError> {
        let g = self.g;
        ecc.enabled = self.flg(g.get(&["ECC Mode", "Current"]))?;
        for section in ["Volatile", "Aggregate"] {
            let Some(sec) = g.get(&["ECC Errors", section]) else {
                continue;
            };
            let (mut c, mut u) = (Vec::new(), Vec::new());
            for e in &sec.children {
                if e.name.contains("Uncorrectable") {
                    u.push(self.num(Some(e))?);
                } else if e.name.contains("Correctable") {
                    c.push(self.num(Some(e))?);
                } else if e.name == "Single Bit" {
                    c.push(self.num(e.get(&["Total"]))?);
                } else if e.name == "Double Bit" {
                    u.push(self.num(e.get(&["Total"]))?);
                }
            }
            if section == "Volatile" {
                ecc.volatile_corrected = sum(c);
                ecc.volatile_uncorrected = sum(u);
            } else {
                ecc.aggregate_corrected = sum(c);
                ecc.aggregate_uncorrected = sum(u);
            }
        }
        if let Some(rp) = g.get(&["Retired Pages"]) {
            // "Single Bit ECC : 0" (or a section with "Retired Count" on some drivers).
            let count = |name: &str| -> Result<Option<u64>, TopologyError> {
                match rp.get(&[name]) {
                    Some(e) if e.value.is_some() => self.num(Some(e)),
                    Some(e) => self.num(e.get(&["Retired Count"])),
                    None => Ok(None),
                }
            };
            ecc.retired_pages_sbe = count("Single Bit ECC")?;
            ecc.retired_pages_dbe = count("Double Bit ECC")?;
            ecc.retired_pending = self.flg(rp.any(&[&["Pending Page Blacklist"], &["Pending"]]))?;
        }
        if let Some(rr) = g.get(&["Remapped Rows"]) {
            ecc.remapped_rows_correctable = self.num(rr.get(&["Correctable Error"]))?;
            ecc.remapped_rows_uncorrectable = self.num(rr.get(&["Uncorrectable Error"]))?;
            ecc.remap_pending = self.flg(rr.get(&["Pending"]))?;
            ecc.remap_failure = self.flg(rr.get(&["Remapping Failure Occurred"]))?;
        }
        ecc.unrepairable = self.flg(g.get(&["ECC Errors", "Unrepairable Memory"]))?;
        ecc.sram_threshold_exceeded =
            self.flg(g.get(&["ECC Errors", "Aggregate", "SRAM Threshold Exceeded"]))?;
        Ok(())
    }

    /// The processes of section `p`: each `Process ID` with the `Name` after it, if any.
    fn processes(&self, p: &Entry) -> Result<Vec<GpuProcess>, TopologyError> {
        let mut procs = Vec::new();
        let mut all = Vec::new();
        p.walk(&mut all);
        let mut pending: Option<u32> = None;
        for e in all {
            match e.name.as_str() {
                "Process ID" => {
                    if let Some(pid) = pending.take() {
                        procs.push(GpuProcess { pid, name: None });
                    }
                    pending = self.num(Some(e))?.and_then(|v| u32::try_from(v).ok());
                }
                "Name" => {
                    if let Some(pid) = pending.take() {
                        procs.push(GpuProcess {
                            pid,
                            name: e.value.as_deref().and_then(value_str),
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(pid) = pending {
            procs.push(GpuProcess { pid, name: None });
        }
        Ok(procs)
    }
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi nvlink -s / -e

/// `GPU 0: NVIDIA H200 (UUID: GPU-…)` → (0, name, uuid).
/// Where a GPU's settings sit in one capture format: the power readings section (driver 535+
/// first, older drivers second), the names of the limit in force (newest first), the other
/// limits, the clocks and the modes.
struct SettingNames {
    readings: [&'static str; 2],
    limit: [&'static str; 3],
    default: &'static str,
    min: &'static str,
    max: &'static str,
    app: [&'static str; 2],
    app_default: [&'static str; 2],
    max_sm: [&'static str; 2],
    persistence: &'static str,
    mig: [[&'static str; 2]; 2],
    compute: &'static str,
}

/// `nvidia-smi -q`: "GPU Power Readings" or "Power Readings" ("Enforced Power Limit" on older
/// drivers), "Applications Clocks", "Max Clocks", "Persistence Mode", "MIG Mode", "Compute Mode".
const TEXT_SETTINGS: SettingNames = SettingNames {
    readings: ["GPU Power Readings", "Power Readings"],
    limit: ["Current Power Limit", "Enforced Power Limit", "Power Limit"],
    default: "Default Power Limit",
    min: "Min Power Limit",
    max: "Max Power Limit",
    app: ["Applications Clocks", "Graphics"],
    app_default: ["Default Applications Clocks", "Graphics"],
    max_sm: ["Max Clocks", "SM"],
    persistence: "Persistence Mode",
    mig: [["MIG Mode", "Current"], ["MIG Mode", "Pending"]],
    compute: "Compute Mode",
};

/// `nvidia-smi -q -x`: the same, as its elements are named.
const XML_SETTINGS: SettingNames = SettingNames {
    readings: ["gpu_power_readings", "power_readings"],
    limit: ["current_power_limit", "enforced_power_limit", "power_limit"],
    default: "default_power_limit",
    min: "min_power_limit",
    max: "max_power_limit",
    app: ["applications_clocks", "graphics_clock"],
    app_default: ["default_applications_clocks", "graphics_clock"],
    max_sm: ["max_clocks", "sm_clock"],
    persistence: "persistence_mode",
    mig: [["mig_mode", "current_mig"], ["mig_mode", "pending_mig"]],
    compute: "compute_mode",
};

/// A GPU's power limit, clock settings and modes from one capture: `at` finds a value by its
/// path and returns where it is (for the error) and its text.
fn capture_settings<L: Copy>(
    names: &SettingNames,
    at: impl Fn(&[&str]) -> Option<(L, String)>,
) -> Result<GpuSettings, (L, String)> {
    fn parsed<L, T>(
        found: Option<(L, String)>,
        f: impl Fn(&str) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, (L, String)> {
        match found {
            Some((l, v)) => f(&v).map_err(|m| (l, m)),
            None => Ok(None),
        }
    }
    let power = if at(&[names.readings[0]]).is_some() {
        names.readings[0]
    } else {
        names.readings[1]
    };
    let mut limit = None;
    for name in names.limit {
        limit = parsed(at(&[power, name]), watts)?;
        if limit.is_some() {
            break;
        }
    }
    Ok(GpuSettings {
        power_limit_w: limit,
        power_limit_default_w: parsed(at(&[power, names.default]), watts)?,
        power_limit_min_w: parsed(at(&[power, names.min]), watts)?,
        power_limit_max_w: parsed(at(&[power, names.max]), watts)?,
        app_clock_mhz: parsed(at(&names.app), mhz)?,
        app_clock_default_mhz: parsed(at(&names.app_default), mhz)?,
        max_sm_clock_mhz: parsed(at(&names.max_sm), mhz)?,
        persistence: parsed(at(&[names.persistence]), flag)?,
        mig_current: parsed(at(&names.mig[0]), flag)?,
        mig_pending: parsed(at(&names.mig[1]), flag)?,
        compute_mode: parsed(at(&[names.compute]), compute_mode)?,
    })
}

fn nvlink_gpu_header(line: &str) -> Option<(usize, String, Option<String>)> {
    let rest = line.strip_prefix("GPU ")?;
    let (idx, rest) = rest.split_once(':')?;
    let index = idx.trim().parse::<usize>().ok()?;
    let rest = rest.trim();
    let (name, uuid) = match rest.rfind("(UUID:") {
        Some(p) => (
            rest[..p].trim().to_string(),
            Some(
                rest[p + 6..]
                    .trim()
                    .trim_end_matches(')')
                    .trim()
                    .to_string(),
            ),
        ),
        None => return None,
    };
    Some((index, name, uuid))
}

/// Parses `nvidia-smi nvlink -s` (states and speeds) or `nvidia-smi nvlink -e` (error counters).
/// `nvlink -c` (capabilities) parses but adds nothing: it says what a link can do, not its state.
pub fn parse_nvlink(text: &str, origin: &str) -> Result<Inventory, TopologyError> {
    let mut reader = NvlinkReader {
        inv: Inventory::new(InventoryKind::Imported, vec![origin.to_string()]),
        origin,
        current: None,
        useful: false,
    };
    for (i, raw) in text.lines().enumerate() {
        reader.line(raw.trim(), i + 1)?;
    }
    let mut inv = reader.inv;
    if inv.gpus.is_empty() {
        return Err(parse_error(
            origin,
            1,
            "no `GPU N: … (UUID: …)` line: not `nvidia-smi nvlink` output",
        ));
    }
    if !reader.useful {
        inv.notes.push(format!(
            "{origin}: no NVLink state or error counter (capabilities only?): import `nvidia-smi nvlink -s` and `-e` output"
        ));
        for g in &mut inv.gpus {
            g.nvlinks = None;
        }
    }
    for g in &mut inv.gpus {
        let speeds: Vec<f64> = g.nvlinks.iter().flatten().filter_map(|l| l.gbps).collect();
        if let Some(min) = speeds.iter().copied().reduce(f64::min) {
            g.nvlink_gbps_per_link = Some(min);
        }
        // A `-e` capture lists every link's counters but not whether it is up.
        if g.nvlinks
            .as_ref()
            .is_some_and(|v| v.iter().all(|l| l.active.is_none()))
        {
            g.nvlinks_expected = g.nvlinks.as_ref().map(|v| v.len() as u32);
        }
    }
    Ok(inv)
}

/// [`parse_nvlink`] under way: the inventory so far, the GPU whose `Link N:` lines follow,
/// and whether any line said a link's state or counters.
struct NvlinkReader<'a> {
    inv: Inventory,
    origin: &'a str,
    current: Option<usize>,
    useful: bool,
}

impl NvlinkReader<'_> {
    /// One trimmed line, number `line_no`: a GPU's header, or one of its links' state, speed or
    /// error counter; anything else is passed over.
    fn line(&mut self, line: &str, line_no: usize) -> Result<(), TopologyError> {
        let origin = self.origin;
        if line.is_empty() {
            return Ok(());
        }
        if let Some((index, name, uuid)) = nvlink_gpu_header(line) {
            let g = self.inv.gpu_mut(index);
            g.name = value_str(&name);
            g.uuid = uuid;
            g.nvlinks.get_or_insert_with(Vec::new);
            self.current = Some(index);
            return Ok(());
        }
        let Some((num, what)) = line.strip_prefix("Link ").and_then(|r| r.split_once(':')) else {
            return Ok(());
        };
        let Ok(link) = num.trim().parse::<u32>() else {
            // `Link 0, P2P is supported: true` (nvlink -c) and other forms: not a state.
            return Ok(());
        };
        let Some(gpu) = self.current else {
            return Err(parse_error(
                origin,
                line_no,
                "a `Link N:` line before any `GPU N: … (UUID: …)` line",
            ));
        };
        if link >= crate::model::NVLINKS_PER_GPU_MAX {
            return Err(parse_error(
                origin,
                line_no,
                format!(
                    "GPU {gpu} link {link}: link numbers go up to {} (at most {} NVLinks per GPU)",
                    crate::model::NVLINKS_PER_GPU_MAX - 1,
                    crate::model::NVLINKS_PER_GPU_MAX
                ),
            ));
        }
        let state = link_state(self.inv.gpu_mut(gpu), link);
        let bad = |m: String| parse_error(origin, line_no, format!("GPU {gpu} link {link}: {m}"));
        if read_link_line(state, what.trim(), bad)? {
            self.useful = true;
        }
        Ok(())
    }
}

/// The state of link `link` of GPU `g`, added (in link order) when new.
fn link_state(g: &mut GpuInventory, link: u32) -> &mut NvLinkState {
    let links = g.nvlinks.get_or_insert_with(Vec::new);
    let p = match links.iter().position(|l| l.link == link) {
        Some(p) => p,
        None => {
            links.push(NvLinkState {
                link,
                ..Default::default()
            });
            links.sort_by_key(|l| l.link);
            links.iter().position(|l| l.link == link).unwrap_or(0)
        }
    };
    &mut links[p]
}

/// What a `Link N:` line says (`what`, after the colon) into `state`: inactive, a speed, or an
/// error counter (added up); whether it said any of these. `bad` makes a malformed value's
/// error.
fn read_link_line(
    state: &mut NvLinkState,
    what: &str,
    bad: impl Fn(String) -> TopologyError,
) -> Result<bool, TopologyError> {
    if what.eq_ignore_ascii_case("<inactive>") || what.eq_ignore_ascii_case("inactive") {
        state.active = Some(false);
        return Ok(true);
    }
    if let Some(speed) = what.strip_suffix("GB/s") {
        let gbps: f64 = speed.trim().parse().map_err(|_| {
            bad(format!(
                "expected a speed like 26.562 GB/s, found {}",
                quoted(what)
            ))
        })?;
        let gbps = crate::model::NVLINK_GBPS_PER_LINK
            .check(gbps)
            .map_err(|e| bad(format!("link speed {e}")))?;
        state.active = Some(true);
        state.gbps = Some(gbps);
        return Ok(true);
    }
    let Some((counter, v)) = what.rsplit_once(':') else {
        return Ok(false);
    };
    if !counter.contains("Errors") {
        return Ok(false);
    }
    let v = number(v).map_err(bad)?;
    let slot = if counter.contains("CRC") {
        &mut state.crc_errors
    } else if counter.contains("Replay") {
        &mut state.replay_errors
    } else if counter.contains("Recovery") {
        &mut state.recovery_errors
    } else {
        return Ok(false);
    };
    if let Some(v) = v {
        *slot = Some(slot.unwrap_or(0) + v);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vbios_from_the_device_captures() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
        let xml = parse_query_xml(&read("h200-2x-device-smi-q.xml"), "q.xml").unwrap();
        let text = parse_query_text(&read("h200-2x-device-smi-q.txt"), "q.txt").unwrap();
        for inv in [&xml, &text] {
            assert_eq!(inv.gpus.len(), 2);
            for g in &inv.gpus {
                assert_eq!(
                    g.vbios.as_deref(),
                    Some("96.00.A5.00.1A"),
                    "{:?}",
                    inv.origin
                );
            }
        }
    }

    #[test]
    fn values_nvidia_smi_prints() {
        assert_eq!(number("16x"), Ok(Some(16)));
        assert_eq!(number("1110 KB/s"), Ok(Some(1110)));
        assert_eq!(number("0 %"), Ok(Some(0)));
        assert_eq!(number("143771 MiB"), Ok(Some(143771)));
        assert_eq!(number("74016910 us"), Ok(Some(74016910)));
        for none in ["N/A", "[N/A]", "[Not Supported]", "Unknown Error", ""] {
            assert_eq!(number(none), Ok(None), "{none:?}");
        }
        assert!(number("abc").is_err());
        assert!(number("5.5").is_err());
        assert_eq!(flag("Not Active"), Ok(Some(false)));
        assert_eq!(flag("Enabled"), Ok(Some(true)));
        assert!(flag("maybe").is_err());
        assert_eq!(sum([None, None]), None);
        assert_eq!(sum([None, Some(2), Some(3)]), Some(5));
    }

    #[test]
    fn kinds_are_told_apart() {
        assert_eq!(
            capture_kind("<?xml version=\"1.0\" ?>\n<nvidia_smi_log>"),
            CaptureKind::QueryXml
        );
        assert_eq!(
            capture_kind("\n==============NVSMI LOG==============\n\nTimestamp : x"),
            CaptureKind::QueryText
        );
        assert_eq!(
            capture_kind("GPU 0: NVIDIA H200 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n"),
            CaptureKind::Nvlink
        );
        assert_eq!(
            capture_kind("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n"),
            CaptureKind::Topo
        );
    }

    #[test]
    fn throttle_names() {
        assert_eq!(
            throttle_reason("clocks_event_reason_hw_thermal_slowdown"),
            Some(ThrottleReason::HwThermalSlowdown)
        );
        assert_eq!(
            throttle_reason("clocks_throttle_reason_sw_power_cap"),
            Some(ThrottleReason::SwPowerCap)
        );
        assert_eq!(
            throttle_reason("SW Power Cap"),
            Some(ThrottleReason::SwPowerCap)
        );
        assert_eq!(
            throttle_reason("Display Clock Setting"),
            Some(ThrottleReason::DisplayClocks)
        );
        assert_eq!(throttle_reason("Idle"), Some(ThrottleReason::GpuIdle));
        assert_eq!(throttle_reason("SW Power Capping"), None);
    }

    #[test]
    fn nvlink_speeds_and_link_numbers_are_bounded() {
        for (speed, why) in [
            ("-5", "-5 GB/s is out of range"),
            ("nan", "NaN GB/s is out of range"),
            ("1e309", "inf GB/s is out of range"),
            ("0", "0 GB/s is out of range"),
            ("1e308", "1e308 GB/s is out of range"),
        ] {
            let s = format!(
                "GPU 0: NVIDIA H200 (UUID: GPU-a)\n\t Link 0: 26.562 GB/s\n\t Link 1: {speed} GB/s\n"
            );
            let e = parse_nvlink(&s, "s.txt").unwrap_err().to_string();
            assert!(e.contains("s.txt:3") && e.contains(why), "{speed}: {e}");
            assert!(e.contains("GPU 0 link 1"), "{e}");
        }
        let s = "GPU 0: NVIDIA H200 (UUID: GPU-a)\n\t Link 4294967295: 26.562 GB/s\n";
        let e = parse_nvlink(s, "s.txt").unwrap_err().to_string();
        assert!(e.contains("link numbers go up to 63"), "{e}");
    }

    #[test]
    fn an_internal_entity_used_thousands_of_times_is_refused_quickly() {
        let big = "x".repeat(10_000);
        let body = "<gpu_name>&e;</gpu_name>\n".repeat(20_000);
        let text = format!(
            "<?xml version=\"1.0\" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\" [<!ENTITY e \"{big}\">]>\n<nvidia_smi_log>\n<gpu id=\"00000000:01:00.0\">\n{body}</gpu>\n</nvidia_smi_log>\n"
        );
        let start = std::time::Instant::now();
        let e = parse_query_xml(&text, "q.xml").unwrap_err().to_string();
        assert!(e.contains("expand to more than 1024 KiB"), "{e}");
        assert!(e.starts_with("q.xml:"), "{e}");
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn nvlink_status_and_errors() {
        let s = "GPU 0: NVIDIA H200 (UUID: GPU-a)\n\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\nGPU 1: NVIDIA H200 (UUID: GPU-b)\n\t Link 0: 26.562 GB/s\n";
        let inv = parse_nvlink(s, "s.txt").unwrap();
        assert_eq!(inv.gpu(0).unwrap().nvlinks_active(), Some(1));
        assert_eq!(inv.gpu(0).unwrap().nvlinks.as_ref().unwrap().len(), 2);
        assert_eq!(inv.gpu(1).unwrap().nvlink_gbps_per_link, Some(26.562));
        let e = "GPU 0: NVIDIA H200 (UUID: GPU-a)\n\t Link 0: Replay Errors: 2\n\t Link 0: Recovery Errors: 0\n\t Link 0: CRC Errors: 7\n";
        let inv = parse_nvlink(e, "e.txt").unwrap();
        let l = &inv.gpu(0).unwrap().nvlinks.as_ref().unwrap()[0];
        assert_eq!(
            (l.replay_errors, l.recovery_errors, l.crc_errors),
            (Some(2), Some(0), Some(7))
        );
        assert_eq!(l.active, None, "-e says nothing about the state");
        let bad = "GPU 0: NVIDIA H200 (UUID: GPU-a)\n\t Link 0: CRC Errors: lots\n";
        let err = parse_nvlink(bad, "bad.txt").unwrap_err().to_string();
        assert!(
            err.starts_with("bad.txt:2:") && err.contains("lots"),
            "{err}"
        );
    }

    #[test]
    fn malformed_xml_names_the_line() {
        let err = parse_query_xml("<nvidia_smi_log>\n<gpu>\n</nvidia_smi_log>", "x.xml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.xml:3:"), "{err}");
        let err = parse_query_xml("<html/>", "x.xml").unwrap_err().to_string();
        assert!(err.contains("nvidia_smi_log"), "{err}");
        let err = parse_query_xml("<nvidia_smi_log></nvidia_smi_log>", "x.xml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no <gpu>"), "{err}");
        let bad = "<nvidia_smi_log><gpu id=\"0\"><pci><replay_counter>many</replay_counter></pci></gpu></nvidia_smi_log>";
        let err = parse_query_xml(bad, "x.xml").unwrap_err().to_string();
        assert!(
            err.contains("replay_counter") && err.contains("many"),
            "{err}"
        );
    }

    #[test]
    fn settings_are_read_from_either_format_and_bad_ones_are_named() {
        let xml = "<nvidia_smi_log><gpu id=\"0\"><persistence_mode>Disabled</persistence_mode>\
                   <power_readings><enforced_power_limit>250.00 W</enforced_power_limit>\
                   <default_power_limit>300.00 W</default_power_limit></power_readings>\
                   <compute_mode>Exclusive_Process</compute_mode></gpu></nvidia_smi_log>";
        let inv = parse_query_xml(xml, "x.xml").unwrap();
        let st = &inv.gpus[0].settings;
        assert_eq!(
            st.power_limit_w,
            Some(250.0),
            "older drivers' enforced limit"
        );
        assert_eq!(st.power_limit_default_w, Some(300.0));
        assert_eq!(st.persistence, Some(false));
        assert_eq!(st.compute_mode, Some(ComputeMode::ExclusiveProcess));
        assert_eq!(st.mig_current, None, "absent is unknown");
        let text = "GPU 00000000:00:06.0\n    GPU Power Readings\n        Current Power Limit   : 1e400 W\n";
        let err = parse_query_text(text, "q.txt").unwrap_err().to_string();
        assert!(
            err.starts_with("q.txt:3:") && err.contains("Current Power Limit"),
            "{err}"
        );
        let bad = "<nvidia_smi_log><gpu id=\"0\"><compute_mode>Sometimes</compute_mode></gpu></nvidia_smi_log>";
        let err = parse_query_xml(bad, "x.xml").unwrap_err().to_string();
        assert!(
            err.contains("compute_mode") && err.contains("Sometimes"),
            "{err}"
        );
    }
}
