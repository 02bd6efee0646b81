"""Neural-network ops beyond the standard: scaled-dot-product attention and the blocks around it
(softmax, log_softmax, logsumexp, layer_norm, rms_norm, gelu, silu; semantics in
unarray/_backends/_nn.py, each backend's fused kernels in its package)."""

from __future__ import annotations

import sys as _sys
from functools import partial as _partial
from typing import Any

from unarray import _axes, _docs
from unarray import _nn_args as _args
from unarray._dispatch import BY_TYPE as _BY_TYPE
from unarray._dispatch import fail as _fail
from unarray._dispatch import many as _many
from unarray._dispatch import one as _one
from unarray._dispatch import run_as_written as _run_as_written
from unarray._errors import DTypeError
from unarray._explanation import PLANNERS
from unarray._lending import attention_plan as _attention_plan
from unarray._names import public_dir as _public_dir
from unarray._precision import resolve as _resolve
from unarray._typing import A, Array

__all__ = ["gelu", "layer_norm", "log_softmax", "logsumexp", "rms_norm", "scaled_dot_product_attention", "silu",
           "softmax"]

__dir__ = _partial(_public_dir, __all__)

_OP = "scaled_dot_product_attention"
_FLOATS = _args.FLOATS


@_args.keywords(3, f"pass mask=... ({_args.their('attn_mask')}), is_causal=..., scale=...; there is no dropout")
def scaled_dot_product_attention(
    q: A, k: Array, v: Array, /, *, mask: Array | None = None, is_causal: bool = False,
    window: int | tuple[int | None, int | None] | None = None,
    segment_ids: Array | tuple[Array, Array] | None = None, scale: float | None = None, layout: str = "bhsd",
    precision: str | None = None,
) -> A:
    """Scaled-dot-product attention ``softmax(q @ k^T * scale + mask) @ v`` on the inputs' fastest kernel.

    Shape legend (``*B`` is any number of batch dimensions, the same for ``q``, ``k`` and ``v``):

    - ``Hq``: number of query heads; ``Hk``: number of key/value heads (``Hq % Hk == 0``;
      ``Hq != Hk`` is grouped-query attention: query head ``h`` reads key/value head ``h // (Hq // Hk)``)
    - ``Sq``: query sequence length; ``Sk``: key/value sequence length
    - ``D``: query/key head dimension; ``Dv``: value head dimension

    The kernel is chosen per call from dtype, head dimension, mask, layout and device (torch SDPA with
    cuDNN, flash or memory-efficient kernels chosen explicitly; ``jax.nn.dot_product_attention`` with
    cuDNN on GPU; CuPy float16/bfloat16 arrays through cuDNN's SDPA with nvidia-cudnn-frontend, other
    CuPy arrays through torch's kernels zero-copy when torch is imported), and every backend has a blocked
    online-softmax path whose memory grows linearly with the sequence length.
    Each call makes one plan (the route's kernel and the call that enters it): the call runs it, and
    ``ua.explain("scaled_dot_product_attention", q, k, v, ...)`` names that kernel. There is no dropout:
    results are deterministic and agree across backends to the dtype's tolerance.

    Parameters
    ----------
    q : array
        queries, ``(*B, Hq, Sq, D)`` (``layout="bhsd"``) or ``(*B, Sq, Hq, D)`` (``layout="bshd"``).
    k : array
        keys, ``(*B, Hk, Sk, D)`` or ``(*B, Sk, Hk, D)``; same dtype as ``q``.
    v : array
        values, ``(*B, Hk, Sk, Dv)`` or ``(*B, Sk, Hk, Dv)``; same dtype as ``q``.
    mask : array, optional
        ``None``, a boolean array (``True`` = may attend) or an additive floating array
        (added to the scaled scores; ``-inf`` forbids), broadcastable to ``(*B, Hq, Sq, Sk)``
        in either layout.
    is_causal : bool
        query ``i`` attends only keys ``j <= i + (Sk - Sq)``: aligned bottom-right, which is
        the usual lower triangle when ``Sq == Sk``. Combines with ``mask`` (both must allow). A Python
        bool or a NumPy bool scalar; arrays, even 0-d, are refused (one may be a traced value):
        pass ``bool(x)``.
    window : int or (int | None, int | None), optional
        a sliding window, never materialised: query ``i`` at position ``p = i + (Sk - Sq)`` attends keys
        ``p - left <= j <= p + right``; an int ``w`` is ``(w, w)``, ``None`` leaves a side unbounded
        (with ``is_causal``, ``right`` is at most 0). Key blocks outside every row's window are skipped.
    segment_ids : array or (array, array), optional
        integer ids of packed documents: ``(*B, S)`` when ``Sq == Sk``, or the pair ``(q_ids (*B, Sq),
        kv_ids (*B, Sk))``; query ``i`` attends key ``j`` only if their ids are equal. ``*B`` broadcasts to
        the batch dims (no head dim). ``mask``, ``is_causal``, ``window`` and ``segment_ids`` combine.
    scale : float, optional
        multiplies the scores; defaults to ``1 / sqrt(D)``. A finite real number: a Python int or
        float or a NumPy scalar (``np.float32(0.125)``); arrays, even 0-d, are refused (pass
        ``float(x)``), and so is a NaN or infinite scale (``ArgumentError``), which would make every
        score NaN or infinite.
    layout : str
        ``"bhsd"`` (heads before sequence, torch's layout) or ``"bshd"`` (sequence before
        heads, JAX's and flash-attention's layout), taken without transposes.
    precision : str, optional
        precision policy for float32 inputs (``"highest"`` by default; see
        ``ua.precision``). Half-precision inputs always accumulate in float32.

    Returns
    -------
    out : array
        ``(*B, Hq, Sq, Dv)`` (``"bhsd"``) or ``(*B, Sq, Hq, Dv)`` (``"bshd"``), the dtype of ``q``, an
        array of the inputs' library on their device. A query row with no key to attend (fully masked,
        or ``i + Sk - Sq < 0`` under ``is_causal``) is zeros, not NaN. NaN in is NaN out on every
        backend and kernel: a NaN in a row of ``q`` makes that output row NaN; a NaN in an attended key
        or value makes the rows that attend it NaN. Zero-size inputs give the empty result (``Sq``,
        ``Hq`` or ``Dv`` zero) or zeros (``Sk == 0``: no key to attend); ``D == 0`` gives every score 0,
        so each row is the mean of the attended values.

    Raises
    ------
    ShapeError
        ranks, head counts, sequence lengths, head dims, the mask or segment ids do not fit the legend.
    ArgumentTypeError
        ``is_causal`` or ``scale`` is not a Python or NumPy scalar of the right kind, or ``window``
        is not an int, a pair or None.
    ArgumentError
        ``scale`` is NaN or infinite, a ``window`` side is negative, or ``layout`` is unknown.
    DTypeError
        ``q``, ``k``, ``v`` differ in dtype, are not floating, the mask is neither
        boolean nor floating, or segment ids are not integers.

    Examples
    --------
    >>> import numpy as np, unarray as ua
    >>> rng = np.random.default_rng(0)
    >>> q = rng.standard_normal((2, 8, 5, 16), dtype=np.float32)  # (B, Hq, Sq, D)
    >>> k = rng.standard_normal((2, 2, 7, 16), dtype=np.float32)  # (B, Hk, Sk, D): grouped-query
    >>> v = rng.standard_normal((2, 2, 7, 4), dtype=np.float32)   # (B, Hk, Sk, Dv)
    >>> ua.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    (2, 8, 5, 4)
    >>> mask = np.zeros((5, 7), dtype=bool)  # nothing may be attended
    >>> float(np.abs(ua.scaled_dot_product_attention(q, k, v, mask=mask)).max())
    0.0
    """
    key, b, again = _args.route(q, k, v, mask, is_causal, window, segment_ids, scale, layout, precision)
    if again is None:
        b, plan = _plan_attention(q, k, v, mask=mask, is_causal=is_causal, window=window, segment_ids=segment_ids,
                                  scale=scale, layout=layout, precision=precision)
        _args.remember(key, b, plan)
    try:  # frame(_OP): its except clause is the template's (tools/gen_frontend.py)
        return plan.run() if again is None else again(q, k, v)
    except Exception as e:
        raise _fail(_OP, b, e) from e


