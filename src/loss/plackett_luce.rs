//! Plackett–Luce group losses (see [`super::group`] for the table and the references).
//!
//! Every form is evaluated without overflow or catastrophic cancellation for scores up to
//! `|u| ≈ 1e3` and beyond: log-sum-exp is shifted by the largest score and the largest term is
//! kept out of the `log1p`, probabilities are ratios of shifted exponentials (each `≤ 1`), and
//! the quantities `1 − p` that appear in gradients and Hessian diagonals are formed as sums of
//! the other probabilities (or as a sigmoid), never as a difference with 1 when `p ≈ 1`.

use super::group::GroupLoss;
use crate::data::group::MAX_K;
use crate::error::{check_eps, Error, Result};
use crate::math::simd::scalar::{logaddexp, sigmoid, softplus};

/// `e_k = exp(u_k − m)` with `m = max u` at index `k*` (so `e_{k*} = 1`); returns
/// `(m, k*, s)` with `s = Σ_{k≠k*} e_k` (`LSE(u) = m + log1p(s)`).
#[inline]
fn softmax_core(u: &[f64], e: &mut [f64]) -> (f64, usize, f64) {
    let mut kstar = 0;
    let mut m = u[0];
    for (k, &v) in u.iter().enumerate().skip(1) {
        if v > m {
            m = v;
            kstar = k;
        }
    }
    let mut s = 0.0;
    for (k, (ek, &v)) in e.iter_mut().zip(u).enumerate() {
        if k == kstar {
            *ek = 1.0;
        } else {
            *ek = (v - m).exp();
            s += *ek;
        }
    }
    (m, kstar, s)
}

/// Turns the shifted exponentials `e` of [`softmax_core`] into `p = softmax(u) = e/(1 + s)`.
#[inline]
fn probabilities(e: &mut [f64], s: f64) {
    let inv = 1.0 / (1.0 + s);
    e.iter_mut().for_each(|v| *v *= inv);
}

/// `1 − p_k` without cancellation: `s/(1 + s)` for the largest score `k = k*`, else `1 − p_k`
/// (then `p_k ≤ ½`).
#[inline]
fn rest(p: &[f64], k: usize, kstar: usize, s: f64) -> f64 {
    if k == kstar {
        s / (1.0 + s)
    } else {
        1.0 - p[k]
    }
}

/// Writes `scale·(diag(p) − ppᵀ)` (row-major `K × K`), diagonal `scale·p_k(1 − p_k)` with the
/// cancellation-free `1 − p_k`.
#[inline]
fn write_softmax_hessian(p: &[f64], kstar: usize, s: f64, scale: f64, h: &mut [f64]) {
    let k = p.len();
    for a in 0..k {
        let row = &mut h[a * k..(a + 1) * k];
        let pa = p[a];
        for (b, hb) in row.iter_mut().enumerate() {
            *hb = -scale * (pa * p[b]); // exactly symmetric
        }
        row[a] = scale * (pa * rest(p, a, kstar, s));
    }
}

fn check_label_count(k: usize) -> Result<()> {
    if !(2..=MAX_K).contains(&k) {
        return Err(Error::param(
            "k",
            format!("needs 2 ≤ K ≤ {MAX_K} alternatives, got {k}"),
        ));
    }
    Ok(())
}

/// Plackett–Luce top-1 (choice) negative log-likelihood (Chowdhury, Zhou & Natarajan (2024),
/// eq. 11):
///
/// `ℓ(u; y) = LSE(u) − u_y`,  `∂ℓ/∂u = p − e_y`,  `∂²ℓ/∂u² = diag(p) − ppᵀ`,  `p = softmax(u)`.
///
/// Evaluated as `(m − u_y) + log1p(Σ_{k≠k*} e^{u_k − m})` (`m = max u` at `k*`). Convex, `≥ 0`;
/// recession `max u − u_y`. `K = 2` is the BTL loss on `t = u₁ − u₀`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlTop1;

