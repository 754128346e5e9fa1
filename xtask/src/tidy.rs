//! The invariants of ARCHITECTURE.md that can be read from the workspace itself (`cargo xtask
//! tidy`, and this crate's tests). Two kinds:
//!
//! - The crate map, checked against `cargo metadata`: every workspace crate is in the map, and
//!   its dependencies on other workspace crates are the ones the map allows. A new edge between
//!   crates is a design decision: change `ALLOWED` and ARCHITECTURE.md in the same commit.
//! - Tidy checks on the source text (below, over [`scan`]).
//!
//! Every rule, allow-list and ceiling is a constant in this file, next to the check that reads
//! it; [`CHECKS`] lists the checks.

mod scan;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use scan::{Source, async_bodies, awaited, calls_of, find_all, is_ident, matching, sync_fns};

/// Every check, by the name ARCHITECTURE.md gives it.
pub(crate) const CHECKS: &[(&str, Check)] = &[
    (
        "crate_dependencies_follow_the_architecture_map",
        crate_dependencies_follow_the_architecture_map,
    ),
    (
        "the_engine_knows_no_front_end",
        the_engine_knows_no_front_end,
    ),
    (
        "children_are_spawned_through_oi_process",
        children_are_spawned_through_oi_process,
    ),
    (
        "only_the_host_serves_connections",
        only_the_host_serves_connections,
    ),
    (
        "http_clients_are_built_by_oi_http",
        http_clients_are_built_by_oi_http,
    ),
    (
        "the_v2_wire_is_declared_in_its_protocol_crate",
        the_v2_wire_is_declared_in_its_protocol_crate,
    ),
    (
        "front_ends_reach_storage_catalog_and_git_through_the_engine",
        front_ends_reach_storage_catalog_and_git_through_the_engine,
    ),
    (
        "servers_do_not_block_async_workers",
        servers_do_not_block_async_workers,
    ),
    (
        "each_user_file_is_named_by_one_module",
        each_user_file_is_named_by_one_module,
    ),
    (
        "the_postgres_backend_does_not_import_the_local_one",
        the_postgres_backend_does_not_import_the_local_one,
    ),
    (
        "errors_do_not_flatten_to_strings",
        errors_do_not_flatten_to_strings,
    ),
];

/// A check: passes, or fails with what it found.
pub(crate) type Check = fn(&Workspace) -> Result<(), Failure>;

/// A check that failed: what it guards against, and each problem found (with a file and line
/// where there is one).
#[derive(Debug)]
pub(crate) struct Failure {
    what: String,
    problems: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:\n{}", self.what, self.problems.join("\n"))
    }
}

/// What the checks read, read once: the workspace's crates and its product sources.
pub(crate) struct Workspace {
    root: PathBuf,
    packages: BTreeMap<String, Package>,
    sources: Vec<Source>,
}

impl Workspace {
    /// Reads the workspace this crate belongs to.
    pub(crate) fn load() -> Workspace {
        let root = workspace_root();
        Workspace {
            packages: workspace_packages(&root),
            sources: scan::product_sources(&root),
            root,
        }
    }
}

