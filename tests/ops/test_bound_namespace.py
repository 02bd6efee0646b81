"""``ua.array_namespace``: unarray's namespace bound to the caller's library and device; devices that carry
their library and equal the libraries' own; ``ua.asarray`` independent of what unarray has seen; and the
docs' small generic library (docs/generic_code.md) on every backend, eager and under ``ua.jit``, against
NumPy in float64."""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import BACKEND_PARAMS, compute_params, make_backend
from unarray import _lookup
from unarray._dtypes import canonical_name, promote_names

ROOT = Path(__file__).resolve().parents[2]
# The backend fixture's computing libraries on the devices the run asks for (UNARRAY_TEST_DEVICE=gpu: torch-cuda,
# CuPy and JAX on the GPU), plus dask (on the CPU it is the fixture's already).
LIBS = list(dict.fromkeys([*compute_params(os.environ.get("UNARRAY_TEST_DEVICE", "cpu")), "dask"]))


class Lib:
    """Make and read arrays of one library (those of the backend fixture, plus dask)."""

    def __init__(self, param: str) -> None:
        self.name = param.partition("-")[0]
        self.tb = None if param == "dask" else make_backend(param)

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        a = np.asarray(a, dtype=dtype)
        if self.name == "dask":
            import dask.array as da

            # Note: chunked along the first axis only, as dask's svd needs a tall-and-skinny matrix
            return da.from_array(a.copy(), chunks=(max(1, a.shape[0] // 2), *a.shape[1:]) if a.ndim else ())
        assert self.tb is not None
        return self.tb.asarray(a)

    def to_numpy(self, x: Any) -> np.ndarray:
        if self.name == "dask":
            return np.asarray(x.compute())
        assert self.tb is not None
        return self.tb.to_numpy(x)

    @property
    def float_dtype(self) -> Any:
        # (MLX's float64 erf is float32-accurate, a known failure of the backend fixture's nn tests)
        return np.float32 if self.name in ("jax", "tensorflow", "torch", "cupy", "mlx") else np.float64


@pytest.fixture(params=LIBS)
def lib(request: pytest.FixtureRequest) -> Lib:
    module = request.param.partition("-")[0]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")
    made = Lib(request.param)
    if made.name != "dask" and made.tb is None:
        pytest.skip(f"{request.param}: no such device here")
    return made


# -- the bound namespace ------------------------------------------------------------------------------------------


def test_bound_to_the_array_with_every_public_name(lib: Lib) -> None:
    x = lib.asarray([1.0, 2.0], lib.float_dtype)
    xp = ua.array_namespace(x)
    immutable = lib.name in ("jax", "tensorflow", "mlx")
    assert (xp.backend, xp.lazy, xp.immutable) == (lib.name, lib.name == "dask", immutable)
    assert xp.device == ua.device(x) and xp.device.library == lib.name
    assert xp is ua.array_namespace(x) is ua.array_namespace(x, 2.0, None) is ua.array_namespace(None, x)
    missing = [n for n in ua.__all__ if not hasattr(xp, n)]
    assert missing == [] and xp.__array_api_version__ == "2025.12"
    # Functions with array arguments are the module's own: no per-call cost over ua.f.
    assert xp.sum is ua.sum and xp.nn is ua.nn and xp.linalg is ua.linalg and xp.at is ua.at
    for made in (xp.zeros(2), xp.ones((1, 2)), xp.empty(1), xp.full(2, 3.0), xp.arange(3), xp.linspace(0, 1, 3),
                 xp.eye(2), xp.asarray([1, 2]), xp.fft.fftfreq(4), xp.zeros(2, device=xp.device)):
        assert ua.backend_of(made) == lib.name and ua.device(made) == xp.device


def test_explicit_backend_and_device_still_win(lib: Lib) -> None:
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    assert type(xp.zeros(2, backend="numpy")) is np.ndarray
    # A string names no library: the bound one, which refuses a device it cannot hold (CuPy has no CPU arrays).
    if lib.name != "cupy":  # JAX on a GPU host lists only its GPUs, yet holds CPU arrays too
        made = xp.zeros(2, device="cpu")
        assert ua.backend_of(made) == lib.name and ua.device(made).kind == "cpu"
    else:
        with pytest.raises(ua.DeviceMismatchError, match="cpu"):
            xp.zeros(2, device="cpu")
    assert type(xp.zeros(2, device=ua.device(np.zeros(1)))) is np.ndarray  # a device of NumPy's: NumPy


def test_bound_asarray_hands_other_arrays_to_the_bound_library(lib: Lib) -> None:
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    a = np.array([1.0, 2.0], dtype=lib.float_dtype)
    out = xp.asarray(a)
    assert ua.backend_of(out) == lib.name and ua.device(out) == xp.device
    np.testing.assert_array_equal(lib.to_numpy(out), a)
    assert type(ua.asarray(a)) is np.ndarray  # the module's asarray keeps an array in its library
    # Handed to the library by name only, a host array keeps its device where the library can hold it there,
    # else goes to the library's default device (CuPy's arrays live on GPUs only).
    moved = ua.asarray(a, backend=lib.name)
    assert ua.backend_of(moved) == lib.name
    np.testing.assert_array_equal(lib.to_numpy(moved), a)


def test_host_data_goes_to_the_bound_device_and_device_arrays_stay() -> None:
    # torch's meta device stands in for an accelerator on any machine: a namespace bound to it puts lists and
    # NumPy arrays there, and leaves a tensor of its own library where it is.
    torch = pytest.importorskip("torch")
    from unarray.bound import BoundNamespace

    meta = ua.Device("meta", 0, library="torch")
    xp = BoundNamespace(_lookup.backend_named("torch"), meta)
    for data in ([1.0, 2.0], np.array([1.0, 2.0]), np.float32(3.0), 2.5):
        out = xp.asarray(data)
        assert isinstance(out, torch.Tensor) and ua.device(out) == meta, type(data)
    assert ua.device(xp.asarray(torch.ones(2))) == ua.Device("cpu")
    assert ua.device(xp.asarray(np.ones(2), device="cpu")) == ua.Device("cpu")  # an explicit device still wins


def test_info_describes_the_bound_backend_and_device(lib: Lib) -> None:
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    info = xp.__array_namespace_info__()
    assert info.default_device() == xp.device
    with ua.use(lib.name):
        plain = ua.__array_namespace_info__().dtypes()
    # The same dtypes by name (the namespace's own objects: MLX's on MLX, compared with unarray's on the left).
    assert info.dtypes().keys() == plain.keys() and all(plain[n] == d for n, d in info.dtypes().items())
    assert not {"float16", "bfloat16"} & set(info.dtypes())
    assert info.default_dtypes()["real floating"] == xp.zeros(2).dtype


def test_the_namespaces_dtypes_are_the_librarys_own_as_generic_code_keys_them(lib: Lib) -> None:
    # Generic code keys dicts and sets by dtypes ({d: n for n, d in info.dtypes().items()}[x.dtype]): the namespace's
    # dtype must hash as the array's dtype does, on every backend, not only compare equal to it.
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    assert hash(xp.float32) == hash(xp.asarray([1.0], dtype=xp.float32).dtype)
    info = xp.__array_namespace_info__()
    by_dtype = {d: n for n, d in info.dtypes().items()}
    assert len(by_dtype) == len(info.dtypes())  # one object per name, none folded together
    for name, d in info.dtypes().items():
        assert d is getattr(xp, name) and getattr(ua, name) == d  # (unarray's on the left: MLX's own compares False)
        x = xp.asarray([1, 0], dtype=d)
        assert x.dtype == d and d == x.dtype and x.dtype in {d} and by_dtype[x.dtype] == name, name
        assert xp.zeros(2, dtype=d).dtype in {d} and xp.full(2, name == "bool" or 1, dtype=d).dtype in {d}, name
        assert xp.astype(xp.asarray([1, 0]), d).dtype in {d} and ua.astype(x, xp.bool).dtype in {xp.bool}, name
        assert xp.result_type(d, d) is d and xp.result_type(x, d) in {d} and ua.result_type(d, d) == d, name
        assert xp.can_cast(d, d) and xp.can_cast(d, xp.complex64) == ua.can_cast(getattr(ua, name), ua.complex64)
        kinds = [k for k in ("bool", "signed integer", "unsigned integer", "real floating", "complex floating")
                 if ua.isdtype(getattr(ua, name), k)]
        assert len(kinds) == 1 and xp.isdtype(d, kinds[0]) and xp.isdtype(x.dtype, d) and xp.isdtype(d, (xp.bool, d))
        assert not xp.isdtype(d, next(k for k in ("bool", "real floating") if k != kinds[0])), name
        if "integer" in kinds[0]:
            i = xp.iinfo(d)
            assert i.dtype is d and i.bits == 8 * np.dtype(name).itemsize and i.max == np.iinfo(name).max, name
        elif "floating" in kinds[0]:
            f = xp.finfo(d)
            real = {"complex64": "float32", "complex128": "float64"}.get(name, name)
            assert f.dtype is getattr(xp, real) and f.eps == float(np.finfo(real).eps), name
    for kind, d in info.default_dtypes().items():
        assert d is getattr(xp, str(canonical_name(d))), kind
    assert xp.zeros(2).dtype in set(info.default_dtypes().values())


def test_the_namespace_is_named_after_its_library(lib: Lib) -> None:
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    assert xp.__name__ == f"unarray.{lib.name}" and lib.name in repr(xp)
    assert type(ua.zeros(2, backend=xp)) is type(xp.zeros(2))  # the name a backend= reads
    if lib.name != "numpy":
        assert ua.array_namespace(np.ones(1)).__name__ != xp.__name__


@pytest.mark.parametrize("kind", ["tpu", "mps"])
def test_a_namespace_bound_to_a_device_without_float64_lists_none(kind: str) -> None:
    from unarray.bound import BoundNamespace

    xp = BoundNamespace(_lookup.backend_named("numpy"), ua.Device(kind, 0))
    names = set(xp.__array_namespace_info__().dtypes())
    assert not names & {"float64", "complex128"} and {"float32", "int64"} <= names
    assert xp.__array_namespace_info__().default_dtypes()["real floating"] == ua.float32


def test_mixed_inputs_follow_the_leader_rule() -> None:
    torch = pytest.importorskip("torch")
    da = pytest.importorskip("dask.array")
    t, n = torch.ones(2), np.ones(2)
    assert ua.array_namespace(t, n).backend == "torch" and ua.array_namespace(n, t).backend == "numpy"
    assert ua.array_namespace(n, da.ones(2)).backend == "dask"  # a lazy operand leads wherever it is


def test_no_array_gives_the_default_backend() -> None:
    assert ua.array_namespace() is ua.array_namespace(np.ones(1))  # one namespace per backend and device
    with ua.use("numpy", device="cpu"):
        assert ua.array_namespace() is ua.array_namespace(np.ones(1))
    pytest.importorskip("torch")
    with ua.use("torch"):
        xp = ua.array_namespace(1.0, None)
        assert xp.backend == "torch" and ua.backend_of(xp.zeros(1)) == "torch"


def test_api_version_and_deprecated_namespace() -> None:
    x = np.ones(1)
    assert ua.array_namespace(x, api_version="2023.12") is ua.array_namespace(x, api_version="2023.12")
    assert ua.array_namespace(x, api_version="2025.12") is ua.array_namespace(x)
    with pytest.raises(ua.ArgumentError, match="api_version"):
        ua.array_namespace(x, api_version="2020.01")
    with pytest.warns(DeprecationWarning, match="array_namespace"):
        assert ua.namespace(x) is ua.array_namespace(x)
    with pytest.raises(ua.UnknownArrayTypeError):
        ua.array_namespace([1.0])


def test_a_tensor_traced_by_torch_compile_binds_to_its_device() -> None:
    # torch.compile traces tensors that keep their device, where torch's creation functions would allocate on
    # the CPU: creation in code compiled by ua.jit lands beside the inputs (on a GPU, mixing devices fails).
    pytest.importorskip("torch")
    seen: list[Any] = []

    def f(x: Any, y: Any) -> Any:
        xp = ua.array_namespace(x, y)  # (two arrays: not the one-array lookup of arrays seen before)
        seen.append(xp.device)
        return x + xp.arange(x.shape[0], dtype=x.dtype, device=xp.device) * y

    for param in (p for p in BACKEND_PARAMS[os.environ.get("UNARRAY_TEST_DEVICE", "cpu")] if p.startswith("torch")):
        tb = make_backend(param)
        if tb is None:
            continue
        seen.clear()
        x = tb.asarray(np.ones(3, np.float32))
        with warnings.catch_warnings():
            warnings.simplefilter("error", ua.JitFallbackWarning)
            warnings.simplefilter("ignore", ua.JitGraphBreakWarning)
            out = ua.jit(f, torch={"backend": "eager"})(x, x)
        assert seen and all(d == ua.device(x) for d in seen), seen
        assert ua.device(out) == ua.device(x)
        np.testing.assert_array_equal(tb.to_numpy(out), [1.0, 2.0, 3.0])


def test_traced_arrays_bind_to_the_trace() -> None:
    jax = pytest.importorskip("jax")

    def f(x: Any) -> Any:
        xp = ua.array_namespace(x)
        assert xp.device is None and xp.backend == "jax"
        return x + xp.ones(x.shape, dtype=x.dtype)

    np.testing.assert_array_equal(np.asarray(jax.jit(f)(jax.numpy.zeros(3))), np.ones(3))


# -- devices ------------------------------------------------------------------------------------------------------


def test_devices_carry_their_library_and_equal_the_native_ones(lib: Lib) -> None:
    x = lib.asarray([1.0, 2.0], lib.float_dtype)
    d = ua.device(x)
    assert d.library == lib.name and ua.backend_of(ua.zeros(3, device=d)) == lib.name
    if hasattr(x, "device"):  # dask arrays have none
        assert d == x.device and x.device == d
    with ua.use(lib.name):
        info = ua.__array_namespace_info__()
    for dev in info.devices():  # as array-api-tests checks it: asarray on each listed device
        y = ua.asarray([1.0, 2.0], device=dev)
        assert ua.backend_of(y) == lib.name and ua.device(y) == dev
        if hasattr(y, "device"):
            assert y.device == dev


def test_device_equality_is_kind_and_index_only() -> None:
    assert ua.Device("cuda", 1, library="torch") == ua.Device("cuda", 1) != ua.Device("cuda", 0)
    assert hash(ua.Device("cpu", library="jax")) == hash(ua.Device("cpu"))
    assert ua.Device("cpu") == "cpu" and ua.Device("cuda", 0) == "/job:localhost/replica:0/task:0/device:GPU:0"
    assert ua.Device("cpu") != "not a device" and ua.Device("cpu") != 3
    sharded = ua.ShardedDevice("cpu", 0, mesh=(("x", 2),), spec=(("x",),), device_ids=(0, 1))
    assert sharded != ua.Device("cpu") and ua.Device("cpu") != sharded


def test_asarray_of_a_number_to_bool(lib: Lib) -> None:
    for v, want in ((1, True), (0, False), (2.5, True), (0.0, False)):
        out = ua.asarray(v, dtype=ua.bool, backend=lib.name)
        assert ua.bool == out.dtype and bool(lib.to_numpy(out)) is want


@given(data=st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_result_type_of_dtypes_is_what_the_namespaces_functions_return(lib: Lib, data: st.DataObject) -> None:
    # Generic code sizes its outputs by xp.result_type(dtypes): on every backend it must name the dtype xp's own
    # functions give arrays of those dtypes, mixed kinds included, and the module-level ua answers alike.
    xp = ua.array_namespace(lib.asarray([1.0], lib.float_dtype))
    names = sorted(xp.__array_namespace_info__().dtypes())
    a_name, b_name = data.draw(st.sampled_from(names), label="a"), data.draw(st.sampled_from(names), label="b")
    value = data.draw(st.sampled_from([1, 2, 3, 5]), label="value")  # held exactly by every dtype, bool as True
    a = xp.asarray([value, 1], dtype=getattr(xp, a_name))
    b = xp.asarray([1, value], dtype=getattr(xp, b_name))
    try:
        got = ua.add(a, b).dtype
    except ua.DTypeError:  # a pair the backend refuses for arrays is refused for dtypes too
        with pytest.raises(ua.DTypeError):
            xp.result_type(getattr(xp, a_name), getattr(xp, b_name))
        return
    answer = xp.result_type(getattr(xp, a_name), getattr(xp, b_name))
    # the namespace's own dtype object (the library's, hashed as the arrays' dtypes are: a dict key for generic code)
    assert answer == got and hash(answer) == hash(got), (a_name, b_name, answer, got)
    assert answer is getattr(xp, str(canonical_name(answer))), (a_name, b_name, answer)
    standard = promote_names(a_name, b_name)
    if standard is not None:
        assert getattr(ua, standard) == answer
    assert ua.result_type(getattr(ua, a_name), getattr(ua, b_name)) == answer


# -- ua.asarray: the same result whatever unarray has seen before ---------------------------------------------------


def _forget(t: type) -> None:
    # What a fresh process has seen: nothing of type t.
    _lookup.BY_TYPE.pop(t, None)


@given(data=st.data())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_asarray_does_not_depend_on_earlier_calls(lib: Lib, data: st.DataObject) -> None:
    native = lib.asarray([1.5, 2.5], lib.float_dtype)
    inputs = {"scalar": 3, "list": [1, 2], "numpy": np.array([4.0, 5.0]), "native": native}
    prior = data.draw(st.lists(st.sampled_from(["sum numpy", "sum native", "forget numpy", "forget native",
                                                "asarray numpy", "use numpy"]), max_size=6), label="prior")
    saved = dict(_lookup.BY_TYPE)
    try:
        for step in prior:
            if step == "sum numpy":
                ua.sum(np.ones(2))
            elif step == "sum native":
                ua.sum(native)
            elif step == "forget numpy":
                _forget(np.ndarray)
            elif step == "forget native":
                _forget(type(native))
            elif step == "asarray numpy":
                ua.asarray(np.ones(1, np.float32), backend=lib.name)
            else:
                with ua.use("numpy"):
                    ua.asarray([1])
        with ua.use(lib.name):
            got = {k: ua.asarray(v) for k, v in inputs.items()}
    finally:
        _lookup.BY_TYPE.update(saved)
    assert ua.backend_of(got["scalar"]) == ua.backend_of(got["list"]) == lib.name  # non-arrays: the default
    assert type(got["numpy"]) is np.ndarray  # an array stays with its library
    assert type(got["native"]) is type(native)
    for k, v in inputs.items():
        want = lib.to_numpy(v) if k == "native" else np.asarray(v, dtype=float)  # (no implicit device-to-host read)
        assert np.array_equal(lib.to_numpy(got[k]) if k != "numpy" else got[k], want), k


def test_asarray_keeps_a_tracer() -> None:
    jax = pytest.importorskip("jax")
    seen = []

    def f(x: Any) -> Any:
        with ua.use("numpy"):
            y = ua.asarray(x)
        seen.append(y is x)
        return y * 2

    assert np.asarray(jax.jit(f)(jax.numpy.ones(2))).tolist() == [2.0, 2.0] and seen == [True]


# -- the docs' generic library on every backend ---------------------------------------------------------------------


def _library() -> dict[str, Any]:
    # The first ```python block of docs/generic_code.md: the library's definitions, run as the page shows them.
    text = (ROOT / "docs" / "generic_code.md").read_text(encoding="utf-8")
    block = re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)[0]
    env: dict[str, Any] = {}
    for example in doctest.DocTestParser().get_examples(block):
        exec(compile(example.source, "docs/generic_code.md", "single"), env)  # noqa: S102 - the page's own code
    return env


LIBRARY = _library()
RNG = np.random.default_rng(7)
X = RNG.normal(size=(24, 4)) + np.array([3.0, 0.0, 0.0, 0.0]) * (np.arange(24) % 2)[:, None]
Y = (X[:, 0] > 1.5).astype(np.float64)
T = RNG.normal(size=(2, 6, 8))
P = {n: RNG.normal(size=(8, 8)) / 3 for n in ("wq", "wk", "wv", "wo", "w1", "w2")}


def _run(fns: dict[str, Any], x: Any, y: Any, c: Any, t: Any, p: dict[str, Any], compiled: bool) -> dict[str, Any]:
    # torch.compile's graph capture without inductor's code generation (which takes minutes on the CI's CPUs)
    wrap = (lambda f, **kw: ua.jit(f, torch={"backend": "eager"}, **kw)) if compiled else (lambda f, **kw: f)
    return {
        "standardize": wrap(fns["standardize"])(x),
        "pca": wrap(fns["pca"], static_argnames="k")(x, k=2),
        "kmeans_step": wrap(fns["kmeans_step"])(x, c),
        "logistic_fit": wrap(fns["logistic_fit"])(x, y)[0],
        "transformer_block": wrap(fns["transformer_block"], static_argnames="heads")(t, p, heads=2),
    }


REFERENCE = _run(LIBRARY, X, Y, X[:3], T, P, compiled=False)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "ua.jit"])
def test_the_generic_library_runs_unchanged(lib: Lib, compiled: bool) -> None:
    dt = lib.float_dtype
    x, c = lib.asarray(X, dt), lib.asarray(X[:3], dt)
    warnings.simplefilter("error", ua.JitFallbackWarning)  # compiled means compiled, not run eagerly after a failure
    got = _run(LIBRARY, x, lib.asarray(Y, dt), c, lib.asarray(T, dt), {k: lib.asarray(v, dt) for k, v in P.items()},
               compiled)
    # float32 rounding over a handful of reductions and 20 gradient steps of values of order 1
    tol = 2e-4 if dt is np.float32 else 1e-10
    for name, out in got.items():
        assert type(out) is type(x), name
        assert ua.device(out) == ua.device(x), name
        np.testing.assert_allclose(lib.to_numpy(out), REFERENCE[name], rtol=tol, atol=tol, err_msg=name)


def test_the_library_makes_its_arrays_on_the_callers_device_only(lib: Lib) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        w, b = LIBRARY["logistic_fit"](lib.asarray(X, lib.float_dtype), lib.asarray(Y, lib.float_dtype), steps=1)
    assert ua.backend_of(w) == ua.backend_of(b) == lib.name


# -- the namespace bound to MLX hands out MLX's own dtypes ----------------------------------------------------------

def _mlx() -> Any:
    return pytest.importorskip("mlx.core")


def _only_floats32(xp: Any, x: Any) -> Any:
    # Generic code as users write it: the dtype compared with the namespace's, on the array's left.
    if x.dtype == xp.float32:
        return xp.astype(x * 2, xp.float16)
    return xp.astype(x, xp.float32)


def test_generic_code_compares_an_mlx_arrays_dtype_with_the_namespaces() -> None:
    mx = _mlx()
    x = mx.array([1.5, -2.0, 3.25])
    xp = ua.array_namespace(x)
    assert xp.float32 == mx.float32 and xp.bool == mx.bool_ and mx.int64 == xp.int64 and xp.int64 != mx.int32
    assert x.dtype == xp.float32 and not x.dtype == xp.float16 and not x.dtype != xp.float32
    y = _only_floats32(xp, x)
    assert y.dtype == xp.float16 and np.allclose(np.asarray(y, np.float64), [3.0, -4.0, 6.5])
    assert _only_floats32(xp, y).dtype == xp.float32
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] is xp.float32 and xp.float32 == mx.float32
    assert all(v is getattr(xp, n) for n, v in info.dtypes().items())
    assert xp.complex128 is ua.complex128  # MLX has none: unarray's, which MLX refuses
    with pytest.raises(ua.DTypeError, match="complex64"):
        xp.asarray([1.0], dtype=xp.complex128)


