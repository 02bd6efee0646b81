"""A name the namespace lacks: NumPy's and torch's names raise an error naming the standard's function,
a misspelling names the closest ones, and nothing that probes the module (``hasattr``, ``import *``,
doctest, pickle) is disturbed. One table (``unarray._names.FOREIGN``) serves ``ua.<name>`` and
``ua.explain``.
"""

from __future__ import annotations

import dis
import doctest
import inspect
import pickle
import subprocess
import sys
from typing import Any

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


def test_the_bound_namespace_hooks_misses_only_where_hits_stay_specialised() -> None:
    # On 3.11 a class __getattr__ keeps the interpreter from specialising every xp.<name> hit: there the NumPy and
    # torch names are descriptors and a misspelling gets Python's own error. From 3.12 a hit on a class with the
    # hook is specialised the same (docs/design-notes.md, "Name lookups"), and the misspelling gets ua's error.
    xp = ua.array_namespace(np.ones(3))
    assert hasattr(type(xp), "__getattr__") == (sys.version_info >= (3, 12))
    assert xp.sum is ua.sum and "sum" in dir(xp)
    scope: dict[str, Any] = {}
    exec("def read(xp):\n    return xp.sum", scope)  # a fresh code object, specialised by the calls below
    for _ in range(64):
        scope["read"](xp)
    ops = [i.opname for i in dis.get_instructions(scope["read"], adaptive=True) if i.opname.startswith("LOAD_ATTR")]
    assert ops == ["LOAD_ATTR_WITH_HINT"], ops  # the hit is the specialised dict read, hook or no hook
    with pytest.raises(AttributeError) as e:
        xp.matmull  # noqa: B018
    assert e.value.name == "matmull"
    assert (type(e.value) is AttributeError) == (sys.version_info < (3, 12))


# -- keywords: a NumPy or torch keyword names the standard's ---------------------------------------------------

# (call, the op the error names, the keyword given, the keyword the message must name): one per op family, the
# hot C path (reductions, element-wise, manipulation) and the Python front end (ua.nn, attention).
HABITS: list[tuple[str, str, str, str]] = [
    ("ua.sum(x, dim=0)", "sum", "dim", "axis="),
    ("ua.mean(x, keepdim=True)", "mean", "keepdim", "keepdims="),
    ("ua.var(x, ddof=1)", "var", "ddof", "correction="),
    ("ua.std(x, unbiased=True)", "std", "unbiased", "correction=1"),
    ("ua.max(x, dim=-1, keepdim=True)", "max", "dim", "axis="),
    ("ua.argmax(x, dim=0)", "argmax", "dim", "axis="),
    ("ua.prod(x, out=x)", "prod", "out", "assign the result"),
    ("ua.mean(x, dtype=ua.float64)", "mean", "dtype", "ua.astype"),
    ("ua.add(x, x, out=x)", "add", "out", "assign the result"),
    ("ua.add(input=x, other=x)", "add", "input", "positionally"),
    ("ua.exp(x, out=x)", "exp", "out", "assign the result"),
    ("ua.matmul(x, ua.matrix_transpose(x), out=x)", "matmul", "out", "assign the result"),
    ("ua.permute_dims(x, dims=(1, 0))", "permute_dims", "dims", "axes="),
    ("ua.sum(x, axes=0)", "sum", "axes", "axis="),
    ("ua.nn.softmax(x, dim=-1)", "nn.softmax", "dim", "axis="),
    ("ua.nn.logsumexp(x, dim=0, keepdim=True)", "nn.logsumexp", "dim", "axis="),
    ("ua.nn.layer_norm(x, normalized_shape=(3,))", "nn.layer_norm", "normalized_shape", "axis="),
    ("ua.scaled_dot_product_attention(q, q, q, attn_mask=None)", "scaled_dot_product_attention", "attn_mask", "mask="),
    ("ua.scaled_dot_product_attention(q, q, q, dropout_p=0.1)", "scaled_dot_product_attention", "dropout_p",
     "no dropout"),
]


