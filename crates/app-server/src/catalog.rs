//! Catalogs: `model/list`, `collaborationMode/list`, `app/list`.
//!
//! `model/list` lists the models of the configured provider and of every provider defined
//! in config.toml: what each provider's `GET {base_url}/models` reports (short timeout,
//! cached briefly) plus the configured model, each merged with built-in metadata for
//! well-known open models (context window, reasoning efforts in the model's own order,
//! input modalities). Unknown models get honest defaults: no context window, no effort
//! knob, text input.

use crate::protocol::ThreadOverrides;
use crate::protocol::methods::{self as m, WireMethod};
use crate::protocol::wire::{
    AppsListParams, AppsListResponse, CollaborationModeListParams, CollaborationModeListResponse,
    CollaborationModeMask, ModeKind, Model, ModelListParams, ModelListResponse,
    ReasoningEffortOption,
};
use crate::{Conn, lock, method};
use oi_config::{Config, ModelProviderInfo};
use oi_core::catalog::{ModelListError, RemoteModel, builtin_info, fetch_models, is_hidden};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a provider's `/models` may take before we list without it.
const MODELS_TIMEOUT: Duration = Duration::from_millis(2500);
/// How long a provider's answer (or failure) is reused.
const MODELS_TTL: Duration = Duration::from_secs(60);

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ModelList, _, _>(t, conn, Execution::Spawn, model_list);
    method::<m::CollaborationModeList, _, _>(
        t,
        conn,
        Execution::Inline,
        |c, _x, _p: CollaborationModeListParams| async move {
            crate::init::require_experimental(&c, m::CollaborationModeList::NAME)?;
            Ok(collaboration_modes())
        },
    );
    method::<m::AppList, _, _>(
        t,
        conn,
        Execution::Inline,
        // No params is the same as empty ones.
        |_c, _x, _p: AppsListParams| async { Ok(AppsListResponse::default()) },
    );
}

type Listed = Result<Vec<RemoteModel>, ModelListError>;

#[derive(Default)]
pub(crate) struct ModelsCache(Mutex<HashMap<String, (Instant, Listed)>>);

fn effort_description(e: &str) -> &'static str {
    match e {
        "none" => "No reasoning",
        "minimal" => "Minimal reasoning",
        "low" => "Fast responses with lighter reasoning",
        "medium" => "Balances speed and reasoning depth",
        "high" => "Greatest reasoning depth",
        "xhigh" => "Extra-high reasoning depth",
        _ => "",
    }
}

/// One `Model` entry.
pub(crate) fn model_json(
    provider_id: &str,
    provider: &ModelProviderInfo,
    model: &str,
    remote: Option<&RemoteModel>,
    is_default: bool,
) -> Model {
    let info = builtin_info(model);
    let context = remote
        .and_then(|r| r.context_window)
        .or(info.as_ref().and_then(|i| i.context_window));
    let mut modalities = vec!["text".to_string()];
    if let Some(m) = remote.and_then(|r| r.input_modalities.clone()) {
        modalities = m;
    } else if info.as_ref().is_some_and(|i| i.image_input) {
        modalities.push("image".into());
    }
    let efforts = info
        .as_ref()
        .map(|i| i.efforts)
        .unwrap_or_default()
        .iter()
        .map(|e| ReasoningEffortOption {
            reasoning_effort: e.to_string(),
            description: effort_description(e).to_string(),
        })
        .collect();
    let description = match &info {
        Some(i) => format!("{} (via {})", i.description, provider.name),
        None => format!("{model} via {} (no built-in metadata)", provider.name),
    };
    Model {
        id: model.to_string(),
        model: model.to_string(),
        model_provider: provider_id.to_string(),
        display_name: info
            .as_ref()
            .map(|i| i.display_name.clone())
            .unwrap_or_else(|| model.to_string()),
        description,
        hidden: is_hidden(model),
        is_default,
        default_reasoning_effort: info
            .as_ref()
            .and_then(|i| i.default_effort)
            .unwrap_or("none")
            .to_string(),
        supported_reasoning_efforts: efforts,
        input_modalities: modalities,
        context_window: context,
        supports_personality: false,
        upgrade: None,
        upgrade_info: None,
    }
}

