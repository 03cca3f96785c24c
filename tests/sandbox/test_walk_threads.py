"""The workspace walks (dotenv files and the rest the sandbox hides) are
shared by a process: parallel Reads each plan the sandbox's filesystem on
their own thread. From a review: six threads planning at once broke with
"dictionary changed size during iteration" (a walk mutates its state in
place)."""

from __future__ import annotations

import threading
from pathlib import Path

from sandbox import dotenv_below


def test_walks_on_several_threads_at_once_all_finish_and_agree(tmp_path: Path) -> None:
    for i in range(200):
        d = tmp_path / f"d{i}"
        d.mkdir()
        (d / ".env").write_text("K=1\n")
    cache = tmp_path.parent / "cache"
    cache.mkdir()
    errors: list[str] = []
    seen: list[int] = []

    def plan(n: int) -> None:
        for k in range(5):
            try:
                (tmp_path / f"d{n * 7 % 200}" / f"new{k}").mkdir(exist_ok=True)
                got = dotenv_below([str(tmp_path)], cache, budget=30)
                seen.append(len(got.files))
            except Exception as exc:  # what the race raised
                errors.append(repr(exc))

    threads = [threading.Thread(target=plan, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert seen and all(n == 200 for n in seen)
