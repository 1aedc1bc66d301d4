//! What each job does: the bandwidth, collectives, scaling and health stages, and the suite's
//! presets that chain them. Each stage fills its section of the job's report through events.

use std::path::Path;
use std::time::Instant;

use super::{Ctx, Event, JobError, Stage, SuiteOptions, Target};
use crate::bench::collectives::{CollCase, CollectiveOptions, plan as coll_plan, run_collectives};
use crate::bench::plan::{DEFAULT_ITERS, PairScope};
use crate::bench::{BandwidthOptions, Plan, run_bandwidth};
use crate::health::run::{CheckOptions, check_described, check_live};
use crate::model::quantities::parse_sizes;
use crate::model::{Algo, CollectiveOp, GpuSelection, Source, TestId, Topology};
use crate::report::ScalingSection;
use crate::scaling::curve::CommCurve;
use crate::scaling::run::{
    DEFAULT_MAX_GPUS, MeasureOptions, ScalingRun, Scope, run_measured, run_modeled, run_with_curve,
};
use crate::scaling::{Mode, workload};

/// Workloads `--full` measures: their real PyTorch steps (ResNet-50, GPT-2 XL, BERT-large) where
/// PyTorch is found, else proxies; the rest of the catalog (the inference replicas too: a proxy
/// of them is not a framework step, and it cost `--full` 12 s on 2× H200) is modeled on the
/// machine those runs measured.
pub const FULL_MEASURED_WORKLOADS: [&str; 3] = ["resnet50", "gpt2-xl", "bert-large"];

/// The workloads whose strong mode `--full` measures at 1, 2, … GPUs; the others' strong rows
/// are modeled on the machine their weak runs calibrated (a language model's strong step at one
/// GPU is its whole global batch: GPT-2 XL's 64 samples take 3 s a step on an H200, BERT-large's
/// 512 take 0.8 s). ResNet-50's strong run is checked against a plain training loop
/// (docs/BENCHMARKS.md).
pub const FULL_STRONG_MEASURED: [&str; 1] = ["resnet50"];

/// Samples of each `--full` bandwidth test: nvbandwidth's default (`--testSamples` 3, common.h),
/// where a run of its own takes [`crate::bench::plan::DEFAULT_SAMPLES`].
const FULL_SAMPLES: u32 = 3;

/// The sizes of `--full`'s sweeps: 4 KiB to 1 GiB in steps of 4 (every power of two took twice
/// the time and drew the same curve).
const FULL_SWEEP: &str = "4K,16K,64K,256K,1M,4M,16M,64M,256M,1G";

fn sizes(s: &str) -> Vec<u64> {
    parse_sizes(s).unwrap_or_default()
}

/// The bandwidth plans of a suite preset, over `gpus` of a machine of `machine_gpus` (an empty
/// `gpus` is every GPU of the machine).
pub fn bandwidth_presets(
    full: bool,
    gpus: &GpuSelection,
    machine_gpus: usize,
) -> Vec<BandwidthOptions> {
    let mut plans = bandwidth_presets_all_pairs(full, gpus);
    let covered = if gpus.is_empty() {
        machine_gpus
    } else {
        gpus.len()
    };
    if PairScope::bounded(covered) == PairScope::PerLinkKind {
        for p in &mut plans {
            p.pairs = PairScope::PerLinkKind;
        }
    }
    plans
}

