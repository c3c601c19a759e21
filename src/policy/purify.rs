//! Purification of a stochastic policy (our way of recovering a deterministic policy from the
//! stochastic optimum; Shapley–Folkman / Carathéodory): keep `g(π) = Σ_s ρ_s Σ_a π_s(a)φ(s, a)`
//! fixed and move inside `{π : g(π) = g}` along null-space directions until entries hit 0, so that
//! at most `d` states stay randomised with the same `Ĵ`; then round those states.
//!
//! A fractional state `s` with support `{r_s, a₁, …}` (`r_s` its most probable action) has the
//! moves "mass from `r_s` to `a`", each changing `g` by `ρ_s(φ(s, a) − φ(s, r_s))·t`. The working
//! set holds at most `d` linearly independent moves (an orthonormal basis `Q` and the triangle `R`
//! of their QR factorisation, modified Gram–Schmidt with one re-orthogonalisation). Every other
//! move `e` is a combination `e = Σ_j α_j e_j` of the working set; moving `+t` along `e` and
//! `−tα_j` along the `e_j` leaves `g` unchanged, and the largest feasible `t` zeroes at least one
//! probability. Each such event removes one support entry, so the procedure ends after at most
//! `Σ_s (|supp π_s| − 1)` events with every remaining move in the working set: at most `d`
//! randomised states. `g` drifts only by rounding (and by moves whose residual is below
//! `1e-10‖e‖`, treated as dependent); callers recompute `g` exactly afterwards.

use super::states::StateActions;
use std::collections::{HashMap, VecDeque};

/// What `purify` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PurifyStats {
    /// Randomised states before.
    pub randomized_before: usize,
    /// Randomised states after (`≤ d`).
    pub randomized_after: usize,
    /// Null-space moves made.
    pub moves: usize,
}

/// Number of states with at least two actions of positive probability.
pub(crate) fn randomized_states(probs: &[f64], a: usize) -> usize {
    probs
        .chunks_exact(a)
        .filter(|r| r.iter().filter(|&&p| p > 0.0).count() > 1)
        .count()
}

struct Work<'a> {
    st: &'a StateActions<'a>,
    probs: &'a mut [f64],
    refs: HashMap<usize, usize>,
    set: Vec<(usize, usize)>,
    q: Vec<Vec<f64>>,
    r: Vec<Vec<f64>>,
}

const DEP_TOL: f64 = 1e-10;

