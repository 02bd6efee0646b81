"""What the core once knew about named libraries is now each library's own (its Library record, its Backend), and
the core still acts on it: ua.nn on NumPy stays silent on NaN and infinities, a native failure gets the library's
own typed reading, a mesh-placed leader names its own fix, and the tracer facts the core reads below the registry
(the dtype-name caches, the precision scope's tracing flag, the early registration) come from the records."""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import unarray as ua
from unarray import _backends, _dispatch, _dtypes, _nn_args, _precision
from unarray._devices import Device, MeshDevice

_SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf, 0.0])


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-1e3, 1e3, allow_nan=False).filter(lambda v: v != 0), min_size=3, max_size=8),
       special=_SPECIAL, where=st.integers(0, 7))
def test_nn_on_numpy_gives_no_floating_point_warning(values: list[float], special: float, where: int) -> None:
    # NaN and infinities in, NaN or infinities out is ua.nn's stated result: NumPy's warnings are silenced
    # (Backend.quiet), and the call leaves the caller's own error state as it was.
    x = np.asarray(values, dtype=np.float32)
    x[where % len(values)] = special
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = [ua.nn.softmax(x), ua.nn.log_softmax(x), ua.nn.logsumexp(x), ua.nn.layer_norm(x),
                ua.nn.rms_norm(x), ua.nn.gelu(x), ua.nn.silu(x)]
    assert np.geterr() == before
    assert all(isinstance(o, np.ndarray | np.generic) for o in outs)
    with pytest.raises(RuntimeWarning), warnings.catch_warnings(), np.errstate(all="warn"):
        warnings.simplefilter("error")
        np.exp(np.float32(1e3))  # (the check above can fail: NumPy warns here outside ua.nn)


def _backend(name: str) -> Any:
    pytest.importorskip(name)
    return _backends.get(name)


def test_a_native_failure_gets_its_librarys_own_reading() -> None:
    jax = _backend("jax")
    e = _dispatch.fail("add", jax, ValueError("Received incompatible devices for jitted computation"))
    assert isinstance(e, ua.DeviceMismatchError) and "one mesh" in str(e) and e.backend == "jax"
    dask = _backend("dask")
    e = _dispatch.fail("matmul", dask, ValueError("shape (nan, 3) is unknown"))
    assert isinstance(e, ua.ShapeError) and "compute_chunk_sizes" in str(e)
    # The same words from another library get the generic reading.
    e = _dispatch.fail("add", _backends.get("numpy"), ValueError("Received incompatible devices"))
    assert isinstance(e, ua.DeviceMismatchError) and "one mesh" not in str(e)
    e = _dispatch.fail("matmul", _backends.get("numpy"), ValueError("nan shape"))
    assert not isinstance(e, ua.ShapeError) or "compute_chunk_sizes" not in str(e)


def test_a_mesh_placed_leader_names_its_own_fix() -> None:
    torch = _backend("torch")
    mesh = MeshDevice("cpu", 0, (2,), ("dp",), ("Replicate()",))
    lead = type("Lead", (), {"name": "torch", "mesh_fix": torch.mesh_fix, "device_of": lambda self, x: mesh})()
    other = type("Other", (), {"name": "numpy", "device_of": lambda self, x: Device("cpu")})()
    with pytest.raises(ua.DeviceMismatchError, match="distribute_tensor"):
        _dispatch.same_device("add", lead, None, other, None)
    plain = type("Lead", (), {"name": "x", "mesh_fix": "", "device_of": lambda self, x: mesh})()
    with pytest.raises(ua.DeviceMismatchError, match=r"ua\.to\(x, 'x'"):
        _dispatch.same_device("add", plain, None, other, None)


def _resolve(dotted: str) -> Any:
    top, *path = dotted.split(".")
    found: Any = importlib.import_module(top)
    for name in path:
        found = getattr(found, name)
    return found


@pytest.mark.parametrize("name", _backends.NAMES)
def test_the_core_reads_each_librarys_tracer_facts(name: str) -> None:
    lib = _backends.LIBRARIES[name]
    assert (lib.tracing_flag in _precision._TRACING_FLAGS) == bool(lib.tracing_flag)
    for root in lib.roots:
        assert (root in _dtypes._OWN) == bool(lib.tracer_module)
    if (lib.tracing_flag or lib.early_types) and importlib.util.find_spec(lib.roots[0]) is not None:
        # Each dotted path names what the library has (a misspelt path would silently do nothing).
        if lib.tracing_flag:
            assert callable(_resolve(lib.tracing_flag))
        for path in lib.early_types:
            assert isinstance(_resolve(f"{lib.roots[0]}.{path}"), type)


def test_hints_name_a_librarys_arguments_from_its_record() -> None:
    owners = [n for n, lib in _backends.LIBRARIES.items() if "dim" in lib.api_names]
    assert owners and _nn_args.their("dim") == f"{owners[0]}'s dim"
    assert _nn_args.their("no_such_argument") == "another library's no_such_argument"
    with pytest.raises(ua.ArgumentTypeError, match=_nn_args.their("dim")):
        ua.nn.softmax(np.ones(3, dtype=np.float32), 0)  # type: ignore[call-arg]
