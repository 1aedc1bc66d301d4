//! The hardware catalog: every embedded machine loads, and the key figures of each match what
//! its vendor documents.

mod common;

use scalescope::model::{Blame, LinkKind, P2pStatus, TopologySource};
use scalescope::topology::TopologyError;
use scalescope::topology::catalog::{entries, load, parse_entry};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.01
}

#[test]
fn every_entry_loads() {
    let list = entries();
    assert!(list.len() >= 6, "{list:?}");
    for e in &list {
        let t = load(&e.id).unwrap_or_else(|err| panic!("{}: {err}", e.id));
        assert_eq!(
            t.source,
            TopologySource::Catalog {
                id: e.id.clone(),
                name: e.name.clone()
            }
        );
        assert!(!e.summary.is_empty());
    }
}

#[test]
fn dgx_h100() {
    let t = load("dgx-h100").unwrap();
    assert_eq!(t.gpus.len(), 8);
    assert_eq!(t.links.len(), 28);
    assert!(t.links.iter().all(|l| l.kind == Some(LinkKind::Nv(18))));
    let per_link = t.gpus[0].nvlink_gbps_per_link.unwrap();
    for l in &t.links {
        let rate = l.line_rate.as_ref().unwrap();
        assert!(close(rate.gbps, 18.0 * per_link), "{rate:?}");
        assert_eq!(l.nvlink_generation, Some(4));
    }
    assert!(close(
        t.link(0, 7).unwrap().line_rate.as_ref().unwrap().gbps,
        478.116
    ));
    assert_eq!(t.nics.len(), 8);
    assert!(t.nics.iter().all(|n| n.line_rate_gbps == Some(50.0)));
    let groups = t.numa_groups();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0], (Some(0), vec![0, 1, 2, 3]));
    assert_eq!(groups[1], (Some(1), vec![4, 5, 6, 7]));
    assert_eq!(
        t.gpus[0].pcie.line_rate_gbps().map(|r| r > 63.0),
        Some(true)
    );
    // Each GPU's paired NIC is PIX, the others on its socket NODE, the rest SYS.
    assert_eq!(t.nic_link(0, 0), Some(LinkKind::Pix));
    assert_eq!(t.nic_link(1, 0), Some(LinkKind::Node));
    assert_eq!(t.nic_link(4, 0), Some(LinkKind::Sys));
    assert_eq!(t.p2p(3, 6).unwrap().caps.atomics, Some(P2pStatus::Ok));
    assert!(t.notes.iter().any(|n| n.text.contains("not a measurement")));
}

#[test]
fn hgx_a100() {
    let t = load("hgx-a100").unwrap();
    assert_eq!(t.gpus.len(), 8);
    assert!(t.links.iter().all(|l| l.kind == Some(LinkKind::Nv(12))));
    assert!(close(
        t.link(2, 5).unwrap().line_rate.as_ref().unwrap().gbps,
        300.0
    ));
    assert_eq!(t.nics.len(), 8);
    assert!(t.nics.iter().all(|n| n.line_rate_gbps == Some(25.0)));
    assert_eq!(t.gpus[0].pcie.gen_max, Some(4));
}

#[test]
fn l40s_pcie_server() {
    let t = load("l40s-8x-pcie").unwrap();
    assert_eq!(t.gpus.len(), 8);
    let kinds: Vec<LinkKind> = t.links.iter().filter_map(|l| l.kind).collect();
    for k in [LinkKind::Pix, LinkKind::Node, LinkKind::Sys] {
        assert!(kinds.contains(&k), "no {k} cell");
    }
    assert!(kinds.iter().all(|k| k.nvlinks().is_none()));
    let rate = t.link(0, 5).unwrap().line_rate.clone().unwrap();
    assert!(close(rate.gbps, 31.508), "{rate:?}");
    assert_eq!(rate.basis, "PCIe Gen4 x16");
    assert_eq!(t.p2p(0, 3).unwrap().caps.read, Some(P2pStatus::Ok));
    assert_eq!(
        t.p2p(0, 4).unwrap().caps.read,
        None,
        "cross-socket P2P is not documented"
    );
}

