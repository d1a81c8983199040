//! `/model NAME`: the following requests go to another model of the same provider (its
//! endpoint, key and retries kept). The session log records the switch (`model_switched`),
//! so a resumed session goes on with the model it last used; the context gauge follows the
//! new model's window.

use std::sync::Arc;

use super::context::ContextMeter;
use super::conversation::Conversation;
use crate::model::ModelProvider;
use crate::protocol::AgentEvent;
use crate::protocol::Event;

/// Switches `model` to `name` and the meter to its window: the new label, or why not
/// (nothing is changed then).
pub(super) fn switch(
    model: &mut Arc<dyn ModelProvider>,
    meter: &mut ContextMeter,
    name: &str,
) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!(
            "/model: '{name}' is not a model name (one word, e.g. claude-opus-4-1)"
        ));
    }
    let Some(next) = model.with_model(name) else {
        return Err(format!(
            "/model: {} has no other models to switch to; the model stays as it is",
            model.label()
        ));
    };
    *model = Arc::from(next);
    meter.switch_window(model.context_window());
    Ok(model.label())
}

/// A command file's `model:` for its turn: switches and gives back the model to return to
/// after the turn (None when nothing was switched; a model the provider cannot switch to
/// is said, and the turn runs on the current one).
pub(super) async fn for_turn(
    model: &mut Arc<dyn ModelProvider>,
    meter: &mut ContextMeter,
    conv: &Conversation,
    wanted: Option<String>,
) -> Option<Arc<dyn ModelProvider>> {
    let wanted = wanted?;
    let before = model.clone();
    match switch(model, meter, &wanted) {
        Ok(label) => {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: format!(
                    "This command runs on {label} (its model:); the model after it is {}",
                    before.label()
                ),
            }))
            .await;
            Some(before)
        }
        Err(e) => {
            conv.emit(AgentEvent::Fact(Event::Notice {
                message: format!("{e} (asked by the command's model:)"),
            }))
            .await;
            None
        }
    }
}

/// Back to the model before a command file's turn.
pub(super) fn back(
    model: &mut Arc<dyn ModelProvider>,
    meter: &mut ContextMeter,
    before: Option<Arc<dyn ModelProvider>>,
) {
    if let Some(before) = before {
        *model = before;
        meter.switch_window(model.context_window());
    }
}
