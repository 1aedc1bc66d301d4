//! Where a `--bench` stage's seconds went: the time between the stage's progress events, summed
//! by what each names (a bandwidth test, a collective, a part of the scaling stage), printed
//! under the stage's line. Bandwidth and collectives send an event after each result, so what
//! follows their last result (writing the stage's files) is in no part. The suite's time is a promise (README: `--full` within minutes); this
//! is what says which part of it to cut.

use std::time::Instant;

use crate::job::Stage;

/// The parts named in the line, largest first; the rest are summed as "n more".
const SHOWN: usize = 6;

/// A stage shorter than this, seconds, gets no line (a modeled stage takes none).
const SHORTEST_STAGE_S: f64 = 2.0;

/// A part shorter than this share of the stage is not worth naming alone.
const SMALLEST_SHARE: f64 = 0.03;

/// The clock of the stage in flight.
#[derive(Debug)]
pub struct StageClock {
    stage: Option<Stage>,
    mark: Instant,
    /// Scaling names a part when it starts; the others when it ends.
    started: Option<String>,
    /// Seconds and events per part, in the order first seen.
    parts: Vec<(String, f64, usize)>,
}

impl Default for StageClock {
    fn default() -> Self {
        Self {
            stage: None,
            mark: Instant::now(),
            started: None,
            parts: Vec::new(),
        }
    }
}

impl StageClock {
    /// `stage` started now.
    pub fn start(&mut self, stage: Stage) {
        *self = Self {
            stage: Some(stage),
            ..Self::default()
        };
    }

    /// A progress event with `label` arrived now.
    pub fn progress(&mut self, label: &str) {
        let Some(stage) = self.stage else { return };
        let now = Instant::now();
        let seconds = now.duration_since(self.mark).as_secs_f64();
        self.mark = now;
        let part = part_of(stage, label);
        if stage == Stage::Scaling {
            if let Some(previous) = self.started.replace(part) {
                self.add(previous, seconds);
            } else {
                self.add("before the first step".into(), seconds);
            }
        } else {
            self.add(part, seconds);
        }
    }

    /// The stage ended now: the line saying where its time went (`None` where it named fewer
    /// than two parts or took under [`SHORTEST_STAGE_S`]), and the clock stopped.
    pub fn finish(&mut self) -> Option<String> {
        // Scaling's events are its phases, not results: their count says nothing.
        let counted = self.stage != Some(Stage::Scaling);
        let parts = self.stop();
        let total: f64 = parts.iter().map(|(_, s, _)| s).sum();
        if total < SHORTEST_STAGE_S {
            return None;
        }
        time_line(parts, counted)
    }

    /// Stops the clock: the parts and their seconds and events.
    fn stop(&mut self) -> Vec<(String, f64, usize)> {
        let seconds = self.mark.elapsed().as_secs_f64();
        if let Some(last) = self.started.take() {
            self.add(last, seconds);
        }
        self.stage = None;
        std::mem::take(&mut self.parts)
    }

    fn add(&mut self, part: String, seconds: f64) {
        match self.parts.iter_mut().find(|(p, ..)| *p == part) {
            Some((_, s, n)) => {
                *s += seconds;
                *n += 1;
            }
            None => self.parts.push((part, seconds, 1)),
        }
    }
}

/// What a progress label of `stage` counts toward: a bandwidth test or collective by its name
/// (its sizes and pairs together), a framework launch by its GPU count, any other step of the
/// scaling stage by what it says before its first colon.
fn part_of(stage: Stage, label: &str) -> String {
    match stage {
        Stage::Scaling => {
            let n = label
                .split(" on ")
                .nth(1)
                .and_then(|rest| rest.split(" GPU").next())
                .filter(|n| n.parse::<usize>().is_ok());
            match (label.split_once(':').map(|(head, _)| head), n) {
                (Some("PyTorch"), Some(n)) => format!("PyTorch launch on {n} GPU(s)"),
                (Some(head), Some(n)) if head.starts_with("probe on") => {
                    format!("overlap probe launch on {n} GPU(s)")
                }
                (Some(head), _) => head.to_string(),
                (None, _) => label.to_string(),
            }
        }
        _ => label
            .split_whitespace()
            .next()
            .unwrap_or("unnamed")
            .to_string(),
    }
}