/// [`bandwidth_presets`] before the pairs are bounded.
fn bandwidth_presets_all_pairs(full: bool, gpus: &GpuSelection) -> Vec<BandwidthOptions> {
    if full {
        // Every test at 512 MiB on every GPU and pair (nvbandwidth's 3 samples of 16 copies),
        // except the slow ones: copies staged through the host (peer access off) on the first
        // pair of each kind of connection, and pageable copies (one 512 MiB copy is ~70 ms
        // there) with 2 copies per sample. Then sweeps 4K..1G in steps of 4: host copies on
        // every GPU, P2P on the first pair of each kind. On 2 GPUs that is every pair; on an
        // 8-GPU NVSwitch box it keeps --full within minutes.
        let slow = [
            TestId::H2dPageable,
            TestId::D2hPageable,
            TestId::P2pReadCeNopeer,
            TestId::P2pWriteCeNopeer,
            TestId::P2pBidirCeNopeer,
        ];
        let at_512m = |tests: Vec<TestId>, iters: u32, pairs: PairScope| BandwidthOptions {
            gpus: gpus.clone(),
            tests,
            sizes: vec![512 << 20],
            iters,
            samples: FULL_SAMPLES,
            pairs,
            ..Default::default()
        };
        let sweep = |tests: Vec<TestId>, pairs: PairScope| BandwidthOptions {
            gpus: gpus.clone(),
            tests,
            sizes: sizes(FULL_SWEEP),
            iters: 8,
            samples: FULL_SAMPLES,
            pairs,
            ..Default::default()
        };
        vec![
            at_512m(
                TestId::ALL
                    .iter()
                    .copied()
                    .filter(|t| !slow.contains(t))
                    .collect(),
                DEFAULT_ITERS,
                PairScope::All,
            ),
            at_512m(slow[..2].to_vec(), 2, PairScope::All),
            at_512m(slow[2..].to_vec(), DEFAULT_ITERS, PairScope::PerLinkKind),
            sweep(vec![TestId::H2d, TestId::D2h], PairScope::All),
            sweep(
                vec![TestId::P2pWriteCe, TestId::P2pReadCe],
                PairScope::PerLinkKind,
            ),
        ]
    } else {
        vec![BandwidthOptions {
            gpus: gpus.clone(),
            tests: vec![
                TestId::H2d,
                TestId::D2h,
                TestId::P2pWriteCe,
                TestId::P2pReadCe,
                TestId::P2pBidirCe,
                TestId::P2pWriteSm,
                TestId::LatencyD2d,
            ],
            sizes: vec![64 << 20, 512 << 20],
            iters: 8,
            samples: 3,
            pairs: PairScope::All,
            ..Default::default()
        }]
    }
}

/// The collectives options of a suite preset (each expanded into its own cases).
pub fn collective_presets(full: bool, gpus: &GpuSelection) -> Vec<CollectiveOptions> {
    let base = CollectiveOptions {
        gpus: gpus.clone(),
        ..Default::default()
    };
    if full {
        let mut ar = sizes("8..1G");
        ar.push(8 << 30);
        vec![
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Nccl],
                sizes: ar,
                ..base.clone()
            },
            CollectiveOptions {
                ops: CollectiveOp::ALL
                    .iter()
                    .copied()
                    .filter(|o| *o != CollectiveOp::AllReduce)
                    .collect(),
                algos: vec![Algo::Nccl],
                sizes: sizes("8..1G"),
                ..base.clone()
            },
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Ring, Algo::Tree, Algo::Host],
                sizes: sizes("1K..1G"),
                iters: 10,
                warmup: 3,
                ..base
            },
        ]
    } else {
        vec![
            CollectiveOptions {
                ops: vec![CollectiveOp::AllReduce],
                algos: vec![Algo::Nccl],
                sizes: sizes("1K..1G"),
                iters: 10,
                warmup: 3,
                ..base.clone()
            },
            CollectiveOptions {
                ops: vec![
                    CollectiveOp::AllGather,
                    CollectiveOp::ReduceScatter,
                    CollectiveOp::Broadcast,
                ],
                algos: vec![Algo::Nccl],
                sizes: vec![1 << 20, 64 << 20, 1 << 30],
                iters: 10,
                warmup: 3,
                ..base
            },
        ]
    }
}

/// The most cases one bandwidth job plans: every ordered pair of the largest machine
/// (`model::MAX_GPUS`, 1,024 GPUs) for one test at one size. A run holds each case's result
/// about three times (the runner's list, the job's report, the caller's copy), ~1.5 KB in all:
/// this keeps a run within ~2 GB, where every pair of 512 GPUs for every test was 3.3 GB.
const MAX_BANDWIDTH_CASES: usize = 1 << 20;

/// The GPU pairs a bandwidth plan covers: as `options` ask, except that every pair over every
/// GPU (no GPUs named) of a machine above [`crate::bench::plan::ALL_PAIRS_MAX_GPUS`] is the
/// first pair of each kind of connection, as the suite and `check` do (every ordered pair of 512
/// GPUs is 261,632 cases per test and size, the same few figures repeated). Naming the GPUs asks
/// for every pair among them. (`bench bandwidth` says so when it applies: cli/bandwidth.rs.)
fn pairs_for(options: &BandwidthOptions, machine_gpus: usize) -> PairScope {
    if options.gpus.is_empty() && options.pairs == PairScope::All {
        PairScope::bounded(machine_gpus)
    } else {
        options.pairs
    }
}