def _plan_attention(q: Any, k: Any, v: Any, /, *, mask: Any = None, is_causal: bool = False, window: Any = None,
                    segment_ids: Any = None, scale: float | None = None, layout: str = "bhsd",
                    precision: str | None = None) -> tuple[Any, Any]:
    # The backend and the plan of the call: the route's kernel, which the call enters and ua.explain names.
    # [q_ids, kv_ids]: one array stands for both (self-attention)
    pair = isinstance(segment_ids, (tuple, list)) and len(segment_ids) == 2
    t, ids = type(q), list(segment_ids) if pair else [segment_ids, segment_ids]
    b = _BY_TYPE.get(t) if (type(k) is t and type(v) is t and all(a is None or type(a) is t for a in (mask, *ids))) \
        else None
    if b is None:
        b, (q, k, v, mask, *ids) = _many(_OP, (q, k, v, mask, *ids), skip_none=True)
    s, spec = _args.check_attention(b.name, q, k, v, mask, is_causal, scale, layout, b.dtype_name, window, ids)
    try:  # frame(_OP): its except clause is the template's (tools/gen_frontend.py)
        return b, _attention_plan(b, q, k, v, mask, spec, s, layout, _resolve(precision))
    except Exception as e:
        raise _fail(_OP, b, e) from e


