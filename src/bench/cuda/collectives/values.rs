//! The data every collective is verified with, on the CPU: the input pattern and each op's
//! expected output (twins of `coll_value` and `coll_expected` in
//! `assets/kernels/collectives.cu`), the half-precision conversions, and the CPU sum of the
//! via-host all-reduce.

use crate::model::{CollectiveOp, Dtype};

/// The op's number in the check kernel (`OP_*` in collectives.cu).
pub fn op_code(op: CollectiveOp) -> i32 {
    match op {
        CollectiveOp::AllReduce => 0,
        CollectiveOp::AllGather => 1,
        CollectiveOp::ReduceScatter => 2,
        CollectiveOp::Broadcast => 3,
        CollectiveOp::AllToAll => 4,
        CollectiveOp::SendRecv => 5,
    }
}

/// Input element `i` of rank `rank`: a small integer in −8..=8, exact in every dtype, as are its
/// sums over up to 32 ranks (bf16 holds integers up to 256 exactly).
pub fn value(rank: usize, i: u64) -> i32 {
    ((i.wrapping_mul(7).wrapping_add(rank as u64 * 13)) % 17) as i32 - 8
}

/// The expected output element `j` of rank `q` for `op` over `n` ranks, `count` being the
/// per-rank element count NCCL's call takes (the block size for all-gather, reduce-scatter and
/// all-to-all). Broadcast's root is rank 0; send/recv receives from rank q − 1.
pub fn expected(op: CollectiveOp, q: usize, n: usize, count: u64, j: u64) -> i32 {
    let count = count.max(1);
    match op {
        CollectiveOp::AllReduce => (0..n).map(|r| value(r, j)).sum(),
        CollectiveOp::AllGather => value((j / count) as usize, j % count),
        CollectiveOp::ReduceScatter => (0..n).map(|r| value(r, q as u64 * count + j)).sum(),
        CollectiveOp::Broadcast => value(0, j),
        CollectiveOp::AllToAll => value((j / count) as usize, q as u64 * count + j % count),
        CollectiveOp::SendRecv => value((q + n - 1) % n.max(1), j),
    }
}

/// (input elements, output elements) of one rank's buffers for `op` with `count` per rank.
pub fn elems_in_out(op: CollectiveOp, count: u64, n: usize) -> Option<(u64, u64)> {
    let all = count.checked_mul(n as u64)?;
    Some(match op {
        CollectiveOp::AllReduce | CollectiveOp::Broadcast | CollectiveOp::SendRecv => {
            (count, count)
        }
        CollectiveOp::AllGather => (count, all),
        CollectiveOp::ReduceScatter => (all, count),
        CollectiveOp::AllToAll => (all, all),
    })
}

/// IEEE half → f32 (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1F);
    let man = u32::from(h & 0x3FF);
    let bits = match exp {
        0 if man == 0 => sign,
        0 => {
            // Subnormal: man × 2⁻²⁴, exact in f32.
            let f = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -f } else { f };
        }
        0x1F => sign | 0x7F80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// f32 → IEEE half, rounding to nearest even (as PTX `cvt.rn.f16.f32`).
