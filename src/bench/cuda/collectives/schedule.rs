//! Who does what, when, in scalescope's own all-reduce algorithms: pure arithmetic, tested on the
//! CPU.
//!
//! **Ring** (reduce-scatter then all-gather over 0→1→…→n−1→0): the buffer is split into n
//! segments, each into the same number of chunks. In reduce-scatter step k (0 ≤ k < n−1), GPU g
//! adds its predecessor's partial sum of segment (g−k−1) mod n into its own; after n−1 steps GPU
//! g holds the finished segment (g+1) mod n. In all-gather step k, GPU g copies segment
//! (g−k) mod n from its predecessor. Step s of chunk c on GPU g depends only on step s−1 of
//! chunk c on its predecessor, so chunks flow through the ring concurrently.
//!
//! **Tree** (Caffe's multi-GPU scheme): at level k, GPU g with g mod 2^(k+1) = 2^k hands its sum
//! to g − 2^k, which adds it; GPU 0 ends with the total, which then goes back down the same tree.

use std::ops::Range;

/// Segment and chunk boundaries are multiples of this many bytes (16: one vector access of the
/// reduce kernel, and a multiple of every element size), except where the buffer ends.
pub const ALIGN_BYTES: u64 = 16;

/// How a buffer of `count` elements is cut for the ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingLayout {
    /// Element range of each segment, in order; together they cover 0..count exactly once.
    pub segments: Vec<Range<u64>>,
    /// Element ranges of each segment's chunks (the same number for every segment; some may be
    /// empty when the buffer is tiny).
    pub chunks: Vec<Vec<Range<u64>>>,
}

impl RingLayout {
    /// Splits `count` elements of `elem` bytes into `n` segments of nearly equal size and each
    /// segment into the same number of chunks: as many as keep chunks at least
    /// `min_chunk_bytes`, at most `max_chunks`, at least 1.
    pub fn new(
        count: u64,
        elem: u64,
        n: usize,
        max_chunks: usize,
        min_chunk_bytes: u64,
    ) -> RingLayout {
        let n = n.max(1);
        let elem = elem.max(1);
        let unit = (ALIGN_BYTES / elem).max(1);
        let segments = split(count, unit, n);
        let smallest = segments
            .iter()
            .map(|r| (r.end - r.start) * elem)
            .min()
            .unwrap_or(0);
        let chunks_per = usize::try_from(smallest / min_chunk_bytes.max(1))
            .unwrap_or(usize::MAX)
            .clamp(1, max_chunks.max(1));
        let chunks = segments
            .iter()
            .map(|s| {
                split(s.end - s.start, unit, chunks_per)
                    .into_iter()
                    .map(|c| s.start + c.start..s.start + c.end)
                    .collect()
            })
            .collect();
        RingLayout { segments, chunks }
    }

    /// Chunks per segment.
    pub fn chunks_per_segment(&self) -> usize {
        self.chunks.first().map_or(0, Vec::len)
    }
}

/// Splits `len` elements into `parts` consecutive ranges whose boundaries are multiples of
/// `unit` (except the end), sizes differing by at most one unit; the last range also takes the
/// remainder that does not fill a unit.
fn split(len: u64, unit: u64, parts: usize) -> Vec<Range<u64>> {
    let units = len / unit;
    let p = parts.max(1) as u64;
    (0..p)
        .map(|k| {
            let start = units * k / p * unit;
            let end = if k + 1 == p {
                len
            } else {
                units * (k + 1) / p * unit
            };
            start..end
        })
        .collect()
}

/// GPU g's predecessor in the ring (positions in the case's GPU list).
pub fn ring_pred(g: usize, n: usize) -> usize {
    (g + n - 1) % n
}

/// The segment GPU g works on at ring step `s` (0 ≤ s < 2(n−1)): reduce-scatter steps first,
/// then all-gather steps.
pub fn ring_segment(g: usize, n: usize, s: usize) -> usize {
    if s < n - 1 {
        (g + 2 * n - s - 1) % n
    } else {
        let k = s - (n - 1);
        (g + n - k % n) % n
    }
}

/// Ring steps per all-reduce.
pub fn ring_steps(n: usize) -> usize {
    2 * n.saturating_sub(1)
}

/// The tree's levels, leaves first: (parent, child) pairs, positions in the case's GPU list.
/// Reduce walks them in order (the parent adds the child's sum), broadcast in reverse (the child
/// copies the parent's).
pub fn tree_levels(n: usize) -> Vec<Vec<(usize, usize)>> {
    let mut levels = Vec::new();
    let mut half = 1usize;
    while half < n {
        let level: Vec<(usize, usize)> = (0..n)
            .filter(|g| g % (2 * half) == half)
            .map(|g| (g - half, g))
            .collect();
        levels.push(level);
        half = half.saturating_mul(2);
    }
    levels
}

/// The GPU that `g` hands its sum to (`None` for the root, GPU 0).
pub fn tree_parent(g: usize) -> Option<usize> {
    (g != 0).then(|| g - (1 << g.trailing_zeros()))
}

