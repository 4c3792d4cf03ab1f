"""Drives `engram tui` through a pseudo-terminal, as a person would.

argv: the engram binary, then steps, each `send:KEYS` (with \\r for Enter, \\x1b for Esc)
or `expect:TEXT` (wait until TEXT is on the screen). The screen is a small terminal
emulator (cursor moves, clears, printable text; colours ignored), because the TUI redraws
only the cells that changed. Waiting is for the text to appear, with a generous deadline,
never a fixed sleep. Exits 0 when every step passed and engram exited 0; otherwise it
prints the screen it saw.
"""

import codecs
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

DEADLINE_S = 60
ROWS, COLS = 40, 120
CSI = re.compile(r"\x1b\[([0-9;?]*)[ -/]*([@-~])")
OTHER = re.compile(r"\x1b[()][0-9A-Za-z]|\x1b[=>78cDEM]")


class Screen:
    def __init__(self):
        self.grid = [[" "] * COLS for _ in range(ROWS)]
        self.r = self.c = 0
        self.pending = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def text(self) -> str:
        return "\n".join("".join(row).rstrip() for row in self.grid)

    def feed(self, raw: bytes):
        data = self.pending + self.decoder.decode(raw)
        self.pending = ""
        i = 0
        while i < len(data):
            ch = data[i]
            if ch == "\x1b":
                m = CSI.match(data, i) or OTHER.match(data, i)
                if not m:
                    self.pending = data[i:]  # a sequence cut by the read
                    return
                if m.re is CSI:
                    self.csi(m.group(1), m.group(2))
                i = m.end()
                continue
            if ch == "\r":
                self.c = 0
            elif ch == "\n":
                self.r = min(self.r + 1, ROWS - 1)
            elif ch == "\b":
                self.c = max(self.c - 1, 0)
            elif ch >= " ":
                if self.r < ROWS and self.c < COLS:
                    self.grid[self.r][self.c] = ch
                self.c += 1
            i += 1

    def clear(self, rows, from_col=0):
        for r in rows:
            for c in range(from_col if r == self.r else 0, COLS):
                self.grid[r][c] = " "

    def csi(self, params: str, final: str):
        if params.startswith("?"):
            # Modes. Entering or leaving the alternate screen shows a blank one here (what
            # was printed before it, say a progress bar on stderr, is not the TUI's).
            if final in "hl" and "1049" in params.split(";")[0]:
                self.clear(range(ROWS))
                self.r = self.c = 0
            return
        nums = [int(p) if p else 0 for p in params.split(";")] if params else []
        n = nums[0] if nums else 0
        if final in "Hf":
            self.r = max((nums[0] if nums else 1) - 1, 0)
            self.c = max((nums[1] if len(nums) > 1 else 1) - 1, 0)
        elif final == "J":
            if n in (2, 3):
                self.clear(range(ROWS))
            elif n == 0:
                self.clear(range(self.r, ROWS), self.c)
        elif final == "K":
            start = 0 if n == 2 else self.c
            for c in range(start, COLS):
                self.grid[self.r][c] = " "
        elif final == "A":
            self.r = max(self.r - max(n, 1), 0)
        elif final == "B":
            self.r = min(self.r + max(n, 1), ROWS - 1)
        elif final == "C":
            self.c += max(n, 1)
        elif final == "D":
            self.c = max(self.c - max(n, 1), 0)
        elif final == "G":
            self.c = max(n - 1, 0)


def main() -> int:
    exe, steps = sys.argv[1], sys.argv[2:]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    proc = subprocess.Popen(
        [exe, "tui"], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    screen = Screen()

    def read_some(timeout: float) -> bool:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            return False
        try:
            chunk = os.read(master, 65536)
        except OSError:
            return False
        screen.feed(chunk)
        return bool(chunk)

    for step in steps:
        kind, _, arg = step.partition(":")
        arg = arg.encode("latin-1", "backslashreplace").decode("unicode_escape")
        if kind == "send":
            os.write(master, arg.encode())
        elif kind == "expect":
            end = time.monotonic() + DEADLINE_S
            while arg not in screen.text():
                exited = proc.poll() is not None
                if time.monotonic() > end or (exited and not read_some(0.1)):
                    print(f"never saw {arg!r}; the screen showed:\n{screen.text()}")
                    proc.kill()
                    return 1
                read_some(0.5)
        else:
            print(f"unknown step {step!r}")
            return 2
    end = time.monotonic() + DEADLINE_S
    while proc.poll() is None and time.monotonic() < end:
        read_some(0.5)
    code = proc.poll()
    if code is None:
        print("engram tui did not exit after the last step")
        proc.kill()
        return 1
    if code != 0:
        print(f"engram tui exited {code}:\n{screen.text()}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
