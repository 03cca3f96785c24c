"""What runs leave in the runtime directory stays bounded."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sandbox.cleanup import KEEP_CACHES, prune_caches

PATTERN = re.compile(r"repos-[0-9a-f]{16}\.json")


def _caches(directory: Path, count: int) -> list[Path]:
    out = []
    for i in range(count):
        path = directory / f"repos-{i:016x}.json"
        path.write_text("{}")
        os.utime(path, ns=(i * 10**9, i * 10**9))
        out.append(path)
    return out


def test_one_cache_per_workspace_is_pruned_to_the_newest(tmp_path: Path) -> None:
    made = _caches(tmp_path, KEEP_CACHES * 2)
    (tmp_path / "dotenv-scan.json").write_text("{}")
    (tmp_path / "repos-deep-0000000000000001.json").write_text("{}")
    prune_caches(str(tmp_path), PATTERN)
    assert sorted(p for p in tmp_path.iterdir() if PATTERN.fullmatch(p.name)) == made[KEEP_CACHES:]
    assert (tmp_path / "dotenv-scan.json").exists()  # other kinds are left alone
    assert (tmp_path / "repos-deep-0000000000000001.json").exists()


def test_a_few_caches_over_the_limit_are_not_listed_on_every_save(tmp_path: Path) -> None:
    _caches(tmp_path, KEEP_CACHES + 10)
    prune_caches(str(tmp_path), PATTERN)
    assert len(list(tmp_path.iterdir())) == KEEP_CACHES + 10
