//! `${VAR}` references and `env:VAR` values in server settings, resolved when a server is
//! launched (so a missing variable fails that one server, not the whole config).

/// A `${…}` reference or `env:VAR` value that cannot be resolved; the message says how to
/// write it or which variable to export.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EnvRefError {
    /// `${` without its `}`; `text` is the whole value.
    #[error("unterminated `${{` in `{text}`; write `${{VAR}}` or `${{VAR:-default}}`")]
    Unterminated {
        /// The whole value.
        text: String,
    },
    /// `${…}` whose name is not a variable name.
    #[error(
        "`${{{inner}}}` in `{text}` is not a valid variable reference; write `${{VAR}}` or `${{VAR:-default}}`"
    )]
    BadReference {
        /// What stood between `${` and `}`.
        inner: String,
        /// The whole value.
        text: String,
    },
    /// `${NAME}` with `NAME` unset and no default.
    #[error(
        "environment variable `{name}` is not set (referenced as `${{{name}}}`); export it or write `${{{name}:-default}}`"
    )]
    Unset {
        /// The variable.
        name: String,
    },
    /// `env:VAR` with `VAR` unset.
    #[error(
        "environment variable `{var}` is not set (the value is `env:{var}`); export it before starting"
    )]
    UnsetHost {
        /// The variable.
        var: String,
    },
}

/// Expand `${VAR}` and `${VAR:-default}` in `s` using `lookup`. `$` not followed by `{` is kept.
///
/// A variable that is unset (or empty, for the `:-` form) and has no default is an error naming it.
pub fn expand_env_refs(
    s: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EnvRefError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("${") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let end = after.find('}').ok_or_else(|| EnvRefError::Unterminated {
            text: s.to_string(),
        })?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(EnvRefError::BadReference {
                inner: inner.to_string(),
                text: s.to_string(),
            });
        }
        match (
            lookup(name).filter(|v| default.is_none() || !v.is_empty()),
            default,
        ) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(EnvRefError::Unset {
                    name: name.to_string(),
                });
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Check that `s` has only well-formed `${...}` references (no lookup).
pub fn check_env_refs(s: &str) -> Result<(), EnvRefError> {
    expand_env_refs(s, &|_| Some(String::new())).map(|_| ())
}

/// Resolve one `env` value: `env:HOST_VAR` reads the host variable (an error if unset),
/// anything else gets `${VAR}` expansion.
pub fn resolve_env_value(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, EnvRefError> {
    if let Some(var) = value.strip_prefix("env:") {
        return lookup(var).ok_or_else(|| EnvRefError::UnsetHost {
            var: var.to_string(),
        });
    }
    expand_env_refs(value, lookup)
}