impl GroupLoss for PlTop1 {
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = true;
    fn name(&self) -> &'static str {
        "pl-top1"
    }
    fn positions(&self) -> usize {
        1
    }
    fn check_k(&self, k: usize) -> Result<()> {
        check_label_count(k)
    }
    fn scratch_len(&self, k: usize) -> usize {
        k
    }
    #[inline]
    fn eval(
        &self,
        u: &[f64],
        order: &[u8],
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        scratch: &mut [f64],
    ) -> f64 {
        let k = u.len();
        let y = usize::from(order[0]);
        let e = &mut scratch[..k];
        let (m, kstar, s) = softmax_core(u, e);
        let value = (m - u[y]) + s.ln_1p();
        if grad.is_none() && hess.is_none() {
            return value;
        }
        probabilities(e, s);
        let p = &*e;
        if let Some(g) = grad {
            g.copy_from_slice(p);
            g[y] = -rest(p, y, kstar, s);
        }
        if let Some(h) = hess {
            write_softmax_hessian(p, kstar, s, 1.0, h);
        }
        value
    }
    fn recession(&self, u: &[f64], order: &[u8]) -> f64 {
        let m = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        m - u[usize::from(order[0])]
    }
}

/// Plackett–Luce negative log-likelihood of the top `J` positions of a ranking ("Provable
/// protection of human judgements" (anon., 2025), Sec. 4.2; its Claims B.1/B.2 print wrong
/// softmax weights, the gradient and Hessian below are the correct ones): with `P_j = u_{o_j}` and
/// the remaining set `R_j = {o_j, …, o_{K−1}}` at stage `j = 0, …, J−1`,
///
/// `ℓ = Σ_{j<J} softplus(LSE_{j+1} − u_{o_j})`,  `LSE_j = LSE_{k∈R_j} u_k` (a suffix recursion
/// `LSE_j = logaddexp(u_{o_j}, LSE_{j+1})`, never shifted by a global maximum),
///
/// `∂ℓ/∂u_k = Σ_{j ≤ min(q_k, J−1)} p^{(j)}_k − 1[q_k < J]` (`q_k` the position of `k`,
/// `p^{(j)} = softmax` over `R_j`), evaluated as `exp(u_k + A_{q−1}) − σ(LSE_{q+1} − u_k)` with
/// `A_j = log Σ_{j'≤j} e^{−LSE_{j'}}` (every term `≤ 1`, the `1 − p` of the own stage a
/// sigmoid), and `∂²ℓ/∂u² = Σ_{j<J} E_j [diag(p^{(j)}) − p^{(j)}p^{(j)ᵀ}] E_jᵀ`.
///
/// `J = K − 1` is the full ranking; `J = 1` equals [`PlTop1`]. Convex, `≥ 0`; value `log K!` at
/// `u = 0` for a full ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlRanking {
    top: usize,
}

impl PlRanking {
    /// The top-`J` loss (`J ≥ 1`; `J ≤ K − 1` is checked against the data).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`top`) when `J = 0` or `J ≥ 256`.
    pub fn new(top: usize) -> Result<Self> {
        if !(1..MAX_K).contains(&top) {
            return Err(Error::param("top", format!("needs 1 ≤ J ≤ {}, got {top}", MAX_K - 1)));
        }
        Ok(PlRanking { top })
    }
    /// `J`.
    pub fn top(&self) -> usize {
        self.top
    }
}

