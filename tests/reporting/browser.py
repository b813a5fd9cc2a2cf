"""One headless Chromium, driven over the DevTools protocol on a pipe, that opens pages
one after another in fresh tabs: what each page's scripts left in the DOM, what it logged
(console calls, uncaught exceptions, browser messages such as Content-Security-Policy
refusals) and a screenshot.

Starting Chromium takes seconds; opening a page in a running one takes a fraction of
that, so the report tests share one browser per module. Each page still gets its own tab
(its own document, scripts and log) and the same virtual-time budget the command-line
``--virtual-time-budget`` gives (timers run, the page settles, then it is read)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import threading
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
]

#: the viewport of every page (what ``--window-size=1400,1000`` gave)
WIDTH, HEIGHT = 1400, 1000
#: milliseconds of virtual time a page runs before it is read
BUDGET_MS = 3000
#: seconds to wait for one answer of the browser
TIMEOUT = 120.0


class BrowserError(RuntimeError):
    """The browser answered a command with an error, or did not answer in time."""


class Browser:
    """A running headless Chromium; :meth:`open` reads one page, :meth:`close` ends it."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._proc = subprocess.Popen(
            [chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            # the protocol's fixed descriptors: the browser reads commands on 3 and
            # answers on 4; only those two (made inheritable in the child) are passed
            close_fds=False,
            preexec_fn=lambda: _map_fds(to_child_r, from_child_w),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._out = os.fdopen(to_child_w, "wb", buffering=0)
        self._in = os.fdopen(from_child_r, "rb", buffering=0)
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain, daemon=True).start()
        self._buf = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []

    def _drain(self) -> None:
        assert self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line)

    def stderr(self) -> str:
        """What the browser process wrote on its standard error so far."""
        return b"".join(self._stderr).decode(errors="replace")

    def _message(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            if not select.select([self._in], [], [], TIMEOUT)[0]:
                raise BrowserError(f"no answer from the browser in {TIMEOUT} s")
            chunk = self._in.read(1 << 16)
            if not chunk:
                raise BrowserError("the browser closed its pipe:\n" + self.stderr()[-2000:])
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are kept
        for :meth:`wait_for`."""
        self._next += 1
        ident = self._next
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            msg["sessionId"] = session
        self._out.write(json.dumps(msg).encode() + b"\0")
        while True:
            m = self._message()
            if m.get("id") == ident:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            self._events.append(m)

    def wait_for(self, method: str, session: str) -> None:
        """Read messages until the event ``method`` of ``session`` arrives."""
        while not any(
            e.get("method") == method and e.get("sessionId") == session for e in self._events
        ):
            self._events.append(self._message())

    def open(self, html: Path, fragment: str = "") -> tuple[str, str, bytes]:
        """(DOM after the scripts ran, the page's log, PNG screenshot) of one page, in a
        fresh tab. Log lines are ``CONSOLE(level): text`` for console calls and browser
        messages and ``Uncaught ...`` for exceptions the page did not catch."""
        return self.open_many([html.resolve().as_uri() + fragment])[0]

    def open_many(self, urls: list[str]) -> list[tuple[str, str, bytes]]:
        """:meth:`open` of every URL, one after another (a tab in the background may get
        no virtual time, so tabs do not load side by side)."""
        return [self._finish(*self._start(url)) for url in urls]

    def _start(self, url: str) -> tuple[str, str]:
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        s = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", s)
        self.send("Emulation.setDeviceMetricsOverride", s, width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)  # fmt: skip
        # the clock stands still until the page is navigated, then runs the budget
        self.send("Emulation.setVirtualTimePolicy", s, policy="pause")
        self.send("Page.navigate", s, url=url)
        self.send("Emulation.setVirtualTimePolicy", s,
                  policy="pauseIfNetworkFetchesPending", budget=BUDGET_MS)  # fmt: skip
        return target, s

    def _finish(self, target: str, s: str) -> tuple[str, str, bytes]:
        try:
            self.wait_for("Emulation.virtualTimeBudgetExpired", s)
            dom = self.send("Runtime.evaluate", s,
                            expression="document.documentElement.outerHTML",
                            returnByValue=True)["result"]["value"]  # fmt: skip
            shot = base64.b64decode(
                self.send("Page.captureScreenshot", s, format="png")["data"]
            )
            lines = (_log_line(e) for e in self._events if e.get("sessionId") == s)
            log = "\n".join(line for line in lines if line)
        finally:
            # what is left of this tab, and the browser's own events, are not needed
            self._events = [e for e in self._events if e.get("sessionId") not in (s, None)]
            self.send("Target.closeTarget", targetId=target)
        return dom, log, shot

    def close(self) -> None:
        """End the browser."""
        with contextlib.suppress(BrowserError):
            self.send("Browser.close")
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._out.close()
        self._in.close()


def _map_fds(commands: int, answers: int) -> None:
    """In the child: the protocol's descriptors 3 (commands in) and 4 (answers out)."""
    # through fresh numbers first, so that neither dup2 overwrites the other's source
    a, b = os.dup(commands), os.dup(answers)
    os.dup2(a, 3)
    os.dup2(b, 4)


def _log_line(event: dict[str, Any]) -> str:
    p = event.get("params", {})
    match event.get("method"):
        case "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            return f"CONSOLE({p['type']}): {text}"
        case "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            return f"Uncaught {d.get('exception', {}).get('description', d.get('text'))}"
        case "Log.entryAdded":
            e = p["entry"]
            return f"CONSOLE({e['level']},{e['source']}): {e['text']}"
    return ""