impl ModelsCache {
    async fn get(&self, id: &str, provider: &ModelProviderInfo, home: &std::path::Path) -> Listed {
        if let Some((at, r)) = lock(&self.0).get(id)
            && at.elapsed() < MODELS_TTL
        {
            return r.clone();
        }
        let r = fetch_models(provider.clone(), home, MODELS_TIMEOUT).await;
        if let Err(e) = &r {
            tracing::info!("model/list: provider `{id}` did not list its models: {e}");
        }
        lock(&self.0).insert(id.to_string(), (Instant::now(), r.clone()));
        r
    }
}

/// The configured provider first, then every provider defined in a config layer.
fn providers_to_list(config: &Config) -> Vec<String> {
    let mut ids = vec![config.model_provider_id.clone()];
    let mut defined = BTreeSet::new();
    for layer in &config.layers {
        if let Some(t) = layer
            .value
            .get("model_providers")
            .and_then(|v| v.as_table())
        {
            defined.extend(t.keys().cloned());
        }
    }
    ids.extend(
        defined.into_iter().filter(|id| {
            *id != config.model_provider_id && config.model_providers.contains_key(id)
        }),
    );
    ids
}

async fn model_list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ModelListParams,
) -> Result<ModelListResponse, RpcError> {
    let config = conn.load_config(&ThreadOverrides::default()).await?.config;
    let mut ids = providers_to_list(&config);
    if let Some(only) = &p.model_provider {
        if !ids.contains(only) {
            return Err(crate::invalid(format!(
                "unknown modelProvider `{only}`; use one of: {}",
                ids.join(", ")
            )));
        }
        ids.retain(|id| id == only);
    }
    let fetches = ids.iter().map(|id| {
        let conn = conn.clone();
        let id = id.clone();
        let provider = config.model_providers.get(&id).cloned();
        let home = config.home.clone();
        async move {
            match provider {
                Some(p) => conn.models.get(&id, &p, &home).await.unwrap_or_default(),
                None => Vec::new(),
            }
        }
    });
    let remote: Vec<Vec<RemoteModel>> = futures_join(fetches).await;
    let mut data = Vec::new();
    for (id, models) in ids.iter().zip(remote) {
        let Some(provider) = config.model_providers.get(id) else {
            continue;
        };
        let mut seen = BTreeSet::new();
        if *id == config.model_provider_id {
            let remote = models.iter().find(|m| m.id == config.model);
            data.push(model_json(id, provider, &config.model, remote, true));
            seen.insert(config.model.clone());
        }
        for m in &models {
            if seen.insert(m.id.clone()) {
                data.push(model_json(id, provider, &m.id, Some(m), false));
            }
        }
    }
    if !p.include_hidden {
        data.retain(|m| !m.hidden);
    }
    let (start, end, next) = crate::offset_page(data.len(), p.cursor.as_deref(), p.limit)?;
    Ok(ModelListResponse {
        data: data[start..end].to_vec(),
        next_cursor: next,
    })
}

/// Runs the futures concurrently and returns their outputs in order.
async fn futures_join<F, T>(futs: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futs.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        match h.await {
            Ok(v) => out.push(v),
            Err(e) => {
                tracing::warn!("model/list: a provider lookup failed: {e}");
            }
        }
    }
    out
}

