//! The slash commands: one table of what can be typed after `/`, its arguments and its help
//! text. The dispatcher ([`parse`]) finds commands in it, the help overlay lists it, and
//! the completion and the dispatcher share the form of a prompt command
//! ([`PROMPT_PREFIX`]). Parsing is pure: it says what a command asks for and `update`
//! carries it out.

use std::path::PathBuf;

use crate::protocol::UiCommand;
use crate::sanitize::for_terminal;

/// What a command word does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Connect,
    Disconnect,
    Mcp,
    Permissions,
    Undo,
    Roots,
    Compact,
    Context,
    Clear,
    Help,
    Quit,
    /// `/memory`: the instruction files loaded.
    Memory,
    /// `/init`: the model drafts an AGENTS.md (a turn: see `project::INIT_PROMPT`).
    Init,
    /// `/model [NAME]`: switch the model for the following requests.
    Model,
    /// `/hooks`: the hooks in force, where each comes from, its last result (0086).
    Hooks,
}

/// One line of the table: how the help shows it, what it says, and the words (after the
/// slash) that run it. A line may cover several words (`/clear /help /quit`), or none
/// (`/mcp reload` is a form of `/mcp`; prompts are found in the servers' catalogs).
#[derive(Debug)]
pub struct Command {
    /// The command with its arguments, as the help lists it.
    pub usage: &'static str,
    pub help: &'static str,
    pub words: &'static [(&'static str, Action)],
}

/// Every slash command, in the order the help lists them. The help is as tall as 80×24
/// allows, so related commands share a line.
pub const COMMANDS: &[Command] = &[
    Command {
        usage: "/[dis]connect NAME",
        help: "start / stop an MCP server (its tools come and go)",
        words: &[
            ("connect", Action::Connect),
            ("disconnect", Action::Disconnect),
        ],
    },
    Command {
        usage: "/mcp [reload]",
        help: "servers, tools, errors · reload config and rules",
        words: &[("mcp", Action::Mcp)],
    },
    Command {
        usage: "/permissions /hooks",
        help: "rules, grants, revoke · hooks, last results",
        words: &[
            ("permissions", Action::Permissions),
            ("hooks", Action::Hooks),
        ],
    },
    Command {
        usage: "/undo",
        help: "restore what the last turn changed (asks)",
        words: &[("undo", Action::Undo)],
    },
    Command {
        usage: "/roots [add DIR]",
        help: "folders servers may work in; add one",
        words: &[("roots", Action::Roots)],
    },
    Command {
        usage: "@server:uri /mcp__s__p",
        help: "attach an MCP resource · run an MCP prompt",
        words: &[],
    },
    Command {
        usage: "/compact /context",
        help: "summarize now (words after it: focus) · window use",
        words: &[("compact", Action::Compact), ("context", Action::Context)],
    },
    Command {
        usage: "/memory /init /model M",
        help: "instruction files · draft AGENTS.md · model",
        words: &[
            ("memory", Action::Memory),
            ("init", Action::Init),
            ("model", Action::Model),
        ],
    },
    Command {
        usage: "/clear /help /quit",
        help: "forget the conversation · this help · leave",
        words: &[
            ("clear", Action::Clear),
            ("help", Action::Help),
            ("quit", Action::Quit),
            ("exit", Action::Quit),
        ],
    },
];

/// How a server's prompt is run as a command: `/mcp__{server}__{prompt}`.
pub const PROMPT_PREFIX: &str = "mcp__";

/// The action of a command word, from the table.
pub fn action(word: &str) -> Option<Action> {
    COMMANDS
        .iter()
        .flat_map(|c| c.words.iter())
        .find(|(w, _)| *w == word)
        .map(|(_, a)| *a)
}

/// Every word of the table: file commands must not take one.
pub fn words() -> Vec<&'static str> {
    COMMANDS
        .iter()
        .flat_map(|c| c.words.iter().map(|(w, _)| *w))
        .collect()
}

/// What a typed command asks `update` to do.
#[derive(Debug)]
pub enum Parsed {
    /// Hand this to the agent.
    Send(UiCommand),
    /// `/mcp reload`: tell the person, and ask the agent.
    Reload,
    /// `/mcp`, `/permissions`, `/help`.
    OpenMcp,
    OpenPermissions,
    OpenHelp,
    Clear,
    /// `/undo` (queued while a turn runs).
    Undo,
    /// `/memory`: list the instruction files.
    ShowMemory,
    /// `/memory N`: open the Nth listed instruction file in the editor (1-based).
    OpenMemory(usize),
    /// `/init` and file commands: sent as a message (the agent expands them).
    Message,
    Quit,
    /// Wrong arguments or an unknown command: the line to show.
    Problem(String),
}

impl Parsed {
    /// Typed while a turn runs, whether it waits in the queue for the turn to end: what
    /// changes the conversation, the servers or the files does (and keeps its place among
    /// the queued messages); what only shows something, or is answered beside a turn
    /// (`/roots`), runs at once, and so do `/quit` and mistakes (decision 0076).
    pub fn waits_for_turn(&self) -> bool {
        match self {
            Parsed::Send(UiCommand::AddRoot(_) | UiCommand::ListRoots) => false,
            Parsed::Send(_) | Parsed::Reload | Parsed::Clear | Parsed::Undo | Parsed::Message => {
                true
            }
            Parsed::OpenMcp
            | Parsed::ShowMemory
            | Parsed::OpenMemory(_)
            | Parsed::OpenPermissions
            | Parsed::OpenHelp
            | Parsed::Quit
            | Parsed::Problem(_) => false,
        }
    }
}

