//! The Soak view's series: a soak's samples split per GPU into columns, read once and extended
//! as a running soak's samples arrive, and decimated for drawing — the lowest and highest
//! reading of each pixel column of the visible range, so that hours of samples draw as fast as
//! minutes. A reading that is `None` is a gap in its line, never a zero.

use std::collections::BTreeMap;

use crate::model::decimate::{Extremes, MinMaxLine};
use crate::model::{SoakLoad, SoakSample, SoakSection};

/// A time step longer than this many sampling intervals is a gap in the lines.
const GAP_INTERVALS: f64 = 2.5;

/// A figure plotted over time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Metric {
    GemmRate,
    CopyRate,
    SmClock,
    Power,
    GpuTemp,
    MemTemp,
}

const METRICS: usize = 6;

impl Metric {
    pub(super) fn index(self) -> usize {
        self as usize
    }

    /// The sample's reading of this figure; a throughput only in the phase whose unit it has.
    fn of(self, s: &SoakSample) -> Option<f64> {
        let v = match self {
            Self::GemmRate => s.rate.filter(|_| s.phase == Some(SoakLoad::Gemm)),
            Self::CopyRate => s
                .rate
                .filter(|_| s.phase.is_some_and(|p| p != SoakLoad::Gemm)),
            Self::SmClock => s.sm_clock_mhz.map(f64::from),
            Self::Power => s.power_w,
            Self::GpuTemp => s.gpu_temp_c,
            Self::MemTemp => s.mem_temp_c,
        };
        v.filter(|v| v.is_finite())
    }
}

/// One GPU's samples as columns: times, and each figure's readings (`None`: not read, or a gap
/// row where samples are missing); and the same summarised per [`Block`] of rows, which a view
/// of many samples per pixel reads instead of the rows.
#[derive(Default)]
pub(super) struct GpuColumns {
    pub(super) t: Vec<f64>,
    v: Vec<[Option<f64>; METRICS]>,
    /// The load running in each row: a throughput line breaks where it changes (another load's
    /// figure is another quantity).
    phase: Vec<Option<SoakLoad>>,
    blocks: Vec<Block>,
}

/// Rows per [`Block`], at most.
const BLOCK: usize = 32;

/// Up to [`BLOCK`] rows of one GPU under one load (a block ends where the load changes): each
/// figure's lowest and highest reading (time, value).
#[derive(Clone, Copy)]
struct Block {
    /// Its first row.
    start: usize,
    phase: Option<SoakLoad>,
    extremes: [Option<Extremes>; METRICS],
}

impl GpuColumns {
    fn push(&mut self, t: f64, row: [Option<f64>; METRICS], phase: Option<SoakLoad>) {
        let n = self.t.len();
        let full = |b: &Block| n - b.start >= BLOCK || b.phase != phase;
        if self.blocks.last().is_none_or(full) {
            self.blocks.push(Block {
                start: n,
                phase,
                extremes: [None; METRICS],
            });
        }
        if let Some(b) = self.blocks.last_mut() {
            for (slot, v) in b.extremes.iter_mut().zip(row) {
                if let Some(y) = v {
                    Extremes::include(slot, t, y);
                }
            }
        }
        self.t.push(t);
        self.v.push(row);
        self.phase.push(phase);
    }
}

/// The section's samples split per GPU, kept between frames and extended as samples arrive.
#[derive(Default)]
pub struct Columns {
    /// Samples read so far, and the last one's time and GPU: a section that shrank or changed
    /// underneath (a new soak) is read again.
    taken: usize,
    last: Option<(u64, usize)>,
    interval_s: f64,
    pub(super) gpus: BTreeMap<usize, GpuColumns>,
    /// Which figures have any reading at all.
    has: [bool; METRICS],
    /// The loads whose phases have a throughput reading.
    rated: std::collections::BTreeSet<SoakLoad>,
    /// Changes with every update that took samples (or began again).
    version: u64,
}