impl GroupLoss for PlRanking {
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = true;
    fn name(&self) -> &'static str {
        "pl-ranking"
    }
    fn positions(&self) -> usize {
        self.top
    }
    fn check_k(&self, k: usize) -> Result<()> {
        check_label_count(k)?;
        if self.top >= k {
            return Err(Error::param(
                "top",
                format!("J = {} ranked stages need K > J alternatives, got K = {k}", self.top),
            ));
        }
        Ok(())
    }
    fn scratch_len(&self, k: usize) -> usize {
        2 * self.top + 1 + k
    }
    fn eval(
        &self,
        u: &[f64],
        order: &[u8],
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        scratch: &mut [f64],
    ) -> f64 {
        let k = u.len();
        let jj = self.top;
        // pos[k] = ranked position of k if < J, else J (in the final pool R_J).
        let mut pos = [0u8; MAX_K];
        pos[..k].fill(jj as u8);
        for (q, &o) in order[..jj].iter().enumerate() {
            pos[usize::from(o)] = q as u8;
        }
        let (lse, rest_buf) = scratch.split_at_mut(jj + 1);
        let (acc, p) = rest_buf.split_at_mut(jj);
        let p = &mut p[..k];
        // LSE over the final pool R_J, largest term out of the log1p.
        let (mut m, mut kstar) = (f64::NEG_INFINITY, usize::MAX);
        for (idx, &v) in u.iter().enumerate() {
            if usize::from(pos[idx]) == jj && v > m {
                m = v;
                kstar = idx;
            }
        }
        let mut s = 0.0;
        for (idx, &v) in u.iter().enumerate() {
            if usize::from(pos[idx]) == jj && idx != kstar {
                s += (v - m).exp();
            }
        }
        lse[jj] = m + s.ln_1p();
        let mut value = 0.0;
        for j in (0..jj).rev() {
            let a = u[usize::from(order[j])];
            lse[j] = logaddexp(a, lse[j + 1]);
            value += softplus(lse[j + 1] - a);
        }
        if grad.is_none() && hess.is_none() {
            return value;
        }
        if let Some(g) = grad {
            acc[0] = -lse[0];
            for j in 1..jj {
                acc[j] = logaddexp(acc[j - 1], -lse[j]);
            }
            for (idx, gk) in g.iter_mut().enumerate() {
                let q = usize::from(pos[idx]);
                *gk = if q == jj {
                    (u[idx] + acc[jj - 1]).exp()
                } else {
                    let before = if q > 0 { (u[idx] + acc[q - 1]).exp() } else { 0.0 };
                    before - sigmoid(lse[q + 1] - u[idx])
                };
            }
        }
        if let Some(h) = hess {
            h[..k * k].fill(0.0);
            for j in 0..jj {
                // p^{(j)} over R_j = {k : pos[k] ≥ j}; 1 − p for o_j as a sigmoid.
                let oj = usize::from(order[j]);
                for (idx, pk) in p.iter_mut().enumerate() {
                    *pk = if usize::from(pos[idx]) >= j {
                        (u[idx] - lse[j]).exp()
                    } else {
                        0.0
                    };
                }
                for a in 0..k {
                    if p[a] == 0.0 {
                        continue;
                    }
                    let one_minus = if a == oj {
                        sigmoid(lse[j + 1] - u[a])
                    } else {
                        1.0 - p[a]
                    };
                    let row = &mut h[a * k..(a + 1) * k];
                    for b in 0..k {
                        if b != a {
                            row[b] -= p[a] * p[b];
                        }
                    }
                    row[a] += p[a] * one_minus;
                }
            }
        }
        value
    }
    fn recession(&self, u: &[f64], order: &[u8]) -> f64 {
        let k = u.len();
        let jj = self.top;
        let mut ranked = [false; MAX_K];
        for &o in &order[..jj] {
            ranked[usize::from(o)] = true;
        }
        let mut m = (0..k)
            .filter(|&i| !ranked[i])
            .map(|i| u[i])
            .fold(f64::NEG_INFINITY, f64::max);
        let mut r = 0.0;
        for j in (0..jj).rev() {
            let a = u[usize::from(order[j])];
            m = m.max(a);
            r += m - a;
        }
        r
    }
}

/// The debiased top-1 loss of K-RR-privatised choices (derived from Chowdhury, Zhou &
/// Natarajan (2024), Sec. 4.4 and App. C.4, which state only its SGD step): with `q = 1/(e^ε + K −
/// 1)`, weights `w_k = 1(ỹ = k) − q` and `c = Σ_k w_k = c_{K,ε} = (e^ε − 1)/(e^ε + K − 1)`,
///
/// `ℓ̂(u; ỹ) = −Σ_k w_k log p_k = c·LSE(u) − wᵀu`,  `∂ℓ̂/∂u = c p − w`,
/// `∂²ℓ̂/∂u² = c (diag(p) − ppᵀ)`.
///
/// Unbiased for the clear-label loss up to the factor `c`: `E[w_k | y] = c·1(k = y)`, so
/// `E[ℓ̂ | y] = c·ℓ_top1(u; y)` and `E[∇ℓ̂ | y] = c ∇ℓ_top1`; its per-sample θ-gradient is exactly
/// the Algorithm-1 gradient `ĝ = Σ_k ∇log p_k/(e^ε + K − 1) − ∇log p_ỹ` (verified in the tests).
///
/// **Convexity.** The Hessian is `c > 0` times the top-1 Hessian and does not depend on the
/// label: convex for every label. **Not bounded below** (the weights `−q` are negative: the
/// recession `c·max u − wᵀu` is negative along directions that raise an alternative that was
/// never reported), so the estimator needs a norm bound (`Θ_B`), exactly as the binary debiased
/// RR loss. With `K = 2` it is that binary loss on `t = u₁ − u₀`.
///
/// Evaluated as `(1 − q)(LSE − u_ỹ) − q Σ_{k≠ỹ}(LSE − u_k)` with `LSE − u_k = (m − u_k) +
/// log1p(s)`; `c = −expm1(−ε)/(1 + (K−1)e^{−ε})` and `q = e^{−ε}/(1 + (K−1)e^{−ε})` (no overflow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlKrrDebiased {
    eps: f64,
    k: usize,
    q: f64,
    c: f64,
}

