"""Run LocalStack in host mode (no Docker) for cronfence, tied to its parent.

Usage: .venv-localstack/bin/python serve.py [--exit-on-stdin-eof]

The configuration (GATEWAY_LISTEN, SERVICES, FILESYSTEM_ROOT, ...) comes from
the environment, set by lib/local/localstack.ts. This wrapper only adds
what `python -m localstack.runtime.main` lacks: with --exit-on-stdin-eof it
shuts LocalStack down when its stdin pipe closes, i.e. when the parent died,
however it died (the moto wrapper scripts/emulator/serve.py does the same).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

# LocalStack's own SIGTERM shutdown takes about 7 s here; past this, go anyway.
_EOF_SHUTDOWN_GRACE_S = 15


def _watch_stdin() -> None:
    # os.read on the raw fd, not sys.stdin: a daemon thread blocked inside a
    # BufferedReader holds its lock and makes interpreter shutdown abort.
    fd = sys.stdin.fileno()
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    # The parent took our stdout/stderr pipes with it: LocalStack's SIGTERM handler
    # prints first, and a BrokenPipeError there skipped its shutdown (measured: the
    # 15 s fallback below ended it every time). Writes now go nowhere, and succeed.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # Delivered to the main thread, where LocalStack's handler stops the runtime.
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_EOF_SHUTDOWN_GRACE_S)
    os._exit(1)


def main() -> None:
    if "--exit-on-stdin-eof" in sys.argv[1:]:
        threading.Thread(target=_watch_stdin, name="cronfence-stdin-watch", daemon=True).start()
    from localstack.runtime.main import main as localstack_main

    localstack_main()


if __name__ == "__main__":
    main()
