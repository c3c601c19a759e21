#!/usr/bin/env python3
"""High-precision reference solver for the privpref objective (mpmath only).

Objective (the library's `F`, src/objective.rs):

    F(theta) = (1/W) sum_i w_i l(x_i . theta; y_i) + (beta/(2W)) |theta|^2 + (1/W) <b, theta>,

W = sum_i w_i (= n without weights; weights have frequency semantics), minimised over

    theta-b : {sum(theta) = 0, |theta| <= B}
    ball    : {|theta| <= B}
    none    : R^d

Losses (y in {0,1}; sigma = logistic, c = tanh(eps/2), sb = sigma(-eps), se = sigma(eps)):

    mle          l = softplus((1-2y) t)
    mle-rr       l = -log p1~(t) (y=1), -log p0~(t) (y=0),  p1~ = sb + c sigma(t), p0~ = 1 - p1~
    debiased-rr  l(t;1) = se softplus(-t) - sb softplus(t),  l(t;0) = se softplus(t) - sb softplus(-t)
    probit       l = -log Phi((2y-1) t)

Method (the library's exact constrained solver, re-implemented independently), all in mpmath at DPS decimal digits:

 1. Reparametrise theta = U u with U the Helmert basis of {sum = 0} (theta-b) or U = I.
 2. Damped Newton (Armijo, Levenberg shift if the Hessian is not positive definite) from u = 0 on
    G(u) = W F(U u).  If it converges (gradient ~ 0 and Newton step ~ 0) inside the ball, that is
    the answer (interior).
 3. Otherwise (outside the ball, norm cap hit, no convergence): search the multiplier mu > 0 with
    |u(mu)| = B, u(mu) = argmin G(u) + (mu/2)|u|^2, by a safeguarded Newton iteration on the
    secular equation 1/|u(mu)| - 1/B = 0 (bracketing + bisection fallback), each u(mu) by
    warm-started Newton; then polish with Newton on the full KKT system (u, mu).
 4. `none` with no finite minimiser: a certificate direction v is searched and checked:
      * mle / probit / mle-rr (beta = 0, b = 0): s_i x_i.v >= 0 for every row with w_i > 0,
        and > 0 for one of them (s_i = 2 y_i - 1).  Each loss is strictly decreasing in s_i t_i,
        so F(theta + a v) is strictly decreasing in a for every theta: no minimiser.
      * debiased-rr (beta = 0): recession slope r(v) = sum_i w_i c [max(t_i,0) - z_i t_i] + b.v < 0
        with t_i = x_i.v, z(1) = se/c, z(0) = -sb/c.  Since softplus(t) <= max(t,0) + log 2,
        F(a v) <= (a r(v) + c log 2 W)/W -> -inf: unbounded below.
 5. KKT certificate, recomputed from the ORIGINAL data in theta coordinates:
      g = P grad F(theta) (P = centering projector for theta-b, identity otherwise),
      interior: |g| <= tol;  boundary: mu = -g.theta/B^2 >= 0 and |g + mu theta| <= tol,
      plus feasibility |sum theta| <= tol (theta-b) and | |theta| - B | <= tol (boundary).
    Uniqueness: reduced Hessian of F positive definite (interior / none), or mu > 0 (boundary,
    F convex on the set).  A result that fails any check raises CertificateError.

The multiplier reported is the one of F (the 1/W-scaled objective): P grad F + mu theta = 0.
The multiplier of the sum-scaled objective G is W * mu.
"""

import math

import mpmath as mp
from mpmath import mpf

DPS = 50
mp.mp.dps = DPS

LOSSES = ("mle", "mle-rr", "debiased-rr", "probit")
CONSTRAINTS = ("theta-b", "ball", "none")


class CertificateError(RuntimeError):
    """The answer could not be certified; the fixture must not be emitted."""


# ----------------------------------------------------------------------------------------------
# scalar primitives
# ----------------------------------------------------------------------------------------------

def sigmoid(t):
    return 1 / (1 + mp.exp(-t))


def softplus(t):
    if t > 0:
        return t + mp.log1p(mp.exp(-t))
    return mp.log1p(mp.exp(t))


def dsigmoid(t):
    e = mp.exp(-abs(t))
    return e / (1 + e) ** 2


