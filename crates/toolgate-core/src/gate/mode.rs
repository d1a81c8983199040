//! The permission mode in force, shared between the gate (which decides with it), the
//! command reader (Shift+Tab changes it beside a running turn) and `exit_plan_mode`.
//!
//! Every change goes through [`ModeSwitch::change`], the one place a mode change is
//! validated: a mode the session may not enter ([`ModeLimits`], e.g. a managed policy that
//! disables auto mode) is refused there, whoever asked for it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::protocol::{ModeCause, ModeChange, PermissionMode};
use crate::sandbox::BashWrites;

/// What bash may write in `mode`: plan mode's promise is no writes, which the kernel keeps
/// (a read-only sandbox); every other mode writes what `[sandbox]` allows.
pub fn bash_writes(mode: PermissionMode) -> BashWrites {
    match mode {
        PermissionMode::Plan => BashWrites::Nothing,
        PermissionMode::Default
        | PermissionMode::AcceptEdits
        | PermissionMode::Ask
        | PermissionMode::Auto => BashWrites::AsConfigured,
    }
}

/// Modes this session may not enter, each with the reason the person is told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModeLimits {
    pub disabled: BTreeMap<PermissionMode, String>,
}

/// Why a mode change was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot switch to {mode} mode: {why}")]
pub struct ModeRefused {
    pub mode: PermissionMode,
    pub why: String,
}

#[derive(Debug, Default)]
struct State {
    mode: PermissionMode,
    limits: ModeLimits,
}

/// A handle on the session's mode; clones share it.
#[derive(Debug, Clone, Default)]
pub struct ModeSwitch {
    state: Arc<Mutex<State>>,
}

impl ModeSwitch {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn current(&self) -> PermissionMode {
        self.with(|state| state.mode)
    }

    /// Sets the limits; a mode in force that they disable is left at once (for `default`).
    pub fn set_limits(&self, limits: ModeLimits) -> Option<ModeChange> {
        self.with(|state| {
            state.limits = limits;
            let from = state.mode;
            state.limits.disabled.contains_key(&from).then(|| {
                state.mode = PermissionMode::Default;
                ModeChange {
                    mode: PermissionMode::Default,
                    from,
                    cause: ModeCause::Start,
                }
            })
        })
    }

    /// The one validation point: switches to `mode` unless the limits disable it.
    pub fn change(
        &self,
        mode: PermissionMode,
        cause: ModeCause,
    ) -> Result<ModeChange, ModeRefused> {
        self.with(|state| Self::change_in(state, mode, cause))
    }

    fn change_in(
        state: &mut State,
        mode: PermissionMode,
        cause: ModeCause,
    ) -> Result<ModeChange, ModeRefused> {
        if let Some(why) = state.limits.disabled.get(&mode) {
            return Err(ModeRefused {
                mode,
                why: why.clone(),
            });
        }
        let from = std::mem::replace(&mut state.mode, mode);
        Ok(ModeChange { mode, from, cause })
    }

    /// Shift+Tab: the next mode in the cycle the session may enter (disabled ones are
    /// skipped, each refused by [`change`](Self::change)'s rule).
    pub fn cycle(&self) -> Result<ModeChange, ModeRefused> {
        self.with(|state| {
            let mut next = state.mode.next();
            let mut last_refusal = None;
            while next != state.mode {
                match Self::change_in(state, next, ModeCause::Person) {
                    Ok(change) => return Ok(change),
                    Err(refused) => last_refusal = Some(refused),
                }
                next = next.next();
            }
            Err(last_refusal.unwrap_or(ModeRefused {
                mode: next,
                why: "no other mode is allowed".into(),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_mode_is_refused_and_skipped_by_the_cycle() {
        let switch = ModeSwitch::default();
        switch.set_limits(ModeLimits {
            disabled: [(
                PermissionMode::Auto,
                "the managed policy disables it".into(),
            )]
            .into(),
        });
        let refused = switch
            .change(PermissionMode::Auto, ModeCause::Start)
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            "cannot switch to auto mode: the managed policy disables it"
        );
        switch
            .change(PermissionMode::Ask, ModeCause::Person)
            .unwrap();
        let change = switch.cycle().unwrap();
        assert_eq!(
            (change.from, change.mode),
            (PermissionMode::Ask, PermissionMode::Default)
        );
    }
}
