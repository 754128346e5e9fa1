//! `hooks/list`: the hooks a session runs (or would run) — of a loaded thread, or of the
//! config each requested working directory loads — with where each comes from and whether it
//! is trusted (a project config's hooks run only once the config is accepted).

use crate::protocol::ThreadOverrides;
use crate::protocol::hooks::*;
use crate::protocol::methods as m;
use crate::{Conn, method, parse_thread_id, thread_not_found};
use oi_config::hooks::Hooks;
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::HooksList, _, _>(t, conn, Execution::Spawn, list);
}

async fn list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: HooksListParams,
) -> Result<HooksListResponse, RpcError> {
    if let Some(id) = &p.thread_id {
        let id = parse_thread_id(id)?;
        let thread = conn.live_thread(&id).ok_or_else(|| thread_not_found(id))?;
        let config = thread.settings();
        return Ok(HooksListResponse {
            data: vec![entry(&config, Vec::new())],
        });
    }
    let cwds: Vec<Option<PathBuf>> = if p.cwds.is_empty() {
        vec![None]
    } else {
        p.cwds.iter().map(|c| Some(PathBuf::from(c))).collect()
    };
    let mut data = Vec::new();
    for cwd in cwds {
        let shown = cwd
            .as_ref()
            .map(|c| c.display().to_string())
            .unwrap_or_default();
        let overrides = ThreadOverrides {
            cwd: cwd.clone(),
            ..Default::default()
        };
        match conn.load_config(&overrides).await {
            Ok(loaded) => {
                let refusal = loaded
                    .config
                    .project_config_review
                    .as_ref()
                    .filter(|r| !r.is_accepted() && r.changes.iter().any(|c| c.contains(" hook `")))
                    .map(|r| r.refusal());
                data.push(entry(&loaded.config, refusal.into_iter().collect()));
            }
            // A config that does not load lists nothing, and says why.
            Err(e) => data.push(HooksListEntry {
                cwd: shown,
                hooks: Vec::new(),
                warnings: Vec::new(),
                errors: vec![HookErrorInfo {
                    // The user config: the loader's message names the file at fault.
                    path: conn
                        .opts
                        .home
                        .clone()
                        .or_else(|| oi_config::find_home().ok())
                        .map(|home| oi_config::user_config_path(&home).display().to_string())
                        .unwrap_or_default(),
                    message: e.message,
                }],
            }),
        }
    }
    Ok(HooksListResponse { data })
}

fn entry(config: &oi_config::Config, extra_warnings: Vec<String>) -> HooksListEntry {
    let Hooks { commands, warnings } = &config.hooks;
    let mut all_warnings = warnings.clone();
    all_warnings.extend(extra_warnings);
    HooksListEntry {
        cwd: config.cwd.display().to_string(),
        hooks: commands.iter().map(metadata).collect(),
        warnings: all_warnings,
        errors: Vec::new(),
    }
}

fn metadata(h: &oi_config::hooks::HookCommand) -> HookMetadata {
    HookMetadata {
        key: h.key.clone(),
        event_name: h.event.wire_name().into(),
        handler_type: "command".into(),
        command: h.command.clone(),
        r#async: false,
        matcher: h.matcher.as_ref().map(|m| m.pattern().to_string()),
        timeout_sec: h.timeout.as_secs(),
        status_message: h.status_message.clone(),
        source: h.source.wire_name().into(),
        source_path: h
            .source_path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "/<session-flags>/config.toml".into()),
        plugin_id: None,
        display_order: h.display_order,
        enabled: h.enabled,
        is_managed: false,
        current_hash: h.hash.clone(),
        trust_status: h.trust.wire_name().into(),
    }
}
