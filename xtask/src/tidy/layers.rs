//! Who may do what, where: children are spawned through `oi-process`, only the host serves,
//! HTTP clients come from `oi-http`, the v2 wire and the MCP server's requests to its client
//! go through their declarations, and front ends reach storage, MCP, the catalog and git through the engine.

use std::collections::BTreeSet;

use super::scan::{calls_of, find_all};
use super::{Failure, Workspace, report};

/// Files that start a child process without `oi-process`, and why.
const SPAWN_EXCEPTIONS: &[(&str, &str)] = &[
    (
        "crates/cli/src/mcp_cmd/oauth.rs",
        "the browser opener is detached on purpose: the browser it starts must outlive \
         `interpreter mcp login` (stdio is null, so it holds nothing of ours)",
    ),
    (
        "crates/cli/src/bin/interpreter-mcp-server.rs",
        "replaces itself with `interpreter` (`exec`): no child is made",
    ),
    (
        "crates/tui/src/editor.rs",
        "Ctrl+G's editor must be in the terminal's foreground process group to read keys \
         (its own group would be stopped by SIGTTIN); the TUI waits for it, with its input \
         paused, before it draws again",
    ),
    (
        "crates/local-model/src/state.rs",
        "the local model's daemon (`interpreter local-model serve`) must outlive the run that \
         starts it, so the next run reuses the loaded model; it leaves our session on purpose \
         (stdio is null or its log), stops itself when unused, and its llama-server is supervised \
         by it",
    ),
    (
        "crates/thread-store/src/test_db.rs",
        "test helper (a throw-away PostgreSQL server per test run); no product path calls it",
    ),
];

/// Where a child may be built with `Command::new(` (std's or tokio's): the process layer
/// itself, the sandbox (its keeper confines the child) and the engine's exec layer (which
/// hands each command to the sandbox or to `oi_process::supervise`).
const SPAWN_LAYERS: &[&str] = &[
    "crates/process/",
    "crates/sandbox/",
    "crates/core/src/exec.rs",
];

/// **Children are built only in the process, sandbox and exec layers.** Everywhere else a
/// child comes from `oi_process::command` / `command_std`, which return it supervised (own
/// process group, killed with the agent; tokio's also killed on drop), so no call site can
/// forget to. A direct `Command::new(` outside [`SPAWN_LAYERS`] needs an entry in
/// [`SPAWN_EXCEPTIONS`] saying why. Limits: a textual scan for `Command::new(`; a command
/// built through another constructor (`Command::from`, a library) is not seen.
pub(super) fn children_are_spawned_through_oi_process(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for s in sources {
        if SPAWN_LAYERS.iter().any(|l| s.path.starts_with(l)) {
            continue;
        }
        let spawns = find_all(&s.code, "Command::new(");
        let Some(first) = spawns.first() else {
            continue;
        };
        if SPAWN_EXCEPTIONS.iter().any(|(p, _)| *p == s.path) {
            used.insert(s.path.clone());
            continue;
        }
        problems.push(format!(
            "{}:{}: a child is built outside the process, sandbox and exec layers: use \
             oi_process::command (or command_std), which supervises it",
            s.path,
            s.line_of(*first)
        ));
    }
    let unused = SPAWN_EXCEPTIONS
        .iter()
        .filter(|(p, _)| !used.contains(*p))
        .map(|(p, _)| p.to_string())
        .collect();
    report("children started around oi-process", problems, unused)
}

/// Product files besides `oi-host` that serve a connection themselves, and why.
const SERVING_EXCEPTIONS: &[(&str, &str)] = &[(
    "crates/mcp-server/src/lib.rs",
    "`serve`: the MCP methods over a scripted engine, the seam protocol tests use; the real engine is only served by oi-host",
)];

/// **Only the host serves.** Serving a connection (`serve_connection(`), an HTTP or
/// WebSocket listener (`http::serve_http(`), stdin (`ThreadStdin::spawn(`) and exiting on a
/// termination signal's code (`.exit_code()`) happen in `crates/host/` (and are defined in
/// `crates/jsonrpc/`, `crates/process/`); the services are method tables. Limits: a textual
/// scan for those calls; serving through another library would not be seen.
pub(super) fn only_the_host_serves_connections(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    let server_crates = [
        "crates/mcp-server/",
        "crates/app-server/",
        "crates/cli/src/mcp_server_cmd.rs",
    ];
    for s in sources {
        if ["crates/host/", "crates/jsonrpc/", "crates/process/"]
            .iter()
            .any(|k| s.path.starts_with(k))
        {
            continue;
        }
        let mut calls: Vec<usize> = [
            "serve_connection(",
            "http::serve_http(",
            "ThreadStdin::spawn(",
        ]
        .iter()
        .flat_map(|c| calls_of(&s.code, c))
        .collect();
        // Front ends like `exec` and the TUI exit on a signal's code too; the servers don't.
        if server_crates.iter().any(|k| s.path.starts_with(k)) {
            calls.extend(find_all(&s.code, ".exit_code()"));
        }
        let Some(first) = calls.iter().min() else {
            continue;
        };
        if SERVING_EXCEPTIONS.iter().any(|(p, _)| *p == s.path) {
            used.insert(s.path.clone());
            continue;
        }
        problems.push(format!(
            "{}:{}: serves a connection itself; build a method table and let oi_host serve it",
            s.path,
            s.line_of(*first)
        ));
    }
    let unused = SERVING_EXCEPTIONS
        .iter()
        .filter(|(p, _)| !used.contains(*p))
        .map(|(p, _)| p.to_string())
        .collect();
    report("connections served outside oi-host", problems, unused)
}

