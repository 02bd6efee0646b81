"""``ua.jit``'s rules that make one decorator over three compilers give eager's answers: static arguments keyed by
type and value; the globals and closure variables a function reads seen when they change (jax.jit and tf.function
trace them once); options a compiler refuses raised as unarray's typed errors; and every binary element-wise
function with a Python scalar operand, on either side, traced whole by ``torch.compile(fullgraph=True)``.
"""

from __future__ import annotations

import importlib.util
import inspect
import warnings
from typing import Any

import numpy as np
import pytest

import unarray as ua
from tests._support import TestBackend
from unarray import elementwise
from unarray._backends import LIBRARIES

if importlib.util.find_spec("torch") is not None:
    import torch._dynamo  # noqa: F401  (before TensorFlow: see tests/jit/test_jit.py)

EAGER_TORCH = {"torch": {"backend": "eager"}}


def _np(backend: TestBackend, x: Any) -> np.ndarray:
    return backend.to_numpy(x).astype(np.float64)


def _compiled(backend: TestBackend) -> dict[str, Any]:
    # A library without a compiler of its own (NumPy, CuPy, dask): JAX's is named, so the rule is held there too.
    if not LIBRARIES[backend.name].compiles:
        pytest.importorskip("jax")
        return {"compiler": "jax"}
    return dict(EAGER_TORCH)


# -- static arguments: by type and value -----------------------------------------------------------------------

def _branchy(x: Any, n: Any) -> Any:
    # Three answers for three equal values of one hash (1 == True == 1.0), and a fourth for -0.0.
    if isinstance(n, bool):
        return ua.add(x, 10.0)
    if isinstance(n, float):
        return ua.multiply(x, 3.0) if str(n).startswith("-") else ua.multiply(x, 0.5)
    return ua.multiply(x, float(n))


def test_static_arguments_are_keyed_by_type_and_value(backend: TestBackend) -> None:
    f = ua.jit(_branchy, static_argnames="n", **_compiled(backend))
    host = np.random.default_rng(11).uniform(0.5, 2.0, (2, 3)).astype(np.float32)
    x = backend.asarray(host)
    # Note: Dynamo traces a float argument -0.0 as 0.0 itself (a plain torch.compile too), whatever the key.
    values = (1, True, 1.0, 0.0, True, 1) + (() if backend.name == "torch" else (-0.0,))
    for n in values:
        np.testing.assert_allclose(_np(backend, f(x, n=n)), _np(backend, _branchy(x, n)), rtol=1e-6, err_msg=repr(n))
    assert f.cache_info()["entries"] == len(values) - 2


def test_tf_function_python_arguments_are_keyed_by_type() -> None:
    tf = pytest.importorskip("tensorflow")
    f = ua.jit(_branchy)  # tf.function bakes every Python argument into the trace, compared by equality
    x = tf.constant([[0.5, 1.5]], dtype=tf.float32)
    for n in (1, True, 1.0):
        np.testing.assert_allclose(f(x, n).numpy(), _branchy(x, n).numpy(), rtol=1e-6, err_msg=repr(n))


# -- the state a function reads ---------------------------------------------------------------------------------

SCALE = 2.0
SETTINGS = {"shift": 1.0, "sign": (1, 1)}


def _scaled(x: Any) -> Any:
    return ua.multiply(x, SCALE)  # a helper of the same module: what it reads counts too


def _reads_state(x: Any) -> Any:
    return ua.add(_scaled(x), SETTINGS["shift"] * SETTINGS["sign"][0])


