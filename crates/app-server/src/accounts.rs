//! `account/read`, `account/login/start|cancel`, `account/logout`,
//! `account/rateLimits/read`: API-key accounts per model provider.
//!
//! A key is filed under its provider's `env_key` name in
//! `$OPENINTERPRETER_HOME/.credentials.json` (mode 0600, locked, atomic; owned by
//! `oi_config::credentials`), where the model client finds it when the variable is unset.
//! Keys are never sent back to the client (except by the v1 `getAuthStatus` when the client
//! asks for the token explicitly).

use crate::protocol::ThreadOverrides;
use crate::{Conn, blocking, internal, invalid, lock, method};
use oi_config::Config;
use oi_config::credentials;
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use oi_protocol::protocol::{RateLimitSnapshot, RateLimitWindow};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method(t, conn, "account/read", Execution::Spawn, read);
    method(t, conn, "account/login/start", Execution::Spawn, login);
    method(t, conn, "account/login/cancel", Execution::Inline, cancel);
    method(t, conn, "account/logout", Execution::Spawn, logout);
    method(
        t,
        conn,
        "account/rateLimits/read",
        Execution::Inline,
        rate_limits,
    );
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadParams {
    #[serde(default)]
    #[allow(dead_code)] // API keys do not refresh
    refresh_token: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoginParams {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    api_key: Option<String>,
    /// Which provider the key is for; default: the configured one.
    #[serde(default)]
    model_provider: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelParams {
    #[serde(default)]
    #[allow(dead_code)] // API-key logins finish at once; nothing can be pending
    login_id: Option<String>,
}

#[derive(Deserialize)]
struct Empty {}

/// Where the configured provider's key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// The provider needs no key (local servers).
    NotNeeded,
    Env,
    CredentialsFile,
    Missing,
}

pub(crate) fn key_source(config: &Config, home: &Path) -> KeySource {
    let Some(var) = &config.model_provider.env_key else {
        return KeySource::NotNeeded;
    };
    if std::env::var(var).is_ok_and(|v| !v.trim().is_empty()) {
        KeySource::Env
    } else if credentials::api_key(home, var).is_some() {
        KeySource::CredentialsFile
    } else {
        KeySource::Missing
    }
}

/// The key itself (for `getAuthStatus {includeToken: true}` only).
pub(crate) fn key_value(config: &Config, home: &Path) -> Option<String> {
    let var = config.model_provider.env_key.as_ref()?;
    std::env::var(var)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .or_else(|| credentials::api_key(home, var))
}

fn current_config(conn: &Conn) -> Result<Config, RpcError> {
    Ok(conn.load_config(&ThreadOverrides::default())?.config)
}

fn account_json(config: &Config, source: KeySource) -> Value {
    let present = matches!(source, KeySource::Env | KeySource::CredentialsFile);
    json!({
        "account": if present { json!({"type": "apiKey"}) } else { Value::Null },
        "requiresOpenaiAuth": source != KeySource::NotNeeded,
        "modelProvider": config.model_provider_id,
        "modelProviderName": config.model_provider.name,
        "apiKeyEnvVar": config.model_provider.env_key,
        "apiKeySource": match source {
            KeySource::NotNeeded => Value::Null,
            KeySource::Env => json!("env"),
            KeySource::CredentialsFile => json!("credentialsFile"),
            KeySource::Missing => Value::Null,
        },
    })
}

fn auth_mode(source: KeySource) -> Value {
    match source {
        KeySource::Env | KeySource::CredentialsFile => json!("apikey"),
        _ => Value::Null,
    }
}

async fn read(conn: Arc<Conn>, _ctx: RequestContext, _p: ReadParams) -> Result<Value, RpcError> {
    let config = current_config(&conn)?;
    let home = conn.home()?;
    Ok(account_json(&config, key_source(&config, &home)))
}

fn update_key(home: &Path, var: &str, key: Option<&str>) -> Result<(), RpcError> {
    credentials::set_api_key(home, var, key)
        .map(|_| ())
        .map_err(|e| internal(e.to_string()))
}

async fn login(conn: Arc<Conn>, ctx: RequestContext, p: LoginParams) -> Result<Value, RpcError> {
    if p.kind != "apiKey" {
        return Err(invalid(format!(
            "login type `{}` is not supported: Open Interpreter logs in to model providers with API keys; send {{\"type\": \"apiKey\", \"apiKey\": \"…\"}}",
            p.kind
        )));
    }
    let key = p
        .api_key
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| invalid("apiKey must not be empty"))?;
    let config = current_config(&conn)?;
    let provider_id = p
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider_id.clone());
    let provider = config.model_providers.get(&provider_id).ok_or_else(|| {
        invalid(format!(
            "unknown model provider `{provider_id}`; known: {}",
            config
                .model_providers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let var = provider.env_key.clone().ok_or_else(|| {
        invalid(format!(
            "model provider `{provider_id}` takes no API key (it has no `env_key`); to send one, set env_key in [model_providers.{provider_id}] of config.toml"
        ))
    })?;
    let home = conn.home()?;
    blocking(move || update_key(&home, &var, Some(&key))).await?;
    conn.notify_after_response(
        &ctx,
        vec![
            (
                "account/login/completed",
                json!({"loginId": null, "success": true, "error": null}),
            ),
            (
                "account/updated",
                json!({"authMode": "apikey", "planType": null}),
            ),
        ],
    );
    Ok(json!({"type": "apiKey"}))
}

async fn cancel(
    _conn: Arc<Conn>,
    _ctx: RequestContext,
    _p: CancelParams,
) -> Result<Value, RpcError> {
    Ok(json!({"status": "notFound"}))
}

async fn logout(conn: Arc<Conn>, ctx: RequestContext, _p: Empty) -> Result<Value, RpcError> {
    let config = current_config(&conn)?;
    let home = conn.home()?;
    if let Some(var) = config.model_provider.env_key.clone() {
        let h = home.clone();
        blocking(move || update_key(&h, &var, None)).await?;
    }
    // A key in the environment is still there; say so instead of pretending.
    let mode = auth_mode(key_source(&config, &home));
    conn.notify_after_response(
        &ctx,
        vec![(
            "account/updated",
            json!({"authMode": mode, "planType": null}),
        )],
    );
    Ok(json!({}))
}

fn window(w: &RateLimitWindow) -> Value {
    json!({
        "usedPercent": w.used_percent,
        "windowDurationMins": w.window_minutes,
        "resetsAt": w.resets_at,
    })
}

/// A v2 `RateLimitSnapshot` (empty when nothing is known), plus the raw headers.
pub(crate) fn rate_limit_snapshot(provider: &str, s: Option<&RateLimitSnapshot>) -> Value {
    json!({
        "limitId": provider,
        "limitName": null,
        "primary": s.and_then(|s| s.primary.as_ref()).map(window),
        "secondary": s.and_then(|s| s.secondary.as_ref()).map(window),
        "credits": null,
        "planType": null,
        "rateLimitReachedType": null,
        "headers": s.map(|s| json!(s.headers)).unwrap_or_else(|| json!({})),
    })
}

async fn rate_limits(conn: Arc<Conn>, _ctx: RequestContext, _p: Empty) -> Result<Value, RpcError> {
    let provider = match current_config(&conn) {
        Ok(c) => c.model_provider_id,
        Err(e) => return Err(e),
    };
    let seen = lock(&conn.rate_limits).clone();
    let mut by_id = Map::new();
    if let Some((p, s)) = &seen {
        by_id.insert(p.clone(), rate_limit_snapshot(p, Some(s)));
    }
    let current = match &seen {
        Some((p, s)) if *p == provider => rate_limit_snapshot(p, Some(s)),
        _ => rate_limit_snapshot(&provider, None),
    };
    Ok(json!({"rateLimits": current, "rateLimitsByLimitId": by_id}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_updates_keep_other_data_and_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = credentials::path(dir.path());
        std::fs::write(&path, r#"{"mcp_oauth": {"srv": "tok"}}"#).unwrap();
        update_key(dir.path(), "X_KEY", Some("sk-9")).unwrap();
        assert_eq!(
            credentials::api_key(dir.path(), "X_KEY").as_deref(),
            Some("sk-9")
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["mcp_oauth"]["srv"], "tok");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        update_key(dir.path(), "X_KEY", None).unwrap();
        assert_eq!(credentials::api_key(dir.path(), "X_KEY"), None);
        std::fs::write(&path, "[1]").unwrap();
        let e = update_key(dir.path(), "X_KEY", Some("k")).unwrap_err();
        assert!(e.message.contains("not a JSON object"), "{}", e.message);
    }

    #[test]
    fn empty_rate_limit_snapshot_has_the_v2_shape() {
        let v = rate_limit_snapshot("mock", None);
        assert_eq!(v["limitId"], "mock");
        assert!(v["primary"].is_null() && v["secondary"].is_null());
    }
}
