//! `config/read`, `config/value/write`, `config/batchWrite`.
//!
//! Reads report the effective config, where each key came from, and a version per layer
//! (`sha256:` of the layer's canonical JSON). Writes edit the user config.toml with
//! `toml_edit`, so comments, key order and formatting of untouched parts survive; the
//! would-be file is checked by `oi_config::check_user_config` first (an invalid value is
//! rejected before anything is written), then written atomically (temp file + rename). Errors carry `data.config_write_error_code`.

use crate::protocol::ThreadOverrides;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    ConfigBatchWriteParams, ConfigLayer, ConfigLayerMetadata, ConfigLayerSource, ConfigReadParams,
    ConfigReadResponse, ConfigValueWriteParams, ConfigWriteResponse, OverriddenMetadata,
    WriteStatus,
};
use crate::{Conn, blocking, method};
use oi_config::{Config, toml_to_json};
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_jsonrpc::{INVALID_REQUEST, RpcError};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml_edit::{DocumentMut, InlineTable, Item, Table};

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ConfigRead, _, _>(t, conn, Execution::Spawn, |c, x, p| async move {
        read(c, x, p).await
    });
    method::<m::ConfigValueWrite, _, _>(t, conn, Execution::Spawn, |c, x, p| async move {
        value_write(c, x, p).await
    });
    method::<m::ConfigBatchWrite, _, _>(t, conn, Execution::Spawn, |c, x, p| async move {
        batch_write(c, x, p).await
    });
}

/// The wire types are in the protocol module; these names are what the file-editing
/// helpers below (and their tests) take.
pub(crate) use crate::protocol::wire::{ConfigEdit as Edit, MergeStrategy};

/// A config write error with its `config_write_error_code`.
#[derive(Debug, PartialEq)]
pub struct WriteError {
    pub code: &'static str,
    pub message: String,
}

impl WriteError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<WriteError> for RpcError {
    fn from(e: WriteError) -> Self {
        RpcError::new(INVALID_REQUEST, e.message)
            .with_data(json!({ "config_write_error_code": e.code }))
    }
}

