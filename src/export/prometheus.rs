//! Live traffic in the Prometheus exposition format (`scalescope watch --prometheus`), encoded
//! by the Prometheus project's Rust client (`prometheus-client`): the text format 0.0.4 by
//! default, OpenMetrics when a scraper asks for it. Names follow Prometheus' conventions (base
//! units as suffixes: `_bytes_per_second`, `_watts`, `_hertz`, `_ratio`); labels `gpu`, `link`,
//! `peer`, `direction`, `reason`, `reading`, `source` (docs/CSV.md lists every series). A
//! reading the GPU did not give has no series, never a 0.

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};

use crate::model::traffic::{
    GpuTraffic, ReadingSource, TrafficSample, WatchHeader, pcie_line_rate_bytes_per_s,
};

/// The content type of [`encode`]'s text (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
/// The content type of [`encode_openmetrics`]'s text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Where the served figures come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// This machine's (or a server's) GPUs, read now.
    Live,
    /// A recording played back (`--replay`).
    Replay,
}

/// What a scrape shows: the watch's header, its latest sample (none before the first interval
/// ends), and how many samples were taken.
pub struct Scrape<'a> {
    pub header: &'a WatchHeader,
    pub latest: Option<&'a TrafficSample>,
    pub samples_total: u64,
    pub mode: Mode,
}