impl Columns {
    /// Takes the samples of `s` not taken yet (all of them when `s` is another section).
    pub(super) fn update(&mut self, s: &SoakSection) {
        let key = |x: &SoakSample| (x.t_s.to_bits(), x.gpu);
        let same = self.taken <= s.samples.len()
            && self.interval_s.to_bits() == s.interval_s.to_bits()
            && (self.taken == 0 || Some(key(&s.samples[self.taken - 1])) == self.last);
        if !same {
            *self = Self {
                interval_s: s.interval_s,
                version: self.version + 1,
                ..Self::default()
            };
        }
        if self.taken < s.samples.len() {
            self.version += 1;
        }
        self.interval_s = s.interval_s;
        let gap = (s.interval_s.is_finite() && s.interval_s > 0.0)
            .then_some(s.interval_s * GAP_INTERVALS);
        for x in &s.samples[self.taken..] {
            if !x.t_s.is_finite() {
                continue;
            }
            let col = self.gpus.entry(x.gpu).or_default();
            if let (Some(gap), Some(&prev)) = (gap, col.t.last())
                && x.t_s - prev > gap
            {
                // Samples are missing here: a row of nothing breaks every line.
                col.push(prev + s.interval_s, [None; METRICS], None);
            }
            let mut row = [None; METRICS];
            for m in ALL_METRICS {
                row[m.index()] = m.of(x);
                self.has[m.index()] |= row[m.index()].is_some();
            }
            if let (Some(load), Some(_)) = (
                x.phase,
                row[Metric::GemmRate.index()].or(row[Metric::CopyRate.index()]),
            ) {
                self.rated.insert(load);
            }
            col.push(x.t_s, row, x.phase);
        }
        self.taken = s.samples.len();
        self.last = s.samples.last().map(key);
    }

    /// Changes whenever the columns do (what was drawn from them is then stale).
    pub(super) fn version(&self) -> u64 {
        self.version
    }

    /// The loads whose phases have a throughput reading, in cycle order.
    pub(super) fn rated_loads(&self) -> impl Iterator<Item = SoakLoad> + '_ {
        self.rated.iter().copied()
    }

    /// Whether any sample has a reading of `m`.
    pub(super) fn has(&self, m: Metric) -> bool {
        self.has[m.index()]
    }

    /// The time span of every GPU's samples.
    pub(super) fn span(&self) -> Option<(f64, f64)> {
        let lo = self.gpus.values().filter_map(|c| c.t.first()).copied();
        let hi = self.gpus.values().filter_map(|c| c.t.last()).copied();
        Some((lo.reduce(f64::min)?, hi.reduce(f64::max)?))
    }
}

const ALL_METRICS: [Metric; METRICS] = [
    Metric::GemmRate,
    Metric::CopyRate,
    Metric::SmClock,
    Metric::Power,
    Metric::GpuTemp,
    Metric::MemTemp,
];

/// The runs of one figure of one GPU over `[x0, x1]` — a new run after every gap, where
/// readings are missing, and, for a throughput, where the load changes —: every sample where
/// they are fewer than twice `buckets`, else the lowest and highest reading of each of
/// `buckets` equal time slices, in time order (read from the blocks where a slice holds many).
/// One sample each side of the range keeps the line running to the plot's edges.
pub(super) fn decimate(
    col: &GpuColumns,
    m: Metric,
    x0: f64,
    x1: f64,
    buckets: usize,
) -> Vec<Vec<[f64; 2]>> {
    let t = &col.t;
    let lo = t.partition_point(|&x| x < x0).saturating_sub(1);
    let hi = (t.partition_point(|&x| x <= x1) + 1).min(t.len());
    let buckets = buckets.max(1);
    let span = x1 - x0;
    let slices = (hi - lo > 2 * buckets && span > 0.0).then(|| span / buckets as f64);
    let mut d = Decimator {
        line: MinMaxLine::default(),
        bucket: None,
        row: 0,
        x0,
        width: slices,
        // A throughput line breaks where the load changes; the other figures run on.
        by_phase: matches!(m, Metric::GemmRate | Metric::CopyRate),
        last_phase: None,
    };
    let from_blocks = hi.saturating_sub(lo) >= BLOCK * buckets;
    let k = m.index();
    let blocks = &col.blocks;
    // The next block that starts at or after the row in hand.
    let mut bi = if from_blocks {
        blocks.partition_point(|b| b.start < lo)
    } else {
        blocks.len()
    };
    let mut i = lo;
    while i < hi {
        if let Some(b) = blocks.get(bi).filter(|b| b.start == i) {
            let end = blocks.get(bi + 1).map_or(t.len(), |next| next.start);
            bi += 1;
            if end <= hi {
                d.feed(t[i], b.phase, b.extremes[k]);
                i = end;
                continue;
            }
        }
        let v = col.v[i][k].map(|y| Extremes::new(t[i], y));
        d.feed(t[i], col.phase[i], v);
        i += 1;
    }
    d.finish()
}

