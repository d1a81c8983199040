"""Console first frame and resident memory in a pseudo-terminal (120x36).

Usage: cargo build --release && python3 benches/first_frame.py target/release/toolgate [RUNS]

Each run starts `toolgate` (no arguments: the console on the scripted demo) in a fresh
temporary HOME/config/state/workspace, and times from just before fork until the composer's
placeholder ("Message the agent") has been written to the terminal, fork+exec included.
VmRSS is read at that moment. The first run pays for a cold page cache; the median is the
figure to report. Not a criterion bench: it needs a real pty and a real process start.
"""
import os, pty, sys, time, select, tempfile, signal, struct, fcntl, termios, statistics
exe = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
needle = b"Message the agent"
times = []
for i in range(runs):
    d = tempfile.mkdtemp()
    env = dict(os.environ, HOME=d, TOOLGATE_CONFIG_DIR=d + "/cfg", TOOLGATE_STATE_DIR=d + "/state", TERM="xterm-256color")
    env.pop("CI", None)
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(d)
        os.execve(exe, [exe], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    buf = b""
    t1 = None
    deadline = t0 + 10
    while time.perf_counter() < deadline:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            buf += chunk
            if needle in buf and t1 is None:
                t1 = time.perf_counter()
                break
    rss = None
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS"):
                rss = line.split()[1]
    except Exception:
        pass
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
    if t1:
        times.append((t1 - t0) * 1000)
        print(f"run {i}: first frame {times[-1]:.1f} ms, VmRSS {rss} kB")
    else:
        print(f"run {i}: no frame; got {buf[-300:]!r}")
if times:
    print(f"median {statistics.median(times):.1f} ms, min {min(times):.1f}, max {max(times):.1f}")
