#!/usr/bin/env python3
"""The README's picture of the console, taken from the real binary.

Runs toolgate (the scripted demo, no key) in a pseudo-terminal, types what a newcomer
types ("deploy web"), waits for the deploy question over the conversation and the grown
tool pool, and writes:

  docs/images/console.txt  the screen's text, row by row (the test
                           `readme_picture::the_readme_picture_is_what_the_console_draws`
                           compares the live console with it)
  docs/images/console.svg  the same screen with its colours, for the README

Setup (once; `cargo test` never needs it):

  python3 -m venv /tmp/toolgate-shot && /tmp/toolgate-shot/bin/pip install pyte
  cargo build
  /tmp/toolgate-shot/bin/python scripts/screenshot.py [target/debug/toolgate]

Regenerate it whenever the console's screen changes (the test says when).
"""

import html
import os
import pty
import select
import shutil
import sys
import tempfile
import time

import pyte

# The size the test drives too (tests/it/readme_picture.rs): keep them equal.
ROWS, COLS = 30, 100
WAIT_SECONDS = 60

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "docs", "images")

# xterm's 16 colours as a dark terminal shows them; pyte names them.
PALETTE = {
    "black": "#1d1f21", "red": "#cc6666", "green": "#b5bd68", "brown": "#f0c674",
    "yellow": "#f0c674", "blue": "#81a2be", "magenta": "#b294bb", "cyan": "#8abeb7",
    "white": "#c5c8c6", "brightblack": "#666666", "brightred": "#d54e53",
    "brightgreen": "#b9ca4a", "brightbrown": "#e7c547", "brightyellow": "#e7c547",
    "brightblue": "#7aa6da", "brightmagenta": "#c397d8", "brightcyan": "#70c0b1",
    "brightwhite": "#eaeaea",
}
FOREGROUND, BACKGROUND = "#c5c8c6", "#1d1f21"


class Console:
    """toolgate in a pty, its screen kept by pyte."""

    def __init__(self, binary, workspace, home):
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TOOLGATE_STATE_DIR": os.path.join(home, "state"),
            "TOOLGATE_CONFIG_DIR": os.path.join(home, "config"),
        }
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(workspace)
            os.execve(binary, [binary], env)
        self.pid, self.fd = pid, fd
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))

    def pump(self, seconds):
        """Feeds what the program wrote during `seconds` to the screen."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    return
                if not data:
                    return
                self.stream.feed(data)

    def text(self):
        return "\n".join(self.screen.display)

    def wait_for(self, what, predicate):
        deadline = time.monotonic() + WAIT_SECONDS
        while not predicate(self.text()):
            if time.monotonic() > deadline:
                sys.exit(f"timed out waiting for {what}; screen:\n{self.text()}")
            self.pump(0.05)

    def press(self, data):
        os.write(self.fd, data)

    def quit(self):
        self.press(b"\x04")
        self.pump(0.5)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def modal_armed(screen):
    """The question takes keys: a choice button drawn in reverse video."""
    for row in range(ROWS):
        line = screen.buffer[row]
        text = "".join(line[col].data for col in range(COLS))
        if "[y]" in text and any(line[col].reverse and line[col].data.strip() for col in range(COLS)):
            return True
    return False


def colour(name, default):
    if name == "default":
        return default
    if name in PALETTE:
        return PALETTE[name]
    if len(name) == 6 and all(c in "0123456789abcdefABCDEF" for c in name):
        return "#" + name.lower()
    return default


def svg(screen):
    cell_w, cell_h = 8.4, 17
    width, height = int(COLS * cell_w) + 24, int(ROWS * cell_h) + 48
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        f'font-size="14">',
        f'<rect width="{width}" height="{height}" rx="8" fill="{BACKGROUND}"/>',
        '<circle cx="18" cy="16" r="5" fill="#ff5f56"/><circle cx="36" cy="16" r="5" fill="#ffbd2e"/>'
        '<circle cx="54" cy="16" r="5" fill="#27c93f"/>',
        '<g transform="translate(12,32)">',
    ]
    for row in range(ROWS):
        line = screen.buffer[row]
        y = row * cell_h
        col = 0
        while col < COLS:
            cell = line[col]
            fg, bg = colour(cell.fg, FOREGROUND), colour(cell.bg, BACKGROUND)
            if cell.reverse:
                fg, bg = bg, fg
            # A run of cells with the same look is one text element.
            start, chars = col, []
            while col < COLS:
                c = line[col]
                cfg, cbg = colour(c.fg, FOREGROUND), colour(c.bg, BACKGROUND)
                if c.reverse:
                    cfg, cbg = cbg, cfg
                if (cfg, cbg, c.bold, c.italics, c.underscore) != (fg, bg, cell.bold, cell.italics, cell.underscore):
                    break
                chars.append(c.data or " ")
                col += 1
            x = start * cell_w
            run = "".join(chars)
            if bg != BACKGROUND:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{len(chars) * cell_w:.1f}" height="{cell_h}" fill="{bg}"/>')
            if run.strip():
                style = ' font-weight="bold"' if cell.bold else ""
                style += ' font-style="italic"' if cell.italics else ""
                style += ' text-decoration="underline"' if cell.underscore else ""
                out.append(
                    f'<text x="{x:.1f}" y="{y + 13}" fill="{fg}"{style} xml:space="preserve" '
                    f'textLength="{len(chars) * cell_w:.1f}" lengthAdjust="spacingAndGlyphs">{html.escape(run)}</text>'
                )
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "toolgate")
    binary = os.path.abspath(binary)
    home = tempfile.mkdtemp(prefix="toolgate-shot-")
    # A workspace with a plain name: the welcome shows its path.
    workspace = os.path.join(home, "project")
    for sub in ("state", "config", "project"):
        os.makedirs(os.path.join(home, sub))
    try:
        console = Console(binary, workspace, home)
        console.wait_for("the welcome", lambda t: "Try typing" in t)
        console.press(b"deploy web")
        console.wait_for("the typed prompt", lambda t: "deploy web" in t)
        console.press(b"\r")
        console.wait_for(
            "the deploy question",
            lambda t: "Permission required" in t and "mcp__deploy__trigger" in t,
        )
        deadline = time.monotonic() + WAIT_SECONDS
        while not modal_armed(console.screen):
            if time.monotonic() > deadline:
                sys.exit("the question never took keys")
            console.pump(0.05)
        # Past the new tools' "new" highlight (5 s in the console): the picture is the
        # resting screen, which the test can wait for.
        console.pump(6.0)
        os.makedirs(OUT_DIR, exist_ok=True)
        with open(os.path.join(OUT_DIR, "console.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(line.rstrip() for line in console.screen.display) + "\n")
        with open(os.path.join(OUT_DIR, "console.svg"), "w", encoding="utf-8") as f:
            f.write(svg(console.screen))
        console.press(b"n")
        console.pump(0.3)
        console.quit()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    print(f"wrote {OUT_DIR}/console.txt and console.svg")


if __name__ == "__main__":
    main()
