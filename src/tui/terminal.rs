//! Taking and giving back the terminal: raw mode, alternate screen, bracketed paste and
//! mouse capture on the way in; all of it undone on quit, on panic and on SIGTERM/SIGHUP.

use std::io::{Stdout, Write, stdout};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
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
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

impl TerminalGuard {
    pub fn enter() -> anyhow::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        let mut out = stdout();
        if let Err(e) = crossterm::execute!(
            out,
            EnterAlternateScreen,
            // Not `Terminal::clear`: that asks the terminal for the cursor position and
            // waits for the answer, which delays the first frame.
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
            EnableBracketedPaste,
            EnableMouseCapture
        ) {
            restore_terminal();
            return Err(e.into());
        }
        match Terminal::new(CrosstermBackend::new(out)) {
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

/// SIGTERM and SIGHUP end the console like a quit (terminal restored, agent shut down).
pub struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    pub fn new() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals {
                term: signal(SignalKind::terminate())?,
                hup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    pub async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {},
            _ = self.hup.recv() => {},
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await
    }
}