/// The plans of `options` on `topo`, their pairs chosen by [`pairs_for`]; more than
/// [`MAX_BANDWIDTH_CASES`] cases in all is the user's to narrow.
fn bandwidth_plans(topo: &Topology, options: &[BandwidthOptions]) -> Result<Vec<Plan>, JobError> {
    let mut plans = Vec::with_capacity(options.len());
    let mut cases = 0;
    for o in options {
        let o = BandwidthOptions {
            pairs: pairs_for(o, topo.gpus.len()),
            ..o.clone()
        };
        let plan = Plan::new(topo, &o)?;
        cases += plan.cases.len();
        if cases > MAX_BANDWIDTH_CASES {
            return Err(crate::bench::BenchError::BadOption(format!(
                "{cases} copy cases planned, more than one run holds ({MAX_BANDWIDTH_CASES}): \
                 name fewer --tests, --sizes or --gpus, or use --pairs-per-link-kind"
            ))
            .into());
        }
        plans.push(plan);
    }
    Ok(plans)
}

/// Copy bandwidth and latency: every plan of `options` in turn on one backend.
pub(super) fn bandwidth(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    options: &[BandwidthOptions],
    modeled: bool,
    pcie: Option<(u32, u32)>,
    energy_window_s: Option<crate::model::EnergyWindow>,
) -> Result<(), JobError> {
    let plans = bandwidth_plans(topo, options)?;
    // The plans of one job share one backend, so one copy-kernel setting (the suite's presets
    // use the defaults; `bench bandwidth` has one plan).
    let copy = options.first().map(|o| o.copy_kernel).unwrap_or_default();
    let (mut backend, warnings) =
        super::bandwidth_backend(topo, modeled, pcie, &copy, energy_window_s)?;
    ctx.warnings(warnings);
    let (source, desc) = (backend.source(), backend.describe());
    // The section exists (empty) from the start, with its source and backend.
    ctx.emit(Event::Bandwidth {
        source,
        backend: desc.clone(),
        results: Vec::new(),
    });
    let total: usize = plans.iter().map(|p| p.cases.len()).sum();
    let mut done_before = 0;
    for plan in &plans {
        if ctx.cancelled() {
            break;
        }
        let mut sent = 0;
        let cancel = ctx.cancel;
        let outcome = run_bandwidth(topo, plan, backend.as_mut(), cancel, &mut |p, results| {
            ctx.emit(Event::Progress {
                done: done_before + p.done,
                total,
                label: p.last.clone(),
            });
            ctx.emit(Event::Bandwidth {
                source,
                backend: desc.clone(),
                results: results[sent..].to_vec(),
            });
            sent = results.len();
            ctx.after_case();
        });
        done_before += plan.cases.len();
        ctx.warnings(outcome.warnings);
        if outcome.cancelled {
            break;
        }
    }
    Ok(())
}

/// Collectives: every option set's cases on one backend.
pub(super) fn collectives(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    options: &[CollectiveOptions],
    modeled: bool,
    nccl_lib: Option<&Path>,
    energy_window_s: Option<crate::model::EnergyWindow>,
) -> Result<(), JobError> {
    let mut cases: Vec<CollCase> = Vec::new();
    for o in options {
        let (_, c) = coll_plan(topo, o)?;
        cases.extend(c);
    }
    let (mut backend, warnings) =
        super::collectives_backend(topo, modeled, nccl_lib, energy_window_s)?;
    ctx.warnings(warnings);
    let (source, desc) = (backend.source(), backend.describe());
    ctx.emit(Event::Collectives {
        source,
        backend: desc.clone(),
        results: Vec::new(),
    });
    let mut warnings = Vec::new();
    let mut sent = 0;
    let cancel = ctx.cancel;
    run_collectives(
        &cases,
        backend.as_mut(),
        cancel,
        &mut warnings,
        &mut |done, total, results| {
            let label = results.last().map_or(String::new(), |r| {
                format!(
                    "{} {} {}",
                    r.op,
                    r.algo,
                    crate::model::quantities::format_bytes(r.bytes)
                )
            });
            ctx.emit(Event::Progress { done, total, label });
            ctx.emit(Event::Collectives {
                source,
                backend: desc.clone(),
                results: results[sent..].to_vec(),
            });
            sent = results.len();
            ctx.after_case();
        },
    );
    ctx.warnings(warnings);
    Ok(())
}