#[test]
fn rtx4090_has_no_p2p() {
    let t = load("rtx4090-4x-pcie").unwrap();
    assert_eq!(t.gpus.len(), 4);
    for p in &t.p2p {
        assert!(p.caps.read.is_some_and(|s| s != P2pStatus::Ok), "{p:?}");
        assert!(p.caps.write.is_some_and(|s| s != P2pStatus::Ok), "{p:?}");
    }
    assert_eq!(t.numa_groups().len(), 1);
}

#[test]
fn h100_pcie_bridge_is_300_gbps() {
    let t = load("h100-pcie-2x-nvlink").unwrap();
    let link = t.link(0, 1).unwrap();
    assert_eq!(link.kind, Some(LinkKind::Nv(12)));
    assert!(close(link.line_rate.as_ref().unwrap().gbps, 300.0));
    assert_eq!(t.gpus[0].pcie.gen_max, Some(5));
    assert_eq!(t.gpus[0].numa_node, None, "the host is not documented");
}

#[test]
fn h200_reference_machine_matches_anchors() {
    let t = load("h200-2x-sxm").unwrap();
    let rate = t.link(0, 1).unwrap().line_rate.clone().unwrap();
    assert!(close(rate.gbps, 478.116), "{rate:?}");
    assert!(rate.basis.contains("26.562"));
    assert_eq!(t.gpus[1].pci_bus_id.as_deref(), Some("00000000:00:07.0"));
    assert_eq!(t.gpus[0].cpu_affinity.as_deref(), Some("0-31"));
}

#[test]
fn lookup_by_prefix_and_case() {
    assert_eq!(load("dgx-h").unwrap(), load("dgx-h100").unwrap());
    assert_eq!(load("DGX-B").unwrap(), load("dgx-b200").unwrap());
    // Two DGX entries now: "DGX" alone names neither.
    assert!(load("DGX").is_err());
    assert_eq!(load("rtx4").unwrap(), load("rtx4090-4x-pcie").unwrap());
    assert_eq!(
        load("RTX-PRO").unwrap(),
        load("rtx-pro-6000-8x-server").unwrap()
    );
    assert_eq!(load("H200-2X-SXM").unwrap(), load("h200-2x-sxm").unwrap());
    assert_eq!(load("h200-nvl").unwrap(), load("h200-nvl-8x-pcie").unwrap());
}

#[test]
fn ambiguous_or_unknown_names_list_the_ids() {
    for name in ["h", "nonesuch", ""] {
        match load(name) {
            Err(TopologyError::UnknownCatalogEntry { name: n, known }) => {
                assert_eq!(n, name);
                for e in entries() {
                    assert!(known.contains(&e.id), "{known}");
                }
            }
            other => panic!("{name:?}: expected UnknownCatalogEntry, got {other:?}"),
        }
    }
}

#[test]
fn bad_text_is_bad_catalog() {
    let err = parse_entry("broken.toml", "[machine]\nid = \"x\"\n").unwrap_err();
    assert!(matches!(err, TopologyError::BadCatalog { .. }), "{err:?}");
    let shown = err.to_string();
    assert!(shown.starts_with("catalog file broken.toml:"), "{shown}");
    assert!(!err.is_bad_input());
}