class Loss:
    """Pointwise loss l(t; y) with first and second derivatives, in mpmath."""

    def __init__(self, name, eps=None):
        if name not in LOSSES:
            raise ValueError("unknown loss %r" % name)
        self.name = name
        if name in ("mle-rr", "debiased-rr"):
            if eps is None:
                raise ValueError("loss %s needs eps" % name)
            e = mpf(eps)
            if not e > 0:
                raise ValueError("eps must be > 0")
            self.eps = e
            self.se = sigmoid(e)
            self.sb = sigmoid(-e)
            self.c = mp.tanh(e / 2)
            # soft labels of the debiased loss: l = c [softplus(t) - z t]
            self.z1 = self.se / self.c
            self.z0 = -self.sb / self.c
        else:
            self.eps = None

    # value, first, second derivative
    def eval(self, t, y, order=2):
        n = self.name
        if n == "mle":
            s = 1 - 2 * y
            v = softplus(s * t)
            if order == 0:
                return v, None, None
            # sigma(t) - y without cancellation
            d1 = -sigmoid(-t) if y == 1 else sigmoid(t)
            return v, d1, dsigmoid(t)
        if n == "debiased-rr":
            spp, spm = softplus(t), softplus(-t)
            if y == 1:
                v = self.se * spm - self.sb * spp
            else:
                v = self.se * spp - self.sb * spm
            if order == 0:
                return v, None, None
            sp, sm = sigmoid(t), sigmoid(-t)
            if y == 1:
                d1 = -(self.se * sm + self.sb * sp)
            else:
                d1 = self.se * sp + self.sb * sm
            return v, d1, self.c * dsigmoid(t)
        if n == "mle-rr":
            # l(t;0) = l(-t;1)
            sgn = 1 if y == 1 else -1
            s = sgn * t
            sg = sigmoid(s)
            p = self.sb + self.c * sg
            v = -mp.log(p)
            if order == 0:
                return v, None, None
            ds = dsigmoid(s)
            d1 = -self.c * ds / p
            d2 = self.c * ds * (self.c * ds - (1 - 2 * sg) * p) / p ** 2
            return v, sgn * d1, d2
        if n == "probit":
            sgn = 1 if y == 1 else -1
            s = sgn * t
            Phi = mp.ncdf(s)
            v = -mp.log(Phi)
            if order == 0:
                return v, None, None
            h = mp.npdf(s) / Phi
            A = h * (s + h)
            return v, -sgn * h, A
        raise AssertionError

    def strictly_decreasing_in_margin(self):
        """True if l(t; y) is strictly decreasing in s t (s = 2y - 1) for all t."""
        return self.name in ("mle", "mle-rr", "probit")


# ----------------------------------------------------------------------------------------------
# small dense linear algebra on lists of mpf
# ----------------------------------------------------------------------------------------------

def dot(a, b):
    return mp.fsum(ai * bi for ai, bi in zip(a, b))


def norm(a):
    return mp.sqrt(mp.fsum(ai * ai for ai in a))


def cholesky(H):
    """Lower Cholesky factor or None if H is not (numerically) positive definite."""
    m = len(H)
    L = [[mpf(0)] * m for _ in range(m)]
    for j in range(m):
        s = H[j][j] - mp.fsum(L[j][k] ** 2 for k in range(j))
        if not s > 0:
            return None
        L[j][j] = mp.sqrt(s)
        for i in range(j + 1, m):
            L[i][j] = (H[i][j] - mp.fsum(L[i][k] * L[j][k] for k in range(j))) / L[j][j]
    return L


def chol_solve(L, b):
    m = len(L)
    z = [mpf(0)] * m
    for i in range(m):
        z[i] = (b[i] - mp.fsum(L[i][k] * z[k] for k in range(i))) / L[i][i]
    x = [mpf(0)] * m
    for i in reversed(range(m)):
        x[i] = (z[i] - mp.fsum(L[k][i] * x[k] for k in range(i + 1, m))) / L[i][i]
    return x


def min_eig_sym(H):
    if len(H) == 0:
        return mpf("inf")
    E, _ = mp.eigsy(mp.matrix(H))
    return min(E[i] for i in range(len(H)))


