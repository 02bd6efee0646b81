"""TensorFlow-specific behaviour: tf.Variable inputs, tf.function, the TF32 switch, holes, and every
place where unarray corrects TensorFlow's own semantics to the standard's."""

from __future__ import annotations

import math

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import unarray as ua  # noqa: E402
from unarray._backends import handoff  # noqa: E402
from unarray._backends.tensorflow import backend as tfb  # noqa: E402
from unarray._backends.tensorflow import linalg as tf_linalg  # noqa: E402


def _np(x: object) -> np.ndarray:
    return x.numpy()  # type: ignore[attr-defined]


# -- native in, native out ---------------------------------------------------------------------------
def test_variable_inputs_dispatch_and_return_tensors() -> None:
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert ua.backend_of(v) == "tensorflow"
    out = ua.matmul(v, v)
    assert isinstance(out, tf.Tensor)
    np.testing.assert_allclose(_np(out), np.array([[7.0, 10.0], [15.0, 22.0]]))
    assert int(ua.argmax(v)) == 3
    np.testing.assert_allclose(_np(ua.sum(v, axis=0)), [4.0, 6.0])
    mixed = ua.add(v, tf.constant([[1.0, 1.0], [1.0, 1.0]]))
    np.testing.assert_allclose(_np(mixed), [[2.0, 3.0], [4.0, 5.0]])


def test_inside_tf_function_traces_once_and_sees_symbolic_tensors() -> None:
    seen: list[bool] = []

    @tf.function
    def f(a: object) -> object:
        seen.append(ua.backend_of(a) == "tensorflow" and tfb.BACKEND.is_tracer(a))
        m = ua.matmul(a, ua.matrix_transpose(a))
        return ua.argmax(m, axis=-1), ua.var(a, axis=0, correction=1), ua.max(a, axis=1)

    x = tf.constant([[1.0, 5.0, 5.0], [2.0, float("nan"), 0.0]])
    idx, var, mx = f(x)
    f(x + 1.0)  # same signature: no retrace
    assert seen == [True]
    ref = np.array([[1.0, 5.0, 5.0], [2.0, np.nan, 0.0]])
    np.testing.assert_array_equal(_np(idx), np.argmax(ref @ ref.T, axis=-1))
    np.testing.assert_allclose(_np(var), np.var(ref, axis=0, ddof=1), equal_nan=True)
    np.testing.assert_array_equal(np.isnan(_np(mx)), [False, True])


def test_handoff_of_a_symbolic_tensor_is_refused() -> None:
    @tf.function
    def f(a: object) -> object:
        with pytest.raises(ua.TracerHandoffError):
            ua.to(a, "numpy")
        return a

    f(tf.constant([1.0]))


def test_autograph_does_not_convert_unarray() -> None:
    from tensorflow.python.autograph.core import config

    assert any(getattr(r, "_prefix", "") == "unarray" for r in config.CONVERSION_RULES)


# -- TF32 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", ["highest", "tf32"])
def test_matmul_leaves_the_tf32_switch_as_it_was(policy: str) -> None:
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    a = tf.random.stateless_normal([8, 8], seed=[1, 2])
    out = ua.matmul(a, a, precision=policy)
    assert tf.config.experimental.tensor_float_32_execution_enabled() == before
    np.testing.assert_allclose(_np(out), _np(a).astype(np.float64) @ _np(a).astype(np.float64), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("initial", [True, False])
def test_tf32_scope_switches_on_gpu_and_restores(initial: bool) -> None:
    saved = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(initial)
    try:
        with tfb.tf32_scope("highest", on_gpu=True):
            assert tf.config.experimental.tensor_float_32_execution_enabled() is False
        assert tf.config.experimental.tensor_float_32_execution_enabled() is initial
        with tfb.tf32_scope("tf32", on_gpu=True):
            assert tf.config.experimental.tensor_float_32_execution_enabled() is True
        assert tf.config.experimental.tensor_float_32_execution_enabled() is initial
        with tfb.tf32_scope("highest", on_gpu=False):  # the CPU: nothing is touched
            assert tf.config.experimental.tensor_float_32_execution_enabled() is initial
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(saved)


def test_tf32_scope_restores_after_an_error() -> None:
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    with pytest.raises(RuntimeError), tfb.tf32_scope("highest" if before else "tf32", on_gpu=True):
        raise RuntimeError("boom")
    assert tf.config.experimental.tensor_float_32_execution_enabled() == before


def test_explain_reports_precision() -> None:
    x = tf.ones([2, 2])
    assert "float32" in ua.explain("matmul", x, x).precision


# -- devices, dlpack ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "expected"), [
    ("/job:localhost/replica:0/task:0/device:GPU:1", ua.Device("cuda", 1)),
    ("/job:localhost/replica:0/task:0/device:CPU:0", ua.Device("cpu")),
    ("/device:TPU:3", ua.Device("tpu", 3)),
    ("", ua.Device("cpu")),
])
def test_device_strings(spec: str, expected: ua.Device) -> None:
    assert tfb.device_from_tf(spec) == expected