impl PlKrrDebiased {
    /// The loss for K-RR at level `eps` over `k` alternatives.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] unless `ε > 0` is finite and `2 ≤ K ≤ 256`.
    pub fn new(eps: f64, k: usize) -> Result<Self> {
        check_eps(eps)?;
        check_label_count(k)?;
        let em = (-eps).exp();
        let den = 1.0 + (k as f64 - 1.0) * em;
        Ok(PlKrrDebiased {
            eps,
            k,
            q: em / den,
            c: -(-eps).exp_m1() / den,
        })
    }
    /// ε.
    pub fn eps(&self) -> f64 {
        self.eps
    }
    /// `K`.
    pub fn k(&self) -> usize {
        self.k
    }
    /// `q = 1/(e^ε + K − 1)`, the K-RR probability of each wrong label.
    pub fn q(&self) -> f64 {
        self.q
    }
    /// `c_{K,ε} = (e^ε − 1)/(e^ε + K − 1)`.
    pub fn c(&self) -> f64 {
        self.c
    }
}

impl GroupLoss for PlKrrDebiased {
    const CONVEX: bool = true;
    const BOUNDED_BELOW: bool = false;
    fn name(&self) -> &'static str {
        "pl-krr"
    }
    fn positions(&self) -> usize {
        1
    }
    fn check_k(&self, k: usize) -> Result<()> {
        if k != self.k {
            return Err(Error::param(
                "k",
                format!(
                    "the K-RR loss was built for K = {} alternatives but the data have K = {k}",
                    self.k
                ),
            ));
        }
        Ok(())
    }
    fn scratch_len(&self, k: usize) -> usize {
        k
    }
    #[inline]
    fn eval(
        &self,
        u: &[f64],
        order: &[u8],
        grad: Option<&mut [f64]>,
        hess: Option<&mut [f64]>,
        scratch: &mut [f64],
    ) -> f64 {
        let k = u.len();
        let y = usize::from(order[0]);
        let (q, c) = (self.q, self.c);
        let e = &mut scratch[..k];
        let (m, kstar, s) = softmax_core(u, e);
        let l1 = s.ln_1p();
        let mut others = 0.0;
        for (idx, &v) in u.iter().enumerate() {
            if idx != y {
                others += m - v;
            }
        }
        let value = (1.0 - q) * ((m - u[y]) + l1) - q * (others + (k as f64 - 1.0) * l1);
        if grad.is_none() && hess.is_none() {
            return value;
        }
        probabilities(e, s);
        let p = &*e;
        if let Some(g) = grad {
            for (gk, &pk) in g.iter_mut().zip(p) {
                *gk = c * pk + q;
            }
            g[y] = q * (1.0 - k as f64 * p[y]) - rest(p, y, kstar, s);
        }
        if let Some(h) = hess {
            write_softmax_hessian(p, kstar, s, c, h);
        }
        value
    }
    fn recession(&self, u: &[f64], order: &[u8]) -> f64 {
        let y = usize::from(order[0]);
        let m = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let others: f64 = u.iter().enumerate().filter(|&(i, _)| i != y).map(|(_, v)| m - v).sum();
        (1.0 - self.q) * (m - u[y]) - self.q * others
    }
    fn privacy_scale(&self) -> f64 {
        self.c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_all<L: GroupLoss>(l: &L, u: &[f64], o: &[u8]) -> (f64, Vec<f64>, Vec<f64>) {
        let k = u.len();
        let mut g = vec![0.0; k];
        let mut h = vec![0.0; k * k];
        let mut s = vec![0.0; l.scratch_len(k)];
        let v = l.eval(u, o, Some(&mut g), Some(&mut h), &mut s);
        let v2 = l.eval(u, o, None, None, &mut s);
        assert_eq!(v.to_bits(), v2.to_bits());
        (v, g, h)
    }

    #[test]
    fn reference_values() {
        // Full ranking at u = 0: log K! (K = 5: 4.787491742782046).
        let l = PlRanking::new(4).unwrap();
        let (v, g, _) = eval_all(&l, &[0.0; 5], &[3, 1, 4, 0, 2]);
        assert!((v - 4.787_491_742_782_046).abs() < 1e-14, "{v}");
        assert!(g.iter().sum::<f64>().abs() < 1e-15);
        // Scores (0, −800, −801), ranking (0, 1, 2): softplus(−800) + softplus(−1).
        let (v, _, _) = eval_all(&l_full(3), &[0.0, -800.0, -801.0], &[0, 1, 2]);
        assert!((v - 0.313_261_687_518_222_86).abs() < 1e-16, "{v}");
        // Top-1 at u = 0: log K.
        let (v, g, h) = eval_all(&PlTop1, &[0.0; 4], &[2]);
        assert!((v - 4f64.ln()).abs() < 1e-15);
        assert_eq!(g, vec![0.25, 0.25, -0.75, 0.25]);
        assert!((h[0] - 0.1875).abs() < 1e-16 && (h[1] + 0.0625).abs() < 1e-16);
        // Large scores: finite and exact.
        let (v, g, _) = eval_all(&PlTop1, &[1000.0, -1000.0, 0.0], &[0]);
        assert_eq!(v, 0.0);
        assert!(g.iter().all(|x| x.is_finite()));
        let (v, _, _) = eval_all(&PlTop1, &[1000.0, -1000.0, 0.0], &[1]);
        assert_eq!(v, 2000.0);
    }

    fn l_full(k: usize) -> PlRanking {
        PlRanking::new(k - 1).unwrap()
    }

    #[test]
    fn top1_is_ranking_with_one_stage() {
        let u = [0.3, -1.2, 2.5, 0.7];
        for y in 0..4u8 {
            let o = [y, (y + 1) % 4, (y + 2) % 4, (y + 3) % 4];
            let a = eval_all(&PlTop1, &u, &o);
            let b = eval_all(&PlRanking::new(1).unwrap(), &u, &o);
            assert!((a.0 - b.0).abs() < 1e-15);
            for (x, z) in a.1.iter().zip(&b.1).chain(a.2.iter().zip(&b.2)) {
                assert!((x - z).abs() < 1e-15, "{x} {z}");
            }
        }
    }

    #[test]
    fn krr_k2_is_binary_debiased_rr() {
        use crate::loss::{Loss, RrDebiased};
        let eps = 0.7;
        let l = PlKrrDebiased::new(eps, 2).unwrap();
        let b = RrDebiased::new(eps).unwrap();
        for &(u0, u1) in &[(0.0, 0.0), (0.3, -1.1), (-800.0, 800.0), (2.0, 1.5)] {
            for y in 0..2u8 {
                let (v, g, h) = eval_all(&l, &[u0, u1], &[y]);
                let t = u1 - u0;
                assert!(
                    (v - b.value(t, y)).abs() < 1e-12 * (1.0 + v.abs()),
                    "{v} {}",
                    b.value(t, y)
                );
                assert!((g[1] - b.d1(t, y)).abs() < 1e-15 && (g[0] + b.d1(t, y)).abs() < 1e-15);
                assert!((h[3] - b.d2(t, y)).abs() < 1e-15);
            }
        }
        assert!((l.c() - (0.5 * eps).tanh()).abs() < 1e-16);
    }

    #[test]
    fn invalid_parameters() {
        assert!(PlRanking::new(0).is_err());
        assert!(PlRanking::new(3).unwrap().check_k(3).is_err());
        assert!(PlRanking::new(2).unwrap().check_k(3).is_ok());
        assert!(PlKrrDebiased::new(0.0, 3).is_err());
        assert!(PlKrrDebiased::new(1.0, 1).is_err());
        assert!(PlKrrDebiased::new(1.0, 3).unwrap().check_k(4).is_err());
    }
}
