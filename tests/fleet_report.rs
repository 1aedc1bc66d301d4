//! `scalescope fleet report` over fleets of modeled nodes (no GPU): one `--bench --modeled
//! --catalog dgx-h100 --suite health,bandwidth` report made once by the binary, copied into 32
//! node folders and edited — one node's GPU 3 copies 20 % slow, another node's driver different —
//! and the fleet report must name exactly those two, with the field and the size of the
//! difference, and exit 3; 32 identical nodes pass; a malformed file is named.

mod common;

use std::path::{Path, PathBuf};

use common::fleet::{
    DRIVER, ODD_DRIVER, base, between_records, node, slow_gpu, write_nodes as fleet,
};
use common::run;
use scalescope::model::Endpoint;

/// `fleet report DIR --out OUT`: the run and fleet.json.
fn fleet_report(inputs: &[&Path], out: &Path) -> (common::Run, serde_json::Value) {
    let mut args: Vec<String> = vec!["fleet".into(), "report".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = run(&args);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let json = std::fs::read(out.join("fleet.json"))
        .map(|b| serde_json::from_slice(&b).unwrap())
        .unwrap_or(serde_json::Value::Null);
    (r, json)
}

#[test]
fn names_the_slow_gpu_and_the_odd_driver_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    fleet(&nodes, 32, |i, r| match i {
        7 => slow_gpu(r, 3, 0.8),
        19 => r.machine.driver_version = Some(ODD_DRIVER.into()),
        _ => {}
    });
    let out = dir.path().join("fleet");
    let (r, json) = fleet_report(&[&nodes], &out);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        json["drain"],
        serde_json::json!(["node07", "node19"]),
        "{}",
        r.stdout
    );
    assert_eq!(json["verdict"], "fail");
    assert_eq!(json["counts"]["pass"], 30);
    for n in json["nodes"].as_array().unwrap() {
        let name = n["name"].as_str().unwrap();
        if name != "node07" && name != "node19" {
            assert_eq!(n["verdict"], "pass", "{name}: {n}");
            assert!(n["findings"].as_array().unwrap().is_empty(), "{name}");
        }
    }
    // node07: every finding an outlier of GPU 3, 20 % below the median.
    let slow = node(&json, "node07");
    let findings = slow["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        assert_eq!(f["kind"], "outlier", "{f}");
        assert_eq!(f["verdict"], "fail", "{f}");
        assert!(f["gpu"] == 3 || f["peer"] == 3, "{f}");
        let pct = f["deviation_percent"].as_f64().unwrap();
        assert!((pct + 20.0).abs() < 0.01, "{f}");
    }
    let h2d = findings
        .iter()
        .find(|f| f["field"] == "h2d")
        .expect("h2d GPU 3 named");
    assert_eq!(h2d["subject"], "GPU 3");
    assert!(
        findings
            .iter()
            .any(|f| f["field"] == "p2p_read_ce" && f["subject"] == "GPU 0→3")
    );
    // node19: the driver, against the majority's.
    let odd = node(&json, "node19");
    let f = odd["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{odd}");
    assert_eq!(f[0]["kind"], "consistency");
    assert_eq!(f[0]["field"], "driver");
    assert_eq!(f[0]["value"], ODD_DRIVER);
    assert_eq!(f[0]["fleet_value"], DRIVER);
    // The terminal: a line per finding naming node, field, size; the drain list; the verdict.
    assert!(
        r.stdout.lines().any(|l| l.starts_with("node07")
            && l.contains("h2d GPU 3:")
            && l.contains("(-20.0 %)")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("node19")
            && l.contains(&format!(
                "driver: {ODD_DRIVER}, the fleet's majority {DRIVER}"
            ))),
        "{}",
        r.stdout
    );
    assert_eq!(slow["suspect_gpu"], 3);
    assert!(
        r.stdout.contains("node07  suspect GPU 3: every one of its"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("drain: node07 node19"), "{}", r.stdout);
    assert!(r.stdout.contains("verdict: FAIL"), "{}", r.stdout);
    let named: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("node"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(named.iter().all(|n| *n == "node07" || *n == "node19"));
    // The files: a CSV row per finding, the HTML and the pages.
    let csv = std::fs::read_to_string(out.join("fleet.csv")).unwrap();
    assert!(csv.starts_with("node,node_verdict,node_source,health_verdict,file,slurm_job,kind,"));
    assert_eq!(csv.lines().count(), 1 + 30 + findings.len() + 1);
    assert!(
        csv.lines()
            .any(|l| l.starts_with("node19,FAIL,modeled,PASS,")
                && l.contains(&format!(
                    ",consistency,FAIL,driver,,,,{ODD_DRIVER},{DRIVER},,,"
                )))
    );
    let html = std::fs::read_to_string(out.join("fleet.html")).unwrap();
    assert!(html.contains("node07") && html.contains("Drain list"));
    for f in ["fleet.png", "fleet.pdf"] {
        assert!(std::fs::metadata(out.join(f)).unwrap().len() > 1000, "{f}");
    }
}

#[test]
fn identical_fleet_passes() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path(), 32, |_, _| {});
    let out = dir.path().join("out");
    let (r, json) = fleet_report(&[dir.path()], &out);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert_eq!(json["verdict"], "pass");
    assert_eq!(json["counts"]["pass"], 32);
    assert_eq!(json["drain"], serde_json::json!([]));
    assert!(r.stdout.contains("verdict: PASS (modeled)"), "{}", r.stdout);
}