/// Blackwell (issue Q): NVLink 5's per-GPU line rate, hand-checked — 18 links × 50 GB/s per
/// direction = 900 GB/s, twice Hopper's 18 × 25 (NVML's 26.562 on H100/H200).
#[test]
fn nvlink5_boards_and_racks_carry_900_gbs_per_gpu() {
    for id in ["dgx-b200", "hgx-b300", "gb200-nvl72", "gb300-nvl72"] {
        let t = load(id).unwrap();
        let rate = t.link(0, 1).unwrap().line_rate.clone().unwrap();
        assert!(close(rate.gbps, 18.0 * 50.0), "{id}: {rate:?}");
        assert_eq!(t.gpus[0].nvlink_generation, Some(5), "{id}");
        let last = t.gpus.len() - 1;
        // Every pair, the first and the last GPU of a 72-GPU rack included, is NV18.
        assert_eq!(
            t.link(0, last).unwrap().kind,
            Some(LinkKind::Nv(18)),
            "{id}"
        );
        assert_eq!(t.nics.len(), t.gpus.len(), "{id}: one NIC per GPU");
    }
    assert_eq!(load("gb200-nvl72").unwrap().gpus.len(), 72);
}

/// The GB200/GB300 GPU reaches its Grace CPU over NVLink-C2C: 900 GB/s bidirectional per
/// superchip = 450 GB/s per direction, shared by its two GPUs. Host tests compare against it,
/// not against PCIe Gen5 x16's 63 GB/s; a PCIe board keeps its PCIe line rate.
#[test]
fn c2c_is_the_host_line_rate_of_grace_blackwell() {
    use scalescope::bench::runner::line_rate;
    use scalescope::model::{Endpoint, Shape};
    let t = load("gb200-nvl72").unwrap();
    let h = t.gpus[5].host_link.clone().expect("a C2C host link");
    assert_eq!(h.kind, "NVLink-C2C");
    assert!(close(h.gbps, 900.0 / 2.0));
    assert_eq!(h.shared_by, 2);
    let h2d = Shape::HostDevice {
        to_device: true,
        pinned: true,
        bidir: false,
    };
    let r = line_rate(&t, h2d, Endpoint::Host, Endpoint::Gpu(5), &[5]).unwrap();
    assert!(close(r, 450.0), "{r}");
    let b = load("dgx-b200").unwrap();
    assert!(b.gpus[0].host_link.is_none());
    let r = line_rate(&b, h2d, Endpoint::Host, Endpoint::Gpu(0), &[0]).unwrap();
    assert!(close(r, 63.015), "{r}");
}

