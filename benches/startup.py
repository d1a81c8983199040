"""Start-up and footprint of release binaries: size, time to the full first screen in tmux,
key-press echo, and memory of the process tree 3 s after start.

Usage:
    cargo build --release
    python3 benches/startup.py [--runs 7] [--memory-runs 3] BINARY [BINARY ...]

Give it two binaries (say a copy of the previous build and the new one) and every figure
comes from the same run, interleaved, so load on the shared machine hits both alike.

- size: the file's size in MiB (what is shipped).
- full first screen: a private tmux server (120x36) runs each command with
  `respawn-pane`; the pane is captured every 3 ms until the screen shows the composer, the
  last built-in tool and the last configured server of the pool panel (`toolgate` with no
  arguments: the console on the scripted demo, in a fresh HOME/config/state/workspace). The
  same is done for a control, `echo ready`, in every round; a round runs the control and
  each binary in a rotating order. The figure is the median over the rounds of (binary's
  time − the control's time in the same round): what toolgate adds over the cheapest
  program tmux can show, with tmux's own start and the polling cost taken out.
- key echo: 300 ms after the full screen (the console idle), one key is sent with
  `send-keys`, and the pane is captured every 3 ms until the composer shows it; control:
  `cat` (the kernel's tty echo), same rounds. Median of (binary − control).
- memory at 3 s: the binary started as above; 3 s later, the sum over its process tree
  (it and every descendant) of VmRSS and of Pss (`/proc/PID/smaps_rollup`). Median over
  `--memory-runs` starts. RSS counts every page the processes have mapped, file-backed text
  included (on this machine the kernel maps 64 KiB around each page fault, so a smaller
  .text is smaller RSS too); Pss splits shared pages among the processes sharing them.

Not a criterion bench: it needs real processes and a real terminal multiplexer. The older
pty script (benches/first_frame.py) times the first frame only.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COLS, ROWS = 120, 36
POLL = 0.003
# The full first screen: the composer, the last built-in tool and the last server of the
# demo's .mcp.json in the pool panel.
FULL_SCREEN = ["Message the agent", "connect_mcp", "fs ○"]


class Tmux:
    def __init__(self):
        self.socket = f"toolgate-bench-{os.getpid()}"
        self.target = "bench:0.0"
        self.run("-f", "/dev/null", "new-session", "-d", "-x", str(COLS), "-y", str(ROWS),
                 "-s", "bench", "sleep 100000")
        self.run("set-option", "-g", "remain-on-exit", "off")

    def run(self, *args, capture=False):
        out = subprocess.run(["tmux", "-L", self.socket, *args], check=True,
                             stdout=subprocess.PIPE if capture else subprocess.DEVNULL)
        return out.stdout.decode("utf-8", "replace") if capture else None

    def respawn(self, command, cwd):
        self.run("respawn-pane", "-k", "-c", cwd, "-t", self.target, command)

    def screen(self):
        return self.run("capture-pane", "-p", "-t", self.target, capture=True)

    def pane_pid(self):
        return int(self.run("display-message", "-p", "-t", self.target, "#{pane_pid}",
                            capture=True).strip())

    def wait_for(self, t0, check, timeout=10.0):
        """Seconds from t0 until a capture satisfies check (None on timeout)."""
        while time.perf_counter() - t0 < timeout:
            if check(self.screen()):
                return time.perf_counter() - t0
            time.sleep(POLL)
        return None

    def idle(self):
        """Back to a sleeping pane, and wait until the previous process tree is gone."""
        tree = descendants(self.pane_pid())
        self.respawn("exec sleep 100000", "/")
        deadline = time.time() + 10
        while any(os.path.exists(f"/proc/{p}") and not zombie(p) for p in tree):
            if time.time() > deadline:
                break
            time.sleep(0.01)
        time.sleep(0.2)  # let the machine settle

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], check=False)


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def kib(pid, path, field):
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def console_command(exe, home):
    env = (f"HOME={home} TOOLGATE_CONFIG_DIR={home}/cfg TOOLGATE_STATE_DIR={home}/state "
           "TERM=xterm-256color")
    return f"exec env -u CI -u TOOLGATE_LOG {env} {exe}"


def composer_line(screen):
    lines = screen.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("─") and i + 1 < len(lines) and i + 2 < len(lines) \
                and lines[i + 2].startswith("─"):
            return lines[i + 1]
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--memory-runs", type=int, default=3)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    exes = [os.path.abspath(b) for b in args.binaries]
    names = [os.path.basename(os.path.dirname(e)) + "/" + os.path.basename(e) for e in exes]
    if shutil.which("tmux") is None:
        sys.exit("tmux is needed")

    for name, exe in zip(names, exes):
        print(f"size {name}: {os.path.getsize(exe) / 2**20:.1f} MiB ({os.path.getsize(exe)} B)")

    tmux = Tmux()
    screen_ms = {e: [] for e in exes}
    echo_ms = {e: [] for e in exes}
    memory = {e: [] for e in exes}
    try:
        subjects = ["control"] + exes
        for r in range(args.runs):
            order = subjects[r % len(subjects):] + subjects[:r % len(subjects)]
            control_screen = control_echo = None
            results = {}
            for subject in order:
                home = tempfile.mkdtemp(prefix="toolgate-bench-")
                if subject == "control":
                    t0 = time.perf_counter()
                    tmux.respawn("echo ready; exec cat", home)
                    control_screen = tmux.wait_for(t0, lambda s: "ready" in s)
                    time.sleep(0.3)
                    t0 = time.perf_counter()
                    tmux.run("send-keys", "-t", tmux.target, "-l", "z")
                    control_echo = tmux.wait_for(t0, lambda s: "z" in s)
                else:
                    t0 = time.perf_counter()
                    tmux.respawn(console_command(subject, home), home)
                    shown = tmux.wait_for(t0, lambda s: all(n in s for n in FULL_SCREEN))
                    time.sleep(0.3)
                    t0 = time.perf_counter()
                    tmux.run("send-keys", "-t", tmux.target, "-l", "z")
                    echoed = tmux.wait_for(t0, lambda s: composer_line(s).strip().startswith("z"))
                    if shown is None or echoed is None:
                        print(f"round {r}: {subject}: no full screen or no echo:\n{tmux.screen()}")
                    results[subject] = (shown, echoed)
                tmux.idle()
                shutil.rmtree(home, ignore_errors=True)
            line = [f"round {r}: control {control_screen * 1e3:.1f} ms (echo {control_echo * 1e3:.1f})"]
            for exe, name in zip(exes, names):
                shown, echoed = results[exe]
                if shown is not None and control_screen is not None:
                    screen_ms[exe].append((shown - control_screen) * 1e3)
                if echoed is not None and control_echo is not None:
                    echo_ms[exe].append((echoed - control_echo) * 1e3)
                line.append(f"{name} +{(shown - control_screen) * 1e3:.1f} ms "
                            f"(echo +{(echoed - control_echo) * 1e3:.1f})")
            print("; ".join(line))

        for r in range(args.memory_runs):
            order = exes[r % len(exes):] + exes[:r % len(exes)]
            for exe in order:
                home = tempfile.mkdtemp(prefix="toolgate-bench-")
                t0 = time.perf_counter()
                tmux.respawn(console_command(exe, home), home)
                time.sleep(max(0.0, 3.0 - (time.perf_counter() - t0)))
                tree = descendants(tmux.pane_pid())
                rss = sum(kib(p, "status", "VmRSS") for p in tree)
                pss = sum(kib(p, "smaps_rollup", "Pss") for p in tree)
                memory[exe].append((rss, pss, len(tree)))
                tmux.idle()
                shutil.rmtree(home, ignore_errors=True)
    finally:
        tmux.close()

    print()
    for exe, name in zip(exes, names):
        s, e = screen_ms[exe], echo_ms[exe]
        print(f"{name}: size {os.path.getsize(exe) / 2**20:.1f} MiB")
        if s:
            print(f"  full first screen after the control: median {statistics.median(s):.1f} ms "
                  f"(min {min(s):.1f}, max {max(s):.1f}, n {len(s)})")
        if e:
            print(f"  key echo after the control: median {statistics.median(e):.1f} ms "
                  f"(min {min(e):.1f}, max {max(e):.1f}, n {len(e)})")
        if memory[exe]:
            rss = statistics.median(m[0] for m in memory[exe]) / 1024
            pss = statistics.median(m[1] for m in memory[exe]) / 1024
            procs = max(m[2] for m in memory[exe])
            print(f"  memory 3 s after start, process tree ({procs} processes): "
                  f"RSS {rss:.1f} MiB, PSS {pss:.1f} MiB (median of {len(memory[exe])}; "
                  f"RSS {[round(m[0] / 1024, 1) for m in memory[exe]]})")


if __name__ == "__main__":
    main()