/// Every HTTP client is built by `oi-http`, whose TLS configuration reads the system's root
/// certificates on the first certificate check: a client built another way reads them when
/// it is built, at every start, even for a plain `http://` model server. Limits: a textual
/// scan for reqwest's and rmcp's client constructors.
pub(super) fn http_clients_are_built_by_oi_http(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    for s in sources {
        if s.path.starts_with("crates/http/") {
            continue;
        }
        for pat in [
            "Client::builder(",
            "Client::new(",
            "Client::default(",
            "StreamableHttpClientTransport::from_config(",
            "StreamableHttpClientTransport::from_uri(",
        ] {
            for at in find_all(&s.code, pat) {
                problems.push(format!(
                    "{}:{}: `{pat}` builds an HTTP client that reads the root certificates at once; use oi_http::client_builder()",
                    s.path,
                    s.line_of(at)
                ));
            }
        }
    }
    report("HTTP clients built outside oi-http", problems, Vec::new())
}

/// The places in `oi-app-server` where a declaration becomes wire text, and what each does.
const V2_WIRE_EDGES: &[(&str, &str, &str)] = &[
    (
        "crates/app-server/src/lib.rs",
        ".request(",
        "registers a declared request (`method_decoding`: name and params from `M`)",
    ),
    (
        "crates/app-server/src/notify.rs",
        "notify_stamped(",
        "sends a declared notification (`Note`, built only by `Note::of::<N>`)",
    ),
    (
        "crates/app-server/src/notify.rs",
        ".ask(",
        "asks a declared server request (`Outgoing::ask::<M>`, the reply read as `M::Result`)",
    ),
];

/// **The v2 wire is declared in `oi-app-server-protocol`, and the server speaks it only
/// through the declarations.** Product code of `oi-app-server` derives no JSON Schema (a
/// wire type declared there would miss the schema and the schema test), writes no declared
/// method's name as a string (it names the declaration: `method::<m::X>`, `m::X::NAME`),
/// and turns a declaration into wire text only at the edges in [`V2_WIRE_EDGES`]:
/// registering (`.request(`), notifying (`notify_stamped(`) and asking the client
/// (`.ask(`) happen in those files only. Limits: textual; a method name built at run time,
/// or one of these calls under another name, is not seen.
pub(super) fn the_v2_wire_is_declared_in_its_protocol_crate(ws: &Workspace) -> Result<(), Failure> {
    let declared: BTreeSet<&str> = oi_app_server_protocol::export::methods()
        .iter()
        .map(|m| m.method)
        .collect();
    let sources = &ws.sources;
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for s in sources
        .iter()
        .filter(|s| s.path.starts_with("crates/app-server/src/"))
    {
        for pat in ["JsonSchema", "schemars"] {
            for at in find_all(&s.code, pat) {
                problems.push(format!(
                    "{}:{}: `{pat}`: declare wire types in oi-app-server-protocol, where the schema and its test see them",
                    s.path,
                    s.line_of(at)
                ));
            }
        }
        for (at, text) in &s.literals {
            if declared.contains(text.as_str()) {
                problems.push(format!(
                    "{}:{}: the method name \"{text}\" as a string; name its declaration (`m::X::NAME`, `method::<m::X>`)",
                    s.path,
                    s.line_of(*at)
                ));
            }
        }
        for (file, pat, _) in V2_WIRE_EDGES {
            for at in find_all(&s.code, pat) {
                if s.path == *file {
                    used.insert((*file, *pat));
                } else {
                    problems.push(format!(
                        "{}:{}: `{pat}` outside {file}: go through the declaration there",
                        s.path,
                        s.line_of(at)
                    ));
                }
            }
        }
    }
    let unused = V2_WIRE_EDGES
        .iter()
        .filter(|(f, p, _)| !used.contains(&(*f, *p)))
        .map(|(f, p, _)| format!("{f} `{p}`"))
        .collect();
    report("the v2 wire outside its declarations", problems, unused)
}

/// The one place in `oi-mcp-server` where a declared server→client request goes out, and
/// the MCP methods a server sends its client, written as strings only where declared
/// (`protocol::client_requests`).
const MCP_ASK_EDGE: (&str, &str) = ("crates/mcp-server/src/asking.rs", ".ask(");
const MCP_CLIENT_REQUEST_METHODS: &[&str] =
    &["elicitation/create", "sampling/createMessage", "roots/list"];
