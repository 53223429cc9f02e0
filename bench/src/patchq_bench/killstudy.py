#!/usr/bin/env python3
"""The random-kill study of issue 15: kill patchq at random moments on a real 300-patch
series, recover, and check the target and the patch repo byte for byte.

    patchq-bench killstudy [--repo REPO | --generated] [--points 180]
                               [--seed 15] [--md bench/KILLSTUDY.md]

The series is the newest 300 consecutive non-merge commits of --repo as `git format-patch`
writes them (the speed bench's window; a generated repository when no mirror is there). For each
command — apply, push -a, pop -a, a rebase that finishes, a rebase that stops at a
conflict, rebase --continue after a resolution, rebase --abort — the study first runs it
undisturbed to get the reference end state and its duration. Then, at each kill point, it
restores the command's starting state, runs the command in its own process group and
kills the group (patchq and its git children: SIGKILL) at a random delay within that
duration, or at a random journal point through PATCHQ_CRASH_AT (the hook the interruption
tests use, `git:index-locked` among them). It then recovers — `<verb> --continue` or
`--abort`, or `patchq recover`, at random — and compares: HEAD, every ref, the index
(`ls-files -s`), every file of the working tree (ignored ones too), every file of
`.git/patchq/` and every file of the patch repo must be exactly the starting state (abort)
or the reference end state (continue). A kill that landed after the command had finished
is not counted as a kill point.

Standard library only; patchq runs as its command-line program. Run it at low priority
(`nice -n 10`), with the clones on tmpfs (`TMPDIR=/dev/shm`): a point on curl's history
then takes about 2 s, not the 40 s it takes on a shared disk.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from patchq_bench.paths import BENCH, MIRRORS_ENV, REPO, path_option
from patchq_bench.speed import workspace as bench  # the window, clone and format-patch

POINTS = [
    "journal:recorded",
    "journal:target-moved",
    "journal:file-written",
    "journal:state-written",
    "journal:done",
    "git:index-locked",
    "rebase:stopped",
    "rebase:finishing",
    "exec:each",
]


@dataclass
class Scenario:
    name: str
    setup: list[list[str]]  # patchq commands that make the starting state
    args: list[str]
    verb: str  # the verb whose --continue/--abort recovers it
    # How each recovery ends: "before" (the starting state), "after" (the reference end
    # state) or "origin" (before the whole rebase).
    abort_to: str = "before"
    resolve_first: bool = False  # resolve the conflict in the working tree before `args`
    edit_first: bool = False  # edit a tracked file before `args` (what `refresh` records)
    # Recovered with `--continue` only (`--exec-each`: an abort after a killed run gives
    # the stack back with the runs so far recorded, a third state on purpose).
    continue_only: bool = False
    saved: Path | None = None
    reference: dict[str, str] = field(default_factory=dict)
    before: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    rc: int = 0


@dataclass
class Study:
    target: Path
    queue: Path
    work: Path
    env: dict[str, str]
    python: str

    def patchq(self, *args: str, crash: str | None = None) -> subprocess.CompletedProcess[bytes]:
        env = dict(self.env)
        if crash:
            env["PATCHQ_CRASH_AT"] = crash
        return subprocess.run(
            [
                self.python,
                "-m",
                "patchq",
                "--dir",
                str(self.queue),
                "--target",
                str(self.target),
                *args,
            ],
            cwd=self.target,
            env=env,
            capture_output=True,
        )

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.target), *args], capture_output=True, env=self.env, check=True
        ).stdout.decode("utf-8", "surrogateescape")

    def save(self, name: str) -> Path:
        dest = self.work / "saved" / name
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        subprocess.run(["cp", "-a", str(self.target), str(dest / "target")], check=True)
        subprocess.run(["cp", "-a", str(self.queue), str(dest / "queue")], check=True)
        return dest

    def restore(self, saved: Path) -> None:
        for live, name in ((self.target, "target"), (self.queue, "queue")):
            shutil.rmtree(live)
            subprocess.run(["cp", "-a", str(saved / name), str(live)], check=True)

    def snapshot(self) -> dict[str, str]:
        """Everything the study compares, as name → digest (or text)."""
        out: dict[str, str] = {}
        head = (self.target / ".git" / "HEAD").read_text().strip()
        out["HEAD"] = head
        out["HEAD id"] = self.git("rev-parse", "HEAD").strip()
        out["refs"] = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        out["index"] = hashlib.sha256(
            self.git("ls-files", "-s", "-z").encode("utf-8", "surrogateescape")
        ).hexdigest()
        out["status"] = self.git(
            "status", "--porcelain=v1", "-z", "--ignored", "--untracked-files=all"
        )
        for root, label, skip in (
            (self.target, "wt", {".git"}),
            (self.target / ".git" / "patchq", "state", set()),
            (self.queue, "patch-repo", set()),
        ):
            if not root.exists():
                continue
            for dirpath, dirs, names in os.walk(root):
                if Path(dirpath) == root:
                    dirs[:] = [d for d in dirs if d not in skip]
                for n in names:
                    p = Path(dirpath) / n
                    rel = p.relative_to(root)
                    if label == "state" and (str(rel) == "lock" or rel.parts[0] == "last-op"):
                        continue  # the run lock's flock file, undo's record: see the note
                    data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
                    out[f"{label}:{rel}"] = hashlib.sha256(data).hexdigest()
        for lock in ("index.lock", "HEAD.lock"):
            if (self.target / ".git" / lock).exists():
                out[f"git:{lock}"] = "present"
        return out


def diff(a: dict[str, str], b: dict[str, str]) -> list[str]:
    keys = sorted(set(a) | set(b))
    return [k for k in keys if a.get(k) != b.get(k)]


def edit_a_file(target: Path) -> None:
    """An unrefreshed edit: one line added to the first tracked file."""
    first = subprocess.run(
        ["git", "-C", str(target), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.split(b"\0")[0]
    path = target / os.fsdecode(first)
    path.write_bytes(path.read_bytes() + b"an unrefreshed line of the killstudy\n")


def resolve_conflicts(target: Path) -> None:
    """Resolve every diff3 conflict in the working tree by taking the patch's side."""
    out = subprocess.run(
        ["git", "-C", str(target), "grep", "-l", "-z", "--untracked", "-e", "^<<<<<<< "],
        capture_output=True,
    ).stdout
    for name in [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]:
        p = target / name
        lines = p.read_bytes().split(b"\n")
        kept: list[bytes] = []
        side = None
        for line in lines:
            if line.startswith(b"<<<<<<< "):
                side = "ours"
            elif line.startswith(b"||||||| ") and side == "ours":
                side = "base"
            elif line.startswith(b"=======") and side in ("ours", "base"):
                side = "theirs"
            elif line.startswith(b">>>>>>> ") and side == "theirs":
                side = None
            elif side in (None, "theirs"):
                kept.append(line)
        p.write_bytes(b"\n".join(kept))