def test_native_device_round_trip() -> None:
    assert tfb.tf_device_string(ua.Device("cuda", 2)) == "/device:GPU:2"
    assert tfb.BACKEND.native_device("cpu") == "/device:CPU:0"
    assert ua.device(tf.constant([1.0])) == ua.Device("cpu")


def test_dlpack_from_numpy_and_back() -> None:
    a = np.arange(6.0).reshape(2, 3)
    t = ua.to(a, "tensorflow")
    assert isinstance(t, tf.Tensor)
    np.testing.assert_array_equal(_np(t), a)
    back = ua.to(t, "numpy")
    np.testing.assert_array_equal(back, a)
    assert handoff("tensorflow").data_ptr(t) > 0


# -- holes ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", tf_linalg.HALF_HOLES)
def test_half_precision_linalg_is_an_explicit_hole(op: str) -> None:
    x = tf.eye(3, dtype=tf.float16)
    fn = getattr(ua.linalg, op)
    args = (x, -1) if op == "matrix_power" else (x, x) if op == "solve" else (x,)
    with pytest.raises(ua.UnsupportedError, match="float32"):
        fn(*args)


def test_every_front_end_name_is_implemented_or_a_hole() -> None:
    b = tfb.BACKEND
    missing = []
    for name in ua.__all__:
        fn = getattr(ua, name)
        if not callable(fn) or isinstance(fn, type) or name[0].isupper() or name in _FRONT_END_ONLY:
            continue
        if name not in b.holes and not hasattr(b.xp, name) and not hasattr(b, _SERVED_BY.get(name, name)):
            missing.append(name)
    for ns in ("linalg", "fft"):
        for name in getattr(ua, ns).__all__:
            if f"{ns}_{name}" not in b.holes and not hasattr(getattr(b.xp, ns), name):
                missing.append(f"{ns}.{name}")
    assert missing == []


# A front-end name whose backend method has another name: attention is planned (ua.explain names the plan's kernel).
_SERVED_BY = {"scaled_dot_product_attention": "attention_plan"}
_FRONT_END_ONLY = {"backend_of", "backends", "device", "explain", "from_dlpack", "get_precision", "namespace",
                   "array_namespace", "checking_readonly", "verify_readonly",
                   "precision", "stats", "to", "use", "broadcast_shapes", "isdtype", "can_cast", "fft", "linalg",
                   "bool", "ascontiguousarray"}


def test_a_standard_op_tensorflow_lacks_is_both_unsupported_and_attribute_error() -> None:
    # A function of the standard that TensorFlow's namespace lacks: unsupported, and absent to hasattr (feature
    # detection); a name outside the standard is a plain AttributeError (a misspelling, not a gap).
    with pytest.raises(ua.UnsupportedError):
        tfb.BACKEND.broadcast_shapes  # noqa: B018
    assert not hasattr(tfb.BACKEND, "broadcast_shapes")
    with pytest.raises(AttributeError) as e:
        tfb.BACKEND.no_such_op  # noqa: B018
    assert not isinstance(e.value, ua.UnsupportedError)


