//! The memory-bandwidth baseline: a plain read of `X` (`f64` or `f32` storage).

use crate::par::{tree_reduce, Par};
use pulp::{Arch, Simd, WithSimd};

struct StreamSum<'a> {
    x: &'a [f64],
}

impl WithSimd for StreamSum<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let (h, t) = S::as_simd_f64s(self.x);
        let z = simd.splat_f64s(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let mut it = h.chunks_exact(4);
        for c in &mut it {
            a0 = simd.add_f64s(a0, c[0]);
            a1 = simd.add_f64s(a1, c[1]);
            a2 = simd.add_f64s(a2, c[2]);
            a3 = simd.add_f64s(a3, c[3]);
        }
        for c in it.remainder() {
            a0 = simd.add_f64s(a0, *c);
        }
        let s = simd.add_f64s(simd.add_f64s(a0, a1), simd.add_f64s(a2, a3));
        simd.reduce_sum_f64s(s) + t.iter().sum::<f64>()
    }
}

struct StreamSum32<'a> {
    x: &'a [f32],
}

impl WithSimd for StreamSum32<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let (h, t) = S::as_simd_f32s(self.x);
        let z = simd.splat_f32s(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let mut it = h.chunks_exact(4);
        for c in &mut it {
            a0 = simd.add_f32s(a0, c[0]);
            a1 = simd.add_f32s(a1, c[1]);
            a2 = simd.add_f32s(a2, c[2]);
            a3 = simd.add_f32s(a3, c[3]);
        }
        for c in it.remainder() {
            a0 = simd.add_f32s(a0, *c);
        }
        let s = simd.add_f32s(simd.add_f32s(a0, a1), simd.add_f32s(a2, a3));
        f64::from(simd.reduce_sum_f32s(s)) + t.iter().map(|&v| f64::from(v)).sum::<f64>()
    }
}

/// Sum of all entries of `x`, with the same blocking and threading as the fused pass: the
/// "plain memory-streaming pass" that kernel bandwidth is reported against.
pub fn stream_sum(x: &[f64], d: usize, par: Par) -> f64 {
    let n = x.len() / d.max(1);
    let blocks = crate::par::stream_blocks(n, d);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(StreamSum {
            x: &x[r.start * d..r.end * d],
        })
    };
    tree_reduce(blocks.count(), par.for_bytes(x.len() * 8), &leaf, &|a, b| a + b)
}

/// [`stream_sum`] of `float32` storage: the same row blocks and threading as the passes over
/// `f32` features (half the bytes per block of the `f64` read). Each block is summed in `f32`
/// lanes and the block sums in `f64`: the value is a checksum that keeps the read from being
/// optimised away, not an accurate sum; what is measured is the time to stream the bytes.
pub fn stream_sum_f32(x: &[f32], d: usize, par: Par) -> f64 {
    let n = x.len() / d.max(1);
    let blocks = crate::par::stream_blocks(n, d);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(StreamSum32 {
            x: &x[r.start * d..r.end * d],
        })
    };
    tree_reduce(blocks.count(), par.for_bytes(x.len() * 4), &leaf, &|a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_and_f64_reads_sum_the_same_small_integers() {
        // Small integers are exact in f32 lanes, so both reads give the exact sum, on one
        // thread and on the pool, for a shape with a ragged last block and a SIMD tail.
        let (n, d) = (70_001, 3);
        let x64: Vec<f64> = (0..n * d).map(|i| (i % 7) as f64 - 3.0).collect();
        let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let exact: f64 = x64.iter().sum();
        for par in [Par::Seq, Par::Rayon] {
            assert_eq!(stream_sum(&x64, d, par), exact);
            assert_eq!(stream_sum_f32(&x32, d, par), exact);
        }
    }
}