# -- the building blocks around attention (semantics and kernels: unarray/_backends/_nn.py) -------------
def _float_input(op: str, x: Any) -> Any:
    b = _BY_TYPE.get(type(x)) or _one(x, op)
    _check_float(op, b, x)
    return b


def _check_float(op: str, b: Any, x: Any) -> None:
    name = b.dtype_name(x)
    if name not in _FLOATS:
        raise DTypeError(f"{op} takes a real floating-point array, got {name}; cast first (ua.astype(x, ua.float32))",
                         op=op, backend=b.name)


def _with_params(op: str, x: Any, params: dict[str, Any]) -> tuple[Any, Any, list[Any], str]:
    # x with its weight and bias: one library (the leader rule), x floating, the result's promoted dtype.
    if all(p is None for p in params.values()):
        b = _float_input(op, x)
        return b, x, list(params.values()), b.dtype_name(x)
    b, (x, *rest) = _many(op, (x, *params.values()), skip_none=True)
    _check_float(op, b, x)
    return b, x, rest, _args.result_dtype(op, b, x, dict(zip(params, rest, strict=True)))


def _plan(op: str, b: Any, *args: Any) -> tuple[Any, Any]:
    # The backend and the plan of the call (the kernel it enters, a callable that ua.explain names, and the call).
    try:  # frame(f"nn.{op}"): its except clause is the template's (tools/gen_frontend.py)
        return b, getattr(b, f"nn_{op}")(*args)
    except Exception as e:
        raise _fail(f"nn.{op}", b, e) from e


def _run(op: str, b: Any, plan: Any) -> Any:
    # NaN and infinities in, NaN out is these functions' stated result: NumPy's floating-point warnings
    # about producing it are silenced (other libraries give none).
    try:  # frame(f"nn.{op}"): its except clause is the template's (tools/gen_frontend.py)
        if b.quiet is not None:
            with b.quiet():
                return plan.run()
        return plan.run()
    except Exception as e:
        raise _fail(f"nn.{op}", b, e) from e


def _plan_softmax(x: Any, /, *, axis: int = -1) -> tuple[Any, Any]:
    b = _float_input("nn.softmax", x)
    return _plan("softmax", b, x, _axes.one("nn.softmax", b, x, axis))


def _plan_log_softmax(x: Any, /, *, axis: int = -1) -> tuple[Any, Any]:
    b = _float_input("nn.log_softmax", x)
    return _plan("log_softmax", b, x, _axes.one("nn.log_softmax", b, x, axis))


