//! `[shell_environment_policy]`: which environment variables the commands the model runs see.
//!
//! Same keys and order as Codex: start from `inherit` (`all`, `core` or `none`), drop names
//! containing `KEY`, `SECRET` or `TOKEN` unless `ignore_default_excludes`, drop `exclude`
//! patterns, add `set`, then keep only `include_only` patterns (when any). Patterns are globs
//! (`*`, `?`, `[...]`) matched against the whole name, case-insensitively.
//!
//! On top of the policy, [`CommandEnv`] removes the variables that hold the credentials this
//! process itself uses (the active provider's key and header variables, every MCP server's
//! bearer-token and header variables) and any variable carrying one of their values, whatever
//! the policy says: the model must never be able to read them with `env`.

use crate::Config;
use crate::mcp::McpServerTransportConfig;
use globset::{GlobBuilder, GlobMatcher};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// `inherit`: the starting set of variables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShellEnvironmentInherit {
    /// Every variable of this process.
    #[default]
    All,
    /// Only [`CORE_VARS`] (and `LC_*`).
    Core,
    /// Nothing: only what `set` adds.
    None,
}

/// Variables `inherit = "core"` keeps: what shells and common tools need to behave.
pub const CORE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
    "LANGUAGE", "TERM", "TZ",
];

/// Substrings that mark a secret-looking name for the default excludes.
const DEFAULT_EXCLUDES: &[&str] = &["*KEY*", "*SECRET*", "*TOKEN*"];

/// The parsed `[shell_environment_policy]` table.
#[derive(Clone, Debug, Default)]
pub struct ShellEnvironmentPolicy {
    /// Which of the host's variables commands start from.
    pub inherit: ShellEnvironmentInherit,
    /// Keep names containing KEY/SECRET/TOKEN (off by default).
    pub ignore_default_excludes: bool,
    /// Names removed (glob patterns).
    pub exclude: Vec<EnvPattern>,
    /// Variables set, after the removals.
    pub set: BTreeMap<String, String>,
    /// When not empty, only names matching one of these are kept.
    pub include_only: Vec<EnvPattern>,
}

/// A name pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid pattern `{raw}`: {source}")]
pub struct InvalidEnvPattern {
    /// The pattern as written.
    pub raw: String,
    /// What the glob compiler found wrong.
    #[source]
    pub source: globset::Error,
}

/// A case-insensitive glob over variable names.
#[derive(Clone, Debug)]
pub struct EnvPattern {
    raw: String,
    matcher: GlobMatcher,
}

