# Structured attention masks, described and never materialised: causal aligned bottom-right, a sliding window and
# segment ids (packed documents). The front end checks the arguments and builds one MaskSpec; every backend's
# attention plan takes it in place of a bare is_causal. Query i sits at position p_i = i + (Sk - Sq) and may attend
# key j iff p_i - left <= j <= p_i + right and q_segments[..., i] == kv_segments[..., j].
from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class MaskSpec:
    causal: bool = False
    left: int | None = None  # window sides; None = unbounded
    right: int | None = None  # already min(right, 0) when causal
    q_segments: Any = None  # native integer arrays (*B, Sq) and (*B, Sk), or None
    kv_segments: Any = None

    @property
    def structured(self) -> bool:
        """Anything beyond plain ``is_causal`` (a window or segment ids): the routes for those are told apart."""
        return self.left is not None or self.q_segments is not None or self.right != (0 if self.causal else None)

    def describe(self) -> str:
        """The mask form, for ``ua.explain``."""
        forms = []
        if self.left is not None or (self.right is not None and (self.right, self.causal) != (0, True)):
            forms.append(f"sliding window ({_side(self.left)}, {_side(self.right)})")
        forms += ["causal bottom-right"] * self.causal + ["segment ids"] * (self.q_segments is not None)
        return ", ".join(forms) + ("; never materialised" if self.structured else "") if forms else "none"

    def reach(self, i0: int, i1: int, sq: int, sk: int) -> tuple[int, int]:
        """The keys ``[j_lo, j_hi)`` that queries ``[i0, i1)`` may reach by causal and window (positions only)."""
        off = sk - sq
        lo = 0 if self.left is None else max(0, i0 + off - self.left)
        hi = sk if self.right is None else min(sk, i1 - 1 + off + self.right + 1)
        return lo, max(lo, hi)

    def key_range(self, sq: int, sk: int) -> tuple[int, int]:
        """The keys any query can reach (decoding slices K and V to them)."""
        return self.reach(0, sq, sq, sk)

    def live(self, i0: int, i1: int, j0: int, j1: int, sq: int, sk: int) -> bool:
        """Whether causal and window let any query of ``[i0, i1)`` attend any key of ``[j0, j1)``."""
        lo, hi = self.reach(i0, i1, sq, sk)
        return i0 < i1 and max(lo, j0) < min(hi, j1)

    def rest(self, sq: int, sk: int, lo: int, hi: int) -> str:
        """What the positions still ask of keys lo..hi-1 once K/V is sliced to them (what each library's native
        route is chosen by): "none" (every query may attend every one), "causal" (causal aligned bottom-right on
        the slice) or "band" (a left bound still cuts rows)."""
        off = sk - sq
        left_free = self.left is None or (sq - 1 + off) - self.left <= lo
        if left_free and (self.right is None or off + self.right >= hi - 1):
            return "none"
        if left_free and self.right == 0 and hi == sk:
            return "causal"
        return "band"

    def allowed(self, xp: Any, i0: int, i1: int, j0: int, j1: int, sq: int, sk: int, memo: dict[Any, Any] | None = None,
                **device: Any) -> Any:
        """The block's boolean mask ``(..., i1 - i0, j1 - j0)`` from positions and ids (None: all allowed);
        ``device`` goes to ``xp.arange``; ``memo`` keeps the position part, the same for blocks on one diagonal."""
        off, out = sk - sq, None
        # lo <= j - p_i <= hi, each bound kept only where it cuts the block
        lo = None if self.left is None or j0 >= i1 - 1 + off - self.left else -self.left
        hi = None if self.right is None or j1 - 1 <= i0 + off + self.right else self.right
        key = (j0 - i0 - off, i1 - i0, j1 - j0, lo, hi)
        if (lo is not None or hi is not None) and (out := (memo or {}).get(key)) is None:
            d = xp.reshape(xp.arange(j0, j1, **device), (1, j1 - j0)) - xp.reshape(
                xp.arange(i0 + off, i1 + off, **device), (i1 - i0, 1))
            out = d >= lo if hi is None else d <= hi if lo is None else xp.logical_and(d >= lo, d <= hi)
            if memo is not None:
                memo[key] = out
        if self.q_segments is not None:
            same = xp.expand_dims(self.q_segments[..., i0:i1], axis=-1) == xp.expand_dims(
                self.kv_segments[..., j0:j1], axis=-2)
            out = same if out is None else xp.logical_and(out, same)
        return out


def _side(n: int | None) -> str:
    return "unbounded" if n is None else str(n)


NONE = MaskSpec()
CAUSAL = MaskSpec(True, None, 0)