def test_a_changed_global_or_closure_is_seen_as_eagerly(backend: TestBackend) -> None:
    global SCALE
    cfg = {"bias": 0.25}
    log: list[int] = []

    def f(x: Any) -> Any:
        log.append(1)  # written, not read: no key, no warning
        return ua.add(_reads_state(x), cfg["bias"])

    g = ua.jit(f, **_compiled(backend))
    host = np.random.default_rng(5).uniform(0.5, 2.0, (3,)).astype(np.float32)
    x = backend.asarray(host)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ua.JitStateWarning)
            for scale, shift, sign, bias in ((2.0, 1.0, 1, 0.25), (3.0, 1.0, 1, 0.25), (3.0, -4.0, 1, 0.25),
                                             (3.0, -4.0, -1, 0.25), (3.0, -4.0, -1, 7.0), (2.0, 1.0, 1, 0.25)):
                SCALE, SETTINGS["shift"], SETTINGS["sign"], cfg["bias"] = scale, shift, (sign, 1), bias
                want = host.astype(np.float64) * scale + shift * sign + bias
                np.testing.assert_allclose(_np(backend, g(x)), want, rtol=1e-6)
                np.testing.assert_allclose(_np(backend, g(x)), _np(backend, f(x)), rtol=1e-6)
    finally:
        SCALE, SETTINGS["shift"], SETTINGS["sign"] = 2.0, 1.0, (1, 1)


def test_state_that_cannot_be_keyed_is_warned_about_once(backend: TestBackend) -> None:
    if backend.name == "torch":
        pytest.skip("torch.compile guards what the function reads itself: nothing to warn about")
    table = np.arange(3, dtype=np.float32) + 1.0  # a mutable buffer: keyed by identity only

    def f(x: Any) -> Any:
        return ua.add(x, float(table[0]))

    g = ua.jit(f, **_compiled(backend))
    x = backend.asarray(np.ones(3, np.float32))
    with pytest.warns(ua.JitStateWarning, match=r"reads table \(a ndarray\).*identity.*Pass it as an argument"):
        np.testing.assert_allclose(_np(backend, g(x)), 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitStateWarning)
        np.testing.assert_allclose(_np(backend, g(x)), 2.0)  # once per function


# -- options a compiler refuses ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("lib", "options", "error", "named"), [
    ("torch", {"mode": "nope"}, ua.ArgumentError, "mode='nope'"),
    ("torch", {"backend": "nope"}, ua.ArgumentError, "backend='nope'"),
    ("torch", {"options": {"no_such_flag": 1}}, ua.ArgumentError, "options="),
    ("torch", {"dynamic": "maybe"}, ua.ArgumentTypeError, "dynamic="),
    ("jax", {"backend": "nope"}, ua.ArgumentError, "backend='nope'"),
    ("jax", {"inline": "yes"}, ua.ArgumentTypeError, "inline="),
    ("jax", {"donate_argnums": "x"}, ua.ArgumentTypeError, "donate_argnums='x'"),
    ("tensorflow", {"jit_compile": "nope"}, ua.ArgumentTypeError, "jit_compile="),
    ("tensorflow", {"input_signature": 3}, ua.ArgumentTypeError, "input_signature=3"),
    ("mlx", {"shapeless": True}, ua.ArgumentError, "shapeless=True"),
    ("mlx", {"shapeless": "yes"}, ua.ArgumentTypeError, "shapeless="),
    ("mlx", {"no_such_option": 1}, ua.ArgumentTypeError, "no_such_option=1"),
])
@pytest.mark.parametrize("fullgraph", [False, True])
def test_refused_options_are_typed_errors_naming_them(lib: str, options: dict[str, Any], error: type,
                                                      named: str, fullgraph: bool) -> None:
    pytest.importorskip(lib)
    from tests._support import make_backend

    b = make_backend(lib)
    f = ua.jit(lambda x: ua.add(x, 1.0), fullgraph=fullgraph, **{lib: options})
    with warnings.catch_warnings():
        warnings.simplefilter("error", ua.JitFallbackWarning)
        with pytest.raises(error, match=rf"ua\.jit \[{lib}\]: .*refused the option {named}|takes {named}") as info:
            f(b.asarray(np.ones(2, np.float32)))
    assert info.value.backend == lib and "leave it out" in str(info.value)


# -- Python scalars under torch.compile(fullgraph=True) -----------------------------------------------------------

def _binary() -> list[str]:
    # Every element-wise function of the front end taking two operands (x1, x2), read from its signature.
    out = []
    for name in sorted(dir(elementwise)):
        fn = getattr(elementwise, name)
        ours = inspect.isfunction(inspect.unwrap(fn)) and fn.__module__ == elementwise.__name__
        if ours and not name.startswith("_"):
            params = [p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.POSITIONAL_ONLY]
            if params == ["x1", "x2"]:
                out.append(name)
    return out