@pytest.mark.parametrize(("call", "op", "keyword", "standard"), HABITS, ids=[h[0] for h in HABITS])
def test_a_habit_keyword_names_the_standards(backend: Any, call: str, op: str, keyword: str, standard: str) -> None:
    rng = np.random.default_rng(7)
    x = backend.asarray(rng.uniform(0.5, 2.0, (2, 3)).astype(np.float32))
    q = backend.asarray(rng.uniform(0.5, 2.0, (1, 2, 4, 8)).astype(np.float32))
    with pytest.raises(ua.ArgumentTypeError) as e:
        eval(call, {"ua": ua, "x": x, "q": q})
    err = e.value
    assert isinstance(err, TypeError) and err.op == op and err.backend == backend.name, (str(err), err.backend)
    assert str(err).startswith(f"ua.{op} [{backend.name}]: unexpected keyword {keyword}="), str(err)
    assert standard in str(err), str(err)
    assert err.__cause__ is None and err.__suppress_context__  # the bare TypeError adds nothing


def test_the_same_keyword_error_through_the_bound_namespace_and_without_the_c_path() -> None:
    x = np.ones((2, 3))
    xp = ua.array_namespace(x)
    with pytest.raises(ua.ArgumentTypeError, match=r"^ua\.sum \[numpy\]: unexpected keyword dim=.*axis=") as e:
        xp.sum(x, dim=0)
    assert e.value.op == "sum"
    # The reference itself (the pure-Python build's public function) raises Python's own TypeError, which the
    # C path turns into the typed one: both are TypeErrors.
    with pytest.raises(TypeError, match="unexpected keyword argument 'dim'"):
        ua.sum.__wrapped__(x, dim=0)
    err = _names.keyword_error(ua.sum.__wrapped__, ("dim",), x)
    assert err is not None and str(err) == str(e.value)


def test_a_keyword_error_leaves_other_type_errors_alone() -> None:
    # The typed keyword error replaces only the refusal of a keyword the function does not take.
    assert _names.keyword_error(ua.sum.__wrapped__, ("axis", "keepdims"), np.ones(2)) is None
    with pytest.raises(ua.ArgumentTypeError, match="axis"):  # unarray's own refusal of a float axis, unchanged
        ua.sum(np.ones(2), axis=0.5)
    with pytest.raises(TypeError) as e:
        ua.nn.softmax(np.ones(2), axis="last")
    assert "unexpected keyword" not in str(e.value)


def test_a_misspelt_keyword_names_the_closest() -> None:
    with pytest.raises(ua.ArgumentTypeError, match=r"unexpected keyword keepdim=.*keepdims=|unexpected keyword "
                                                   r"keepdimss=; did you mean keepdims=\?"):
        ua.min(np.ones(2), keepdimss=True)
    with pytest.raises(ua.ArgumentTypeError, match=r"unexpected keyword zzz=; ua\.sum takes axis=, dtype=, keepdims="):
        ua.sum(np.ones(2), zzz=1)


# -- did you mean, dir ------------------------------------------------------------------------------------------


def test_suggestions_are_relevant() -> None:
    # A name with no function of its own gets the standard's expression, not names sharing a few letters.
    for name in ("allclose", "isclose"):
        with pytest.raises(ua.UnknownNameError, match=rf"^ua\.{name}: the array API standard has no {name}; "
                                                      r"write .*ua\.abs\(x1 - x2\) <= atol \+ rtol"):
            getattr(ua, name)
    with pytest.raises(ua.UnknownNameError, match=r"did you mean ua\.concat\?$"):
        ua.conact  # type: ignore[attr-defined]  # noqa: B018
    assert _names.suggestion("allclose", list(ua.__all__)) == []  # difflib's cut-off: no acos, no acosh


# A misspelling -> the one name suggested first (difflib's closest within its 0.75 cut-off).
MISSPELT = {"sqrtt": "sqrt", "reshap": "reshape", "permute_dim": "permute_dims", "argsrot": "argsort",
            "linspac": "linspace", "mena": "mean", "meshgird": "meshgrid", "cumulative_summ": "cumulative_sum",
            "maximun": "maximum", "vecdott": "vecdot"}


@pytest.mark.parametrize(("name", "meant"), sorted(MISSPELT.items()))
def test_a_misspelling_suggests_the_name_meant(name: str, meant: str) -> None:
    with pytest.raises(ua.UnknownNameError) as e:
        getattr(ua, name)
    assert str(e.value).startswith(f"ua.{name}: no such function or constant in unarray; did you mean ua.{meant}"), (
        str(e.value))
    assert _names.suggestion(name, list(ua.__all__))[0] == meant


