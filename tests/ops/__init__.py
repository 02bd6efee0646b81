"""The array ops on every backend: the same answer everywhere (Hypothesis against a float64 reference), errors,
devices, layout, the bound namespace and generic code."""
