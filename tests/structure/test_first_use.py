"""A user's first call costs what the library under it costs, not more.

Each check runs in a fresh process, as cold as a user's first call: the first NumPy call imports no more than
its backend (array_api_compat's NumPy namespace, whose ``from numpy import *`` loads f2py, testing and ma, is
imported only for a function it writes for NumPy alone); a transformer block's first eager call on JAX compiles
no more XLA programs than the same block written in JAX (each compilation costs a GPU a tenth of a second or
more); the block under ``ua.jit`` on torch is one Dynamo graph (a graph break is a further compile, and Python run
between graphs); ``python -m unarray env`` imports no framework whose devices the OS already tells.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("torch", "jax", "tensorflow", "dask", "numba", "cupy")


def _python(code: str, timeout: float = 300) -> str:
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_the_first_numpy_call_imports_its_backend_only() -> None:
    out = json.loads(_python("""
        import json, sys
        import numpy as np
        import unarray as ua
        before = set(sys.modules)
        first = ua.sum(np.ones(3))
        after = set(sys.modules)
        ua.add(np.ones(3), 2.0), ua.exp(np.ones(3)), ua.mean(np.ones((2, 3)), axis=0)
        ua.where(np.ones(3) > 0, 1.0, 0.0), ua.zeros(3), ua.arange(4), ua.sort(np.ones(3)), ua.std(np.ones(3))
        ua.linalg.inv(np.eye(2)), ua.linalg.svd(np.eye(2)), ua.fft.fft(np.ones(4)), ua.unique_values(np.ones(3))
        common = set(sys.modules)
        print(json.dumps({"value": float(first), "new": sorted(after - before),
                          "compat": "array_api_compat.numpy" in common}))
    """))
    assert out["value"] == 3.0
    assert not out["compat"], "the common ops imported array_api_compat.numpy"
    assert all(m.startswith("unarray.") for m in out["new"]) and len(out["new"]) <= 8, out["new"]


def test_the_numpy_namespace_serves_array_api_compats_own_objects_name_by_name() -> None:
    # Every public name of array_api_compat.numpy (and its linalg and fft): NumPy's own object where
    # array_api_compat re-exports it, the same generic function bound to NumPy where it binds one, its own
    # function where it writes one. A name array_api_compat starts wrapping fails here until xp.py lists it.
    import array_api_compat.numpy as compat

    from unarray._backends.numpy import xp

    checked = 0
    for sub in ("", "linalg", "fft"):
        theirs_ns, ours_ns = (getattr(compat, sub), getattr(xp.XP, sub)) if sub else (compat, xp.XP)
        names = [n for n in dir(theirs_ns) if not n.startswith("_")] + (
            ["__array_api_version__", "__array_namespace_info__"] if not sub else [])
        for name in names:
            theirs, ours = getattr(theirs_ns, name), getattr(ours_ns, name)
            if not sub and name in ("linalg", "fft"):
                assert ours.__name__ == theirs.__name__, name
            elif ours is not theirs:  # bound here as array_api_compat binds it: the same generic function
                assert name in xp.COMMON[sub][1] or (sub == "linalg" and name in xp.SHARED), (sub, name)
                assert ours.__wrapped__ is theirs.__wrapped__, (sub, name)
            checked += 1
    assert checked > 300, checked


def test_a_blocks_first_eager_jax_call_compiles_no_more_programs_than_the_block_in_jax() -> None:
    pytest.importorskip("jax")
    counts = json.loads(_python(f"""
        import json, sys
        sys.path.insert(0, {str(ROOT / "benchmarks")!r})
        import jax, jax.numpy as jnp
        from jax import monitoring
        import jit_block as jb
        jax.devices()
        n = [0]
        monitoring.register_event_duration_secs_listener(
            lambda event, d, **kw: n.__setitem__(0, n[0] + (event == "/jax/core/compile/backend_compile_duration")))
        size = {{"batch": 2, "seq": 16, "dim": 32, "heads": 2}}
        x, p = jb.host_inputs(size)
        x, p = jnp.asarray(x), {{k: jnp.asarray(v) for k, v in p.items()}}
        out = {{}}
        for side in ("ua", "native"):
            jax.clear_caches()
            n[0] = 0
            if side == "ua":
                jb.ua_block(x, p, size["heads"]).block_until_ready()
            else:
                with jax.default_matmul_precision("float32"):
                    jb.jax_block(x, p, size["heads"]).block_until_ready()
            out[side] = n[0]
        print(json.dumps(out))
    """))
    assert counts["native"] > 10, counts  # the listener saw the compilations
    assert counts["ua"] <= counts["native"], counts


def test_a_transformer_block_under_ua_jit_is_one_torch_graph() -> None:
    pytest.importorskip("torch")
    stats = json.loads(_python(f"""
        import json, sys
        sys.path.insert(0, {str(ROOT / "benchmarks")!r})
        import torch
        from torch._dynamo.utils import counters
        import jit_block as jb
        import unarray as ua
        size = {{"batch": 2, "seq": 8, "dim": 16, "heads": 2}}
        x, p = jb.host_inputs(size)
        x, p = torch.from_numpy(x), {{k: torch.from_numpy(v) for k, v in p.items()}}
        f = ua.jit(jb.ua_block, static_argnames="heads", backend="eager")  # Dynamo's graphs, not Inductor's code
        f(x, p, heads=2)
        f(x, p, heads=2)
        print(json.dumps({{"graphs": counters["stats"]["unique_graphs"], "frames": counters["frames"]["total"],
                          "breaks": sum(counters["graph_break"].values())}}))
    """, timeout=600))
    assert stats == {"graphs": 1, "frames": 1, "breaks": 0}, stats


def test_env_imports_no_framework_whose_devices_the_os_tells() -> None:
    from unarray._backends import installed
    from unarray._devices import accelerator_free

    code = f"""
        import json, sys
        from unarray.__main__ import main
        main(["env"])
        print(json.dumps([m for m in {FRAMEWORKS!r} if m in sys.modules]))
    """
    imported = json.loads(_python(code))
    if accelerator_free():
        assert imported == [], imported
    else:  # a GPU or TPU driver is here: only the frameworks themselves can say what they see
        assert set(imported) >= {m for m in FRAMEWORKS if m != "cupy" and installed(m)} - {"numba"}, imported


def test_a_driver_on_the_machine_leaves_the_devices_to_the_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    import glob

    from unarray import _backends
    from unarray._devices import Device

    if not sys.platform.startswith("linux"):
        pytest.skip("the driver files are Linux's")
    monkeypatch.setattr(glob, "glob", lambda pattern: [])
    for name in ("TPU_NAME", "COLAB_TPU_ADDR", "TPU_WORKER_HOSTNAMES", "TPU_ACCELERATOR_TYPE"):
        monkeypatch.delenv(name, raising=False)
    for name in ("tensorflow", "numba"):  # (imported by earlier tests of the same run)
        monkeypatch.delitem(sys.modules, name, raising=False)
        monkeypatch.delitem(_backends._LOADED, name, raising=False)
    assert _backends.known_devices("tensorflow") == (Device("cpu"),)
    assert _backends.known_devices("numba") == ()
    assert _backends.known_devices("cupy") is None  # CuPy is asked: it says why it cannot run
    monkeypatch.setattr(glob, "glob", lambda pattern: [pattern] if pattern == "/dev/nvidiactl" else [])
    assert _backends.known_devices("tensorflow") is None and _backends.known_devices("numba") is None


def test_a_framework_that_fails_to_import_in_its_worker_is_one_unavailable_row(tmp_path: Path) -> None:
    # The parent leaves the import to the worker where the OS tells the devices: a broken install is still
    # reported once, by name, and fails the run. The parent is shown a machine without an accelerator driver
    # (glob finds no driver file; no TPU setting): on one with a driver it imports the framework itself. Each of
    # the --jobs workers finds the framework broken; the report still has one row.
    from unarray._devices import TPU_SETTINGS

    fake = tmp_path / "site" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('this tensorflow is broken')\n")
    env = {k: v for k, v in os.environ.items() if k not in TPU_SETTINGS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(tmp_path / "site"), os.environ.get("PYTHONPATH")]))
    no_driver = ("import glob, runpy; glob.glob = lambda pattern, **kw: []; "
                 "runpy.run_module('unarray', run_name='__main__')")
    r = subprocess.run([sys.executable, "-c", no_driver, "check", "--backends", "tensorflow", "--ops", "add",
                        "--jobs", "3", "--out", str(tmp_path / "r")],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    rows = json.loads((tmp_path / "r" / "report.json").read_text())["results"]
    assert [x["op"] for x in rows] == ["(backend)"], rows
    assert rows[0]["status"] in ("unavailable", "error") and "this tensorflow is broken" in rows[0]["message"]