/// JSON with object keys sorted, compact: the form versions are hashed from.
pub(crate) fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let keys: BTreeSet<&String> = m.keys().collect();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&m[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

pub(crate) fn version_of(table: &toml::Table) -> String {
    let json = toml_to_json(&toml::Value::Table(table.clone()));
    let digest = Sha256::digest(canonical_json(&json).as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

/// One layer as `config/read` reports it.
struct Layer {
    source: ConfigLayerSource,
    table: toml::Table,
}

impl Layer {
    fn metadata(&self) -> ConfigLayerMetadata {
        ConfigLayerMetadata {
            name: self.source.clone(),
            version: version_of(&self.table),
        }
    }
}

/// Layers from lowest to highest precedence: user (always, empty when the file is
/// missing), project, session flags (`-c` plus the server's typed flags).
fn layers(conn: &Conn, config: &Config) -> Vec<Layer> {
    let mut out = vec![Layer {
        source: ConfigLayerSource::User {
            file: config.user_config_path.clone(),
        },
        table: config
            .layers
            .iter()
            .find(|l| l.name == "user")
            .map(|l| l.value.clone())
            .unwrap_or_default(),
    }];
    for l in &config.layers {
        if l.name == "project" {
            let folder = l
                .path
                .as_ref()
                .and_then(|p| p.parent())
                .map(Path::to_path_buf);
            out.push(Layer {
                source: ConfigLayerSource::Project {
                    dot_codex_folder: folder,
                },
                table: l.value.clone(),
            });
        }
    }
    let mut flags = config
        .layers
        .iter()
        .find(|l| l.name == "session_flags")
        .map(|l| l.value.clone())
        .unwrap_or_default();
    let o = &conn.opts.overrides;
    let typed: [(&str, Option<String>); 5] = [
        ("model", o.model.clone()),
        ("model_provider", o.model_provider.clone()),
        ("profile", o.profile.clone()),
        ("approval_policy", o.approval_policy.map(|a| a.to_string())),
        ("sandbox_mode", o.sandbox_mode.map(|s| s.to_string())),
    ];
    for (k, v) in typed {
        if let Some(v) = v {
            flags.insert(k.to_string(), toml::Value::String(v));
        }
    }
    if !flags.is_empty() {
        out.push(Layer {
            source: ConfigLayerSource::SessionFlags,
            table: flags,
        });
    }
    out
}

fn deep_merge(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Leaf keys of a JSON object as dotted paths.
fn leaves(prefix: &str, v: &Map<String, Value>, out: &mut Vec<(String, Value)>) {
    for (k, val) in v {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match val {
            Value::Object(m) if !m.is_empty() => leaves(&path, m, out),
            other => out.push((path, other.clone())),
        }
    }
}

/// A layer as JSON for `config/read`, URL credentials redacted (`thread_store.url`'s
/// password, a provider's `base_url` with a token...): the reply may be shown or logged
/// by the client. `version` is still computed from the file itself.
fn table_json(t: &toml::Table) -> Map<String, Value> {
    match toml_to_json(&toml::Value::Table(t.clone())) {
        Value::Object(mut m) => {
            m.values_mut().for_each(redact_value);
            m
        }
        _ => Map::new(),
    }
}

fn redact_value(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("://") || s.contains('=') => {
            *s = oi_config::redact_url_credentials(s);
        }
        Value::Array(a) => a.iter_mut().for_each(redact_value),
        Value::Object(m) => m.values_mut().for_each(redact_value),
        _ => {}
    }
}

async fn read(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ConfigReadParams,
) -> Result<ConfigReadResponse, RpcError> {
    let overrides = ThreadOverrides {
        cwd: p.cwd,
        ..Default::default()
    };
    let config = conn.load_config(&overrides).await?.config;
    let layers = layers(&conn, &config);
    let mut effective = Map::new();
    let mut origins = BTreeMap::new();
    for l in &layers {
        let json = table_json(&l.table);
        let origin = l.metadata();
        let mut keys = Vec::new();
        leaves("", &json, &mut keys);
        for (k, _) in keys {
            origins.insert(k, origin.clone());
        }
        deep_merge(&mut effective, &json);
    }
    // What the engine resolved even where no layer says so (defaults, profiles).
    effective.insert("model".into(), json!(config.model));
    effective.insert("model_provider".into(), json!(config.model_provider_id));
    effective.insert("approval_policy".into(), json!(config.approval_policy));
    effective.insert("sandbox_mode".into(), json!(config.sandbox_mode));
    if let Some(e) = config.model_reasoning_effort {
        effective.insert("model_reasoning_effort".into(), json!(e));
    }
    if let Some(p) = &config.profile {
        effective.insert("profile".into(), json!(p));
    }
    let layers = p.include_layers.then(|| {
        layers
            .iter()
            .rev()
            .map(|l| ConfigLayer {
                name: l.source.clone(),
                version: version_of(&l.table),
                config: table_json(&l.table),
            })
            .collect()
    });
    Ok(ConfigReadResponse {
        config: effective,
        origins,
        layers,
    })
}

async fn value_write(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ConfigValueWriteParams,
) -> Result<ConfigWriteResponse, RpcError> {
    let edits = vec![Edit {
        key_path: p.key_path,
        value: p.value,
        merge_strategy: p.merge_strategy,
    }];
    write(conn, edits, p.file_path, p.expected_version).await
}

async fn batch_write(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ConfigBatchWriteParams,
) -> Result<ConfigWriteResponse, RpcError> {
    if p.edits.is_empty() {
        return Err(WriteError::new("configValidationError", "edits must not be empty").into());
    }
    write(conn, p.edits, p.file_path, p.expected_version).await
}

async fn write(
    conn: Arc<Conn>,
    edits: Vec<Edit>,
    file_path: Option<PathBuf>,
    expected_version: Option<String>,
) -> Result<ConfigWriteResponse, RpcError> {
    let home = conn.home()?;
    let user_path = oi_config::user_config_path(&home);
    let keys: Vec<String> = edits.iter().map(|e| e.key_path.clone()).collect();
    let path = user_path.clone();
    let version = blocking(move || {
        check_target(&path, file_path.as_deref())?;
        apply_to_file(&path, &edits, expected_version.as_deref()).map_err(RpcError::from)
    })
    .await?;
    let mut result = ConfigWriteResponse {
        status: WriteStatus::Ok,
        version,
        file_path: user_path,
        overridden_metadata: None,
    };
    // A higher layer (project config, -c flags) that still decides one of these keys.
    if let Ok(loaded) = conn.load_config(&ThreadOverrides::default()).await {
        let layers = layers(&conn, &loaded.config);
        'outer: for l in layers.iter().skip(1).rev() {
            let json = Value::Object(table_json(&l.table));
            for k in &keys {
                if let Some(v) = lookup(&json, k) {
                    result.status = WriteStatus::OkOverridden;
                    result.overridden_metadata = Some(OverriddenMetadata {
                        message: format!(
                            "`{k}` is also set by a higher-precedence layer, which wins"
                        ),
                        overriding_layer: l.metadata(),
                        effective_value: v.clone(),
                    });
                    break 'outer;
                }
            }
        }
    }
    Ok(result)
}

fn lookup<'a>(v: &'a Value, dotted: &str) -> Option<&'a Value> {
    dotted.split('.').try_fold(v, |cur, seg| cur.get(seg))
}

