"""The supervisor's count of files in a sandbox's private tmpfs judges the
tmpfs only: while bubblewrap sets up, the sandbox's /run is still the host's
root filesystem, and its files killed a command before its first line
("more than 4096 files in /run": a flake of the escape suite under load).
That a tmpfs over its cap is still stopped is the escape suite's
(tests/sandbox/test_escapes_limits.py)."""

from __future__ import annotations

import os

from sandbox.linux.launch import SandboxMonitor


def test_a_filesystem_larger_than_the_private_tmpfs_is_not_counted_against_its_cap() -> None:
    # our own root seen through /proc: the host's filesystem, many files
    st = os.statvfs("/")
    assert st.f_files - st.f_ffree > 10  # the control: counted, it would be "overfull"
    monitor = SandboxMonitor(None, pid=os.getpid(), file_caps={"/": 10})
    assert monitor.overfull() is None
