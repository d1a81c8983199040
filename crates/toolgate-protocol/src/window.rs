//! How many tokens a model's context window holds (the core also reads how an API says a
//! request did not fit, in `model::window`). The table covers the models people point toolgate at; `[model] context_window` in
//! config.toml overrides it (proxies, local models, tests), and a refusal that names the
//! limit teaches the session the real one.

/// Where a model is unknown: the smallest window of the current hosted models, so that an
/// unknown model compacts early rather than overflows.
pub const DEFAULT_WINDOW: u64 = 128_000;

/// Context windows by model-id prefix, most specific first (the first match wins).
/// Figures are the providers' published input windows.
const WINDOWS: &[(&str, u64)] = &[
    // Anthropic: every current Claude model has a 200k window (1M is a beta opt-in).
    ("claude-", 200_000),
    // OpenAI.
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    // Common open models behind OpenAI-compatible servers (Ollama, vLLM, llama.cpp).
    ("llama3.1", 128_000),
    ("llama3.2", 128_000),
    ("llama3.3", 128_000),
    ("llama3", 8_192),
    ("qwen2.5", 32_768),
    ("qwen3", 40_960),
    ("mistral", 32_768),
    ("deepseek", 128_000),
    ("gemma", 8_192),
];

/// The model names (or their beginnings, such as `claude-`) the table knows: what `/model`
/// completes where the provider offers no list.
pub fn known_models() -> impl Iterator<Item = &'static str> {
    WINDOWS.iter().map(|(prefix, _)| *prefix)
}

/// The context window of `model` in tokens, from the table (by prefix, ignoring case and a
/// `provider/` path such as `openai/gpt-4o` or `library/llama3.1`).
pub fn for_model(model: &str) -> u64 {
    let id = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    WINDOWS
        .iter()
        .find(|(prefix, _)| id.starts_with(prefix))
        .map_or(DEFAULT_WINDOW, |(_, tokens)| *tokens)
}
