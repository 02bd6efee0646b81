"""Build the optional C hot paths: ua.to's (unarray/interop/_speedups.c), the precision switch's gate
(unarray/_gate.c) and the front end's common calls (unarray/_fast.c); without a compiler unarray runs as pure
Python, and each module is optional on its own."""

from setuptools import Extension, setup


def _numpy() -> dict[str, list]:
    # NumPy's headers, for _speedups.buffer_array (the JAX -> NumPy first handoff); pyproject's build
    # requirements bring NumPy. Without them the module is built without that function.
    try:
        import numpy
    except ImportError:
        return {}
    return {"include_dirs": [numpy.get_include()], "define_macros": [("UNARRAY_NUMPY", "1")]}


setup(ext_modules=[
    Extension("unarray.interop._speedups", ["unarray/interop/_speedups.c"], depends=["unarray/_cobject.h"],
              optional=True, **_numpy()),
    Extension("unarray._gate", ["unarray/_gate.c"], depends=["unarray/_cobject.h", "unarray/_unswitched.h"],
              optional=True),
    Extension("unarray._fast", ["unarray/_fast.c"], depends=["unarray/_cobject.h", "unarray/_unswitched.h"],
              optional=True),
])