# -- corrected deviations ------------------------------------------------------------------------------
def test_promotion_is_the_standards_not_numpys() -> None:
    i32, f32 = tf.constant([1, 2], tf.int32), tf.constant([0.5, 0.5], tf.float32)
    assert ua.add(i32, f32).dtype == tf.float32  # tf.experimental.numpy gives float64
    assert ua.add(tf.constant([1], tf.int8), tf.constant([1], tf.uint8)).dtype == tf.int16
    assert ua.multiply(f32, 2).dtype == tf.float32  # a Python scalar takes the array's dtype
    assert ua.add(tf.constant([True]), 1).dtype == tf.int64
    assert ua.asarray([1, 2], backend="tensorflow").dtype == tf.int64  # tf.constant would give int32


def test_matmul_one_d_and_broadcast_batches() -> None:
    a = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    b = np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)
    v = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(_np(ua.matmul(tf.constant(v), tf.constant(b))), v @ b)
    np.testing.assert_allclose(_np(ua.matmul(tf.constant(a), tf.constant(v))), a @ v)
    np.testing.assert_allclose(_np(ua.matmul(tf.constant(a[None]), tf.constant(b))), a[None] @ b)
    assert ua.matmul(tf.constant(v), tf.constant(v)).shape == ()
    ints = np.array([[1, 2], [3, 4]], np.uint8)
    np.testing.assert_array_equal(_np(ua.matmul(tf.constant(ints), tf.constant(ints))), ints @ ints)
    with pytest.raises(ua.ShapeError):
        ua.matmul(tf.constant(a), tf.constant(a))


def test_var_std_correction() -> None:
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 9.0]])
    for c in (0, 1, 1.5):
        np.testing.assert_allclose(_np(ua.var(tf.constant(x), axis=1, correction=c)), np.var(x, axis=1, ddof=c))
        np.testing.assert_allclose(_np(ua.std(tf.constant(x), correction=c)), np.std(x, ddof=c))
    assert math.isnan(float(ua.var(tf.constant([1.0]), correction=1)))


