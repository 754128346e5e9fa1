//! Configuration: finds the home directory, reads `config.toml` layers (user, then project),
//! applies a profile, `-c key=value` overrides and typed front-end overrides, and produces one
//! typed [`Config`] that the engine consumes.
//!
//! Owns: file locations, TOML parsing and validation, built-in model providers, defaults.
//! Must not know: how the engine, model client or front ends use the values.
//!
//! Errors name the file, the key and the fix; unknown keys are warnings (with a line number),
//! never silently dropped.

pub mod credentials;
mod de_error;
pub mod edit;
mod error;
pub mod history;
pub mod hooks;
mod key_path;
pub mod keys;
pub mod launch_pins;
mod layer;
mod load;
pub mod mcp;
mod origin;
mod overrides;
pub mod owner_only;
pub mod project_consent;
pub mod project_file;
pub mod project_keys;
pub mod provider;
mod redact;
mod resolve;
mod schema;
#[cfg(test)]
mod serde_fields;
pub mod shell_env;
pub mod trust;
pub mod tui_settings;
mod typed;
mod unknown_keys;
mod value;

pub use error::ConfigError;
pub use layer::ConfigLayer;
pub use load::{
    ThreadStoreSettings, check_user_config, find_home, load_config, mcp_state_key_file,
    prompt_folders, thread_store_settings, thread_store_url, trusted_project_folder,
    user_config_path,
};
pub use origin::Origin;
pub use overrides::{
    ConfigOverrides, apply_dotted, json_to_toml, parse_cli_override, toml_to_json,
};
pub use project_consent::{Launcher, ProjectConfigReview, ReviewStatus};
pub use provider::{MissingApiKey, ModelProviderInfo};
pub use redact::{REDACTED, redact_url_credentials};
pub use shell_env::{CommandEnv, ShellEnvironmentInherit, ShellEnvironmentPolicy};
pub use trust::{Trust, TrustChange, default_trust_dir, set_trust, trust_of};
pub use typed::{
    Config, ConfigLoadOptions, DEFAULT_PROJECT_DOC_MAX_BYTES, HistoryPersistence, LoadedConfig,
    OAuthCredentialsStoreMode, SKILL_SOURCES, SkillSelector, SkillsSettings,
};
pub use unknown_keys::validate_cli_key;