#[test]
fn a_malformed_or_foreign_file_is_named_and_node_json_names_a_node() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path(), 6, |_, _| {});
    // A report cut mid-write, a JSON file that is no report, and a node.json naming a node.
    let cut = dir.path().join("node03/report.json");
    let text = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    std::fs::write(dir.path().join("notes.json"), "{\"hello\": 1}").unwrap();
    // A report whose copy figure is negative: refused with the field named, as `compare` would.
    let neg = dir.path().join("node01/report.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&neg).unwrap()).unwrap();
    v["bandwidth"]["results"][0]["median_gbps"] = serde_json::json!(-5.0);
    std::fs::write(&neg, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::write(
        dir.path().join("node05/node.json"),
        "{\"node\": \"gpu-a17\", \"slurm_job\": 4242}",
    )
    .unwrap();
    // A node `fleet run` could not reach: its node.json and no report.
    let gone = dir.path().join("gpu-b02");
    std::fs::create_dir_all(&gone).unwrap();
    std::fs::write(
        gone.join("node.json"),
        r#"{"node": "gpu-b02", "via": "ssh", "host": "gpu-b02", "status": "unreachable",
            "started": "2026-11-26T19:00:00Z", "ended": "2026-11-26T19:00:05Z", "exit_code": 1,
            "error": "ssh: connect to host gpu-b02 port 22: Connection refused"}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let (r, json) = fleet_report(&[dir.path()], &out);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        json["drain"],
        serde_json::json!(["gpu-b02", "node01", "node03", "notes"])
    );
    assert!(
        r.stdout.lines().any(
            |l| l.starts_with("node01") && l.contains("bandwidth.results[0].median_gbps is -5")
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("gpu-b02")
            && l.contains("no report: unreachable: ssh: connect to host gpu-b02")),
        "{}",
        r.stdout
    );
    let cut = node(&json, "node03");
    assert_eq!(cut["findings"][0]["kind"], "unreadable");
    assert!(
        r.stdout.lines().any(|l| l.starts_with("node03")
            && l.contains("unreadable")
            && l.contains("truncated")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("notes") && l.contains("neither a report.json nor")),
        "{}",
        r.stdout
    );
    let named = node(&json, "gpu-a17");
    assert_eq!(named["slurm_job"], "4242");
    assert_eq!(named["verdict"], "pass");
}

#[test]
fn check_json_files_are_nodes_too() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..4 {
        let mut h = base().health.clone().unwrap();
        if i == 2 {
            h.bandwidth.iter_mut().for_each(|r| {
                if r.dst == Endpoint::Gpu(5) {
                    r.median_gbps = r.median_gbps.map(|x| x * 0.92);
                    r.min_gbps = r.min_gbps.map(|x| x * 0.92);
                    r.max_gbps = r.max_gbps.map(|x| x * 0.92);
                    r.update_efficiency();
                }
            });
        }
        std::fs::write(
            dir.path().join(format!("c{i}.json")),
            serde_json::to_vec(&h).unwrap(),
        )
        .unwrap();
    }
    // The library entry point `fleet run` calls.
    let out = dir.path().join("out");
    let outcome = scalescope::fleet::report(
        &[dir.path().to_path_buf()],
        &out,
        &scalescope::health::Thresholds::default(),
    )
    .unwrap();
    assert_eq!(outcome.nodes.len(), 4);
    let c2 = outcome.nodes.iter().find(|n| n.name == "c2").unwrap();
    // 8 % below the median: beyond the WARN floor (5 %), within the FAIL one (10 %).
    assert_eq!(c2.verdict, scalescope::health::Verdict::Warn, "{c2:?}");
    assert!(
        c2.findings
            .iter()
            .all(|f| f.gpu == Some(5) || f.peer == Some(5))
    );
    for f in [
        "fleet.csv",
        "fleet.json",
        "fleet.html",
        "fleet.png",
        "fleet.pdf",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

#[test]
fn bad_paths_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing: PathBuf = dir.path().join("nope");
    common::one_line_error(
        &["fleet", "report", missing.to_str().unwrap()],
        Some(2),
        &["nope", "no such file or folder"],
    );
    common::one_line_error(
        &["fleet", "report", dir.path().to_str().unwrap()],
        Some(2),
        &["no node reports found"],
    );
}

