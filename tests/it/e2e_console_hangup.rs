//! The console never outlives its terminal (issue 41, decision 0090). The real binary runs
//! on a pty that is NOT its controlling terminal (a session of its own, made by `setsid`,
//! without TIOCSCTTY), so closing the pty's master side sends no signal at all: the
//! terminal just hangs up, and every read on it returns 0. The console must notice, end as
//! SIGHUP ends it (exit 129, its servers stopped, its session log intact), quickly and
//! without spinning on the dead terminal.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::process::{alive, children_of};
use crate::support::pty::{Screen, WAIT};

const ROWS: u16 = 36;
const COLS: u16 = 120;

/// The pty's master side, drained by a thread of its own (a full pty would block the
/// console's writes) until it is dropped: then the thread stops (it polls, so it never sits
/// in a read that would keep the master open) and the last handle closes the master. A
/// test that fails early closes it too, so the console it started does not stay behind.
struct Master {
    file: Arc<File>,
    stop: Arc<AtomicBool>,
    drain: Option<thread::JoinHandle<()>>,
}

impl Master {
    fn press(&self, bytes: &[u8]) {
        (&*self.file).write_all(bytes).expect("write to the pty");
    }

    /// Closes the master for good.
    fn close(self) {
        drop(self);
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
        // `file` drops after this: its last handle, so the master closes.
    }
}

/// A pty pair of `ROWS` × `COLS`: the master, drained into a screen, and the slave. Both
/// are opened close-on-exec in the same step, so no process this test binary starts (the
/// console, its servers, another test's children) keeps a copy of the master open.
fn open_pty() -> (Master, Screen, OwnedFd) {
    // SAFETY: posix_openpt opens /dev/ptmx with these flags; the result is checked.
    let raw = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    assert!(
        raw >= 0,
        "posix_openpt: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a fresh descriptor, owned from here on.
    let master = unsafe { File::from_raw_fd(raw) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: plain calls on our master; ptsname_r writes at most `name.len()` bytes.
    unsafe {
        assert_eq!(libc::unlockpt(master.as_raw_fd()), 0, "unlockpt");
        assert_eq!(
            libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()),
            0,
            "ptsname_r"
        );
    }
    // SAFETY: ptsname_r wrote a NUL-terminated path.
    let slave_path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    // SAFETY: open with a valid path; the result is checked.
    let raw = unsafe {
        libc::open(
            slave_path.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    assert!(
        raw >= 0,
        "open the pty slave: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a fresh descriptor, owned from here on.
    let slave = unsafe { OwnedFd::from_raw_fd(raw) };
    let size = libc::winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one winsize.
    assert_eq!(
        unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) },
        0,
        "set the window size"
    );
    let file = Arc::new(master);
    let stop = Arc::new(AtomicBool::new(false));
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let raw = Arc::new(Mutex::new(Vec::new()));
    let drain = {
        let (file, stop, parser, raw) = (
            Arc::clone(&file),
            Arc::clone(&stop),
            Arc::clone(&parser),
            Arc::clone(&raw),
        );
        thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while !stop.load(Ordering::SeqCst) {
                let mut entry = libc::pollfd {
                    fd: file.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd; waits at most 20 ms so `stop` is seen soon.
                if unsafe { libc::poll(&mut entry, 1, 20) } <= 0 {
                    continue;
                }
                match (&*file).read(&mut buf) {
                    Ok(n) if n > 0 => {
                        parser.lock().unwrap().process(&buf[..n]);
                        raw.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                    _ => thread::sleep(Duration::from_millis(20)),
                }
            }
        })
    };
    let screen = Screen {
        parser,
        row_per_line: false,
        raw,
    };
    (
        Master {
            file,
            stop,
            drain: Some(drain),
        },
        screen,
        slave,
    )
}

/// CPU time `pid` has used so far (user + system, all its threads), in clock ticks, from
/// /proc (which still answers for a zombie not yet reaped).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    let rest = &stat[stat.rfind(')').expect("comm") + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the comm: state is field 3 of stat(5), so utime (14) and stime (15) are 11, 12.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Waits (polling, at most `WAIT`) until `pid` has exited, without reaping it, so its
/// /proc entry can still be read.
fn wait_exited_unreaped(pid: u32) -> Instant {
    let deadline = Instant::now() + WAIT;
    loop {
        // SAFETY: siginfo is plain data that waitid fills in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a plain syscall on our own child; WNOWAIT leaves it to be reaped later.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        assert_eq!(rc, 0, "waitid: {}", std::io::Error::last_os_error());
        // SAFETY: waitid filled the struct; si_pid is 0 while the child still runs.
        if unsafe { info.si_pid() } != 0 {
            return Instant::now();
        }
        if Instant::now() > deadline {
            // SAFETY: a plain syscall on our own child, not reaped yet.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("toolgate still ran {WAIT:?} after its terminal hung up (killed now)");
        }
        thread::sleep(Duration::from_millis(5));
    }
}

fn session_log(state: &Path) -> String {
    let file = std::fs::read_dir(state.join("sessions"))
        .expect("sessions dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .expect("a session log");
    std::fs::read_to_string(file).expect("session log")
}

/// How the console holds its pty.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tty {
    /// Its terminal, not its controlling one: a hang-up sends no signal.
    NotControlling,
    /// Its controlling terminal: the hang-up sends SIGHUP, and the terminal is dead too.
    Controlling,
}

/// The console, started in `workspace` on the pty `slave` in a session of its own.
fn start_console(home: &Path, workspace: &Path, slave: OwnedFd, held: Tty) -> std::process::Child {
    let tty = File::from(slave);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.current_dir(workspace)
        .env("TOOLGATE_STATE_DIR", home.join("state"))
        .env("TOOLGATE_CONFIG_DIR", home.join("config"))
        .env("TERM", "xterm-256color")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::from(tty.try_clone().expect("dup the pty")))
        .stdout(Stdio::from(tty.try_clone().expect("dup the pty")))
        .stderr(Stdio::from(tty));
    // SAFETY: setsid is async-signal-safe. A new session has no controlling terminal, and
    // none is taken (no TIOCSCTTY), so the pty's hang-up sends the console no SIGHUP.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if held == Tty::Controlling && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().expect("start toolgate");
    // tty_nr (field 7 of stat(5)) is 0 without a controlling terminal.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
    let tty_nr = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(4)
        .map(str::to_string);
    assert_eq!(
        tty_nr.as_deref() == Some("0"),
        held == Tty::NotControlling,
        "controlling terminal: {tty_nr:?}"
    );
    child
}

/// How the console ended after its terminal's master was closed.
struct AfterHangup {
    /// From the close to the process's exit.
    took: Duration,
    /// CPU time the process used in that while.
    cpu_ms: u64,
    status: std::process::ExitStatus,
}

/// Closes the master (no signal is sent to anyone) and waits for the console to exit.
fn hang_up(master: Master, child: &mut std::process::Child) -> AfterHangup {
    let pid = child.id();
    let cpu_before = cpu_ticks(pid);
    let closed_at = Instant::now();
    master.close();
    let exited_at = wait_exited_unreaped(pid);
    let cpu_after = cpu_ticks(pid);
    let status = child.wait().expect("reap toolgate");
    // SAFETY: sysconf only reads a constant.
    let ticks_per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let after = AfterHangup {
        took: exited_at - closed_at,
        cpu_ms: (cpu_after - cpu_before) * 1000 / ticks_per_second,
        status,
    };
    eprintln!(
        "hang-up to exit: {:?}; CPU used meanwhile: {} ms",
        after.took, after.cpu_ms
    );
    after
}

/// Gone within a second, with no more CPU than shutting down costs (the spin this replaces
/// burned a whole core the entire time), and with SIGHUP's exit status.
fn assert_ended_like_sighup(after: &AfterHangup) {
    assert!(
        after.took < Duration::from_secs(1),
        "toolgate took {:?} to end after its terminal hung up",
        after.took
    );
    assert!(
        after.cpu_ms <= 150,
        "toolgate used {} ms of CPU in the {:?} after the hang-up",
        after.cpu_ms,
        after.took
    );
    assert_eq!(
        after.status.code(),
        Some(129),
        "a hang-up ends the console as SIGHUP does: {:?}",
        after.status
    );
}

/// The reported case: an idle console (nothing to draw, so nothing but input could wake
/// it) on a terminal that goes away.
#[test]
fn an_idle_console_ends_when_its_terminal_hangs_up_without_a_signal() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (master, screen, slave) = open_pty();
    let mut child = start_console(home.path(), workspace.path(), slave, Tty::NotControlling);
    screen.wait_text("scripted demo");
    let after = hang_up(master, &mut child);
    assert_ended_like_sighup(&after);
}

