//! Feature values as `f64` SIMD vectors whatever their storage: `f64` rows are loaded as they
//! are, `f32` rows are widened in registers as they are loaded (`vcvtps2pd` on x86: 8 `f32` to
//! one AVX-512 vector, 4 to one AVX2 vector). Widening `f32 → f64` is exact, so a row kernel
//! written once over [`RowElem`] does the same `f64` arithmetic in the same order on `f32`
//! storage as on the widened values — the same bits — with no copy of the rows into an `f64`
//! buffer and half the bytes read.
//!
//! pulp's generic [`Simd`] trait has no `f32 → f64` conversion; its x86 types do
//! (`V4::convert_f32x8_to_f64x8`, `V3::convert_f32x4_to_f64x4`). [`widen`] picks them by the
//! type of the `Simd` value (a comparison of type ids, resolved at compile time in each
//! monomorphised kernel), and widens lane by lane through a small buffer for any other `Simd`
//! (the scalar fallback, other architectures).

use pulp::Simd;
use std::any::Any;

/// Widest `f64` SIMD vector of any [`Simd`] type, in lanes (AVX-512: 8), with room to spare.
const MAX_F64_LANES: usize = 16;

/// A storage type of feature values, read by the row kernels as `f64` SIMD vectors.
pub(super) trait RowElem: Copy + Send + Sync + 'static {
    /// The value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// SIMD vectors `j .. j + N` of `x` (values `j·L .. (j + N)·L`, `L = S::F64_LANES`) as `f64`.
    fn vecs<S: Simd, const N: usize>(simd: S, x: &[Self], j: usize) -> [S::f64s; N];
    /// `x` (at most `L` values) as one `f64` vector whose other lanes are `0.0`, like
    /// [`Simd::partial_load_f64s`].
    fn partial<S: Simd>(simd: S, x: &[Self]) -> S::f64s;
}

impl RowElem for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn vecs<S: Simd, const N: usize>(_: S, x: &[f64], j: usize) -> [S::f64s; N] {
        let (h, _) = S::as_simd_f64s(x);
        let h = &h[j..j + N];
        std::array::from_fn(|k| h[k])
    }
    #[inline(always)]
    fn partial<S: Simd>(simd: S, x: &[f64]) -> S::f64s {
        simd.partial_load_f64s(x)
    }
}

impl RowElem for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn vecs<S: Simd, const N: usize>(simd: S, x: &[f32], j: usize) -> [S::f64s; N] {
        let l = S::F64_LANES;
        let x = &x[j * l..(j + N) * l];
        std::array::from_fn(|k| widen(simd, &x[k * l..(k + 1) * l]))
    }
    #[inline(always)]
    fn partial<S: Simd>(simd: S, x: &[f32]) -> S::f64s {
        widen(simd, x)
    }
}

/// Bytes prefetched ahead of the row being read by [`Ahead`]: about 30 rows of `d = 100` in
/// `f32`, 2–3 mini-batches. On a 2-vCPU AMD EPYC of family 26 (Zen 5), with
/// `examples/kernel_timing.rs` (n = 1e6, d = 100, 1 thread, host shared), the `f32`
/// value+gradient pass took 17.2–17.9 ms with 9.6–19.2 KB ahead, against 18.3 with 4.8 KB and
/// 19–24 with none; `matvec` 10.1–10.4 against 12.4–12.8 with none.
const AHEAD_BYTES: usize = 12 * 1024;

