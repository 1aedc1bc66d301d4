//! Host-side twins of the GPU kernels' data: the verification pattern (identical to
//! `scalescope_pattern` in `assets/kernels/bench.cu`) and the pointer-chase chain.

/// Byte written to every destination before a copy, so that an unwritten element is caught.
pub const POISON: u8 = 0xFF;

/// The pattern word for element `i` under `seed`: differs per element (for the first 2³² words)
/// and per seed, and is never `0xFFFF_FFFF` (the poison). Must match the CUDA version.
pub fn pattern(i: u64, seed: u32) -> u32 {
    let mut x = (i as u32)
        .wrapping_mul(0x9E37_79B1)
        .wrapping_add(((i >> 32) as u32).wrapping_mul(0x7FEB_352D))
        .wrapping_add(seed.wrapping_mul(0x85EB_CA77))
        .wrapping_add(0x1656_67B1);
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    if x == u32::MAX { 0 } else { x }
}

/// Splits `len` bytes into at most `parts` ranges whose starts are multiples of 4.
fn word_chunks(len: usize, parts: usize) -> Vec<(usize, usize)> {
    let words = len / 4;
    let parts = parts.clamp(1, words.max(1));
    let per = words.div_ceil(parts).max(1) * 4;
    let mut out = Vec::new();
    let mut start = 0;
    while start < len {
        let end = if start + per >= len { len } else { start + per };
        out.push((start, end));
        start = end;
    }
    out
}

fn threads_for(len: usize) -> usize {
    if len < (8 << 20) {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(32))
    }
}

/// Writes the pattern for `seed` into `buf`, which holds the buffer's bytes from byte
/// `4 × first_word` on. A trailing partial word takes the low bytes of the next pattern word, as
/// the GPU's `fill_pattern` does. Large buffers are filled by several threads (which inherit the
/// caller's CPU affinity, so first-touched pages land on the caller's NUMA node).
pub fn fill(buf: &mut [u8], first_word: u64, seed: u32) {
    let chunks = word_chunks(buf.len(), threads_for(buf.len()));
    if chunks.len() <= 1 {
        fill_serial(buf, first_word, seed);
        return;
    }
    std::thread::scope(|s| {
        let mut rest = buf;
        let mut done = 0;
        for (start, end) in chunks {
            let (part, tail) = rest.split_at_mut(end - start);
            rest = tail;
            let word = first_word + (start / 4) as u64;
            debug_assert_eq!(start, done);
            done = end;
            s.spawn(move || fill_serial(part, word, seed));
        }
    });
}

fn fill_serial(buf: &mut [u8], first_word: u64, seed: u32) {
    let mut words = buf.chunks_exact_mut(4);
    let mut i = first_word;
    for w in &mut words {
        w.copy_from_slice(&pattern(i, seed).to_le_bytes());
        i += 1;
    }
    let tail = words.into_remainder();
    let t = pattern(i, seed).to_le_bytes();
    tail.copy_from_slice(&t[..tail.len()]);
}

/// Counts the words (and trailing bytes) of `buf` that differ from the pattern, `buf` holding the
/// buffer's bytes from byte `4 × first_word` on. Every word is read.
pub fn count_wrong(buf: &[u8], first_word: u64, seed: u32) -> u64 {
    let chunks = word_chunks(buf.len(), threads_for(buf.len()));
    if chunks.len() <= 1 {
        return count_wrong_serial(buf, first_word, seed);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|(start, end)| {
                let part = &buf[start..end];
                let word = first_word + (start / 4) as u64;
                s.spawn(move || count_wrong_serial(part, word, seed))
            })
            .collect();
        // A panicked checker thread cannot happen (no indexing can fail); count it as all wrong.
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(u64::MAX / 64))
            .sum()
    })
}

fn count_wrong_serial(buf: &[u8], first_word: u64, seed: u32) -> u64 {
    let mut words = buf.chunks_exact(4);
    let mut i = first_word;
    let mut wrong = 0;
    for w in &mut words {
        let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        wrong += u64::from(v != pattern(i, seed));
        i += 1;
    }
    let tail = words.remainder();
    let t = pattern(i, seed).to_le_bytes();
    wrong += tail.iter().zip(t).filter(|(a, b)| **a != *b).count() as u64;
    wrong
}

/// The slot reached after `steps` links from `start`.
pub fn chain_walk(next: &[usize], start: usize, steps: u64) -> usize {
    if next.is_empty() {
        return start;
    }
    let steps = steps % next.len() as u64;
    let mut p = start;
    for _ in 0..steps {
        p = next[p];
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_deterministic_and_varies() {
        assert_eq!(pattern(12345, 7), pattern(12345, 7));
        assert_ne!(pattern(0, 1), pattern(0, 2));
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000 {
            assert!(seen.insert(pattern(i, 99)), "repeat at {i}");
            assert_ne!(pattern(i, 99), u32::MAX);
        }
    }

    #[test]
    fn fill_then_check_finds_nothing_and_flips_are_counted() {
        for len in [0usize, 1, 3, 4, 7, 4096, 4099, (9 << 20) + 3] {
            let mut buf = vec![POISON; len];
            fill(&mut buf, 0, 42);
            assert_eq!(count_wrong(&buf, 0, 42), 0, "len {len}");
            if len >= 8 {
                assert!(count_wrong(&buf, 0, 43) > 0, "another seed must not match");
                buf[len / 2] ^= 0x10;
                buf[len - 1] ^= 0x01;
                assert_eq!(count_wrong(&buf, 0, 42), 2, "len {len}");
            }
        }
    }

    #[test]
    fn poison_never_passes() {
        let buf = vec![POISON; 1 << 16];
        assert_eq!(count_wrong(&buf, 0, 5), (1 << 16) / 4);
    }

    #[test]
    fn chunks_agree_with_whole_buffer() {
        let mut whole = vec![0u8; 4096 + 2];
        fill(&mut whole, 0, 9);
        let mut second = vec![0u8; 2048 + 2];
        fill(&mut second, 512, 9);
        assert_eq!(&whole[2048..], &second[..]);
        assert_eq!(count_wrong(&whole[2048..], 512, 9), 0);
    }

    #[test]
    fn chain_walk_follows_the_links() {
        let next: Vec<usize> = (0..100).map(|i| (i + 7) % 100).collect();
        assert_eq!(chain_walk(&next, 0, 100), 0);
        assert_eq!(chain_walk(&next, 0, 1), 7);
        assert_eq!(chain_walk(&next, 5, 203), chain_walk(&next, 5, 3));
        assert_eq!(chain_walk(&[], 5, 3), 5);
    }
}