/// Only the user config can be written.
fn check_target(user_path: &Path, file_path: Option<&Path>) -> Result<(), RpcError> {
    let Some(fp) = file_path else { return Ok(()) };
    let norm = |p: &Path| {
        p.parent()
            .and_then(|d| d.canonicalize().ok())
            .map(|d| d.join(p.file_name().unwrap_or_default()))
            .unwrap_or_else(|| p.to_path_buf())
    };
    if norm(fp) == norm(user_path) {
        Ok(())
    } else {
        Err(WriteError::new(
            "configLayerReadonly",
            format!(
                "{} cannot be written through this API; only the user config {} can",
                fp.display(),
                user_path.display()
            ),
        )
        .into())
    }
}

/// Applies `edits` to the file at `path` (created if missing) and returns its new version.
pub(crate) fn apply_to_file(
    path: &Path,
    edits: &[Edit],
    expected_version: Option<&str>,
) -> Result<String, WriteError> {
    // Under the edit lock: the version check and the write see the same file, and a
    // concurrent `interpreter trust` or `mcp add` is never lost.
    oi_config::edit::update_text(
        path,
        |e| {
            WriteError::new(
                "userLayerNotFound",
                format!("cannot update {}: {e}", path.display()),
            )
        },
        |text| {
            let new_text = edited_text(path, text, edits, expected_version)?;
            let new_table: toml::Table = new_text.parse().map_err(|e: toml::de::Error| {
                WriteError::new("configValidationError", e.message())
            })?;
            Ok((Some(new_text), version_of(&new_table)))
        },
    )
}

/// `text` with `edits` applied, after checking `expected_version` and that the result is a
/// valid config.
fn edited_text(
    path: &Path,
    text: &str,
    edits: &[Edit],
    expected_version: Option<&str>,
) -> Result<String, WriteError> {
    let current: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        WriteError::new(
            "configValidationError",
            format!(
                "{} does not parse, so it cannot be edited safely; fix it first: {}",
                path.display(),
                e.message()
            ),
        )
    })?;
    let current_version = version_of(&current);
    if let Some(expected) = expected_version
        && expected != current_version
    {
        return Err(WriteError::new(
            "configVersionConflict",
            format!(
                "{} changed since version {expected} (it is now {current_version}); read it again with config/read and retry",
                path.display()
            ),
        ));
    }
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        WriteError::new("configValidationError", e.to_string())
    })?;
    for e in edits {
        apply_edit(&mut doc, e)?;
    }
    let new_text = doc.to_string();
    validate(path, text, &new_text)?;
    Ok(new_text)
}

fn split_key_path(key_path: &str) -> Result<Vec<&str>, WriteError> {
    let parts: Vec<&str> = key_path.split('.').collect();
    if key_path.trim().is_empty() || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(WriteError::new(
            "configValidationError",
            format!(
                "keyPath `{key_path}` is not a dotted key like `model` or `sandbox_workspace_write.network_access`"
            ),
        ));
    }
    Ok(parts)
}

/// Applies one edit to the document.
pub(crate) fn apply_edit(doc: &mut DocumentMut, edit: &Edit) -> Result<(), WriteError> {
    let parts = split_key_path(&edit.key_path)?;
    let (leaf, parents) = parts
        .split_last()
        .ok_or_else(|| WriteError::new("configValidationError", "empty keyPath"))?;
    let mut cur: &mut Item = doc.as_item_mut();
    for (i, seg) in parents.iter().enumerate() {
        let inline = cur.is_inline_table();
        let not_table = || {
            WriteError::new(
                "configValidationError",
                format!(
                    "`{}` is not a table, so `{}` cannot be set inside it",
                    parts[..=i].join("."),
                    edit.key_path
                ),
            )
        };
        let t = cur.as_table_like_mut().ok_or_else(not_table)?;
        if t.get(seg).is_none() {
            let child = if inline {
                Item::Value(toml_edit::Value::InlineTable(InlineTable::new()))
            } else {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            };
            t.insert(seg, child);
        }
        cur = match t.get_mut(seg) {
            Some(next) if next.is_table_like() => next,
            _ => return Err(not_table()),
        };
    }
    set_leaf(cur, leaf, &edit.value, edit.merge_strategy, &edit.key_path)
}