/// Software prefetch of the rows ahead of the one a kernel reads: each cache line of `x` once,
/// [`AHEAD_BYTES`] ahead of the end of the row being read, one row's lines at a time (so the
/// requests are spread over the computation instead of left to the hardware prefetcher, which
/// lets the memory idle while a mini-batch's loss and gradient update run). For `f64` storage
/// too: with `examples/kernel_timing` (n = 1e6, d = 100, 1 thread, same machine, alternating
/// builds, 3 rounds) the `f64` value+gradient pass took 25.5–27.3 ms with it against 43.4–43.6
/// without, a streaming read of the same `X` 24.3–27.1; at d = 1000 (n = 1e5) 34.7 against
/// 35.6, at d = 2000 (n = 2e5) 155 against 163, at d = 10 (n = 1e6) no change (6.2–6.6 ms, the
/// pass is compute-bound there).
///
/// Only where it pays ([`prefetch_pays`]): on a Zen 4 (AMD family 25 model 17, 2 vCPUs, shared
/// host, 2026-12-07) the same prefetch made every pass slower. `examples/kernel_timing 1000000
/// 100 1`: the `f64` value+gradient pass 64–72 ms with it, 42–44 without (the streaming read
/// 26–30; 2 threads: 29 without, the read 25). A throwaway example timing each pass with and
/// without it (best of 7, alternated): `f64` at `(10⁵, 1000)` 68 against 49 ms on 1 thread, 39
/// against 28 on 2; `f32` at `(10⁶, 100)` 37 against 29, at `(10⁵, 2048)` on 2 threads 47
/// against 39. A prefetch is a hint: the bits are the same either way.
pub(super) struct Ahead<'a, E> {
    x: &'a [E],
    /// Byte offset in `x` of the next line to prefetch; `usize::MAX` when prefetching is off.
    next: usize,
}

impl<'a, E: RowElem> Ahead<'a, E> {
    #[inline(always)]
    pub(super) fn new(x: &'a [E]) -> Self {
        let next = if prefetch_pays() { 0 } else { usize::MAX };
        Ahead { x, next }
    }
    /// The kernel is about to read `x` up to value `upto` (exclusive): prefetches the lines up
    /// to [`AHEAD_BYTES`] past it, within `x`.
    #[inline(always)]
    pub(super) fn to(&mut self, upto: usize) {
        let size = std::mem::size_of_val(self.x);
        let target = (upto * std::mem::size_of::<E>() + AHEAD_BYTES).min(size);
        while self.next < target {
            prefetch(self.x.as_ptr().cast::<u8>().wrapping_add(self.next));
            self.next += 64;
        }
    }
}

/// Whether [`Ahead`] prefetches on this CPU: on AMD processors of family 26 (Zen 5) and later,
/// where it was measured to pay; not on a Zen 4 (family 25), where it was measured to cost, nor
/// on CPUs it was not measured on (their hardware prefetchers alone). Read once (`cpuid`).
fn prefetch_pays() -> bool {
    static PAYS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PAYS.get_or_init(cpu_prefetch_pays)
}

#[cfg(target_arch = "x86_64")]
fn cpu_prefetch_pays() -> bool {
    let (vendor, signature) = (std::arch::x86_64::__cpuid(0), std::arch::x86_64::__cpuid(1).eax);
    let mut name = [0u8; 12];
    name[..4].copy_from_slice(&vendor.ebx.to_le_bytes());
    name[4..8].copy_from_slice(&vendor.edx.to_le_bytes());
    name[8..].copy_from_slice(&vendor.ecx.to_le_bytes());
    pays_on(&name, x86_family(signature))
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_prefetch_pays() -> bool {
    false
}

/// The display family of an x86 `cpuid` leaf-1 signature: the base family, plus the extended
/// family when the base family is 15.
fn x86_family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xf;
    if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    }
}

/// [`prefetch_pays`]'s rule for the vendor string and display family.
fn pays_on(vendor: &[u8; 12], family: u32) -> bool {
    vendor == b"AuthenticAMD" && family >= 0x1a
}

/// A hint to bring the line of `p` into L1 (no access, no fault for any address).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: `_mm_prefetch` needs SSE, part of every x86_64 target; a prefetch reads
        // nothing and does not fault, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `x` (at most `S::F64_LANES` values) widened to one `f64` vector, the other lanes `0.0`.
