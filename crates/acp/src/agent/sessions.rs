//! Sessions: `session/new`, `session/load` (with the stored history replayed as updates),
//! `session/resume`, `session/list`, `session/close`, and the session's choices
//! (`session/set_mode`, `session/set_config_option`).

use super::{Agent, RESOURCE_NOT_FOUND, lock, to_value};
use crate::client_tools::{AcpClientTools, Offered};
use crate::schema::{
    AvailableCommandsUpdate, ClientCapabilities, CloseSessionRequest, CloseSessionResponse,
    ConfigOptionUpdate, CurrentModeUpdate, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, McpServer, NewSessionRequest, NewSessionResponse,
    ResumeSessionResponse, SessionConfigOptionValue, SessionId, SessionInfo, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use crate::settings::{MODE_OPTION, Settings};
use crate::updates::{SessionOut, Translator};
use oi_config::LoadedConfig;
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use oi_core::{CoreError, NewThread, RolloutItem, Thread, ThreadHold};
use oi_jsonrpc::{RequestContext, RpcError};
use oi_protocol::ThreadId;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One session of this connection.
pub(super) struct AcpSession {
    pub(crate) thread: Arc<Thread>,
    pub(crate) out: Arc<SessionOut>,
    pub(crate) settings: Mutex<Settings>,
    /// The running prompt's cancel signal.
    pub(crate) prompt: Mutex<Option<CancellationToken>>,
    _hold: ThreadHold,
}

impl AcpSession {
    /// Stops the running prompt, if any (it ends `cancelled`).
    pub(super) fn cancel_prompt(&self) {
        if let Some(c) = lock(&self.prompt).as_ref() {
            c.cancel();
        }
    }
}

/// How long the provider's model list may take.
const MODELS_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(2500);

/// `session/load` and `session/resume` take the same params.
type ResumeParams = LoadSessionRequest;

impl Agent {
    pub(super) async fn new_session(
        &self,
        ctx: RequestContext,
        p: NewSessionRequest,
    ) -> Result<Value, RpcError> {
        let client = self.client()?;
        let loaded = self
            .load_config(&p.cwd, &p.mcp_servers, "session/new")
            .await?;
        let manager = self.inner.host.manager();
        let new = manager
            .start_thread(loaded.config.clone())
            .await
            .map_err(start_error)?;
        let session = self.register(new, &loaded, &client);
        let (modes, options) = {
            let s = lock(&session.settings);
            (s.modes(), s.config_options())
        };
        let response = NewSessionResponse::new(session.out.session_id.clone())
            .modes(modes)
            .config_options(options);
        self.after_response(&ctx, &session, &loaded.config);
        to_value(&response)
    }

    /// `session/load` (`replay`: the history is sent as updates first) and `session/resume`.
    pub(super) async fn load_session(
        &self,
        ctx: RequestContext,
        p: ResumeParams,
        replay: bool,
    ) -> Result<Value, RpcError> {
        let client = self.client()?;
        let method = if replay {
            "session/load"
        } else {
            "session/resume"
        };
        let id = p.session_id.0.to_string();
        let thread_id: ThreadId = id.parse().map_err(|_| unknown_session(&id))?;
        if lock(&self.inner.sessions).contains_key(&id) {
            return Err(RpcError::invalid_request(format!(
                "session `{id}` is already open on this connection"
            )));
        }
        let loaded = self.load_config(&p.cwd, &p.mcp_servers, method).await?;
        let manager = self.inner.host.manager();
        let stored = manager
            .stored_threads(&loaded.config.home)
            .await
            .map_err(start_error)?;
        if replay {
            let thread = stored.load(&thread_id).await.map_err(|e| match e {
                CoreError::ThreadNotFound(_) => unknown_session(&id),
                other => start_error(other),
            })?;
            let out = SessionOut::new(
                SessionId::new(id.clone()),
                self.inner.outgoing.clone(),
                Translator::replay(),
            );
            for item in &thread.items {
                if let RolloutItem::EventMsg(msg) = item
                    && !out.event(msg).await
                {
                    return Err(RpcError::internal("the client went away during the replay"));
                }
            }
        } else if stored.get(&thread_id).await.map_err(start_error)?.is_none()
            && manager.get_thread(&thread_id).is_none()
        {
            return Err(unknown_session(&id));
        }
        let new = manager
            .resume_thread(thread_id, loaded.config.clone())
            .await
            .map_err(|e| match e {
                CoreError::ThreadNotFound(_) => unknown_session(&id),
                other => start_error(other),
            })?;
        let session = self.register(new, &loaded, &client);
        let (modes, options) = {
            let s = lock(&session.settings);
            (s.modes(), s.config_options())
        };
        self.after_response(&ctx, &session, &loaded.config);
        if replay {
            to_value(
                &LoadSessionResponse::new()
                    .modes(modes)
                    .config_options(options),
            )
        } else {
            to_value(
                &ResumeSessionResponse::new()
                    .modes(modes)
                    .config_options(options),
            )
        }
    }

    pub(super) async fn list_sessions(&self, p: ListSessionsRequest) -> Result<Value, RpcError> {
        let home = self.home().await?;
        let query = oi_core::ListQuery {
            cursor: p.cursor.clone(),
            cwd: p.cwd.clone().map(|c| vec![c]),
            ..oi_core::ListQuery::default()
        };
        let page = self
            .inner
            .host
            .manager()
            .list_stored_threads(&home, &query)
            .await
            .map_err(|e| match e {
                CoreError::StoreRequest(m) => RpcError::invalid_params("session/list", m),
                other => RpcError::internal(other),
            })?;
        let sessions = page
            .data
            .iter()
            .map(|t| {
                SessionInfo::new(t.id.to_string(), t.cwd.clone())
                    .title(t.title().to_string())
                    .updated_at(rfc3339(t.updated_at))
            })
            .collect();
        to_value(&ListSessionsResponse::new(sessions).next_cursor(page.next_cursor))
    }

    pub(super) async fn close_session(&self, p: CloseSessionRequest) -> Result<Value, RpcError> {
        let id = p.session_id.0.to_string();
        let Some(session) = lock(&self.inner.sessions).remove(&id) else {
            return Err(unknown_session(&id));
        };
        session.cancel_prompt();
        session.thread.set_client_tools(None);
        let thread = session.thread.clone();
        drop(session);
        // Nobody else holds it: stop it (its records are flushed; it can be loaded again).
        let manager = self.inner.host.manager();
        if manager.holders(&thread.id()) == 0 {
            manager.remove_thread(&thread.id());
            thread.shutdown(std::time::Duration::from_secs(10)).await;
        }
        to_value(&CloseSessionResponse::new())
    }

    pub(super) async fn set_mode(&self, p: SetSessionModeRequest) -> Result<Value, RpcError> {
        let session = self.session(&p.session_id.0)?;
        let options = {
            let mut s = lock(&session.settings);
            s.set_option(MODE_OPTION, &p.mode_id.0)
                .map_err(|e| RpcError::invalid_params("session/set_mode", e))?;
            s.config_options()
        };
        session
            .out
            .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                options,
            )))
            .await;
        to_value(&SetSessionModeResponse::new())
    }

    pub(super) async fn set_config_option(
        &self,
        p: SetSessionConfigOptionRequest,
    ) -> Result<Value, RpcError> {
        let session = self.session(&p.session_id.0)?;
        // Every option here is a select: its value is an id.
        let value = match &p.value {
            SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
            _ => {
                return Err(RpcError::invalid_params(
                    "session/set_config_option",
                    format!(
                        "option `{}` takes the id of one of its choices, not a boolean",
                        p.config_id.0
                    ),
                ));
            }
        };
        let (options, mode, mode_changed) = {
            let mut s = lock(&session.settings);
            let before = s.mode.clone();
            s.set_option(&p.config_id.0, &value)
                .map_err(|e| RpcError::invalid_params("session/set_config_option", e))?;
            (s.config_options(), s.mode.clone(), before != s.mode)
        };
        if mode_changed {
            session
                .out
                .send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    mode,
                )))
                .await;
        }
        to_value(&SetSessionConfigOptionResponse::new(options))
    }

    /// The config a session starts with: the server's settings, the session's folder, the
    /// client's MCP servers beside the configured ones.
    async fn load_config(
        &self,
        cwd: &Path,
        servers: &[McpServer],
        method: &str,
    ) -> Result<LoadedConfig, RpcError> {
        if !cwd.is_absolute() {
            return Err(RpcError::invalid_params(
                method,
                format!("cwd must be an absolute path, got `{}`", cwd.display()),
            ));
        }
        let client_servers =
            mcp_servers(servers).map_err(|e| RpcError::invalid_params(method, e))?;
        let mut load = self.inner.host.config_load();
        load.overrides.cwd = Some(cwd.to_path_buf());
        let dir = cwd.to_path_buf();
        let mut loaded = tokio::task::spawn_blocking(move || {
            if !dir.is_dir() {
                return Err(format!("cwd `{}` is not a directory", dir.display()));
            }
            oi_config::load_config(load).map_err(|e| format!("invalid configuration: {e}"))
        })
        .await
        .map_err(|e| RpcError::internal(format!("loading the config failed: {e}")))?
        .map_err(|e| RpcError::invalid_params(method, e))?;
        if let Some(review) = &loaded.config.project_config_review
            && !review.is_accepted()
        {
            return Err(RpcError::invalid_request(review.refusal()));
        }
        for w in &loaded.warnings {
            tracing::warn!("config: {w}");
        }
        for (name, server) in client_servers {
            if loaded.config.mcp_servers.contains_key(&name) {
                tracing::info!("the client's MCP server `{name}` replaces the configured one");
            }
            loaded.config.mcp_servers.insert(name, server);
        }
        Ok(loaded)
    }

    async fn home(&self) -> Result<PathBuf, RpcError> {
        let load = self.inner.host.config_load();
        tokio::task::spawn_blocking(move || oi_config::load_config(load))
            .await
            .map_err(|e| RpcError::internal(format!("loading the config failed: {e}")))?
            .map(|l| l.config.home)
            .map_err(|e| RpcError::invalid_request(format!("invalid configuration: {e}")))
    }

    /// Makes `new` a session of this connection, its client tools set from what the client
    /// offers.
    fn register(
        &self,
        new: NewThread,
        loaded: &LoadedConfig,
        client: &ClientCapabilities,
    ) -> Arc<AcpSession> {
        let id = new.thread_id.to_string();
        let planned = Arc::new(Mutex::new(HashMap::new()));
        let out = Arc::new(SessionOut::new(
            SessionId::new(id.clone()),
            self.inner.outgoing.clone(),
            Translator::live(planned.clone()),
        ));
        let tools = AcpClientTools {
            session_id: SessionId::new(id.clone()),
            outgoing: self.inner.outgoing.clone(),
            out: out.clone(),
            offered: Offered {
                read: client.fs.read_text_file,
                write: client.fs.write_text_file,
                terminal: client.terminal,
            },
            launcher: self.inner.options.sandbox_launcher.clone(),
            home: loaded.config.home.clone(),
            planned,
        };
        new.thread.set_client_tools(Some(Arc::new(tools)));
        let session = Arc::new(AcpSession {
            _hold: self.inner.host.manager().hold(new.thread_id),
            thread: new.thread,
            out,
            settings: Mutex::new(Settings::from_config(&loaded.config)),
            prompt: Mutex::new(None),
        });
        lock(&self.inner.sessions).insert(id, session.clone());
        session
    }

    /// After the response: the session's slash commands, then the models its provider
    /// lists as the model option's choices (asked after the response, so a slow or silent
    /// provider never holds up the session).
    fn after_response(
        &self,
        ctx: &RequestContext,
        session: &Arc<AcpSession>,
        config: &oi_config::Config,
    ) {
        let sent = ctx.response_sent();
        let session = session.clone();
        let provider = config.model_provider.clone();
        let home = config.home.clone();
        tokio::spawn(async move {
            sent.cancelled().await;
            session
                .out
                .send(SessionUpdate::AvailableCommandsUpdate(
                    AvailableCommandsUpdate::new(crate::prompt::commands()),
                ))
                .await;
            let listed = match oi_core::catalog::fetch_models(provider, &home, MODELS_TIMEOUT).await
            {
                Ok(models) => models,
                Err(e) => {
                    tracing::info!("the provider did not list its models: {e}");
                    return;
                }
            };
            let options = {
                let mut s = lock(&session.settings);
                let models: Vec<String> = listed
                    .into_iter()
                    .map(|m| m.id)
                    .filter(|id| !oi_core::catalog::is_hidden(id) && *id != s.model)
                    .collect();
                if models.is_empty() || models == s.models {
                    return;
                }
                s.models = models;
                s.config_options()
            };
            session
                .out
                .send(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    options,
                )))
                .await;
        });
    }
}