def test_mlx_dtypes_of_the_namespace_compare_with_none_and_other_objects() -> None:
    # Generic code writes dtype == None; MLX's own dtype raises TypeError there.
    mx = _mlx()
    xp = ua.array_namespace(mx.zeros(1))
    for name in _MLX_NAMES:
        d = getattr(xp, name)
        assert d != None and not d == None and not None == d  # noqa: E711 - the idiom under test
        assert d != "float32" and d != 3 and d != ua.complex128 and d != object()
        assert d == getattr(mx, "bool_" if name == "bool" else name) and hash(d) == hash(d.native)
        x = xp.zeros(2, dtype=d)
        assert x.dtype == d and d == x.dtype and {x.dtype: name}[d] == name
        assert xp.asarray(x, dtype=d).dtype == d and ua.result_type(x, d) == d


_MLX_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
              "bfloat16", "float32", "float64", "complex64")
_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric")


@given(name=st.sampled_from(_MLX_NAMES), other=st.sampled_from(_MLX_NAMES),
       data=st.lists(st.integers(1, 100), min_size=1, max_size=5))
@settings(max_examples=40, deadline=None)
def test_mlx_dtypes_of_the_namespace_act_as_unarrays(name: str, other: str, data: list[int]) -> None:
    mx = _mlx()
    xp, xn = ua.array_namespace(mx.zeros(1)), ua.array_namespace(np.zeros(1))
    d, e = getattr(xp, name), getattr(xp, other)
    x = xp.asarray(data, dtype=d)
    assert isinstance(x, mx.array) and x.dtype == d and ua.asarray(x, dtype=d).dtype == d
    assert xp.astype(x, e).dtype == e if not (name == "complex64" and other != name) else True
    for kind in (*_KINDS, e):
        ref_kind = kind if isinstance(kind, str) else getattr(ua, other)
        assert xp.isdtype(d, kind) == xp.isdtype(x.dtype, kind) == xn.isdtype(getattr(ua, name), ref_kind)
    try:
        want = ua.result_type(getattr(ua, name), getattr(ua, other))
    except ua.DTypeError:
        want = None
    if want is not None and want != ua.complex128:
        assert xp.result_type(d, e) == getattr(xp, want.name)
    assert xp.can_cast(d, e) == xn.can_cast(getattr(ua, name), getattr(ua, other))
    if xp.isdtype(d, "real floating"):
        assert xp.finfo(d).eps == xn.finfo(getattr(ua, name)).eps if name != "bfloat16" else True
    if xp.isdtype(d, "integral"):
        assert (xp.iinfo(d).min, xp.iinfo(d).max) == (xn.iinfo(getattr(ua, name)).min, xn.iinfo(getattr(ua, name)).max)


@pytest.mark.parametrize("target", ["numpy", "torch", "jax", "tensorflow", "dask"])
def test_an_mlx_dtype_with_another_backend_is_read_by_its_name(target: str) -> None:
    mx = _mlx()
    xp = ua.array_namespace(mx.zeros(1))
    for name in _MLX_NAMES:
        try:
            want = ua.asarray([1, 2], dtype=getattr(ua, name), backend=target)
        except ua.UnarrayError as err:
            with pytest.raises(type(err)):
                ua.asarray([1, 2], dtype=getattr(xp, name), backend=target)
            continue
        got = ua.asarray([1, 2], dtype=getattr(xp, name), backend=target)
        assert type(got) is type(want) and ua.float32 == ua.float32 and got.dtype == want.dtype
        assert ua.astype(want, getattr(xp, name)).dtype == want.dtype
        assert ua.isdtype(want.dtype, getattr(xp, name))
