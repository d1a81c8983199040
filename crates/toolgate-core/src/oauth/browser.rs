//! Opening the sign-in page: `$BROWSER` when set (a command line; `%s` stands for the URL,
//! else the URL is appended), otherwise `xdg-open`. The URL is always shown as well, so a
//! person without a working browser on this machine can open it elsewhere.

use std::process::Stdio;

/// How the sign-in page reaches the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opener {
    /// `$BROWSER`, else `xdg-open`.
    System,
    /// Only show the URL (`--no-browser`).
    ShowOnly,
    /// A given command line (tests, and front ends that know better).
    Command(String),
}

impl Opener {
    /// The command line that opens `url`, or None when nothing is to be opened.
    pub fn command_for(&self, url: &str) -> Option<Vec<String>> {
        let line = match self {
            Opener::ShowOnly => return None,
            Opener::Command(line) => line.clone(),
            Opener::System => std::env::var("BROWSER")
                .ok()
                .filter(|b| !b.trim().is_empty())
                .unwrap_or_else(|| "xdg-open".to_string()),
        };
        let mut words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        if words.is_empty() {
            return None;
        }
        if words.iter().any(|w| w.contains("%s")) {
            for word in &mut words {
                *word = word.replace("%s", url);
            }
        } else {
            words.push(url.to_string());
        }
        Some(words)
    }

    /// Starts the browser without waiting for it (a browser may run for hours). An error
    /// only means it could not be started; the person still has the URL.
    pub fn open(&self, url: &str) -> Result<(), BrowserError> {
        let Some(words) = self.command_for(url) else {
            return Ok(());
        };
        let (program, args) = words.split_first().ok_or(BrowserError::Empty)?;
        let mut child = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| BrowserError::Start {
                program: program.clone(),
                source,
            })?;
        // Reap it whenever it exits, so no zombie is left behind.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        Ok(())
    }
}

/// Why a browser could not be started.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error("empty browser command")]
    Empty,
    #[error("cannot start '{program}': {source}")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_is_appended_or_substituted() {
        let url = "https://as.example/authorize?x=1";
        assert_eq!(
            Opener::Command("firefox --new-tab".into()).command_for(url),
            Some(vec!["firefox".into(), "--new-tab".into(), url.into()])
        );
        assert_eq!(
            Opener::Command("open-it --url=%s".into()).command_for(url),
            Some(vec!["open-it".into(), format!("--url={url}")])
        );
        assert_eq!(Opener::ShowOnly.command_for(url), None);
    }
}