/// Why a client's MCP server cannot join a session.
#[derive(Debug, thiserror::Error, PartialEq)]
enum ClientServerError {
    #[error(
        "MCP server `{0}` uses SSE, which this agent does not support (it does not advertise `mcpCapabilities.sse`); use its streamable HTTP endpoint"
    )]
    Sse(String),
    #[error("an MCP server of a transport this agent does not know")]
    UnknownTransport,
    #[error("an MCP server has an empty name; give each server a name")]
    EmptyName,
}

/// The client's MCP servers as config entries.
fn mcp_servers(servers: &[McpServer]) -> Result<Vec<(String, McpServerConfig)>, ClientServerError> {
    let mut out = Vec::new();
    for s in servers {
        let (name, config) = match s {
            McpServer::Stdio(s) => {
                let mut c = McpServerConfig::stdio(s.command.display().to_string(), s.args.clone());
                if let McpServerTransportConfig::Stdio { env, .. } = &mut c.transport {
                    for v in &s.env {
                        env.insert(v.name.clone(), v.value.clone());
                    }
                }
                (s.name.clone(), c)
            }
            McpServer::Http(h) => {
                let mut c = McpServerConfig::http(h.url.clone());
                if let McpServerTransportConfig::StreamableHttp { http_headers, .. } =
                    &mut c.transport
                {
                    for v in &h.headers {
                        http_headers.insert(v.name.clone(), v.value.clone());
                    }
                }
                (h.name.clone(), c)
            }
            McpServer::Sse(s) => {
                return Err(ClientServerError::Sse(s.name.clone()));
            }
            _ => return Err(ClientServerError::UnknownTransport),
        };
        if name.trim().is_empty() {
            return Err(ClientServerError::EmptyName);
        }
        out.push((name, config));
    }
    Ok(out)
}