const MCP_CLIENT_REQUESTS_FILE: &str = "crates/mcp-server/src/protocol/client_requests.rs";

/// **The MCP server asks its client only through declared requests.** In product code of
/// `oi-mcp-server`, the connection's untyped `.ask(` is called only in `asking.rs` (whose
/// `ask::<M>` encodes `M::Params` and decodes `M::Result`), nothing sends a raw request
/// (`outgoing.request(`), and the name of a server→client method is written as a string
/// only where it is declared. Limits: textual; a call under another name is not seen.
pub(super) fn the_mcp_server_asks_the_client_through_declarations(
    ws: &Workspace,
) -> Result<(), Failure> {
    let (edge_file, edge) = MCP_ASK_EDGE;
    let mut problems = Vec::new();
    let mut used = false;
    for s in ws
        .sources
        .iter()
        .filter(|s| s.path.starts_with("crates/mcp-server/src/"))
    {
        for at in find_all(&s.code, edge) {
            if s.path == edge_file {
                used = true;
            } else {
                problems.push(format!(
                    "{}:{}: `{edge}` outside {edge_file}: declare the request in protocol::client_requests and use asking::ask::<M>",
                    s.path,
                    s.line_of(at)
                ));
            }
        }
        for at in find_all(&s.code, "outgoing.request(") {
            problems.push(format!(
                "{}:{}: a raw request to the client; declare it and use asking::ask::<M>",
                s.path,
                s.line_of(at)
            ));
        }
        for (at, text) in &s.literals {
            if s.path != MCP_CLIENT_REQUESTS_FILE
                && MCP_CLIENT_REQUEST_METHODS.contains(&text.as_str())
            {
                problems.push(format!(
                    "{}:{}: the method name \"{text}\" as a string; name its declaration (`M::METHOD`)",
                    s.path,
                    s.line_of(*at)
                ));
            }
        }
    }
    let unused = if used {
        Vec::new()
    } else {
        vec![format!("{edge_file} `{edge}`")]
    };
    report(
        "MCP server requests to the client outside their declarations",
        problems,
        unused,
    )
}

/// What front ends reach around the engine for, and the engine's façade that offers it.
/// Each entry: a text the scan looks for, and the call to make instead.
const AROUND_THE_ENGINE: &[(&str, &str)] = &[
    (
        "thread_store()",
        "use ThreadManager::stored_threads(home) (list, get, load, outline, rename, archive, delete)",
    ),
    (
        "open_store(",
        "use ThreadManager::stored_threads(home) (list, get, load, outline, rename, archive, delete)",
    ),
    (
        "open_thread_store",
        "use ThreadManager::stored_threads(home) (list, get, load, outline, rename, archive, delete)",
    ),
    (
        "oi_thread_store",
        "use the store's types as oi_core re-exports them, its operations through ThreadManager::stored_threads",
    ),
    (
        "oi_mcp_client",
        "use oi_core::mcp (server status, prompts and resources, OAuth login) and Thread::mcp_status / mcp_manager",
    ),
    (
        "oi_model_client::catalog",
        "use oi_core::catalog (fetch_models, is_hidden, builtin_info, ModelInfo)",
    ),
    (
        "oi_core::git",
        "use oi_core::working_tree_diff(cwd, WorkingTreeBase::Head | ClosestRemote)",
    ),
];

/// **Front ends reach storage, MCP servers, the model catalog and the working tree through
/// the engine**: product code of `oi-app-server`, `oi-acp` and `oi-tui` does not open the thread store or
/// name `oi_thread_store` (stored threads are `ThreadManager::stored_threads`, over the store
/// the engine opened, on its async seam), does not name `oi_mcp_client` (it is
/// `oi_core::mcp`), does not name `oi_model_client::catalog` (it is
/// `oi_core::catalog`) and does not run `git` through `oi_core::git` (it is
/// `oi_core::working_tree_diff`). Limits: a textual scan of those two crates for the names
/// in [`AROUND_THE_ENGINE`]; a re-export under another name, or a reach-around through a
/// crate that is not named, is not seen (the dependency map keeps `oi-thread-store`,
/// `oi-mcp-client` and `oi-model-client` out of their dependencies).
pub(super) fn front_ends_reach_storage_catalog_and_git_through_the_engine(
    ws: &Workspace,
) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    for s in sources.iter().filter(|s| {
        s.path.starts_with("crates/app-server/src/")
            || s.path.starts_with("crates/tui/src/")
            || s.path.starts_with("crates/acp/src/")
    }) {
        for (pat, fix) in AROUND_THE_ENGINE {
            for at in find_all(&s.code, pat) {
                problems.push(format!(
                    "{}:{}: `{pat}` reaches around the engine; {fix}",
                    s.path,
                    s.line_of(at)
                ));
            }
        }
    }
    report(
        "front ends reaching around the engine",
        problems,
        Vec::new(),
    )
}
