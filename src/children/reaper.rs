//! The reaper: one small process per toolgate process that outlives it just long enough to
//! stop the process groups toolgate left running.
//!
//! toolgate writes `+ PGID` when a group starts and `- PGID` before it reaps the group's
//! leader (after that the id may be reused, so it must not be signalled). The reaper keeps
//! the list; when its stdin reaches end-of-file, which happens when the last copy of the
//! pipe's write end closes, i.e. when toolgate's process ends by any path including
//! SIGKILL, it sends SIGTERM to every listed group, waits for them to empty (a grace of
//! [`GRACE_TENTHS`] tenths of a second), then SIGKILLs what is left and exits.
//!
//! It is `/bin/sh` running a fixed script rather than toolgate itself: it needs no binary
//! path (tests and benches link toolgate into other executables), and it is a few hundred
//! kilobytes. The write end is close-on-exec, so no other child holds it open.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
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
for pg in $live; do kill -TERM -"$pg" 2>/dev/null; done
n=0
while [ "$n" -lt "$1" ]; do
  left=
  for pg in $live; do kill -0 -"$pg" 2>/dev/null && left=1; done
  [ -z "$left" ] && exit 0
  sleep 0.1 2>/dev/null || { sleep 1; n=$((n + 9)); }
  n=$((n + 1))
done
for pg in $live; do kill -KILL -"$pg" 2>/dev/null; done
"#;

enum State {
    NotStarted,
    Running {
        stdin: ChildStdin,
        /// Kept so the reaper is never reaped by anyone else; it exits after toolgate.
        _process: Child,
    },
    /// It could not be started or its pipe broke: the parent-death signal is all that is
    /// left, reported once in the log.
    Unavailable,
}

/// Process-wide on purpose: the reaper's job is the end of this process, whichever part
/// of it started the children.
static REAPER: Mutex<State> = Mutex::new(State::NotStarted);

/// A group the reaper will stop if toolgate dies first. Release it (or drop it) before
/// reaping the group's leader.
#[derive(Debug)]
pub struct Registration {
    pgid: libc::pid_t,
    released: bool,
}

impl Registration {
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

/// Lists group `pgid` with the reaper (starting it on first use).
pub fn register(pgid: libc::pid_t) -> Registration {
    send(&format!("+ {pgid}\n"));
    Registration {
        pgid,
        released: false,
    }
}

fn send(line: &str) {
    let mut state = REAPER.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(*state, State::NotStarted) {
        *state = start();
    }
    if let State::Running { stdin, .. } = &mut *state
        && let Err(e) = stdin.write_all(line.as_bytes())
    {
        tracing::warn!(
            "the process reaper is gone ({e}); children rely on their parent-death signal"
        );
        *state = State::Unavailable;
    }
}

fn start() -> State {
    let mut command = Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(SCRIPT)
        .arg("toolgate-reaper")
        .arg(GRACE_TENTHS.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a Ctrl-C or hang-up aimed at toolgate's group passes it by.
        .process_group(0);
    match command.spawn() {
        Ok(mut process) => match process.stdin.take() {
            Some(stdin) => State::Running {
                stdin,
                _process: process,
            },
            None => State::Unavailable,
        },
        Err(e) => {
            tracing::warn!(
                "cannot start the process reaper ({e}); children rely on their parent-death signal"
            );
            State::Unavailable
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

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
}