pub fn f32_to_f16(f: f32) -> u16 {
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xFF) as i32;
    let man = x & 0x7F_FFFF;
    if exp == 0xFF {
        let nan = if man != 0 {
            0x200 | (man >> 13) as u16
        } else {
            0
        };
        return sign | 0x7C00 | nan;
    }
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let mut h = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        if rem > half || (rem == half && h & 1 == 1) {
            h += 1;
        }
        return sign | h as u16;
    }
    let mut h = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1FFF;
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    if rem > 0x1000 || (rem == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

/// bfloat16 → f32 (exact).
pub fn bf16_to_f32(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// f32 → bfloat16, rounding to nearest even; NaN stays NaN.
pub fn f32_to_bf16(f: f32) -> u16 {
    let u = f.to_bits();
    if u & 0x7FFF_FFFF > 0x7F80_0000 {
        return ((u >> 16) | 0x40) as u16;
    }
    (u.wrapping_add(0x7FFF + ((u >> 16) & 1)) >> 16) as u16
}

/// `acc[i] += other[i]` for every element of `dtype` (little-endian bytes; half types add in
/// f32 and round once). Lengths must match; trailing bytes of a partial element are left alone.
pub fn add_into(dtype: Dtype, acc: &mut [u8], other: &[u8]) {
    macro_rules! each {
        ($n:literal, $decode:expr, $encode:expr) => {
            for (a, b) in acc.chunks_exact_mut($n).zip(other.chunks_exact($n)) {
                let mut x = [0u8; $n];
                let mut y = [0u8; $n];
                x.copy_from_slice(a);
                y.copy_from_slice(b);
                a.copy_from_slice(&$encode($decode(x) + $decode(y)));
            }
        };
    }
    match dtype {
        Dtype::F32 => each!(4, f32::from_le_bytes, f32::to_le_bytes),
        Dtype::F64 => each!(8, f64::from_le_bytes, f64::to_le_bytes),
        Dtype::I32 => {
            for (a, b) in acc.chunks_exact_mut(4).zip(other.chunks_exact(4)) {
                let mut x = [0u8; 4];
                let mut y = [0u8; 4];
                x.copy_from_slice(a);
                y.copy_from_slice(b);
                a.copy_from_slice(
                    &i32::from_le_bytes(x)
                        .wrapping_add(i32::from_le_bytes(y))
                        .to_le_bytes(),
                );
            }
        }
        Dtype::F16 => each!(2, |v| f16_to_f32(u16::from_le_bytes(v)), |s| f32_to_f16(s)
            .to_le_bytes()),
        Dtype::Bf16 => each!(2, |v| bf16_to_f32(u16::from_le_bytes(v)), |s| f32_to_bf16(
            s
        )
        .to_le_bytes()),
    }
}

/// Encodes a small integer as one element of `dtype` (little-endian).
pub fn encode(dtype: Dtype, v: i32) -> Vec<u8> {
    match dtype {
        Dtype::F32 => (v as f32).to_le_bytes().to_vec(),
        Dtype::F64 => f64::from(v).to_le_bytes().to_vec(),
        Dtype::I32 => v.to_le_bytes().to_vec(),
        Dtype::F16 => f32_to_f16(v as f32).to_le_bytes().to_vec(),
        Dtype::Bf16 => f32_to_bf16(v as f32).to_le_bytes().to_vec(),
    }
}

/// Decodes one element of `dtype` as f64.
pub fn decode(dtype: Dtype, b: &[u8]) -> Option<f64> {
    let mut w = [0u8; 8];
    let n = dtype.size() as usize;
    w.get_mut(..n)?.copy_from_slice(b.get(..n)?);
    Some(match dtype {
        Dtype::F32 => f64::from(f32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        Dtype::F64 => f64::from_le_bytes(w),
        Dtype::I32 => f64::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        Dtype::F16 => f64::from(f16_to_f32(u16::from_le_bytes([w[0], w[1]]))),
        Dtype::Bf16 => f64::from(bf16_to_f32(u16::from_le_bytes([w[0], w[1]]))),
    })
}

/// Sums `others` into `acc` element-wise, split over threads for large buffers
/// (std::thread::scope; each thread owns a disjoint element range of every buffer).
pub fn parallel_sum(dtype: Dtype, acc: &mut [u8], others: &[&[u8]]) {
    let elem = dtype.size() as usize;
    let threads = if acc.len() < (4 << 20) {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(32))
    };
    let elems = acc.len() / elem;
    let per = elems.div_ceil(threads).max(1) * elem;
    std::thread::scope(|s| {
        for (k, part) in acc.chunks_mut(per).enumerate() {
            let start = k * per;
            let srcs: Vec<&[u8]> = others
                .iter()
                .filter_map(|o| o.get(start..start + part.len()))
                .collect();
            s.spawn(move || {
                for src in srcs {
                    add_into(dtype, part, src);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each op delivers, simulated naively from the per-rank inputs.
    fn simulate(op: CollectiveOp, n: usize, count: u64) -> Vec<Vec<i32>> {
        let (ins, _) = elems_in_out(op, count, n).unwrap();
        let input: Vec<Vec<i32>> = (0..n)
            .map(|r| (0..ins).map(|i| value(r, i)).collect())
            .collect();
        let c = count as usize;
        (0..n)
            .map(|q| match op {
                CollectiveOp::AllReduce => {
                    (0..c).map(|i| input.iter().map(|v| v[i]).sum()).collect()
                }
                CollectiveOp::AllGather => input.iter().flat_map(|v| v.clone()).collect(),
                CollectiveOp::ReduceScatter => (0..c)
                    .map(|i| input.iter().map(|v| v[q * c + i]).sum())
                    .collect(),
                CollectiveOp::Broadcast => input[0].clone(),
                CollectiveOp::AllToAll => (0..n)
                    .flat_map(|r| input[r][q * c..(q + 1) * c].to_vec())
                    .collect(),
                CollectiveOp::SendRecv => input[(q + n - 1) % n].clone(),
            })
            .collect()
    }

    #[test]
    fn formulas_match_a_naive_simulation() {
        for &op in CollectiveOp::ALL {
            for n in [2usize, 3, 4, 8] {
                for count in [1u64, 5, 37] {
                    let want = simulate(op, n, count);
                    for (q, out) in want.iter().enumerate() {
                        let (_, outs) = elems_in_out(op, count, n).unwrap();
                        assert_eq!(out.len() as u64, outs, "{op} n={n}");
                        for (j, w) in out.iter().enumerate() {
                            assert_eq!(
                                expected(op, q, n, count, j as u64),
                                *w,
                                "{op} n={n} count={count} rank={q} j={j}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn values_are_small_and_exact_in_every_dtype() {
        for r in 0..8 {
            for i in 0..100 {
                assert!((-8..=8).contains(&value(r, i)));
            }
        }
        for v in -256..=256 {
            for &d in Dtype::ALL {
                assert_eq!(decode(d, &encode(d, v)), Some(f64::from(v)), "{d} {v}");
            }
        }
        assert_ne!(value(0, 0), value(1, 0), "ranks differ");
    }

    #[test]
    fn half_conversions() {
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(-2.0), 0xC000);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(65520.0), 0x7C00, "rounds up to infinity");
        assert_eq!(f32_to_f16(0.5), 0x3800);
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001, "smallest subnormal");
        assert_eq!(f32_to_f16(1.0 + 1.0 / 2048.0), 0x3C00, "tie to even");
        assert_eq!(f32_to_f16(1.0 + 3.0 / 2048.0), 0x3C02, "tie to even (up)");
        assert!(f16_to_f32(f32_to_f16(f32::NAN)).is_nan());
        for h in 0u16..0x7C00 {
            assert_eq!(f32_to_f16(f16_to_f32(h)), h, "round trip {h:#x}");
        }
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(bf16_to_f32(0xC000), -2.0);
        assert_eq!(
            f32_to_bf16(f32::from_bits(0x3F80_8000)),
            0x3F80,
            "tie to even"
        );
        assert_eq!(
            f32_to_bf16(f32::from_bits(0x3F81_8000)),
            0x3F82,
            "tie to even (up)"
        );
        assert!(bf16_to_f32(f32_to_bf16(f32::NAN)).is_nan());
    }

    #[test]
    fn cpu_sum_matches_the_formula() {
        for &d in Dtype::ALL {
            let n = 3;
            let count = 1000u64;
            let bufs: Vec<Vec<u8>> = (0..n)
                .map(|r| (0..count).flat_map(|i| encode(d, value(r, i))).collect())
                .collect();
            let mut acc = bufs[0].clone();
            let others: Vec<&[u8]> = bufs[1..].iter().map(Vec::as_slice).collect();
            parallel_sum(d, &mut acc, &others);
            let e = d.size() as usize;
            for j in 0..count {
                let got = decode(d, &acc[j as usize * e..]).unwrap();
                let want = expected(CollectiveOp::AllReduce, 0, n, count, j);
                assert_eq!(got, f64::from(want), "{d} j={j}");
            }
        }
    }
}