#[test]
fn nodes_of_one_name_are_told_apart_by_their_folder() {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["rack1", "rack2"] {
        let mut r = base().clone();
        r.machine.hostname = Some("gpu01".into());
        let f = dir.path().join(folder);
        std::fs::create_dir_all(&f).unwrap();
        std::fs::write(f.join("report.json"), serde_json::to_vec(&r).unwrap()).unwrap();
    }
    let (r, json) = fleet_report(&[dir.path()], &dir.path().join("out"));
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let names: Vec<&str> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gpu01 (rack1)", "gpu01 (rack2)"]);
}

#[test]
fn fleet_thresholds_set_the_rules_and_names_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    fleet(&nodes, 8, |i, r| match i {
        2 => r.machine.driver_version = Some(ODD_DRIVER.into()),
        5 => slow_gpu(r, 1, 0.93),
        _ => {}
    });
    // A node name with an escape sequence, from node.json: printed escaped, never raw.
    std::fs::write(
        nodes.join("node05/node.json"),
        "{\"node\": \"evil\\u001b[31mred\"}",
    )
    .unwrap();
    let toml = dir.path().join("site.toml");
    std::fs::write(
        &toml,
        "[fleet]\nconsistency = \"warn\"\nwarn = 0.05\nfail = 0.2\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let r = run(&[
        "fleet",
        "report",
        nodes.to_str().unwrap(),
        "--thresholds",
        toml.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // The odd driver and a GPU 7 % slow only warn under these rules: nothing to drain.
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("verdict: WARN"), "{}", r.stdout);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("node02") && l.contains("WARN  consistency")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.lines().any(|l| l.starts_with("evil\\u{1b}[31mred")
            && l.contains("WARN  outlier")
            && l.contains("(-7.0 %)")),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains('\u{1b}'), "{:?}", r.stdout);
    // A bad [fleet] value is the thresholds file's one-line error, exit 2.
    std::fs::write(&toml, "[fleet]\nmad_k = 0\n").unwrap();
    common::one_line_error(
        &[
            "fleet",
            "report",
            nodes.to_str().unwrap(),
            "--thresholds",
            toml.to_str().unwrap(),
        ],
        Some(2),
        &["[fleet] mad_k"],
    );
}

#[test]
fn a_gpu_with_another_vbios_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    fleet(&nodes, 8, |i, r| {
        let inv = r
            .health
            .as_mut()
            .and_then(|h| h.before.as_mut())
            .expect("the modeled check's inventory");
        for g in &mut inv.gpus {
            g.vbios = Some(if i == 5 && g.index == 2 {
                "96.00.61.00.01".into()
            } else {
                "96.00.74.00.01".into()
            });
        }
    });
    let out = dir.path().join("fleet");
    let (r, json) = fleet_report(&[&nodes], &out);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert_eq!(json["drain"], serde_json::json!(["node05"]), "{}", r.stdout);
    let f = &node(&json, "node05")["findings"][0];
    assert_eq!(f["kind"], "consistency", "{f}");
    assert_eq!(f["field"], "vbios", "{f}");
    assert_eq!(f["gpu"], 2, "{f}");
    assert_eq!(f["value"], "96.00.61.00.01", "{f}");
    assert_eq!(f["fleet_value"], "96.00.74.00.01", "{f}");
    let notes = json["notes"].to_string();
    assert!(!notes.contains("VBIOS"), "{notes}");
}

