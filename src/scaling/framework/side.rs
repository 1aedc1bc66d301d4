//! The 1-GPU runs side by side (`--full`'s time): the workloads of the launch on one GPU shared
//! out over the selected GPUs, one launch per GPU, all at once. Each GPU is a GPU of its own
//! (its memory, its clocks, its energy counter), so where the GPUs are alike a workload's 1-GPU
//! step is the same on any of them; what they share is the host, whose cores run one Python
//! each (on 2× H200, a 1-GPU step beside another process on the other GPU read within 1.5 % of
//! the same step alone: docs/BENCHMARKS.md, fifteenth session).

use std::sync::mpsc;

use super::launch::{LaunchOutcome, MIN_STEPS_ONE_GPU, launch_script};
use super::protocol::Event;
use super::{FrameworkOptions, Planned};

/// A launch's GPUs and the workloads it runs.
pub(super) type Share<'w> = (Vec<usize>, Vec<Planned<'w>>);

/// `batch`, the launch on `n` GPUs, as the launches that run it: one on the first `n` GPUs,
/// or — on one GPU where `opts` asks for side by side and there are two GPUs or more and two
/// workloads or more — one per GPU, the longest workloads placed first each on the GPU with
/// the least to do so far, each share keeping the workloads' order.
pub(super) fn shares<'w>(
    batch: Vec<Planned<'w>>,
    n: usize,
    opts: &FrameworkOptions,
) -> Vec<Share<'w>> {
    let gpus = opts.gpus.len();
    if !opts.one_gpu_side_by_side || n != 1 || gpus < 2 || batch.len() < 2 {
        return vec![(opts.gpus[..n.min(gpus)].to_vec(), batch)];
    }
    let k = gpus.min(batch.len());
    let seconds: Vec<f64> = batch
        .iter()
        .map(|(w, _, planned)| expected_seconds(w, planned, opts))
        .collect();
    let mut longest_first: Vec<usize> = (0..batch.len()).collect();
    longest_first.sort_by(|&a, &b| seconds[b].total_cmp(&seconds[a]));
    let mut load = vec![0.0_f64; k];
    let mut on = vec![0; batch.len()];
    for i in longest_first {
        let least = (0..k)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]))
            .unwrap_or(0);
        load[least] += seconds[i];
        on[i] = least;
    }
    let mut out: Vec<Share<'w>> = (0..k).map(|g| (vec![opts.gpus[g]], Vec::new())).collect();
    for (planned, g) in batch.into_iter().zip(on) {
        out[g].1.push(planned);
    }
    out
}

/// About how long `w`'s runs of `planned` take in a launch on one GPU, seconds: per mode a
/// warm-up and a timed window of at least the launch's fewest steps (the workload's record
/// says how long a step is), and one window more for the build, the host probe, the profiler
/// and DDP at one rank. Only the shares' balance rests on it.
fn expected_seconds(
    w: &crate::scaling::Workload,
    planned: &[(crate::scaling::Mode, f64)],
    opts: &FrameworkOptions,
) -> f64 {
    let record_ms = w
        .calibration
        .iter()
        .map(|c| c.step_ms)
        .filter(|s| s.is_finite() && *s > 0.0)
        .reduce(f64::min);
    let window = |per: f64| {
        let step_s = record_ms.map_or(0.0, |ms| ms / 1e3 * per / w.per_gpu_batch.max(1.0));
        opts.warmup_s + opts.measure_s.max(MIN_STEPS_ONE_GPU as f64 * step_s)
    };
    planned.iter().map(|&(_, per)| window(per)).sum::<f64>() + opts.warmup_s + opts.measure_s
}

/// Runs every share's launch at once (`specs`: each one's spec, in `shares`' order), `on_event`
/// getting every launch's events as they arrive; the outcomes in the same order.
pub(super) fn launch_together(
    python: &str,
    script: &str,
    launches: &[(Vec<usize>, serde_json::Value)],
    opts: &FrameworkOptions,
    cancel: &std::sync::atomic::AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> Vec<LaunchOutcome> {
    if let [(gpus, spec)] = launches {
        return vec![launch_script(
            python,
            script,
            spec,
            gpus,
            opts.timeout,
            cancel,
            on_event,
        )];
    }
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Event>();
        let handles: Vec<_> = launches
            .iter()
            .map(|(gpus, spec)| {
                let tx = tx.clone();
                scope.spawn(move || {
                    launch_script(python, script, spec, gpus, opts.timeout, cancel, &mut |e| {
                        // The receiver lives until every launch has ended.
                        let _ = tx.send(e.clone());
                    })
                })
            })
            .collect();
        drop(tx);
        for e in rx {
            on_event(&e);
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| LaunchOutcome {
                    failure: Some("the thread that ran the launch panicked".into()),
                    ..Default::default()
                })
            })
            .collect()
    })
}