/// Each workspace crate and the workspace crates it may depend on (normal and build
/// dependencies; dev-dependencies are free: tests may use anything).
const ALLOWED: &[(&str, &[&str])] = &[
    ("oi-protocol", &[]),
    ("oi-process", &[]),
    ("oi-file-search", &[]),
    ("oi-jsonrpc", &[]),
    ("oi-http", &[]),
    ("oi-local-model", &["oi-http", "oi-process"]),
    ("oi-config", &["oi-protocol"]),
    ("oi-apply-patch", &["oi-protocol"]),
    // The v2 wire as types: the engine's own wire types, nothing that does I/O.
    ("oi-app-server-protocol", &["oi-protocol"]),
    ("oi-thread-store", &["oi-process", "oi-protocol"]),
    ("oi-sandbox", &["oi-protocol", "oi-process"]),
    ("oi-model-client", &["oi-config", "oi-http", "oi-protocol"]),
    (
        "oi-mcp-client",
        &["oi-config", "oi-http", "oi-process", "oi-protocol"],
    ),
    ("oi-test-support", &["oi-config", "oi-protocol"]),
    (
        "oi-core",
        &[
            "oi-apply-patch",
            "oi-config",
            "oi-mcp-client",
            "oi-model-client",
            "oi-process",
            "oi-protocol",
            "oi-sandbox",
            "oi-thread-store",
        ],
    ),
    // The neutral host: one engine serving method tables; it knows no wire method.
    (
        "oi-host",
        &["oi-config", "oi-core", "oi-jsonrpc", "oi-process"],
    ),
    (
        "oi-mcp-server",
        &[
            "oi-config",
            "oi-core",
            "oi-host",
            "oi-jsonrpc",
            "oi-protocol",
        ],
    ),
    (
        "oi-app-server",
        &[
            "oi-app-server-protocol",
            "oi-config",
            "oi-core",
            "oi-file-search",
            "oi-host",
            "oi-jsonrpc",
            "oi-protocol",
        ],
    ),
    // The Agent Client Protocol service: a third sibling, over the engine's façade only.
    (
        "oi-acp",
        &[
            "oi-config",
            "oi-core",
            "oi-host",
            "oi-jsonrpc",
            "oi-protocol",
        ],
    ),
    (
        "oi-tui",
        &[
            "oi-config",
            "oi-core",
            "oi-file-search",
            // Termination signals, like every other front end.
            "oi-process",
            "oi-protocol",
        ],
    ),
    (
        "oi-cli",
        &[
            "oi-acp",
            "oi-app-server",
            // `generate-json-schema` writes the wire's schema.
            "oi-app-server-protocol",
            "oi-config",
            "oi-core",
            "oi-host",
            "oi-jsonrpc",
            "oi-local-model",
            // `interpreter mcp list/get/call/login/logout` are a standalone MCP client (no
            // engine, no thread): the binary wires the client library for them directly.
            "oi-mcp-client",
            "oi-mcp-server",
            "oi-process",
            "oi-protocol",
            "oi-sandbox",
            "oi-tui",
        ],
    ),
    // Repository tasks (`cargo xtask tidy`): the v2 method list is one of the rules' inputs.
    ("xtask", &["oi-app-server-protocol"]),
];

struct Package {
    /// The crate's folder relative to the workspace root, e.g. `crates/core`.
    dir: String,
    deps: BTreeSet<String>,
}

fn workspace_packages(root: &Path) -> BTreeMap<String, Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata JSON");
    let mut packages = BTreeMap::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name").to_string();
        let manifest = Path::new(p["manifest_path"].as_str().expect("manifest_path"));
        let dir = manifest
            .parent()
            .and_then(|d| d.strip_prefix(root).ok())
            .expect("crate inside the workspace")
            .display()
            .to_string();
        let deps = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str())
            .filter(|n| n.starts_with("oi-"))
            .map(str::to_string)
            .collect();
        packages.insert(name, Package { dir, deps });
    }
    packages
}

fn crate_dependencies_follow_the_architecture_map(ws: &Workspace) -> Result<(), Failure> {
    let (root, packages) = (&ws.root, &ws.packages);
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(name, deps)| (*name, deps.iter().copied().collect()))
        .collect();
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");

    let mut problems = Vec::new();
    for (name, package) in packages {
        let Some(ok) = allowed.get(name.as_str()) else {
            problems.push(format!(
                "{name} is not in ALLOWED (xtask/src/tidy.rs): add it, with its allowed dependencies"
            ));
            continue;
        };
        for dep in &package.deps {
            if !ok.contains(dep.as_str()) {
                problems.push(format!(
                    "{name} depends on {dep}, which the architecture does not allow"
                ));
            }
        }
        let entry = format!("`{}` (`{name}`)", package.dir);
        if !architecture.contains(&entry) {
            problems.push(format!("ARCHITECTURE.md's code map has no row for {entry}"));
        }
    }
    for name in allowed.keys() {
        if !packages.contains_key(*name) {
            problems.push(format!(
                "ALLOWED names {name}, which is not a workspace crate any more"
            ));
        }
    }
    report("the crate map", problems, Vec::new())
}

