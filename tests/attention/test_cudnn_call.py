"""The per-call path of cuDNN attention on CuPy arrays (unarray/_backends/cupy/cudnn_call.py and the prepared-call
cache in attention_cudnn.prepare), without a GPU: stand-ins for CuPy's arrays, stream and the cudnn module.

A call's key separates every fact the prepared problem depends on (a Hypothesis property over fact sets), the
cache prepares each key once, again after eviction, remembers refusals, keeps the handle on the caller's stream,
and is bypassed when switched off; the launcher hands cuDNN the pointers in the backend's own order or falls
back to the frontend's public execute.
"""

from __future__ import annotations

import ctypes
import dataclasses
import sys
import threading
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unarray._backends.cupy import attention_cudnn as ac
from unarray._backends.cupy import cudnn_call as cc


@dataclasses.dataclass(frozen=True)
class _DType:  # CuPy's dtypes by name (CuPy has bfloat16, NumPy not): hashable, compared by name
    name: str


def _array(shape: tuple[int, ...], strides: tuple[int, ...], dtype: str = "float16", ptr: int = 4096,
           device: int = 0) -> Any:
    return types.SimpleNamespace(shape=shape, strides=strides, dtype=_DType(dtype),
                                 data=types.SimpleNamespace(ptr=ptr, device_id=device))


# -- the key --------------------------------------------------------------------------------------------------
FACTS = st.fixed_dictionaries({
    "dtype": st.sampled_from(["float16", "bfloat16"]),
    "shape": st.sampled_from([(2, 4, 8, 64), (2, 8, 4, 64)]),
    "qstride": st.sampled_from([(4096, 1024, 128, 1), (4096, 64, 512, 1)]),
    "kstride": st.sampled_from([(4096, 1024, 128, 1), (8192, 1024, 128, 1)]),
    "vstride": st.sampled_from([(4096, 1024, 128, 1), (4096, 64, 512, 1)]),
    "device": st.integers(0, 1),
    "ptr": st.sampled_from([4096, 4096 + 16, 4096 + 8]),  # two aligned, one not
    "mask": st.sampled_from([None, ((8, 8), "bool"), ((1, 8, 8), "bool"), ((8, 8), "float16")]),
    "causal": st.booleans(),
    "scale": st.sampled_from([0.125, 0.25]),
    "layout": st.sampled_from(["bhsd", "bshd"]),
    "stream": st.sampled_from([0, 2, 0x7F00]),
})


def _key(f: dict[str, Any]) -> tuple[Any, ...]:
    q = _array(f["shape"], f["qstride"], f["dtype"], f["ptr"], f["device"])
    k = _array(f["shape"], f["kstride"], f["dtype"], 8192, f["device"])
    v = _array(f["shape"], f["vstride"], f["dtype"], 12288, f["device"])
    mask = None if f["mask"] is None else _array(f["mask"][0], (), f["mask"][1])
    return cc.call_key(q, k, v, mask, f["causal"], f["scale"], f["layout"], f["stream"])


def _facts(f: dict[str, Any]) -> tuple[Any, ...]:
    # What prepare reads: every fact but the pointer, of which only the 16-byte alignment.
    return tuple((name, f[name] % 16 == 0) if name == "ptr" else (name, f[name]) for name in sorted(f))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(FACTS, FACTS)
def test_call_key_separates_exactly_what_prepare_reads(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert (_key(a) == _key(b)) == (_facts(a) == _facts(b))
    hash(_key(a))


BASE = {"dtype": "float16", "shape": (2, 4, 8, 64), "qstride": (4096, 1024, 128, 1), "kstride": (4096, 1024, 128, 1),
        "vstride": (4096, 1024, 128, 1), "device": 0, "ptr": 4096, "mask": None, "causal": False, "scale": 0.125,
        "layout": "bhsd", "stream": 0}
OTHER = {"dtype": "bfloat16", "shape": (2, 8, 4, 64), "qstride": (4096, 64, 512, 1), "kstride": (8192, 1024, 128, 1),
         "vstride": (4096, 64, 512, 1), "device": 1, "ptr": 4096 + 8, "mask": ((8, 8), "bool"), "causal": True,
         "scale": 0.25, "layout": "bshd", "stream": 2}


@pytest.mark.parametrize("field", sorted(BASE))
def test_each_fact_splits_the_key(field: str) -> None:
    assert _key({**BASE, field: OTHER[field]}) != _key(BASE)


def test_a_new_pointer_with_the_same_alignment_keeps_the_key() -> None:
    assert _key(BASE) == _key({**BASE, "ptr": 1 << 20})
    assert _key(BASE) != _key({**BASE, "ptr": 4096 + 2})


# -- the prepared-call cache (attention_cudnn.prepare) ---------------------------------------------------------
class _Stream:
    def __init__(self) -> None:
        self.ptr = 0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Any:
    """prepare() with CuPy's current stream, the cudnn module and the slow path replaced by recorders."""
    stream = _Stream()
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda: stream)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    calls: dict[str, list[Any]] = {"prepare": [], "set_stream": [], "launcher": []}
    cudnn = types.SimpleNamespace(set_stream=lambda h, s: calls["set_stream"].append((h, s)))
    monkeypatch.setattr(ac, "library", lambda: (cudnn, None))
    monkeypatch.setattr(ac, "_HANDLES", threading.local())
    refuse: set[int] = set()

    def slow(cudnn_: Any, q: Any, *rest: Any) -> Any:
        calls["prepare"].append(q.shape)
        if q.shape[2] in refuse:
            return f"refused {q.shape}"
        built = ac.Built(graph=object(), tensors=(), workspace=0, plan="p")
        t = ac._local()
        t.streams[0] = stream.ptr  # the slow path leaves the handle on the current stream (as _handle does)
        return ac.Problem(cudnn_, built, None, None, None, (), q.shape, "bhsd", "handle")  # type: ignore[arg-type]

    monkeypatch.setattr(ac, "_prepare", slow)
    monkeypatch.setattr(ac, "launcher", lambda *a: calls["launcher"].append(a) or "launch")
    return types.SimpleNamespace(stream=stream, calls=calls, refuse=refuse)


