# The standard's set functions on torch: torch.unique has no complex kernel (complex values are found as unique
# (real, imag) rows) and array-api-compat has no unique_all for torch (first indices from a scatter-min).
from __future__ import annotations

from typing import Any, cast

import array_api_compat.torch as compat_torch
import torch

from unarray._backends._xp_shared import UniqueAllResult, UniqueCountsResult, UniqueInverseResult


def unique(x: Any) -> tuple[Any, Any, Any]:
    flat = x.reshape(-1)
    if not flat.is_complex():
        return cast(tuple[Any, Any, Any], torch.unique(flat, sorted=True, return_inverse=True, return_counts=True))
    rows, inverse, counts = torch.unique(torch.view_as_real(flat), dim=0, sorted=True, return_inverse=True,
                                         return_counts=True)
    return torch.view_as_complex(rows.contiguous()), inverse, counts


def unique_values(x: Any) -> Any:
    return unique(x)[0] if x.is_complex() else compat_torch.unique_values(x)


def unique_counts(x: Any) -> Any:
    return compat_torch.unique_counts(x) if not x.is_complex() else UniqueCountsResult(*unique(x)[::2])


def unique_inverse(x: Any) -> Any:
    if not x.is_complex():
        return compat_torch.unique_inverse(x)
    values, inverse, _ = unique(x)
    return UniqueInverseResult(values, inverse.reshape(x.shape))


def unique_all(x: Any) -> Any:
    flat = x.reshape(-1)
    values, inverse, counts = unique(flat)
    pos = torch.arange(flat.numel(), device=x.device)
    first = torch.full(values.shape, flat.numel(), dtype=torch.int64, device=x.device)
    first = first.scatter_reduce(0, inverse, pos, "amin")
    return UniqueAllResult(values, first, inverse.reshape(x.shape), counts)