/// Settings are compared across the fleet: the node whose GPU 1 runs at a lowered power limit
/// and the one with persistence off on every GPU are named with the field and the fleet's value.
#[test]
fn a_node_set_apart_by_its_settings_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    fleet(&nodes, 8, |i, r| {
        let inv = r
            .health
            .as_mut()
            .and_then(|h| h.before.as_mut())
            .expect("the modeled check's inventory");
        for g in &mut inv.gpus {
            g.settings.power_limit_w = Some(if i == 2 && g.index == 1 { 300.0 } else { 700.0 });
            g.settings.persistence = Some(i != 6);
        }
    });
    let out = dir.path().join("fleet");
    let (r, json) = fleet_report(&[&nodes], &out);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert_eq!(
        json["drain"],
        serde_json::json!(["node02", "node06"]),
        "{}",
        r.stdout
    );
    let f = &node(&json, "node02")["findings"][0];
    assert_eq!(f["field"], "power_limit", "{f}");
    assert_eq!(f["gpu"], 1, "{f}");
    assert_eq!(
        (&f["value"], &f["fleet_value"]),
        (&"300 W".into(), &"700 W".into())
    );
    let f = node(&json, "node06")["findings"].as_array().unwrap();
    assert!(
        !f.is_empty() && f.iter().all(|x| x["field"] == "persistence"),
        "{f:?}"
    );
    assert_eq!(f[0]["value"], "off");
}