fn unknown_session(id: &str) -> RpcError {
    RpcError::new(
        RESOURCE_NOT_FOUND,
        format!(
            "unknown session `{id}`: no stored session has this id; list them with session/list"
        ),
    )
}

fn start_error(e: CoreError) -> RpcError {
    match e {
        CoreError::Config(m) | CoreError::Mcp(m) => RpcError::invalid_request(m),
        other => RpcError::internal(other),
    }
}

fn rfc3339(unix_seconds: i64) -> Option<String> {
    chrono::DateTime::from_timestamp(unix_seconds, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_mcp_servers_become_config_entries_and_sse_is_refused() {
        let servers: Vec<McpServer> = serde_json::from_value(serde_json::json!([
            {"name": "fs", "command": "/bin/srv", "args": ["-x"], "env": [{"name": "K", "value": "v"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": [{"name": "X-A", "value": "1"}]}
        ]))
        .unwrap();
        let got = mcp_servers(&servers).unwrap();
        assert_eq!(got[0].0, "fs");
        assert!(
            matches!(&got[0].1.transport, McpServerTransportConfig::Stdio { command, args, env, .. }
            if command == "/bin/srv" && args == &["-x"] && env.get("K").map(String::as_str) == Some("v"))
        );
        assert!(
            matches!(&got[1].1.transport, McpServerTransportConfig::StreamableHttp { url, http_headers, .. }
            if url == "http://127.0.0.1:9/mcp" && http_headers.get("X-A").map(String::as_str) == Some("1"))
        );
        let sse: Vec<McpServer> = serde_json::from_value(serde_json::json!([
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
        ]))
        .unwrap();
        assert!(mcp_servers(&sse).unwrap_err().to_string().contains("SSE"));
    }
}
