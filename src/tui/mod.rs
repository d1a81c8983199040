//! The full-screen console (ratatui + crossterm).
