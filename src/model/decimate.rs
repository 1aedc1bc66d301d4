//! Drawing many readings in few columns: the lowest and highest reading of each column, joined
//! into runs of a line that break where readings are missing. One decimator for every time
//! line drawn — the documents' time charts (`document::timechart`), the Soak view's plots and
//! the Live view's sparklines —; each caller says which column a reading falls in and where
//! its line breaks, since they differ in that (a step longer than allowed, a phase change, a
//! time slice with nothing read, a pixel column of a window).

/// A column's lowest and highest reading, (time, value) each; the first of equal ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Extremes {
    /// The lowest reading.
    pub low: (f64, f64),
    /// The highest reading.
    pub high: (f64, f64),
}

impl Extremes {
    /// One reading.
    pub fn new(t: f64, v: f64) -> Self {
        Self {
            low: (t, v),
            high: (t, v),
        }
    }

    /// Takes in a reading.
    pub fn add(&mut self, t: f64, v: f64) {
        if v < self.low.1 {
            self.low = (t, v);
        }
        if v > self.high.1 {
            self.high = (t, v);
        }
    }

    /// Takes a reading into `slot`, which holds none yet or the extremes so far.
    pub fn include(slot: &mut Option<Extremes>, t: f64, v: f64) {
        match slot {
            Some(e) => e.add(t, v),
            None => *slot = Some(Extremes::new(t, v)),
        }
    }

    /// The lowest and highest reading in time order; one where they are the same reading.
    pub fn in_time_order(&self) -> impl Iterator<Item = (f64, f64)> {
        let (a, b) = if self.low.0 <= self.high.0 {
            (self.low, self.high)
        } else {
            (self.high, self.low)
        };
        std::iter::once(a).chain((b != a).then_some(b))
    }
}

/// Readings in time order → runs of columns, each column a run's `(index, extremes)`.
#[derive(Debug, Default)]
pub struct MinMaxLine {
    runs: Vec<Vec<(i64, Extremes)>>,
    /// The column being filled, and whether it joins the column before.
    open: Option<(i64, Extremes, bool)>,
    /// The next new column starts a run of its own.
    broken: bool,
}

impl MinMaxLine {
    /// A reading `(t, v)` in column `index`: it joins the open column of that index, else opens
    /// the next column.
    pub fn reading(&mut self, index: i64, t: f64, v: f64) {
        match &mut self.open {
            Some((open, e, _)) if *open == index => e.add(t, v),
            _ => {
                self.close();
                self.open = Some((index, Extremes::new(t, v), !self.broken));
            }
        }
        self.broken = false;
    }

    /// A reading is missing here: the next column starts a new run, while a reading in the open
    /// column still joins it (a gap narrower than a column does not show).
    pub fn break_before_next_column(&mut self) {
        self.broken = true;
    }

    /// The line breaks here: the open column ends, and the next reading, in whatever column,
    /// starts a new run.
    pub fn break_here(&mut self) {
        self.close();
        self.broken = true;
    }

    fn close(&mut self) {
        let Some((index, e, joined)) = self.open.take() else {
            return;
        };
        match self.runs.last_mut() {
            Some(run) if joined => run.push((index, e)),
            _ => self.runs.push(vec![(index, e)]),
        }
    }

    /// The runs of columns, in time order.
    pub fn finish(mut self) -> Vec<Vec<(i64, Extremes)>> {
        self.close();
        self.runs
    }

    /// The runs as points: each column's lowest and highest reading in time order.
    pub fn finish_points(self) -> Vec<Vec<(f64, f64)>> {
        self.finish()
            .into_iter()
            .map(|run| run.iter().flat_map(|(_, e)| e.in_time_order()).collect())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_keeps_its_extremes_in_time_order() {
        let mut l = MinMaxLine::default();
        for (t, v) in [(0.0, 5.0), (0.1, 9.0), (0.2, 1.0), (0.3, 5.0)] {
            l.reading(0, t, v);
        }
        l.reading(1, 1.0, 3.0);
        assert_eq!(
            l.finish_points(),
            [vec![(0.1, 9.0), (0.2, 1.0), (1.0, 3.0)]]
        );
    }

    #[test]
    fn a_gap_inside_a_column_does_not_show_but_one_before_the_next_does() {
        let mut l = MinMaxLine::default();
        l.reading(0, 0.0, 1.0);
        l.break_before_next_column();
        l.reading(0, 0.1, 2.0);
        l.reading(1, 1.0, 3.0);
        l.break_before_next_column();
        l.reading(2, 2.0, 4.0);
        assert_eq!(
            l.finish_points(),
            [vec![(0.0, 1.0), (0.1, 2.0), (1.0, 3.0)], vec![(2.0, 4.0)]]
        );
    }

    #[test]
    fn a_break_here_splits_even_one_column() {
        let mut l = MinMaxLine::default();
        l.reading(0, 0.0, 1.0);
        l.break_here();
        l.reading(0, 0.1, 2.0);
        l.break_here();
        l.break_here();
        let runs = l.finish();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1], [(0, Extremes::new(0.1, 2.0))]);
    }

    #[test]
    fn nothing_read_is_no_runs() {
        let mut l = MinMaxLine::default();
        l.break_here();
        l.break_before_next_column();
        assert!(l.finish().is_empty());
    }
}
