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

/// The variables that point a proxied process's tools at toolgate's proxy on
/// 127.0.0.1:`port`: HTTP(S) for most clients, SOCKS5 with remote name resolution
/// (`socks5h`, since the process has no DNS) for those that take `ALL_PROXY`, no exceptions
/// (`NO_PROXY` empty: a direct connection could not leave anyway), and Node's switch to
/// honour them.
pub fn proxy_variables(port: u16) -> Vec<(OsString, OsString)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let pairs: [(&str, &str); 9] = [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("http_proxy", &http),
        ("https_proxy", &http),
        ("ALL_PROXY", &socks),
        ("all_proxy", &socks),
        ("NO_PROXY", ""),
        ("no_proxy", ""),
        ("NODE_USE_ENV_PROXY", "1"),
    ];
    pairs
        .into_iter()
        .map(|(name, value)| (OsString::from(name), OsString::from(value)))
        .collect()
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
    fn proxy_variables_point_every_client_at_the_port() {
        let vars: Vec<(String, String)> = proxy_variables(3128)
            .into_iter()
            .map(|(n, v)| (n.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        let get = |name: &str| {
            vars.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("HTTPS_PROXY"), Some("http://127.0.0.1:3128"));
        assert_eq!(get("http_proxy"), Some("http://127.0.0.1:3128"));
        assert_eq!(get("all_proxy"), Some("socks5h://127.0.0.1:3128"));
        assert_eq!(get("NO_PROXY"), Some(""));
        assert_eq!(get("NODE_USE_ENV_PROXY"), Some("1"));
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