def _q(sq: int) -> Any:
    return _array((1, 2, sq, 64), (2 * sq * 64, sq * 64, 64, 1))


def _prepare(q: Any, mask: Any = None) -> Any:
    return ac.prepare(q, q, q, mask, False, 0.125, "bhsd")


def test_a_key_is_prepared_once_and_launched_without_rederiving(fake: Any) -> None:
    p = _prepare(_q(8))
    assert _prepare(_q(8)) is p and p.launch == "launch"
    assert fake.calls["prepare"] == [(1, 2, 8, 64)] and len(fake.calls["launcher"]) == 1
    assert fake.calls["set_stream"] == []  # the handle is on the caller's stream already


def test_a_stream_change_is_a_new_key_and_moves_the_handle(fake: Any) -> None:
    p0 = _prepare(_q(8))
    fake.stream.ptr = 0x7F00
    p1 = _prepare(_q(8))
    assert p1 is not p0 and len(fake.calls["prepare"]) == 2
    fake.stream.ptr = 0
    assert _prepare(_q(8)) is p0  # back on the first stream: the cached problem, the handle moved back
    assert fake.calls["set_stream"] == [("handle", 0)]
    assert _prepare(_q(8)) is p0 and fake.calls["set_stream"] == [("handle", 0)]  # unchanged: not set again


def test_an_evicted_key_is_prepared_again(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ac, "FAST_SIZE", 2)
    first = _prepare(_q(8))
    _prepare(_q(16))
    _prepare(_q(24))  # evicts the first
    again = _prepare(_q(8))
    assert again is not first and fake.calls["prepare"] == [(1, 2, n, 64) for n in (8, 16, 24, 8)]
    assert len(ac._local().fast) == 2


def test_a_refusal_is_remembered_and_gets_no_launcher(fake: Any) -> None:
    fake.refuse.add(8)
    assert _prepare(_q(8)) == "refused (1, 2, 8, 64)" == _prepare(_q(8))
    assert len(fake.calls["prepare"]) == 1 and fake.calls["launcher"] == []


def test_a_masked_call_keeps_the_per_call_path(fake: Any) -> None:
    p = _prepare(_q(8), mask=_array((8, 8), (8, 1), "bool"))
    assert p.launch is None and fake.calls["launcher"] == []
    assert _prepare(_q(8)) is not p  # the mask's facts are in the key


def test_switched_off_every_call_is_derived(fake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ac, "FAST", False)
    a, b = _prepare(_q(8)), _prepare(_q(8))
    assert a is not b and a.launch is None and len(fake.calls["prepare"]) == 2


def test_each_thread_prepares_its_own(fake: Any) -> None:
    mine = _prepare(_q(8))
    theirs: list[Any] = []
    th = threading.Thread(target=lambda: theirs.append(_prepare(_q(8))))
    th.start()
    th.join()
    assert theirs[0] is not mine and len(fake.calls["prepare"]) == 2  # a cuDNN handle is per thread


# -- the launcher -----------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.permutations([11, 12, 13, 14, 15]))
def test_raw_order_places_every_pointer(backend: list[int]) -> None:
    ours = [11, 12, 13, 14, 15]
    pos = cc.raw_order(ours, backend)
    assert pos is not None and [ours[i] for i in pos] == backend


def test_raw_order_refuses_a_different_set() -> None:
    assert cc.raw_order([1, 2, 3], [1, 2, 3, 4]) is None  # a slot the caller does not fill (a scalar)
    assert cc.raw_order([1, 2, 4], [1, 2, 3]) is None
    assert cc.raw_order([1, 1, 2], [1, 1, 2]) is None


def test_first_working_falls_back_once_and_keeps_its_choice() -> None:
    tried: list[str] = []

    def no(*a: Any) -> None:
        tried.append("no")
        raise TypeError("this frontend has no such form")

    def yes(*a: Any) -> int:
        tried.append("yes")
        return sum(a)

    call = cc.FirstWorking([no, yes])
    assert call(1, 2) == 3 and call(3, 4) == 7
    assert tried == ["no", "yes", "yes"] and call.chosen is yes