/// If `command` (the text after the slash) names a prompt: its name and the rest of the
/// line, for the completion to look up in the catalogs.
pub fn prompt_call(command: &str) -> Option<(&str, &str)> {
    let (first, rest) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    first.starts_with(PROMPT_PREFIX).then_some((first, rest))
}

/// Reads a built-in command (the text after the slash). `servers` are the configured
/// servers' names, for the usage line of `/connect` and `/disconnect`.
pub fn parse(command: &str, servers: &[&str]) -> Parsed {
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default();
    let arg = words.next();
    let Some(action) = action(name) else {
        return Parsed::Problem(format!(
            "unknown command /{} — /help lists the commands",
            for_terminal(name)
        ));
    };
    match (action, arg) {
        (Action::Connect, Some(server)) => Parsed::Send(UiCommand::Connect(server.to_string())),
        (Action::Disconnect, Some(server)) => {
            Parsed::Send(UiCommand::Disconnect(server.to_string()))
        }
        (Action::Connect | Action::Disconnect, None) => Parsed::Problem(format!(
            "usage: /{name} NAME — configured servers: {}",
            if servers.is_empty() {
                "none".to_string()
            } else {
                servers.join(", ")
            }
        )),
        (Action::Mcp, Some(action @ ("enable" | "disable"))) => {
            let rest: Vec<&str> = words.collect();
            let save = rest.contains(&"--save");
            match rest.iter().find(|w| !w.starts_with("--")) {
                Some(server) => Parsed::Send(UiCommand::SetServerEnabled {
                    server: server.to_string().into(),
                    enabled: action == "enable",
                    save,
                }),
                None => Parsed::Problem(format!(
                    "usage: /mcp {action} NAME [--save] — --save writes \"enabled\" into the server's .mcp.json"
                )),
            }
        }
        (Action::Mcp, Some("reload")) => Parsed::Reload,
        (Action::Mcp, _) => Parsed::OpenMcp,
        (Action::Roots, None) => Parsed::Send(UiCommand::ListRoots),
        (Action::Roots, Some("add")) => {
            match command.split_once(" add ").map(|(_, dir)| dir.trim()) {
                Some(dir) if !dir.is_empty() => {
                    Parsed::Send(UiCommand::AddRoot(PathBuf::from(dir)))
                }
                _ => Parsed::Problem("usage: /roots add DIR".into()),
            }
        }
        (Action::Roots, Some(_)) => {
            Parsed::Problem("usage: /roots (list) or /roots add DIR".into())
        }
        (Action::Compact, _) => {
            // Everything after the word steers the summary.
            let focus = command
                .trim_start()
                .strip_prefix(name)
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_string);
            Parsed::Send(UiCommand::Compact(focus))
        }
        (Action::Context, _) => Parsed::Send(UiCommand::ShowContext),
        (Action::Hooks, _) => Parsed::Send(UiCommand::ShowHooks),
        (Action::Permissions, _) => Parsed::OpenPermissions,
        (Action::Clear, _) => Parsed::Clear,
        // The agent finds the files and asks before restoring them (an inbox request).
        (Action::Undo, _) => Parsed::Undo,
        (Action::Help, _) => Parsed::OpenHelp,
        (Action::Memory, None) => Parsed::ShowMemory,
        (Action::Memory, Some(number)) => match number.parse::<usize>() {
            Ok(n) if n > 0 => Parsed::OpenMemory(n),
            _ => Parsed::Problem(
                "usage: /memory (list the instruction files) or /memory N (open file N in $EDITOR)"
                    .into(),
            ),
        },
        (Action::Init, _) => Parsed::Message,
        (Action::Model, Some(model)) => Parsed::Send(UiCommand::SetModel(model.to_string())),
        (Action::Model, None) => Parsed::Problem(
            "usage: /model NAME — the following requests go to that model (Tab completes the known names)"
                .into(),
        ),
        (Action::Quit, _) => Parsed::Quit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_takes_the_rest_of_the_line_as_its_focus() {
        assert!(matches!(
            parse("compact", &[]),
            Parsed::Send(UiCommand::Compact(None))
        ));
        match parse("compact  the deploy work and its errors ", &[]) {
            Parsed::Send(UiCommand::Compact(Some(focus))) => {
                assert_eq!(focus, "the deploy work and its errors");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse("context", &[]),
            Parsed::Send(UiCommand::ShowContext)
        ));
    }

    #[test]
    fn every_word_of_the_table_is_dispatched_and_others_are_unknown() {
        for (word, _) in COMMANDS.iter().flat_map(|c| c.words.iter()) {
            assert!(
                !matches!(parse(word, &[]), Parsed::Problem(p) if p.starts_with("unknown")),
                "{word}"
            );
        }
        assert!(matches!(parse("frobnicate", &[]), Parsed::Problem(_)));
        assert_eq!(
            prompt_call("mcp__fx__review a b"),
            Some(("mcp__fx__review", "a b"))
        );
        assert_eq!(prompt_call("mcp reload"), None);
    }

    #[test]
    fn what_changes_the_session_waits_for_the_turn_and_what_looks_runs_now() {
        for waits in [
            "connect fs",
            "disconnect fs",
            "mcp enable fs",
            "mcp reload",
            "clear",
            "undo",
        ] {
            assert!(parse(waits, &[]).waits_for_turn(), "{waits}");
        }
        for now in [
            "mcp",
            "permissions",
            "help",
            "roots",
            "roots add /tmp",
            "quit",
            "connect",
            "nonsense",
        ] {
            assert!(!parse(now, &[]).waits_for_turn(), "{now}");
        }
    }
}
