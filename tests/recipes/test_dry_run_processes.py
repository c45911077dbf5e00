"""The dry-run check's process probe (`tests.recipes.resolved.processes_marked`) finds what a script left running:
otherwise "a dry run starts nothing", asserted on every recipe's resolution, would hold vacuously."""

from __future__ import annotations

import os
import subprocess
import time
import uuid

from tests.recipes.resolved import MARK_VARIABLE, processes_marked


def test_a_process_a_script_leaves_running_is_found_by_its_mark() -> None:
    mark = uuid.uuid4().hex
    script = subprocess.run(["bash", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"],
                            env={**os.environ, MARK_VARIABLE: mark}, capture_output=True, text=True, check=True,
                            timeout=30)
    pid = int(script.stdout)
    try:
        # The backgrounded child may still be inside exec at the first look, when the kernel shows it with an empty
        # environment (a CI run saw exactly that): it must be found within a few seconds, not at once.
        deadline = time.monotonic() + 10
        while not processes_marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [line.split()[0] for line in processes_marked(mark)] == [str(pid)]
        assert processes_marked(mark + "x") == []
    finally:
        os.kill(pid, 9)
    deadline = time.monotonic() + 10
    while processes_marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(mark) == []