impl Work<'_> {
    fn vector(&self, s: usize, a: usize) -> Vec<f64> {
        let r = self.refs[&s];
        let w = self.st.rho(s);
        self.st
            .feature(s, a)
            .iter()
            .zip(self.st.feature(s, r))
            .map(|(x, y)| w * (x - y))
            .collect()
    }

    /// Coefficients of `e` on `Q` and the residual (two Gram–Schmidt passes).
    fn project(&self, e: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut res = e.to_vec();
        let mut c = vec![0.0; self.q.len()];
        for _ in 0..2 {
            for (ci, qi) in c.iter_mut().zip(&self.q) {
                let p: f64 = qi.iter().zip(&res).map(|(a, b)| a * b).sum();
                *ci += p;
                res.iter_mut().zip(qi).for_each(|(x, q)| *x -= p * q);
            }
        }
        (c, res)
    }

    fn push(&mut self, pair: (usize, usize), c: Vec<f64>, res: Vec<f64>, rn: f64) {
        let k = self.set.len();
        for (row, ci) in self.r.iter_mut().zip(&c) {
            row.push(*ci);
        }
        let mut new_row = vec![0.0; k + 1];
        new_row[k] = rn;
        self.r.push(new_row);
        self.q.push(res.iter().map(|x| x / rn).collect());
        self.set.push(pair);
    }

    fn rebuild(&mut self) {
        let pairs = std::mem::take(&mut self.set);
        self.q.clear();
        self.r.clear();
        for p in pairs {
            let e = self.vector(p.0, p.1);
            let en = norm(&e);
            let (c, res) = self.project(&e);
            let rn = norm(&res);
            if rn > DEP_TOL * en {
                self.push(p, c, res, rn);
            }
            // A member that became dependent (rounding) is dropped from the set; it is
            // re-queued by the caller through the state scan at the end.
        }
    }

    fn pairs_of(&self, s: usize) -> Vec<(usize, usize)> {
        let na = self.st.actions();
        let r = self.refs[&s];
        (0..na)
            .filter(|&a| a != r && self.probs[s * na + a] > 0.0)
            .map(|a| (s, a))
            .collect()
    }

    /// The coefficients `α` of a dependent move on the working set: `e = Σ α_j e_j`, by
    /// back-substitution `R α = c` from its coefficients `c` on `Q`.
    fn solve_r(&self, c: Vec<f64>) -> Vec<f64> {
        let k = self.set.len();
        let mut alpha = c;
        for i in (0..k).rev() {
            let mut v = alpha[i];
            for (rij, aj) in self.r[i][i + 1..k].iter().zip(&alpha[i + 1..k]) {
                v -= rij * aj;
            }
            alpha[i] = v / self.r[i][i];
        }
        alpha
    }

    /// The rates `(index into probs, rate)` of the probability entries along the move `+1` on
    /// `(s, a)`, `−α_j` on the working set's moves: first those entries, then the references of
    /// the states involved (in state order), which give up what their moves take.
    fn move_rates(&self, s: usize, a: usize, alpha: &[f64]) -> Vec<(usize, f64)> {
        let na = self.st.actions();
        let mut rates: Vec<((usize, usize), f64)> = vec![((s, a), 1.0)];
        for (j, &(sj, aj)) in self.set.iter().enumerate() {
            rates.push(((sj, aj), -alpha[j]));
        }
        let mut ref_rate: HashMap<usize, f64> = HashMap::new();
        for &((si, _), r) in &rates {
            *ref_rate.entry(si).or_insert(0.0) -= r;
        }
        let mut entries: Vec<(usize, f64)> = rates.iter().map(|&((si, ai), r)| (si * na + ai, r)).collect();
        let mut refs_sorted: Vec<(usize, f64)> = ref_rate.into_iter().collect();
        refs_sorted.sort_by_key(|x| x.0);
        for (si, r) in refs_sorted {
            entries.push((si * na + self.refs[&si], r));
        }
        entries
    }

    /// Moves along `entries` (in whichever direction reaches the boundary first) until a
    /// probability hits 0; `false` (nothing moved) when neither direction reaches it.
    fn move_to_boundary(&mut self, entries: &[(usize, f64)]) -> bool {
        let max_step = |sign: f64| -> (f64, usize) {
            let mut t = f64::INFINITY;
            let mut at = usize::MAX;
            for &(idx, r) in entries {
                let r = sign * r;
                if r < 0.0 {
                    let cand = self.probs[idx] / -r;
                    if cand < t {
                        t = cand;
                        at = idx;
                    }
                }
            }
            (t, at)
        };
        let (tp, ip) = max_step(1.0);
        let (tm, im) = max_step(-1.0);
        let (sign, t, block) = if tp.is_finite() && (tp <= tm || !tm.is_finite()) {
            (1.0, tp, ip)
        } else {
            (-1.0, tm, im)
        };
        if !t.is_finite() {
            return false;
        }
        for &(idx, r) in entries {
            self.probs[idx] += sign * r * t;
            if self.probs[idx] < 0.0 {
                self.probs[idx] = 0.0;
            }
        }
        self.probs[block] = 0.0;
        true
    }

    /// Cleans the states a move touched: drops zeroed members, re-references states whose
    /// reference hit zero, re-queues their moves; rebuilds the factorisation if the working set
    /// changed (re-queuing members that it drops).
    fn clean_touched(&mut self, entries: &[(usize, f64)], queue: &mut VecDeque<(usize, usize)>) {
        let na = self.st.actions();
        let mut touched: Vec<usize> = entries.iter().map(|&(idx, _)| idx / na).collect();
        touched.sort_unstable();
        touched.dedup();
        let mut changed = false;
        for &si in &touched {
            let row = &self.probs[si * na..(si + 1) * na];
            let support = row.iter().filter(|&&p| p > 0.0).count();
            let r = self.refs[&si];
            if support <= 1 {
                self.refs.remove(&si);
                let before_len = self.set.len();
                self.set.retain(|p| p.0 != si);
                changed |= self.set.len() != before_len;
            } else if row[r] <= 0.0 {
                self.refs.insert(si, most_probable(row));
                self.set.retain(|p| p.0 != si);
                changed = true;
                for p in self.pairs_of(si) {
                    queue.push_front(p);
                }
            } else {
                let before_len = self.set.len();
                self.set.retain(|p| !(p.0 == si && row[p.1] <= 0.0));
                changed |= self.set.len() != before_len;
            }
        }
        if changed {
            let old: Vec<(usize, usize)> = self.set.clone();
            self.rebuild();
            for p in old {
                if !self.set.contains(&p) {
                    queue.push_front(p);
                }
            }
        }
    }
}

