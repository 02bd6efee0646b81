"""Build the optional C hot paths: ua.to's (unarray/interop/_speedups.c), the precision switch's and the
front end's common calls (unarray/_switch.c); without a compiler unarray runs as pure Python."""

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
    Extension("unarray.interop._speedups", ["unarray/interop/_speedups.c"], optional=True, **_numpy()),
    Extension("unarray._switch", ["unarray/_switch.c"], optional=True),
])