def generate(src: Path, files: int, before: int, window: int, seed: int) -> None:
    """A repository shaped like a real project's history: `files` C-like files, then
    `before` commits (the drift a rebase onto BASE~before undoes), then `window` commits
    editing 1–3 spots of 1–2 files each, with a file added every 15th and one deleted
    every 40th (a file no later commit touches). Fixed dates: the same bytes every run."""
    rnd = random.Random(seed)
    env = bench.base_env(
        GIT_AUTHOR_NAME="Ada Example",
        GIT_AUTHOR_EMAIL="ada@example.invalid",
        GIT_AUTHOR_DATE="1700000000 +0000",
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(src)], check=True, env=env)
    text: dict[str, list[str]] = {}
    for i in range(files):
        name = f"src/mod{i // 20}/file{i:03d}.c"
        text[name] = [f"int {name.replace('/', '_')[:-2]}_v{j} = {j};\n" for j in range(60)]

    def write_all(changed: list[str], gone: list[str]) -> None:
        for name in changed:
            p = src / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(text[name]))
        for name in gone:
            (src / name).unlink()

    def commit(msg: str, n: int) -> None:
        subprocess.run(["git", "-C", str(src), "add", "-A"], check=True, env=env)
        e = dict(env, GIT_COMMITTER_DATE=f"{1700000000 + n * 60} +0000")
        e["GIT_AUTHOR_DATE"] = e["GIT_COMMITTER_DATE"]
        subprocess.run(["git", "-C", str(src), "commit", "-q", "-m", msg], check=True, env=e)

    write_all(list(text), [])
    commit("initial import", 0)
    frozen: set[str] = set()  # deleted files, and files that will never be touched again
    for n in range(1, before + window + 1):
        live = sorted(set(text) - frozen)
        changed: list[str] = []
        gone: list[str] = []
        for name in rnd.sample(live, rnd.choice((1, 1, 2))):
            lines = text[name]
            for _ in range(rnd.choice((1, 2, 3))):
                k = rnd.randrange(len(lines))
                lines[k] = f"int change_{n}_{k} = {rnd.randrange(1000)}; /* commit {n} */\n"
            changed.append(name)
        if n > before and n % 15 == 0:
            name = f"src/new/added{n:03d}.c"
            text[name] = [f"/* added in {n} */\n", f"int added_{n} = 1;\n"]
            changed.append(name)
        if n > before and n % 40 == 0:
            victim = rnd.choice([x for x in live if x not in changed])
            frozen.add(victim)
            gone.append(victim)
            del text[victim]
        write_all(changed, gone)
        commit(f"mod: change {n}\n\nA change to {', '.join(changed + gone)}.", n)


