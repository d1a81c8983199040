//! Choosing the provider: `--provider`, then the config file, then whichever API key is
//! set (Anthropic first), else the scripted demo. Environment values arrive through
//! [`ProviderOptions`] so that tests never touch the process environment.

use super::anthropic::{self, AnthropicConfig, AnthropicProvider};
use super::http::is_local_url;
use super::openai::{self, OpenAiConfig, OpenAiProvider};
use super::retry::RetryPolicy;
use super::scripted::{DEFAULT_SCENARIO, Scenario, ScriptedProvider};
use super::{ModelError, ModelProvider};
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    Anthropic,
    OpenAi,
    Scripted,
}

impl FromStr for ProviderKind {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Ok(ProviderKind::Anthropic),
            "openai" | "openai-compatible" | "ollama" | "vllm" | "llamacpp" | "llama.cpp" => {
                Ok(ProviderKind::OpenAi)
            }
            "scripted" | "demo" => Ok(ProviderKind::Scripted),
            other => Err(ModelError::Config(format!(
                "unknown provider '{other}' (expected anthropic, openai or scripted)"
            ))),
        }
    }
}

/// Everything selection needs. `from_env()` fills the environment part; the caller adds
/// the command-line flag and the config file's values.
#[derive(Debug, Clone, Default)]
pub struct ProviderOptions {
    /// `--provider` on the command line.
    pub provider_flag: Option<String>,
    /// `provider` from the config file.
    pub config_provider: Option<String>,
    /// `--model` on the command line or `MODEL_ID`.
    pub model: Option<String>,
    /// `model` from the config file.
    pub config_model: Option<String>,
    pub anthropic_api_key: Option<String>,
    pub anthropic_base_url: Option<String>,
    pub openai_api_key: Option<String>,
    pub openai_base_url: Option<String>,
    /// `TOOLGATE_OPENAI_IMAGES`: `false` (or `0`, `no`, `off`) for an OpenAI-compatible
    /// endpoint that takes no image parts. Unset: images are sent until a 400 names them.
    pub openai_images: Option<bool>,
    /// Scripted provider: an embedded scenario name or a file path (default `deploy_demo`).
    pub scenario: Option<String>,
    pub retry: RetryPolicy,
    /// `[model] thinking`: the Anthropic provider's thinking budget (0: off).
    pub thinking_budget: u32,
}

fn non_empty(value: Option<String>) -> Option<String> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

impl ProviderOptions {
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like `from_env`, reading variables through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        ProviderOptions {
            model: non_empty(lookup("MODEL_ID")),
            anthropic_api_key: non_empty(lookup("ANTHROPIC_API_KEY")),
            anthropic_base_url: non_empty(lookup("ANTHROPIC_BASE_URL")),
            openai_api_key: non_empty(lookup("OPENAI_API_KEY")),
            openai_base_url: non_empty(lookup("OPENAI_BASE_URL")),
            openai_images: non_empty(lookup("TOOLGATE_OPENAI_IMAGES")).map(|v| {
                !matches!(
                    v.to_ascii_lowercase().as_str(),
                    "false" | "0" | "no" | "off"
                )
            }),
            // The scripted provider's scenario (an embedded name or a file), so tests and
            // demos can script `toolgate -p` end to end.
            scenario: non_empty(lookup("TOOLGATE_SCENARIO")),
            ..Default::default()
        }
    }

    /// Which provider these options pick, before building it.
    pub fn kind(&self) -> Result<ProviderKind, ModelError> {
        if let Some(name) = non_empty(self.provider_flag.clone()) {
            return name.parse();
        }
        if let Some(name) = non_empty(self.config_provider.clone()) {
            return name.parse();
        }
        Ok(if self.anthropic_api_key.is_some() {
            ProviderKind::Anthropic
        } else if self.openai_api_key.is_some() {
            ProviderKind::OpenAi
        } else {
            ProviderKind::Scripted
        })
    }

    fn model_or(&self, default: &str) -> String {
        non_empty(self.model.clone())
            .or_else(|| non_empty(self.config_model.clone()))
            .unwrap_or_else(|| default.to_string())
    }
}

/// A key is required unless the server runs on this machine or the local network
/// (Ollama, llama.cpp server and vLLM need none).
fn api_key(
    key: &Option<String>,
    base_url: &str,
    variable: &str,
    provider: &str,
) -> Result<String, ModelError> {
    match non_empty(key.clone()) {
        Some(key) => Ok(key),
        None if is_local_url(base_url) => Ok(String::new()),
        None => Err(ModelError::Config(format!(
            "the {provider} provider needs {variable} (or a local base URL that needs no key)"
        ))),
    }
}