fn set_leaf(
    parent: &mut Item,
    key: &str,
    value: &Value,
    strategy: MergeStrategy,
    key_path: &str,
) -> Result<(), WriteError> {
    let inline = parent.is_inline_table();
    let t = parent.as_table_like_mut().ok_or_else(|| {
        WriteError::new(
            "configValidationError",
            format!("the parent of `{key_path}` is not a table"),
        )
    })?;
    if value.is_null() {
        t.remove(key);
        return Ok(());
    }
    if strategy == MergeStrategy::Upsert
        && let Value::Object(obj) = value
        && let Some(existing) = t.get_mut(key)
        && existing.is_table_like()
    {
        for (k, v) in obj {
            set_leaf(existing, k, v, strategy, &format!("{key_path}.{k}"))?;
        }
        return Ok(());
    }
    let new_item = json_to_item(value, !inline, key_path)?;
    match t.get_mut(key) {
        // Keep the comments around a replaced value.
        Some(Item::Value(old)) if new_item.is_value() => {
            let decor = old.decor().clone();
            if let Ok(mut v) = new_item.into_value() {
                *v.decor_mut() = decor;
                *old = v;
            }
        }
        _ => {
            t.insert(key, new_item);
        }
    }
    Ok(())
}

/// JSON → TOML item. Objects become `[tables]` where allowed, inline tables otherwise.
fn json_to_item(v: &Value, table_ok: bool, key_path: &str) -> Result<Item, WriteError> {
    if let (Value::Object(m), true) = (v, table_ok) {
        let mut t = Table::new();
        for (k, sub) in m {
            if sub.is_null() {
                continue;
            }
            t.insert(k, json_to_item(sub, true, &format!("{key_path}.{k}"))?);
        }
        return Ok(Item::Table(t));
    }
    Ok(Item::Value(json_to_value(v, key_path)?))
}

fn json_to_value(v: &Value, key_path: &str) -> Result<toml_edit::Value, WriteError> {
    Ok(match v {
        Value::Null => {
            return Err(WriteError::new(
                "configValidationError",
                format!(
                    "`{key_path}` contains null, which TOML cannot store; leave the entry out instead"
                ),
            ));
        }
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64().unwrap_or_default().into(),
        },
        Value::String(s) => s.as_str().into(),
        Value::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for (i, x) in a.iter().enumerate() {
                arr.push(json_to_value(x, &format!("{key_path}[{i}]"))?);
            }
            toml_edit::Value::Array(arr)
        }
        Value::Object(m) => {
            let mut t = InlineTable::new();
            for (k, sub) in m {
                if !sub.is_null() {
                    t.insert(k, json_to_value(sub, &format!("{key_path}.{k}"))?);
                }
            }
            toml_edit::Value::InlineTable(t)
        }
    })
}