def make_series(args: argparse.Namespace, tmp: Path) -> tuple[Path, Path, str, str, str]:
    """The target, the patch repo, the base, an upstream commit that moves nothing the
    series touches (a rebase onto it finishes) and a drifted upstream (one that stops)."""
    repo = args.repo
    if args.generated or repo is None or not repo.exists():
        repo = tmp / "generated"
        generate(repo, 300, args.drift, 300, args.seed)
    s = bench.prepare(repo, args.end, 300, tmp, True, drift=args.drift)
    assert s.drift is not None
    t = s.target
    env = bench.base_env()
    # A later upstream: BASE plus one commit touching a file no patch touches.
    bench.git(t, "checkout", "-q", "--detach", s.base)
    (t / "KILLSTUDY-UPSTREAM-NOTE").write_text("an upstream change no patch touches\n")
    bench.git(t, "add", "KILLSTUDY-UPSTREAM-NOTE", env=env)
    bench.git(t, "commit", "-q", "-m", "upstream: a note", env=env)
    later = bench.git(t, "rev-parse", "HEAD")
    bench.git(t, "update-ref", "refs/heads/upstream-later", later)
    bench.git(t, "update-ref", "refs/heads/upstream-drift", s.drift)
    bench.git(t, "checkout", "-q", "--detach", s.base)
    # Ignored files a person keeps in the target: they must survive every point too.
    (t / ".git" / "info").mkdir(exist_ok=True)
    with (t / ".git" / "info" / "exclude").open("a") as f:
        f.write("*.killstudy-o\n")
    (t / "build.killstudy-o").write_bytes(b"\x7fELF an ignored build output\n")
    return t, s.queue, s.base, later, s.drift


