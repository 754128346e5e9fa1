//! `interpreter mcp call NAME [TOOL]` (hidden): connect to one configured server as a session
//! does (the same connection manager, OAuth and all), print its tools one per line, and call
//! `TOOL` with `--arguments`, printing the result as JSON. The MCP conformance suite's client
//! scenarios drive our client through it (tests/conformance/client-adapter.mjs).

use super::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
use crate::out::outln;
use clap::Args;
use futures::future::BoxFuture;
use oi_config::mcp::McpServerConfig;
use oi_mcp_client::oauth_session::OAuthBrowser;
use oi_mcp_client::{
    DeclineElicitations, ElicitationHandler, McpConnectionManager, McpStartOptions,
};
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Args, Debug)]
pub(crate) struct CallArgs {
    /// Name of a configured server.
    pub name: String,
    /// The tool to call; without it, only the tools are listed.
    pub tool: Option<String>,
    /// The tool's arguments, a JSON object.
    #[arg(long, value_name = "JSON")]
    pub arguments: Option<String>,
    /// Accept every elicitation with the form as offered (its defaults).
    #[arg(long)]
    pub accept_elicitations: bool,
    /// Let the server ask for an OAuth login (or more scopes) during the session: the
    /// authorization URL is printed and opened with $BROWSER (or the desktop opener).
    #[arg(long)]
    pub authorize: bool,
}

/// Accepts with an empty answer: the client fills in the form's defaults (SEP-1034).
struct AcceptElicitations;

impl ElicitationHandler for AcceptElicitations {
    fn elicit(
        &self,
        _server: String,
        _request_id: serde_json::Value,
        _params: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse> {
        Box::pin(async {
            ElicitationResponse {
                action: ElicitationAction::Accept,
                content: Some(serde_json::json!({})),
            }
        })
    }
}

/// Prints the URL (on stderr, so stdout stays the tool output) and opens it.
struct Browser;

impl OAuthBrowser for Browser {
    fn open(&self, server: &str, url: &str) {
        eprintln!("Authorize `{server}` by opening this URL in your browser:\n{url}");
        if !super::oauth::open_browser(url) {
            eprintln!("(Browser launch failed; please copy the URL above manually.)");
        }
    }
}

pub(super) async fn run(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    oauth_store: oi_config::OAuthCredentialsStoreMode,
    args: CallArgs,
) -> i32 {
    let Some(config) = servers.get(&args.name) else {
        eprintln!("error: No MCP server named '{}' found.", args.name);
        return EXIT_FAILURE;
    };
    let arguments = match args.arguments.as_deref().map(serde_json::from_str) {
        None => None,
        Some(Ok(serde_json::Value::Object(map))) => Some(map),
        Some(_) => {
            eprintln!("error: --arguments must be a JSON object, e.g. '{{\"a\": 1}}'");
            return EXIT_USAGE;
        }
    };
    let mut config = config.clone();
    config.enabled = true;
    config.required = true;
    let elicitation: Arc<dyn ElicitationHandler> = if args.accept_elicitations {
        Arc::new(AcceptElicitations)
    } else {
        Arc::new(DeclineElicitations)
    };
    let opts = McpStartOptions {
        cwd: std::env::current_dir().unwrap_or_else(|_| home.to_path_buf()),
        home: home.to_path_buf(),
        elicitation,
        startup_wait: oi_mcp_client::StartupWait::UntilReadyOrFailed,
        oauth_browser: args
            .authorize
            .then(|| Arc::new(Browser) as Arc<dyn OAuthBrowser>),
        // A test command has no model: sampling is offered to no server.
        sampling: None,
        oauth_store,
    };
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let servers = BTreeMap::from([(args.name.clone(), config)]);
    let manager = match McpConnectionManager::start(servers, opts, tx).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    for tool in manager.tools().iter().filter(|t| t.server == args.name) {
        outln!("{}", tool.tool);
    }
    let code = match &args.tool {
        None => EXIT_OK,
        Some(tool) => {
            let result = manager
                .call_tool(&args.name, tool, arguments, None, CancellationToken::new())
                .await;
            match result {
                Ok(json) => {
                    outln!("{json}");
                    let failed = json.get("isError").and_then(serde_json::Value::as_bool);
                    if failed == Some(true) {
                        EXIT_FAILURE
                    } else {
                        EXIT_OK
                    }
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_FAILURE
                }
            }
        }
    };
    manager.shutdown().await;
    code
}
