//! Elicitation outside the console (`toolgate mcp call`): plain prompts on stderr, answers
//! read line by line from stdin, or — for scripts — an answer chosen up front with
//! `--elicitation accept-defaults|decline`. Without a terminal nothing is asked and the
//! request is declined.

use std::io::{BufRead, Write};

use crate::mcp::form::{Field, FieldKind, Form, Input};
use crate::mcp::{ElicitationAsk, ElicitationReply};
use crate::sanitize::for_terminal;

/// How `toolgate mcp call` answers a server's elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ElicitationChoice {
    /// Ask on the terminal (declined when there is none).
    #[default]
    Ask,
    /// Send the form as the server's defaults fill it; decline a form that needs more,
    /// and every page to open.
    AcceptDefaults,
    Decline,
}

/// The unattended answer, with a line for stderr saying what was sent.
pub fn unattended(
    server: &str,
    ask: &ElicitationAsk,
    choice: ElicitationChoice,
) -> (ElicitationReply, String) {
    let server = for_terminal(server);
    match (choice, ask) {
        (ElicitationChoice::AcceptDefaults, ElicitationAsk::Form { form, .. }) => {
            match form.content() {
                Ok(content) => {
                    let line = format!(
                        "toolgate: '{server}' asked for input; sent its defaults ({} field(s))",
                        content.len()
                    );
                    (ElicitationReply::Accept(content), line)
                }
                Err(problems) => {
                    let names: Vec<String> = problems
                        .iter()
                        .filter_map(|p| form.fields.get(p.field))
                        .map(|f| for_terminal(&f.name))
                        .collect();
                    (
                        ElicitationReply::Decline,
                        format!(
                            "toolgate: '{server}' asked for input the defaults do not fill ({}); declined",
                            names.join(", ")
                        ),
                    )
                }
            }
        }
        (ElicitationChoice::AcceptDefaults, ElicitationAsk::Url { url, .. }) => (
            ElicitationReply::Decline,
            format!(
                "toolgate: '{server}' asked to open {}; declined (pages are opened only when asked on a terminal)",
                for_terminal(url)
            ),
        ),
        _ => (
            ElicitationReply::Decline,
            format!("toolgate: '{server}' asked for input; declined (no terminal to ask on)"),
        ),
    }
}

/// Asks on the terminal. End of input declines.
pub fn ask(
    server: &str,
    ask: &ElicitationAsk,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<ElicitationReply> {
    let server = for_terminal(server);
    writeln!(
        out,
        "\nMCP server '{server}' asks you for input (the server asks, not the model):"
    )?;
    match ask {
        ElicitationAsk::Url {
            message,
            url,
            domain,
        } => {
            writeln!(out, "  {}", for_terminal(message))?;
            writeln!(out, "  domain: {}", for_terminal(domain))?;
            writeln!(out, "  url:    {}", for_terminal(url))?;
            let Some(answer) = read_answer(
                input,
                out,
                "Open it in your browser? [o]pen / [d]ecline / [c]ancel the operation: ",
            )?
            else {
                return Ok(ElicitationReply::Decline);
            };
            Ok(match answer.as_str() {
                "o" | "open" | "y" | "yes" => {
                    if let Err(e) = crate::oauth::Opener::System.open(url) {
                        writeln!(
                            out,
                            "could not open a browser ({e}); open the url above yourself"
                        )?;
                    }
                    ElicitationReply::Accept(serde_json::Map::new())
                }
                "c" | "cancel" => ElicitationReply::Cancel,
                _ => ElicitationReply::Decline,
            })
        }
        ElicitationAsk::Form { message, form } => {
            writeln!(out, "  {}", for_terminal(message))?;
            writeln!(
                out,
                "  (Enter keeps the value in [brackets]; '-' empties it. What you send goes to '{server}'.)"
            )?;
            let mut form: Form = form.clone();
            for field in &mut form.fields {
                if !fill(field, input, out)? {
                    return Ok(ElicitationReply::Decline);
                }
            }
            loop {
                let Some(answer) = read_answer(
                    input,
                    out,
                    &format!(
                        "Send this to '{server}'? [s]end / [d]ecline / [c]ancel the operation: "
                    ),
                )?
                else {
                    return Ok(ElicitationReply::Decline);
                };
                match answer.as_str() {
                    "s" | "send" | "y" | "yes" => match form.content() {
                        Ok(content) => return Ok(ElicitationReply::Accept(content)),
                        Err(problems) => {
                            for p in problems {
                                if let Some(f) = form.fields.get(p.field) {
                                    writeln!(out, "  {}: {}", for_terminal(f.label()), p.message)?;
                                }
                            }
                        }
                    },
                    "c" | "cancel" => return Ok(ElicitationReply::Cancel),
                    "d" | "decline" | "n" | "no" => return Ok(ElicitationReply::Decline),
                    _ => {}
                }
            }
        }
    }
}

/// One line, trimmed and lower-cased; None at end of input.
fn read_answer(
    input: &mut impl BufRead,
    out: &mut impl Write,
    prompt: &str,
) -> std::io::Result<Option<String>> {
    write!(out, "{prompt}")?;
    out.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim().to_lowercase()))
}