def helmert(d):
    """d x (d-1) orthonormal basis of {sum = 0}; column k (1-based) = (1,..,1,-k,0..)/sqrt(k(k+1))."""
    U = [[mpf(0)] * (d - 1) for _ in range(d)]
    for k in range(1, d):
        s = 1 / mp.sqrt(k * (k + 1))
        for i in range(k):
            U[i][k - 1] = s
        U[k][k - 1] = -k * s
    return U


# ----------------------------------------------------------------------------------------------
# the problem
# ----------------------------------------------------------------------------------------------

class Problem:
    def __init__(self, loss, x, y, n, d, eps=None, constraint="theta-b", radius=None, ridge=0.0,
                 linear_term=None, weights=None):
        if constraint not in CONSTRAINTS:
            raise ValueError(constraint)
        assert len(x) == n * d and len(y) == n
        self.loss = Loss(loss, eps)
        self.n, self.d = n, d
        self.constraint = constraint
        # data are doubles, taken as exact binary values
        self.X = [[mpf(float(x[i * d + j])) for j in range(d)] for i in range(n)]
        self.y = [int(v) for v in y]
        assert all(v in (0, 1) for v in self.y)
        self.w = [mpf(1)] * n if weights is None else [mpf(float(v)) for v in weights]
        assert all(v >= 0 for v in self.w)
        self.W = mp.fsum(self.w)
        assert self.W > 0
        self.beta = mpf(float(ridge))
        self.b = [mpf(0)] * d if linear_term is None else [mpf(float(v)) for v in linear_term]
        self.B = None if constraint == "none" else mpf(float(radius))
        if constraint == "theta-b":
            if d < 2:
                raise ValueError("theta-b with d < 2 is the point {0}")
            self.U = helmert(d)
            self.m = d - 1
        else:
            self.U = None
            self.m = d
        self.Xr = [self.to_reduced(row) for row in self.X]
        self.br = self.to_reduced(self.b)
        self.active = [i for i in range(n) if self.w[i] != 0]
        # gradient scale of G (sum-scaled), used for tolerances and the mu bracket
        self.gscale = mp.fsum(self.w[i] * norm(self.Xr[i]) for i in self.active) + norm(self.br) + 1

    # coordinates
    def to_reduced(self, v):
        if self.U is None:
            return list(v)
        return [mp.fsum(self.U[i][k] * v[i] for i in range(self.d)) for k in range(self.m)]

    def to_theta(self, u):
        if self.U is None:
            return list(u)
        return [mp.fsum(self.U[i][k] * u[k] for k in range(self.m)) for i in range(self.d)]

    # G_mu(u) = W F(U u) + (mu/2)|u|^2 with value, gradient, Hessian
    def G(self, u, mu=0, order=2):
        m = self.m
        lam = self.beta + mu
        val = lam / 2 * dot(u, u) + dot(self.br, u)
        terms = []
        g = [lam * u[k] + self.br[k] for k in range(m)] if order >= 1 else None
        H = [[(lam if a == b else mpf(0)) for b in range(m)] for a in range(m)] if order >= 2 else None
        for i in self.active:
            xi = self.Xr[i]
            t = dot(xi, u)
            l0, l1, l2 = self.loss.eval(t, self.y[i], order)
            wi = self.w[i]
            terms.append(wi * l0)
            if order >= 1:
                c1 = wi * l1
                for k in range(m):
                    g[k] += c1 * xi[k]
            if order >= 2:
                c2 = wi * l2
                for a in range(m):
                    ca = c2 * xi[a]
                    row = H[a]
                    for b in range(a + 1):
                        row[b] += ca * xi[b]
        if order >= 2:
            for a in range(m):
                for b in range(a):
                    H[b][a] = H[a][b]
        val += mp.fsum(terms)
        return val, g, H

    def F_theta(self, theta):
        """F at theta (theta coordinates, original data): the frozen 1/W-scaled objective."""
        terms = []
        for i in self.active:
            t = dot(self.X[i], theta)
            terms.append(self.w[i] * self.loss.eval(t, self.y[i], 0)[0])
        return (mp.fsum(terms) + self.beta / 2 * dot(theta, theta) + dot(self.b, theta)) / self.W

    def gradF_theta(self, theta):
        g = [self.beta * theta[j] + self.b[j] for j in range(self.d)]
        for i in self.active:
            t = dot(self.X[i], theta)
            c1 = self.w[i] * self.loss.eval(t, self.y[i], 1)[1]
            for j in range(self.d):
                g[j] += c1 * self.X[i][j]
        return [gj / self.W for gj in g]

    def project_subspace(self, v):
        if self.constraint != "theta-b":
            return list(v)
        mean = mp.fsum(v) / self.d
        return [vj - mean for vj in v]

    def convex_on_feasible_set(self):
        """Sufficient condition for convexity of F on the feasible set (always True except mle-rr)."""
        if self.loss.name != "mle-rr":
            return True
        if self.constraint == "none":
            return False
        if self.constraint == "theta-b":
            rows = [self.project_subspace(self.X[i]) for i in self.active]
        else:
            rows = [self.X[i] for i in self.active]
        return self.loss.eps >= 2 * self.B * max(norm(r) for r in rows)


