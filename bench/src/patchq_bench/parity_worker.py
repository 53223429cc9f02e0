#!/usr/bin/env python3
"""One long-lived patchq for `patchq-bench parity`: runs `patchq.cli.main.main(argv)` per request.

`patchq-bench parity` starts one per job with the interpreter (and environment) of its `--patchq`
command, in place of `-m patchq`, so patchq's modules load once per job, not twice per
case (where no bytecode may be written, as under PYTHONDONTWRITEBYTECODE, each start
also compiles every module again). Each request is the command line a user would type,
run through the same `main` as `python -m patchq`: one JSON line in, `{"argv": [...],
"cwd": "..."}`, one JSON line out, `{"rc": N, "out": "...", "err": "..."}`.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import traceback


def serve() -> int:
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # the bench's modules are none of patchq's
    from patchq.cli.main import main

    # Replies go to a copy of the pipe; fd 1 and 2 are the request's own (what a git
    # child writes there lands in the request's output, as it does from a process).
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    for line in sys.stdin:
        req = json.loads(line)
        os.chdir(req["cwd"])
        fds = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        saved = os.dup(1), os.dup(2)
        os.dup2(fds[0].fileno(), 1)
        os.dup2(fds[1].fileno(), 2)
        out_b, err_b = io.BytesIO(), io.BytesIO()
        out = io.TextIOWrapper(out_b, encoding="utf-8", errors="replace", write_through=True)
        err = io.TextIOWrapper(err_b, encoding="utf-8", errors="replace", write_through=True)
        sys.stdout, sys.stderr = out, err
        try:
            rc = main(list(req["argv"]))
        except BaseException:  # noqa: BLE001 - a fault of patchq: reported as its exit 70
            traceback.print_exc()
            rc = 70
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        raw = []
        for f in fds:
            f.seek(0)
            raw.append(f.read())
            f.close()
        answer = {
            "rc": rc,
            "out": (raw[0] + out_b.getvalue()).decode("utf-8", "replace"),
            "err": (raw[1] + err_b.getvalue()).decode("utf-8", "replace"),
        }
        reply.write(json.dumps(answer) + "\n")
        reply.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
