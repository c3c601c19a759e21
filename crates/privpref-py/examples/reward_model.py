"""A reward model on fixed response embeddings, trained from preference labels under privacy.

    python crates/privpref-py/examples/reward_model.py --out-dir bench-results

The data are SIMULATED (no download; nothing here is real text): a practitioner's set-up with a
known ground truth, so that the estimation error ‖θ̂ − θ*‖ can be reported next to accuracy.

* Embeddings. d = 32, unit norm (as sentence embeddings usually are). A prompt p has a centre
  μ_p ~ N(0, 0.5² I_d); a response to it is ``e = normalise(μ_p + A z + 0.6 ξ)`` with
  z ~ N(0, I_4) (a rank-4 "semantic" subspace, A = 1.5 × an orthonormal d × 4 basis) and
  ξ ~ N(0, I_d) (isotropic noise).
* Rewards. A hidden linear reward ``r(e) = θ*ᵀe`` with θ* in the span of A and ‖θ*‖ = 5.
* Pairs. Two responses to the same prompt (the prompt's centre cancels in part in
  ``x = e¹ − e⁰``; ‖x‖ ≤ 2 because the embeddings have unit norm); the label is 1 ("first
  response preferred") with the Bradley–Terry–Luce probability ``σ(xᵀθ*)``.

For each ε the clear training labels are released with randomized response at ε (ε-label-LDP
per comparison; Chowdhury, Zhou & Natarajan (2024)) and the reward model is fitted with
``privpref.sklearn.LabelDPRewardModel`` (the debiased RR loss over the ball ‖θ‖ ≤ B = 10, a
bound known up to a factor 2). For comparison: the non-private MLE on the clear labels, the
naive MLE that treats the randomised labels as clean, and — when this build has it — central
(ε, δ = 1e-6)-DP by objective perturbation (``CentralDPRewardModel``, feature bound L = 1, the
same ball), where a trusted curator sees the clear labels. Metrics on 20 000 held-out pairs:
preference accuracy and log-loss against fresh BTL labels (θ* is the ceiling), agreement
with the non-private model's predictions, and ‖θ̂ − θ*‖; mean ± standard error over seeded
repetitions (new data and new noise in each). The noise is seeded so the numbers are
reproducible — a simulation; on real labels leave ``random_state=None`` (the CSPRNG).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np

import privpref
from privpref.sklearn import CentralDPRewardModel, LabelDPRewardModel

D, RANK, NORM_THETA, RADIUS = 32, 4, 5.0, 10.0
PROMPT_SCALE, SUBSPACE_SCALE, NOISE_SCALE = 0.5, 1.5, 0.6
EPS = (0.1, 0.5, 1.0, 2.0, 5.0)
DELTA = 1e-6


def world(seed: int):
    """The fixed embedding geometry (A) and hidden reward θ* of repetition ``seed``."""
    rng = np.random.default_rng([seed, 0])
    basis = np.linalg.qr(rng.normal(size=(D, RANK)))[0]
    a = SUBSPACE_SCALE * basis
    theta = basis @ rng.normal(size=RANK)
    return a, theta * (NORM_THETA / np.linalg.norm(theta))


def pairs(rng: np.random.Generator, n: int, a: np.ndarray, theta: np.ndarray):
    """``n`` response pairs, one prompt each: features ``x = e¹ − e⁰`` and BTL labels."""
    mu = PROMPT_SCALE * rng.normal(size=(n, D))

    def responses():
        e = mu + rng.normal(size=(n, RANK)) @ a.T + NOISE_SCALE * rng.normal(size=(n, D))
        return e / np.linalg.norm(e, axis=1, keepdims=True)

    x = responses() - responses()
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(x @ theta)))).astype(np.uint8)
    return x, y


def machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name")), "")
    except (OSError, subprocess.CalledProcessError):
        model = platform.processor()
    return f"{model or platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def run(reps: int, n_train: int, n_test: int):
    have_central = hasattr(privpref, "objective_perturbation")
    methods = ["debiased RR (label DP)", "naive MLE on RR labels"] + (
        ["objective perturbation (central DP)"] if have_central else []
    )
    # res[method][eps] = list of (accuracy, log-loss, agreement, error) per repetition.
    res = {m: {e: [] for e in EPS} for m in methods}
    base = {"non-private MLE": [], "θ* (Bayes)": []}
    for rep in range(reps):
        a, theta = world(rep)
        rng = np.random.default_rng([rep, 1])
        x, y = pairs(rng, n_train, a, theta)
        xt, yt = pairs(rng, n_test, a, theta)

        mle = LabelDPRewardModel(eps=None, radius=RADIUS).fit(x, y)
        pred0 = mle.predict(xt)

        def metrics(coef):
            t = xt @ coef
            pred = (t > 0).astype(np.uint8)
            log_loss = np.mean(np.logaddexp(0.0, -(2.0 * yt - 1.0) * t))  # −log σ((2y−1)t)
            return np.mean(pred == yt), log_loss, np.mean(pred == pred0), np.linalg.norm(coef - theta)

        base["non-private MLE"].append(metrics(mle.coef_[0]))
        base["θ* (Bayes)"].append(metrics(theta))
        for i, eps in enumerate(EPS):
            seed = 1000 * rep + i  # simulation-only noise, for reproducible numbers
            y_rr = privpref.RandomizedResponse(eps).privatize(y, seed=seed)
            dp = LabelDPRewardModel(eps=eps, radius=RADIUS).fit(x, y_rr)  # no second randomisation
            res[methods[0]][eps].append(metrics(dp.coef_[0]))
            naive = LabelDPRewardModel(eps=None, radius=RADIUS).fit(x, np.asarray(y_rr.labels))
            res[methods[1]][eps].append(metrics(naive.coef_[0]))
            if have_central:
                op = CentralDPRewardModel(
                    eps=eps, delta=DELTA, feature_bound=1.0, radius=RADIUS, random_state=seed
                ).fit(x, y)
                res[methods[2]][eps].append(metrics(op.coef_[0]))
    return methods, res, base


def mean_se(v):
    v = np.asarray(v)
    return v.mean(axis=0), v.std(axis=0, ddof=1) / np.sqrt(v.shape[0])


def _row(m, s) -> str:
    return f"{m[0]:.4f} ± {s[0]:.4f} | {m[1]:.4f} ± {s[1]:.4f} | {m[2]:.4f} ± {s[2]:.4f} | {m[3]:.3f} ± {s[3]:.3f}"


def table(methods, res, base) -> str:
    lines = [
        "| method | ε | held-out accuracy | held-out log-loss | agreement with non-private | ‖θ̂ − θ*‖ |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, v in base.items():
        m, s = mean_se(v)
        lines.append(f"| {name} | ∞ | {_row(m, s)} |")
    for meth in methods:
        for eps in EPS:
            m, s = mean_se(res[meth][eps])
            lines.append(f"| {meth} | {eps:g} | {_row(m, s)} |")
    return "\n".join(lines)


def figure(methods, res, base, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "privpref"  # deterministic ids in the svg
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    eps = np.array(EPS)
    titles = ["held-out preference accuracy", "held-out log-loss", "‖θ̂ − θ*‖"]
    for ax, label, col in zip(axes, titles, (0, 1, 3)):
        for meth, marker in zip(methods, "osd"):
            ms = [mean_se(res[meth][e]) for e in EPS]
            ax.errorbar(eps, [m[col] for m, _ in ms], yerr=[s[col] for _, s in ms], marker=marker, capsize=3, label=meth)
        for (name, v), ls in zip(base.items(), ["--", ":"]):
            m, _ = mean_se(v)
            ax.axhline(m[col], color="grey", ls=ls, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("ε")
        ax.set_title(label)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Reward model on simulated unit-norm embeddings (d = {D}, rank-{RANK} structure)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out-dir", default=None, help="write python_reward_model.{md,svg} here")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--n-train", type=int, default=5000)
    p.add_argument("--n-test", type=int, default=20000)
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    methods, res, base = run(args.reps, args.n_train, args.n_test)
    elapsed = time.perf_counter() - t0
    tab = table(methods, res, base)
    print(tab)
    print(f"\n{args.reps} repetitions, n_train = {args.n_train}, n_test = {args.n_test}, {elapsed:.1f} s")
    if "objective perturbation (central DP)" not in methods:
        print("(central DP omitted: this privpref build has no objective_perturbation)")

    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
        svg = os.path.join(args.out_dir, "python_reward_model.svg")
        figure(methods, res, base, svg)
        import sklearn

        cmd = "python crates/privpref-py/examples/reward_model.py --out-dir " + args.out_dir
        if (args.reps, args.n_train, args.n_test) != (10, 5000, 20000):
            cmd += f" --reps {args.reps} --n-train {args.n_train} --n-test {args.n_test}"
        md = f"""# Python example: a reward model under label DP (simulated embeddings)