/// A 72-GPU all-reduce in one NVLink domain, hand-checked: nccl-tests' busbw = algbw ×
/// 2(n−1)/n can never exceed the GPU's NVLink line rate (900 GB/s per direction). The model is
/// the 8× H200 curve at the same bus bandwidth (the bundled report: 1 GiB in 5213.1 µs; its
/// latency 79.75 µs, the mean of its times from 32 B to 256 KiB), 40 µs more latency per
/// doubling beyond 8 GPUs, and the time beyond the latency scaled by the bus factors (72 GPUs'
/// 2·71/72 over 8's 2·7/8) and the line rates (478.116 ÷ 900) → busbw ≈ 646 GB/s.
#[test]
fn a_72_gpu_all_reduce_stays_under_the_nvlink5_line_rate() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("c.csv");
    let out = common::scalescope()
        .args([
            "bench",
            "collectives",
            "--modeled",
            "--catalog",
            "gb200-nvl72",
            "--sizes",
            "1G",
            "--csv",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let h = rd.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let row = rd.records().next().unwrap().unwrap();
    assert_eq!(&row[col("n_gpus")], "72");
    let busbw: f64 = row[col("busbw_gbps")].parse().unwrap();
    let bytes = (1u64 << 30) as f64;
    let factor = 2.0 * 71.0 / 72.0;
    let latency = 79.75e-6 + 40e-6 * 9f64.log2();
    let t = latency + (5213.1e-6 - 79.75e-6) * (factor / 1.75) * 478.116 / 900.0;
    let want = bytes / t / 1e9 * factor;
    assert!(busbw < 900.0, "{busbw}");
    assert!((busbw - want).abs() < want * 0.01, "{busbw} vs {want:.1}");
}

/// What one GPU's own NVLinks carry per direction, GB/s, from the vendors' datasheets (total
/// bidirectional NVLink bandwidth / 2), with NVML's per-link signalling rate where it reads
/// above the datasheet's (26.5625 GB/s a link on H100/H200, docs/VERIFIED.md): A100 600 GB/s
/// bidirectional, H100/H200 SXM 900, the H100 PCIe NVLink bridge 600, H200 NVL 900,
/// Blackwell 1.8 TB/s. `None`: a GPU without NVLink.
fn own_nvlink_gbps(model: &str) -> Option<f64> {
    let table: [(&str, f64); 6] = [
        ("A100", 300.0),
        ("H100 PCIe", 12.0 * 26.5625),
        ("H100", 18.0 * 26.5625),
        ("H200", 18.0 * 26.5625),
        ("B200", 900.0),
        ("B300", 900.0),
    ];
    let model = model.replace("NVIDIA ", "").replace('-', " ");
    table
        .iter()
        .find(|(m, _)| model.contains(m))
        .map(|&(_, r)| r)
}

/// Physics (issue U's "never beat physics"): no modeled copy between GPUs of any catalog machine,
/// or of an imported 8× NVSwitch capture, moves more per direction than the GPU's own NVLinks
/// carry — a fan into one GPU from seven peers through NVSwitch is capped by that GPU's links,
/// not the sum of seven pair bonds (it read 1,740.9 GB/s on HGX A100 before the cap learned a
/// bond's per-link rate).
#[test]
fn no_modeled_copy_between_gpus_beats_the_gpus_own_nvlinks() {
    let dir = tempfile::tempdir().unwrap();
    let mut sources: Vec<(String, Vec<String>)> = entries()
        .iter()
        .filter(|e| load(&e.id).unwrap().gpus.len() <= 8)
        .map(|e| (e.id.clone(), vec!["--catalog".into(), e.id.clone()]))
        .collect();
    let rack_gpus = "0,1,2,3,68,69,70,71".to_string();
    sources.push((
        "gb200-nvl72".into(),
        vec![
            "--catalog".into(),
            "gb200-nvl72".into(),
            "--gpus".into(),
            rack_gpus,
        ],
    ));
    for capture in ["h200-8x-device-topo-m.txt", "dgx-h100-topo-m.txt"] {
        sources.push((
            capture.into(),
            vec!["--import".into(), common::data_path(capture)],
        ));
    }
    let mut checked = 0;
    for (name, how) in sources {
        let json = dir.path().join(format!("{name}.json"));
        let mut args = vec!["bench", "bandwidth", "--modeled", "--tests"];
        args.push(
            "p2p_read_ce,p2p_write_ce,p2p_bidir_ce,p2p_read_sm,all_to_one,one_to_all,all_pairs",
        );
        args.extend(how.iter().map(String::as_str));
        args.extend(["--json", json.to_str().unwrap()]);
        let r = common::run(&args);
        assert_eq!(r.code, Some(0), "{name}: {}", r.stderr);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let names: Vec<String> = report["topology"]["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap_or("").to_string())
            .collect();
        for row in report["results"].as_array().unwrap() {
            let Some(gbps) = row["median_gbps"].as_f64() else {
                continue;
            };
            let test = row["test"].as_str().unwrap();
            let gpu: usize = match row["dst"].as_str().unwrap().parse() {
                Ok(g) => g,
                Err(_) => row["src"].as_str().unwrap().parse().unwrap(),
            };
            let model = names.get(gpu).map(String::as_str).unwrap_or("");
            let Some(own) = own_nvlink_gbps(model).or_else(|| {
                // An import names no model: the H200/H100 captures' NVSwitch boards.
                name.ends_with(".txt").then_some(18.0 * 26.5625)
            }) else {
                continue;
            };
            let bound = if test.contains("bidir") {
                2.0 * own
            } else {
                own
            };
            assert!(
                gbps <= bound * 1.001,
                "{name}: {test} {}→{} {gbps:.1} GB/s beats the GPU's own NVLinks ({bound:.1})",
                row["src"],
                row["dst"]
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} figures checked");
}

/// The catalog is a list of files compiled in (`catalog.rs`'s FILES), not the folder read at run
/// time: a machine added to assets/hardware/ and left off the list would be silently missing.
#[test]
fn every_file_of_the_hardware_folder_is_in_the_catalog() {
    let ids: std::collections::BTreeSet<String> = entries().into_iter().map(|e| e.id).collect();
    let mut files = std::collections::BTreeSet::new();
    for f in std::fs::read_dir(common::crate_file("assets/hardware")).unwrap() {
        let path = f.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            parse_entry(&stem, &std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            files.insert(stem);
        }
    }
    assert_eq!(files, ids, "assets/hardware/*.toml and the catalog differ");
}

/// The other side of the cap above: on a direct mesh each pair's bond is links of its own, so a
/// fan into one GPU from three NV6 peers carries three bonds (a plain `topo -m` of 4 GPUs in an
/// NV6 mesh), while through NVSwitch (HGX A100's NV12 to every peer) it carries one.
#[test]
fn a_fan_over_a_direct_mesh_sums_its_bonds_and_through_a_switch_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut text =
        String::from("\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for i in 0..4 {
        let cells: Vec<&str> = (0..4).map(|j| if i == j { " X " } else { "NV6" }).collect();
        text.push_str(&format!("GPU{i}\t{}\t0-31\t0\t\tN/A\n", cells.join("\t")));
    }
    let mesh = common::write(dir.path(), "mesh.txt", &text);
    let figure = |how: &[&str], test: &str| -> f64 {
        let json = dir.path().join(format!("{test}.json"));
        let mut args = vec!["bench", "bandwidth", "--modeled", "--tests", test];
        args.extend(how);
        args.extend(["--json", json.to_str().unwrap()]);
        let r = common::run(&args);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v["results"][0]["median_gbps"].as_f64().unwrap()
    };
    let import = ["--import", mesh.to_str().unwrap()];
    let (fan, pair) = (
        figure(&import, "all_to_one"),
        figure(&import, "p2p_write_ce"),
    );
    assert!(
        (fan / pair - 3.0).abs() < 0.05,
        "mesh: fan {fan} vs pair {pair}"
    );
    let a100 = ["--catalog", "hgx-a100"];
    let (fan, pair) = (figure(&a100, "all_to_one"), figure(&a100, "p2p_write_ce"));
    assert!(
        (fan / pair - 1.0).abs() < 0.05,
        "NVSwitch: fan {fan} vs pair {pair}"
    );
}

/// The terminal's matrix and the drawings head a NIC's column alike: nvidia-smi's label where
/// the machine's nvidia-smi prints one (a DGX A100 numbers its storage NICs too, so the fifth
/// compute NIC is NIC6), and the legend names each.
#[test]
fn nic_columns_read_alike_in_the_terminal_and_the_drawing() {
    let t = load("hgx-a100").unwrap();
    let fifth = &t.nics[4];
    assert_eq!(
        (fifth.name.as_str(), fifth.column_label()),
        ("mlx5_6", "NIC6")
    );
    assert_eq!(t.nic_label(fifth.index), "NIC6");
    assert!(t.nic_legend().contains(&"NIC6: mlx5_6".to_string()));
    let text = common::run(&["topo", "--catalog", "hgx-a100"]).stdout;
    let header = text.lines().find(|l| l.contains("GPU0\tGPU1")).unwrap();
    assert!(
        header.contains("\tNIC6") && !header.contains("NIC4"),
        "{header}"
    );
    assert!(text.contains("NIC6: mlx5_6"), "{text}");
    // An entry that names no labels gets today's nvidia-smi's `NIC<i>`, in the terminal too.
    let h100 = load("dgx-h100").unwrap();
    assert!(
        h100.nics
            .iter()
            .all(|n| n.column_label() == format!("NIC{}", n.index))
    );
}
