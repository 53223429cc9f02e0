"""`patchq demo`: a guided rebase of a small CMake kernel library's downstream series.

It builds everything it needs in a folder — an upstream repository written for the
demo (policies, FetchContent blocks, include directories, options, GPU arch lists), a
patch repo with four DEP-3 patches — then walks a maintainer's day: apply, upstream
moves (lines inserted above a hunk, a context line edited, one patch merged upstream, a
real conflict), check, rebase, resolve as a person would, continue, report, verify.
Every step runs the real CLI and says in a sentence what it shows.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from patchq.cli import output
from patchq.core.errors import BadInputError
from patchq.core.hunks import diff
from patchq.git.objects import Ident
from patchq.git.repo import commit_all, init_repository
from patchq.store import outputs

UPSTREAM_V1 = """\
cmake_minimum_required(VERSION 3.26 FATAL_ERROR)
project(sgl-kernel-demo LANGUAGES CXX CUDA)

cmake_policy(SET CMP0169 OLD)
cmake_policy(SET CMP0177 NEW)

include(FetchContent)

# CUTLASS
FetchContent_Declare(
  repo-cutlass
  GIT_REPOSITORY https://github.com/NVIDIA/cutlass
  GIT_TAG        v3.9.2
  GIT_SHALLOW    OFF
)
FetchContent_Populate(repo-cutlass)

# flash-attention 3
FetchContent_Declare(
  repo-flash-attention
  GIT_REPOSITORY https://github.com/sgl-project/sgl-attn
  GIT_TAG        f866413
  GIT_SHALLOW    OFF
)
FetchContent_Populate(repo-flash-attention)

include_directories(
  ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_SOURCE_DIR}/csrc
  ${repo-cutlass_SOURCE_DIR}/include
  ${repo-cutlass_SOURCE_DIR}/tools/util/include
)

option(SGL_KERNEL_ENABLE_SM100A "Enable SM100A" OFF)
option(SGL_KERNEL_ENABLE_FP4 "Enable FP4" OFF)

set(SGL_KERNEL_CUDA_FLAGS
  "-DNDEBUG"
  "-O3"
  "--expt-relaxed-constexpr"
)

if(SGL_KERNEL_ENABLE_FP4)
  set(FP4_ARCHS "100a")
  list(APPEND SGL_KERNEL_CUDA_FLAGS "-DENABLE_NVFP4=1")
endif()

set(SOURCES
  "csrc/allreduce/custom_all_reduce.cu"
  "csrc/gemm/nvfp4_quant_kernels.cu"
  "csrc/gemm/nvfp4_scaled_mm_kernels.cu"
)

add_library(common_ops MODULE ${SOURCES})
target_compile_options(common_ops PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${SGL_KERNEL_CUDA_FLAGS}>)

# flash-attention 3 kernels
add_subdirectory(fa3)
target_link_libraries(common_ops PRIVATE flash_ops)

