//! The crate map, checked against `cargo metadata`: every workspace crate is in the map, and
//! its dependencies on other workspace crates are the ones the map allows. A new edge between
//! crates is a design decision: change `ALLOWED` and ARCHITECTURE.md in the same commit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use super::{Failure, Workspace, report};

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

pub(super) struct Package {
    /// The crate's folder relative to the workspace root, e.g. `crates/core`.
    dir: String,
    deps: BTreeSet<String>,
}

pub(super) fn workspace_packages(root: &Path) -> BTreeMap<String, Package> {
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

pub(super) fn crate_dependencies_follow_the_architecture_map(
    ws: &Workspace,
) -> Result<(), Failure> {
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
                "{name} is not in ALLOWED (xtask/src/tidy/crate_map.rs): add it, with its allowed dependencies"
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

pub(super) fn the_engine_knows_no_front_end(ws: &Workspace) -> Result<(), Failure> {
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