#[test]
fn a_node_whose_pairs_all_reduce_slowly_is_drained() {
    let dir = tempfile::tempdir().unwrap();
    let fleet_dir = dir.path().join("run");
    fleet(&fleet_dir.join("nodes"), 8, |_, _| {});
    between_records(&fleet_dir, 8, "node05", 120.0);
    let out = dir.path().join("fleet");
    let (r, json) = fleet_report(&[&fleet_dir], &out);
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    assert_eq!(json["drain"], serde_json::json!(["node05"]), "{}", r.stdout);
    let f = &node(&json, "node05")["findings"][0];
    assert_eq!(f["kind"], "between", "{f}");
    assert_eq!(f["verdict"], "fail", "{f}");
    let detail = f["detail"].as_str().unwrap();
    assert!(
        detail.contains("pair node04+node05") && detail.contains("pair node05+node06"),
        "{detail}"
    );
    assert!(detail.contains("NIC"), "{detail}");
    // Its neighbours' slow pairs are explained by node05: they pass.
    for other in ["node04", "node06"] {
        assert_eq!(node(&json, other)["verdict"], "pass", "{other}");
    }
    let runs = json["between"].as_array().unwrap();
    assert_eq!(runs.len(), 1 + 8 + 2);
    assert!(r.stdout.contains("node05"), "{}", r.stdout);
    let html = std::fs::read_to_string(out.join("fleet.html")).unwrap();
    assert!(
        html.contains("Between nodes") && html.contains("NET/IB+GDRDMA"),
        "html"
    );
    let csv = std::fs::read_to_string(out.join("fleet.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.starts_with("node05,FAIL,") && l.contains(",between,FAIL,")),
        "{csv}"
    );

    // Equal pairs: the fleet passes, every pair PASS.
    let even = dir.path().join("even");
    fleet(&even.join("nodes"), 8, |_, _| {});
    between_records(&even, 8, "none", 0.0);
    let (r, json) = fleet_report(&[&even], &dir.path().join("even-out"));
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let pairs: Vec<&serde_json::Value> = json["between"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["span"] == "pair")
        .collect();
    assert_eq!(pairs.len(), 8);
    assert!(pairs.iter().all(|p| p["verdict"] == "pass"), "{pairs:?}");
}

#[test]
fn the_bundled_reports_compare_like_with_like() {
    // One H100 and four H200 reports of 1, 2 and 8 GPUs: the 8-GPU host_to_all (eight GPUs on
    // the host at once) was an outlier against 1- and 2-GPU nodes, and the H100's local copy
    // against the H200s'. Each figure is compared only among nodes of its model, and a test of
    // every GPU at once only at its GPU count.
    let dir = tempfile::tempdir().unwrap();
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/reports");
    let (r, json) = fleet_report(&[&reports], &dir.path().join("fleet"));
    assert_eq!(r.code, Some(3), "{}{}", r.stdout, r.stderr);
    let findings: Vec<&serde_json::Value> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|n| n["findings"].as_array().unwrap())
        .filter(|f| f["kind"] == "outlier")
        .collect();
    for f in &findings {
        let subject = f["subject"].as_str().unwrap();
        assert!(subject.ends_with("on NVIDIA H200"), "{f}");
        if [
            "host_to_all",
            "all_to_host",
            "all_to_one",
            "one_to_all",
            "all_pairs",
        ]
        .contains(&f["field"].as_str().unwrap())
        {
            assert!(subject.contains(" GPUs"), "{f}");
        }
    }
    assert!(
        findings
            .iter()
            .all(|f| !f["subject"].as_str().unwrap().contains("H100")),
        "the one H100 has nothing like it"
    );
    assert!(
        json["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("2 GPU models in the fleet")),
        "{}",
        json["notes"]
    );
    // The 8-GPU node's host_to_all is keyed at its count: no other node has it.
    let eight = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"].as_str().unwrap().contains("h200-8x"))
        .unwrap();
    assert!(
        eight["figures"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k == "host_to_all GPU 0, 8 GPUs on NVIDIA H200"),
        "{}",
        eight["figures"]
    );
}

#[test]
fn a_figure_modeled_on_a_measured_node_is_named_modeled() {
    // `check --import` of real captures: the readings are real (the node is measured), the
    // copy figures modeled from the links as read. Three nodes, one with a Gen4 x8 link.
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let nodes = dir.path().join("nodes");
    std::fs::create_dir_all(&nodes).unwrap();
    for (name, smi) in [
        ("good1", "h200-2x-device-smi-q.txt"),
        ("good2", "h200-2x-device-smi-q.txt"),
        ("gen4", "h200-2x-edited-gen4x8-smi-q.txt"),
    ] {
        let json = nodes.join(format!("{name}.json"));
        let smi = data.join(smi).display().to_string();
        let topo = data.join("h200-2x-device-topo-m.txt").display().to_string();
        let r = run(&[
            "check",
            "--import",
            &smi,
            "--import",
            &topo,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(json.exists(), "{}{}", r.stdout, r.stderr);
    }
    let (r, json) = fleet_report(&[&nodes], &dir.path().join("fleet"));
    assert!(r.code == Some(3), "{}{}", r.stdout, r.stderr);
    let gen4 = node(&json, "gen4");
    assert_eq!(gen4["source"], "measured", "{gen4}");
    let outliers: Vec<&serde_json::Value> = gen4["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "outlier")
        .collect();
    assert!(!outliers.is_empty(), "{gen4}");
    for f in &outliers {
        assert!(f["field"].as_str().unwrap().ends_with(" (modeled)"), "{f}");
    }
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("gen4") && l.contains("h2d (modeled) GPU 1")),
        "{}",
        r.stdout
    );
}

#[test]
fn modeled_nodes_beside_measured_ones_are_compared_apart() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes");
    std::fs::create_dir_all(&nodes).unwrap();
    let reports = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/reports");
    for f in ["h200-2x-sxm-2026-11-22.json", "h200-2x-sxm-2026-11-28.json"] {
        std::fs::copy(reports.join(f), nodes.join(f)).unwrap();
    }
    let modeled = common::modeled_stages("h200-2x-sxm", vec![scalescope::job::Stage::Bandwidth]);
    std::fs::write(
        nodes.join("catalog.json"),
        serde_json::to_string(&modeled).unwrap(),
    )
    .unwrap();
    let (r, json) = fleet_report(&[&nodes], &dir.path().join("fleet"));
    assert!(!r.stderr.contains("panicked"));
    let catalog = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["source"] == "modeled")
        .expect("the catalog node is modeled");
    let keys: Vec<&String> = catalog["figures"].as_object().unwrap().keys().collect();
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k.contains(" (modeled) ")), "{keys:?}");
    for n in json["nodes"].as_array().unwrap() {
        if n["source"] == "measured" {
            let keys = n["figures"].as_object().unwrap();
            assert!(keys.keys().all(|k| !k.contains("(modeled)")), "{keys:?}");
        }
    }
    assert!(
        json["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("1 modeled node(s) beside measured ones")),
        "{}",
        json["notes"]
    );
}