fn the_engine_knows_no_front_end(ws: &Workspace) -> Result<(), Failure> {
    // The invariant behind every row above, stated once more so a widened ALLOWED map
    // cannot quietly break it: oi-core and the libraries below it never depend on a front end.
    let packages = &ws.packages;
    let mut problems = Vec::new();
    // The host is not a front end, but it serves them: nothing the engine builds on may
    // depend on it either.
    let front_ends = [
        "oi-cli",
        "oi-tui",
        "oi-mcp-server",
        "oi-app-server",
        "oi-acp",
        "oi-host",
    ];
    // The services are siblings: none may reach into another.
    for (service, sibling) in [
        ("oi-mcp-server", "oi-app-server"),
        ("oi-app-server", "oi-mcp-server"),
        ("oi-acp", "oi-mcp-server"),
        ("oi-acp", "oi-app-server"),
        ("oi-mcp-server", "oi-acp"),
        ("oi-app-server", "oi-acp"),
    ] {
        if let Some(package) = packages.get(service)
            && package.deps.contains(sibling)
        {
            problems.push(format!(
                "{service} depends on its sibling {sibling}; share code through oi-host, oi-jsonrpc or oi-core"
            ));
        }
    }
    // The host serves method tables; it must not know whose.
    if let Some(host) = packages.get("oi-host") {
        for service in [
            "oi-mcp-server",
            "oi-app-server",
            "oi-acp",
            "oi-cli",
            "oi-tui",
        ] {
            if host.deps.contains(service) {
                problems.push(format!(
                    "oi-host depends on {service}; the host serves tables, the CLI composes them"
                ));
            }
        }
    }
    for (name, package) in packages {
        if front_ends.contains(&name.as_str()) {
            continue;
        }
        for dep in &package.deps {
            if front_ends.contains(&dep.as_str()) {
                problems.push(format!("{name} depends on the front end {dep}"));
            }
        }
    }
    report("front ends below the engine", problems, Vec::new())
}