#[inline(always)]
fn widen<S: Simd>(simd: S, x: &[f32]) -> S::f64s {
    #[cfg(target_arch = "x86_64")]
    {
        use pulp::x86::{V3, V4};
        use pulp::{f32x4, f32x8};
        let s: &dyn Any = &simd;
        if let Some(&v4) = s.downcast_ref::<V4>() {
            let a: f32x8 = match x.first_chunk::<8>() {
                Some(&a) => pulp::cast(a),
                // A tail: a masked load (zeros in the other lanes) of the lower half.
                None => pulp::cast_lossy(v4.partial_load_f32s(x)),
            };
            return same_type(v4.convert_f32x8_to_f64x8(a));
        }
        if let Some(&v3) = s.downcast_ref::<V3>() {
            let a: f32x4 = match x.first_chunk::<4>() {
                Some(&a) => pulp::cast(a),
                None => pulp::cast_lossy(v3.partial_load_f32s(x)),
            };
            return same_type(v3.convert_f32x4_to_f64x4(a));
        }
    }
    let mut b = [0.0f64; MAX_F64_LANES];
    for (o, &v) in b.iter_mut().zip(x) {
        *o = f64::from(v);
    }
    simd.partial_load_f64s(&b[..x.len()])
}

/// `t` as `U`, which is its own type (`S::f64s` of the `Simd` type found by [`widen`]).
#[inline(always)]
fn same_type<T: Copy + 'static, U: Copy + 'static>(t: T) -> U {
    *(&t as &dyn Any)
        .downcast_ref::<U>()
        .expect("the f64 vector type of this Simd")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prefetch rule: AMD family 26 (Zen 5) and later, nothing else; the family read off
    /// `cpuid` signatures of a Zen 4 (0x00A10F11), a Zen 5 (0x00B00F21) and an Intel core
    /// (0x000906EA, family 6).
    #[test]
    fn software_prefetch_is_on_where_it_was_measured_to_pay() {
        assert_eq!(x86_family(0x00A1_0F11), 0x19);
        assert_eq!(x86_family(0x00B0_0F21), 0x1a);
        assert_eq!(x86_family(0x0009_06EA), 6);
        assert!(pays_on(b"AuthenticAMD", 0x1a));
        assert!(!pays_on(b"AuthenticAMD", 0x19));
        assert!(!pays_on(b"GenuineIntel", 6));
        assert!(!pays_on(b"GenuineIntel", 0x1a));
    }
    use pulp::{Arch, WithSimd};

    /// Every full vector and every tail length of an `f32` row widens to the `f64` vectors of
    /// the widened row, lane for lane (zeros in the lanes past a tail), on the SIMD level of
    /// this machine and on the scalar fallback.
    #[test]
    fn f32_vectors_are_the_widened_f64_vectors() {
        struct Check;
        impl WithSimd for Check {
            type Output = ();
            #[inline(always)]
            fn with_simd<S: Simd>(self, simd: S) {
                let l = S::F64_LANES;
                let x32: Vec<f32> = (0..4 * l).map(|i| (i as f32 - 5.5) * 0.37 + f32::EPSILON).collect();
                let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
                let bits = |v: S::f64s| {
                    let mut o = [0.0f64; MAX_F64_LANES];
                    simd.partial_store_f64s(&mut o[..l], v);
                    o.map(f64::to_bits)
                };
                for j in 0..4 {
                    let [a] = f32::vecs::<S, 1>(simd, &x32, j);
                    let [b] = f64::vecs::<S, 1>(simd, &x64, j);
                    assert_eq!(bits(a), bits(b), "vector {j}");
                }
                let a = f32::vecs::<S, 3>(simd, &x32, 1);
                let b = f64::vecs::<S, 3>(simd, &x64, 1);
                for k in 0..3 {
                    assert_eq!(bits(a[k]), bits(b[k]), "vector {k} of three");
                }
                for t in 0..=l {
                    let a = f32::partial(simd, &x32[l..l + t]);
                    let b = f64::partial(simd, &x64[l..l + t]);
                    assert_eq!(bits(a), bits(b), "tail of {t}");
                    assert!(bits(a)[t..l].iter().all(|&z| z == 0), "zero lanes past a tail of {t}");
                }
            }
        }
        Arch::new().dispatch(Check);
        Check.with_simd(pulp::Scalar::new());
    }
}
