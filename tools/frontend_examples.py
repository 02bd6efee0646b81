"""The example calls of the generated front-end functions (read by ``tools/gen_frontend.py``).

Each entry is the lines of one doctest: statements, then a last expression whose output the generator
records by running it on NumPy when it writes the module. Inputs are fixed small values (never zeros
alone), chosen inside each function's domain; results that a library may legitimately vary (the sign of
an eigenvector, the order of unique values) are reduced to what the standard fixes.
"""

from __future__ import annotations

F3 = "np.array([0.5, 1.0, 2.0])"
U3 = "np.array([-0.5, 0.0, 0.5])"
R3 = "np.array([-1.5, 0.25, 2.5])"
I3 = "np.array([12, 10, 6])"
B2 = "np.array([True, True, False, False])"
C2 = "np.array([1.0 + 2.0j, -3.0 - 0.5j])"

UNARY = {
    "abs": "np.array([-1.5, 0.0, 2.0])", "acos": U3, "acosh": "np.array([1.0, 2.0, 4.0])", "asin": U3,
    "asinh": F3, "atan": U3, "atanh": U3, "bitwise_invert": "np.array([0, 5, -6])", "ceil": R3, "conj": C2,
    "cos": F3, "cosh": F3, "exp": F3, "expm1": "np.array([1e-10, 0.5, 1.0])", "floor": R3, "imag": C2,
    "isfinite": "np.array([1.0, np.inf, np.nan])", "isinf": "np.array([1.0, -np.inf, np.nan])",
    "isnan": "np.array([1.0, np.inf, np.nan])", "log": F3, "log1p": "np.array([1e-10, 0.5, 1.0])",
    "log2": "np.array([0.5, 1.0, 8.0])", "log10": "np.array([0.1, 1.0, 1000.0])", "logical_not": B2,
    "negative": R3, "positive": R3, "real": C2, "reciprocal": "np.array([0.5, 4.0, -2.0])",
    "round": "np.array([0.5, 1.5, -2.7])", "sign": "np.array([-2.0, 0.0, 3.0])",
    "signbit": "np.array([-1.0, -0.0, 2.0])", "sin": F3, "sinh": F3, "square": R3,
    "sqrt": "np.array([0.25, 4.0, 9.0])", "tan": U3, "tanh": F3, "trunc": R3,
}
BINARY = {
    "add": (F3, "np.array([1.0, -1.0, 0.5])"), "atan2": ("np.array([1.0, -1.0, 0.0])", "np.array([1.0, 1.0, -1.0])"),
    "bitwise_and": (I3, "np.array([10, 3, 4])"), "bitwise_left_shift": ("np.array([1, 3, 5])", "np.array([1, 2, 3])"),
    "bitwise_or": (I3, "np.array([10, 3, 4])"), "bitwise_right_shift": ("np.array([16, 12, 5])", "np.array([1, 2, 3])"),
    "bitwise_xor": (I3, "np.array([10, 3, 4])"), "copysign": (F3, "np.array([-1.0, 1.0, -0.0])"),
    "divide": (F3, "np.array([2.0, -4.0, 0.5])"), "equal": (F3, "np.array([0.5, 2.0, 2.0])"),
    "floor_divide": ("np.array([7.0, -7.0, 7.5])", "np.array([2.0, 2.0, -2.0])"),
    "greater": (F3, "np.array([0.5, 2.0, 1.0])"), "greater_equal": (F3, "np.array([0.5, 2.0, 1.0])"),
    "hypot": ("np.array([3.0, 5.0, 8.0])", "np.array([4.0, 12.0, 15.0])"),
    "less": (F3, "np.array([0.5, 2.0, 1.0])"), "less_equal": (F3, "np.array([0.5, 2.0, 1.0])"),
    "logaddexp": (F3, "np.array([0.5, -1.0, 1000.0])"), "logical_and": (B2, "np.array([True, False, True, False])"),
    "logical_or": (B2, "np.array([True, False, True, False])"),
    "logical_xor": (B2, "np.array([True, False, True, False])"),
    "maximum": (R3, "np.array([0.0, 1.0, np.nan])"), "minimum": (R3, "np.array([0.0, 1.0, np.nan])"),
    "multiply": (F3, "np.array([2.0, -3.0, 0.25])"),
    "nextafter": ("np.array([1.0, 1.0], dtype=np.float32)", "np.array([2.0, 0.0], dtype=np.float32)"),
    "not_equal": (F3, "np.array([0.5, 2.0, 2.0])"), "pow": (F3, "np.array([2.0, 3.0, -1.0])"),
    "remainder": ("np.array([7.0, -7.0, 7.5])", "np.array([2.0, 2.0, -2.0])"),
    "subtract": (F3, "np.array([1.0, -1.0, 0.5])"),
}
M2 = "np.array([[4.0, 2.0], [2.0, 3.0]])"
X23 = "np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])"