/// The source of a scaling run: measured when anything in it was (framework or proxy rows, the
/// all-reduce curve).
fn scaling_source(run: &ScalingRun) -> Source {
    let measured = run.rows.iter().any(|r| r.source.is_measured())
        || run
            .machine
            .as_ref()
            .and_then(|m| m.comm.as_ref())
            .is_some_and(|c| c.source == Source::Measured);
    if measured {
        Source::Measured
    } else {
        Source::Modeled
    }
}

/// Sends the run so far, its rows costed at the job's prices (if any) in nodes of the
/// machine's GPU count.
fn emit_scaling(ctx: &mut Ctx<'_>, run: &ScalingRun) {
    let mut run = run.clone();
    let gpu_name = run
        .machine
        .as_ref()
        .and_then(|m| m.gpu_name.clone())
        .or_else(|| ctx.report.topology.gpus.iter().find_map(|g| g.name.clone()));
    crate::scaling::power::apply(
        &mut run.rows,
        gpu_name.as_deref(),
        &run.workloads,
        run.machine.as_ref(),
    );
    if let Some(p) = ctx.pricing {
        crate::scaling::cost::apply(&mut run.rows, &p, ctx.report.topology.gpus.len());
        run.pricing = Some(p);
    }
    ctx.emit(Event::Scaling {
        section: Box::new(ScalingSection {
            source: scaling_source(&run),
            run,
        }),
    });
}

/// A measured scaling run of `scope` (its all-reduce curve on the NCCL backend built here),
/// each stage's label sent as progress and the rows as they come.
fn measure_scaling(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    scope: Scope<'_>,
    opts: &MeasureOptions,
) -> Result<ScalingRun, JobError> {
    let cancel = ctx.cancel;
    let collectives = |t: &Topology| super::measured_collectives(t, opts.nccl_lib.as_deref());
    run_measured(
        topo,
        scope,
        opts,
        &collectives,
        cancel,
        &mut |label, partial| {
            ctx.emit(Event::Progress {
                done: 0,
                total: 0,
                label: label.to_string(),
            });
            if !partial.rows.is_empty() {
                emit_scaling(ctx, partial);
            }
        },
    )
    .map_err(JobError::machine)
}

/// Scaling of `scope`: modeled, or measured on its GPUs (framework runs, proxies, the GEMM
/// rates and all-reduce curve that feed the model).
pub(super) fn scaling(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    scope: Scope<'_>,
    measure: Option<&MeasureOptions>,
) -> Result<(), JobError> {
    check_gpus(topo, scope.gpus)?;
    let run = match measure {
        None => run_modeled(
            topo,
            scope.gpus,
            scope.workloads,
            scope.modes,
            scope.max_gpus,
        ),
        Some(opts) => measure_scaling(ctx, topo, scope, opts)?,
    };
    for n in &run.notes {
        ctx.emit(Event::Note { text: n.clone() });
    }
    emit_scaling(ctx, &run);
    Ok(())
}