def test_floor_divide_and_remainder_follow_python() -> None:
    a = np.array([-7, 7, -7, 7, 0], np.int32)
    b = np.array([2, -2, -2, 2, 3], np.int32)
    np.testing.assert_array_equal(_np(ua.floor_divide(tf.constant(a), tf.constant(b))), a // b)
    np.testing.assert_array_equal(_np(ua.remainder(tf.constant(a), tf.constant(b))), a % b)
    f = np.array([-7.5, 7.5], np.float64)
    np.testing.assert_array_equal(_np(ua.remainder(tf.constant(f), 2.0)), f % 2.0)
    assert ua.divide(tf.constant([1], tf.int32), tf.constant([2], tf.int32)).dtype == tf.float64


def test_argmax_argmin_first_occurrence_and_nan() -> None:
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(_np(ua.argmax(tf.constant(x), axis=1)), np.argmax(x, axis=1))
    np.testing.assert_array_equal(_np(ua.argmin(tf.constant(x), axis=1)), np.argmin(x, axis=1))
    ties = np.zeros(1000, np.float32)
    assert int(ua.argmax(tf.constant(ties))) == 0
    assert ua.argmax(tf.constant(x), axis=1, keepdims=True).shape == (3, 1)


def test_max_min_propagate_nan() -> None:
    x = tf.constant([[1.0, np.nan], [2.0, 3.0]])
    np.testing.assert_array_equal(np.isnan(_np(ua.max(x, axis=1))), [True, False])
    np.testing.assert_array_equal(np.isnan(_np(ua.min(x, axis=1))), [True, False])
    assert math.isnan(float(ua.max(x)))


def test_empty_reductions() -> None:
    e = tf.zeros([0, 3])
    for op in (ua.max, ua.min):
        with pytest.raises(ua.EmptyReductionError):
            op(e, axis=0)
    with pytest.raises(ua.EmptyReductionError):
        ua.argmax(e, axis=0)
    assert ua.max(e, axis=1).shape == (0,)
    assert math.isnan(float(ua.mean(tf.zeros([0]))))
    assert float(ua.sum(tf.zeros([0]))) == 0.0


def test_empty_axis_tuple_reduces_nothing() -> None:
    x = tf.constant([[1, 2], [3, 4]], tf.int32)
    assert ua.sum(x, axis=()).shape == (2, 2)
    assert ua.sum(x, axis=()).dtype == tf.int64
    assert ua.max(x, axis=()).shape == (2, 2)
    np.testing.assert_array_equal(_np(ua.var(tf.cast(x, tf.float32), axis=())), np.zeros((2, 2)))


def test_default_integer_accumulation_and_bool() -> None:
    assert ua.sum(tf.constant([1, 2], tf.int8)).dtype == tf.int64
    assert ua.sum(tf.constant([200, 100], tf.uint8)).dtype == tf.uint64
    assert int(ua.sum(tf.constant([200, 100], tf.uint8))) == 300
    assert int(ua.sum(tf.constant([True, True, False]))) == 2
    assert bool(ua.any(tf.constant([0, 2]))) and not bool(ua.all(tf.constant([0, 2])))
    np.testing.assert_array_equal(_np(ua.cumulative_sum(tf.constant([1, 2, 3]), include_initial=True)),
                                  [0, 1, 3, 6])


def test_sort_is_stable_with_nan_last() -> None:
    x = np.array([3.0, np.nan, 1.0, np.inf, 1.0, -0.0])
    np.testing.assert_array_equal(_np(ua.argsort(tf.constant(x))), np.argsort(x, kind="stable"))
    desc = _np(ua.argsort(tf.constant([1, 3, 1, 3]), descending=True))
    np.testing.assert_array_equal(desc, [1, 3, 0, 2])
    np.testing.assert_array_equal(_np(ua.sort(tf.constant([True, False]))), [False, True])


def test_elementwise_gaps_filled() -> None:
    x = np.array([-0.0, 0.0, -2.5, np.nan], np.float32)
    np.testing.assert_array_equal(_np(ua.signbit(tf.constant(x))), np.signbit(x))
    np.testing.assert_array_equal(_np(ua.copysign(tf.constant([1.0, 1.0]), tf.constant([-0.0, 0.0]))), [-1.0, 1.0])
    np.testing.assert_allclose(_np(ua.hypot(tf.constant([3e30], tf.float32), tf.constant([4e30], tf.float32))),
                               [5e30], rtol=1e-6)
    np.testing.assert_allclose(_np(ua.logaddexp(tf.constant([np.inf, 1.0]), tf.constant([np.inf, 2.0]))),
                               np.logaddexp([np.inf, 1.0], [np.inf, 2.0]))
    np.testing.assert_array_equal(_np(ua.negative(tf.constant([1], tf.uint8))), [255])
    h = np.array([1.0, 0.0], np.float16)
    np.testing.assert_array_equal(_np(ua.nextafter(tf.constant(h), tf.constant(np.float16([2.0, -1.0])))),
                                  np.nextafter(h, np.float16([2.0, -1.0])))
    np.testing.assert_array_equal(_np(ua.bitwise_left_shift(tf.constant([1], tf.int32), 40)), [0])


def test_take_negative_indices_and_unique() -> None:
    x = tf.constant([10, 20, 30])
    np.testing.assert_array_equal(_np(ua.take(x, tf.constant([-1, 0]))), [30, 10])
    res = ua.unique_all(tf.constant([3, 1, 3, 2]))
    np.testing.assert_array_equal(_np(res.values), [1, 2, 3])
    np.testing.assert_array_equal(_np(res.indices), [1, 3, 0])
    np.testing.assert_array_equal(_np(res.inverse_indices), [2, 0, 2, 1])
    np.testing.assert_array_equal(_np(res.counts), [1, 1, 2])
    assert ua.unique_values(tf.constant([np.nan, np.nan])).shape == (2,)  # every NaN is distinct