/// Readings in time order → the runs of a line, one bucket at a time.
struct Decimator {
    line: MinMaxLine,
    /// The bucket in hand, and whether anything was read in it.
    bucket: Option<(i64, bool)>,
    /// Rows fed so far: drawn as they are, each is a column of its own.
    row: i64,
    x0: f64,
    /// A bucket's width; `None`: every reading as it is.
    width: Option<f64>,
    by_phase: bool,
    last_phase: Option<Option<SoakLoad>>,
}

impl Decimator {
    /// A row (or a block of rows starting at `t`) ran under `phase` with these extremes; none
    /// when nothing was read.
    fn feed(&mut self, t: f64, phase: Option<SoakLoad>, read: Option<Extremes>) {
        let changed = self.by_phase && self.last_phase.is_some_and(|last| last != phase);
        self.last_phase = Some(phase);
        let Some(width) = self.width else {
            self.row += 1;
            if changed {
                self.line.break_here();
            }
            match read {
                Some(e) => self.add(self.row, e),
                None => self.line.break_here(),
            }
            return;
        };
        let n = ((t - self.x0) / width).floor() as i64;
        if (changed || self.bucket.is_some_and(|(b, _)| b != n))
            && let Some((_, false)) = self.bucket.take()
        {
            // A time slice with nothing read in it is a gap.
            self.line.break_here();
        }
        if changed {
            self.line.break_here();
        }
        let bucket = self.bucket.get_or_insert((n, false));
        if let Some(e) = read {
            bucket.1 = true;
            self.add(n, e);
        }
    }

    fn add(&mut self, column: i64, e: Extremes) {
        for (t, v) in [e.low, e.high] {
            self.line.reading(column, t, v);
        }
    }