/// The health check of `target`: live (inventory, load tests with a sampler) or described by
/// captures or a catalog entry (modeled).
pub(super) fn health(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    target: &Target,
    options: &CheckOptions,
) -> Result<(), JobError> {
    check_gpus(topo, &options.gpus)?;
    // A recorded soak is judged alone: there is no machine here to check.
    if let Some(soak) = options.soak.as_ref().filter(|s| s.replay.is_some()) {
        return super::soak::run(ctx, topo, &options.gpus, soak, &options.thresholds);
    }
    let report = match target {
        Target::Live | Target::Topology { .. } => {
            let cancel = ctx.cancel;
            let measure = super::measured_bandwidth;
            let (report, warnings) = check_live(topo, options, &measure, cancel, &mut |p, _| {
                ctx.emit(Event::Progress {
                    done: p.done,
                    total: p.total,
                    label: p.last.clone(),
                });
                ctx.after_case();
            })
            .map_err(|e| match e {
                crate::health::run::CheckError::Topology(t) => JobError::from(t),
                crate::health::run::CheckError::Bench(b) => JobError::from(b),
            })?;
            ctx.warnings(warnings);
            report
        }
        Target::Import { paths } => {
            // Figures a reference tool measured on that machine are judged; without them, the
            // captures' machine is checked modeled.
            let imported = crate::report::reference_tools::import(paths)?;
            // Judged against the design the captures' matrices give (`topo` is the machine as
            // its state captures say it runs).
            let m = imported.machine.clone();
            if imported.has_tools() {
                let collectives = imported.collectives().map(|c| c.results);
                let mut report = crate::health::run::check_imported(
                    &m.topology,
                    m.inventory,
                    m.after,
                    imported.bandwidth().map(|b| b.results).unwrap_or_default(),
                    collectives.as_deref().unwrap_or_default(),
                    &imported.source_words(),
                    options,
                );
                // What the files held that is not judged, so that nothing vanishes unsaid.
                report.notes.extend(imported.not_read_lines());
                report
            } else {
                check_described(
                    &m.topology,
                    m.inventory,
                    m.after,
                    options,
                    &super::modeled_as_stated,
                )
            }
        }
        Target::Catalog { .. } => {
            let (design, before, after) = target.described(topo)?;
            check_described(&design, before, after, options, &super::modeled_as_stated)
        }
    };
    ctx.emit(Event::Health {
        report: Box::new(report),
    });
    if let Some(soak) = &options.soak
        && !ctx.cancelled()
    {
        super::soak::run(ctx, topo, &options.gpus, soak, &options.thresholds)?;
    }
    Ok(())
}

fn check_gpus(topo: &Topology, gpus: &[usize]) -> Result<(), JobError> {
    for &g in gpus {
        if topo.gpu(g).is_none() {
            return Err(JobError::input(format!(
                "--gpus: no GPU {g} (the machine has GPUs {})",
                crate::model::quantities::gpu_list(&topo.gpu_indices())
            )));
        }
    }
    Ok(())
}

/// The whole suite: the stages of `options` in order, each announced and timed.
pub(super) fn suite(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    target: &Target,
    options: &SuiteOptions,
) -> Result<(), JobError> {
    check_gpus(topo, &options.gpus)?;
    let gpus = &options.gpus;
    for &stage in &options.stages {
        if ctx.cancelled() {
            break;
        }
        let t0 = Instant::now();
        ctx.emit(Event::Stage {
            stage,
            done: false,
            seconds: None,
        });
        match stage {
            Stage::Topology => {}
            Stage::Health => {
                let opts = CheckOptions {
                    gpus: gpus.clone(),
                    quick: !options.full,
                    ..Default::default()
                };
                if options.modeled {
                    // Modeled: what the target describes (captures, a catalog entry's state), no
                    // load tests.
                    let (design, before, after) = target.described(topo)?;
                    let report =
                        check_described(&design, before, after, &opts, &super::modeled_as_stated);
                    ctx.emit(Event::Health {
                        report: Box::new(report),
                    });
                } else {
                    health(ctx, topo, target, &opts)?;
                }
            }
            Stage::Bandwidth => bandwidth(
                ctx,
                topo,
                &bandwidth_presets(options.full, gpus, topo.gpus.len()),
                options.modeled,
                None,
                options.energy_window_s,
            )?,
            Stage::Collectives => collectives(
                ctx,
                topo,
                &collective_presets(options.full, gpus),
                options.modeled,
                options.nccl_lib.as_deref(),
                options.energy_window_s,
            )?,
            Stage::Scaling => suite_scaling(ctx, topo, options)?,
            Stage::Soak => {
                let Some(soak) = &options.soak else {
                    return Err(JobError::input(
                        "the soak stage needs a duration (--soak D)",
                    ));
                };
                super::soak::run(ctx, topo, gpus, soak, &CheckOptions::default().thresholds)?
            }
        }
        if !ctx.cancelled() {
            ctx.emit(Event::Stage {
                stage,
                done: true,
                seconds: Some(t0.elapsed().as_secs_f64()),
            });
        }
    }
    Ok(())
}