def parser(prog: str | None = None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    path_option(
        ap,
        "--repo",
        MIRRORS_ENV,
        "the repository the series is cut from",
        "curl+curl",
        "repo",
        always=False,
    )
    ap.add_argument("--end", default="HEAD")
    ap.add_argument(
        "--generated",
        action="store_true",
        help="a generated 300-file repository instead of --repo (also when --repo is absent)",
    )
    ap.add_argument("--drift", type=int, default=100, help="the stopping rebase: BASE~D")
    ap.add_argument("--points", type=int, default=180)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--md", type=Path, default=BENCH / "KILLSTUDY.md")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", help="comma-separated scenario names (default: all)")
    return ap


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    args = parser(prog).parse_args(argv)
    rnd = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="killstudy-"))
    started = time.time()
    try:
        target, queue, base, later, drift = make_series(args, tmp)
        env = bench.base_env()
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"]
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"]
        st = Study(target, queue, tmp, env, sys.executable)
        names = [
            n
            for n in (queue / "series").read_text().split("\n")
            if n.strip() and not n.startswith("#")
        ]
        scenarios = make_scenarios(base, names)
        if args.only:
            wanted = set(args.only.split(","))
            scenarios = [sc for sc in scenarios if sc.name in wanted]
        undisturbed(st, scenarios)
        results: list[dict[str, object]] = []
        counted: Counter[str] = Counter()
        late: Counter[str] = Counter()
        i = 0
        while sum(counted.values()) < args.points:
            sc = scenarios[i % len(scenarios)]
            i += 1
            assert sc.saved is not None
            st.restore(sc.saved)
            killed = kill(st, sc, rnd)
            if killed is None:
                late[sc.name] += 1  # finished before the kill, or not on this command's path
                continue
            entry = recover(st, sc, rnd, killed)
            counted[sc.name] += 1
            results.append(entry)
            mark = "ok" if entry["ok"] else "FAILED"
            print(
                f"{sum(counted.values()):4d} {sc.name:18} {entry['kill']:24} "
                f"{entry['recovery']:20} {mark}",
                flush=True,
            )
            if not entry["ok"]:
                print(json.dumps(entry, indent=1), flush=True)
        write_report(args, scenarios, results, late, time.time() - started)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
        return 0 if all(r["ok"] for r in results) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def make_scenarios(base: str, names: list[str]) -> list[Scenario]:
    """The commands killed: each with its set-up, its recovery verb and where an abort
    goes back to."""
    on = ["apply", "--onto", base]
    stop = ["rebase", "--onto", "upstream-drift"]
    return [
        Scenario("apply", [], on, "apply"),
        Scenario("push -a", [on, ["pop", "-a"]], ["push", "-a"], "push"),
        Scenario("pop -a", [on], ["pop", "-a"], "pop"),
        Scenario("rebase (finishes)", [on], ["rebase", "--onto", "upstream-later"], "rebase"),
        Scenario("rebase (stops)", [on], stop, "rebase"),
        Scenario(
            "rebase --continue",
            [on, stop],
            ["rebase", "--continue"],
            "rebase",
            abort_to="origin",
            resolve_first=True,
        ),
        Scenario("rebase --abort", [on, stop], ["rebase", "--abort"], "rebase", abort_to="origin"),
        Scenario(
            "rebase --exec-each",
            [on],
            ["rebase", "--onto", "upstream-later", "--exec-each", "true"],
            "rebase",
            continue_only=True,
        ),
        Scenario("float", [on], ["float", names[-5]], "recover"),
        Scenario("sink", [on], ["sink", names[5]], "recover"),
        # undo's journal only goes back: --continue and --abort both finish the undo.
        Scenario("undo", [on, ["pop", "-a"]], ["undo"], "recover", abort_to="after"),
        Scenario("refresh", [on], ["refresh"], "refresh", edit_first=True),
    ]


