//! `scalescope watch --csv`: one row per GPU per interval, then one row per NVLink of that GPU
//! (its `link` and `peer` cells filled, the GPU-wide cells empty). Rates in bytes per second;
//! an empty cell is a reading the GPU did not give (docs/CSV.md).

use crate::model::traffic::{GpuTraffic, ReadingSource, TrafficSample};

/// The header row.
pub const COLUMNS: [&str; 23] = [
    "t_s",
    "interval_s",
    "gpu",
    "link",
    "peer",
    "pcie_rx_bytes_per_s",
    "pcie_tx_bytes_per_s",
    "pcie_rx_data_bytes_per_s",
    "pcie_tx_data_bytes_per_s",
    "nvlink_rx_bytes_per_s",
    "nvlink_tx_bytes_per_s",
    "sm_activity_pct",
    "memory_bw_pct",
    "power_w",
    "sm_clock_mhz",
    "memory_clock_mhz",
    "clock_event_reasons",
    "processes",
    "pcie_source",
    "nvlink_source",
    "sm_source",
    "memory_bw_source",
    "power_source",
];

fn num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| {
            // Whole bytes for rates, two decimals for the rest.
            if v.abs() >= 1e3 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .unwrap_or_default()
}

fn src(s: Option<ReadingSource>) -> String {
    s.map(|s| s.id().to_string()).unwrap_or_default()
}

fn gpu_row(s: &TrafficSample, g: &GpuTraffic) -> Vec<String> {
    let (rx_data, tx_data) = g.pcie_data_bytes_per_s();
    vec![
        format!("{:.3}", s.t_s),
        format!("{:.3}", s.interval_s),
        g.gpu.to_string(),
        String::new(),
        String::new(),
        num(g.pcie_rx_bytes_per_s),
        num(g.pcie_tx_bytes_per_s),
        num(rx_data),
        num(tx_data),
        num(g.nvlink_rx_bytes_per_s()),
        num(g.nvlink_tx_bytes_per_s()),
        num(g.sm_activity_pct),
        num(g.memory_bw_pct),
        num(g.power_w),
        g.sm_clock_mhz.map(|m| m.to_string()).unwrap_or_default(),
        g.memory_clock_mhz
            .map(|m| m.to_string())
            .unwrap_or_default(),
        g.throttle
            .as_ref()
            .map(|r| r.iter().map(|r| r.id()).collect::<Vec<_>>().join(";"))
            .unwrap_or_default(),
        g.processes
            .as_ref()
            .map(|p| {
                p.iter()
                    .map(|p| p.pid.to_string())
                    .collect::<Vec<_>>()
                    .join(";")
            })
            .unwrap_or_default(),
        src(g.pcie_source),
        src(g.nvlink_source),
        src(g.sm_source),
        src(g.memory_bw_source),
        src(g.power_source),
    ]
}

/// The rows of one sample: each GPU's row, then its links' rows.
pub fn rows(s: &TrafficSample) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for g in &s.gpus {
        out.push(gpu_row(s, g));
        for l in &g.nvlinks {
            let mut row = vec![String::new(); COLUMNS.len()];
            row[0] = format!("{:.3}", s.t_s);
            row[1] = format!("{:.3}", s.interval_s);
            row[2] = g.gpu.to_string();
            row[3] = l.link.to_string();
            row[4] = l.peer.label();
            row[9] = num(l.rx_bytes_per_s);
            row[10] = num(l.tx_bytes_per_s);
            row[19] = src(g.nvlink_source);
            out.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::traffic::{LinkPeer, NvLinkTraffic};

    #[test]
    fn rows_leave_absent_readings_empty_and_name_links() {
        let mut g = GpuTraffic::new(1);
        g.pcie_rx_bytes_per_s = Some(5.5e10);
        g.pcie_source = Some(ReadingSource::Gpm);
        g.nvlink_source = Some(ReadingSource::Gpm);
        g.nvlinks.push(NvLinkTraffic {
            link: 2,
            peer: LinkPeer::Switch,
            rx_bytes_per_s: Some(1e9),
            tx_bytes_per_s: None,
        });
        let s = TrafficSample {
            t_s: 2.0,
            interval_s: 1.0,
            unix_s: None,
            gpus: vec![g],
        };
        let rows = rows(&s);
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.len() == COLUMNS.len()));
        let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
        assert_eq!(rows[0][col("pcie_rx_bytes_per_s")], "55000000000");
        assert_eq!(
            rows[0][col("pcie_tx_bytes_per_s")],
            "",
            "no transmit reading: empty, not 0"
        );
        // 256 of every 278 packet bytes are data.
        assert_eq!(rows[0][col("pcie_rx_data_bytes_per_s")], "50647482014");
        assert_eq!(rows[0][col("nvlink_rx_bytes_per_s")], "1000000000");
        assert_eq!(rows[0][col("pcie_source")], "gpm");
        assert_eq!((rows[1][3].as_str(), rows[1][4].as_str()), ("2", "switch"));
        assert_eq!(rows[1][col("nvlink_tx_bytes_per_s")], "");
        assert_eq!(rows[1][col("nvlink_source")], "gpm");
    }
}