/// The suite's scaling stage: `--modeled` models the catalog; `--full` measures
/// [`FULL_MEASURED_WORKLOADS`] and models the rest on the machine they measured; the quick preset
/// models with the all-reduce curve the collectives stage measured.
fn suite_scaling(
    ctx: &mut Ctx<'_>,
    topo: &Topology,
    options: &SuiteOptions,
) -> Result<(), JobError> {
    let workloads = workload::catalog();
    let modes = Mode::ALL.to_vec();
    let gpus = &options.gpus;
    if options.modeled {
        let run = run_modeled(topo, gpus, &workloads, &modes, DEFAULT_MAX_GPUS);
        emit_scaling(ctx, &run);
        return Ok(());
    }
    if options.full {
        let (measured, rest): (Vec<_>, Vec<_>) = workloads
            .iter()
            .cloned()
            .partition(|w| FULL_MEASURED_WORKLOADS.contains(&w.name.as_str()));
        // The collectives stage swept the NCCL all-reduce over these GPUs moments ago: its
        // curve serves; the framework runs are brief (the suite's time, README: --full within
        // minutes).
        let opts = MeasureOptions {
            nccl_lib: options.nccl_lib.clone(),
            python: options.python.clone(),
            curve: ctx
                .report
                .collectives
                .as_ref()
                .and_then(|c| CommCurve::from_results(&c.results))
                .filter(|c| c.source == crate::model::Source::Measured),
            brief: true,
            strong_for: Some(FULL_STRONG_MEASURED.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        let scope = Scope {
            gpus,
            workloads: &measured,
            modes: &modes,
            max_gpus: DEFAULT_MAX_GPUS,
        };
        let mut run = measure_scaling(ctx, topo, scope, &opts)?;
        if let Some(machine) = run.machine.clone() {
            for w in &rest {
                run.rows.extend(crate::scaling::table::model(
                    w,
                    &machine,
                    &modes,
                    DEFAULT_MAX_GPUS,
                ));
            }
            run.workloads.extend(rest.iter().cloned());
            run.notes.push(format!(
                "measured runs for {} (strong mode for {} only: the others' strong rows are \
                 modeled, `bench scaling --measure --mode strong` measures them); the other \
                 workloads modeled on the measured machine",
                FULL_MEASURED_WORKLOADS.join(", "),
                FULL_STRONG_MEASURED.join(", ")
            ));
        }
        emit_scaling(ctx, &run);
        return Ok(());
    }
    let curve = ctx
        .report
        .collectives
        .as_ref()
        .and_then(|c| CommCurve::from_results(&c.results));
    let run = match curve {
        Some(c) => run_with_curve(topo, gpus, &workloads, &modes, DEFAULT_MAX_GPUS, c),
        None => {
            let mut r = run_modeled(topo, gpus, &workloads, &modes, DEFAULT_MAX_GPUS);
            r.notes.push(
                "no measured all-reduce curve (collectives not run): modeled curve used".into(),
            );
            r
        }
    };
    emit_scaling(ctx, &run);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_bound_the_pairs_of_a_large_machine_even_when_no_gpus_are_named() {
        // An empty list is every GPU of the machine: a 256-GPU import once ran every pair.
        for full in [false, true] {
            let big = bandwidth_presets(
                full,
                &GpuSelection::all(),
                crate::bench::plan::ALL_PAIRS_MAX_GPUS + 1,
            );
            assert!(big.iter().all(|p| p.pairs == PairScope::PerLinkKind));
            let named =
                GpuSelection::new((0..=crate::bench::plan::ALL_PAIRS_MAX_GPUS).collect()).unwrap();
            let big = bandwidth_presets(full, &named, 1_000);
            assert!(big.iter().all(|p| p.pairs == PairScope::PerLinkKind));
        }
        // --full: nvbandwidth's 3 samples everywhere; its sweeps 4 KiB to 1 GiB in steps of 4.
        let full = bandwidth_presets(true, &GpuSelection::all(), 2);
        assert!(full.iter().all(|p| p.samples == 3));
        let sweep = full.iter().find(|p| p.sizes.len() > 1).unwrap();
        assert_eq!(sweep.sizes.first(), Some(&(4 << 10)));
        assert_eq!(sweep.sizes.last(), Some(&(1 << 30)));
        assert!(sweep.sizes.windows(2).all(|w| w[1] == 4 * w[0]));
        let small = bandwidth_presets(false, &GpuSelection::all(), 8);
        assert!(small.iter().all(|p| p.pairs == PairScope::All));
        // Two GPUs named on a large machine: every pair of them.
        let two = bandwidth_presets(false, &GpuSelection::new(vec![0, 1]).unwrap(), 1_000);
        assert!(two.iter().all(|p| p.pairs == PairScope::All));
    }
}
