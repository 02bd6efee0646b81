"""``scaled_dot_product_attention`` in depth, against the contract of DESIGN.md section 6:
layouts bhsd/bshd, grouped-query heads, boolean and additive masks, bottom-right
aligned causal masking (Sq != Sk), combined mask and causal, explicit scale, batch
dimensions of any rank, and fully masked rows giving zeros."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from unarray.conformance.cases_common import Case, Inputs, Profile, arr


def sdpa_reference(q: Any, k: Any, v: Any, mask: Any = None, is_causal: bool = False, scale: float | None = None,
                   layout: str = "bhsd") -> Any:
    """The float64 reference: softmax(q k^T * scale + mask) v, a row with no key gives zeros."""
    if layout == "bshd":
        q, k, v = (np.swapaxes(t, -3, -2) for t in (q, k, v))
    hq, hk = q.shape[-3], k.shape[-3]
    k = np.repeat(k, hq // hk, axis=-3)
    v = np.repeat(v, hq // hk, axis=-3)
    sq, sk = q.shape[-2], k.shape[-2]
    s = (q @ np.swapaxes(k, -1, -2)) * (1.0 / np.sqrt(q.shape[-1]) if scale is None else scale)
    allowed = np.ones(s.shape, dtype=bool)
    if mask is not None and mask.dtype == np.bool_:
        allowed = allowed & mask
    elif mask is not None:
        s = s + mask
    if is_causal:
        i = np.arange(sq)[:, None]
        j = np.arange(sk)[None, :]
        allowed = allowed & (j <= i + (sk - sq))
    s = np.where(allowed, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(allowed, np.exp(s - m), 0.0)
    den = np.sum(e, axis=-1, keepdims=True)
    p = e / np.where(den == 0, 1.0, den)
    out = p @ v
    if layout == "bshd":
        out = np.swapaxes(out, -3, -2)
    return out.astype(np.result_type(q.dtype, np.float32) if q.dtype.kind == "f" else q.dtype)


def _scale(args: tuple[Any, ...], kw: dict[str, Any]) -> float:
    return float(np.max(np.abs(args[2])))


def _terms(inp: Inputs) -> int:
    q, k = inp[0][0], inp[0][1]
    return int(q.shape[-1] + k.shape[-2 if inp[1].get("layout", "bhsd") == "bhsd" else -3])


# form -> (batch dims, Hq, Hk, Sq, Sk, D, Dv, mask kind, is_causal, scale, layout)
FORMS: dict[str, tuple[Any, ...]] = {
    "basic (B,H,S,D)": ((2,), 2, 2, 8, 8, 16, 16, None, False, None, "bhsd"),
    "no batch (H,S,D)": ((), 3, 3, 5, 7, 8, 8, None, False, None, "bhsd"),
    "two batch dims, Dv != D": ((2, 2), 2, 2, 4, 6, 8, 12, None, False, None, "bhsd"),
    "grouped-query Hq=4 Hk=2": ((2,), 4, 2, 6, 6, 8, 8, None, False, None, "bhsd"),
    "multi-query Hq=4 Hk=1": ((1,), 4, 1, 5, 9, 8, 8, None, False, None, "bhsd"),
    "boolean mask": ((2,), 2, 2, 6, 7, 8, 8, "bool", False, None, "bhsd"),
    "boolean mask broadcast (Sq,Sk)": ((2,), 2, 2, 6, 7, 8, 8, "bool2d", False, None, "bhsd"),
    "additive float mask": ((2,), 2, 2, 6, 7, 8, 8, "float", False, None, "bhsd"),
    "is_causal Sq == Sk": ((2,), 2, 2, 8, 8, 8, 8, None, True, None, "bhsd"),
    "is_causal Sq < Sk (bottom-right)": ((2,), 2, 2, 3, 9, 8, 8, None, True, None, "bhsd"),
    "is_causal + boolean mask": ((2,), 2, 2, 6, 6, 8, 8, "bool", True, None, "bhsd"),
    "scale=0.3": ((2,), 2, 2, 6, 6, 8, 8, None, False, 0.3, "bhsd"),
    "layout=bshd": ((2,), 2, 2, 6, 7, 8, 8, None, False, None, "bshd"),
    "layout=bshd grouped-query causal": ((2,), 4, 2, 5, 5, 8, 8, None, True, None, "bshd"),
    "fully masked row -> zeros": ((2,), 2, 2, 4, 5, 8, 8, "row0", False, None, "bhsd"),
    "long sequence Sq=Sk=512": ((1,), 2, 2, 512, 512, 32, 32, None, True, None, "bhsd"),
}


def _draw(form: tuple[Any, ...]) -> Any:
    batch, hq, hk, sq, sk, d, dv, mask_kind, causal, scale, layout = form

    def draw(rng: np.random.Generator, dtype: str) -> Inputs:
        def dims(h: int, s: int, e: int) -> tuple[int, ...]:
            return (*batch, h, s, e) if layout == "bhsd" else (*batch, s, h, e)

        q = arr(rng, dims(hq, sq, d), dtype, 0.1, 1.0)
        k = arr(rng, dims(hk, sk, d), dtype, 0.1, 1.0)
        v = arr(rng, dims(hk, sk, dv), dtype, 0.5, 2.0)
        kw: dict[str, Any] = {"is_causal": causal}
        if scale is not None:
            kw["scale"] = scale
        if layout != "bhsd":
            kw["layout"] = layout
        if mask_kind in ("bool", "row0"):
            m = rng.random((*batch, hq, sq, sk)) < 0.7
            m[..., :, 0] = True  # every row keeps a key, except where a case wants an empty row
            if mask_kind == "row0":
                m[..., 0, :] = False
            kw["mask"] = m
        elif mask_kind == "bool2d":
            m = rng.random((sq, sk)) < 0.7
            m[:, 0] = True
            kw["mask"] = m
        elif mask_kind == "float":
            kw["mask"] = arr(rng, (*batch, hq, sq, sk), dtype, 0.0, 1.0)
        return (q, k, v), kw

    return draw


def cases(p: Profile) -> Iterator[Case]:
    for dtype in p.hot_dtypes["float"]:
        for name, form in FORMS.items():
            if not p.exhaustive and dtype != "float32" and not name.startswith("basic"):
                continue
            yield Case("scaled_dot_product_attention", name, dtype, _draw(form), ref=sdpa_reference,
                       n_terms=_terms, scale=_scale, examples=p.hot_examples if form[3] < 100 else 1)