impl EnvPattern {
    /// Compile `raw`; the error says what is wrong with the pattern.
    pub fn new(raw: &str) -> Result<Self, InvalidEnvPattern> {
        let glob = GlobBuilder::new(raw)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
            .map_err(|source| InvalidEnvPattern {
                raw: raw.to_string(),
                source,
            })?;
        Ok(EnvPattern {
            raw: raw.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    /// Whether the variable `name` matches the pattern.
    pub fn matches(&self, name: &str) -> bool {
        self.matcher.is_match(name)
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

impl<'de> Deserialize<'de> for EnvPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EnvPattern;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name pattern like \"AWS_*\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<EnvPattern, E> {
                EnvPattern::new(s).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for ShellEnvironmentInherit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = ShellEnvironmentInherit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"all\", \"core\" or \"none\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ShellEnvironmentInherit, E> {
                match s {
                    "all" => Ok(ShellEnvironmentInherit::All),
                    "core" => Ok(ShellEnvironmentInherit::Core),
                    "none" => Ok(ShellEnvironmentInherit::None),
                    other => Err(E::custom(format!(
                        "unknown value `{other}`; expected \"all\", \"core\" or \"none\""
                    ))),
                }
            }
        }
        d.deserialize_str(V)
    }
}

/// A value of `set`: a string, or a number or boolean written as its text (`CI = 1`).
#[derive(Debug)]
pub(crate) struct EnvValue(pub String);

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = EnvValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<EnvValue, E> {
                Ok(EnvValue(s.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<EnvValue, E> {
                // As TOML writes it (`1.0`, not `1`).
                Ok(EnvValue(toml::Value::Float(v).to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EnvValue, E> {
                Ok(EnvValue(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `[shell_environment_policy]`; its value types check patterns and `inherit` as they are
/// read, so turning it into a [`crate::ShellEnvironmentPolicy`] cannot fail.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub(crate) struct ShellEnvironmentPolicyToml {
    pub inherit: Option<ShellEnvironmentInherit>,
    pub ignore_default_excludes: Option<bool>,
    pub exclude: Option<Vec<EnvPattern>>,
    pub set: Option<BTreeMap<String, EnvValue>>,
    pub include_only: Option<Vec<EnvPattern>>,
}

impl From<ShellEnvironmentPolicyToml> for ShellEnvironmentPolicy {
    fn from(t: ShellEnvironmentPolicyToml) -> Self {
        ShellEnvironmentPolicy {
            inherit: t.inherit.unwrap_or_default(),
            ignore_default_excludes: t.ignore_default_excludes.unwrap_or(false),
            exclude: t.exclude.unwrap_or_default(),
            set: t
                .set
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k, v.0))
                .collect(),
            include_only: t.include_only.unwrap_or_default(),
        }
    }
}

impl ShellEnvironmentPolicy {
    /// Apply the policy to `vars` (the environment of this process), in Codex's order:
    /// inherit → default excludes → exclude → set → include_only.
    pub fn apply(
        &self,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> HashMap<String, String> {
        let mut env: HashMap<String, String> = match self.inherit {
            ShellEnvironmentInherit::All => vars.into_iter().collect(),
            ShellEnvironmentInherit::Core => vars.into_iter().filter(|(k, _)| is_core(k)).collect(),
            ShellEnvironmentInherit::None => HashMap::new(),
        };
        if !self.ignore_default_excludes {
            let defaults: Vec<EnvPattern> = DEFAULT_EXCLUDES
                .iter()
                .filter_map(|p| EnvPattern::new(p).ok())
                .collect();
            env.retain(|k, _| !defaults.iter().any(|p| p.matches(k)));
        }
        env.retain(|k, _| !self.exclude.iter().any(|p| p.matches(k)));
        for (k, v) in &self.set {
            env.insert(k.clone(), v.clone());
        }
        if !self.include_only.is_empty() {
            env.retain(|k, _| self.include_only.iter().any(|p| p.matches(k)));
        }
        env
    }
}

fn is_core(name: &str) -> bool {
    CORE_VARS.contains(&name) || name.starts_with("LC_")
}

impl Config {
    /// Names of the variables holding this process's own credentials: the active provider's
    /// `env_key` and `env_http_headers` variables, and every MCP server's
    /// `bearer_token_env_var` and `env_http_headers` variables.
    pub fn secret_env_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        let p = &self.model_provider;
        names.extend(p.env_key.iter().cloned());
        if let Some(h) = &p.env_http_headers {
            names.extend(h.values().cloned());
        }
        for server in self.mcp_servers.values() {
            if let McpServerTransportConfig::StreamableHttp {
                bearer_token_env_var,
                env_http_headers,
                ..
            } = &server.transport
            {
                names.extend(bearer_token_env_var.iter().cloned());
                names.extend(env_http_headers.values().cloned());
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// The environment for a command the model runs, from this process's environment:
    /// `[shell_environment_policy]` applied, then this process's credentials removed.
    pub fn command_env(&self) -> HashMap<String, String> {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)));
        CommandEnv {
            secret_names: self.secret_env_names(),
        }
        .build(&self.shell_environment_policy, vars)
    }
}

/// The environment for commands the model runs: the policy's result minus this process's own
/// credentials. Build it with [`crate::Config::command_env`].
#[derive(Clone, Debug, Default)]
pub struct CommandEnv {
    /// Names of variables that hold credentials of this process.
    pub secret_names: Vec<String>,
}

impl CommandEnv {
    /// `policy` applied to `vars`, with every secret variable removed, and every variable whose
    /// value equals a secret's value (a copy under another name) removed too.
    pub fn build(
        &self,
        policy: &ShellEnvironmentPolicy,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> HashMap<String, String> {
        let vars: Vec<(String, String)> = vars.into_iter().collect();
        // Values shorter than this are too common ("1", "true") to treat as a secret's copy.
        const MIN_SECRET_LEN: usize = 8;
        let secret_values: Vec<String> = vars
            .iter()
            .filter(|(k, v)| self.secret_names.contains(k) && v.len() >= MIN_SECRET_LEN)
            .map(|(_, v)| v.clone())
            .collect();
        let mut env = policy.apply(vars);
        env.retain(|k, v| !self.secret_names.contains(k) && !secret_values.contains(v));
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn policy(text: &str) -> ShellEnvironmentPolicy {
        toml::from_str::<ShellEnvironmentPolicyToml>(text)
            .unwrap()
            .into()
    }

    fn names(env: &HashMap<String, String>) -> Vec<String> {
        let mut v: Vec<String> = env.keys().cloned().collect();
        v.sort();
        v
    }

    const HOST: &[(&str, &str)] = &[
        ("PATH", "/usr/bin"),
        ("HOME", "/home/u"),
        ("LC_ALL", "C.UTF-8"),
        ("GITHUB_TOKEN", "ghp_xxxxxxxxxxxx"),
        ("AWS_SECRET_ACCESS_KEY", "aws-secret-value"),
        ("my_api_key", "k"),
        ("Monkey", "banana"),
        ("CARGO_HOME", "/c"),
        ("AWS_REGION", "eu-west-1"),
    ];

    #[test]
    fn default_policy_keeps_everything_but_secret_looking_names() {
        let env = ShellEnvironmentPolicy::default().apply(vars(HOST));
        // Case-insensitive: "Monkey" contains "key".
        assert_eq!(
            names(&env),
            ["AWS_REGION", "CARGO_HOME", "HOME", "LC_ALL", "PATH"]
        );
    }

    #[test]
    fn inherit_core_and_none() {
        let env = policy("inherit = \"core\"").apply(vars(HOST));
        assert_eq!(names(&env), ["HOME", "LC_ALL", "PATH"]);
        let env = policy("inherit = \"none\"\nset = { A = \"1\" }").apply(vars(HOST));
        assert_eq!(names(&env), ["A"]);
    }

    #[test]
    fn order_is_inherit_defaults_exclude_set_include_only() {
        // `set` comes after the default excludes, so an explicit secret-looking name survives;
        // `include_only` runs last, so it can still remove what `set` added.
        let p = policy(
            "exclude = [\"aws_*\"]\nset = { MY_TOKEN = \"t\", EXTRA = \"e\" }\ninclude_only = [\"PATH\", \"*_token\", \"HOME\"]",
        );
        assert_eq!(names(&p.apply(vars(HOST))), ["HOME", "MY_TOKEN", "PATH"]);
        let p = policy("ignore_default_excludes = true\nexclude = [\"AWS_?EGION\", \"m*\"]");
        assert_eq!(
            names(&p.apply(vars(HOST))),
            [
                "AWS_SECRET_ACCESS_KEY",
                "CARGO_HOME",
                "GITHUB_TOKEN",
                "HOME",
                "LC_ALL",
                "PATH"
            ]
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        // The way the loader reads it: the merged table into the whole schema.
        let bad = |text: &str| {
            let table: toml::Table = format!("[shell_environment_policy]\n{text}")
                .parse()
                .unwrap();
            let e = serde_path_to_error::deserialize::<_, crate::schema::ConfigToml>(
                toml::Value::Table(table),
            )
            .unwrap_err();
            (
                crate::de_error::key_of(e.path()),
                crate::de_error::toml_message(e.inner()),
            )
        };
        let (k, m) = bad("inherit = \"some\"");
        assert_eq!(k, "shell_environment_policy.inherit");
        assert!(m.contains("\"core\""), "{m}");
        let (k, _) = bad("exclude = \"AWS_*\"");
        assert_eq!(k, "shell_environment_policy.exclude");
        let (_, m) = bad("include_only = [\"[\"]");
        assert!(m.contains("invalid pattern `[`"), "{m}");
        let (k, m) = bad("set = { \"A.B\" = [1] }");
        assert_eq!(k, "shell_environment_policy.set.\"A.B\"");
        assert_eq!(m, "expected a string value, got an array");
    }

    #[test]
    fn own_credentials_never_pass_whatever_the_policy() {
        let host = vars(&[
            ("PATH", "/usr/bin"),
            ("PROVIDER_CRED", "sk-live-1234567890"),
            ("COPY_OF_IT", "sk-live-1234567890"),
            ("MCP_BEARER", "bearer-abcdefgh"),
            ("SHORT", "1"),
            ("FLAG", "1"),
        ]);
        let open = policy("ignore_default_excludes = true\nset = { MCP_BEARER = \"x\" }");
        let ce = CommandEnv {
            secret_names: vec!["PROVIDER_CRED".into(), "MCP_BEARER".into(), "SHORT".into()],
        };
        let env = ce.build(&open, host);
        assert_eq!(names(&env), ["FLAG", "PATH"]);
    }
}