/// Asks for one field until its input has no problem. False at end of input.
fn fill(
    field: &mut Field,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> std::io::Result<bool> {
    let label = for_terminal(field.label());
    if let Some(description) = &field.description {
        writeln!(out, "  {label}: {}", for_terminal(description))?;
    }
    if let FieldKind::OneOf { items } | FieldKind::ManyOf { items, .. } = &field.kind {
        for (i, item) in items.iter().enumerate() {
            writeln!(out, "    {}. {}", i + 1, for_terminal(&item.label))?;
        }
    }
    loop {
        let shown = for_terminal(&field.shown());
        write!(out, "{label} ({}) [{shown}]: ", field.hint())?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(false);
        }
        let line = line.trim_end_matches(['\n', '\r']);
        if !line.is_empty() {
            enter(field, line);
            field.caret_to_end();
        }
        match field.problem() {
            None => return Ok(true),
            Some(problem) => writeln!(out, "  {problem}")?,
        }
    }
}

/// What a typed line means for a field: text as typed, y/n, option numbers or values.
fn enter(field: &mut Field, line: &str) {
    let option_index = |items: &[crate::mcp::form::Item], word: &str| {
        word.parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .filter(|i| *i < items.len())
            .or_else(|| {
                items
                    .iter()
                    .position(|i| i.value == word || i.label == word)
            })
    };
    let clear = line.trim() == "-";
    field.input = match (&field.kind, &field.input) {
        (FieldKind::Text { .. } | FieldKind::Number { .. }, _) if clear => {
            Input::Text(String::new())
        }
        (FieldKind::Text { .. } | FieldKind::Number { .. }, _) => Input::Text(line.to_string()),
        (FieldKind::Boolean, _) if clear => Input::Bool(None),
        (FieldKind::Boolean, current) => match line.trim().to_lowercase().as_str() {
            "y" | "yes" | "true" => Input::Bool(Some(true)),
            "n" | "no" | "false" => Input::Bool(Some(false)),
            _ => current.clone(),
        },
        (FieldKind::OneOf { .. }, _) if clear => Input::One(None),
        (FieldKind::OneOf { items }, current) => match option_index(items, line.trim()) {
            Some(i) => Input::One(Some(i)),
            None => current.clone(),
        },
        (FieldKind::ManyOf { items, .. }, _) => {
            let mut flags = vec![false; items.len()];
            if !clear {
                for word in line.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                    if let Some(i) = option_index(items, word) {
                        flags[i] = true;
                    }
                }
            }
            Input::Many(flags)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::form_from_schema;
    use serde_json::json;

    fn form_ask() -> ElicitationAsk {
        ElicitationAsk::Form {
            message: "Deploy settings".into(),
            form: form_from_schema(&json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 2},
                    "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
                    "region": {"type": "string", "oneOf": [
                        {"const": "eu", "title": "Europe"}, {"const": "us", "title": "America"}]},
                    "confirm": {"type": "boolean"}
                },
                "required": ["name", "region"]
            }))
            .unwrap(),
        }
    }

    #[test]
    fn a_form_is_asked_field_by_field_and_checked_before_it_is_sent() {
        let typed = "x\nweb\n9\n3\n2\ny\nsend\n";
        let mut out = Vec::new();
        let reply = ask("deploy", &form_ask(), &mut typed.as_bytes(), &mut out).unwrap();
        assert_eq!(
            reply,
            ElicitationReply::Accept(
                json!({"name": "web", "replicas": 3, "region": "us", "confirm": true})
                    .as_object()
                    .unwrap()
                    .clone()
            )
        );
        let shown = String::from_utf8(out).unwrap();
        assert!(
            shown.contains(
                "MCP server 'deploy' asks you for input (the server asks, not the model)"
            ),
            "{shown}"
        );
        assert!(shown.contains("at least 2 characters (1 now)"), "{shown}");
        assert!(
            shown.contains("replicas (whole number, 1–5) [2]: "),
            "{shown}"
        );
        assert!(shown.contains("at most 5"), "{shown}");
        assert!(shown.contains("    2. America"), "{shown}");
    }

    #[test]
    fn end_of_input_declines_and_scripts_get_defaults_or_a_decline() {
        let mut out = Vec::new();
        let reply = ask("deploy", &form_ask(), &mut "web\n".as_bytes(), &mut out).unwrap();
        assert_eq!(reply, ElicitationReply::Decline);
        let (reply, line) = unattended("deploy", &form_ask(), ElicitationChoice::AcceptDefaults);
        assert_eq!(reply, ElicitationReply::Decline);
        assert!(
            line.contains("the defaults do not fill (name, region)"),
            "{line}"
        );
        let defaults_only = ElicitationAsk::Form {
            message: "m".into(),
            form: form_from_schema(&json!({"type": "object", "properties": {
                "n": {"type": "integer", "default": 30}}}))
            .unwrap(),
        };
        let (reply, _) = unattended("s", &defaults_only, ElicitationChoice::AcceptDefaults);
        assert_eq!(
            reply,
            ElicitationReply::Accept(json!({"n": 30}).as_object().unwrap().clone())
        );
        let (reply, _) = unattended("s", &defaults_only, ElicitationChoice::Decline);
        assert_eq!(reply, ElicitationReply::Decline);
    }
}
