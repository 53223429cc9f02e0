"""The environment of every git child patchq starts: inherited variables that would point
git at another repository or hand it a program are scrubbed, configuration that would run
code is pinned off, and drivers named by attributes are disarmed: a target's files, and
the environment patchq was started in, never run a program through git. Also the one
probe of which processes hold a lock file open, and the author identity git would use.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

# Variables that make git look at another repository, index or object store than ours,
# or that hand git a program to run. Each git child's environment is built without them.
SCRUBBED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_REPLACE_REF_BASE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_TEMPLATE_DIR",
    "GIT_PROXY_COMMAND",
)

# Configuration that runs a program or sends git elsewhere, pinned for every git process
# patchq starts, whatever the target's config (or a tracked file it includes) says: a
# patch must never run code through a hook (a husky `core.hooksPath` is a tracked folder),
# an fsmonitor, a pager, an editor, a signing program or a credential helper.
# Command-scope config outranks every file, included ones too.
PINNED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("core.sshCommand", "false"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gpg.program", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),
)

# Per-driver commands (named by attributes, which a patch can write): every filter, merge
# driver and configured hook the configuration defines gets an empty command, and a
# filter is no longer required. Diff drivers cannot be emptied (git runs an empty
# textconv and fails): every command that makes a diff gets --no-textconv --no-ext-diff.
_DRIVER = re.compile(
    r"(filter)\.(.+)\.(?:clean|smudge|process|required)"
    r"|(merge)\.(.+)\.driver"
    r"|(hook)\.(.+)\.command",
    re.S,
)
DIFFING = frozenset(
    {"log", "show", "diff", "diff-tree", "diff-index", "diff-files", "format-patch"}
)


def neutralised(keys: Iterable[str]) -> list[tuple[str, str]]:
    """Config overrides that disarm every driver named among `keys` (lower-cased keys)."""
    out: dict[str, str] = {}
    for key in keys:
        m = _DRIVER.fullmatch(key)
        if m is None:
            continue
        kind = next(g for g in (m.group(1), m.group(3), m.group(5)) if g)
        name = next(g for g in (m.group(2), m.group(4), m.group(6)) if g)
        if kind == "filter":
            for sub, value in (
                ("clean", ""),
                ("smudge", ""),
                ("process", ""),
                ("required", "false"),
            ):
                out[f"filter.{name}.{sub}"] = value
        elif kind == "merge":
            out[f"merge.{name}.driver"] = ""
        else:
            out[f"hook.{name}.command"] = ""
    return sorted(out.items())


def child_environment(
    pins: Sequence[tuple[str, str]], base: dict[str, str] | None = None, **extra: str
) -> dict[str, str]:
    """The environment of one git child: the caller's, less what would redirect git or run
    a program, plus `pins` as command-scope config (GIT_CONFIG_COUNT, git 2.31+)."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if k not in SCRUBBED and not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_PAGER="cat",
        GIT_EDITOR="false",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_CONFIG_COUNT=str(len(pins)),
    )
    for i, (key, value) in enumerate(pins):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env.update(extra)
    return env


def user_identity(
    config: dict[str, str], environ: dict[str, str] | None = None
) -> tuple[str, str] | None:
    """The author name and email git would use, from `config` (lower-cased keys, the
    effective values: the repository's over the global ones) and the environment, in
    git's order: GIT_AUTHOR_NAME, author.name, user.name; GIT_AUTHOR_EMAIL, author.email,
    user.email, EMAIL. None unless both are known: git's guess from the host name is
    not an identity worth writing into a commit."""
    env = os.environ if environ is None else environ

    def first(*values: str | None) -> str:
        return next((v.strip() for v in values if v and v.strip()), "")

    name = first(env.get("GIT_AUTHOR_NAME"), config.get("author.name"), config.get("user.name"))
    email = first(
        env.get("GIT_AUTHOR_EMAIL"),
        config.get("author.email"),
        config.get("user.email"),
        env.get("EMAIL"),
    )
    return (name, email) if name and email else None


def user_identity_at(cwd: Path) -> tuple[str, str] | None:
    """`user_identity` where there is no target: the config git reads in `cwd` (the
    patch repo's own, if it is a checkout, then the global and system ones)."""
    proc = subprocess.run(
        ["git", "config", "-z", "--list"],
        cwd=cwd,
        capture_output=True,
        env=child_environment(PINNED_CONFIG),
    )
    values: dict[str, str] = {}
    if proc.returncode == 0:
        for entry in proc.stdout.split(b"\0"):
            key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
            values[key.lower()] = value
    return user_identity(values)


def check_interrupt(proc: subprocess.CompletedProcess[bytes]) -> None:
    """A git child that died of SIGINT was stopped by Ctrl-C (a terminal signals the whole
    process group): that is the user's interrupt, not git failing, so it is raised as one
    and the command rolls back and exits 130 rather than reporting a broken git."""
    if proc.returncode == -signal.SIGINT:
        raise KeyboardInterrupt


def lock_holders(path: Path) -> list[int] | None:
    """The processes that have `path` open now (a live git holds its lock file open
    until it is done); None where that cannot be seen (no /proc)."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    want = os.path.realpath(path)
    pids = []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            fds = list((d / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == want:
                    pids.append(int(d.name))
                    break
            except OSError:
                continue
    return pids


def alive(pid: str) -> bool:
    """Whether process `pid` runs (a name that is no pid is no process)."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_git_hook(lock: Path) -> None:
    """Fault injection for the interruption tests (PATCHQ_CRASH_AT=git:index-locked): a
    git that took the index's lock and died with patchq, leaving `index.lock` behind, as
    a SIGKILL of the process group during patchq's checkout does. Never set outside tests."""
    if os.environ.get("PATCHQ_CRASH_AT") != "git:index-locked":
        return
    os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    os.kill(os.getpid(), signal.SIGKILL)


def end_process(proc: subprocess.Popen[bytes]) -> None:
    """Stop a long-lived git reader: its output closed first (git may be blocked writing
    answers nobody will read, and then exits at once), then its input; killed if it has
    not ended within 5 s."""
    for pipe in (proc.stdout, proc.stdin):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