/// The note that says the 1-GPU runs went side by side, and where each ran.
pub(super) fn note(shares: &[Share<'_>]) -> Option<String> {
    if shares.len() < 2 || shares.iter().any(|(gpus, _)| gpus.len() != 1) {
        return None;
    }
    let placed: Vec<String> = shares
        .iter()
        .map(|(gpus, part)| {
            let names: Vec<&str> = part.iter().map(|(w, _, _)| w.name.as_str()).collect();
            format!("{} on GPU {}", names.join(", "), gpus[0])
        })
        .collect();
    Some(format!(
        "the 1-GPU runs went side by side, one launch per GPU at once ({}): each GPU its own, the host shared",
        placed.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::Mode;
    use crate::scaling::workload::resolve;

    fn planned(names: &[&str]) -> Vec<(crate::scaling::Workload, Vec<(Mode, f64)>)> {
        names
            .iter()
            .map(|n| {
                let w = resolve(n).unwrap();
                let mut modes = vec![(Mode::Weak, w.per_gpu_batch)];
                if *n == "resnet50" {
                    modes.push((Mode::Strong, 1024.0));
                }
                (w, modes)
            })
            .collect()
    }

    fn opts(gpus: Vec<usize>, side: bool) -> FrameworkOptions {
        FrameworkOptions {
            gpus,
            warmup_s: 3.0,
            measure_s: 5.0,
            one_gpu_side_by_side: side,
            ..Default::default()
        }
    }

    fn placed(shares: &[Share<'_>]) -> Vec<(Vec<usize>, Vec<String>)> {
        shares
            .iter()
            .map(|(g, p)| {
                (
                    g.clone(),
                    p.iter().map(|(w, _, _)| w.name.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_one_gpu_launch_is_shared_out_over_the_gpus_longest_first() {
        let ws = planned(&["resnet50", "bert-large", "gpt2-xl"]);
        let batch = || -> Vec<Planned<'_>> {
            ws.iter()
                .map(|(w, m)| (w, serde_json::json!({}), m.clone()))
                .collect()
        };
        // ResNet-50 runs two modes: the longest, alone on GPU 0; the language models share GPU 1
        // in their own order.
        let two = shares(batch(), 1, &opts(vec![0, 1], true));
        assert_eq!(
            placed(&two),
            [
                (vec![0], vec!["resnet50".to_string()]),
                (vec![1], vec!["bert-large".into(), "gpt2-xl".into()]),
            ]
        );
        assert!(note(&two).unwrap().contains("bert-large, gpt2-xl on GPU 1"));
        // More GPUs than workloads: one each, on the first three.
        let four = shares(batch(), 1, &opts(vec![4, 5, 6, 7], true));
        assert_eq!(four.len(), 3);
        assert!(four.iter().all(|(_, p)| p.len() == 1));
        assert_eq!(four[2].0, vec![6]);
        // Not asked for, on two GPUs, or one GPU only: one launch, as before.
        for (n, o) in [
            (1, opts(vec![0, 1], false)),
            (2, opts(vec![0, 1], true)),
            (1, opts(vec![3], true)),
        ] {
            let one = shares(batch(), n, &o);
            assert_eq!(one.len(), 1);
            assert_eq!(one[0].0, o.gpus[..n].to_vec());
            assert_eq!(one[0].1.len(), 3);
            assert_eq!(note(&one), None);
        }
    }

    #[test]
    fn a_long_step_makes_its_window_longer() {
        let ws = planned(&["gpt2-xl", "bert-large"]);
        let o = opts(vec![0, 1], true);
        let gpt = expected_seconds(&ws[0].0, &ws[0].1, &o);
        let bert = expected_seconds(&ws[1].0, &ws[1].1, &o);
        // GPT-2 XL's record step (~0.38 s) × 15 steps outlasts the 5 s window; BERT-large's not.
        assert!(gpt > bert, "{gpt} vs {bert}");
        assert_eq!(bert, 3.0 + 5.0 + 3.0 + 5.0);
    }
}
