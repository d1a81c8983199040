//! Takes the terminal the way the console does, draws "ready", waits for one key, then ends
//! as its argument says: `panic` (a bug) or `error` (an error returned from main). The pty
//! tests in tests/it/e2e_console.rs run it to prove that the terminal comes back on both
//! paths; signals are proven against the real binary.

use std::io::Read;

use ratatui::widgets::Paragraph;

fn main() -> anyhow::Result<()> {
    let how = std::env::args().nth(1).unwrap_or_default();
    let mut guard = toolgate::tui::TerminalGuard::enter()?;
    guard
        .terminal
        .draw(|frame| frame.render_widget(Paragraph::new("ready"), frame.area()))?;
    let mut key = [0u8; 1];
    std::io::stdin().read_exact(&mut key)?;
    if how == "panic" {
        #[allow(clippy::panic)] // the point of this example: a bug while the terminal is raw
        {
            panic!("a bug while the console owns the terminal");
        }
    }
    Err(anyhow::anyhow!("the console failed"))
}