# ----------------------------------------------------------------------------------------------
# Newton for fixed mu
# ----------------------------------------------------------------------------------------------

def newton(prob, u0, mu=0, maxit=200, cap=None):
    """Damped Newton on G_mu.  Returns (u, status) with status in
    'converged' | 'cap' | 'maxit' | 'linesearch'."""
    gtol = mpf(10) ** (-(DPS - 8)) * prob.gscale
    stol = mpf(10) ** -20
    u = list(u0)
    val, g, H = prob.G(u, mu)
    for it in range(maxit):
        gn = norm(g)
        # Newton direction, with a Levenberg shift if H is not positive definite
        L = cholesky(H)
        tau = mpf(0)
        if L is None:
            tr = mp.fsum(H[a][a] for a in range(prob.m)) / max(prob.m, 1)
            tau = max(abs(tr), mpf(1)) * mpf(10) ** -12
            while L is None:
                Hs = [[H[a][b] + (tau if a == b else 0) for b in range(prob.m)] for a in range(prob.m)]
                L = cholesky(Hs)
                if L is None:
                    tau *= 10
        step = [-s for s in chol_solve(L, g)]
        sn = norm(step)
        slope = dot(g, step)
        # converged: gradient at rounding level AND Newton step negligible (the latter rules out
        # the slow drift to infinity of separable / unbounded problems, where the gradient also
        # becomes tiny but the Newton step stays O(1))
        if gn <= gtol and tau == 0 and sn <= stol * (1 + norm(u)):
            # one more full step to reach the rounding floor, if it helps
            un = [u[k] + step[k] for k in range(prob.m)]
            _, gnew, _ = prob.G(un, mu, order=1)
            if norm(gnew) < gn:
                u = un
            return u, "converged"
        alpha = mpf(1)
        accepted = False
        for _ in range(80):
            un = [u[k] + alpha * step[k] for k in range(prob.m)]
            valn, gnew, _ = prob.G(un, mu, order=1)
            if valn <= val + mpf("1e-4") * alpha * slope:
                accepted = True
            elif gn < mpf(10) ** (-15) * prob.gscale and tau == 0 and norm(gnew) < gn:
                # function values are at rounding level: accept on gradient decrease
                accepted = True
            if accepted:
                break
            alpha /= 2
        if not accepted:
            return u, "linesearch"
        u = un
        val, g, H = prob.G(u, mu)
        if cap is not None and norm(u) > cap:
            return u, "cap"
    return u, "maxit"


# ----------------------------------------------------------------------------------------------
# ball: multiplier search
# ----------------------------------------------------------------------------------------------