def undisturbed(st: Study, scenarios: list[Scenario]) -> None:
    """Each scenario once, undisturbed from its saved set-up: its time (where a kill may
    land), its exit and the state it reaches (what a recovery must give)."""
    target = st.target
    fresh = st.save("fresh")
    for sc in scenarios:
        st.restore(fresh)
        for k, cmd in enumerate(sc.setup):
            r = st.patchq(*cmd)
            if r.returncode not in (0, 3):
                raise SystemExit(f"setup {cmd} of {sc.name}: {r.stderr.decode()}")
            if k == 0:
                sc.origin = st.snapshot()  # before the rebase: where --abort goes back
        if sc.resolve_first:
            resolve_conflicts(target)
        if sc.edit_first:
            edit_a_file(target)
        sc.saved = st.save(sc.name.replace(" ", "_"))
        sc.before = st.snapshot()
        t0 = time.perf_counter()
        r = st.patchq(*sc.args)
        sc.seconds = time.perf_counter() - t0
        sc.rc = r.returncode
        if r.returncode not in (0, 3):
            raise SystemExit(f"{sc.name}: {r.stderr.decode()}")
        sc.reference = st.snapshot()
        print(f"{sc.name}: {sc.seconds:.2f}s undisturbed, exit {sc.rc}", flush=True)