BINARY = _binary()
# (array dtype, the values it holds, the Python scalars beside it): one small array each, no zeros.
_CASES = {"float32": ([0.75, -2.5, 3.25, 1.5], (1.5, 2)), "int32": ([3, -7, 12, 5], (3,)),
          "bool": ([True, False, True, True], (True,))}


def _eager(torch: Any, dtype: str) -> dict[tuple[str, str, Any], Any]:
    # The eager answer of each (op, side, scalar) that runs eagerly for this dtype.
    x = torch.tensor(_CASES[dtype][0], dtype=getattr(torch, dtype))
    out = {}
    for op in BINARY:
        for side in ("left", "right"):
            for s in _CASES[dtype][1]:
                try:
                    out[op, side, s] = _call(op, side, s, x)
                except ua.UnarrayError:
                    continue  # refused eagerly for this dtype (bitwise on floats, say): nothing to compare
    return out


def _call(op: str, side: str, s: Any, x: Any) -> Any:
    return getattr(ua, op)(x, s) if side == "right" else getattr(ua, op)(s, x)


def _all_ops(keys: list[tuple[str, str, Any]]) -> Any:
    def f(x: Any) -> tuple[Any, ...]:
        return tuple(_call(op, side, s, x) for op, side, s in keys)
    return f


def _compile(how: str, f: Any) -> Any:
    import torch

    return torch.compile(f, fullgraph=True, backend="eager") if how == "torch.compile" else \
        ua.jit(f, fullgraph=True, **EAGER_TORCH)


# ua.jit traces as torch.compile does, under its precision marker: held on the dtypes of the numeric ops.
_DTYPES = {"torch.compile": tuple(_CASES), "ua.jit": ("float32", "int32")}


@pytest.fixture(scope="module")
def compiled_groups() -> dict[tuple[str, str], Any]:
    # Each (compiler, dtype): every op, both sides, in one compiled function (one compile instead of one per op,
    # as a compile costs about as much as the ops' whole test); an op whose group failed is compiled alone by
    # its own test, which names it.
    torch = pytest.importorskip("torch")
    out: dict[tuple[str, str], Any] = {}
    for how, dtypes in _DTYPES.items():
        for dtype in dtypes:
            keys = list(_eager(torch, dtype))
            try:
                got = _compile(how, _all_ops(keys))(torch.tensor(_CASES[dtype][0], dtype=getattr(torch, dtype)))
                out[how, dtype] = dict(zip(keys, got, strict=True))
            except Exception as e:
                out[how, dtype] = e
    return out


@pytest.mark.parametrize("how", ["torch.compile", "ua.jit"])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("op", BINARY)
def test_python_scalar_operands_trace_whole(op: str, side: str, how: str,
                                            compiled_groups: dict[tuple[str, str], Any]) -> None:
    import torch

    ran = 0
    for dtype in _DTYPES[how]:
        eager = {k: v for k, v in _eager(torch, dtype).items() if k[:2] == (op, side)}
        got: Any = compiled_groups[how, dtype]
        if isinstance(got, Exception):  # the group broke somewhere: this op alone says whether it is this one
            x = torch.tensor(_CASES[dtype][0], dtype=getattr(torch, dtype))
            got = dict(zip(eager, _compile(how, _all_ops(list(eager)))(x), strict=True))
        for k, want in eager.items():
            assert got[k].dtype == want.dtype, (k, dtype, got[k].dtype, want.dtype)
            torch.testing.assert_close(got[k], want, equal_nan=True, atol=0, rtol=0, msg=f"{k} {dtype}")
            ran += 1
    assert ran, f"{op} ran for no dtype"


def test_the_scalar_dtype_rule_is_torchs() -> None:
    torch = pytest.importorskip("torch")
    from unarray._backends.torch.gaps import scalar_dtype

    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
              torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]
    for s in (True, 3, -2.5, 1j):
        for d in dtypes:
            assert scalar_dtype(s, d) == torch.result_type(s, torch.ones(2, dtype=d)), (s, d)