OTHER: dict[str, list[str]] = {
    "clip": ["ua.clip(np.array([-2.0, 0.5, 3.0]), min=0.0, max=1.0)"],
    "broadcast_arrays": ["a, b = ua.broadcast_arrays(np.array([1, 2, 3]), np.array([[10], [20]]))",
                         "a.shape, b.shape"],
    "broadcast_to": ["ua.broadcast_to(np.array([1, 2, 3]), (2, 3))"],
    "concat": ["ua.concat([np.array([[1, 2]]), np.array([[3, 4]])], axis=0)"],
    "flip": ["ua.flip(np.array([[1, 2, 3], [4, 5, 6]]), axis=1)"],
    "moveaxis": ["ua.moveaxis(np.ones((2, 3, 4)), 0, -1).shape"],
    "repeat": ["ua.repeat(np.array([1, 2, 3]), 2)"],
    "reshape": ["ua.reshape(np.arange(6), (2, 3))"],
    "roll": ["ua.roll(np.array([1, 2, 3, 4]), 1)"],
    "squeeze": ["ua.squeeze(np.ones((1, 3, 1)), axis=(0, 2)).shape"],
    "stack": ["ua.stack([np.array([1, 2]), np.array([3, 4])], axis=1)"],
    "tile": ["ua.tile(np.array([1, 2]), (2, 2))"],
    "unstack": ["ua.unstack(np.array([[1, 2], [3, 4]]), axis=1)"],
    "nonzero": ["ua.nonzero(np.array([[0, 3], [4, 0]]))"],
    "searchsorted": ["ua.searchsorted(np.array([1.0, 2.0, 4.0]), np.array([0.5, 2.0, 5.0]))"],
    "where": ["ua.where(np.array([True, False, True]), np.array([1.0, 2.0, 3.0]), -1.0)"],
    "isin": ["ua.isin(np.array([1, 2, 3, 4]), np.array([2, 4]))"],
    "unique_all": ["r = ua.unique_all(np.array([3, 1, 3, 2]))",
                   "ua.sort(r.values), r.counts[ua.argsort(r.values)]"],
    "unique_counts": ["r = ua.unique_counts(np.array([3, 1, 3, 2]))",
                      "ua.sort(r.values), r.counts[ua.argsort(r.values)]"],
    "unique_inverse": ["x = np.array([3, 1, 3, 2])", "r = ua.unique_inverse(x)",
                       "bool(ua.all(r.values[r.inverse_indices] == x))"],
    "unique_values": ["ua.sort(ua.unique_values(np.array([3, 1, 3, 2])))"],
    "diff": ["ua.diff(np.array([1.0, 4.0, 9.0, 16.0]))"],
    "take": ["ua.take(np.array([10, 20, 30]), np.array([2, 0]))"],
    "take_along_axis": ["ua.take_along_axis(np.array([[10, 30], [40, 20]]), np.array([[1], [0]]), axis=1)"],
    "tensordot": ["ua.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1)"],
    "vecdot": [f"ua.vecdot({X23}, np.array([1.0, 0.0, -1.0]))"],
    "linalg.cholesky": [f"ua.linalg.cholesky({M2})"],
    "linalg.cross": ["ua.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))"],
    "linalg.det": [f"ua.linalg.det({M2})"],
    "linalg.diagonal": [f"ua.linalg.diagonal({X23}, offset=1)"],
    "linalg.eig": ["w = ua.linalg.eig(np.array([[2.0, 0.0], [1.0, 3.0]])).eigenvalues", "ua.sort(ua.real(w))"],
    "linalg.eigh": [f"ua.linalg.eigh({M2}).eigenvalues"],
    "linalg.eigvals": ["ua.sort(ua.real(ua.linalg.eigvals(np.array([[2.0, 0.0], [1.0, 3.0]]))))"],
    "linalg.eigvalsh": [f"ua.linalg.eigvalsh({M2})"],
    "linalg.inv": [f"ua.linalg.inv({M2})"],
    "linalg.matrix_norm": ["ua.linalg.matrix_norm(np.array([[3.0, 0.0], [0.0, 4.0]]))"],
    "linalg.matrix_power": ["ua.linalg.matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3)"],
    "linalg.matrix_rank": ["ua.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]]))"],
    "linalg.outer": ["ua.linalg.outer(np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]))"],
    "linalg.pinv": ["ua.linalg.pinv(np.array([[2.0, 0.0], [0.0, 4.0]]))"],
    "linalg.qr": [f"a = {M2}", "q, r = ua.linalg.qr(a)", "bool(ua.all(ua.abs(q @ r - a) < 1e-12))"],
    "linalg.slogdet": [f"ua.linalg.slogdet({M2})"],
    "linalg.solve": [f"ua.linalg.solve({M2}, np.array([8.0, 7.0]))"],
    "linalg.svd": [f"ua.linalg.svd({M2}, full_matrices=False).S"],
    "linalg.svdvals": ["ua.linalg.svdvals(np.array([[3.0, 0.0], [0.0, -4.0]]))"],
    "linalg.trace": [f"ua.linalg.trace({M2})"],
    "linalg.vector_norm": ["ua.linalg.vector_norm(np.array([3.0, -4.0]))"],
    "fft.fft": ["ua.fft.fft(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.complex128))"],
    "fft.ifft": ["ua.fft.ifft(np.array([10.0, -2.0 + 2.0j, -2.0, -2.0 - 2.0j]))"],
    "fft.fftn": ["ua.fft.fftn(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.complex128))"],
    "fft.ifftn": ["ua.fft.ifftn(np.array([[10.0, -2.0], [-4.0, 0.0]], dtype=np.complex128))"],
    "fft.rfft": ["ua.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0]))"],
    "fft.irfft": ["ua.fft.irfft(np.array([10.0, -2.0 + 2.0j, -2.0]))"],
    "fft.rfftn": ["ua.fft.rfftn(np.array([[1.0, 2.0], [3.0, 4.0]]))"],
    "fft.irfftn": ["ua.fft.irfftn(np.array([[10.0, -2.0], [-4.0, 0.0]], dtype=np.complex128), s=(2, 2), axes=(0, 1))"],
    "fft.hfft": ["ua.fft.hfft(np.array([1.0, 2.0, 3.0], dtype=np.complex128))"],
    "fft.ihfft": ["ua.fft.ihfft(np.array([9.0, -3.0, 1.0, -3.0]))"],
    "fft.fftshift": ["ua.fft.fftshift(np.array([0.0, 1.0, 2.0, -2.0, -1.0]))"],
    "fft.ifftshift": ["ua.fft.ifftshift(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]))"],
}


def example(name: str) -> list[str]:
    """The doctest lines (without prompts) for the generated function ``name``."""
    short = name.rpartition(".")[2]
    if name in OTHER:
        return OTHER[name]
    if short in UNARY:
        return [f"ua.{short}({UNARY[short]})"]
    if short in BINARY:
        a, b = BINARY[short]
        return [f"ua.{short}({a}, {b})"]
    raise KeyError(f"no example for {name}: add one to tools/frontend_examples.py")
