"""Where patchq works: the patch repo and the target, resolved once per command."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from patchq.core.errors import BadInputError
from patchq.store.patchrepo import PatchRepo, own_paths

if TYPE_CHECKING:
    from patchq.git.repo import GitRepo


@dataclass(slots=True)
class Context:
    """The global options; the patch repo and target are opened on first use."""

    dir: Path | None = None
    target: Path | None = None
    _repo: PatchRepo | None = None
    _git: GitRepo | None = None

    def repo(self) -> PatchRepo:
        if self._repo is None:
            root = self.dir if self.dir is not None else PatchRepo.find(Path.cwd())
            self._repo = PatchRepo.open(root)
        return self._repo

    def target_path(self) -> Path:
        if self.target is not None:
            return self.target
        env = os.environ.get("PATCHQ_TARGET")
        if env:
            return Path(env)
        repo = self.repo()
        if repo.config.target:
            return (repo.root / repo.config.target).resolve()
        for d in (repo.root, *repo.root.parents):
            if (d / ".git").exists():
                return d
        raise BadInputError(
            "no target checkout",
            str(repo.root),
            "give --target DIR, set PATCHQ_TARGET or `target` in patchq.toml",
        )

    def git(self) -> GitRepo:
        if self._git is None:
            path = self.target_path()
            if not path.is_dir():
                raise BadInputError("target folder does not exist", str(path))
            # Loaded on first use: shell completion of patch names never needs it.
            from patchq.git.repo import GitRepo

            self._git = GitRepo(path)
        return self._git

    def opened_git(self) -> GitRepo | None:
        """The target's GitRepo if this command opened it (None: it did not)."""
        return self._git

    def own_paths(self) -> list[str]:
        """The patch repo's files inside the target, which the dirty check must ignore."""
        return own_paths(self.repo().root, self.git().root)

    def close(self) -> None:
        if self._git is not None:
            self._git.close()
