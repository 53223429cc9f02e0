"""Hypothesis strategies for files, downstream edits and upstream drift.

A case is three versions of one file: `base` (what the patch was made against), `ours`
(base with the downstream edit: the patch) and `theirs` (base after upstream moved on).
Lines are bytes with their endings.

With `unique=True` every line is distinct and so is every line an edit adds (`ours 3`,
`theirs 1`, `line 7 ours`), so "which line is which" has one answer and properties can be
stated exactly; with `unique=False` lines repeat (braces, blank lines, `x++;`), which is
what makes placement ambiguous in real code. Endings mix LF, CRLF and a missing final
newline, and content may hold bytes that are not UTF-8.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

WORDS = [
    b"int a;",
    b"int b;",
    b"}",
    b"{",
    b"",
    b"return 0;",
    b"x++;",
    b"// note",
    b"caf\xe9",
    b"\t\tindented",
]
ENDINGS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n"])


@dataclass(frozen=True)
class Case:
    base: list[bytes]
    ours: list[bytes]
    theirs: list[bytes]
    unique: bool

    @property
    def data(self) -> tuple[bytes, bytes, bytes]:
        return b"".join(self.base), b"".join(self.ours), b"".join(self.theirs)


@st.composite
def files(
    draw: st.DrawFn, unique: bool | None = None, min_size: int = 1, max_size: int = 30
) -> list[bytes]:
    """A file's lines; unique ones are `line N` (N in order), others drawn from WORDS."""
    if unique is None:
        unique = draw(st.booleans())
    n = draw(st.integers(min_size, max_size))
    crlf = draw(st.sampled_from(["none", "none", "all", "mixed"]))
    out = []
    for i in range(n):
        text = b"line %d" % i if unique else draw(st.sampled_from(WORDS))
        end = b"\r\n" if crlf == "all" else draw(ENDINGS) if crlf == "mixed" else b"\n"
        out.append(text + end)
    if out and draw(st.integers(0, 9)) == 0:
        out[-1] = out[-1].rstrip(b"\r\n")  # no newline at end of file
    return out


def _ending(line: bytes) -> bytes:
    return line[len(line.rstrip(b"\r\n")) :] or b"\n"


@st.composite
def edited(
    draw: st.DrawFn,
    lines: list[bytes],
    tag: str,
    unique: bool,
    max_ops: int = 3,
    min_ops: int = 1,
    move: bool = False,
) -> list[bytes]:
    """`lines` after 1..max_ops insertions, deletions, changes (and, if `move`, a block
    moved elsewhere). Inserted and changed lines carry `tag` so that, with `unique`, they
    occur nowhere else."""
    out = list(lines)
    ops = ["ins", "del", "chg"] + (["move"] if move else [])
    for j in range(draw(st.integers(min_ops, max_ops))):
        op = draw(st.sampled_from(ops))
        i = draw(st.integers(0, max(len(out) - 1, 0)))
        if op == "ins" or not out:
            k = draw(st.integers(1, 3))
            new = [
                b"%s %d.%d\n" % (tag.encode(), j, m)
                if unique or draw(st.booleans())
                else draw(st.sampled_from(WORDS)) + b"\n"
                for m in range(k)
            ]
            if i == len(out) - 1 and out and not out[-1].endswith(b"\n") and draw(st.booleans()):
                i += 1  # append after a last line without a newline: give it one
                out[-1] += b"\n"
            out[i:i] = new
        elif op == "del":
            k = draw(st.integers(1, 3))
            del out[i : i + k]
        elif op == "chg":
            end = out[i][len(out[i].rstrip(b"\r\n")) :]
            out[i] = out[i].rstrip(b"\r\n") + b" " + tag.encode() + end
        else:
            k = draw(st.integers(1, 4))
            block = out[i : i + k]
            del out[i : i + k]
            to = draw(st.integers(0, len(out)))
            if block and not block[-1].endswith(b"\n"):
                block[-1] += b"\n"
            if to == len(out) and out and not out[-1].endswith(b"\n"):
                out[-1] += b"\n"
            out[to:to] = block
    return out


@st.composite
def cases(
    draw: st.DrawFn, unique: bool | None = None, drift: bool = True, move: bool = True
) -> Case:
    """A file, a downstream edit of it (1–3 changes) and upstream drift (0–3 changes)."""
    if unique is None:
        unique = draw(st.booleans())
    base = draw(files(unique, min_size=3))
    ours = draw(edited(base, "ours", unique))
    theirs = draw(edited(base, "theirs", unique, min_ops=0, move=move)) if drift else base
    return Case(base, ours, theirs, unique)


# --- names ------------------------------------------------------------------------------

_NAME_PARTS = st.sampled_from(
    [
        "src",
        "a b",
        "na\u00efve",
        "caf\udce9",
        "x.c",
        "tab\there",
        'quote"d',
        "back\\slash",
        "new\nline",
        "-dash",
        "dir",
    ]
)


@st.composite
def paths(draw: st.DrawFn) -> str:
    """Repo paths of 1–3 components, with spaces, quotes, control and non-UTF-8 bytes
    (the last held as surrogates, as patchq holds them)."""
    return "/".join(draw(st.lists(_NAME_PARTS, min_size=1, max_size=3)))
