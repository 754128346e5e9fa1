//! The shape of one `[mcp_servers.<name>]` table as serde reads it.
//!
//! [`McpServerToml`] holds every key as written, whichever transport it belongs to; the
//! parser ([`super::parse`]) infers the transport from `command`/`url` and checks what serde
//! cannot (keys of the other transport, empty commands, `${VAR}` syntax). The value types here
//! carry TOML-worded `expecting` texts, so a type error reads "expected an array of strings,
//! got a string" rather than serde's "invalid type: string, expected a sequence".

use super::{McpApprovalMode, McpEnvVar, McpEnvVarSource, McpProtocolVersion, McpSamplingMode};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// Every key of a server table. Keys that are not fields here are reported as warnings.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct McpServerToml {
    // stdio
    pub command: Option<String>,
    pub args: Option<Strings>,
    pub env: Option<StringMap>,
    pub env_vars: Option<EnvVars>,
    pub cwd: Option<String>,
    // streamable HTTP
    pub url: Option<String>,
    pub bearer_token_env_var: Option<String>,
    pub http_headers: Option<StringMap>,
    pub env_http_headers: Option<StringMap>,
    pub oauth_resource: Option<String>,
    pub scopes: Option<Strings>,
    pub oauth: Option<OAuthToml>,
    // both
    pub enabled: Option<bool>,
    pub required: Option<bool>,
    pub startup_timeout_sec: Option<Seconds>,
    pub startup_timeout_ms: Option<Millis>,
    pub tool_timeout_sec: Option<Seconds>,
    pub enabled_tools: Option<Strings>,
    pub disabled_tools: Option<Strings>,
    pub default_tools_approval_mode: Option<McpApprovalMode>,
    pub tools: Option<BTreeMap<String, McpToolToml>>,
    pub supports_parallel_tool_calls: Option<bool>,
    pub roots: Option<Strings>,
    pub sampling: Option<McpSamplingMode>,
    pub protocol_version: Option<McpProtocolVersion>,
    /// Legacy key accepted without effect. (Not `IgnoredAny`: `serde_ignored` would report it.)
    pub name: Option<toml::Value>,
    /// Codex-only; anything but `"local"` gets a warning.
    pub experimental_environment: Option<toml::Value>,
    /// Never accepted: read only to reject it with a pointer to `bearer_token_env_var`. Its
    /// value is never shown, so no message can echo the secret.
    pub bearer_token: Option<toml::Value>,
}

/// `[mcp_servers.<name>.oauth]`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    default,
    expecting = "a table like `[mcp_servers.<name>.oauth] client_id = \"...\"`"
)]
pub(super) struct OAuthToml {
    pub client_id: Option<String>,
    pub issuer: Option<String>,
    pub client_secret_env_var: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub client_metadata_url: Option<String>,
    pub grant_type: Option<String>,
    pub private_key_env_var: Option<String>,
    pub idp_token_endpoint: Option<String>,
    pub idp_client_id: Option<String>,
    pub id_token_env_var: Option<String>,
    /// Never accepted: read only to reject it with a pointer to `client_secret_env_var`. Its
    /// value is never shown.
    pub client_secret: Option<toml::Value>,
}

/// `[mcp_servers.<name>.tools.<tool>]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, expecting = "a table with `approval_mode`")]
pub(super) struct McpToolToml {
    pub approval_mode: Option<McpApprovalMode>,
}

