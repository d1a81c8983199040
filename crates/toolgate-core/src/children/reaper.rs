//! The reaper: one small process per toolgate process that outlives it just long enough to
//! stop the process groups toolgate left running.
//!
//! Each child announces its own group, `+ PGID`, from between fork and exec (so a
//! toolgate killed right after the fork cannot leave an unlisted group), and toolgate writes
//! `- PGID` before it reaps the group's leader (after that the id may be reused, so it must
//! not be signalled). The reaper keeps the list; when its stdin reaches end-of-file, which
//! happens when the last copy of the pipe's write end closes, i.e. when toolgate's process
//! ends by any path including SIGKILL, it sends SIGTERM to every listed group, waits for
//! them to empty (a grace of [`GRACE_TENTHS`] tenths of a second), then SIGKILLs what is
//! left and exits. Each listed id is also a session id (every child leads its session), so
//! both signals also go to the processes of those sessions found in /proc that moved to
//! another group (a confined bash command cannot leave its session, decision 0088).
//!
//! It is `/bin/sh` running a fixed script rather than toolgate itself: it needs no binary
//! path (tests and benches link toolgate into other executables), and it is small (dash:
//! 1.7 MB resident). It is started through a launcher that exits at once, so it is nobody's child
//! (toolgate's children are its servers and commands) and sits in a group of its own. The
//! write end is close-on-exec, so children hold it only until their exec.

use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};

/// How long the listed groups get between SIGTERM and SIGKILL, in tenths of a second.
const GRACE_TENTHS: u32 = 30;

/// Ignores the signals a terminal or a process-group kill of toolgate would send it, so
/// the reaper lives until toolgate's end closes its stdin. `sleep 0.1` is not POSIX;
/// where it fails, `sleep 1` keeps the same bound in coarser steps.
const SCRIPT: &str = r#"trap '' INT HUP TERM QUIT PIPE
live=' '
while read -r op pg; do
  case $op in
    +) live="$live$pg " ;;
    -) case $live in *" $pg "*) live="${live%%" $pg "*} ${live#*" $pg "}" ;; esac ;;
  esac
done
[ "$live" = ' ' ] && exit 0
sweep() {
  for f in /proc/[0-9]*/stat; do
    line=
    read -r line 2>/dev/null < "$f"
    [ -n "$line" ] || continue
    set -- ${line##*) }
    case $1 in Z|X|x) continue ;; esac
    case $live in *" $4 "*) p=${f#/proc/}; kill -"$sig" "${p%/stat}" 2>/dev/null ;; esac
  done
}
sig=TERM
for pg in $live; do kill -TERM -"$pg" 2>/dev/null; done
sweep
n=0
while [ "$n" -lt "$1" ]; do
  left=
  for pg in $live; do kill -0 -"$pg" 2>/dev/null && left=1; done
  [ -z "$left" ] && break
  sleep 0.1 2>/dev/null || { sleep 1; n=$((n + 9)); }
  n=$((n + 1))
done
sig=KILL
for pg in $live; do kill -KILL -"$pg" 2>/dev/null; done
sweep
"#;

/// Starts the reaper (`$1`, with the grace as `$2`) in the background with this stdin and
/// exits: an asynchronous command's stdin would be /dev/null, hence fd 3.
const LAUNCHER: &str =
    r#"exec 3<&0 </dev/null; /bin/sh -c "$1" toolgate-reaper "$2" <&3 3<&- & exit 0"#;

enum State {
    NotStarted,
    Running(ChildStdin),
    /// It could not be started, or its pipe broke (the pipe, if any, stays open so its
    /// descriptor number, which children were given, is never reused): the parent-death
    /// signal is all that is left.
    Unavailable {
        _pipe: Option<ChildStdin>,
    },
}

/// Process-wide on purpose: the reaper's job is the end of this process, whichever part
/// of it started the children.
static REAPER: Mutex<State> = Mutex::new(State::NotStarted);

/// The write end of the reaper's pipe, starting the reaper on first use; None when there
/// is no reaper. The descriptor stays open for the life of the process.
pub(super) fn channel() -> Option<RawFd> {
    let mut state = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(*state, State::NotStarted) {
        *state = start();
    }
    match &*state {
        State::Running(stdin) => Some(stdin.as_raw_fd()),
        _ => None,
    }
}

