"""The rules unarray adds to generated front-end functions (read by ``tools/gen_frontend.py``).

``RULES``: a paragraph at the head of the function's Notes, stating what unarray fixes where the standard
leaves the answer open or backends disagree. ``CHECKS``: one statement the generated function runs after
dispatch and before the backend (``b`` is the backend), from ``unarray/_shapes.py``, so every backend
refuses the same input with the same typed error. ``REFUSALS``: where an op's frame reads its typed error
from an expression of the native error ``e`` rather than from ``e`` itself (a rule checked only once the
backend refused, so the common call pays nothing for it).
"""

from __future__ import annotations

_NO_BOOL = ("Arithmetic on bool, which the standard leaves undefined, has one answer on every backend (as "
            "NumPy): ``add`` of two bools is their logical or, ``multiply`` their logical and, both bool; "
            "``subtract`` of two bools raises ``DTypeError`` (use ``ua.logical_xor``).")

RULES: dict[str, str] = {
    "add": _NO_BOOL,
    "multiply": _NO_BOOL,
    "subtract": _NO_BOOL,
    "searchsorted": "One order on every backend, the one ``ua.sort`` gives: NaN sorts after +inf (a NaN in "
                    "``x2`` goes after every non-NaN value of ``x1``, or after all of ``x1`` with "
                    "``side='right'``), -0.0 equals +0.0.",
    "reshape": "``shape`` is checked once, before the backend is asked: a negative size other than one -1, more "
               "than one -1, -1 next to a zero size (any size would fit) and a product other than ``x``'s size "
               "raise ``ShapeError`` naming both shapes, on every backend.",
    "broadcast_to": "A shape of more bytes than a 64-bit offset reaches raises ``ArraySizeError`` before the "
                    "backend is asked, on every backend.",
    "tensordot": "Contracted sizes that differ raise ``ShapeError`` naming both shapes, on every backend.",
    "vecdot": "Sizes along ``axis`` that differ raise ``ShapeError`` naming both shapes, on every backend.",
    "linalg.trace": "With ``dtype=None`` the sum accumulates as ``ua.sum`` does: integer input in the default "
                    "integer dtype, unsigned input in the default unsigned one (uint8 gives uint64), on every "
                    "backend.",
}

CHECKS: dict[str, str] = {
    "reshape": '_shapes.reshape("reshape", b.name, x.shape, shape)',
    "broadcast_to": '_shapes.addressable("broadcast_to", b.name, shape, _shapes.itemsize(x.dtype))',
    "tensordot": '_shapes.tensordot("tensordot", b.name, x1.shape, x2.shape, axes)',
    "vecdot": '_shapes.vecdot("vecdot", b.name, x1.shape, x2.shape, axis)',
}

REFUSALS: dict[str, str] = {
    "matmul": "_matmul_refusal(b, x1, x2, e)",
}
