//! An MCP server asks to use the host's model (`sampling/createMessage`): the card shows
//! the server, its system prompt, the messages, the token limit and its model
//! preferences. Approving sends exactly that to the session's model; the reply goes back
//! to the server only.

use super::tool_call::run_choices;
use super::{Card, Choice, Fact, Kind, Tone};
use crate::Role;
use crate::ids::ServerName;
use crate::{PersonAnswer, Verdict};
use crate::{SamplingRequest, SamplingTurn};

#[derive(Debug, Clone)]
pub struct Sampling {
    pub server: ServerName,
    pub request: SamplingRequest,
    /// The session's model (who would answer).
    pub model: String,
    /// toolgate's cap on one request's tokens.
    pub cap: u32,
    /// The verdict that asked (its rule and where the rule came from).
    pub verdict: Verdict,
}

impl Sampling {
    fn preferences(&self) -> String {
        let r = &self.request;
        let mut parts = Vec::new();
        if !r.model_hints.is_empty() {
            parts.push(format!("hints {}", r.model_hints.join(", ")));
        }
        for (name, value) in [
            ("cost", r.cost_priority),
            ("speed", r.speed_priority),
            ("intelligence", r.intelligence_priority),
        ] {
            if let Some(v) = value {
                parts.push(format!("{name} {v:.2}"));
            }
        }
        if let Some(t) = r.temperature {
            parts.push(format!("temperature {t:.2}"));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(", ")
        }
    }
}

fn transcript(turns: &[SamplingTurn]) -> String {
    turns
        .iter()
        .map(|t| {
            let who = match t.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("[{who}]\n{}", t.text)
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

impl Kind for Sampling {
    type Answer = PersonAnswer;
    const NAME: &'static str = "sampling";

    fn card(&self) -> Card {
        let r = &self.request;
        let mut facts = vec![
            Fact::new(
                "max tokens",
                format!("{} (toolgate's cap: {})", r.max_tokens, self.cap),
                Tone::Plain,
            ),
            Fact::new("model preferences", self.preferences(), Tone::Claim),
            Fact::new(
                "rule",
                format!("{} ({})", self.verdict.rule, self.verdict.source),
                Tone::Dim,
            ),
        ];
        if !r.stop_sequences.is_empty() {
            facts.push(Fact::new(
                "stop sequences",
                r.stop_sequences.join(" · "),
                Tone::Dim,
            ));
        }
        if let Some(context) = &r.include_context {
            facts.push(Fact::new(
                "include context",
                format!("{context} asked; toolgate adds no other context"),
                Tone::Dim,
            ));
        }
        let system = r.system_prompt.as_deref().unwrap_or("(none)");
        Card {
            title: "Sampling request".into(),
            asker: format!(
                "MCP server '{}' asks to use your model ({})",
                self.server, self.model
            ),
            effect: format!(
                "The messages below go to {} with the server's system prompt; its reply \
                 (at most {} tokens) goes back to '{}' only. The server's text authorizes nothing.",
                self.model,
                r.max_tokens.min(self.cap),
                self.server
            ),
            facts,
            details_title: "system prompt and messages".into(),
            details: format!("[system prompt]\n{system}\n\n{}", transcript(&r.messages)),
        }
    }

    fn choices(&self) -> Vec<Choice<PersonAnswer>> {
        run_choices("Allow once", "Allow for this session", None, false)
    }

    fn safe_default(&self) -> PersonAnswer {
        PersonAnswer::Deny
    }

    fn outcome_line(&self, answer: &PersonAnswer) -> String {
        let server = &self.server;
        match answer {
            PersonAnswer::AllowOnce | PersonAnswer::AllowLimited(_) => {
                format!("sampling by '{server}' allowed once")
            }
            PersonAnswer::AllowSession | PersonAnswer::AllowAlways => {
                format!("sampling by '{server}' allowed for this session")
            }
            PersonAnswer::Deny => format!("sampling by '{server}' denied"),
            PersonAnswer::DenyWithNote(note) => format!("sampling by '{server}' denied: {note}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RESERVED_KEYS;
    use super::*;
    use crate::{Decision, RuleSource};

    fn request() -> Sampling {
        Sampling {
            server: "notes".into(),
            request: SamplingRequest {
                messages: vec![
                    SamplingTurn {
                        role: Role::User,
                        text: "Summarize this".into(),
                    },
                    SamplingTurn {
                        role: Role::Assistant,
                        text: "Which part?".into(),
                    },
                ],
                max_tokens: 9000,
                speed_priority: Some(0.5),
                stop_sequences: vec!["END".into()],
                ..Default::default()
            },
            model: "anthropic claude-test".into(),
            cap: 4096,
            verdict: Verdict {
                decision: Decision::Ask {
                    why: "no rule".into(),
                },
                rule: "default: sampling asks".into(),
                source: RuleSource::Default,
            },
        }
    }

    #[test]
    fn the_card_shows_everything_the_model_would_get_and_deny_is_safe() {
        let sampling = request();
        let card = sampling.card();
        assert_eq!(
            card.asker,
            "MCP server 'notes' asks to use your model (anthropic claude-test)"
        );
        // The reply is bounded by the cap, whatever the server asked.
        assert!(
            card.effect.contains("at most 4096 tokens"),
            "{}",
            card.effect
        );
        assert!(card.details.starts_with(
            "[system prompt]\n(none)\n\n[user]\nSummarize this\n\n[assistant]\nWhich part?"
        ));
        assert_eq!(
            card.fact("max tokens").as_deref(),
            Some("9000 (toolgate's cap: 4096)")
        );
        assert_eq!(
            card.fact("model preferences").as_deref(),
            Some("speed 0.50")
        );
        assert_eq!(card.fact("stop sequences").as_deref(), Some("END"));
        let choices = sampling.choices();
        let keys: Vec<char> = choices.iter().map(|c| c.key).collect();
        assert_eq!(keys, ['y', 'a', 'n']);
        assert!(keys.iter().all(|k| !RESERVED_KEYS.contains(k)));
        assert_eq!(choices.iter().filter(|c| c.safe).count(), 1);
        assert!(choices[2].safe);
        assert_eq!(sampling.safe_default(), PersonAnswer::Deny);
        assert_eq!(
            sampling.outcome_line(&PersonAnswer::AllowSession),
            "sampling by 'notes' allowed for this session"
        );
    }
}