/// `‖v‖`.
fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The most probable action of a row (lowest index on ties).
fn most_probable(row: &[f64]) -> usize {
    let mut r = 0;
    for a in 1..row.len() {
        if row[a] > row[r] {
            r = a;
        }
    }
    r
}

/// The references of the randomised states (their most probable actions) and the queue of
/// their moves, in state order.
fn initial_moves(st: &StateActions<'_>, probs: &[f64]) -> (HashMap<usize, usize>, VecDeque<(usize, usize)>) {
    let na = st.actions();
    let mut refs = HashMap::new();
    let mut queue = VecDeque::new();
    for s in 0..st.n() {
        let row = &probs[s * na..(s + 1) * na];
        if row.iter().filter(|&&p| p > 0.0).count() > 1 {
            let r = most_probable(row);
            refs.insert(s, r);
            for (a, &p) in row.iter().enumerate() {
                if a != r && p > 0.0 {
                    queue.push_back((s, a));
                }
            }
        }
    }
    (refs, queue)
}

/// Purifies `probs` (row-major `n × A`) in place (module docs). Deterministic: states are
/// processed in index order.
pub fn purify(st: &StateActions<'_>, probs: &mut [f64]) -> PurifyStats {
    let na = st.actions();
    let d = st.d();
    let before = randomized_states(probs, na);
    let (refs, mut queue) = initial_moves(st, probs);
    let mut w = Work {
        st,
        probs,
        refs,
        set: Vec::new(),
        q: Vec::new(),
        r: Vec::new(),
    };
    let mut moves = 0usize;
    let mut guard = 0usize;
    let limit = 4 * (queue.len() + 1) * (d + 2) + 1000;
    while let Some((s, a)) = queue.pop_front() {
        guard += 1;
        if guard > limit {
            break;
        }
        if !w.refs.contains_key(&s) || w.refs[&s] == a || w.probs[s * na + a] <= 0.0 || w.set.contains(&(s, a)) {
            continue;
        }
        let e = w.vector(s, a);
        let en = norm(&e);
        let (c, res) = w.project(&e);
        let rn = norm(&res);
        if rn > DEP_TOL * en && w.set.len() < d {
            w.push((s, a), c, res, rn);
            continue;
        }
        let alpha = w.solve_r(c);
        let entries = w.move_rates(s, a, &alpha);
        if !w.move_to_boundary(&entries) {
            continue;
        }
        moves += 1;
        w.clean_touched(&entries, &mut queue);
        if w.probs[s * na + a] > 0.0 && w.refs.get(&s).is_some_and(|&r| r != a) {
            queue.push_front((s, a));
        }
    }
    let after = randomized_states(w.probs, na);
    PurifyStats {
        randomized_before: before,
        randomized_after: after,
        moves,
    }
}