/// An array of strings.
#[derive(Debug, Default)]
pub(super) struct Strings(pub Vec<String>);

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strings, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(Strings(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A table of string values (`env`, `http_headers`, `env_http_headers`).
#[derive(Debug, Default)]
pub(super) struct StringMap(pub BTreeMap<String, String>);

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table of strings like { NAME = \"value\" }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
                let mut out = BTreeMap::new();
                while let Some((k, v)) = map.next_entry::<String, String>()? {
                    out.insert(k, v);
                }
                Ok(StringMap(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// `env_vars`: names, or `{ name, source }` tables.
#[derive(Debug, Default)]
pub(super) struct EnvVars(pub Vec<McpEnvVar>);

impl<'de> Deserialize<'de> for EnvVars {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EnvVars;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of variable names like [\"PATH\", \"HOME\"]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EnvVars, A::Error> {
                let mut out = Vec::new();
                while let Some(EnvVarEntry(var)) = seq.next_element()? {
                    out.push(var);
                }
                Ok(EnvVars(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One `env_vars` entry: `"NAME"` or `{ name = "NAME", source = "local" }`.
struct EnvVarEntry(McpEnvVar);

/// The table form of an `env_vars` entry; any other key is an error (an entry is too small
/// for a typo to be harmless).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvVarTable {
    name: Option<String>,
    source: Option<McpEnvVarSource>,
}

impl<'de> Deserialize<'de> for EnvVarEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EnvVarEntry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a variable name or { name = \"VAR\", source = \"local\" }")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<EnvVarEntry, E> {
                env_var(name.to_string(), None)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<EnvVarEntry, A::Error> {
                let t = EnvVarTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                let name = t.name.ok_or_else(|| {
                    de::Error::custom(
                        "missing `name` (write { name = \"VAR\", source = \"local\" })",
                    )
                })?;
                env_var(name, t.source)
            }
        }
        d.deserialize_any(V)
    }
}

fn env_var<E: de::Error>(name: String, source: Option<McpEnvVarSource>) -> Result<EnvVarEntry, E> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(E::custom(format!(
            "`{name}` is not a valid environment variable name"
        )));
    }
    Ok(EnvVarEntry(McpEnvVar { name, source }))
}

impl<'de> Deserialize<'de> for McpEnvVarSource {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = McpEnvVarSource;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`local` or `remote`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<McpEnvVarSource, E> {
                match s {
                    "local" => Ok(McpEnvVarSource::Local),
                    "remote" => Ok(McpEnvVarSource::Remote),
                    other => Err(E::custom(format!(
                        "unsupported env_vars source `{other}`; expected `local` or `remote`"
                    ))),
                }
            }
        }
        d.deserialize_str(V)
    }
}

/// The accepted modes, as the error messages list them.
const APPROVAL_MODES: &str = "\"auto\", \"prompt\", \"approve\", \"writes\"";

impl<'de> Deserialize<'de> for McpApprovalMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = McpApprovalMode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of {APPROVAL_MODES}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<McpApprovalMode, E> {
                McpApprovalMode::parse(s).ok_or_else(|| {
                    E::custom(format!(
                        "unknown approval mode \"{s}\"; expected one of {APPROVAL_MODES}"
                    ))
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The accepted sampling modes, as the error messages list them.
const SAMPLING_MODES: &str = "\"off\", \"prompt\", \"approve\"";

impl<'de> Deserialize<'de> for McpSamplingMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = McpSamplingMode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of {SAMPLING_MODES}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<McpSamplingMode, E> {
                McpSamplingMode::parse(s).ok_or_else(|| {
                    E::custom(format!(
                        "unknown sampling mode \"{s}\"; expected one of {SAMPLING_MODES}"
                    ))
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The accepted protocol versions, as the error messages list them.
const PROTOCOL_VERSIONS: &str = "\"auto\", \"2026-07-28\", \"2025-11-25\"";

impl<'de> Deserialize<'de> for McpProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = McpProtocolVersion;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "one of {PROTOCOL_VERSIONS}")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<McpProtocolVersion, E> {
                McpProtocolVersion::parse(s).ok_or_else(|| {
                    E::custom(format!(
                        "unknown protocol version \"{s}\"; expected one of {PROTOCOL_VERSIONS} (\"auto\" probes the server and falls back)"
                    ))
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// Longest timeout accepted: a year. Anything longer is surely a unit mistake.
const MAX_TIMEOUT_SECS: f64 = 86_400.0 * 365.0;

/// A positive number of seconds (integer or float), at most a year.
#[derive(Clone, Copy, Debug)]
pub(super) struct Seconds(pub Duration);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl V {
            fn check<E: de::Error>(secs: f64, shown: &dyn fmt::Display) -> Result<Seconds, E> {
                if secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT_SECS {
                    Ok(Seconds(Duration::from_secs_f64(secs)))
                } else {
                    Err(E::custom(format!(
                        "expected a positive number of seconds (at most a year), e.g. 30; got {shown}"
                    )))
                }
            }
        }
        impl Visitor<'_> for V {
            type Value = Seconds;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a positive number of seconds, e.g. 30")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Seconds, E> {
                // Precision loss is irrelevant below a year of seconds; larger values fail.
                Self::check(v as f64, &v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Seconds, E> {
                Self::check(v as f64, &v)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Seconds, E> {
                Self::check(v, &v)
            }
        }
        d.deserialize_any(V)
    }
}

/// The legacy `startup_timeout_ms`: a positive integer of milliseconds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Millis(pub Duration);

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const EXPECTED: &str = "a positive integer of milliseconds (prefer `startup_timeout_sec`)";
        impl Visitor<'_> for V {
            type Value = Millis;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Millis, E> {
                match u64::try_from(v) {
                    Ok(ms) => self.visit_u64(ms),
                    Err(_) => Err(E::custom(format!("expected {EXPECTED}; got {v}"))),
                }
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Millis, E> {
                if v == 0 {
                    return Err(E::custom(format!("expected {EXPECTED}; got 0")));
                }
                Ok(Millis(Duration::from_millis(v)))
            }
        }
        d.deserialize_any(V)
    }
}