/// The GPUs that hand their sums to `g`, in the order they do.
pub fn tree_children(g: usize, n: usize) -> Vec<usize> {
    let limit = if g == 0 {
        usize::BITS
    } else {
        g.trailing_zeros()
    };
    (0..limit)
        .map(|j| 1usize << j)
        .take_while(|&h| h < n)
        .map(|h| g + h)
        .filter(|&c| c < n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_layout_covers_every_element_once_on_aligned_boundaries() {
        for &(count, elem) in &[
            (1u64, 4u64),
            (3, 2),
            (17, 8),
            (1000, 4),
            (1 << 20, 2),
            ((256 << 20) / 4 + 3, 4),
            (12_345_677, 2),
        ] {
            for n in [2usize, 3, 4, 8] {
                let l = RingLayout::new(count, elem, n, 8, 1 << 20);
                assert_eq!(l.segments.len(), n);
                let per = l.chunks_per_segment();
                assert!((1..=8).contains(&per));
                let mut next = 0;
                for (s, seg) in l.segments.iter().enumerate() {
                    assert_eq!(seg.start, next, "segments are consecutive");
                    assert_eq!(l.chunks[s].len(), per, "same chunk count everywhere");
                    let mut c_next = seg.start;
                    for c in &l.chunks[s] {
                        assert_eq!(c.start, c_next);
                        assert!(c.end >= c.start);
                        assert_eq!(
                            c.start * elem % ALIGN_BYTES,
                            0,
                            "chunk starts are 16-byte aligned"
                        );
                        c_next = c.end;
                    }
                    assert_eq!(c_next, seg.end, "chunks cover their segment");
                    assert_eq!(seg.start * elem % ALIGN_BYTES, 0);
                    next = seg.end;
                }
                assert_eq!(next, count, "segments cover the buffer");
                let sizes: Vec<u64> = l.segments.iter().map(|r| r.end - r.start).collect();
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 2 * ALIGN_BYTES / elem, "balanced: {sizes:?}");
            }
        }
        let big = RingLayout::new((256 << 20) / 4, 4, 2, 8, 1 << 20);
        assert_eq!(big.chunks_per_segment(), 8);
        let small = RingLayout::new((2 << 20) / 4, 4, 2, 8, 1 << 20);
        assert_eq!(small.chunks_per_segment(), 1, "chunks stay ≥ 1 MiB");
    }

    #[test]
    fn ring_schedule_reduces_every_segment_once_per_gpu_then_gathers() {
        for n in [2usize, 3, 4, 8] {
            // Simulate which GPUs' contributions each GPU's copy of each segment holds.
            let mut held: Vec<Vec<u64>> = (0..n).map(|g| vec![1u64 << g; n]).collect();
            for s in 0..ring_steps(n) {
                let before = held.clone();
                for g in 0..n {
                    let seg = ring_segment(g, n, s);
                    let p = ring_pred(g, n);
                    if s < n - 1 {
                        held[g][seg] = before[g][seg] | before[p][seg];
                    } else {
                        held[g][seg] = before[p][seg];
                    }
                }
                if s == n - 2 {
                    for g in 0..n {
                        assert_eq!(held[g][(g + 1) % n], (1 << n) - 1, "GPU {g} owns g+1");
                    }
                }
            }
            for (g, segs) in held.iter().enumerate() {
                assert!(segs.iter().all(|&m| m == (1 << n) - 1), "n={n} GPU {g}");
            }
        }
    }

    #[test]
    fn tree_schedules() {
        assert_eq!(tree_levels(2), vec![vec![(0, 1)]]);
        assert_eq!(tree_levels(3), vec![vec![(0, 1)], vec![(0, 2)]]);
        assert_eq!(tree_levels(4), vec![vec![(0, 1), (2, 3)], vec![(0, 2)]]);
        assert_eq!(
            tree_levels(8),
            vec![
                vec![(0, 1), (2, 3), (4, 5), (6, 7)],
                vec![(0, 2), (4, 6)],
                vec![(0, 4)]
            ]
        );
        assert!(tree_levels(1).is_empty());
        assert_eq!(tree_parent(0), None);
        assert_eq!(tree_parent(1), Some(0));
        assert_eq!(tree_parent(6), Some(4));
        assert_eq!(tree_parent(4), Some(0));
        assert_eq!(tree_children(0, 8), vec![1, 2, 4]);
        assert_eq!(tree_children(0, 3), vec![1, 2]);
        assert_eq!(tree_children(4, 8), vec![5, 6]);
        assert_eq!(tree_children(2, 3), Vec::<usize>::new());
        for n in [2usize, 3, 4, 5, 8] {
            // Every GPU but the root is a child exactly once, of its parent.
            let mut seen = vec![0; n];
            for level in tree_levels(n) {
                for (p, c) in level {
                    seen[c] += 1;
                    assert_eq!(tree_parent(c), Some(p));
                    assert!(tree_children(p, n).contains(&c));
                }
            }
            assert_eq!(seen[0], 0);
            assert!(seen[1..].iter().all(|&k| k == 1), "n={n}");
        }
    }
}