install(TARGETS common_ops LIBRARY DESTINATION sgl_kernel)
"""

PATCHES: list[tuple[str, str, Callable[[str], str]]] = [
    (
        "0001-cmake-policy-guards.patch",
        "Description: Guard cmake_policy() calls with if(POLICY)\n"
        " CMP0169 and CMP0177 are unknown to CMake older than 3.30/3.31; our build\n"
        " machines run CMake 3.28, which stops at an unknown policy.\n"
        "Author: Demo Maintainer <maintainer@example.org>\n"
        "Forwarded: yes\nLast-Update: 2026-11-02\n",
        lambda t: t.replace(
            "cmake_policy(SET CMP0169 OLD)\ncmake_policy(SET CMP0177 NEW)\n",
            "if(POLICY CMP0169)\n  cmake_policy(SET CMP0169 OLD)\nendif()\n"
            "if(POLICY CMP0177)\n  cmake_policy(SET CMP0177 NEW)\nendif()\n",
        ),
    ),
    (
        "0002-cuda13-cccl-include.patch",
        "Description: Add CUDA 13's CCCL include directory\n"
        " CUDA 13 moved thrust/cub/libcu++ under include/cccl.\n"
        "Author: Demo Maintainer <maintainer@example.org>\n"
        "Forwarded: no\nLast-Update: 2026-11-02\n",
        lambda t: t.replace(
            "  ${repo-cutlass_SOURCE_DIR}/tools/util/include\n)",
            "  ${repo-cutlass_SOURCE_DIR}/tools/util/include\n"
            "  ${CUDAToolkit_INCLUDE_DIRS}/cccl\n)",
        ),
    ),
    (
        "0003-fp4-sm120a.patch",
        "Description: Build the FP4 kernels for sm_120a too\n"
        " Blackwell workstation GPUs (RTX PRO 6000) are SM120.\n"
        "Author: Demo Maintainer <maintainer@example.org>\n"
        "Forwarded: no\nLast-Update: 2026-11-02\n",
        lambda t: t.replace('set(FP4_ARCHS "100a")', 'set(FP4_ARCHS "100a;120a")'),
    ),
    (
        "0004-fa3-optional.patch",
        "Description: Make flash-attention 3 optional\n"
        " FA3 does not build for SM120; the library must still build and load.\n"
        "Author: Demo Maintainer <maintainer@example.org>\n"
        "Forwarded: no\nLast-Update: 2026-11-02\n",
        lambda t: t.replace(
            "# flash-attention 3 kernels\nadd_subdirectory(fa3)\n"
            "target_link_libraries(common_ops PRIVATE flash_ops)\n",
            "# flash-attention 3 kernels\n"
            'option(SGL_KERNEL_ENABLE_FA3 "Build flash-attention 3" ON)\n'
            "if(SGL_KERNEL_ENABLE_FA3)\n  add_subdirectory(fa3)\n"
            "  target_link_libraries(common_ops PRIVATE flash_ops)\nendif()\n",
        ),
    ),
]

# Upstream's next commits: (subject, edit).
UPSTREAM_MOVES: list[tuple[str, Callable[[str], str]]] = [
    (
        "Add DeepGEMM FetchContent block",
        lambda t: t.replace(
            "# flash-attention 3\n",
            "# DeepGEMM\nFetchContent_Declare(\n  repo-deepgemm\n"
            "  GIT_REPOSITORY https://github.com/sgl-project/DeepGEMM\n"
            "  GIT_TAG        391755a\n)\nFetchContent_Populate(repo-deepgemm)\n\n"
            "# flash-attention 3\n",
        ),
    ),
    (
        "Guard new CMake policies",
        lambda t: t.replace(
            "cmake_policy(SET CMP0169 OLD)\ncmake_policy(SET CMP0177 NEW)\n",
            "if(POLICY CMP0169)\n  cmake_policy(SET CMP0169 OLD)\nendif()\n"
            "if(POLICY CMP0177)\n  cmake_policy(SET CMP0177 NEW)\nendif()\n",
        ),
    ),
    (
        "Note that the flash-attention 3 kernels are Hopper only",
        lambda t: t.replace(
            "# flash-attention 3 kernels\n", "# flash-attention 3 kernels (Hopper only)\n"
        ),
    ),
    (
        "Build FP4 kernels for sm_103a",
        lambda t: t.replace('set(FP4_ARCHS "100a")', 'set(FP4_ARCHS "100a;103a")'),
    ),
]

MAINTAINER = Ident("Demo Maintainer", "maintainer@example.org", 1762041600, "+0000")
UPSTREAM = Ident("Upstream Dev", "dev@upstream.example", 1761955200, "+0000")


def _step(text: str) -> None:
    output.info("")
    output.info(output.paint("▶ " + text, "bold"))


def _run(main: Callable[[list[str]], int], args: list[str], expect: set[int]) -> int:
    output.info(output.paint("$ patchq " + " ".join(shlex.quote(a) for a in args), "dim"))
    code = main(args)
    if code not in expect:
        # A step of the tour failing is patchq's bug, not the user's input: exit 70.
        raise RuntimeError(f"demo step `patchq {' '.join(args)}` exited {code}")
    return code


def run(folder: Path | None) -> Path:
    """Run the guided demo in `folder` (a new temporary folder if None)."""
    from patchq.cli.main import main

    root = Path(tempfile.mkdtemp(prefix="patchq-demo-")) if folder is None else folder
    where = outputs.folder(root)  # a FIFO, a device or a file is refused (exit 4)
    if where.exists() and any(where.iterdir()):
        raise BadInputError("the demo folder is not empty", str(root), "give a new folder")
    where.mkdir(parents=True, exist_ok=True)  # through a link to a folder not made yet
    upstream_dir, queue_dir = root / "sgl-kernel", root / "patches-repo"
    cmake = upstream_dir / "CMakeLists.txt"

    _step(f"Build an upstream CMake kernel library in {upstream_dir} (v1).")
    g = init_repository(upstream_dir)
    cmake.write_text(UPSTREAM_V1)
    base = commit_all(g, "sgl-kernel v1", UPSTREAM)
    output.info(f"upstream v1 is {base[:12]}")

    _step(
        "Create a patch repo and write four downstream patches with DEP-3 headers: "
        "policy guards, the CUDA 13 CCCL include, FP4 for sm_120a, optional FA3."
    )
    queue_dir.mkdir(parents=True)
    (queue_dir / "patchq.toml").write_text('target = "../sgl-kernel"\nbranch = "main"\n')
    (queue_dir / "patches").mkdir()
    series = []
    text = UPSTREAM_V1
    for name, header, edit in PATCHES:
        new = edit(text)
        hunks = diff(text.encode(), new.encode())
        body = b"".join(h.render() for h in hunks)
        (queue_dir / "patches" / name).write_bytes(
            header.encode() + b"---\n--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n" + body
        )
        series.append(name)
        text = new
    (queue_dir / "series").write_text("\n".join(series) + "\n")
    common = ["--dir", str(queue_dir)]

    _step("Apply the series onto v1: one reproducible commit per patch, pinned in series.lock.")
    _run(main, common + ["apply", "--onto", base], {0})

    _step(
        "Upstream moves on: a FetchContent block inserted above two hunks, the policy "
        "guards merged upstream, a comment edited next to the FA3 change, and sm_103a "
        "added on the very line our FP4 patch changes."
    )
    g.switch_branch("main")
    text = UPSTREAM_V1
    for subject, edit in UPSTREAM_MOVES:
        text = edit(text)
        cmake.write_text(text)
        oid = commit_all(g, subject, UPSTREAM)
        output.info(f"upstream {oid[:12]} {subject}")
    g.switch_branch("patchq/main")

    _step(
        "Check the series against the new upstream without touching anything: each "
        "hunk's status and the upstream commits behind it (exit 3: a person is needed)."
    )
    _run(main, common + ["check", "--onto", "main"], {3})

    _step(
        "Rebase onto the new upstream. Offsets and the 3-way merge need no one; the "
        "upstreamed patch leaves the active series; the FP4 line stops with a conflict."
    )
    _run(main, common + ["rebase", "--onto", "main"], {3})

    _step("Resolve as a person would: keep upstream's sm_103a and add our sm_120a.")
    resolved = re.sub(
        r"<<<<<<< .*?>>>>>>> [^\n]*\n",
        '  set(FP4_ARCHS "100a;103a;120a")\n',
        cmake.read_text(),
        flags=re.S,
    )
    cmake.write_text(resolved)
    output.info('set(FP4_ARCHS "100a;103a;120a")')

    _step(
        "Continue: the resolution is refreshed into the patch (no `git add` needed) and "
        "series.lock records every patch's outcome and drift. The FA3 hunk, next to "
        "upstream's comment edit, merged only zealously: a proposal, so the rebase stops "
        "for review with it applied in the working tree (no markers)."
    )
    _run(main, common + ["rebase", "--continue"], {3})

    _step(
        "Review the proposal (`patchq status` names it, its method and its evidence); "
        "it is right, so continue: it is recorded `resolved`, with its method."
    )
    _run(main, common + ["status"], {0})
    _run(main, common + ["rebase", "--continue"], {0})

    _step(
        "The review report: each patch's outcome, cosmetic or substantive, and the "
        "upstream commits behind every move (`--format md` for a pull request)."
    )
    _run(main, common + ["report"], {0})

    _step("Prove the result: re-apply onto the new base in memory and compare with the lock.")
    _run(main, common + ["verify"], {0})

    output.info("")
    output.info(
        f"Done. Explore {root}: `cd {queue_dir}` and try `patchq series -v`, "
        "`patchq status`, `patchq report --format md`."
    )
    return root
