//! The memory-bandwidth baseline: a plain read of `X`.

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