def solve_on_sphere(prob, B, u_start=None):
    """Find mu > 0 and u with |u| = B and grad G(u) + mu u = 0."""
    tolB = mpf(10) ** (-(DPS - 5)) * B
    mu_lo = mpf(0)
    # |grad G + beta u| <= gscale (|l'| <= 1 for mle/mle-rr/debiased), so mu >= gscale/B gives |u| <= B
    mu_hi = prob.gscale / B
    u_hi, st = newton(prob, [mpf(0)] * prob.m, mu_hi)
    if st != "converged":
        raise CertificateError("inner Newton failed at mu_hi (%s)" % st)
    while norm(u_hi) > B:  # probit: l' unbounded, enlarge
        mu_lo = mu_hi
        mu_hi *= 4
        u_hi, st = newton(prob, u_hi, mu_hi)
        if st != "converged":
            raise CertificateError("inner Newton failed while bracketing (%s)" % st)
    mu, u = mu_hi, u_hi
    for it in range(400):
        r = norm(u)
        if abs(r - B) <= tolB:
            break
        if r > B:
            mu_lo = max(mu_lo, mu)
        else:
            mu_hi = min(mu_hi, mu)
        # Newton on psi(mu) = 1/|u(mu)| - 1/B; psi' = u.(H_mu^-1 u)/|u|^3
        _, _, H = prob.G(u, mu)
        L = cholesky(H)
        mu_new = None
        if L is not None:
            v = chol_solve(L, u)
            dpsi = dot(u, v) / r ** 3
            if dpsi > 0:
                mu_new = mu - (1 / r - 1 / B) / dpsi
        if mu_new is None or not (mu_lo < mu_new < mu_hi):
            mu_new = (mu_lo + mu_hi) / 2
        # warm start from the current point (scaled onto the sphere)
        u0 = [uk * B / r for uk in u] if r > 0 else u
        un, st = newton(prob, u0, mu_new)
        if st != "converged":
            un, st = newton(prob, u, mu_new)
        if st != "converged":
            raise CertificateError("inner Newton failed at mu=%s (%s)" % (mp.nstr(mu_new, 5), st))
        mu, u = mu_new, un
    else:
        raise CertificateError("multiplier search did not converge")
    # polish: Newton on the KKT system R(u, mu) = [grad G + mu u ; (|u|^2 - B^2)/2]
    def kkt_res(u, mu):
        _, g, H = prob.G(u, 0)
        R = [g[k] + mu * u[k] for k in range(prob.m)] + [(dot(u, u) - B * B) / 2]
        return R, H
    m = prob.m
    R, H = kkt_res(u, mu)
    for _ in range(6):
        J = mp.matrix(m + 1, m + 1)
        for a in range(m):
            for b in range(m):
                J[a, b] = H[a][b] + (mu if a == b else 0)
            J[a, m] = u[a]
            J[m, a] = u[a]
        try:
            delta = mp.lu_solve(J, mp.matrix([-r_ for r_ in R]))
        except ZeroDivisionError:
            break
        un = [u[k] + delta[k] for k in range(m)]
        mun = mu + delta[m]
        Rn, Hn = kkt_res(un, mun)
        if not norm(Rn) < norm(R):
            break
        u, mu, R, H = un, mun, Rn, Hn
    return u, mu


# ----------------------------------------------------------------------------------------------
# no-minimiser certificates (constraint none)
# ----------------------------------------------------------------------------------------------

def check_no_minimizer_direction(prob, v):
    """Return a description string if v certifies that F has no minimiser on R^d, else None."""
    lo = prob.loss
    if prob.beta != 0:
        return None
    ts = [(i, dot(prob.X[i], v)) for i in prob.active]
    if lo.strictly_decreasing_in_margin():
        if any(bj != 0 for bj in prob.b):
            return None
        margins = [(2 * prob.y[i] - 1) * t for i, t in ts]
        scale = norm(v) * max(norm(prob.X[i]) for i in prob.active)
        if min(margins) >= 0 and max(margins) > mpf(10) ** -20 * scale:
            return ("direction v with s_i x_i.v >= 0 for all rows (min %s, max %s): F strictly decreasing"
                    " along v" % (mp.nstr(min(margins), 3), mp.nstr(max(margins), 3)))
        return None
    # debiased-rr: recession slope
    r = dot(prob.b, v)
    for i, t in ts:
        z = lo.z1 if prob.y[i] == 1 else lo.z0
        r += prob.w[i] * lo.c * (max(t, 0) - z * t)
    if r < -mpf(10) ** -20 * norm(v) * prob.gscale:
        return "recession slope r(v) = %s < 0: F unbounded below" % mp.nstr(r / prob.W, 6)
    return None


