"""The type stub of the extension module states what the module has: every function with its
parameter names in order, and nothing else."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import privpref
from privpref import _native

STUB = Path(privpref.__file__).with_name("_native.pyi")


def _stub_functions():
    tree = ast.parse(STUB.read_text())
    return {
        node.name: [a.arg for a in node.args.args]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def test_the_stub_is_installed_with_the_package():
    assert STUB.exists() and STUB.with_name("py.typed").exists()


def test_every_native_function_is_in_the_stub_with_its_parameters():
    stub = _stub_functions()
    native = {
        name: obj
        for name, obj in vars(_native).items()
        if callable(obj) and not isinstance(obj, type) and not name.startswith("__")
    }
    assert set(stub) == set(native), (set(stub) ^ set(native))
    for name, fn in native.items():
        assert list(inspect.signature(fn).parameters) == stub[name], name


def test_the_public_api_is_exported():
    for name in privpref.__all__:
        assert hasattr(privpref, name), name
    for name in ("fit", "fit_kwise", "fit_dpo", "objective_perturbation", "private_mle", "private_covariance",
                 "rdp_epsilon", "calibrate_noise", "pessimistic_policy", "greedy_policy", "label_private_sgd",
                 "multi_stage", "fit_user_rr", "user_dpsgd", "aup_rlhf", "RandomizedResponse", "KaryRR", "RRTopK",
                 "RRWithPrior", "UserLevelRR", "PrivatizedLabels"):
        assert name in privpref.__all__, name
        assert (getattr(privpref, name).__doc__ or "").strip(), f"{name} has no docstring"