def kill(st: Study, sc: Scenario, rnd: random.Random) -> tuple[str | None, float] | None:
    """Run the scenario's command and kill it: at a crash point (PATCHQ_CRASH_AT) or by
    SIGKILL after a random delay. (crash point, delay), or None when it was not killed."""
    queue, target = st.queue, st.target
    crash = None
    delay = 0.0
    if rnd.random() < 0.3:
        crash = rnd.choice(POINTS)
    else:
        delay = rnd.uniform(0.02, sc.seconds * 0.97)
    env = dict(st.env)
    if crash:
        env["PATCHQ_CRASH_AT"] = crash
    p = subprocess.Popen(
        [st.python, "-m", "patchq", "--dir", str(queue), "--target", str(target), *sc.args],
        cwd=target,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    if crash is None:
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        else:
            return None  # finished before the kill: not a kill point
    else:
        p.wait()
        if p.returncode != -9:
            return None  # that point is not on this command's path
    return crash, delay


def recover(
    st: Study, sc: Scenario, rnd: random.Random, killed: tuple[str | None, float]
) -> dict[str, object]:
    """The recovery a person runs after the kill, and whether it reached a right state."""
    crash, delay = killed
    target = st.target
    time.sleep(0.05)  # let the killed group's last git exit
    left = [n for n in ("index.lock", "patchq/op.json") if (target / ".git" / n).exists()] + [
        m.name for m in (target / ".git" / "patchq").glob("git-step.*")
    ]
    mode = "continue" if sc.continue_only else rnd.choice(["continue", "abort"])
    journal_there = (target / ".git" / "patchq" / "op.json").exists()
    if sc.name == "rebase --abort" and not journal_there:
        # An --abort killed before its journal had not begun: the rebase is still
        # stopped, and what finishes an abort is another --abort.
        mode = "abort"
    how = rnd.choice([sc.verb, "recover"]) if sc.verb != "rebase" else "rebase"
    journal = (target / ".git" / "patchq" / "op.json").exists()
    rec = st.patchq(how, f"--{mode}")  # also where nothing was left: what a person does
    got = st.snapshot()
    if mode == "abort" and sc.abort_to != "after":
        want = sc.origin if sc.abort_to == "origin" else sc.before
        # What `rebase --continue` remembered in resolutions/ stays through an
        # abort, by design (issue 14.8: the rebase redone reuses it).
        got = {
            k: v
            for k, v in got.items()
            if not (k.startswith("patch-repo:resolutions/") and k not in want)
        }
    else:
        want = sc.reference
    if journal or sc.abort_to == "origin":
        ok_states = [want]
    else:
        # Killed before the command changed anything, or after it was done: the
        # state is one of the two, and a recovery finds nothing to do.
        ok_states = [want, sc.before, sc.reference]
    ok = any(got == s for s in ok_states)
    entry: dict[str, object] = {
        "command": sc.name,
        "kill": crash or f"SIGKILL at {delay:.3f}s",
        "journal_left": journal,
        "recovery": f"{how} --{mode}" if rec is not None else "(none needed)",
        "recovery_exit": None if rec is None else rec.returncode,
        "ok": ok,
    }
    if not ok:
        near = min(ok_states, key=lambda s: len(diff(s, got)))
        differs = diff(near, got)[:12]
        entry["differs"] = differs
        entry["values"] = {
            k: [near.get(k), got.get(k)]
            for k in differs
            if k in ("HEAD", "refs", "status") or k.startswith("state:")
        }
        entry["left_by_kill"] = left
        entry["stderr"] = "" if rec is None else rec.stderr.decode(errors="replace")[-400:]
    return entry


def write_report(
    args: argparse.Namespace,
    scenarios: list[Scenario],
    results: list[dict[str, object]],
    late: Counter[str],
    seconds: float,
) -> None:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        c = per[str(r["command"])]
        c["points"] += 1
        c["recovered" if r["ok"] else "failed"] += 1
        c["journal left"] += 1 if r["journal_left"] else 0
        c[
            "crash hook"
            if ":" in str(r["kill"]) and "SIGKILL" not in str(r["kill"])
            else "random delay"
        ] += 1
    rev = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    lines = [
        "# Random-kill study (issue 15)",
        "",
        f"- command: `nice -n 10 patchq-bench killstudy "
        f"{'--generated' if args.generated else f'--repo {args.repo}'} "
        f"--points {args.points} --seed {args.seed}`",
        f"- patchq at {rev}; series: the newest 300 consecutive non-merge commits of "
        f"{'a generated 300-file repository' if args.generated else 'the mirror'} "
        "(`git format-patch`), rebased onto BASE + one unrelated upstream commit "
        f"(finishes) and onto BASE~{args.drift} (stops at a conflict)",
        f"- {len(results)} kill points in {seconds / 60:.1f} min; a kill that landed after the "
        "command had finished, or a crash point the command never reached, is not counted",
        "- compared after recovery: HEAD, every ref, the index (`ls-files -s`), `git status "
        "--ignored`, every working-tree file (an ignored build output included), every file "
        "of `.git/patchq/` and of the patch repo — except `.git/patchq/lock`, the run "
        "lock's flock file: a killed holder cannot remove it, it holds no state, and the next "
        "command takes it over and removes it; and `.git/patchq/last-op/`, `undo`'s record of "
        "the last stack operation, which a recovery drops on purpose (after a recovery there "
        "is nothing to undo: docs/commands.md) and which holds the run's own file times; after an "
        "abort, a file `rebase --continue` wrote in `resolutions/` is expected (remembered "
        "resolutions survive an abort, so the rebase redone reuses them: issue 14.8)",
        "",
        "| command | undisturbed | points | random delay | crash hook | journal left | "
        "recovered | failed | not counted |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for sc in scenarios:
        c = per[sc.name]
        lines.append(
            f"| {sc.name} | {sc.seconds:.2f} s, exit {sc.rc} | {c['points']} | "
            f"{c['random delay']} | {c['crash hook']} | {c['journal left']} | "
            f"{c['recovered']} | {c['failed']} | {late[sc.name]} |"
        )
    total = Counter[str]()
    for c in per.values():
        total.update(c)
    lines.append(
        f"| **all** | | {total['points']} | {total['random delay']} | {total['crash hook']} | "
        f"{total['journal left']} | {total['recovered']} | {total['failed']} | "
        f"{sum(late.values())} |"
    )
    fails = [r for r in results if not r["ok"]]
    lines += ["", "## Failures", ""]
    if not fails:
        lines.append("None: every kill point recovered byte for byte.")
    for r in fails:
        differs = ", ".join(map(str, cast(list[object], r["differs"])))
        lines.append(
            f"- {r['command']}, {r['kill']}, {r['recovery']} "
            f"(exit {r['recovery_exit']}): differs in {differs}"
        )
    args.md.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