Command: `{cmd}` ({elapsed:.1f} s)

Machine: {machine()}; Python {platform.python_version()}, numpy {np.__version__}, scikit-learn
{sklearn.__version__}, privpref {privpref.__version__}. Date: {datetime.date.today().isoformat()}.

Data (simulated, stated in the example's docstring): unit-norm response embeddings in d = {D}
with a rank-{RANK} structure plus isotropic noise, pairs of responses to the same prompt,
BTL labels from a hidden linear reward θ* (‖θ*‖ = {NORM_THETA:g}) in the structured subspace;
n = {args.n_train} training pairs, {args.n_test} held-out pairs, {args.reps} seeded repetitions
(new data and new noise each); mean ± standard error. Label DP: randomized response at ε, then
`LabelDPRewardModel` (debiased RR loss, ‖θ‖ ≤ {RADIUS:g}). Non-private and naive: the MLE on the same ball; naive treats the
randomised labels as clean. Central DP: `CentralDPRewardModel` (objective perturbation,
δ = {DELTA:g}, feature bound 1, same ball). Accuracy and log-loss (of the BTL probabilities
σ(xᵀθ̂), i.e. `predict_proba`) are against fresh BTL labels of the held-out pairs (θ*'s row is
the ceiling); agreement is with the non-private MLE's predictions.
The noise is seeded (simulation-only guarantees) so that the numbers are reproducible.

{tab}

Reading (this run; seeded, so it reproduces): the noise-aware fits matter for the *scale* of θ̂ —
the naive MLE's probabilities are shrunk toward ½ by the flips, so its held-out log-loss is
worse than the debiased fit's for 0.5 ≤ ε ≤ 2, while its ranking accuracy is the same for
ε ≥ 0.5. At small ε the debiased estimate's variance dominates (n = {args.n_train}): its
‖θ̂ − θ*‖ exceeds the naive one's (which is shrunk toward 0), and only the ball ‖θ‖ ≤ B bounds
it; at ε = 0.1 it goes to the boundary. Central DP (a trusted curator) is more accurate than local
label DP at the same ε, and its ridge β = √n/B regularises the poorly identified directions of
the embedding, so at large ε its ‖θ̂ − θ*‖ can fall below the MLE's.

![figure](python_reward_model.svg)
"""
        with open(os.path.join(args.out_dir, "python_reward_model.md"), "w") as f:
            f.write(md)
        print(f"wrote {svg} and python_reward_model.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
