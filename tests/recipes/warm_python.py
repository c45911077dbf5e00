"""A Python interpreter for the recipe tests' dry runs that starts warm.

A recipe's dry run is ``bash RECIPE`` calling ``$PY -m strata.trainer.main --dry-run ...``; that process spends
~9 of its ~12 s importing torch, tensordict and transformers (with scikit-learn, which transformers' generation
code pulls in), and the fast tests resolve ~50 recipes and ablation rows. With ``PY`` set to `command()`, the
recipe still runs as a user runs it (bash, its variables, its helper scripts, every ``$PY`` call), but each
``$PY -m MODULE ...`` or ``$PY -c CODE`` is run by a child forked from a server that has imported those
libraries once, in the caller's working folder, environment and standard streams; the server imports nothing of
verl or strata, which read the environment (``VERL_PLATFORM`` among it) when imported. Any other use of ``$PY``
runs the real interpreter. tests/recipes/test_warm_python.py checks that both resolve a recipe identically.

Run as a script: ``warm_python.py serve SOCKET`` is the server; anything else is a ``python`` command line.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SOCKET_VARIABLE = "STRATA_WARM_PYTHON_SOCKET"
PREIMPORTED = ("torch", "tensordict", "transformers", "transformers.generation.candidate_generator", "hydra",
               "omegaconf", "yaml")
START_TIMEOUT_S = 120
_STARTING = threading.Lock()


def command() -> str:
    """A ``PY`` value for a recipe (recipes word-split ``$PY``): this interpreter running this file as the client,
    with this process's server behind it (started on first use, stopped when this process exits)."""
    with _STARTING:  # the ablation tests resolve from several threads
        if SOCKET_VARIABLE not in os.environ:
            os.environ[SOCKET_VARIABLE] = _start_server()
    return f"{sys.executable} {Path(__file__).resolve()}"


def _start_server() -> str:
    folder = tempfile.mkdtemp(prefix="strata-warm-python-")
    path = os.path.join(folder, "socket")
    # The server's stdin is a pipe only this process writes to: at its end of file (this process exited, however)
    # the server exits.
    server = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "serve", path], stdin=subprocess.PIPE)

    def stop() -> None:
        server.kill()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not os.path.exists(path):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the warm Python server did not start (exit status {server.poll()})")
        time.sleep(0.1)
    return path


def serve(path: str) -> None:
    """Import `PREIMPORTED`, then fork a child per connection to run its command line, until stdin closes."""
    for name in PREIMPORTED:
        __import__(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".partial")
    listener.listen(16)
    os.rename(path + ".partial", path)  # the client's signal that the imports are done
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
            return
        if listener not in ready:
            continue
        connection, _ = listener.accept()
        if os.fork() == 0:
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            _run_child(connection)
        connection.close()


def _run_child(connection: socket.socket) -> None:
    """Take over the client's streams (the same descriptor numbers, so every stream object and log handler made at
    import writes there), folder and environment; run its command line; send back the exit code."""
    message, fds, _, _ = socket.recv_fds(connection, 1 << 20, 3)
    request = json.loads(message)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    code = _run(request["argv"])
    for stream in (sys.stdout, sys.stderr):
        if not stream.closed:  # a module may close its streams (json.tool does)
            stream.flush()
    connection.sendall(json.dumps(code).encode())
    os._exit(code)


def _run(argv: list[str]) -> int:
    """``python -m MODULE ARGS`` or ``python -c CODE ARGS`` in this process; the exit code."""
    import runpy

    flag, target, *rest = argv
    sys.path[0] = os.getcwd() if flag == "-m" else ""
    try:
        if flag == "-m":
            sys.argv = [target, *rest]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *rest]
            exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1
    return 0


def client(argv: list[str]) -> int:
    """Hand ``-m``/``-c`` command lines to the server; run anything else with the real interpreter."""
    path = os.environ.get(SOCKET_VARIABLE)
    if not path or len(argv) < 2 or argv[0] not in ("-m", "-c"):
        os.execv(sys.executable, [sys.executable, *argv])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(connection, [json.dumps(request).encode()], [0, 1, 2])
        reply = b"".join(iter(lambda: connection.recv(64), b""))
    return json.loads(reply) if reply else 1  # no reply: the child died (a signal)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2])
    else:
        sys.exit(client(sys.argv[1:]))