/// `time: h2d 22.1 s (40), …, 9 more 8.0 s`: the parts largest first (`counted`: with how many
/// results each had), or `None` where fewer than two parts were seen (the stage's own seconds
/// say it all).
fn time_line(mut parts: Vec<(String, f64, usize)>, counted: bool) -> Option<String> {
    if parts.len() < 2 {
        return None;
    }
    let total: f64 = parts.iter().map(|(_, s, _)| s).sum();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let named = parts
        .iter()
        .take(SHOWN)
        .take_while(|(_, s, _)| *s >= SMALLEST_SHARE * total)
        .count()
        .max(1);
    let mut words: Vec<String> = parts[..named]
        .iter()
        .map(|(p, s, n)| {
            if counted && *n > 1 {
                format!("{p} {s:.1} s ({n})")
            } else {
                format!("{p} {s:.1} s")
            }
        })
        .collect();
    let rest = &parts[named..];
    if !rest.is_empty() {
        let seconds: f64 = rest.iter().map(|(_, s, _)| s).sum();
        words.push(format!("{} more {seconds:.1} s", rest.len()));
    }
    Some(format!("             time: {}", words.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bandwidth_test_counts_its_sizes_and_pairs_together() {
        assert_eq!(part_of(Stage::Bandwidth, "h2d host→0 8 MiB"), "h2d");
        assert_eq!(
            part_of(Stage::Collectives, "all_reduce ring 1 GiB"),
            "all_reduce"
        );
    }

    #[test]
    fn a_framework_launch_counts_its_phases_together() {
        let one = part_of(
            Stage::Scaling,
            "PyTorch: resnet50 on 1 GPU(s): warmup (weak)",
        );
        assert_eq!(one, "PyTorch launch on 1 GPU(s)");
        assert_eq!(
            part_of(Stage::Scaling, "PyTorch: resnet50, gpt2-xl on 2 GPU(s)"),
            "PyTorch launch on 2 GPU(s)"
        );
        assert_eq!(
            part_of(
                Stage::Scaling,
                "probe on 2 GPU(s): GEMM and copy rates, overlap"
            ),
            "overlap probe launch on 2 GPU(s)"
        );
        assert_eq!(part_of(Stage::Scaling, "proxy runs"), "proxy runs");
    }

    #[test]
    fn the_line_names_the_largest_parts_and_sums_the_rest() {
        let parts = vec![
            ("h2d".to_string(), 20.0, 40),
            ("latency_d2d".to_string(), 0.5, 2),
            ("p2p_read_ce".to_string(), 30.0, 40),
            ("local_copy".to_string(), 0.25, 1),
        ];
        let line = time_line(parts.clone(), true).unwrap();
        assert!(
            line.ends_with("time: p2p_read_ce 30.0 s (40), h2d 20.0 s (40), 2 more 0.8 s"),
            "{line}"
        );
        let uncounted = time_line(parts, false).unwrap();
        assert!(uncounted.contains("p2p_read_ce 30.0 s, h2d"), "{uncounted}");
        assert_eq!(time_line(vec![("h2d".into(), 3.0, 1)], true), None);
    }

    #[test]
    fn scaling_counts_the_time_after_a_label_toward_it() {
        let mut clock = StageClock::default();
        clock.start(Stage::Scaling);
        clock.progress("looking for PyTorch");
        std::thread::sleep(std::time::Duration::from_millis(120));
        clock.progress("PyTorch: resnet50 on 1 GPU(s): build");
        let parts = clock.stop();
        let seconds = |name: &str| parts.iter().find(|(p, ..)| p == name).map(|(_, s, _)| *s);
        assert!(seconds("looking for PyTorch").unwrap() >= 0.12, "{parts:?}");
        assert!(
            seconds("PyTorch launch on 1 GPU(s)").unwrap() < 0.12,
            "{parts:?}"
        );
        assert_eq!(clock.finish(), None, "a stopped clock has nothing to say");
    }
}