/// With a turn stopped on a question and its servers running, the hang-up ends the
/// console as SIGHUP does: the servers stopped, the session log whole.
#[test]
fn a_busy_console_ends_with_its_servers_when_its_terminal_hangs_up() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (master, screen, slave) = open_pty();
    let mut child = start_console(home.path(), workspace.path(), slave, Tty::NotControlling);
    let pid = child.id();
    screen.wait_text("scripted demo");
    // The demo's turn connects its docs and deploy servers (child processes) and stops on
    // the question about the trigger.
    let prompt = "deploy web";
    master.press(prompt.as_bytes());
    screen.wait_text(prompt);
    master.press(b"\r");
    screen.wait_for("the permission modal for mcp__deploy__trigger", |t| {
        t.contains("Permission required") && t.contains("mcp__deploy__trigger")
    });
    let servers = children_of(pid);
    assert!(!servers.is_empty(), "the console's servers are running");

    let after = hang_up(master, &mut child);
    assert_ended_like_sighup(&after);
    let deadline = Instant::now() + WAIT;
    while servers.iter().any(|&p| alive(p)) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let survivors: Vec<u32> = servers.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        survivors.is_empty(),
        "server processes outlived the console: {survivors:?}"
    );
    // The session log holds the turn, each line whole.
    let log = session_log(&home.path().join("state"));
    assert!(log.contains(prompt), "the prompt is in the session log");
    for line in log.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("a broken session line ({e}): {line}"));
    }
}

/// The window closed on a console whose controlling terminal it was: SIGHUP arrives and
/// the terminal is dead. Whichever the console sees first, the signal or the hang-up, it
/// lets go of the dead terminal and ends with 129 (a write to it on the way out, ratatui's
/// cursor when it is dropped, would panic: 101).
#[test]
fn a_console_whose_controlling_terminal_closes_ends_with_129() {
    let home = tempfile::tempdir().expect("tempdir");
    let workspace = tempfile::tempdir().expect("workspace tempdir");
    let (master, screen, slave) = open_pty();
    let mut child = start_console(home.path(), workspace.path(), slave, Tty::Controlling);
    screen.wait_text("scripted demo");
    let after = hang_up(master, &mut child);
    assert_ended_like_sighup(&after);
}
