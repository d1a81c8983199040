//! Taking and giving back the terminal: raw mode, alternate screen, bracketed paste, mouse
//! capture and focus reports on the way in; all of it undone on quit, on an error, on panic
//! and on SIGINT, SIGTERM, SIGHUP and SIGQUIT.

use std::io::{Stdout, Write, stdout};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
    restored: bool,
}

/// Undoes everything [`TerminalGuard::enter`] did. Each step is attempted even if an earlier
/// one failed: a half-restored terminal is worse than an error we cannot report anyway.
fn restore_terminal() {
    let mut out = stdout();
    let _ = crossterm::execute!(
        out,
        DisableFocusChange,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Raw mode, the alternate screen (cleared), bracketed paste, mouse capture and focus
/// reports: the console's terminal, at start and again after an editor had it.
pub(super) fn take_terminal() -> std::io::Result<()> {
    enable_raw_mode()?;
    crossterm::execute!(
        stdout(),
        EnterAlternateScreen,
        // Not `Terminal::clear`: that asks the terminal for the cursor position and
        // waits for the answer, which delays the first frame.
        crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
        EnableBracketedPaste,
        EnableMouseCapture,
        // Focus reports: a question arriving in the background notifies (tui/notify.rs).
        EnableFocusChange
    )
}

/// The terminal as the shell had it, for a program that takes it over (an editor).
pub(super) fn release_terminal() {
    restore_terminal();
}

impl TerminalGuard {
    pub fn enter() -> anyhow::Result<Self> {
        install_panic_hook();
        if let Err(e) = take_terminal() {
            restore_terminal();
            return Err(e.into());
        }
        match Terminal::new(CrosstermBackend::new(stdout())) {
            Ok(mut terminal) => {
                let _ = terminal.hide_cursor();
                Ok(TerminalGuard {
                    terminal,
                    restored: false,
                })
            }
            Err(e) => {
                restore_terminal();
                Err(e.into())
            }
        }
    }

    pub fn restore(&mut self) {
        if !self.restored {
            self.restored = true;
            restore_terminal();
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        self.restore();
    }
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // Restore first so the panic message lands on a usable screen.
            restore_terminal();
            previous(info);
        }));
    });
}

/// The signals that end the console like a quit (terminal restored, agent shut down), then
/// exit with 128 + the signal's number (decision 0067). SIGINT and SIGQUIT come from
/// another process (`kill`), since the terminal is raw and Ctrl-C, Ctrl-\\ are keys; left
/// to their default action they would end the process with the terminal still raw.
pub struct Signals {
    #[cfg(unix)]
    streams: Vec<(tokio::signal::unix::Signal, i32)>,
}

impl Signals {
    pub fn new() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut streams = Vec::new();
            for kind in [
                SignalKind::interrupt(),
                SignalKind::terminate(),
                SignalKind::hangup(),
                SignalKind::quit(),
            ] {
                streams.push((signal(kind)?, kind.as_raw_value()));
            }
            Ok(Signals { streams })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The number of the next signal that arrives.
    pub async fn recv(&mut self) -> i32 {
        #[cfg(unix)]
        {
            let arrivals = self.streams.iter_mut().map(|(stream, number)| {
                Box::pin(async move {
                    stream.recv().await;
                    *number
                })
            });
            futures::future::select_all(arrivals).await.0
        }
        #[cfg(not(unix))]
        std::future::pending::<i32>().await
    }
}