def _plan_logsumexp(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False
                    ) -> tuple[Any, Any]:
    b = _float_input("nn.logsumexp", x)
    axes = tuple(range(len(x.shape))) if axis is None else _axes.many("nn.logsumexp", b, x, axis)
    return _plan("logsumexp", b, x, (axes,) if isinstance(axes, int) else axes, keepdims)


def _norm_axes(op: str, b: Any, x: Any, axis: int | tuple[int, ...]) -> tuple[int, ...]:
    axes = _axes.many(op, b, x, axis)
    return (axes,) if isinstance(axes, int) else tuple(sorted(axes))


def _plan_layer_norm(x: Any, /, *, axis: int | tuple[int, ...] = -1, weight: Any = None, bias: Any = None,
                     eps: float = 1e-5) -> tuple[Any, Any]:
    b, x, (weight, bias), out = _with_params("nn.layer_norm", x, {"weight": weight, "bias": bias})
    e = _args.check_eps("nn.layer_norm", b.name, eps)
    return _plan("layer_norm", b, x, _norm_axes("nn.layer_norm", b, x, axis), weight, bias, e, out)


def _plan_rms_norm(x: Any, /, *, axis: int | tuple[int, ...] = -1, weight: Any = None, eps: float | None = None
                   ) -> tuple[Any, Any]:
    b, x, (weight,), out = _with_params("nn.rms_norm", x, {"weight": weight})
    e = _args.check_eps("nn.rms_norm", b.name, eps, allow_none=True)
    return _plan("rms_norm", b, x, _norm_axes("nn.rms_norm", b, x, axis), weight, e, out)


def _plan_gelu(x: Any, /, *, approximate: bool = False) -> tuple[Any, Any]:
    b = _float_input("nn.gelu", x)
    tanh = _args.check_bool("nn.gelu", b.name, "approximate", approximate,
                            f"pass approximate=True for {_args.their('approximate')}='tanh', False for 'none'")
    return _plan("gelu", b, x, tanh)


def _plan_silu(x: Any, /) -> tuple[Any, Any]:
    return _plan("silu", _float_input("nn.silu", x), x)


