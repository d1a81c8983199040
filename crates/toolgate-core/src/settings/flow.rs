//! `[flow]` (decisions 0098 and 0102): the flow rule, which servers' results count as the
//! person's own data, and what the managed policy makes of it.
//!
//! ```toml
//! [flow]
//! enabled = true                 # the flow rule; read at start
//! trusted = ["notes", "bank"]    # servers whose results are your own data, not untrusted content
//! ```
//!
//! User and project files: a later file's `enabled` wins, `trusted` adds up. A managed file
//! may set `enabled = true` (no other file can turn the rule off), `trusted` (added), and
//! `on_untrusted = "deny"` (a call the rule would ask about is refused instead).

use super::Diagnostic;

/// The flow settings of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSettings {
    /// Whether the flow rule is on.
    pub enabled: bool,
    /// Servers whose results are the person's own data (besides entries that say
    /// `"trust": "trusted"`).
    pub trusted: Vec<String>,
    /// The managed policy's `on_untrusted = "deny"`: refuse instead of asking.
    pub deny: bool,
}

impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings {
            enabled: true,
            trusted: Vec::new(),
            deny: false,
        }
    }
}

impl FlowSettings {
    /// Whether results of `server` are the person's own data by these settings.
    pub fn trusts(&self, server: &str) -> bool {
        self.trusted.iter().any(|name| name == server)
    }
}

/// `[flow]` of the managed files, merged: a switch set in any file is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedFlow {
    /// `enabled = true` in a managed file: the rule stays on whatever the others say.
    pub enforced: bool,
    pub trusted: Vec<String>,
    /// `on_untrusted = "deny"`.
    pub deny: bool,
}

impl ManagedFlow {
    /// Reads one managed file's `[flow]` table.
    pub fn add_table(
        &mut self,
        table: &dyn toml_edit::TableLike,
        text: &str,
        file: &str,
    ) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        let diag = |item: &toml_edit::Item, message: String| {
            Diagnostic::at(text, file, super::toml::offset(item), message)
        };
        for (key, item) in table.iter() {
            match key {
                "enabled" => match item.as_bool() {
                    Some(on) => self.enforced |= on,
                    None => {
                        diagnostics.push(diag(item, "expected flow.enabled = true or false".into()))
                    }
                },
                "trusted" => diagnostics.extend(read_names(item, &mut self.trusted, &diag)),
                "on_untrusted" => match item.as_str() {
                    Some("deny") => self.deny = true,
                    Some("ask") => {}
                    _ => diagnostics.push(diag(
                        item,
                        "expected flow.on_untrusted = \"ask\" or \"deny\"".into(),
                    )),
                },
                other => diagnostics.push(diag(
                    item,
                    format!("unknown key flow.{other} (expected enabled, trusted or on_untrusted)"),
                )),
            }
        }
        diagnostics
    }

    /// Puts the managed choices over the other layers' settings; one line per change.
    pub fn apply(&self, settings: &mut FlowSettings) -> Vec<String> {
        let mut overrides = Vec::new();
        if self.enforced && !settings.enabled {
            settings.enabled = true;
            overrides.push(
                "flow.enabled = false ignored: the managed policy keeps the flow rule on".into(),
            );
        }
        for name in &self.trusted {
            if !settings.trusts(name) {
                settings.trusted.push(name.clone());
            }
        }
        settings.deny |= self.deny;
        overrides
    }
}

/// Applies one user or project file's `[flow]` over `settings`.
pub fn apply_layer(settings: &mut FlowSettings, text: &str, file: &str) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Not valid TOML is reported by the sandbox settings already.
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return diagnostics;
    };
    let Some(table) = doc.get("flow").and_then(|t| t.as_table_like()) else {
        return diagnostics;
    };
    let diag = |item: &toml_edit::Item, message: String| {
        Diagnostic::at(text, file, super::toml::offset(item), message)
    };
    for (key, item) in table.iter() {
        match key {
            "enabled" => diagnostics.extend(super::toml::set(
                &mut settings.enabled,
                item.as_bool(),
                |kept| {
                    diag(
                        item,
                        format!("expected flow.enabled = true or false; keeping {kept}"),
                    )
                },
            )),
            "trusted" => diagnostics.extend(read_names(item, &mut settings.trusted, &diag)),
            "on_untrusted" => diagnostics.push(diag(
                item,
                "flow.on_untrusted is read from the managed file only; ignored".into(),
            )),
            other => diagnostics.push(diag(
                item,
                format!("unknown key flow.{other} (expected enabled or trusted); ignored"),
            )),
        }
    }
    diagnostics
}

/// A list of server names; a bad entry is named and skipped.
fn read_names(
    item: &toml_edit::Item,
    names: &mut Vec<String>,
    diag: &dyn Fn(&toml_edit::Item, String) -> Diagnostic,
) -> Vec<Diagnostic> {
    let Some(array) = item.as_array() else {
        return vec![diag(item, "expected flow.trusted = [\"server\", …]".into())];
    };
    let mut diagnostics = Vec::new();
    for value in array.iter() {
        match value.as_str() {
            Some(name) if !name.trim().is_empty() => {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
            _ => diagnostics.push(diag(
                item,
                "flow.trusted: expected server names (strings); an entry was skipped".into(),
            )),
        }
    }
    diagnostics
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flow_rule_is_on_unless_a_file_turns_it_off() {
        let mut settings = FlowSettings::default();
        assert!(settings.enabled);
        assert!(apply_layer(&mut settings, "[flow]\nenabled = false\n", "a.toml").is_empty());
        assert!(!settings.enabled);
        let shown = crate::settings::shown(&apply_layer(
            &mut settings,
            "[flow]\nenabled = \"no\"\n",
            "b.toml",
        ));
        assert_eq!(
            shown,
            ["b.toml:2:11: expected flow.enabled = true or false; keeping false"]
        );
    }

    #[test]
    fn files_layer_and_the_managed_file_has_the_last_word() {
        let mut settings = FlowSettings::default();
        assert!(
            apply_layer(
                &mut settings,
                "[flow]\nenabled = false\ntrusted = [\"notes\"]\n",
                "u.toml"
            )
            .is_empty()
        );
        assert!(
            apply_layer(
                &mut settings,
                "[flow]\ntrusted = [\"bank\", \"notes\"]\n",
                "p.toml"
            )
            .is_empty()
        );
        assert!(!settings.enabled);
        assert_eq!(settings.trusted, ["notes", "bank"]);
        assert!(settings.trusts("bank") && !settings.trusts("mail"));
        let shown = crate::settings::shown(&apply_layer(
            &mut settings,
            "[flow]\non_untrusted = \"deny\"\nenable = true\n",
            "p.toml",
        ));
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert!(
            shown[0]
                .starts_with("p.toml:2:16: flow.on_untrusted is read from the managed file only"),
            "{shown:?}"
        );
        assert!(!settings.deny);

        let mut managed = ManagedFlow::default();
        let text = "[flow]\nenabled = true\ntrusted = [\"crm\"]\non_untrusted = \"deny\"\n";
        let doc = toml_edit::Document::parse(text).unwrap();
        let table = doc.get("flow").and_then(|t| t.as_table_like()).unwrap();
        assert!(managed.add_table(table, text, "m.toml").is_empty());
        let overrides = managed.apply(&mut settings);
        assert!(settings.enabled && settings.deny);
        assert!(settings.trusts("crm"));
        assert_eq!(overrides.len(), 1, "{overrides:?}");
    }
}