def find_no_minimizer_certificate(prob, hints=()):
    cands = [list(map(mpf, h)) for h in hints]
    for v in cands:
        msg = check_no_minimizer_direction(prob, v)
        if msg:
            return v, msg
    # directions of the ball-constrained solutions with growing radius
    for R in (10, 100, 1000):
        try:
            u, _ = solve_on_sphere(prob, mpf(R))
            cands.append(prob.to_theta(u))
        except (CertificateError, ZeroDivisionError):
            pass
        for v in cands:
            msg = check_no_minimizer_direction(prob, v)
            if msg:
                return v, msg
    return None, None


# ----------------------------------------------------------------------------------------------
# driver + KKT certificate
# ----------------------------------------------------------------------------------------------

class Result:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def kkt_tolerance(prob):
    # absolute tolerance on the F-scaled projected gradient, relative to its natural scale
    return mpf(10) ** -30 * prob.gscale / prob.W


def certify(prob, theta, boundary):
    """Recompute the KKT conditions of F from the original data; raise CertificateError if they fail.
    Returns (residual, mu, info)."""
    tol = kkt_tolerance(prob)
    g = prob.project_subspace(prob.gradF_theta(theta))
    info = {}
    if prob.constraint == "theta-b":
        s = abs(mp.fsum(theta))
        info["sum_theta"] = s
        if s > tol:
            raise CertificateError("theta not in the sum-zero subspace (%s)" % mp.nstr(s, 3))
    nt = norm(theta)
    if prob.constraint == "none":
        res = norm(g)
        mu = None
    elif not boundary:
        if not nt < prob.B:
            raise CertificateError("interior point outside the ball")
        res = norm(g)
        mu = mpf(0)
    else:
        if abs(nt - prob.B) > tol * prob.B:
            raise CertificateError("boundary point not on the sphere (%s)" % mp.nstr(nt - prob.B, 3))
        mu = -dot(g, theta) / prob.B ** 2
        if mu < 0:
            raise CertificateError("negative multiplier %s" % mp.nstr(mu, 5))
        res = norm([g[j] + mu * theta[j] for j in range(prob.d)])
    info["kkt_residual"] = res
    info["tol"] = tol
    if not res <= tol:
        raise CertificateError("KKT residual %s > tol %s" % (mp.nstr(res, 3), mp.nstr(tol, 3)))
    return res, mu, info


def solve(prob, none_hints=()):
    """Solve and certify.  Returns a Result with fields status ('converged'|'no-minimizer'),
    theta, objective, on_boundary, multiplier, kkt_residual, min_eig, notes."""
    if prob.loss.name == "mle-rr" and prob.constraint != "none" and not prob.convex_on_feasible_set():
        notes = ["mle-rr NOT provably convex on the feasible set (eps < 2 B max|P x|)"]
    else:
        notes = []
    m = prob.m
    zero = [mpf(0)] * m
    if prob.constraint == "none":
        cap = mpf(10) ** 6
        u, st = newton(prob, zero, 0, maxit=120, cap=cap)
        if st == "converged":
            theta = prob.to_theta(u)
            res, mu, info = certify(prob, theta, False)
            _, _, H = prob.G(u, 0)
            lmin = min_eig_sym(H) / prob.W
            if not lmin > mpf(10) ** -25:
                raise CertificateError("Hessian not positive definite at the stationary point (%s)"
                                       % mp.nstr(lmin, 3))
            if prob.loss.name == "mle-rr":
                notes.append("mle-rr on R^d: stationary point only; global optimality needs a separate"
                             " (closed-form) argument")
            return Result(status="converged", theta=theta, objective=prob.F_theta(theta),
                          on_boundary=None, multiplier=None, kkt_residual=res, min_eig=lmin,
                          notes=notes, u=u)
        v, msg = find_no_minimizer_certificate(prob, list(none_hints) + [prob.to_theta(u)])
        if v is None:
            raise CertificateError("Newton failed (%s) and no no-minimiser certificate found" % st)
        return Result(status="no-minimizer", theta=None, objective=None, on_boundary=None,
                      multiplier=None, kkt_residual=None, min_eig=None, notes=notes + [msg],
                      certificate_direction=v)
    B = prob.B
    u, st = newton(prob, zero, 0, maxit=120, cap=1000 * B)
    u_free = u
    if st == "converged" and norm(u) <= B:
        boundary = False
        mu_G = mpf(0)
    else:
        u, mu_G = solve_on_sphere(prob, B)
        boundary = True
        if st == "converged":
            notes.append("unconstrained (subspace) minimiser outside the ball, norm %s"
                         % mp.nstr(norm(u_free), 6))
        else:
            notes.append("phase-1 Newton: %s" % st)
    theta = prob.to_theta(u)
    res, mu, info = certify(prob, theta, boundary)
    _, _, H = prob.G(u, mu_G)
    lmin = min_eig_sym(H) / prob.W
    if boundary:
        if not mu > mpf(10) ** -12:
            raise CertificateError("boundary solution with (near-)zero multiplier %s: degenerate"
                                   % mp.nstr(mu, 3))
        if abs(mu - mu_G / prob.W) > mpf(10) ** -25 * (1 + mu):
            raise CertificateError("multiplier mismatch")
    else:
        if not lmin > mpf(10) ** -25:
            raise CertificateError("reduced Hessian not positive definite at interior solution")
        if not norm(theta) < B * (1 - mpf(10) ** -6):
            raise CertificateError("interior solution too close to the sphere to be a robust fixture")
    if prob.loss.name == "mle-rr" and not prob.convex_on_feasible_set():
        notes.append("global optimality of this KKT point NOT implied by convexity")
    return Result(status="converged", theta=theta, objective=prob.F_theta(theta), on_boundary=boundary,
                  multiplier=mu, kkt_residual=res, min_eig=lmin, notes=notes, u=u)