@_args.keywords(1, f"pass axis=... ({_args.their('dim')})")
def softmax(x: A, /, *, axis: int = -1) -> A:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``, on the backend's own kernel where it has one.

        Parameters
        ----------
        x : array
            A real floating-point array. float16 and bfloat16 are computed in float32 and the result rounded
            once to their dtype (as torch's kernels do), on every backend.
        {axis_normalised}

        Returns
        -------
        out : array
            An array like ``x`` whose slices along ``axis`` sum to 1. A slice holding a NaN or ``+inf``, or
            only ``-inf``, is NaN throughout (as torch and JAX give); ``-inf`` elsewhere gives 0.
            ``ua.explain("nn.softmax", x)`` names the kernel the call enters.

        Raises
        ------
        {unknown_x}
        {x_not_real_float}
        {axis_out_of_range}
        ArgumentTypeError
            more than one positional argument (``axis`` is keyword-only: torch's ``dim``).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.softmax(np.array([0.0, np.log(3.0), -np.inf])).round(6)
        array([0.25, 0.75, 0.  ])
    """
    return _run("softmax", *_plan_softmax(x, axis=axis))


@_args.keywords(1, f"pass axis=... ({_args.their('dim')})")
def log_softmax(x: A, /, *, axis: int = -1) -> A:
    """``(x - max) - log(sum(exp(x - max)))`` along ``axis``: the logarithm of :func:`softmax`, computed stably.

        Parameters
        ----------
        x : array
            A real floating-point array; float16 and bfloat16 are computed in float32 and rounded once.
        {axis_normalised}

        Returns
        -------
        out : array
            An array like ``x``. NaN where :func:`softmax` is NaN; ``-inf`` where ``x`` is ``-inf`` in a slice
            with a finite maximum.

        Raises
        ------
        {unknown_x}
        {x_not_real_float}
        {axis_out_of_range}
        ArgumentTypeError
            more than one positional argument (``axis`` is keyword-only: torch's ``dim``).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.log_softmax(np.array([0.0, 0.0])).round(6)
        array([-0.693147, -0.693147])
    """
    return _run("log_softmax", *_plan_log_softmax(x, axis=axis))


@_args.keywords(1, f"pass axis=... ({_args.their('dim')}) and keepdims=... ({_args.their('keepdim')})")
def logsumexp(x: A, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> A:
    """``log(sum(exp(x)))`` over ``axis`` (all axes when ``None``), without overflow.

        Parameters
        ----------
        x : array
            A real floating-point array; float16 and bfloat16 are summed in float32 and rounded once.
        axis : int, tuple of int or None
            Axis or axes to reduce; ``None`` (the default) reduces all. ``()`` reduces over no axis, as the
            standard's reductions do: every element is a slice of its own, so the result equals ``x``.
        {keepdims}

        Returns
        -------
        out : array
            The reduced values: ``-inf`` for a slice of ``-inf`` or an empty one, ``+inf`` where a ``+inf`` is
            present, NaN where a NaN is.

        Raises
        ------
        {unknown_x}
        {x_not_real_float}
        {axis_repeated}
        ArgumentTypeError
            more than one positional argument (``axis`` and ``keepdims`` are keyword-only).

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> float(ua.nn.logsumexp(np.array([1000.0, 1000.0])))
        1000.6931471805599
    """
    return _run("logsumexp", *_plan_logsumexp(x, axis=axis, keepdims=keepdims))


@_args.keywords(1, f"pass axis=... for the normalised axes (normalized_shape is {_args.owner('normalized_shape')}: "
                   "axis=(-2, -1) for the last two), weight=..., bias=..., eps=...")
def layer_norm(x: A, /, *, axis: int | tuple[int, ...] = -1, weight: Array | None = None,
               bias: Array | None = None, eps: float = 1e-5) -> A:
    """``(x - mean) / sqrt(var + eps) * weight + bias``, the mean and (biased) variance over ``axis``.

        Parameters
        ----------
        x : array
            A real floating-point array. float16 and bfloat16 are computed in float32 (the mean and variance
            accumulate there, as torch's kernels do) and the result is rounded once, on every backend.
        axis : int or tuple of int
            The axes normalised over (torch's fused kernel runs where they are the trailing ones). Default ``-1``.
            ``()`` normalises over no axis: every element is a slice of its own (its mean is itself, its
            variance 0), so the result is ``0 * weight + bias`` (NaN where ``x`` is not finite).
        {weight}
        bias : array, optional
            A real floating array broadcast against ``x`` and added; ``None`` is 0.
        eps : float
            Added to the variance: a finite real number ``>= 0`` (Python or NumPy scalar). Default ``1e-5``.

        Returns
        -------
        out : array
            An array of ``x``'s library and device whose dtype is the standard's promotion of ``x``, ``weight``
            and ``bias`` (as the composition ``normalised * weight + bias`` has): float32 ``x`` with a float64
            ``weight`` gives float64. The normalisation runs in that dtype (float32 where it is half).

        Raises
        ------
        {unknown_x}
        DTypeError
            ``x`` is not real floating-point (cast first, ``ua.astype(x, ua.float32)``), or ``weight`` or
            ``bias`` is not floating or does not promote with ``x`` (float16 with bfloat16).
        {axis_repeated}
        ArgumentTypeError
            ``eps`` is not a real number, or more than one positional argument (the rest are keyword-only).
        {eps_invalid}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.layer_norm(np.array([[1.0, 3.0]]), eps=0.0)
        array([[-1.,  1.]])
    """
    return _run("layer_norm", *_plan_layer_norm(x, axis=axis, weight=weight, bias=bias, eps=eps))


@_args.keywords(1, f"pass axis=... for the normalised axes (normalized_shape is {_args.owner('normalized_shape')}: "
                   "axis=(-2, -1) for the last two), weight=..., eps=...")
def rms_norm(x: A, /, *, axis: int | tuple[int, ...] = -1, weight: Array | None = None,
             eps: float | None = None) -> A:
    """``x / sqrt(mean(x**2) + eps) * weight`` over ``axis``; ``eps=None`` is ``x``'s dtype's ``finfo(...).eps``.

        Parameters
        ----------
        x : array
            A real floating-point array; float16 and bfloat16 are computed in float32 (the mean square
            accumulates there) and the result rounded once, on every backend.
        axis : int or tuple of int
            The axes normalised over. Default ``-1``. ``()`` normalises every element on its own:
            ``x / sqrt(x**2 + eps)``.
        {weight}
        eps : float, optional
            Added to the mean square: a finite real number ``>= 0``; by default the machine epsilon of ``x``'s
            dtype (``2**-7`` for bfloat16, ``2**-10`` for float16, ``2**-23`` for float32).

        Returns
        -------
        out : array
            An array of ``x``'s library and device, of the standard's promoted dtype of ``x`` and ``weight``.

        Raises
        ------
        {unknown_x}
        DTypeError
            ``x`` is not real floating-point (cast first, ``ua.astype(x, ua.float32)``), or ``weight`` is not
            floating or does not promote with ``x``.
        {axis_repeated}
        ArgumentTypeError
            ``eps`` is not a real number or None, or more than one positional argument.
        {eps_invalid}

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.rms_norm(np.array([3.0, 4.0]), eps=0.0).round(6)
        array([0.848528, 1.131371])
    """
    return _run("rms_norm", *_plan_rms_norm(x, axis=axis, weight=weight, eps=eps))


@_args.keywords(1, f"pass approximate=True for {_args.their('approximate')}='tanh'")
def gelu(x: A, /, *, approximate: bool = False) -> A:
    """``x * (1 + erf(x / sqrt(2))) / 2``; ``approximate=True`` takes the tanh form (JAX's default, not unarray's).

        Parameters
        ----------
        x : array
            A real floating-point array; float16 and bfloat16 are computed in float32 and rounded once.
        approximate : bool
            Use ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``. Default ``False`` (exact).
            A bool: torch's strings (``'tanh'``, ``'none'``) are refused, both being true.

        Returns
        -------
        out : array
            An array like ``x``, of its library and device. The formula in IEEE arithmetic: ``+inf`` gives
            ``+inf``; ``-inf`` gives NaN (``-inf * 0``) and NaN gives NaN, in both forms on every backend.

        Raises
        ------
        {unknown_x}
        {x_not_real_float}
        ArgumentTypeError
            ``approximate`` is not a bool, or more than one positional argument.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.gelu(np.array([-1.0, 0.0, 1.0])).round(6)
        array([-0.158655,  0.      ,  0.841345])
    """
    return _run("gelu", *_plan_gelu(x, approximate=approximate))


@_args.keywords(1, f"silu takes no options (results are new arrays: {_args.their('inplace')} has no counterpart)")
def silu(x: A, /) -> A:
    """``x * sigmoid(x)`` (swish).

        Parameters
        ----------
        x : array
            A real floating-point array; float16 and bfloat16 are computed in float32 and rounded once.

        Returns
        -------
        out : array
            An array like ``x``, of its library and device: ``x / (1 + exp(-x))`` in IEEE arithmetic
            (``+inf`` gives ``+inf``; ``-inf`` and NaN give NaN).

        Raises
        ------
        {unknown_x}
        {x_not_real_float}
        ArgumentTypeError
            more than one positional argument.

        Examples
        --------
        >>> import numpy as np, unarray as ua
        >>> ua.nn.silu(np.array([0.0, 1.0])).round(6)
        array([0.      , 0.731059])
    """
    return _run("silu", *_plan_silu(x))


# ua.explain("nn.<op>", ...) prints the kernel of the plan the call runs.
PLANNERS.update({"nn.softmax": _plan_softmax, "nn.log_softmax": _plan_log_softmax, "nn.logsumexp": _plan_logsumexp,
                 "nn.layer_norm": _plan_layer_norm, "nn.rms_norm": _plan_rms_norm, "nn.gelu": _plan_gelu,
                 "nn.silu": _plan_silu, _OP: _plan_attention, f"nn.{_OP}": _plan_attention})

# tf.function runs this module's functions as written, however it was imported (_dispatch.run_as_written).
_run_as_written(_sys.modules[__name__])

_docs.fill(globals())
