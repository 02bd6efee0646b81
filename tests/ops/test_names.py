"""A name the namespace lacks: NumPy's and torch's names raise an error naming the standard's function,
a misspelling names the closest ones, and nothing that probes the module (``hasattr``, ``import *``,
doctest, pickle) is disturbed. One table (``unarray._names.FOREIGN``) serves ``ua.<name>`` and
``ua.explain``.
"""

from __future__ import annotations

import doctest
import inspect
import pickle

import numpy as np
import pytest

import unarray as ua
from unarray import _names

# What a NumPy or torch user types first, and the standard's function the error must name.
REACHED_FOR = {
    "concatenate": "concat", "transpose": "permute_dims", "cumsum": "cumulative_sum", "power": "pow",
    "arccos": "acos", "absolute": "abs", "amax": "max", "swapaxes": "permute_dims", "dot": "matmul",
    "cat": "concat", "permute": "permute_dims", "clamp": "clip", "bitwise_not": "bitwise_invert",
    "cumprod": "cumulative_prod", "arctan2": "atan2", "unsqueeze": "expand_dims", "invert": "bitwise_invert",
}


def _resolve(dotted: str) -> object:
    obj: object = ua
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize(("name", "standard"), sorted(REACHED_FOR.items()))
def test_a_numpy_or_torch_name_names_the_standards_function(name: str, standard: str) -> None:
    with pytest.raises(ua.UnknownNameError) as e:
        getattr(ua, name)
    assert isinstance(e.value, AttributeError) and isinstance(e.value, ua.UnarrayError)
    assert str(e.value).startswith(f"ua.{name}: unarray follows the array API standard; use ua.{standard}")
    assert e.value.op == name and e.value.name == name
    assert not hasattr(ua, name)


def test_the_table_maps_only_missing_names_to_existing_ones() -> None:
    public = set(ua.__all__) | {f"{m}.{n}" for m in ("linalg", "fft", "nn") for n in getattr(ua, m).__all__}
    assert not set(_names.FOREIGN) & public
    for name, targets in _names.FOREIGN.items():
        assert targets, name
        for target in targets:
            assert target in public, (name, target)
            _resolve(target)


def test_an_unknown_name_names_the_closest_ones() -> None:
    with pytest.raises(AttributeError, match=r"^ua\.matmull: no such function or constant in unarray; "
                                             r"did you mean ua\.matmul") as e:
        ua.matmull  # type: ignore[attr-defined]  # noqa: B018
    assert isinstance(e.value, ua.UnknownNameError)
    with pytest.raises(AttributeError, match=r"^ua\.qqqzzz: no such function or constant in unarray$"):
        ua.qqqzzz  # type: ignore[attr-defined]  # noqa: B018
    assert getattr(ua, "concatenate", None) is None


def test_explain_uses_the_same_table() -> None:
    x = np.ones((2, 2))
    with pytest.raises(ua.ArgumentError, match=r"'concatenate' names no unarray function; did you mean concat\?"):
        ua.explain("concatenate", [x, x])
    with pytest.raises(ua.ArgumentError, match=r"did you mean nn\.softmax\?"):
        ua.explain("softmax", x)


def test_probes_of_the_module_are_undisturbed() -> None:
    # Dunder probes get the builtin's error (doctest's __test__, Sphinx's __sphinx_mock__, pickle's...).
    for probe in ("__test__", "__wrapped__", "__sphinx_mock__", "__path_hook__"):
        with pytest.raises(AttributeError) as e:
            getattr(ua, probe)
        assert type(e.value) is AttributeError
    namespace: dict[str, object] = {}
    exec("from unarray import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(ua.__all__)
    assert doctest.DocTestFinder().find(ua)  # the module's doctests are still found
    assert {n for n, _ in inspect.getmembers(ua)} >= set(ua.__all__)
    assert pickle.loads(pickle.dumps(ua.matmul)) is ua.matmul


@pytest.mark.parametrize(("name", "standard"), sorted(REACHED_FOR.items()))
def test_the_bound_namespace_names_the_standards_function_too(name: str, standard: str) -> None:
    xp = ua.array_namespace(np.ones(3))
    with pytest.raises(ua.UnknownNameError, match=rf"^ua\.{name}: unarray follows the array API standard; "
                                                  rf"use ua\.{standard}"):
        getattr(xp, name)
    assert not hasattr(xp, name) and name not in dir(xp)


def test_the_bound_namespace_has_no_getattr_hook() -> None:
    # A __getattr__ on the class would keep the interpreter from specialising every xp.<name> lookup;
    # the NumPy and torch names are descriptors instead, and a misspelling gets Python's own error.
    xp = ua.array_namespace(np.ones(3))
    assert not hasattr(type(xp), "__getattr__")
    assert xp.sum is ua.sum and "sum" in dir(xp)
    with pytest.raises(AttributeError) as e:
        xp.matmull  # noqa: B018
    assert type(e.value) is AttributeError and e.value.name == "matmull"
