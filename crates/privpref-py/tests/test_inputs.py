"""Arrays without copies, every input-validation class, the GIL and Ctrl-C."""

from __future__ import annotations

import _thread
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import privpref
from privpref import errors
from conftest import btl


# --- zero copy -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_c_contiguous_features_are_read_in_place(dtype):
    x, _, _ = btl(1000, 7, seed=1)
    x = x.astype(dtype)
    passed = privpref._arrays.features(x)
    assert passed is x
    # The engine's view starts at the array's own buffer.
    assert privpref._native._feature_address(passed) == x.ctypes.data


@pytest.mark.parametrize(
    "make",
    [np.asfortranarray, lambda a: a[::2], lambda a: a.astype(">f8"), lambda a: a.astype(np.float16)],
    ids=["fortran", "strided", "byteswapped", "float16"],
)
def test_other_layouts_are_copied_once(make):
    x, _, _ = btl(1000, 7, seed=2)
    v = make(x)
    passed = privpref._arrays.features(v)
    assert passed is not v and passed.flags.c_contiguous and passed.dtype in (np.float64, np.float32)
    np.testing.assert_array_equal(passed, v.astype(passed.dtype))


def test_a_fit_does_not_duplicate_the_feature_buffer():
    """Peak resident memory of a fit on a 160 MB matrix stays far below a second copy."""
    code = textwrap.dedent(
        """
        import resource, numpy as np, privpref
        n, d = 200_000, 100
        rng = np.random.default_rng(0)
        x = rng.standard_normal((n, d))
        y = (rng.random(n) < 0.5).astype(np.uint8)
        privpref.fit(x[:1000], y[:1000])  # load the engine, start the pool
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        m = privpref.fit(x, y, solver="lbfgs")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((after - before) * 1024 / x.nbytes)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    growth = float(out.stdout.strip())
    assert growth < 0.1, f"peak RSS grew by {growth:.2f} × the feature matrix during the fit"


# --- validation: every class -------------------------------------------------------------------


def _data():
    x, y, _ = btl(200, 3, seed=3)
    return x, y


def test_feature_errors_name_the_entry():
    x, y = _data()
    for bad, kind in ((np.nan, "NaN"), (np.inf, "infinite"), (-np.inf, "infinite")):
        xb = x.copy()
        xb[17, 2] = bad
        with pytest.raises(errors.DataError) as e:
            privpref.fit(xb, y)
        assert (e.value.input, e.value.row, e.value.column) == ("x", 17, 2)
        assert kind in str(e.value) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("labels,row", [([0, 1, 2], 2), ([0, -1, 1], 1), ([0, 1, 300], 2)])
def test_label_errors_name_the_row(labels, row):
    x, y = _data()
    y = y.astype(np.int64)
    y[: len(labels)] = labels
    with pytest.raises(errors.DataError) as e:
        privpref.fit(x, y)
    assert (e.value.input, e.value.row) == ("y", row)


def test_weight_errors():
    x, y = _data()
    for bad in (-1.0, np.nan, np.inf):
        w = np.ones(200)
        w[5] = bad
        with pytest.raises(errors.DataError) as e:
            privpref.fit(x, y, weights=w)
        assert (e.value.input, e.value.row) == ("weights", 5)


def test_dtype_errors():
    x, y = _data()
    with pytest.raises(errors.DtypeError):
        privpref.fit(x, y.astype(np.float64))
    with pytest.raises(errors.DtypeError):
        privpref.fit(x.astype(np.complex128), y)
    with pytest.raises(errors.DtypeError):
        privpref.fit(np.array([["a", "b"]]), [0])
    assert issubclass(errors.DtypeError, TypeError)


def test_shape_errors():
    x, y = _data()
    for bad_x, bad_y in ((x[:, 0], y), (x[None], y), (x, y[:-1]), (x, y[:, None]), (x[:0], y[:0])):
        with pytest.raises(errors.ShapeError):
            privpref.fit(bad_x, bad_y)
    with pytest.raises(errors.ShapeError):
        privpref.fit(x, y, weights=np.ones(3))
    with pytest.raises(errors.ShapeError):
        privpref.fit(x, y, theta0=np.zeros(4))


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(loss="nope"), "loss"),
        (dict(loss="debiased-rr"), "eps"),
        (dict(loss="debiased-rr", eps=-1.0), "eps"),
        (dict(loss="mle", eps=1.0), "eps"),
        (dict(constraint="theta-b"), "radius"),
        (dict(constraint="ball", radius=-2.0), "radius"),
        (dict(constraint="none", radius=2.0), "radius"),
        (dict(constraint="cube"), "constraint"),
        (dict(solver="bfgs"), "solver"),
        (dict(solver="newton", memory=5), "memory"),
        (dict(solver="lbfgs", batch=8), "batch"),
        (dict(solver="sgd", step="const:-1"), "step"),
        (dict(solver="sgd", average="median"), "average"),
        (dict(tol=-1.0), "tol"),
        (dict(max_iter=0), "max-iter"),
        (dict(ridge=-1.0), "ridge"),
        (dict(ridge=np.nan), "ridge"),
        (dict(threads=0), "threads"),
        (dict(threads=10_000), "threads"),
    ],
)
def test_parameter_errors_name_the_parameter(kwargs, name):
    x, y = _data()
    with pytest.raises(errors.ParameterError) as e:
        privpref.fit(x, y, **kwargs)
    assert e.value.name == name, str(e.value)
    assert isinstance(e.value, ValueError)


def test_mechanism_parameter_errors():
    y = np.array([0, 1, 1, 0])
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(errors.ParameterError):
            privpref.RandomizedResponse(bad).privatize(y)
    with pytest.raises(errors.ParameterError):
        privpref.RandomizedResponse(1.0).privatize(y, seed=-1)
    with pytest.raises(errors.DataError):
        privpref.RandomizedResponse(1.0).privatize([0, 2])
    with pytest.raises(errors.ParameterError):
        privpref.KaryRR(1.0, 1).privatize([0, 0])
    with pytest.raises((errors.ShapeError, errors.ParameterError)):
        privpref.UserLevelRR(1.0).privatize(y, counts=[2, 1])


def test_not_converged_is_a_runtime_error_on_request():
    x, y = _data()
    m = privpref.fit(x, y, solver="newton", max_iter=1)
    assert not m.converged and m.termination == "max-iterations"
    with pytest.raises(errors.NotConvergedError) as e:
        m.certified()
    assert isinstance(e.value, RuntimeError) and e.value.termination == "max-iterations"


def test_every_error_class_has_the_documented_base():
    for name, base in {
        "DataError": ValueError,
        "ShapeError": ValueError,
        "ParameterError": ValueError,
        "ProvenanceError": ValueError,
        "DtypeError": TypeError,
        "NotConvergedError": RuntimeError,
        "GuaranteeRefusedError": RuntimeError,
        "NumericalError": RuntimeError,
        "PrivacyError": RuntimeError,
        "FileError": OSError,
    }.items():
        cls = getattr(errors, name)
        assert issubclass(cls, base) and issubclass(cls, errors.PrivprefError), name


# --- the GIL and Ctrl-C -------------------------------------------------------------------------


def _long_fit_args():
    # Mini-batch SGD over many epochs: seconds of work, checked for interrupts every 4096 steps.
    x, y, _ = btl(50_000, 20, seed=4)
    return (x, y), dict(solver="sgd", constraint="ball", radius=5.0, step="const:0.01", epochs=400, seed=0)


def test_the_gil_is_released_during_a_fit():
    args, kwargs = _long_fit_args()
    kwargs["epochs"] = 40
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    time.sleep(0.01)
    before = len(ticks)
    start = time.perf_counter()
    privpref.fit(*args, **kwargs)
    elapsed = time.perf_counter() - start
    during = len(ticks) - before
    stop.set()
    t.join()
    # A thread blocked on the GIL for the whole fit would not tick at all.
    assert elapsed > 0.05 and during >= 10, (elapsed, during)


def test_ctrl_c_interrupts_a_long_fit_cleanly():
    args, kwargs = _long_fit_args()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        privpref.fit(*args, **kwargs)
    elapsed = time.perf_counter() - start
    timer.join()
    assert elapsed < 3.0, f"the fit took {elapsed:.2f} s to stop"
    # The engine is usable afterwards and gives the usual answer.
    x, y = args
    assert privpref.fit(x[:1000], y[:1000]).converged


def test_ctrl_c_in_a_subprocess_exits_with_keyboard_interrupt():
    code = textwrap.dedent(
        """
        import signal, threading, os, numpy as np, privpref
        signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored
        rng = np.random.default_rng(0)
        x = rng.standard_normal((50_000, 20)); y = (rng.random(50_000) < 0.5).astype(np.uint8)
        threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            privpref.fit(x, y, solver="sgd", constraint="ball", radius=5.0, step="const:0.01", epochs=2000, seed=0)
        except KeyboardInterrupt:
            print("interrupted")
        """
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "interrupted", out.stderr
    assert time.perf_counter() - start < 20


# --- integer options out of the native range -------------------------------------------------


@pytest.mark.parametrize(
    "name, value",
    [
        ("threads", -1),
        ("threads", 0),
        ("threads", 257),
        ("threads", 10**30),
        ("max_iter", -1),
        ("max_iter", 10**30),
        ("memory", -1),
        ("polish_iters", 2**64),
        ("seed", -1),
        ("seed", 2**64),
    ],
)
def test_an_integer_option_out_of_range_is_a_parameter_error_naming_it(name, value):
    # Without the check, PyO3 raised a bare OverflowError naming no parameter.
    x, y, _ = btl(200, 3, seed=1)
    solver = "lbfgs" if name in ("memory", "polish_iters") else "newton"
    with pytest.raises(errors.ParameterError) as e:
        privpref.fit(x, y, loss="mle", solver=solver, **{name: value})
    assert e.value.name == name
    assert f"`{name}`" in str(e.value) and str(value) in str(e.value)
    assert not isinstance(e.value, OverflowError)


@pytest.mark.parametrize("kw", [{"threads": -1}, {"max_iter": 10**30}, {"seed": 2**70}, {"horizon": -2}])
def test_central_integer_options_out_of_range_are_parameter_errors(kw):
    x, y, _ = btl(200, 3, seed=1)
    with pytest.raises(errors.ParameterError) as e:
        privpref.objective_perturbation(x, y, eps=1.0, delta=1e-6, feature_bound=10.0, radius=2.0, **kw)
    assert e.value.name == next(iter(kw))


def test_other_integer_options_out_of_range_are_parameter_errors():
    x, y, _ = btl(200, 3, seed=1)
    with pytest.raises(errors.ParameterError) as e:
        privpref.RandomizedResponse(1.0).privatize(y, seed=-1)
    assert e.value.name == "seed"
    with pytest.raises(errors.ParameterError) as e:
        privpref.label_private_sgd(x, y, mechanism="rr", eps=1.0, threads=10**30)
    assert e.value.name == "threads"
    with pytest.raises(errors.ParameterError) as e:
        privpref.rdp_epsilon(sampling_rate=0.01, noise_multiplier=1.0, steps=10**30, delta=1e-5)
    assert e.value.name == "steps"