def test_first_working_raises_the_last_error_and_never_switches_later() -> None:
    def bad(*a: Any) -> None:
        raise RuntimeError("execution failed")

    with pytest.raises(RuntimeError, match="execution failed"):
        cc.FirstWorking([bad, bad])()
    state = {"fail": False}

    def flaky(*a: Any) -> str:
        if state["fail"]:
            raise RuntimeError("cuDNN status")
        return "ran"

    call = cc.FirstWorking([flaky, lambda: "other"])
    assert call() == "ran"
    state["fail"] = True
    with pytest.raises(RuntimeError, match="cuDNN status"):
        call()  # a later failure is the kernel's: reported, not retried in another form


class _Tensor:
    def __init__(self, uid: int) -> None:
        self._uid = uid

    def get_uid(self) -> int:
        return self._uid


class _Lowered:
    def __init__(self, order: list[int]) -> None:
        self.order, self.raw_calls = order, []  # type: ignore[var-annotated]

    def _prepare_variant_pack_template(self) -> None:
        pass

    def _get_variant_pack_uids_sorted(self) -> list[int]:
        return self.order

    def _execute_with_raw_ptrs(self, address: int, n: int, ws: int, handle: int, index: int) -> None:
        self.raw_calls.append((list((ctypes.c_int64 * n).from_address(address)), ws, handle, index))


class _Graph:
    def __init__(self, lowered: Any = None, engine: Any = None, int_keys: bool = True) -> None:
        self._lowered_graph, self.selected_engine, self.int_keys = lowered, engine, int_keys
        self._plans, self._plan_index, self.calls = [0], 0, []  # type: ignore[var-annotated]

    def _materialize_backend_plan(self, index: int) -> Any:
        return types.SimpleNamespace(cpp_index=3)

    def execute(self, pack: dict[Any, int], ws: Any, handle: Any = None) -> None:
        if not self.int_keys and any(isinstance(k, int) for k in pack):
            raise TypeError("incompatible function arguments")
        self.calls.append((pack, ws, handle))


def _frontend(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    # A frontend of this version without a handle object (the handle is an int), even where the real one loaded.
    monkeypatch.setitem(sys.modules, "cudnn", types.SimpleNamespace(__version__=version))
    monkeypatch.setitem(sys.modules, "cudnn._handle", None)


def _launch_4(monkeypatch: pytest.MonkeyPatch, version: str) -> tuple[Any, Any, Any]:
    # (the lowered graph, the graph, the launcher) after one launch of four tensors whose backend order is 3, 1, 4, 2
    _frontend(monkeypatch, version)
    low = _Lowered([3, 1, 4, 2])
    g = _Graph(low)
    run = cc.launcher(g, (_Tensor(1), _Tensor(2), _Tensor(3), _Tensor(4)), 77, 5000)
    run(100, 200, 300, 400)
    return low, g, run


def test_launcher_hands_the_backend_its_order(monkeypatch: pytest.MonkeyPatch) -> None:
    low, g, run = _launch_4(monkeypatch, "1.32.0")
    assert low.raw_calls == [([300, 100, 400, 200], 5000, 77, 3)] and g.calls == []
    assert run.chosen is not None and run.chosen.__name__ == "execute_raw"


def test_a_frontend_release_not_verified_takes_the_public_execute(monkeypatch: pytest.MonkeyPatch) -> None:
    low, g, run = _launch_4(monkeypatch, "1.33.0")
    assert low.raw_calls == [] and g.calls == [({1: 100, 2: 200, 3: 300, 4: 400}, 5000, 77)]
    assert run.chosen is not None and run.chosen.__name__ == "execute_uids"


def test_launcher_uses_the_public_execute_when_the_raw_form_does_not_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    _frontend(monkeypatch, "1.32.0")
    tensors = (_Tensor(1), _Tensor(2), _Tensor(3), _Tensor(4))
    for g in (_Graph(_Lowered([1, 2, 3, 4, 9])),  # a slot the caller does not fill
              _Graph(_Lowered([1, 2, 3, 4]), engine="python engine"),  # not a cuDNN-backend plan
              _Graph(None)):  # a frontend without a lowered graph
        cc.launcher(g, tensors, 77, 0)(100, 200, 300, 400)
        assert g.calls == [({1: 100, 2: 200, 3: 300, 4: 400}, None, 77)]
        assert g._lowered_graph is None or g._lowered_graph.raw_calls == []
    old = _Graph(None, int_keys=False)  # a frontend that takes only its tensors as keys
    run = cc.launcher(old, tensors, 77, 64)
    run(100, 200, 300, 400)
    run(500, 600, 700, 800)
    assert [dict(zip([t.get_uid() for t in p], p.values(), strict=True)) for p, _, _ in old.calls] == [
        {1: 100, 2: 200, 3: 300, 4: 400}, {1: 500, 2: 600, 3: 700, 4: 800}]
    assert [ws for _, ws, _ in old.calls] == [64, 64] and run.chosen.__name__ == "execute_tensors"
