"""torch's float32 precision state, read completely (tests only): every getter, and the raw
``"none"`` slots, found by probing the parents and then writing the probed values back.

Run by the precision and stress tests, in fresh processes and after threads join.
"""

from __future__ import annotations

from typing import Any

PAIRS = [("generic", "all"), ("cuda", "all"), ("cuda", "matmul"), ("cuda", "conv"), ("cuda", "rnn"),
         ("mkldnn", "all"), ("mkldnn", "matmul"), ("mkldnn", "conv"), ("mkldnn", "rnn")]

# (label, statement) ways a user sets torch's precision; each is run with torch imported as `torch`.
USER_APIS = [
    ("cuda_allow_tf32_on", "torch.backends.cuda.matmul.allow_tf32 = True"),
    ("cuda_allow_tf32_off", "torch.backends.cuda.matmul.allow_tf32 = False"),
    ("cudnn_allow_tf32_off", "torch.backends.cudnn.allow_tf32 = False"),
    ("matmul_precision_medium", "torch.set_float32_matmul_precision('medium')"),
    ("matmul_precision_high", "torch.set_float32_matmul_precision('high')"),
    ("generic_tf32", "torch.backends.fp32_precision = 'tf32'"),
    ("generic_ieee", "torch.backends.fp32_precision = 'ieee'"),
    ("cuda_matmul_tf32", "torch.backends.cuda.matmul.fp32_precision = 'tf32'"),
    ("cuda_matmul_none", "torch.backends.cuda.matmul.fp32_precision = 'none'"),
    ("mkldnn_matmul_bf16", "torch.backends.mkldnn.matmul.fp32_precision = 'bf16'"),
    ("mkldnn_matmul_tf32", "torch.backends.mkldnn.matmul.fp32_precision = 'tf32'"),
    ("mkldnn_all_bf16", "torch._C._set_fp32_precision_setter('mkldnn', 'all', 'bf16')"),
    ("cuda_all_ieee", "torch._C._set_fp32_precision_setter('cuda', 'all', 'ieee')"),
    ("cudnn_conv_ieee", "torch.backends.cudnn.conv.fp32_precision = 'ieee'"),
]


def _read(torch: Any) -> tuple[Any, ...]:
    c = torch._C
    out: list[Any] = [c._get_fp32_precision_getter(b, o) for b, o in PAIRS]
    for getter in (c._get_float32_matmul_precision, c._get_cublas_allow_tf32, c._get_cudnn_allow_tf32):
        try:
            out.append(getter())
        except RuntimeError:
            out.append("raises")
    return tuple(out)


def fingerprint(torch: Any) -> tuple[Any, ...]:
    """Every reading, then the readings with each parent slot probed (which tells a raw "none"
    from an explicit value equal to the parent's); the state is left as it was found only when
    its raw values are what the probes found, so call it last."""
    c = torch._C
    seen = [_read(torch)]
    for slot in (("generic", "all"), ("cuda", "all"), ("mkldnn", "all")):
        for value in ("ieee", "tf32"):
            c._set_fp32_precision_setter(*slot, value)
            seen.append(_read(torch))
    return tuple(seen)

