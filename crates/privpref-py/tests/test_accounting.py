"""The RDP accountant from Python: the reference values of docs/cli.md (which are those of
Google's `dp_accounting`), the CLI's `account` / `calibrate` JSON bit for bit, the calibration
never undershooting, and input validation."""

import dataclasses
import json
import math
import os
import pathlib
import subprocess

import pytest

import privpref
from privpref.errors import DtypeError, ParameterError, PrivacyError, PrivprefError

REPO = pathlib.Path(__file__).resolve().parents[3]
CLI = pathlib.Path(os.environ.get("PRIVPREF_CLI", REPO / "target" / "release" / "privpref"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"the CLI is not built ({CLI})")


def cli(*args):
    out = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_reference_values():
    # add/remove, δ = 1e-5, default orders (docs/cli.md).
    a = privpref.rdp_epsilon(0.01, 1.0, 1000, 1e-5, neighbours="add-remove")
    assert isinstance(a, privpref.Accounting)
    assert round(a.epsilon, 5) == 2.10137 and a.order == 7.8
    b = privpref.rdp_epsilon(0.1, 2.0, 100, 1e-5, neighbours="add-remove")
    assert round(b.epsilon, 5) == 2.58057 and b.order == 7.6
    # With the integer orders 2..256: the value dp_accounting reports.
    for orders in ("integers:256", range(2, 257), [float(k) for k in range(2, 257)]):
        c = privpref.rdp_epsilon(0.1, 2.0, 100, 1e-5, neighbours="add-remove", orders=orders)
        assert round(c.epsilon, 6) == 2.586652
        assert c.num_orders == 255
    assert c.orders == "list"
    assert b.orders == "default" and b.num_orders == 156
    assert (b.neighbours, b.neighbours_proven, b.conversion) == ("add-remove", True, "improved")
    assert (b.sampling_rate, b.noise_multiplier, b.steps, b.delta) == (0.1, 2.0, 100, 1e-5)
    assert b.target_epsilon is None


def test_improved_conversion_closed_form():
    # ε = max(0, R + ln((α−1)/α) − (ln δ + ln α)/(α−1)) at the reported order and RDP, and the
    # classic conversion R + ln(1/δ)/(α−1) is never below it.
    a = privpref.rdp_epsilon(0.05, 1.5, 500, 1e-6)
    al, r = a.order, a.rdp_at_order
    want = max(0.0, r + math.log((al - 1) / al) - (math.log(1e-6) + math.log(al)) / (al - 1))
    assert math.isclose(a.epsilon, want, rel_tol=1e-12)
    c = privpref.rdp_epsilon(0.05, 1.5, 500, 1e-6, conversion="classic")
    assert math.isclose(c.epsilon, c.rdp_at_order + math.log(1e6) / (c.order - 1), rel_tol=1e-12)
    assert c.epsilon >= a.epsilon and c.conversion == "classic"
    # The default relation is replace (user-level label DP): costlier than add/remove.
    assert a.neighbours == "replace" and a.neighbours_proven
    ar = privpref.rdp_epsilon(0.05, 1.5, 500, 1e-6, neighbours="add-remove")
    assert a.epsilon > ar.epsilon
    # Full batch (q = 1), add/remove: the Gaussian mechanism's RDP T·α/(2σ²).
    g = privpref.rdp_epsilon(1.0, 3.0, 10, 1e-5, neighbours="add-remove", orders=[2.0, 5.5, 30.0])
    assert math.isclose(g.rdp_at_order, 10 * g.order / (2 * 9.0), rel_tol=1e-12)


@pytest.mark.parametrize("neighbours", ["replace", "add-remove"])
def test_calibrate_meets_the_target(neighbours):
    c = privpref.calibrate_noise(0.01, 1000, 1e-5, 1.0, neighbours=neighbours)
    assert c.target_epsilon == 1.0 and c.epsilon <= 1.0
    # Its ε is the accountant's at the calibrated σ...
    a = privpref.rdp_epsilon(0.01, c.noise_multiplier, 1000, 1e-5, neighbours=neighbours)
    assert (a.epsilon, a.order, a.rdp_at_order) == (c.epsilon, c.order, c.rdp_at_order)
    # ...and a noise multiplier smaller by 1e-9 (relative) no longer meets it: the smallest.
    b = privpref.rdp_epsilon(0.01, c.noise_multiplier * (1 - 1e-9), 1000, 1e-5, neighbours=neighbours)
    assert b.epsilon > 1.0 * (1 - 1e-10)


@needs_cli
def test_matches_cli():
    v = cli("account", "--sampling-rate", 0.1, "--noise-multiplier", 2, "--steps", 100, "--delta", 1e-5,
            "--neighbours", "add-remove", "--orders", "integers:256")
    a = privpref.rdp_epsilon(0.1, 2.0, 100, 1e-5, neighbours="add-remove", orders="integers:256")
    for f in dataclasses.fields(a):
        if f.name != "target_epsilon":
            assert getattr(a, f.name) == v[f.name], f.name
    v = cli("calibrate", "--sampling-rate", 0.02, "--steps", 300, "--delta", 1e-6, "--epsilon", 2,
            "--conversion", "classic", "--orders", "2,4.5,8,16,32")
    c = privpref.calibrate_noise(0.02, 300, 1e-6, 2.0, conversion="classic", orders=[2, 4.5, 8, 16, 32])
    for k in ("epsilon", "noise_multiplier", "order", "target_epsilon", "delta", "neighbours", "conversion"):
        assert getattr(c, k) == v[k], k
    assert c.orders == v["orders"] == "list"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: privpref.rdp_epsilon(0.0, 1.0, 10, 1e-5), "sampling-rate"),
        (lambda: privpref.rdp_epsilon(1.5, 1.0, 10, 1e-5), "sampling-rate"),
        (lambda: privpref.rdp_epsilon(0.1, 0.0, 10, 1e-5), "noise-multiplier"),
        (lambda: privpref.rdp_epsilon(0.1, float("nan"), 10, 1e-5), "noise-multiplier"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 0, 1e-5), "steps"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, -3, 1e-5), "steps"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 0.0), "delta"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1.0), "delta"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, neighbours="swap"), "neighbours"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, conversion="fast"), "conversion"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders="integers:1"), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders="integers:2000"), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders="many"), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders=[0.5, 2.0]), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders=[]), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders=["a"]), "orders"),
        (lambda: privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, orders=[2.0] * 1025), "orders"),
        (lambda: privpref.calibrate_noise(0.1, 10, 1e-5, 0.0), "eps"),
        (lambda: privpref.calibrate_noise(0.1, 10, 1e-5, -1.0), "eps"),
        (lambda: privpref.calibrate_noise(0.1, 10, 2.0, 1.0), "delta"),
        (lambda: privpref.calibrate_noise(0.0, 10, 1e-5, 1.0), "sampling-rate"),
    ],
)
def test_bad_parameters(call, name):
    with pytest.raises(ParameterError) as e:
        call()
    assert e.value.name == name, str(e.value)


