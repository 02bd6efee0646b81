"""Dispatch: mixed libraries (the first array leads, the rest are handed over zero-copy), Python scalars,
``ua.use``, the precision policy leaving no global state behind, and read-only NumPy inputs."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import unarray as ua
from tests._support import TestBackend


def _torch() -> Any:
    return pytest.importorskip("torch")


# -- mixed inputs ---------------------------------------------------------------------------------------------------


def test_torch_then_numpy_leads_torch() -> None:
    torch = _torch()
    a = torch.arange(1.0, 7.0).reshape(2, 3)
    b = np.arange(1.0, 7.0).reshape(3, 2).astype(np.float32)
    r = ua.matmul(a, b)
    assert isinstance(r, torch.Tensor)
    np.testing.assert_allclose(r.numpy(), a.numpy() @ b, rtol=1e-6)


def test_numpy_then_torch_leads_numpy() -> None:
    torch = _torch()
    a = np.arange(1.0, 7.0).reshape(2, 3).astype(np.float32)
    b = torch.arange(1.0, 7.0).reshape(3, 2)
    r = ua.matmul(a, b)
    assert isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, a @ b.numpy(), rtol=1e-6)
    r = ua.add(a, b.mT)
    assert isinstance(r, np.ndarray)


def test_mixed_jax_numpy_leads_by_first() -> None:
    jax = pytest.importorskip("jax")
    a = jax.device_put(jax.numpy.ones((2, 2), dtype="float32"), jax.devices("cpu")[0])
    b = np.full((2, 2), 2.0, dtype=np.float32)
    assert isinstance(ua.add(a, b), jax.Array)
    assert isinstance(ua.add(b, a), np.ndarray)
    assert float(ua.sum(ua.multiply(b, a))) == 8.0


def test_handed_over_operand_is_zero_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    torch = _torch()
    from unarray import interop

    seen: list[Any] = []
    real = interop.to

    def spy(x: Any, backend: Any, **kw: Any) -> Any:
        out = real(x, backend, **kw)
        seen.append((x, out))
        return out

    before = ua.stats()  # before the spy: ua.stats's first read binds ua.to from interop.to, which must stay the real
    monkeypatch.setattr(interop, "to", spy)
    a = torch.ones((3, 3))
    b = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    ua.matmul(a, b)
    assert ua.to is real
    after = ua.stats()
    assert len(seen) == 1
    src, handed = seen[0]
    assert src is b and isinstance(handed, torch.Tensor)
    assert handed.data_ptr() == b.__array_interface__["data"][0]
    assert after["copies"] == before["copies"]


def test_torch_to_numpy_zero_copy() -> None:
    torch = _torch()
    t = torch.arange(6.0).reshape(2, 3)
    n = ua.to(t, "numpy")
    assert isinstance(n, np.ndarray)
    assert n.__array_interface__["data"][0] == t.data_ptr()


@pytest.mark.parametrize("scalar", [2, 2.5, True])
def test_python_scalars_never_pick_the_backend(backend: TestBackend, scalar: Any) -> None:
    x = backend.asarray(np.array([1.0, 2.0], dtype=np.float32))
    for r in (ua.add(scalar, x), ua.add(x, scalar), ua.multiply(scalar, x), ua.where(x > 1.5, scalar, x)):
        assert backend.is_native(r), type(r)
        assert ua.backend_of(r) == backend.name
        assert str(backend.to_numpy(r).dtype) == "float32"  # the scalar is weak: float32 stays float32


def test_backend_of_and_device(backend: TestBackend) -> None:
    x = backend.asarray(np.ones(2, dtype=np.float32))
    assert ua.backend_of(x) == backend.name
    assert ua.device(x) == backend.ua_device
    assert ua.device(x).kind == ("cpu" if backend.device == "cpu" else ua.device(x).kind) != "tpu"
    xp = ua.array_namespace(x)
    assert xp.backend == backend.name and xp.sum is ua.sum


# -- ua.use ---------------------------------------------------------------------------------------------------------


def test_use_as_context_manager(backend: TestBackend) -> None:
    with ua.use(backend.name):
        z = ua.zeros((2, 3))
        assert backend.is_native(z) and ua.backend_of(z) == backend.name
        assert tuple(z.shape) == (2, 3)
    assert isinstance(ua.zeros(2), np.ndarray)


def test_use_nested_and_restored() -> None:
    _torch()
    with ua.use("torch"):
        with ua.use("numpy"):
            assert isinstance(ua.ones(1), np.ndarray)
        assert ua.backend_of(ua.ones(1)) == "torch"
    assert ua.backend_of(ua.ones(1)) == "numpy"


def test_use_as_setter_is_scoped_to_context() -> None:
    _torch()
    result: dict[str, str] = {}

    def worker() -> None:
        ua.use("torch")  # a setter in this thread's context only
        result["thread"] = ua.backend_of(ua.zeros(1))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert result["thread"] == "torch"
    assert ua.backend_of(ua.zeros(1)) == "numpy"


def test_use_setter_then_restore() -> None:
    _torch()
    token = ua.use("torch")
    try:
        assert ua.backend_of(ua.arange(3)) == "torch"
    finally:
        token.__exit__(None, None, None)
    assert ua.backend_of(ua.arange(3)) == "numpy"


# -- precision policy leaves no global state ------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["highest", "tf32", "bf16", "fastest"])
def test_torch_precision_restored_after_call(policy: str) -> None:
    torch = _torch()
    a = torch.ones((4, 4))
    for start in ("highest", "high"):
        torch.set_float32_matmul_precision(start)
        try:
            ua.matmul(a, a, precision=policy)
            assert torch.get_float32_matmul_precision() == start
            with ua.precision(policy):
                ua.matmul(a, a)
                assert ua.get_precision() == policy
            assert torch.get_float32_matmul_precision() == start
            assert ua.get_precision() == "highest"
        finally:
            torch.set_float32_matmul_precision("highest")


def test_torch_precision_restored_after_exception() -> None:
    torch = _torch()
    torch.set_float32_matmul_precision("highest")
    with pytest.raises(ua.ShapeError):
        ua.matmul(torch.ones((2, 3)), torch.ones((4, 5)), precision="tf32")
    assert torch.get_float32_matmul_precision() == "highest"
    with pytest.raises(ua.ShapeError):
        with ua.precision("bf16"):
            ua.matmul(torch.ones((2, 3)), torch.ones((4, 5)))
    assert torch.get_float32_matmul_precision() == "highest"
    assert ua.get_precision() == "highest"


def test_highest_is_float32_accurate(backend: TestBackend) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 128)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 32)).astype(np.float32)
    r = backend.to_numpy(ua.matmul(backend.asarray(a), backend.asarray(b)))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(r - ref).max() < 128 * 2.0**-23 * 4


def test_explain_reports_precision(backend: TestBackend) -> None:
    a = backend.asarray(np.ones((2, 2), dtype=np.float32))
    e = ua.explain("matmul", a, a)
    assert e.backend == backend.name and e.device == backend.ua_device
    assert e.precision is not None and "float32" in e.precision


def _layout(shape: tuple[int, ...], offset: int, step: int, transpose: bool, writeable: bool, seed: int) -> np.ndarray:
    # A float32 NumPy operand of the given shape in an awkward layout: `offset` bytes past a 64-byte
    # boundary, every `step`-th column (negative: reversed), transposed, read-only.
    rng = np.random.default_rng(seed)
    rows, cols = shape
    full = (rows, cols * abs(step)) if not transpose else (cols, rows * abs(step))
    raw = np.zeros(4 * full[0] * full[1] + 128, np.uint8)
    start = (-raw.__array_interface__["data"][0]) % 64 + offset
    base = raw[start:start + 4 * full[0] * full[1]].view(np.float32).reshape(full)
    base[...] = rng.standard_normal(full, dtype=np.float32)
    x = base[:, ::step]
    x = x.T if transpose else x
    x.flags.writeable = writeable
    return x


def _jax_cpu(a: np.ndarray) -> Any:
    jax = pytest.importorskip("jax")
    return jax.device_put(a, jax.devices("cpu")[0])


def _tf_cpu(a: np.ndarray) -> Any:
    tf = pytest.importorskip("tensorflow")
    with tf.device("/device:CPU:0"):
        return tf.constant(a)


# The leading array of a mixed call with a NumPy operand, on the CPU (where the NumPy operand lives) on
# every machine: JAX and TensorFlow put new arrays on a GPU where there is one.
_LEADS = {
    "torch": lambda a: pytest.importorskip("torch").tensor(a, device="cpu"),
    "jax": _jax_cpu,
    "tensorflow": _tf_cpu,
}


@pytest.mark.parametrize("lead", sorted(_LEADS))
def test_explain_counts_the_copies_the_mixed_call_makes(lead: str) -> None:
    make = _LEADS[lead]
    make(np.ones(1, np.float32))  # skips where the leading library is not installed

    copies: set[int] = set()

    @settings(max_examples=30, deadline=None)
    @given(shape=st.tuples(st.integers(1, 5), st.integers(1, 5)), offset=st.sampled_from([0, 4]),
           step=st.sampled_from([1, 2, -1]), transpose=st.booleans(), writeable=st.booleans(),
           seed=st.integers(0, 2**16))
    @example(shape=(3, 4), offset=0, step=1, transpose=False, writeable=True, seed=1)  # compact: zero-copy
    @example(shape=(3, 4), offset=4, step=-1, transpose=False, writeable=True, seed=2)  # reversed, unaligned: a copy
    def check(shape: tuple[int, int], offset: int, step: int, transpose: bool, writeable: bool, seed: int) -> None:
        x = _layout(shape, offset, step, transpose, writeable, seed)
        copies.add(_explain_then_call(lead, make(np.ones(shape, np.float32)), x))

    check()
    assert copies == {0, 1}


def _explain_then_call(lead: str, a: Any, x: np.ndarray) -> int:
    before = ua.stats()
    e = ua.explain("add", a, x)
    assert ua.stats() == before  # explaining hands nothing over for real
    assert e.backend == lead and len(e.handoffs) == 1 and e.handoffs[0].startswith(f"numpy -> {lead}")
    ua.stats(reset=True)
    r = ua.add(a, x)
    assert ua.stats()["copies"] == e.copies
    assert ("one copy" in e.handoffs[0]) == (e.copies == 1)
    np.testing.assert_allclose(np.asarray(r), x + 1, rtol=1e-6)
    return e.copies


@pytest.mark.gpu
@pytest.mark.parametrize("lead", ["torch", "jax"])
def test_explain_refuses_a_mixed_call_across_devices_as_the_call_does(lead: str) -> None:
    x = np.ones((2, 3), np.float32)
    if lead == "torch":
        torch = _torch()
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device visible to torch")
        a = torch.ones((2, 3), device="cuda")
    else:
        jax = pytest.importorskip("jax")
        gpus = [d for d in jax.devices() if d.platform != "cpu"]
        if not gpus:
            pytest.skip("no GPU visible to JAX")
        a = jax.device_put(x, gpus[0])
    with pytest.raises(ua.DeviceMismatchError) as called:
        ua.add(a, x)
    with pytest.raises(ua.DeviceMismatchError) as explained:
        ua.explain("add", a, x)
    assert type(explained.value) is type(called.value)


def test_explain_names_the_backend_and_device_of_a_creation_call() -> None:
    torch = _torch()
    e = ua.explain("zeros", (2, 3), backend="torch")
    assert (e.backend, e.device, e.handoffs, e.copies) == ("torch", ua.device(ua.zeros((2, 3), backend="torch")), (), 0)
    with ua.use("torch", device=torch.device("cpu")):
        assert ua.explain("ones", (4,)).backend == "torch"
    assert ua.explain("asarray", [[1, 2], [3, 4]]).backend == "numpy"
    e = ua.explain("concat", [torch.ones(2), np.ones(2, np.float32)])
    assert e.backend == "torch" and e.handoffs[0].startswith("numpy -> torch via") and e.copies == 0


# -- read-only NumPy inputs and no mutation --------------------------------------------------------------------------


def _readonly(shape: tuple, dtype: str = "float32") -> np.ndarray:
    x = (np.arange(1, 1 + int(np.prod(shape))) % 7 + 1).astype(dtype).reshape(shape)
    x.flags.writeable = False
    return x


_HOT = [
    ("matmul", lambda ua_, x: ua_.matmul(x, ua_.matrix_transpose(x))),
    ("matrix_transpose", lambda ua_, x: ua_.matrix_transpose(x)),
    ("permute_dims", lambda ua_, x: ua_.permute_dims(x, (1, 0, 2))),
    ("sum", lambda ua_, x: ua_.sum(x, axis=(0, -1), keepdims=True)),
    ("sum_empty_axes", lambda ua_, x: ua_.sum(x, axis=())),
    ("prod", lambda ua_, x: ua_.prod(x, axis=1)),
    ("prod_empty_axes", lambda ua_, x: ua_.prod(x, axis=())),
    ("mean", lambda ua_, x: ua_.mean(x, axis=())),
    ("var", lambda ua_, x: ua_.var(x, axis=-1, correction=1)),
    ("std", lambda ua_, x: ua_.std(x)),
    ("min", lambda ua_, x: ua_.min(x, axis=())),
    ("max", lambda ua_, x: ua_.max(x, axis=0)),
    ("argmin", lambda ua_, x: ua_.argmin(x, axis=1)),
    ("argmax", lambda ua_, x: ua_.argmax(x)),
    ("any", lambda ua_, x: ua_.any(x, axis=())),
    ("all", lambda ua_, x: ua_.all(x, axis=None)),
    ("cumulative_sum", lambda ua_, x: ua_.cumulative_sum(x, axis=1, include_initial=True)),
    ("cumulative_prod", lambda ua_, x: ua_.cumulative_prod(x, axis=-1)),
]


@pytest.mark.parametrize(("name", "call"), _HOT, ids=[h[0] for h in _HOT])
def test_readonly_numpy_inputs(name: str, call: Any) -> None:
    x = _readonly((2, 3, 4))
    before = x.copy()
    r = call(ua, x)
    assert isinstance(r, (np.ndarray, np.generic))
    np.testing.assert_array_equal(x, before)
    # The result may be written to: it never aliases the read-only input where the op computes something new.
    if isinstance(r, np.ndarray) and name not in ("matrix_transpose", "permute_dims"):
        assert not np.shares_memory(r, x)


@pytest.mark.parametrize(("name", "call"), _HOT, ids=[h[0] for h in _HOT])
def test_hot_ops_never_mutate_inputs(backend: TestBackend, name: str, call: Any) -> None:
    host = _readonly((2, 3, 4))
    x = backend.asarray(host)
    r = call(ua, x)
    assert backend.is_native(r)
    np.testing.assert_array_equal(backend.to_numpy(x), host)
    # Writing into a reduction over no axes must not reach the input (it is a new array).
    if name.endswith("_empty_axes") and backend.name == "torch":
        r.add_(1)
        np.testing.assert_array_equal(backend.to_numpy(x), host)


def test_readonly_numpy_handed_to_torch() -> None:
    torch = _torch()
    x = _readonly((2, 2))
    r = ua.matmul(torch.ones((2, 2)), x)
    assert isinstance(r, torch.Tensor)
    np.testing.assert_array_equal(r.numpy(), np.ones((2, 2)) @ x)
    assert not x.flags.writeable