/// Checks `new_text` as the user config at `path` (`oi_config::check_user_config`, no file
/// touched). Errors → `configValidationError`; new unknown keys → `configSchemaUnknownKey`.
fn validate(path: &Path, old_text: &str, new_text: &str) -> Result<(), WriteError> {
    let home = path.parent().unwrap_or(Path::new("."));
    let unknown_of = |text: &str| -> Result<BTreeSet<String>, WriteError> {
        let warnings = oi_config::check_user_config(home, text).map_err(|e| {
            WriteError::new(
                "configValidationError",
                format!("the change would make the config invalid: {e}"),
            )
        })?;
        Ok(warnings
            .iter()
            .filter_map(|w| w.find("unknown key").map(|i| w[i..].to_string()))
            .collect())
    };
    let before = unknown_of(old_text).unwrap_or_default();
    let after = unknown_of(new_text)?;
    let new: Vec<&String> = after.difference(&before).collect();
    if !new.is_empty() {
        return Err(WriteError::new(
            "configSchemaUnknownKey",
            format!(
                "not written: {}",
                new.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(key: &str, value: Value, s: MergeStrategy) -> Edit {
        Edit {
            key_path: key.into(),
            value,
            merge_strategy: s,
        }
    }

    #[test]
    fn edits_keep_comments_and_layout() {
        let text = "# my config\nmodel = \"a\" # the model\n\n[sandbox_workspace_write]\n# roots\nnetwork_access = false\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        apply_edit(&mut doc, &edit("model", json!("b"), MergeStrategy::Replace)).unwrap();
        apply_edit(
            &mut doc,
            &edit(
                "sandbox_workspace_write.network_access",
                json!(true),
                MergeStrategy::Replace,
            ),
        )
        .unwrap();
        apply_edit(
            &mut doc,
            &edit(
                "model_providers.local",
                json!({"name": "L", "base_url": "http://x/v1"}),
                MergeStrategy::Upsert,
            ),
        )
        .unwrap();
        let out = doc.to_string();
        assert!(
            out.starts_with("# my config\nmodel = \"b\" # the model\n"),
            "{out}"
        );
        assert!(out.contains("# roots\nnetwork_access = true"), "{out}");
        assert!(out.contains("[model_providers.local]"), "{out}");
        apply_edit(
            &mut doc,
            &edit("model", Value::Null, MergeStrategy::Replace),
        )
        .unwrap();
        assert!(!doc.to_string().contains("model = "));
    }

    #[test]
    fn upsert_merges_tables_and_replace_replaces() {
        let mut doc: DocumentMut = "[t]\na = 1\nb = 2\n".parse().unwrap();
        apply_edit(
            &mut doc,
            &edit("t", json!({"b": 3, "c": 4}), MergeStrategy::Upsert),
        )
        .unwrap();
        let v: toml::Table = doc.to_string().parse().unwrap();
        assert_eq!(v["t"]["a"].as_integer(), Some(1));
        assert_eq!(v["t"]["b"].as_integer(), Some(3));
        apply_edit(
            &mut doc,
            &edit("t", json!({"z": 1}), MergeStrategy::Replace),
        )
        .unwrap();
        let v: toml::Table = doc.to_string().parse().unwrap();
        assert!(v["t"].get("a").is_none());
        let e = apply_edit(&mut doc, &edit("t.z.q", json!(1), MergeStrategy::Replace)).unwrap_err();
        assert_eq!(e.code, "configValidationError");
        let e = apply_edit(&mut doc, &edit("a..b", json!(1), MergeStrategy::Replace)).unwrap_err();
        assert!(e.message.contains("dotted key"));
    }

    #[test]
    fn file_writes_check_versions_and_validate_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# keep me\nmodel = \"a\"\n").unwrap();
        let v0 = version_of(&std::fs::read_to_string(&path).unwrap().parse().unwrap());
        let v1 = apply_to_file(
            &path,
            &[edit(
                "approval_policy",
                json!("never"),
                MergeStrategy::Replace,
            )],
            Some(&v0),
        )
        .unwrap();
        assert_ne!(v0, v1);
        let e = apply_to_file(
            &path,
            &[edit("model", json!("b"), MergeStrategy::Replace)],
            Some(&v0),
        )
        .unwrap_err();
        assert_eq!(e.code, "configVersionConflict");
        let before = std::fs::read_to_string(&path).unwrap();
        let e = apply_to_file(
            &path,
            &[edit(
                "approval_policy",
                json!("sometimes"),
                MergeStrategy::Replace,
            )],
            None,
        )
        .unwrap_err();
        assert_eq!(e.code, "configValidationError");
        assert!(e.message.contains("approval_policy"), "{}", e.message);
        let e = apply_to_file(
            &path,
            &[edit("modle", json!("x"), MergeStrategy::Replace)],
            None,
        )
        .unwrap_err();
        assert_eq!(e.code, "configSchemaUnknownKey");
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            before,
            "nothing written"
        );
        assert!(before.starts_with("# keep me\n"));
    }

    #[test]
    fn canonical_json_sorts_keys() {
        assert_eq!(
            canonical_json(&json!({"b": 1, "a": {"d": [1, {"y": 2, "x": 1}], "c": "s"}})),
            r#"{"a":{"c":"s","d":[1,{"x":1,"y":2}]},"b":1}"#
        );
    }
}