def test_other_errors():
    with pytest.raises(DtypeError):
        privpref.rdp_epsilon(0.1, 1.0, 10.5, 1e-5)
    # A target no noise multiplier up to 1e8 certifies on a tiny grid is a PrivacyError.
    with pytest.raises(PrivacyError):
        privpref.calibrate_noise(1.0, 10, 1e-5, 1e-9, orders=[2.0])
    with pytest.raises(PrivprefError):
        privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, neighbours="swap")


def test_result_is_frozen_and_readable():
    a = privpref.rdp_epsilon(0.01, 1.0, 1000, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.epsilon = 0.0
    assert "Accounting(epsilon=" in repr(a)


# ------------------------------------------------------------------------------------------------
# The privacy-loss-distribution accountant (accountant="pld").

def _pld_reference():
    return json.loads((REPO / "tests" / "data" / "pld_reference.json").read_text())["points"]


def test_pld_against_dp_accounting_and_never_looser_than_rdp():
    # The reference points of tests/data/pld_reference.json (dp_accounting 0.6.0) with T ≤ 1000:
    # ours within 1e-3 of theirs and never below it by more than rounding (pessimistic), and
    # never above the RDP accountant's ε for the same pair (replace-numeric is RDP's antipodal
    # pair, the one PLD's replace uses).
    points = [p for p in _pld_reference() if p["steps"] <= 1000]
    assert len(points) >= 8
    for p in points:
        a = privpref.rdp_epsilon(p["q"], p["sigma"], p["steps"], p["delta"], neighbours=p["neighbours"],
                                 accountant="pld")
        assert a.accounting == "pld"
        assert abs(a.epsilon - p["epsilon"]) < 1e-3, (p, a.epsilon)
        assert a.epsilon >= p["epsilon"] - 1e-9, (p, a.epsilon)
        rel = "replace-numeric" if p["neighbours"] == "replace" else p["neighbours"]
        r = privpref.rdp_epsilon(p["q"], p["sigma"], p["steps"], p["delta"], neighbours=rel)
        assert r.accounting == "rdp" and a.epsilon <= r.epsilon, (p, a.epsilon, r.epsilon)
        # The RDP-only fields are empty under PLD; add-remove is proven, replace is not.
        assert (a.order, a.rdp_at_order, a.conversion, a.orders, a.num_orders) == (None,) * 5
        assert a.neighbours_proven == (p["neighbours"] == "add-remove")


def test_pld_calibration_buys_less_noise():
    # User-wise DP-SGD at ε = 3 (q = 0.05, T = 400, δ = 1e-5, add/remove): the PLD σ meets the
    # target, is below RDP's, and a σ smaller by 1e-6 no longer meets it (the smallest, to the
    # calibration's tolerance).
    r = privpref.calibrate_noise(0.05, 400, 1e-5, 3.0, neighbours="add-remove")
    p = privpref.calibrate_noise(0.05, 400, 1e-5, 3.0, neighbours="add-remove", accountant="pld")
    assert p.accounting == "pld" and p.target_epsilon == 3.0 and p.epsilon <= 3.0
    assert p.noise_multiplier < 0.97 * r.noise_multiplier, (p.noise_multiplier, r.noise_multiplier)
    e = privpref.rdp_epsilon(0.05, p.noise_multiplier, 400, 1e-5, neighbours="add-remove", accountant="pld")
    assert e.epsilon <= 3.0
    e = privpref.rdp_epsilon(0.05, p.noise_multiplier * (1 - 1e-6), 400, 1e-5, neighbours="add-remove",
                             accountant="pld")
    assert e.epsilon > 3.0 * (1 - 1e-6)
    with pytest.raises(ParameterError) as err:
        privpref.rdp_epsilon(0.1, 1.0, 10, 1e-5, accountant="prv")
    assert err.value.name == "accountant"


@needs_cli
def test_pld_matches_cli():
    v = cli("account", "--sampling-rate", 0.1, "--noise-multiplier", 2, "--steps", 100, "--delta", 1e-5,
            "--neighbours", "add-remove", "--accountant", "pld")
    a = privpref.rdp_epsilon(0.1, 2.0, 100, 1e-5, neighbours="add-remove", accountant="pld")
    assert (a.epsilon, a.accounting, a.neighbours_proven) == (v["epsilon"], v["accounting"], v["neighbours_proven"])
    v = cli("calibrate", "--sampling-rate", 0.05, "--steps", 400, "--delta", 1e-5, "--epsilon", 3,
            "--accountant", "pld")
    c = privpref.calibrate_noise(0.05, 400, 1e-5, 3.0, accountant="pld")
    assert (c.epsilon, c.noise_multiplier) == (v["epsilon"], v["noise_multiplier"])
