//! Fleets of modeled nodes for the fleet tests (tests/fleet_report.rs, tests/ui_fleet.rs): one
//! `--bench --modeled --catalog dgx-h100 --suite health,bandwidth` report made once by the
//! binary, copied into node folders and edited, and between-nodes records as `fleet run
//! --between` writes them.

use std::path::Path;
use std::sync::OnceLock;

use scalescope::model::Endpoint;
use scalescope::report::Report;

pub const DRIVER: &str = "580.95.05";
pub const ODD_DRIVER: &str = "575.57.08";

/// The modeled node report, made once by the binary.
pub fn base() -> &'static Report {
    static BASE: OnceLock<(tempfile::TempDir, Report)> = OnceLock::new();
    &BASE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("base");
            let r = super::run(&[
                "--bench",
                "--modeled",
                "--catalog",
                "dgx-h100",
                "--suite",
                "health,bandwidth",
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
            let report = scalescope::report::load(&out.join("report.json")).unwrap();
            (dir, report)
        })
        .1
}

/// Writes `n` node folders (`nodeNN/report.json`) into `dir`, each the base report with its
/// host name and [`DRIVER`], edited by `edit`.
pub fn write_nodes(dir: &Path, n: usize, edit: impl Fn(usize, &mut Report)) {
    for i in 0..n {
        let mut r = base().clone();
        r.machine.hostname = Some(format!("node{i:02}"));
        r.machine.driver_version = Some(DRIVER.into());
        edit(i, &mut r);
        let folder = dir.join(format!("node{i:02}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("report.json"), serde_json::to_vec(&r).unwrap()).unwrap();
    }
}

/// Every copy figure of a result touching GPU `gpu`, scaled by `f` (the bandwidth stage's and
/// the check's load tests alike).
pub fn slow_gpu(r: &mut Report, gpu: usize, f: f64) {
    let touches = |e: Endpoint| e == Endpoint::Gpu(gpu);
    let results = r
        .bandwidth
        .iter_mut()
        .flat_map(|b| b.results.iter_mut())
        .chain(r.health.iter_mut().flat_map(|h| h.bandwidth.iter_mut()));
    for res in results {
        if touches(res.src) || touches(res.dst) {
            for v in [
                &mut res.median_gbps,
                &mut res.min_gbps,
                &mut res.max_gbps,
                &mut res.fwd_gbps,
                &mut res.rev_gbps,
            ] {
                if let Some(x) = v.as_mut() {
                    *x *= f;
                }
            }
            // Its efficiency follows (a report whose efficiency is not median over line rate
            // is refused as damaged).
            res.update_efficiency();
        }
    }
}

/// Between-nodes records in `dir/between/` for nodes `node00…` (`n` of them), as `fleet run
/// --between` writes them: the runs with `slow` at `slow_gbps` busbw, the others at 180 GB/s
/// (+ a little spread), 8 ranks per node, over NCCL's IB transport.
pub fn between_records(dir: &Path, n: usize, slow: &str, slow_gbps: f64) {
    use scalescope::fleet::between::{BetweenRecord, plan};
    use scalescope::model::{
        Algo, CollectiveCase, CollectiveOp, CollectiveResult, Dtype, Source, Status,
    };
    let names: Vec<String> = (0..n).map(|i| format!("node{i:02}")).collect();
    let folder = dir.join("between");
    std::fs::create_dir_all(&folder).unwrap();
    for (i, p) in plan(&names).iter().enumerate() {
        let gbps = if p.nodes.iter().any(|x| x == slow) {
            slow_gbps
        } else {
            180.0 + i as f64 * 0.1
        };
        let mut row = CollectiveResult::empty(
            CollectiveCase {
                op: CollectiveOp::AllReduce,
                algo: Algo::Nccl,
                gpus: &(0..p.nodes.len() * 8).collect::<Vec<_>>(),
                bytes: 1 << 30,
                dtype: Dtype::F32,
                in_place: false,
            },
            Source::Measured,
            Status::Ok,
            "",
        );
        row.reason = None;
        row.busbw_gbps = Some(gbps);
        row.transport = Some("NET/IB+GDRDMA (mlx5_0, mlx5_1)".into());
        let r = BetweenRecord::new(
            p,
            8,
            Some("77".into()),
            ("a".into(), "b".into()),
            Ok(vec![row]),
        );
        std::fs::write(
            folder.join(format!("{}.json", p.name)),
            serde_json::to_vec(&r).unwrap(),
        )
        .unwrap();
    }
}

/// The node named `name` in a fleet.json.
pub fn node<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name}"))
}