type Labels = Vec<(&'static str, String)>;
type GaugeFamily = Family<Labels, Gauge<f64, AtomicU64>>;

struct Families {
    pcie: GaugeFamily,
    pcie_data: GaugeFamily,
    pcie_share: GaugeFamily,
    nvlink: GaugeFamily,
    sm: GaugeFamily,
    memory_bw: GaugeFamily,
    power: GaugeFamily,
    sm_clock: GaugeFamily,
    memory_clock: GaugeFamily,
    reasons: GaugeFamily,
    processes: GaugeFamily,
    sources: GaugeFamily,
    info: GaugeFamily,
    interval: GaugeFamily,
    samples: Counter,
}

fn registry(f: &Families) -> Registry {
    let mut r = Registry::default();
    let bps = || Unit::Other("bytes_per_second".into());
    r.register_with_unit(
        "scalescope_pcie_link",
        "PCIe traffic of a GPU over the last interval as its source counts it (GPM: packet bytes, headers and framing included), by direction (rx: into the GPU)",
        bps(),
        f.pcie.clone(),
    );
    r.register_with_unit(
        "scalescope_pcie_data",
        "The data in the PCIe traffic over the last interval (GPM's packet bytes less 22 bytes per 256-byte payload and the read requests of host-to-GPU copies; estimated)",
        bps(),
        f.pcie_data.clone(),
    );
    r.register(
        "scalescope_pcie_line_rate_ratio",
        "PCIe link traffic as a share of the link's per-direction line rate (0-1)",
        f.pcie_share.clone(),
    );
    r.register_with_unit(
        "scalescope_nvlink",
        "NVLink traffic of one link of a GPU over the last interval, by direction; peer is the GPU at the far end, or switch",
        bps(),
        f.nvlink.clone(),
    );
    r.register(
        "scalescope_sm_activity_ratio",
        "Share of SM cycles busy over the last interval (GPM), or of time a kernel ran (see scalescope_reading_source_info)",
        f.sm.clone(),
    );
    r.register(
        "scalescope_memory_bandwidth_utilization_ratio",
        "Device-memory bandwidth used as a share of its peak over the last interval",
        f.memory_bw.clone(),
    );
    r.register_with_unit(
        "scalescope_power",
        "Mean power of the GPU over the last interval",
        Unit::Other("watts".into()),
        f.power.clone(),
    );
    r.register_with_unit(
        "scalescope_sm_clock",
        "SM clock at the end of the interval",
        Unit::Other("hertz".into()),
        f.sm_clock.clone(),
    );
    r.register_with_unit(
        "scalescope_memory_clock",
        "Memory clock at the end of the interval",
        Unit::Other("hertz".into()),
        f.memory_clock.clone(),
    );
    r.register(
        "scalescope_clock_event_reason_active",
        "1 for each clock event reason (throttle reason) active at the end of the interval",
        f.reasons.clone(),
    );
    r.register(
        "scalescope_gpu_processes",
        "Processes using the GPU at the end of the interval",
        f.processes.clone(),
    );
    r.register(
        "scalescope_reading_source_info",
        "Where each reading of a GPU comes from (gpm, nvlink_counter, pcie_window, utilization, energy_counter, power_reading)",
        f.sources.clone(),
    );
    r.register(
        "scalescope_watch_info",
        "The watch: live or replay, its host and scalescope's version",
        f.info.clone(),
    );
    r.register_with_unit(
        "scalescope_watch_interval",
        "The interval the latest sample covers",
        Unit::Seconds,
        f.interval.clone(),
    );
    r.register(
        "scalescope_watch_samples",
        "Samples taken (or played back) since the watch started",
        f.samples.clone(),
    );
    r
}

fn set(family: &GaugeFamily, labels: Labels, value: Option<f64>) {
    if let Some(v) = value.filter(|v| v.is_finite()) {
        family.get_or_create(&labels).set(v);
    }
}

fn gpu_series(f: &Families, header: &WatchHeader, g: &GpuTraffic) {
    let gpu = || ("gpu", g.gpu.to_string());
    let line = pcie_line_rate_bytes_per_s(&header.topology, g.gpu).filter(|r| *r > 0.0);
    let (rx_data, tx_data) = g.pcie_data_bytes_per_s();
    for (direction, value, data) in [
        ("rx", g.pcie_rx_bytes_per_s, rx_data),
        ("tx", g.pcie_tx_bytes_per_s, tx_data),
    ] {
        let labels = vec![gpu(), ("direction", direction.to_string())];
        set(&f.pcie, labels.clone(), value);
        set(&f.pcie_data, labels.clone(), data);
        set(&f.pcie_share, labels, value.zip(line).map(|(v, r)| v / r));
    }
    for l in &g.nvlinks {
        for (direction, value) in [("rx", l.rx_bytes_per_s), ("tx", l.tx_bytes_per_s)] {
            let labels = vec![
                gpu(),
                ("link", l.link.to_string()),
                ("peer", l.peer.label()),
                ("direction", direction.to_string()),
            ];
            set(&f.nvlink, labels, value);
        }
    }
    set(&f.sm, vec![gpu()], g.sm_activity_pct.map(|p| p / 100.0));
    set(
        &f.memory_bw,
        vec![gpu()],
        g.memory_bw_pct.map(|p| p / 100.0),
    );
    set(&f.power, vec![gpu()], g.power_w);
    set(
        &f.sm_clock,
        vec![gpu()],
        g.sm_clock_mhz.map(|m| f64::from(m) * 1e6),
    );
    set(
        &f.memory_clock,
        vec![gpu()],
        g.memory_clock_mhz.map(|m| f64::from(m) * 1e6),
    );
    for reason in g.throttle.iter().flatten() {
        set(
            &f.reasons,
            vec![gpu(), ("reason", reason.id().to_string())],
            Some(1.0),
        );
    }
    set(
        &f.processes,
        vec![gpu()],
        g.processes.as_ref().map(|p| p.len() as f64),
    );
    let sources: [(&str, Option<ReadingSource>); 5] = [
        ("pcie", g.pcie_source),
        ("nvlink", g.nvlink_source),
        ("sm_activity", g.sm_source),
        ("memory_bandwidth", g.memory_bw_source),
        ("power", g.power_source),
    ];
    for (reading, source) in sources {
        if let Some(s) = source {
            set(
                &f.sources,
                vec![
                    gpu(),
                    ("reading", reading.to_string()),
                    ("source", s.id().to_string()),
                ],
                Some(1.0),
            );
        }
    }
}

fn families(scrape: &Scrape) -> Families {
    let f = Families {
        pcie: GaugeFamily::default(),
        pcie_data: GaugeFamily::default(),
        pcie_share: GaugeFamily::default(),
        nvlink: GaugeFamily::default(),
        sm: GaugeFamily::default(),
        memory_bw: GaugeFamily::default(),
        power: GaugeFamily::default(),
        sm_clock: GaugeFamily::default(),
        memory_clock: GaugeFamily::default(),
        reasons: GaugeFamily::default(),
        processes: GaugeFamily::default(),
        sources: GaugeFamily::default(),
        info: GaugeFamily::default(),
        interval: GaugeFamily::default(),
        samples: Counter::default(),
    };
    set(
        &f.info,
        vec![
            (
                "mode",
                match scrape.mode {
                    Mode::Live => "live",
                    Mode::Replay => "replay",
                }
                .to_string(),
            ),
            ("host", scrape.header.host.clone().unwrap_or_default()),
            ("version", scrape.header.scalescope_version.clone()),
        ],
        Some(1.0),
    );
    f.samples.inc_by(scrape.samples_total);
    if let Some(s) = scrape.latest {
        set(&f.interval, Vec::new(), Some(s.interval_s));
        for g in &s.gpus {
            gpu_series(&f, scrape.header, g);
        }
    }
    f
}

/// The scrape in the Prometheus text format 0.0.4.
pub fn encode(scrape: &Scrape) -> String {
    let f = families(scrape);
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry(&f));
    out
}

