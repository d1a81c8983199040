//! `/model NAME`: the following requests go to another model of the same provider (its
//! endpoint, key and retries kept). The session log records the switch (`model_switched`),
//! so a resumed session goes on with the model it last used; the context gauge follows the
//! new model's window.

use std::sync::Arc;

use super::context::ContextMeter;
use crate::model::ModelProvider;

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