// ---------------------------------------------------------------------------------------
// Tidy checks (the rust-analyzer way): invariants read from the source text itself.
//
// They are textual on purpose: a scan of the files, with comments, string contents and
// test-only code blanked out first, is fast, has no dependencies and fails with a file and a
// line. What each one holds, and what it cannot see, is said on its check. Product code is
// `crates/*/src/**.rs` minus test code: `#[cfg(test)]` items (and the files of
// `#[cfg(test)] mod x;`); `oi-test-support`, integration tests, benches and examples are
// test code. Every allow-list entry gives its reason, and an entry that no longer matches
// anything fails the check, so the lists only shrink.
// ---------------------------------------------------------------------------------------

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}
/// Fails with every problem found, after checking that each allow-list entry was used.
fn report(what: &str, mut problems: Vec<String>, unused: Vec<String>) -> Result<(), Failure> {
    for u in unused {
        problems.push(format!(
            "allow-list entry {u} matches nothing any more: remove it"
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Failure {
        what: what.to_string(),
        problems,
    })
}

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
fn children_are_spawned_through_oi_process(ws: &Workspace) -> Result<(), Failure> {
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
fn only_the_host_serves_connections(ws: &Workspace) -> Result<(), Failure> {
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
fn http_clients_are_built_by_oi_http(ws: &Workspace) -> Result<(), Failure> {
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
fn the_v2_wire_is_declared_in_its_protocol_crate(ws: &Workspace) -> Result<(), Failure> {
    let declared: BTreeSet<&str> = oi_app_server_protocol::schema::methods()
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
fn front_ends_reach_storage_catalog_and_git_through_the_engine(
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

/// Calls that block the thread they run on. Each is a text the scan looks for.
const BLOCKING_CALLS: &[&str] = &[
    "std::fs::",
    "File::open(",
    "File::create(",
    "std::thread::sleep(",
    // Config loads read the user's and the project's files.
    "load_config(",
    "load_session_config(",
    "thread_store_settings(",
    "mcp_state_key_file(",
    // `ThreadManager::store(&home)` / `Conn::store()`: the first open checks the index or
    // connects to PostgreSQL (up to 10 s).
    ".store(&",
    ".store()",
    // `.credentials.json`
    "credentials::",
    ".blocking_lock(",
    ".blocking_recv(",
    ".blocking_send(",
];

/// Blocking calls the servers still make on an async worker, each with its reason.
const BLOCKING_EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// The spans of `code` that run off the async workers: the arguments of `spawn_blocking(`,
/// the app-server's `blocking(`, `block_in_place(` and a thread's `spawn(`.
fn off_worker_spans(code: &str) -> Vec<(usize, usize)> {
    let b = code.as_bytes();
    // A closure handed to a `spawn` is a thread's (std's, or a `thread::Builder`'s): tokio's
    // `spawn` takes a future.
    [
        "spawn_blocking(",
        "blocking(",
        "block_in_place(",
        "spawn(move ||",
        "spawn(||",
    ]
    .iter()
    .flat_map(|pat| {
        let open = pat.find('(').unwrap_or(0);
        find_all(code, pat).into_iter().map(move |at| at + open)
    })
    .map(|open| (open, matching(b, open)))
    .collect()
}

/// **No blocking calls inside `async fn` bodies of the servers** (`oi-mcp-server`,
/// `oi-app-server`, `oi-acp`, `oi-jsonrpc`): a call from [`BLOCKING_CALLS`] inside an `async fn` or
/// `async` block must sit in the argument of `spawn_blocking(`/`blocking(` (or a thread of
/// its own), or be awaited (an async function of the same name, like `Conn::load_config`).
/// A plain `fn` of the same crate that makes such a call outside those spans is itself a
/// blocking call, found to a fixed point, so `self.load(…)` that loads config is seen.
/// Limits: helpers are matched by name within their crate, so a helper with a common name
/// (`load`) also flags unrelated calls of that name; calls into other crates are only the
/// ones [`BLOCKING_CALLS`] names, not every blocking function there is; a closure built in
/// an async body and run elsewhere is judged as if run in place.
fn servers_do_not_block_async_workers(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for krate in [
        "crates/host/",
        "crates/mcp-server/",
        "crates/app-server/",
        "crates/acp/",
        "crates/jsonrpc/",
    ] {
        let files: Vec<&Source> = sources
            .iter()
            .filter(|s| s.path.starts_with(krate))
            .collect();
        // Blocking calls of this crate: the listed ones, plus its plain functions that make
        // one on the calling thread (to a fixed point).
        let mut calls: Vec<String> = BLOCKING_CALLS.iter().map(|c| c.to_string()).collect();
        loop {
            let mut found: Vec<String> = Vec::new();
            for s in &files {
                let off = off_worker_spans(&s.code);
                let bodies = async_bodies(&s.code);
                for (name, open, close) in sync_fns(&s.code) {
                    let call = format!("{name}(");
                    if calls.contains(&call) || found.contains(&call) {
                        continue;
                    }
                    let blocks = calls.iter().any(|c| {
                        calls_of(&s.code, c).into_iter().any(|at| {
                            // A call in an async block the function returns is the
                            // block's, checked as such.
                            open < at
                                && at < close
                                && !off.iter().any(|(a, z)| *a < at && at < *z)
                                && !bodies.iter().any(|(a, z)| open < *a && *a < at && at < *z)
                                && !awaited(&s.code, at)
                        })
                    });
                    if blocks {
                        found.push(call);
                    }
                }
            }
            if found.is_empty() {
                break;
            }
            calls.extend(found);
        }
        problems.extend(blocking_in_async(&files, &calls, &mut used));
    }
    let unused = BLOCKING_EXCEPTIONS
        .iter()
        .filter(|(p, c, _)| !used.contains(&(p.to_string(), c.to_string())))
        .map(|(p, c, _)| format!("({p}, {c})"))
        .collect();
    report("blocking calls on async workers", problems, unused)
}

/// The calls from `calls` inside async bodies of `files` that run on the worker.
fn blocking_in_async(
    files: &[&Source],
    calls: &[String],
    used: &mut BTreeSet<(String, String)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for s in files {
        let bodies = async_bodies(&s.code);
        let off = off_worker_spans(&s.code);
        let mut seen = BTreeSet::new();
        for call in calls {
            for at in calls_of(&s.code, call) {
                let inside =
                    |spans: &[(usize, usize)]| spans.iter().any(|(a, z)| *a < at && at < *z);
                if !inside(&bodies) || inside(&off) || awaited(&s.code, at) {
                    continue;
                }
                if s.code[..at].ends_with("tokio::fs::") {
                    continue;
                }
                if BLOCKING_EXCEPTIONS
                    .iter()
                    .any(|(p, c, _)| *p == s.path && c == call)
                {
                    used.insert((s.path.clone(), call.clone()));
                    continue;
                }
                if seen.insert(at) {
                    problems.push(format!(
                        "{}:{}: `{call}` blocks an async worker: run it in \
                         tokio::task::spawn_blocking (app-server: `blocking`)",
                        s.path,
                        s.line_of(at)
                    ));
                }
            }
        }
    }
    problems
}

/// The files (and folders) of the user's home, each with the one module that names it.
/// Everyone else reaches them through that module (a constant or a `…_path` function), so
/// a file's name, location and format change in one place.
const USER_FILES: &[(&str, &str)] = &[
    ("config.toml", "crates/config/src/load.rs"),
    (".credentials.json", "crates/config/src/credentials.rs"),
    (".credentials.locks", "crates/config/src/credentials.rs"),
    (
        "accepted-project-configs.toml",
        "crates/config/src/project_consent.rs",
    ),
    ("history.jsonl", "crates/config/src/history.rs"),
    ("model-windows.json", "crates/core/src/window.rs"),
    ("listen-token", "crates/cli/src/listen_token.rs"),
    ("sessions", "crates/thread-store/src/store.rs"),
    ("state.sqlite", "crates/thread-store/src/store.rs"),
    ("session_index.jsonl", "crates/thread-store/src/store.rs"),
];

/// Folders of the user's home whose names are common words (`git log`): a naming is a
/// `.join("<name>")` of the literal.
const USER_FOLDERS: &[(&str, &str)] = &[
    ("log", "crates/config/src/owner_only.rs"),
    ("cache", "crates/mcp-client/src/cache.rs"),
];

/// **Each user file is named by one module**: the string literal of its name (exactly,
/// e.g. `"config.toml"`) appears in product code in its owner's file and nowhere else; for
/// the folders of [`USER_FOLDERS`], a `.join("<name>")` of it. Limits: a name inside a longer literal (a message, a format string like
/// `"{dir}/config.toml"`) is not a naming and is not seen; a name built from parts is not
/// seen either.
fn each_user_file_is_named_by_one_module(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let mut problems = Vec::new();
    for (name, owner) in USER_FILES.iter().chain(USER_FOLDERS) {
        let folder = USER_FOLDERS.iter().any(|(n, _)| n == name);
        let naming: Vec<(&Source, usize)> = sources
            .iter()
            .flat_map(|s| {
                s.literals
                    .iter()
                    .filter(|(_, text)| text == name)
                    .filter(move |(at, _)| !folder || s.code[..*at].ends_with(".join("))
                    .map(move |(at, _)| (s, *at))
            })
            .collect();
        if !naming.iter().any(|(s, _)| s.path == *owner) {
            problems.push(format!(
                "`{name}` is not named by its owner {owner} any more: update USER_FILES"
            ));
        }
        for (s, at) in naming.iter().filter(|(s, _)| s.path != *owner) {
            problems.push(format!(
                "{}:{}: names the user file `{name}`, which {owner} owns: use its constant \
                 or path function",
                s.path,
                s.line_of(*at)
            ));
        }
    }
    report("user files named twice", problems, Vec::new())
}

/// The local backend's modules in `oi-thread-store`: rollout files, the SQLite index,
/// the file scan, the names log, owner-only modes, the local store itself.
const LOCAL_BACKEND: &[&str] = &["store", "rollout", "index", "scan", "sidecar", "private"];

/// The modules of `oi-thread-store` that a module's code reaches by `crate::<module>` (in
/// paths and in `use crate::{…}` groups).
fn crate_modules_used(code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let b = code.as_bytes();
    let mut used = BTreeSet::new();
    for at in find_all(code, "crate::") {
        let rest = &code[at + "crate::".len()..];
        let names: Vec<&str> = if rest.starts_with('{') {
            let open = at + "crate::".len();
            code[open + 1..matching(b, open) - 1]
                .split(|c: char| !is_ident(c as u8) && c != ':')
                .filter_map(|p| p.split("::").next())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        used.extend(
            names
                .into_iter()
                .filter(|n| modules.contains(*n))
                .map(str::to_string),
        );
    }
    used
}

/// **The PostgreSQL backend does not import the local backend**: no module reachable from
/// `thread-store/src/postgres/` through `crate::…` paths is one of [`LOCAL_BACKEND`]; what
/// both backends need lives in neutral modules (`record`, `paging`, `outline`, `loaded`,
/// `types`, `error`). Limits: an item re-exported at the crate root (`crate::Item`) is
/// not traced to its module.
fn the_postgres_backend_does_not_import_the_local_one(ws: &Workspace) -> Result<(), Failure> {
    let sources = &ws.sources;
    let prefix = "crates/thread-store/src/";
    let module_of = |path: &str| -> String {
        let rel = &path[prefix.len()..];
        rel.split('/')
            .next()
            .unwrap_or(rel)
            .trim_end_matches(".rs")
            .to_string()
    };
    let store_files: Vec<&Source> = sources
        .iter()
        .filter(|s| s.path.starts_with(prefix))
        .collect();
    let modules: BTreeSet<String> = store_files.iter().map(|s| module_of(&s.path)).collect();
    if !(LOCAL_BACKEND.iter().all(|m| modules.contains(*m)) && modules.contains("postgres")) {
        let problem =
            format!("oi-thread-store's modules changed ({modules:?}): update LOCAL_BACKEND");
        return report("the thread store's modules", vec![problem], Vec::new());
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &store_files {
        edges
            .entry(module_of(&s.path))
            .or_default()
            .extend(crate_modules_used(&s.code, &modules));
    }
    // Walk from `postgres`, remembering how each module was reached.
    let mut via: BTreeMap<String, String> = BTreeMap::new();
    let mut todo = vec!["postgres".to_string()];
    while let Some(m) = todo.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if next != "postgres" && !via.contains_key(next) {
                via.insert(next.clone(), m.clone());
                todo.push(next.clone());
            }
        }
    }
    let mut problems = Vec::new();
    for local in LOCAL_BACKEND {
        if via.contains_key(*local) {
            let mut chain = vec![local.to_string()];
            while let Some(prev) = via.get(chain.last().expect("non-empty")) {
                chain.push(prev.clone());
            }
            chain.reverse();
            problems.push(format!(
                "the PostgreSQL backend reaches the local backend's `{local}`: {}; move what \
                 both need to a neutral module",
                chain.join(" -> ")
            ));
        }
    }
    report(
        "PostgreSQL backend importing the local one",
        problems,
        Vec::new(),
    )
}

/// The most `Result<_, String>` each crate's product code may write (see
/// [`errors_do_not_flatten_to_strings`]). Lower an entry when a seam gets a typed error;
/// never raise one: give the new seam an error type instead.
const STRING_ERROR_CEILING: &[(&str, usize)] = &[
    ("cli", 5),
    ("core", 4),
    ("protocol", 1),
    // The test-database helper's thread (`test_db.rs`).
    ("thread-store", 1),
    ("tui", 7),
];

/// The `Result<…, String>` types written in `code`: each `Result<` whose last generic
/// argument, at its own nesting level, is `String`.
fn string_results(code: &str) -> Vec<usize> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for at in find_all(code, "Result<") {
        let open = at + "Result".len();
        // `io::Result<String>` has one argument: no error type written.
        let (mut depth, mut i, mut last_arg) = (0usize, open, None);
        while i < b.len() {
            match b[i] {
                b'<' | b'(' | b'[' => depth += 1,
                // `->` inside `Fn(…) -> T` is not a closing bracket.
                b'>' if i > 0 && b[i - 1] == b'-' => {}
                b'>' | b')' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b',' if depth == 1 => last_arg = Some(i + 1),
                b';' | b'{' => break,
                _ => {}
            }
            i += 1;
        }
        if i < b.len() && b[i] == b'>' && last_arg.is_some_and(|a| code[a..i].trim() == "String") {
            out.push(at);
        }
    }
    out
}

/// **Errors do not flatten to strings at the seams** (`errors_do_not_flatten_to_strings`):
/// the number of `Result<…, String>` types in each crate's product code stays at or below
/// its entry in [`STRING_ERROR_CEILING`]. A seam that can fail
/// in ways its callers tell apart gets a `thiserror` enum (`StoreError`, `RecordError`,
/// `CoreError`, `OAuthError`, `McpRequestError`). Limits: a textual count per crate, not per seam; an alias of
/// `Result<T, String>` counts once where it is written; `Box<dyn Error>` is not counted.
fn errors_do_not_flatten_to_strings(ws: &Workspace) -> Result<(), Failure> {
    let mut counts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for src in &ws.sources {
        let krate = src
            .path
            .trim_start_matches("crates/")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        for at in string_results(&src.code) {
            let line = src.line_of(at);
            counts
                .entry(krate.clone())
                .or_default()
                .push(format!("{}:{line}", src.path));
        }
    }
    let mut problems = Vec::new();
    for (krate, sites) in &counts {
        let ceiling = STRING_ERROR_CEILING
            .iter()
            .find(|(k, _)| k == krate)
            .map_or(0, |(_, n)| *n);
        if sites.len() > ceiling {
            problems.push(format!(
                "{krate} has {} `Result<_, String>` (at most {ceiling}): give the new seam a \
                 typed error (thiserror) instead; they are at {}",
                sites.len(),
                sites.join(", ")
            ));
        }
    }
    for (krate, ceiling) in STRING_ERROR_CEILING {
        let n = counts.get(*krate).map_or(0, Vec::len);
        if n < *ceiling {
            problems.push(format!(
                "{krate} has {n} `Result<_, String>`, below its ceiling {ceiling}: lower \
                 STRING_ERROR_CEILING to {n} so it cannot grow back"
            ));
        }
    }
    report("errors flattened to strings", problems, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every check holds on this workspace: how `cargo test` (CI's `scripts/test.sh` runs
    /// `cargo xtask tidy` too, before the long build) fails on a broken invariant.
    #[test]
    fn tidy_checks_hold() {
        let ws = Workspace::load();
        let failures: Vec<String> = CHECKS
            .iter()
            .filter_map(|(name, check)| check(&ws).err().map(|f| format!("{name}: {f}")))
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    /// The check-specific scanners, on small sources: a check whose scanner went blind would
    /// pass on anything (the general scanner's own test is in `scan.rs`).
    #[test]
    fn tidy_scanners_see_what_they_look_for() {
        // Async bodies, and the spans that run elsewhere.
        let code = "async fn f(x: impl Fn()) { a(); blocking(move || b()).await; }\nfn g() -> F { Box::pin(async move { c() }) }\nfn h() { d() }";
        let bodies = async_bodies(code);
        let off = off_worker_spans(code);
        let inside = |spans: &[(usize, usize)], pat: &str| {
            let at = code.find(pat).unwrap();
            spans.iter().any(|(a, z)| *a < at && at < *z)
        };
        assert!(inside(&bodies, "a()") && inside(&bodies, "c()") && !inside(&bodies, "d()"));
        assert!(inside(&off, "b()") && !inside(&off, "a()"));
        assert!(awaited(code, code.find("blocking(").unwrap()));
        let names: Vec<String> = sync_fns(code).into_iter().map(|(n, _, _)| n).collect();
        assert_eq!(names, ["g", "h"]);

        // Module references, in paths and in groups.
        let modules: BTreeSet<String> = ["store", "record", "types"].map(String::from).into();
        let used = crate_modules_used(
            "use crate::{record::x, types::{A, B}};\nlet s = crate::store::open();",
            &modules,
        );
        assert_eq!(used, modules);

        // `Result<…, String>` at any nesting, not `Result<String, E>` nor a closure's arrow.
        let code = "fn a() -> Result<(), String> {}\nfn b() -> Result<String, E> {}\nfn c() -> Result<Box<dyn Fn(u8) -> u8>, String>;\nfn d() -> Option<Result<Vec<Action>, String>> {}";
        let found: Vec<&str> = string_results(code)
            .into_iter()
            .map(|at| &code[at..at + 9])
            .collect();
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(string_results("fn b() -> io::Result<String> {}").is_empty());
    }
}