/// In the child, between fork and exec, after `setsid`: lists the child's group (its own
/// pid) with the reaper. Only async-signal-safe calls on stack data. SIGPIPE is ignored for
/// the write (std has reset it to the default by now), so a dead reaper cannot kill the
/// child; the write is one line, well under PIPE_BUF, so it never interleaves with another.
pub(super) fn announce_from_child(fd: RawFd) {
    let mut line = [0u8; 24];
    line[0] = b'+';
    line[1] = b' ';
    // SAFETY: getpid has no preconditions.
    let mut pid = unsafe { libc::getpid() } as u32;
    let mut digits = [0u8; 10];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (pid % 10) as u8;
        n += 1;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    for i in 0..n {
        line[2 + i] = digits[n - 1 - i];
    }
    line[2 + n] = b'\n';
    // SAFETY: signal and write take plain integers and a pointer into `line`, which lives
    // across the call; both are async-signal-safe.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::write(fd, line.as_ptr().cast(), 3 + n);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A group the reaper will stop if toolgate dies first (the child listed it). Release it
/// (or drop it) before reaping the group's leader.
#[derive(Debug)]
pub struct Registration {
    pgid: libc::pid_t,
    released: bool,
}

impl Registration {
    /// The group `pgid` of a child spawned with [`super::detach`], which listed it itself.
    pub fn adopt(pgid: libc::pid_t) -> Registration {
        Registration {
            pgid,
            released: false,
        }
    }

    /// Tells the reaper to forget the group: its leader is about to be reaped.
    pub fn release(mut self) {
        self.unlist();
    }

    fn unlist(&mut self) {
        if !self.released {
            self.released = true;
            send(&format!("- {}\n", self.pgid));
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.unlist();
    }
}

fn send(line: &str) {
    let mut state = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
    let State::Running(stdin) = &mut *state else {
        return;
    };
    if let Err(e) = stdin.write_all(line.as_bytes()) {
        tracing::warn!(
            "the process reaper is gone ({e}); children rely on their parent-death signal"
        );
        let State::Running(stdin) =
            std::mem::replace(&mut *state, State::Unavailable { _pipe: None })
        else {
            return;
        };
        *state = State::Unavailable { _pipe: Some(stdin) };
    }
}

fn start() -> State {
    let mut launcher = Command::new("/bin/sh");
    launcher
        .arg("-c")
        .arg(LAUNCHER)
        .arg("toolgate-reaper-launcher")
        .arg(SCRIPT)
        .arg(GRACE_TENTHS.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group (the reaper inherits it): a Ctrl-C or hang-up aimed at toolgate's
        // group passes it by.
        .process_group(0);
    let spawned = launcher.spawn().and_then(|mut launcher| {
        let stdin = launcher.stdin.take();
        // The launcher exits as soon as the reaper is in the background.
        let status = launcher.wait()?;
        match stdin {
            Some(stdin) if status.success() => Ok(stdin),
            _ => Err(std::io::Error::other(format!(
                "the launcher ended with {status}"
            ))),
        }
    });
    match spawned {
        Ok(stdin) => State::Running(stdin),
        Err(e) => {
            tracing::warn!(
                "cannot start the process reaper ({e}); children rely on their parent-death signal"
            );
            State::Unavailable { _pipe: None }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Child;

    /// A reaper of our own (the process-wide one lives as long as the test binary).
    fn reaper() -> Child {
        Command::new("/bin/sh")
            .args(["-c", SCRIPT, "toolgate-reaper", "30"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn sleeper() -> Child {
        let mut command = Command::new("sleep");
        command.arg("300");
        super::super::detach(&mut command, super::super::DeathSignal::Terminate);
        command.spawn().unwrap()
    }

    #[test]
    fn end_of_input_stops_the_listed_groups_and_spares_the_released_ones() {
        let mut listed = sleeper();
        let mut released = sleeper();
        let mut reaper = reaper();
        let mut input = reaper.stdin.take().unwrap();
        write!(
            input,
            "+ {}\n+ {}\n- {}\n",
            listed.id(),
            released.id(),
            released.id()
        )
        .unwrap();
        drop(input);
        assert!(reaper.wait().unwrap().success());
        assert_eq!(listed.wait().unwrap().signal(), Some(libc::SIGTERM));
        assert_eq!(
            released.try_wait().unwrap(),
            None,
            "a released group is left alone"
        );
        released.kill().unwrap();
        released.wait().unwrap();
    }

    /// The state letter of `pid`, None once it is gone.
    fn state(pid: u32) -> Option<String> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 1..];
        after.split_whitespace().next().map(str::to_string)
    }

    #[test]
    fn end_of_input_also_stops_a_process_that_moved_to_another_group_of_the_session() {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "python3 -c 'import os, time; os.setpgid(0, 0); time.sleep(300)' & echo $!; wait",
        ]);
        command.stdout(Stdio::piped());
        super::super::detach(&mut command, super::super::DeathSignal::Terminate);
        let mut leader = command.spawn().unwrap();
        let mut out = std::io::BufReader::new(leader.stdout.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        let moved: u32 = line.trim().parse().unwrap();
        // Wait until it has its own group (field 5 of its stat is its own pid).
        let group_of = |pid: u32| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit(')').next().unwrap_or_default().to_string();
            after.split_whitespace().nth(2).map(str::to_string)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while group_of(moved) != Some(moved.to_string()) {
            assert!(std::time::Instant::now() < deadline, "it never moved");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut reaper = reaper();
        let mut input = reaper.stdin.take().unwrap();
        writeln!(input, "+ {}", leader.id()).unwrap();
        drop(input);
        assert!(reaper.wait().unwrap().success());
        leader.wait().unwrap();
        while state(moved).is_some_and(|s| s != "Z") {
            assert!(
                std::time::Instant::now() < deadline,
                "the process in another group of the session outlived the reaper"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn a_child_announces_its_own_pid_before_exec() {
        use std::io::Read;
        let (mut reader, writer) = std::io::pipe().unwrap();
        let fd = writer.as_raw_fd();
        let mut command = Command::new("true");
        // SAFETY: the hook only calls announce_from_child (async-signal-safe).
        unsafe {
            command.pre_exec(move || {
                announce_from_child(fd);
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        drop(command);
        drop(writer);
        let mut line = String::new();
        reader.read_to_string(&mut line).unwrap();
        assert_eq!(line, format!("+ {}\n", child.id()));
        child.wait().unwrap();
    }
}
