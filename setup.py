"""Build ua.to's optional C hot path (unarray/_speedups.c); without a compiler unarray runs as pure Python."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("unarray._speedups", ["unarray/_speedups.c"], optional=True)])
