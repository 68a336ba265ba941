"""The adapter process: one long-lived child speaking NDJSON on stdin/stdout (one JSON object
per line, each way). Its stderr goes to a temporary file, so a chatty adapter can never block on
a full pipe; the tail is shown when a case errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import tempfile
import threading

from session_resume.conformance import PROTOCOL_VERSION

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


class AdapterError(Exception):
    """The adapter misbehaved. ``kind``: died | timeout | protocol."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class AdapterProcess:
    def __init__(
        self, argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
    ) -> None:
        """``env`` None: the adapter inherits the caller's environment unchanged (the runner
        adds nothing, not even PYTHONUNBUFFERED: an adapter must flush its own lines)."""
        self.argv = argv
        self.cwd = cwd
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in _close
        popen_kw: dict[str, Any] = {}
        if os.name == "posix":
            popen_kw["start_new_session"] = True  # so a kill takes the adapter's children too
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                cwd=cwd,
                env=env,
                bufsize=0,
                **popen_kw,
            )
        except OSError as exc:
            self._stderr.close()
            raise AdapterError("died", f"cannot start the adapter {argv!r}: {exc}") from None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, b""):
            self._lines.put(line)
        self._lines.put(None)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise AdapterError("died", self._death("the adapter closed its stdin")) from None

    def receive(self, timeout: float) -> dict[str, Any]:
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AdapterError(
                    "timeout",
                    f"no answer within {timeout:g} s (an adapter must flush stdout after every "
                    "line: a buffered answer never arrives)",
                ) from None
            if line is None:
                raise AdapterError("died", self._death("the adapter exited without answering"))
            if not line.strip():
                continue  # tolerate blank lines
            try:
                value = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                raise AdapterError(
                    "protocol", f"the adapter wrote a line that is not JSON: {line[:200]!r}"
                ) from None
            if not isinstance(value, dict):
                raise AdapterError("protocol", f"the adapter wrote a non-object: {line[:200]!r}")
            return value

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send(message)
        return self.receive(timeout)

    def start(self, timeout: float) -> dict[str, Any]:
        return self.request({"cmd": "start", "version": PROTOCOL_VERSION}, timeout)

    def _death(self, what: str) -> str:
        code = self.proc.poll()
        tail = self.stderr_tail()
        status = f" (exit status {code})" if code is not None else ""
        return f"{what}{status}" + (f"; stderr:\n{tail}" if tail else "")

    def stderr_size(self) -> int:
        """How many bytes the adapter has written to stderr so far."""
        try:
            self._stderr.flush()
            return self._stderr.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return 0

    def stderr_since(self, offset: int, limit: int = 4000) -> str:
        """What the adapter wrote to stderr after ``offset`` (at most the last ``limit``
        bytes)."""
        try:
            size = self.stderr_size()
            self._stderr.seek(max(offset, size - limit))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def stderr_tail(self, limit: int = 4000) -> str:
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - limit))
            return self._stderr.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the adapter to stop; kill it if it does not exit in time."""
        if self.proc.poll() is None:
            with contextlib.suppress(AdapterError):
                self.send({"cmd": "stop"})
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.proc.pid, signal.SIGKILL)
                else:
                    self.proc.kill()
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        self._close()

    def _close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError, AttributeError):
                if stream is not None:
                    stream.close()
        with contextlib.suppress(OSError):
            self._stderr.close()
