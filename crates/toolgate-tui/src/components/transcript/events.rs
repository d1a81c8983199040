//! How agent events write into the conversation: messages as they stream, tool cards and
//! their progress, who decided a call, the end of a turn, sampling, errors and notices.
//! Every string from the agent, a server or the model is cleaned here, once.

use super::state::{EntryKind, ToolCard, ToolState, Transcript, summarize_args};
use crate::protocol::AgentEvent;
use crate::protocol::{AuditRecord, Decider, Permit, PersonAnswer, RuleSource};
use crate::protocol::{Event, Live, ToolCallStart};
use crate::protocol::{SamplingOutcome, SamplingReport};
use crate::sanitize::for_terminal;

/// Writes a conversation event into the transcript; any other event is handed back.
/// `turn_running`: the composer already showed what the person sent.
pub fn on_event(
    transcript: &mut Transcript,
    event: AgentEvent,
    turn_running: bool,
) -> Option<AgentEvent> {
    match event {
        AgentEvent::Fact(Event::User { text }) => {
            let text = for_terminal(&text);
            // The composer already showed what was sent; the echo only adds replayed ones.
            let echoed = turn_running && transcript.last_user_text() == Some(text.as_str());
            if !echoed {
                transcript.push(EntryKind::User(text));
            }
        }
        AgentEvent::Live(Live::TextDelta(delta)) => transcript.append_text(&for_terminal(&delta)),
        AgentEvent::Live(Live::ThinkingDelta(delta)) => {
            transcript.append_thinking(&for_terminal(&delta))
        }
        AgentEvent::Live(Live::AssistantMessageDone) => transcript.close_stream(),
        // The cut text stays where it is, closed, with the mark right under it.
        AgentEvent::Fact(Event::ReplyCut(cut)) => {
            transcript.close_stream();
            transcript.push(EntryKind::Notice(cut.mark().to_string()));
        }
        AgentEvent::Fact(Event::ToolStarted(ToolCallStart {
            call_id,
            name,
            server,
            input,
        })) => transcript.push(EntryKind::Tool(ToolCard {
            call_id: call_id.into_string(),
            name: for_terminal(&name),
            server: server.map(|s| for_terminal(&s)),
            args_summary: summarize_args(&input),
            images: Vec::new(),
            state: ToolState::Running {
                progress: None,
                message: None,
            },
            decided: None,
            output: String::new(),
        })),
        // A connection's decision shows when it was refused or the person decided it; the
        // ones rules and grants let through are listed on the bash call's card instead.
        AgentEvent::Fact(Event::NetworkDecided(line)) => {
            let line_text = for_terminal(&line.summary());
            if !line.allowed() {
                transcript.push(EntryKind::Error(line_text));
            } else if matches!(line.record.decider, Decider::Person { .. }) {
                transcript.push(EntryKind::Notice(line_text));
            }
        }
        AgentEvent::Fact(Event::NetworkClosed(_)) => {}
        AgentEvent::Fact(Event::ToolProgress {
            call_id,
            progress,
            total,
            message,
        }) => {
            transcript.update_tool(&call_id, |card| {
                card.state = ToolState::Running {
                    progress: Some((progress, total)),
                    message: message.map(|m| for_terminal(&m)),
                }
            });
        }
        AgentEvent::Fact(Event::ToolImages { call_id, images }) => {
            // Media types come from the server: cleaned like any server text.
            let images: Vec<_> = images
                .into_iter()
                .map(|mut image| {
                    image.media_type = for_terminal(&image.media_type);
                    image
                })
                .collect();
            transcript.update_tool(&call_id, |card| card.images = images.clone());
        }
        AgentEvent::Fact(Event::ToolFinished {
            call_id,
            outcome,
            output,
            ..
        }) => {
            let output = for_terminal(&output);
            let found = transcript.update_tool(&call_id, |card| {
                card.state = ToolState::Finished(outcome);
                card.output = output.clone();
            });
            if !found {
                transcript.push(EntryKind::Tool(ToolCard {
                    call_id: call_id.into_string(),
                    name: "tool".into(),
                    server: None,
                    args_summary: String::new(),
                    state: ToolState::Finished(outcome),
                    output,
                    decided: None,
                    images: Vec::new(),
                }));
            }
        }
        AgentEvent::Fact(Event::Error { message: text }) => {
            transcript.push(EntryKind::Error(for_terminal(&text)))
        }
        AgentEvent::Fact(Event::Notice { message: text }) => {
            transcript.push(EntryKind::Notice(for_terminal(&text)))
        }
        other => return Some(other),
    }
    None
}

/// The card of the call says who let it run or stopped it.
pub fn decided(transcript: &mut Transcript, call_id: &str, record: &AuditRecord) {
    let label = for_terminal(&decision_label(record));
    transcript.update_tool(call_id, |card| card.decided = Some(label));
}

/// The turn ended: the stream closes; a cancelled turn's running cards say so.
pub fn turn_finished(transcript: &mut Transcript, cancelled: bool) {
    transcript.close_stream();
    if cancelled {
        transcript.cancel_running_tools();
        transcript.push(EntryKind::Notice("turn cancelled".into()));
    }
}

/// One line for a server's sampling request: a notice when answered, else an error.
pub fn sampling(transcript: &mut Transcript, report: &SamplingReport) {
    let line = for_terminal(&report.summary());
    match report.outcome {
        SamplingOutcome::Answered { .. } => transcript.push(EntryKind::Notice(line)),
        _ => transcript.push(EntryKind::Error(line)),
    }
}

/// What a tool card says about its permission decision.
fn decision_label(record: &AuditRecord) -> String {
    let verb = match record.decision {
        Permit::Allow => "allowed",
        Permit::Deny => "denied",
    };
    match &record.decider {
        Decider::Person { answer, .. } => match answer {
            PersonAnswer::AllowOnce => "you answered: allow once".into(),
            PersonAnswer::AllowSession => "you answered: allow for this session".into(),
            PersonAnswer::AllowAlways => "you answered: always allow".into(),
            PersonAnswer::AllowLimited(limit) => {
                format!("you answered: allow {}", limit.describe())
            }
            PersonAnswer::Deny => "you answered: deny".into(),
            PersonAnswer::DenyWithNote(note) => format!("you answered: deny ({note})"),
        },
        Decider::SessionGrant { .. } => format!("{verb} for this session (your earlier answer)"),
        Decider::Mode { mode } => format!("{verb} by {mode} mode"),
        Decider::LimitedGrant { limit, left, .. } => format!(
            "{verb} {} (your earlier answer; {})",
            limit.describe(),
            left.describe()
        ),
        Decider::Rule { rule, source } => {
            let place = match source {
                RuleSource::UserConfig(_) => "user config",
                RuleSource::ProjectConfig(_) => "project config",
                RuleSource::Flag => "command-line flag",
                RuleSource::Managed(_) => "managed policy",
                RuleSource::Default | RuleSource::SessionGrant | RuleSource::Mode(_) => "default",
            };
            format!("{verb} by rule {rule} ({place})")
        }
        // Defaults read "default: built-in" and the like.
        Decider::Default { rule } => format!("{verb} by {rule}"),
        Decider::Expired { .. } => "denied: nobody answered before the deadline".into(),
        Decider::Dismissed { .. } => "denied: the question was dismissed".into(),
        Decider::Headless { .. } => "denied: nobody could be asked (non-interactive)".into(),
        Decider::Hook { hook, .. } => format!("{verb} by the {hook}"),
    }
}
