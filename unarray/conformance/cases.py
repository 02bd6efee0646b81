"""The conformance cases: what each op is called with and what it is compared against.

Inputs are drawn from a seeded ``numpy.random.Generator`` (the seed is the
run's seed, the case's id and the example number, so every run and every
backend sees the same inputs; a failure names its example and reproduces
with the same seed). Values are drawn away from zero (magnitudes in
``[lo, hi]`` with a random sign) so relative errors stay meaningful; shapes
come from a stream of their own that repeats every ``SHAPES_PER_CASE`` examples
(a case's later examples draw new values in the same shapes: on JAX each new
shape is one compilation).

Each result is compared with a reference computed by NumPy on the inputs
upcast to float64/complex128 (integers and booleans are compared exactly),
with a tolerance that depends on the input dtype, the number of terms the
result accumulates and the precision policy; the result dtype must match the
standard's promotion (NumPy's on the original inputs), and the result must be
an array of the backend that was called.

The rooms: ``cases_common`` (the case record, profiles, inputs, tolerances),
one module per group of ops (``cases_hot``, ``cases_attention``,
``cases_namespace``, ``cases_linalg``), and this module, which lists them all.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence

from unarray.conformance import cases_attention, cases_hot, cases_linalg, cases_namespace
from unarray.conformance.cases_common import PROFILES, Case, Profile, arr, family_of, shape, tolerance, upcast

__all__ = ["Case", "Profile", "all_cases", "arr", "family_of", "select_cases", "shape", "tolerance", "upcast"]


def all_cases(profile: str = "quick") -> Iterator[Case]:
    """Every case of ``profile``, hot ops and attention first."""
    p = PROFILES[profile]
    yield from cases_hot.cases(p)
    yield from cases_attention.cases(p)
    yield from cases_namespace.cases(p)
    yield from cases_linalg.manipulation_cases(p)
    yield from cases_linalg.searching_cases(p)
    yield from cases_linalg.linalg_cases(p)
    yield from cases_linalg.fft_cases(p)


def select_cases(profile: str, ops: Sequence[str] | None = None) -> list[Case]:
    """The cases of ``profile`` whose op matches one of the ``fnmatch`` patterns ``ops`` (every case without)."""
    return [c for c in all_cases(profile) if not ops or any(fnmatch.fnmatchcase(c.op, p) for p in ops)]