def test_the_bound_namespace_suggests_as_the_module_does() -> None:
    xp = ua.array_namespace(np.ones(3))
    with pytest.raises(ua.UnknownNameError) as e:
        xp.allclose  # noqa: B018
    assert str(e.value) == str(_names.error("allclose"))
    if sys.version_info >= (3, 12):  # a misspelling: ua's message, the same did-you-mean as ua.conact
        with pytest.raises(ua.UnknownNameError) as e:
            xp.conact  # noqa: B018
        assert str(e.value) == str(_names.error("conact")) and str(e.value).endswith("did you mean ua.concat?")
        return
    # On 3.11, Python's own AttributeError (no lookup hook there: docs/design-notes.md), whose traceback names the
    # closest of the public names dir(xp) lists.
    out = subprocess.run([sys.executable, "-c", "import numpy as np, unarray as ua\n"
                          "xp = ua.array_namespace(np.ones(1))\nxp.conact"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 1 and "Did you mean: 'concat'?" in out.stderr, out.stderr


@pytest.mark.parametrize("where", ["ua", "ua.nn", "ua.linalg", "ua.fft", "xp"])
def test_dir_lists_public_names_only(where: str) -> None:
    xp = ua.array_namespace(np.ones(3))
    ns: Any = {"ua": ua, "ua.nn": ua.nn, "ua.linalg": ua.linalg, "ua.fft": ua.fft, "xp": xp}[where]
    names = dir(ns)
    public = set(ua.__all__ if where in ("ua", "xp") else ns.__all__)
    extras: set[str] = set()
    if where == "ua":
        extras = {"__array_api_version__", "__array_namespace_info__", "__version__"}
    elif where == "xp":
        extras = {"__array_api_version__", "__array_namespace_info__", "backend", "lazy", "immutable"}
    assert set(names) == public | extras, sorted(set(names) ^ (public | extras))
    assert not {"annotations", "A", "Any", "Array"} & set(names)
    assert all(hasattr(ns, n) for n in names)


# -- every public function: a NumPy or torch keyword gets the typed error -----------------------------------------

# Public functions that take no array function's keywords, left to Python's own TypeError.
NO_HABITS = {
    "array_namespace": "the lookup generic code makes on every call: no per-call hook (docs/design-notes.md)",
    "apply_numpy": "its other keywords are fn's, passed on", "from_dlpack": "interop",
    "backend_of": "introspection", "backends": "introspection", "device": "introspection", "explain": "introspection",
    "get_precision": "policy", "stats": "interop counters", "checking_readonly": "interop debug mode",
    "verify_readonly": "interop debug mode",
    "isdtype": "a predicate of dtypes, defined below the keyword table (unarray._dtypes, which the registry imports)",
}
# A value for each required argument, by name ("X": the backend's array; "Q": attention's (1, 2, 4, 8) input).
_ARGS: dict[str, Any] = {
    "x": "X", "x1": "X", "x2": "X", "q": "Q", "k": "Q", "v": "Q", "condition": "X", "indices": "X", "obj": "X",
    "from_": "X", "type": "X", "arrays_and_dtypes": "X", "arrays": ["X", "X"], "dtype": ua.float32, "to": ua.float32,
    "kind": "real floating", "start": 0, "stop": 1, "num": 2, "shape": (2,), "shapes": (2,), "fill_value": 1.0,
    "n_rows": 2, "n": 2, "source": 0, "destination": 1, "axes": (1, 0), "repeats": 2, "shift": 1, "axis": 0,
    "repetitions": (1, 1), "backend": "numpy",
}
_NO_ARRAY = {"broadcast_shapes"}  # nothing tells the backend


def _public_functions() -> list[tuple[str, Any]]:
    seen: set[int] = set()
    out = []
    for prefix, ns in (("", ua), ("nn.", ua.nn), ("linalg.", ua.linalg), ("fft.", ua.fft)):
        for n in ns.__all__:
            fn = getattr(ns, n)
            if isinstance(fn, type) or inspect.ismodule(fn) or not callable(fn) or id(fn) in seen or n in NO_HABITS:
                continue
            seen.add(id(fn))
            out.append((prefix + n, fn))
    return out


def _habit_cases() -> list[tuple[str, str, str]]:
    # (function, the habit keyword, what the message must say instead)
    cases = []
    for name, fn in _public_functions():
        params = inspect.signature(fn).parameters
        if "axis" in params or "axes" in params:
            cases.append((name, "dim", "axis=" if "axis" in params else "axes="))
        if "keepdims" in params:
            cases.append((name, "keepdim", "keepdims="))
        if "correction" in params:
            cases.append((name, "ddof", "correction="))
        if "dtype" not in params:
            cases.append((name, "dtype", "ua.astype(x, dtype)"))
        cases.append((name, "out", "unarray returns a new array, so assign the result"))
    return cases


HABIT_CASES = _habit_cases()


def test_every_public_function_is_covered() -> None:
    names = {n for n, _ in _public_functions()}
    assert {"concat", "sort", "argsort", "cumulative_sum", "zeros", "asarray", "linspace", "eye", "linalg.inv",
            "fft.fft", "fft.fftfreq", "unique_values", "searchsorted", "sum", "nn.softmax"} <= names
    assert len(names) > 150 and not names & set(NO_HABITS)


@pytest.mark.parametrize(("name", "keyword", "standard"), HABIT_CASES, ids=[f"{n}-{k}" for n, k, _ in HABIT_CASES])
def test_every_function_names_the_standards_keyword(backend: Any, name: str, keyword: str, standard: str) -> None:
    fn = _resolve(name)
    x = backend.asarray(np.random.default_rng(3).uniform(0.5, 2.0, (2, 3)).astype(np.float32))
    q = backend.asarray(np.random.default_rng(4).uniform(0.5, 2.0, (1, 2, 4, 8)).astype(np.float32))

    def value(v: Any) -> Any:
        return x if v == "X" else q if v == "Q" else [value(e) for e in v] if isinstance(v, list) else v

    args, kwargs = [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:  # (two of what a sequence argument of that name holds)
            args += [value(_ARGS[p.name][0] if p.name == "arrays" else _ARGS[p.name])] * 2
        elif p.default is p.empty and p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = value(_ARGS[p.name])
        elif p.default is p.empty and p.kind is not p.VAR_KEYWORD:
            args.append(value(_ARGS[p.name]))
        elif p.name == "backend":  # creation: the backend named, as an array would name it
            kwargs["backend"] = backend.name
    habit = {"dim": 0, "keepdim": True, "ddof": 1, "dtype": ua.float32, "out": x}[keyword]
    with pytest.raises(ua.ArgumentTypeError) as e:
        fn(*args, **kwargs, **{keyword: habit})
    op = name.rpartition(".")[2] if getattr(ua, name.rpartition(".")[2], None) is fn else name
    where = None if op in _NO_ARRAY else backend.name
    err = e.value
    assert isinstance(err, TypeError) and err.op == op and err.backend == where, (str(err), err.op, err.backend)
    assert str(err).startswith(f"ua.{op}{f' [{where}]' if where else ''}: unexpected keyword {keyword}="), str(err)
    assert standard in str(err), str(err)


def test_functional_updates_name_what_to_do(backend: Any) -> None:
    x = backend.asarray(np.arange(1.0, 5.0))
    with pytest.raises(ua.ArgumentTypeError, match=rf"^ua\.at\.set \[{backend.name}\]: unexpected keyword xp=; "
                                                   r"unarray's functions find their library from the arrays"):
        ua.at(x, 0).set(2.0, xp=ua)
    with pytest.raises(ua.ArgumentTypeError, match=rf"^ua\.at\.add \[{backend.name}\]: unexpected keyword mode="):
        ua.at(x)[1].add(2.0, mode="drop")
    assert float(backend.to_numpy(ua.at(x, 0).set(2.0))[0]) == 2.0  # the correct call still runs


def test_the_bound_namespace_refuses_the_same_way() -> None:
    # Creation through xp is re-bound to the namespace's library: its error names that library.
    pytest.importorskip("torch")
    import torch

    xp = ua.array_namespace(torch.zeros(2))
    with pytest.raises(ua.ArgumentTypeError, match=r"^ua\.zeros \[torch\]: unexpected keyword out=.*assign the result"):
        xp.zeros(3, out=None)
    with pytest.raises(ua.ArgumentTypeError, match=r"^ua\.concat \[torch\]: unexpected keyword dim=.*axis="):
        xp.concat([torch.ones(2), torch.ones(2)], dim=0)