/// The built-in presets. Tri-state fields: an absent key keeps the current value, `null`
/// clears it, a value sets it. Presets never pick a model; Plan sets medium effort;
/// developer instructions are not sent.
pub(crate) fn collaboration_modes() -> CollaborationModeListResponse {
    CollaborationModeListResponse {
        data: vec![
            CollaborationModeMask {
                name: "Plan".into(),
                mode: ModeKind::Plan,
                model: None,
                reasoning_effort: Some("medium".into()),
            },
            CollaborationModeMask {
                name: "Default".into(),
                mode: ModeKind::Default,
                model: None,
                reasoning_effort: None,
            },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::to_value;
    use oi_core::catalog::parse_models;
    use serde_json::{Value, json};

    #[test]
    fn builtin_metadata_keeps_effort_order_and_tolerates_prefixes() {
        let gpt = builtin_info("openai/gpt-oss-120b").unwrap();
        assert_eq!(gpt.efforts, ["low", "medium", "high"]);
        assert_eq!(
            builtin_info("qwen3-coder:30b").unwrap().context_window,
            Some(262_144)
        );
        assert_eq!(
            builtin_info("moonshotai/Kimi-K2-0711-preview")
                .unwrap()
                .context_window,
            Some(131_072)
        );
        assert!(builtin_info("glm-4.5v").unwrap().image_input);
        assert!(builtin_info("mock-model").is_none());
    }

    #[test]
    fn unknown_models_get_honest_defaults_and_provider_facts_win() {
        let p = ModelProviderInfo {
            name: "Mock".into(),
            base_url: Some("http://127.0.0.1:1/v1".into()),
            env_key: None,
            env_key_instructions: None,
            wire_api: Default::default(),
            query_params: None,
            http_headers: None,
            env_http_headers: None,
            request_max_retries: None,
            stream_max_retries: None,
            stream_idle_timeout_ms: None,
            requires_openai_auth: false,
            send_reasoning_content: None,
            harness: None,
            supports_parallel_tool_calls: None,
            auth_header: None,
        };
        let m = to_value(&model_json("mock", &p, "mock-model", None, true));
        assert_eq!(m["isDefault"], true);
        assert_eq!(m["contextWindow"], Value::Null);
        assert_eq!(m["supportedReasoningEfforts"], json!([]));
        assert_eq!(m["inputModalities"], json!(["text"]));
        let remote = RemoteModel {
            id: "gpt-oss-20b".into(),
            context_window: Some(32_768),
            input_modalities: None,
        };
        let m = to_value(&model_json("mock", &p, "gpt-oss-20b", Some(&remote), false));
        assert_eq!(m["contextWindow"], 32_768);
        assert_eq!(m["defaultReasoningEffort"], "medium");
        assert_eq!(m["supportedReasoningEfforts"][2]["reasoningEffort"], "high");
        assert!(model_json("mock", &p, "nomic-embed-text", None, false).hidden);
    }

    #[test]
    fn parses_models_bodies_of_several_servers() {
        let body = json!({"object": "list", "data": [
            {"id": "a", "context_length": 8192, "architecture": {"input_modalities": ["text", "image", "audio"]}},
            {"id": "b", "max_model_len": 4096},
            {"object": "model"}
        ]});
        let m = parse_models(&body);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].context_window, Some(8192));
        assert_eq!(
            m[0].input_modalities,
            Some(vec!["text".into(), "image".into()])
        );
        assert_eq!(m[1].context_window, Some(4096));
    }

    #[test]
    fn presets_use_tri_state_fields() {
        let v = to_value(&collaboration_modes());
        assert_eq!(
            v,
            json!({"data": [
                {"name": "Plan", "mode": "plan", "model": null, "reasoning_effort": "medium"},
                {"name": "Default", "mode": "default", "model": null},
            ]})
        );
        let plan = &v["data"][0];
        assert_eq!(plan["reasoning_effort"], "medium");
        assert!(plan.get("developer_instructions").is_none());
        let default = &v["data"][1];
        assert!(
            default.get("reasoning_effort").is_none(),
            "absent = keep current"
        );
        assert_eq!(default["model"], Value::Null);
    }
}
