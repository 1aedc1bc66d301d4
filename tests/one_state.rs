//! One machine state (issue V): a catalog file whose `[[state]]` puts GPU 3 of an HGX H200 at
//! PCIe Gen4 x8 with 12 of its 18 NVLinks up, run through `--bench --modeled --catalog FILE`,
//! tells one story — health, bandwidth.csv, the P2P matrix, the collectives, the topology in
//! report.json, the key figures and `fleet report` all see GPU 3 as stated.

mod common;

use std::path::{Path, PathBuf};

use common::{csv_rows, run};
use scalescope::health::{CheckId, Verdict};
use scalescope::model::{CollectiveOp, LinkKind, Source, Status, TestId};
use scalescope::report::summary::key_figures;

const STATE: &str =
    "\n[[state]]\ngpus = [3]\npcie_current_gen = 4\npcie_current_width = 8\nactive_nvlinks = 12\n";

/// hgx-h200's catalog file, with `[[state]]` appended when `degraded`.
fn catalog_file(dir: &Path, degraded: bool) -> PathBuf {
    let design = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/hardware/hgx-h200.toml"
    ))
    .unwrap();
    let (name, text) = if degraded {
        ("degraded.toml", format!("{design}{STATE}"))
    } else {
        ("healthy.toml", design)
    };
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file
}