# ----------------------------------------------------------------------------------------------
# cheap double-precision multistart (independent code path) for nonconvex mle-rr
# ----------------------------------------------------------------------------------------------

def multistart_check(prob, theta_ref, starts=8, seed=1, iters=4000):
    """Projected gradient with backtracking from random feasible starts, in Python floats.
    Returns (max distance to theta_ref, min objective found - F(theta_ref))."""
    import random
    rng = random.Random(seed)
    d = prob.d
    X = [[float(v) for v in row] for row in prob.X]
    w = [float(v) for v in prob.w]
    W = float(prob.W)
    beta = float(prob.beta)
    b = [float(v) for v in prob.b]
    lo = prob.loss
    B = float(prob.B)

    def lossf(t, y):
        return float(lo.eval(mpf(t), y, 1)[0]), float(lo.eval(mpf(t), y, 1)[1])

    def fg(th):
        val = 0.0
        g = [beta * th[j] + b[j] for j in range(d)]
        for i in prob.active:
            t = sum(X[i][j] * th[j] for j in range(d))
            l0, l1 = lossf(t, prob.y[i])
            val += w[i] * l0
            for j in range(d):
                g[j] += w[i] * l1 * X[i][j]
        val += beta / 2 * sum(v * v for v in th) + sum(b[j] * th[j] for j in range(d))
        return val / W, [gj / W for gj in g]

    def proj(v):
        if prob.constraint == "theta-b":
            mbar = sum(v) / d
            v = [vj - mbar for vj in v]
        nv = math.sqrt(sum(vj * vj for vj in v))
        if nv > B:
            v = [vj * B / nv for vj in v]
        return v

    ref = [float(v) for v in theta_ref]
    fref = float(prob.F_theta(theta_ref))
    worst_dist, best_gap = 0.0, float("inf")
    for s in range(starts):
        th = proj([rng.gauss(0, 1) * B for _ in range(d)])
        if s % 2 == 0:  # half the starts on the sphere
            nv = math.sqrt(sum(v * v for v in th)) or 1.0
            th = [v * B / nv for v in th]
        f, g = fg(th)
        step = 1.0
        for it in range(iters):
            while True:
                cand = proj([th[j] - step * g[j] for j in range(d)])
                fc, gc = fg(cand)
                diff = [cand[j] - th[j] for j in range(d)]
                if fc <= f + sum(g[j] * diff[j] for j in range(d)) + sum(v * v for v in diff) / (2 * step):
                    break
                step /= 2
            moved = math.sqrt(sum(v * v for v in diff))
            th, f, g = cand, fc, gc
            step *= 1.5
            if moved < 1e-13:
                break
        dist = math.sqrt(sum((th[j] - ref[j]) ** 2 for j in range(d)))
        worst_dist = max(worst_dist, dist)
        best_gap = min(best_gap, f - fref)
    return worst_dist, best_gap
