"""Counted nouns in messages: "1 patch", "2 patches", "+1 line" — singular for one only.

Every message that puts a number before a noun goes through `plural`, so none says
"1 patches" and none spells `patch(es)`.
"""

from __future__ import annotations

_ES = ("s", "x", "z", "ch", "sh")


def plural(n: int, word: str, many: str | None = None, *, signed: bool = False) -> str:
    """`n` and `word`, in the plural unless n is 1 or -1: `plural(3, "patch")` is
    "3 patches"; `many` spells an irregular plural; `signed` writes +n/-n (offsets)."""
    if many is None:
        many = word + ("es" if word.endswith(_ES) else "s")
    count = f"{n:+d}" if signed else str(n)
    return f"{count} {word if abs(n) == 1 else many}"