    fn finish(self) -> Vec<Vec<[f64; 2]>> {
        self.line
            .finish_points()
            .into_iter()
            .map(|run| run.into_iter().map(|(t, v)| [t, v]).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(values: &[Option<f64>]) -> GpuColumns {
        let mut c = GpuColumns::default();
        for (i, v) in values.iter().enumerate() {
            let mut row = [None; METRICS];
            row[Metric::Power.index()] = *v;
            c.push(i as f64, row, None);
        }
        c
    }

    #[test]
    fn few_samples_are_drawn_as_they_are_with_gaps() {
        let c = column(&[Some(1.0), None, None, Some(3.0), Some(4.0)]);
        let runs = decimate(&c, Metric::Power, 0.0, 4.0, 100);
        assert_eq!(runs, vec![vec![[0.0, 1.0]], vec![[3.0, 3.0], [4.0, 4.0]]]);
    }

    #[test]
    fn many_samples_keep_each_buckets_extremes() {
        // 10,000 samples of a flat 500 with one dip to 100 and one spike to 900.
        let mut v = vec![Some(500.0); 10_000];
        v[1234] = Some(100.0);
        v[8765] = Some(900.0);
        let c = column(&v);
        let runs = decimate(&c, Metric::Power, 0.0, 9_999.0, 200);
        assert_eq!(runs.len(), 1);
        let pts = &runs[0];
        assert!(pts.len() <= 2 * 200 + 4, "{} points", pts.len());
        assert!(pts.contains(&[1234.0, 100.0]));
        assert!(pts.contains(&[8765.0, 900.0]));
        assert!(pts.windows(2).all(|w| w[0][0] <= w[1][0]), "in time order");
        // A stretch read by nothing is a gap at any zoom.
        let mut v = vec![Some(500.0); 10_000];
        v[4000..4200].fill(None);
        let runs = decimate(&column(&v), Metric::Power, 0.0, 9_999.0, 200);
        assert_eq!(runs.len(), 2);
        assert!(runs.iter().flatten().all(|p| p[1] == 500.0));
    }

    #[test]
    fn a_throughput_line_breaks_where_the_load_changes() {
        let s = SoakSection {
            interval_s: 1.0,
            samples: (1..=6)
                .map(|i| SoakSample {
                    t_s: f64::from(i),
                    phase: Some(if i <= 3 {
                        SoakLoad::Memory
                    } else {
                        SoakLoad::Pcie
                    }),
                    rate: Some(if i <= 3 { 2900.0 } else { 50.0 }),
                    power_w: Some(400.0),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut c = Columns::default();
        c.update(&s);
        let col = &c.gpus[&0];
        assert_eq!(decimate(col, Metric::CopyRate, 0.0, 6.0, 100).len(), 2);
        assert_eq!(decimate(col, Metric::CopyRate, 0.0, 6.0, 1).len(), 2);
        assert_eq!(decimate(col, Metric::Power, 0.0, 6.0, 100).len(), 1);
        assert!(decimate(col, Metric::GemmRate, 0.0, 6.0, 100).is_empty());
    }

    #[test]
    fn blocks_give_what_rows_give() {
        // A day of seconds with a dip, a spike and a stretch not read; 300 buckets read the
        // blocks, and find the same extremes as the rows.
        let mut v: Vec<Option<f64>> = (0..86_400).map(|i| Some(500.0 + (i % 7) as f64)).collect();
        v[40_000] = Some(10.0);
        v[70_001] = Some(990.0);
        v[50_000..50_600].fill(None);
        let c = column(&v);
        let runs = decimate(&c, Metric::Power, 0.0, 86_399.0, 300);
        assert_eq!(runs.len(), 2, "the stretch not read is a gap");
        let pts: Vec<[f64; 2]> = runs.into_iter().flatten().collect();
        assert!(pts.len() <= 2 * 300 + 4, "{} points", pts.len());
        assert!(pts.contains(&[40_000.0, 10.0]));
        assert!(pts.contains(&[70_001.0, 990.0]));
        assert!(pts.windows(2).all(|w| w[0][0] <= w[1][0]), "in time order");
        // Zoomed in, the rows themselves.
        let near = decimate(&c, Metric::Power, 39_990.0, 40_010.0, 300);
        assert_eq!(near.concat().len(), 23);
    }

    #[test]
    fn from_blocks_a_throughput_still_breaks_where_the_load_changes() {
        // Memory and host copies alternating every 100 s (not a multiple of a block): no run
        // mixes the two loads' figures.
        let mut c = GpuColumns::default();
        for i in 0..20_000 {
            let (load, rate) = if (i / 100) % 2 == 0 {
                (SoakLoad::Memory, 2900.0)
            } else {
                (SoakLoad::Pcie, 50.0)
            };
            let mut row = [None; METRICS];
            row[Metric::CopyRate.index()] = Some(rate);
            c.push(i as f64, row, Some(load));
        }
        let runs = decimate(&c, Metric::CopyRate, 0.0, 19_999.0, 50);
        assert_eq!(runs.len(), 200);
        for r in &runs {
            assert!(
                r.iter().all(|p| p[1] == r[0][1]),
                "a run mixes loads: {r:?}"
            );
        }
    }

    #[test]
    fn nothing_read_is_no_points_not_zeros() {
        let c = column(&[None; 5000]);
        assert!(decimate(&c, Metric::Power, 0.0, 4999.0, 100).is_empty());
        assert!(decimate(&column(&[None; 5]), Metric::Power, 0.0, 4.0, 100).is_empty());
        assert!(decimate(&GpuColumns::default(), Metric::Power, 0.0, 1.0, 10).is_empty());
    }

    #[test]
    fn missing_intervals_break_the_line() {
        let s = SoakSection {
            interval_s: 1.0,
            samples: [0.0, 1.0, 2.0, 10.0, 11.0]
                .iter()
                .map(|&t| SoakSample {
                    t_s: t,
                    power_w: Some(300.0),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut c = Columns::default();
        c.update(&s);
        let runs = decimate(&c.gpus[&0], Metric::Power, 0.0, 11.0, 100);
        assert_eq!(runs.len(), 2);
        // Samples that arrive later are added; a new section is read again.
        let mut more = s.clone();
        more.samples.push(SoakSample {
            t_s: 12.0,
            ..Default::default()
        });
        c.update(&more);
        assert_eq!(c.gpus[&0].t.len(), 7);
        c.update(&SoakSection::default());
        assert!(c.gpus.is_empty());
    }
}
