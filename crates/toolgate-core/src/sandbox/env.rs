//! The environment bash and stdio MCP servers start with: toolgate's own, without anything
//! named like a secret. A tool that prints its environment (`env`, server-everything's
//! `get-env`) must not hand the model's provider keys back to the model, or to a server.

use std::ffi::OsString;

/// Parts of a variable name that mark it as a secret (matched case-insensitively).
pub const SECRET_WORDS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"];

/// Model providers' keys: removed even when `env_passthrough` names them, because the
/// agent's own key is never a tool's business.
pub const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
];

/// Whether a variable of this name is kept from tools unless passed through.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|word| upper.contains(word))
}

fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEYS
        .iter()
        .any(|key| key.eq_ignore_ascii_case(name))
}

/// `vars` without secrets; names in `passthrough` (exact, case-sensitive as the
/// environment is) are kept unless they are a provider's key.
pub fn filter(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    passthrough: &[String],
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            if is_provider_key(&name) {
                return false;
            }
            !is_secret_name(&name) || passthrough.iter().any(|p| *p == name)
        })
        .collect()
}

/// This process's environment as tools get it. Also hides toolgate's own initial
/// environment from them (see [`hide_own_environment`]).
pub fn tool_environment(passthrough: &[String]) -> Vec<(OsString, OsString)> {
    hide_own_environment();
    filter(std::env::vars_os(), passthrough)
}

/// Makes toolgate non-dumpable, once. `/proc/<toolgate>/environ` still holds the keys
/// toolgate was started with, and any process of the same user may read it — a child
/// included, Landlock or not (the kernel checks that read like a ptrace "read", which a
/// same-user process passes). A non-dumpable process's /proc files belong to root and
/// need CAP_SYS_PTRACE, which sandboxed children do not keep. Children are unaffected:
/// exec makes them dumpable again.
pub fn hide_own_environment() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        // SAFETY: PR_SET_DUMPABLE takes plain integers and only changes a flag of this
        // process.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect()
    }

    fn names(filtered: Vec<(OsString, OsString)>) -> Vec<String> {
        filtered
            .into_iter()
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn secrets_are_removed_in_any_case_and_the_rest_kept() {
        let kept = names(filter(
            vars(&[
                "PATH",
                "HOME",
                "ANTHROPIC_API_KEY",
                "OPENAI_API_KEY",
                "github_token",
                "DB_Password",
                "AWS_SECRET_ACCESS_KEY",
                "GOOGLE_APPLICATION_CREDENTIALS",
                "LANG",
            ]),
            &[],
        ));
        assert_eq!(kept, ["PATH", "HOME", "LANG"]);
    }

    #[test]
    fn passthrough_lets_named_secrets_through_but_never_provider_keys() {
        let kept = names(filter(
            vars(&["NPM_TOKEN", "ANTHROPIC_API_KEY", "OTHER_TOKEN", "PATH"]),
            &["NPM_TOKEN".into(), "ANTHROPIC_API_KEY".into()],
        ));
        assert_eq!(kept, ["NPM_TOKEN", "PATH"]);
    }
}
