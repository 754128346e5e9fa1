//! Typed reads of single values from a TOML table; errors name the key and what was expected.

use crate::ConfigError;
use oi_protocol::config_types::ReasoningEffort;

pub(crate) fn get_str(
    t: &toml::Table,
    key: &str,
    origin: &str,
) -> Result<Option<String>, ConfigError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ConfigError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            message: format!("expected a string, found {}", other.type_str()),
        }),
    }
}

pub(crate) fn get_enum<T: std::str::FromStr<Err = String>>(
    t: &toml::Table,
    key: &str,
    origin: &str,
) -> Result<Option<T>, ConfigError> {
    match get_str(t, key, origin)? {
        None => Ok(None),
        Some(s) => s.parse::<T>().map(Some).map_err(|e| ConfigError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            message: e,
        }),
    }
}

pub(crate) fn get_uint(
    t: &toml::Table,
    key: &str,
    origin: &str,
) -> Result<Option<u64>, ConfigError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
        Some(toml::Value::Float(f)) if *f >= 0.0 => Ok(Some(*f as u64)),
        Some(other) => Err(ConfigError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            message: format!("expected a non-negative number, found {}", other),
        }),
    }
}

pub(crate) fn get_bool(
    t: &toml::Table,
    key: &str,
    origin: &str,
) -> Result<Option<bool>, ConfigError> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
        Some(other) => Err(ConfigError::Invalid {
            origin: origin.to_string(),
            key: key.to_string(),
            message: format!("expected true or false, found {other}"),
        }),
    }
}

pub(crate) fn parse_effort(s: &str) -> Result<ReasoningEffort, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| {
        format!(
            "unknown reasoning effort `{s}`; expected none, minimal, low, medium, high or xhigh"
        )
    })
}