/// The scrape in the OpenMetrics text format (for scrapers that ask for it).
pub fn encode_openmetrics(scrape: &Scrape) -> String {
    let f = families(scrape);
    let mut out = String::new();
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry(&f));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::traffic::{LinkPeer, NvLinkTraffic};
    use crate::model::{Gpu, Topology, TopologySource};

    fn header() -> WatchHeader {
        let mut t = Topology::new(TopologySource::Imported { paths: vec![] });
        for index in 0..2 {
            let mut g = Gpu {
                index,
                ..Default::default()
            };
            g.pcie.gen_current = Some(5);
            g.pcie.width_current = Some(16);
            t.gpus.push(g);
        }
        WatchHeader::new(t, vec![0, 1], 1.0, "2026-11-26T00:00:00Z".into())
    }

    #[test]
    fn series_carry_their_labels_and_absent_readings_have_none() {
        let h = header();
        let mut g0 = GpuTraffic::new(0);
        g0.pcie_rx_bytes_per_s = Some(5e10);
        g0.pcie_source = Some(ReadingSource::Gpm);
        g0.nvlinks.push(NvLinkTraffic {
            link: 3,
            peer: LinkPeer::Gpu(1),
            rx_bytes_per_s: None,
            tx_bytes_per_s: Some(2e10),
        });
        g0.sm_activity_pct = Some(50.0);
        let g1 = GpuTraffic::new(1);
        let sample = TrafficSample {
            t_s: 1.0,
            interval_s: 1.0,
            unix_s: None,
            gpus: vec![g0, g1],
        };
        let text = encode(&Scrape {
            header: &h,
            latest: Some(&sample),
            samples_total: 1,
            mode: Mode::Replay,
        });
        assert!(
            text.contains("# TYPE scalescope_pcie_link_bytes_per_second gauge"),
            "{text}"
        );
        assert!(
            text.contains(
                r#"scalescope_pcie_link_bytes_per_second{gpu="0",direction="rx"} 50000000000"#
            ),
            "{text}"
        );
        // 256 of every 278 packet bytes are data.
        assert!(
            text.contains(
                r#"scalescope_pcie_data_bytes_per_second{gpu="0",direction="rx"} 46043165467"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"scalescope_nvlink_bytes_per_second{gpu="0",link="3",peer="1",direction="tx"} 20000000000"#),
            "{text}"
        );
        assert!(
            text.contains(r#"scalescope_sm_activity_ratio{gpu="0"} 0.5"#),
            "{text}"
        );
        assert!(text.contains("scalescope_watch_samples_total 1"), "{text}");
        assert!(text.contains(r#"mode="replay""#), "{text}");
        // GPU 1 gave nothing and GPU 0 no receive on its NVLink and no transmit on PCIe.
        assert!(!text.contains(r#"gpu="1""#), "{text}");
        assert!(!text.contains(r#"peer="1",direction="rx""#), "{text}");
        assert!(!text.contains(r#"gpu="0",direction="tx"} "#), "{text}");
        // Share of the PCIe Gen5 x16 line rate.
        assert!(
            text.contains("scalescope_pcie_line_rate_ratio{gpu=\"0\",direction=\"rx\"} 0.79"),
            "{text}"
        );
    }
}