/// `--bench --modeled --catalog FILE --out OUT`.
fn bench(file: &Path, out: &Path) {
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        &file.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert!(
        out.join("report.json").exists(),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

/// The 256 MiB-or-larger figure of `test` from `src` to `dst` in bandwidth.csv.
fn csv_gbps(
    rows: &[std::collections::BTreeMap<String, String>],
    test: &str,
    src: &str,
    dst: &str,
) -> f64 {
    rows.iter()
        .filter(|r| r["test"] == test && r["src"] == src && r["dst"] == dst)
        .map(|r| r["median_gbps"].parse::<f64>().unwrap())
        .next_back()
        .unwrap_or_else(|| panic!("no {test} {src}→{dst} in bandwidth.csv"))
}

#[test]
fn a_stated_degraded_gpu_is_one_story_across_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (healthy, degraded) = (dir.path().join("healthy"), dir.path().join("degraded"));
    bench(&catalog_file(dir.path(), false), &healthy);
    bench(&catalog_file(dir.path(), true), &degraded);
    let r = scalescope::report::load(&degraded.join("report.json")).unwrap();

    // Health FAILs GPU 3's host copy, with the figure modeled on the stated link.
    let health = r.health.as_ref().expect("health");
    let h2d = health
        .checks
        .iter()
        .find(|c| c.check == CheckId::Copy(TestId::H2d) && c.subject == "GPU 3")
        .expect("h2d GPU 3");
    assert_eq!(h2d.verdict, Verdict::Fail, "{h2d:?}");
    let health_h2d = h2d.figure.unwrap();
    // Judged against the design (Gen5 x16): expected stays the healthy machine's figure.
    assert!((h2d.expected.unwrap() - 55.4).abs() < 0.1, "{h2d:?}");

    // bandwidth.csv: GPU 3's host copies are the degraded figure health shows, ≈ Gen4 x8's line
    // rate × the Gen4 efficiency; the other GPUs' are the design's.
    let rows = csv_rows(&degraded.join("bandwidth.csv"));
    let h2d3 = csv_gbps(&rows, "h2d", "host", "3");
    let d2h3 = csv_gbps(&rows, "d2h", "3", "host");
    let h2d0 = csv_gbps(&rows, "h2d", "host", "0");
    assert!((h2d3 - health_h2d).abs() < 0.01, "{h2d3} vs {health_h2d}");
    let gen4_x8 = scalescope::model::pcie_rate_gbps(4, 8).unwrap();
    assert!(
        h2d3 < gen4_x8 && h2d3 > 0.7 * gen4_x8,
        "{h2d3} vs {gen4_x8}"
    );
    assert!(d2h3 < gen4_x8 && d2h3 > 0.7 * gen4_x8, "{d2h3}");
    assert!((h2d0 - 55.4).abs() < 0.1, "{h2d0}");

    // P2P to and from GPU 3: 12/18 of a healthy pair's (the model is per link).
    for (src, dst) in [("3", "0"), ("0", "3"), ("7", "3")] {
        let slow = csv_gbps(&rows, "p2p_read_ce", src, dst);
        let fast = csv_gbps(&rows, "p2p_read_ce", "0", "1");
        assert!(
            (slow / fast - 12.0 / 18.0).abs() < 0.01,
            "{src}→{dst}: {slow} vs {fast}"
        );
    }
    let b = r.bandwidth.as_ref().unwrap();
    assert!(b.results.iter().all(|x| x.source == Source::Modeled));
    assert!(b.results.iter().all(|x| x.status == Status::Ok));

    // The topology: GPU 3's pairs are NV12 at 12/18 of the rate, the others NV18; its PCIe link
    // is the stated one.
    let t = &r.topology;
    for peer in [0, 1, 7] {
        let l = t.link(3, peer).unwrap();
        assert_eq!(l.kind, Some(LinkKind::Nv(12)), "{l:?}");
        let full = t.link(0, 1).unwrap().line_rate.as_ref().unwrap().gbps;
        let rate = l.line_rate.as_ref().unwrap().gbps;
        assert!((rate / full - 12.0 / 18.0).abs() < 1e-6, "{l:?}");
    }
    assert_eq!(t.link(0, 1).unwrap().kind, Some(LinkKind::Nv(18)));
    let g3 = t.gpu(3).unwrap();
    assert_eq!(g3.nvlinks_active, Some(12));
    assert_eq!(
        (g3.pcie.gen_current, g3.pcie.width_current),
        (Some(4), Some(8))
    );
    let links = csv_rows(&degraded.join("links.csv"));
    assert!(
        links
            .iter()
            .any(|l| l["gpu_a"] == "0" && l["gpu_b"] == "3" && l["nvlinks"] == "12"),
        "{links:?}"
    );

    // Collectives: the modeled all-reduce is bound by GPU 3's links.
    let busbw = |r: &scalescope::report::Report| {
        let c = r.collectives.as_ref().unwrap();
        c.results
            .iter()
            .filter(|x| x.op == CollectiveOp::AllReduce)
            .filter_map(|x| x.busbw_gbps)
            .fold(0.0, f64::max)
    };
    let h = scalescope::report::load(&healthy.join("report.json")).unwrap();
    assert!(
        (busbw(&r) / busbw(&h) - 12.0 / 18.0).abs() < 0.05,
        "{} vs {}",
        busbw(&r),
        busbw(&h)
    );

    // Key figures: the least host copy is GPU 3's.
    let figures = key_figures(&r);
    let h2d_key = figures
        .iter()
        .find(|f| f.name.starts_with("H2D"))
        .expect("H2D key figure");
    assert!(
        h2d_key.detail.contains(&format!("least {:.1} GB/s", h2d3)),
        "{h2d_key:?}"
    );
    let p2p_key = figures
        .iter()
        .find(|f| f.name.starts_with("P2P read"))
        .expect("P2P key figure");
    let least_p2p = csv_gbps(&rows, "p2p_read_ce", "3", "0");
    assert!(
        p2p_key
            .detail
            .contains(&format!("least {least_p2p:.1} GB/s")),
        "{p2p_key:?}"
    );
}

/// `fleet report` over healthy nodes and the degraded one names GPU 3's bandwidth as an outlier,
/// not only its health. (Three nodes: by the median-absolute-deviation rule, two nodes are each
/// as far from their median as the other, so neither can be an outlier.)
#[test]
fn fleet_report_names_the_stated_gpu_as_a_bandwidth_outlier() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    bench(&catalog_file(dir.path(), false), &nodes.join("node-a"));
    bench(&catalog_file(dir.path(), false), &nodes.join("node-b"));
    bench(&catalog_file(dir.path(), true), &nodes.join("node-c"));
    let out = dir.path().join("fleet");
    let r = run(&[
        "fleet",
        "report",
        &nodes.join("node-a").display().to_string(),
        &nodes.join("node-b").display().to_string(),
        &nodes.join("node-c").display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("fleet.json")).unwrap()).unwrap();
    let node = |name: &str| common::fleet::node(&json, name).clone();
    let outliers = |name: &str| -> Vec<serde_json::Value> {
        node(name)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "outlier")
            .cloned()
            .collect()
    };
    let c = outliers("node-c");
    for field in ["h2d", "d2h"] {
        assert!(
            c.iter()
                .any(|f| f["field"] == field && f["gpu"] == 3 && f["verdict"] == "fail"),
            "{field} GPU 3 not an outlier: {c:#?}"
        );
    }
    assert!(
        c.iter()
            .any(|f| f["field"] == "p2p_read_ce" && f["detail"].as_str().unwrap().contains('3')),
        "{c:#?}"
    );
    // Every outlier involves GPU 3 or the whole machine (a collective over every GPU).
    assert!(
        c.iter().all(|f| f["gpu"] == 3
            || f["peer"] == 3
            || f["detail"].as_str().unwrap().contains("8 GPUs")),
        "{c:#?}"
    );
    assert!(outliers("node-a").is_empty() && outliers("node-b").is_empty());
    assert!(r.stdout.contains("node-c"), "{}", r.stdout);
}