pub fn select(opts: &ProviderOptions) -> Result<Box<dyn ModelProvider>, ModelError> {
    match opts.kind()? {
        ProviderKind::Anthropic => {
            let base_url = non_empty(opts.anthropic_base_url.clone())
                .unwrap_or_else(|| anthropic::DEFAULT_BASE_URL.to_string());
            let api_key = api_key(
                &opts.anthropic_api_key,
                &base_url,
                "ANTHROPIC_API_KEY",
                "anthropic",
            )?;
            Ok(Box::new(AnthropicProvider::new(AnthropicConfig {
                api_key,
                base_url,
                model: opts.model_or(anthropic::DEFAULT_MODEL),
                retry: opts.retry,
                thinking_budget: opts.thinking_budget,
            })?))
        }
        ProviderKind::OpenAi => {
            let base_url = non_empty(opts.openai_base_url.clone())
                .unwrap_or_else(|| openai::DEFAULT_BASE_URL.to_string());
            let api_key = api_key(&opts.openai_api_key, &base_url, "OPENAI_API_KEY", "openai")?;
            Ok(Box::new(OpenAiProvider::new(OpenAiConfig {
                api_key,
                base_url,
                model: opts.model_or(openai::DEFAULT_MODEL),
                retry: opts.retry,
                images: opts.openai_images.unwrap_or(true),
            })?))
        }
        ProviderKind::Scripted => {
            let scenario = non_empty(opts.scenario.clone());
            let scenario = Scenario::load(scenario.as_deref().unwrap_or(DEFAULT_SCENARIO))?;
            Ok(Box::new(ScriptedProvider::new(scenario)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> ProviderOptions {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProviderOptions::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn precedence_flag_config_anthropic_openai_scripted() {
        assert_eq!(env(&[]).kind().unwrap(), ProviderKind::Scripted);
        // An empty variable counts as unset.
        assert_eq!(
            env(&[("ANTHROPIC_API_KEY", "  ")]).kind().unwrap(),
            ProviderKind::Scripted
        );
        assert_eq!(
            env(&[("OPENAI_API_KEY", "sk")]).kind().unwrap(),
            ProviderKind::OpenAi
        );
        let both = env(&[("OPENAI_API_KEY", "sk"), ("ANTHROPIC_API_KEY", "ak")]);
        assert_eq!(both.kind().unwrap(), ProviderKind::Anthropic);
        let mut configured = both.clone();
        configured.config_provider = Some("openai".into());
        assert_eq!(configured.kind().unwrap(), ProviderKind::OpenAi);
        configured.provider_flag = Some("scripted".into());
        assert_eq!(configured.kind().unwrap(), ProviderKind::Scripted);
        configured.provider_flag = Some("gemini".into());
        let err = configured.kind().unwrap_err().to_string();
        assert!(err.contains("unknown provider 'gemini'"), "{err}");
    }

    #[test]
    fn labels_name_provider_and_model() {
        assert_eq!(select(&env(&[])).unwrap().label(), "scripted demo");
        let anthropic = env(&[("ANTHROPIC_API_KEY", "ak"), ("MODEL_ID", "claude-x")]);
        assert_eq!(select(&anthropic).unwrap().label(), "anthropic claude-x");
        let mut openai = env(&[("OPENAI_API_KEY", "sk")]);
        openai.config_model = Some("gpt-test".into());
        assert_eq!(select(&openai).unwrap().label(), "openai gpt-test");
    }

    #[test]
    fn local_servers_need_no_key_remote_ones_do() {
        let mut local = env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")]);
        local.provider_flag = Some("openai".into());
        local.model = Some("llama3.2".into());
        assert_eq!(
            select(&local).unwrap().label(),
            "openai-compatible llama3.2 @ localhost:11434"
        );
        let mut remote = env(&[]);
        remote.provider_flag = Some("anthropic".into());
        let err = select(&remote).err().unwrap().to_string();
        assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    }

    #[test]
    fn a_missing_scenario_file_is_a_clear_error() {
        let mut opts = env(&[]);
        opts.scenario = Some("/nonexistent/scenario.json".into());
        let err = select(&opts).err().unwrap().to_string();
        assert!(err.contains("/nonexistent/scenario.json"), "{err}");
    }
}
