#!/usr/bin/env python3
"""The README's picture of the console, taken from the real binary.

Runs toolgate (the scripted demo, no key) in a detached tmux session of a fixed size,
types what a newcomer types ("deploy web"), waits for the deploy question over the
conversation and the grown tool pool, and writes:

  docs/images/console.txt  the screen's text, row by row (the test
                           `readme_picture::the_readme_picture_is_what_the_console_draws`
                           drives the binary the same way and compares its screen with it)
  docs/images/console.svg  the same screen with its colours, for the README

Needs python3 and tmux only (no pip package); `cargo test` needs neither:

  cargo build && python3 scripts/screenshot.py [target/debug/toolgate]

Regenerate it whenever the console's screen changes (the test says when).
"""

import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# The size the test drives too (tests/it/readme_picture.rs): keep them equal.
ROWS, COLS = 30, 130
WAIT_SECONDS = 60

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "docs", "images")

# The 16 colours as a dark terminal shows them (index 0-15).
PALETTE16 = [
    "#1d1f21", "#cc6666", "#b5bd68", "#f0c674", "#81a2be", "#b294bb", "#8abeb7", "#c5c8c6",
    "#666666", "#d54e53", "#b9ca4a", "#e7c547", "#7aa6da", "#c397d8", "#70c0b1", "#eaeaea",
]
FOREGROUND, BACKGROUND = "#c5c8c6", "#1d1f21"
SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def colour256(n):
    """xterm's 256-colour palette as #rrggbb."""
    if n < 16:
        return PALETTE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        r, g, b = steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    level = 8 + (n - 232) * 10
    return f"#{level:02x}{level:02x}{level:02x}"


class Cell:
    __slots__ = ("char", "fg", "bg", "bold", "italic", "underline", "reverse")

    def __init__(self, char, style):
        self.char = char
        self.fg, self.bg, self.bold, self.italic, self.underline, self.reverse = style

    def look(self):
        """(foreground, background, bold, italic, underline) as drawn."""
        fg, bg = self.fg or FOREGROUND, self.bg or BACKGROUND
        if self.reverse:
            fg, bg = bg, fg
        return fg, bg, self.bold, self.italic, self.underline


def apply_sgr(params, style):
    """The style after one SGR sequence (`ESC [ params m`), as tmux writes them."""
    fg, bg, bold, italic, underline, reverse = style
    codes = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", params)] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            fg, bg, bold, italic, underline, reverse = None, None, False, False, False, False
        elif c == 1:
            bold = True
        elif c == 3:
            italic = True
        elif c == 4:
            underline = True
        elif c == 7:
            reverse = True
        elif c == 22:
            bold = False
        elif c == 23:
            italic = False
        elif c == 24:
            underline = False
        elif c == 27:
            reverse = False
        elif 30 <= c <= 37:
            fg = PALETTE16[c - 30]
        elif 40 <= c <= 47:
            bg = PALETTE16[c - 40]
        elif 90 <= c <= 97:
            fg = PALETTE16[c - 90 + 8]
        elif 100 <= c <= 107:
            bg = PALETTE16[c - 100 + 8]
        elif c == 39:
            fg = None
        elif c == 49:
            bg = None
        elif c in (38, 48) and i + 1 < len(codes):
            if codes[i + 1] == 5 and i + 2 < len(codes):
                value = colour256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                value = "#{:02x}{:02x}{:02x}".format(*codes[i + 2 : i + 5])
                i += 4
            else:
                value = None
            if c == 38:
                fg = value
            else:
                bg = value
        i += 1
    return fg, bg, bold, italic, underline, reverse


def parse(captured):
    """`tmux capture-pane -e` output as ROWS rows of COLS cells."""
    style = (None, None, False, False, False, False)
    rows = []
    for line in captured.split("\n")[:ROWS]:
        cells, at = [], 0
        for match in SGR.finditer(line):
            cells.extend(Cell(ch, style) for ch in line[at : match.start()])
            style = apply_sgr(match.group(1), style)
            at = match.end()
        cells.extend(Cell(ch, style) for ch in line[at:])
        blank = (None, None, False, False, False, False)
        cells = cells[:COLS] + [Cell(" ", blank) for _ in range(COLS - len(cells))]
        rows.append(cells)
    while len(rows) < ROWS:
        rows.append([Cell(" ", (None, None, False, False, False, False)) for _ in range(COLS)])
    return rows