/// A copy figure above its line rate is no figure to compare a fleet with: the bundled 8× H200
/// report of 2026-11-22 holds one_to_all at 1,024 GB/s against 478.1 (an older method); the
/// fleet names it UNKNOWN and leaves it out of the outliers, and report.html says so in its cell.
#[test]
fn a_figure_above_its_line_rate_is_named_and_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let eight = common::crate_file("assets/reports/h200-8x-sxm-2026-11-22.json");
    let two = common::crate_file("assets/reports/h200-2x-sxm-2026-11-22.json");
    let (_, json) = fleet_report(&[&eight, &two], &dir.path().join("f"));
    let nodes = json["nodes"].as_array().unwrap();
    let findings: Vec<&serde_json::Value> = nodes
        .iter()
        .flat_map(|n| n["findings"].as_array().unwrap())
        .collect();
    let implausible: Vec<&&serde_json::Value> = findings
        .iter()
        .filter(|f| f["kind"] == "implausible")
        .collect();
    assert_eq!(implausible.len(), 1, "{implausible:?}");
    assert_eq!(implausible[0]["field"], "one_to_all");
    assert_eq!(implausible[0]["verdict"], "unknown");
    assert!(
        implausible[0]["detail"]
            .as_str()
            .unwrap()
            .contains("above the line rate"),
        "{}",
        implausible[0]["detail"]
    );
    assert!(
        !findings
            .iter()
            .any(|f| f["kind"] == "outlier" && f["field"] == "one_to_all"),
        "an implausible figure was compared: {findings:?}"
    );
    // report.html of that report says it in the figure's cell.
    let report = scalescope::report::load(&eight).unwrap();
    let html = scalescope::document::report_html(&report);
    assert!(
        html.contains("above the line rate: distrust"),
        "report.html says nothing"
    );
}

/// A fleet of measured and modeled nodes says which are modeled: fleet.csv's `node_source`
/// column, and the verdict line's count of modeled nodes (a model's PASS is not a node passing).
#[test]
fn a_fleet_mixing_modeled_and_measured_nodes_says_which_is_which() {
    let dir = tempfile::tempdir().unwrap();
    let modeled = dir.path().join("modeled");
    let r = run(&[
        "--bench",
        "--modeled",
        "--catalog",
        "hgx-h200",
        "--suite",
        "topology,health,bandwidth",
        "--out",
        modeled.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let measured = common::crate_file("assets/reports/h200-2x-sxm-2026-11-28.json");
    let out = dir.path().join("f");
    let (r, _) = fleet_report(&[&measured, &modeled.join("report.json")], &out);
    assert!(
        r.stdout
            .contains("2 nodes (1 of them modeled, not measured):"),
        "{}",
        r.stdout
    );
    let rows = common::csv_rows(&out.join("fleet.csv"));
    let sources: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["node_source"].as_str()).collect();
    assert_eq!(
        sources,
        ["measured", "modeled"].into_iter().collect(),
        "{rows:?}"
    );
}

/// A node.json that cannot be read (cut short) is said, not passed over: the node is named by
/// its report, and a note says why.
#[test]
fn a_broken_node_json_is_said_not_silently_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let bundled = common::crate_file("assets/reports/h200-2x-sxm-2026-11-28.json");
    for node in ["n1", "n2"] {
        let folder = dir.path().join("nodes").join(node);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(&bundled, folder.join("report.json")).unwrap();
    }
    std::fs::write(dir.path().join("nodes/n1/node.json"), "{\"node\":").unwrap();
    let out = dir.path().join("out");
    let (r, json) = fleet_report(&[&dir.path().join("nodes")], &out);
    assert!(
        r.stdout
            .contains("the node.json beside its report could not be read"),
        "{}",
        r.stdout
    );
    let notes = json["notes"].to_string();
    assert!(notes.contains("could not be read"), "{notes}");
}

/// A fleet that mixes GPU models (the bundled H100 and H200 reports): the model differs, and
/// says so, but an H100's VBIOS or NVLink count is compared with other H100s only — never
/// failed against the H200s' majority.
#[test]
fn per_gpu_fields_are_compared_within_a_gpu_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run(&[
        "fleet",
        "report",
        common::crate_file("assets/reports").to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let h100: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.contains("h100-1x"))
        .collect();
    assert!(
        h100.iter().any(|l| l.contains("gpu_model: NVIDIA H100")),
        "{}",
        out.stdout
    );
    assert!(
        !h100
            .iter()
            .any(|l| l.contains("vbios") || l.contains("nvlinks")),
        "{h100:?}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("fleet.json")).unwrap())
            .unwrap();
    let text = json.to_string();
    assert!(text.contains("\"gpu_model\":\"NVIDIA H200\""), "{text}");
}