class Console:
    """toolgate in a detached tmux session on its own server socket."""

    def __init__(self, binary, workspace, home):
        self.socket = os.path.join(home, "tmux.sock")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "TOOLGATE_STATE_DIR": os.path.join(home, "state"),
            "TOOLGATE_CONFIG_DIR": os.path.join(home, "config"),
        }
        command = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + [binary]
        self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "shot",
            "-x", str(COLS), "-y", str(ROWS), "-c", workspace,
            " ".join(shell_quote(part) for part in command),
        )
        # Keep the size fixed (no client attaches), and the colours as the program sent them.
        self.tmux("set-option", "-t", "shot", "window-size", "manual")
        self.tmux("resize-window", "-t", "shot", "-x", str(COLS), "-y", str(ROWS))

    def tmux(self, *args):
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], check=True, capture_output=True, text=True
        ).stdout

    def text(self):
        return self.tmux("capture-pane", "-p", "-t", "shot")

    def cells(self):
        return parse(self.tmux("capture-pane", "-p", "-e", "-N", "-t", "shot"))

    def wait_for(self, what, predicate):
        deadline = time.monotonic() + WAIT_SECONDS
        while not predicate(self):
            if time.monotonic() > deadline:
                sys.exit(f"timed out waiting for {what}; screen:\n{self.text()}")
            time.sleep(0.05)

    def type(self, text):
        self.tmux("send-keys", "-t", "shot", "-l", text)

    def key(self, name):
        self.tmux("send-keys", "-t", "shot", name)

    def close(self):
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)


def shell_quote(part):
    return "'" + part.replace("'", "'\\''") + "'"


def modal_armed(console):
    """The question takes keys: a choice button drawn in reverse video."""
    for row in console.cells():
        text = "".join(cell.char for cell in row)
        if "[y]" in text and any(cell.reverse and cell.char.strip() for cell in row):
            return True
    return False


def svg(rows):
    cell_w, cell_h = 8.4, 17
    width, height = int(COLS * cell_w) + 24, int(ROWS * cell_h) + 48
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" '
        f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14">',
        f'<rect width="{width}" height="{height}" rx="8" fill="{BACKGROUND}"/>',
        '<circle cx="18" cy="16" r="5" fill="#ff5f56"/>'
        '<circle cx="36" cy="16" r="5" fill="#ffbd2e"/>'
        '<circle cx="54" cy="16" r="5" fill="#27c93f"/>',
        '<g transform="translate(12,32)">',
    ]
    for number, row in enumerate(rows):
        y = number * cell_h
        col = 0
        while col < COLS:
            # A run of cells with the same look is one rectangle and one text element.
            look = row[col].look()
            start = col
            while col < COLS and row[col].look() == look:
                col += 1
            run = "".join(cell.char for cell in row[start:col])
            fg, bg, bold, italic, underline = look
            x = start * cell_w
            span = (col - start) * cell_w
            if bg != BACKGROUND:
                out.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{span:.1f}" height="{cell_h}" fill="{bg}"/>'
                )
            if run.strip():
                attrs = ' font-weight="bold"' if bold else ""
                attrs += ' font-style="italic"' if italic else ""
                attrs += ' text-decoration="underline"' if underline else ""
                out.append(
                    f'<text x="{x:.1f}" y="{y + 13}" fill="{fg}"{attrs} xml:space="preserve" '
                    f'textLength="{span:.1f}" lengthAdjust="spacingAndGlyphs">'
                    f"{html.escape(run)}</text>"
                )
    out.append("</g></svg>")
    return "\n".join(out) + "\n"


def main():
    if shutil.which("tmux") is None:
        sys.exit("scripts/screenshot.py needs tmux")
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "toolgate")
    binary = os.path.abspath(binary)
    home = tempfile.mkdtemp(prefix="toolgate-shot-")
    # A workspace with a plain name: the welcome shows its path.
    workspace = os.path.join(home, "project")
    for sub in ("state", "config", "project"):
        os.makedirs(os.path.join(home, sub))
    console = Console(binary, workspace, home)
    try:
        console.wait_for("the welcome", lambda c: "Try typing" in c.text())
        console.type("deploy web")
        # In the composer at the bottom (the welcome above suggests the same words).
        console.wait_for(
            "the typed prompt", lambda c: "deploy web" in "".join(c.text().split("\n")[-5:])
        )
        console.key("Enter")
        console.wait_for(
            "the deploy question",
            lambda c: "Permission required" in c.text() and "mcp__deploy__trigger" in c.text(),
        )
        console.wait_for("the question to take keys", modal_armed)
        # Past the new tools' "new" mark (5 s in the console): the picture is the resting
        # screen, which the test waits for too.
        time.sleep(6.0)
        rows = console.cells()
        os.makedirs(OUT_DIR, exist_ok=True)
        with open(os.path.join(OUT_DIR, "console.txt"), "w", encoding="utf-8") as f:
            text = "\n".join("".join(cell.char for cell in row).rstrip() for row in rows)
            f.write(text + "\n")
        with open(os.path.join(OUT_DIR, "console.svg"), "w", encoding="utf-8") as f:
            f.write(svg(rows))
        console.type("n")
        console.key("C-d")
    finally:
        console.close()
        shutil.rmtree(home, ignore_errors=True)
    print(f"wrote {OUT_DIR}/console.txt and console.svg")


if __name__ == "__main__":
    main()
