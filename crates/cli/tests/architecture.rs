//! The crate map of ARCHITECTURE.md, checked against `cargo metadata`: every workspace crate
//! is in the map, and its dependencies on other workspace crates are the ones the map allows.
//! A new edge between crates is a design decision: change `ALLOWED` and ARCHITECTURE.md in the
//! same commit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Each workspace crate and the workspace crates it may depend on (normal and build
/// dependencies; dev-dependencies are free: tests may use anything).
const ALLOWED: &[(&str, &[&str])] = &[
    ("oi-protocol", &[]),
    ("oi-process", &[]),
    ("oi-file-search", &[]),
    ("oi-jsonrpc", &[]),
    ("oi-config", &["oi-protocol"]),
    ("oi-apply-patch", &["oi-protocol"]),
    ("oi-thread-store", &["oi-process", "oi-protocol"]),
    ("oi-sandbox", &["oi-protocol", "oi-process"]),
    ("oi-model-client", &["oi-config", "oi-protocol"]),
    ("oi-mcp-client", &["oi-config", "oi-protocol", "oi-process"]),
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
    (
        "oi-mcp-server",
        &[
            "oi-config",
            "oi-core",
            "oi-jsonrpc",
            "oi-process",
            "oi-protocol",
        ],
    ),
    (
        "oi-app-server",
        &[
            "oi-config",
            "oi-core",
            "oi-file-search",
            "oi-jsonrpc",
            "oi-mcp-client",
            "oi-model-client",
            "oi-protocol",
            "oi-thread-store",
        ],
    ),
    (
        "oi-tui",
        &[
            "oi-config",
            "oi-core",
            "oi-file-search",
            "oi-mcp-client",
            "oi-model-client",
            // Termination signals, like every other front end.
            "oi-process",
            "oi-protocol",
            "oi-thread-store",
        ],
    ),
    (
        "oi-cli",
        &[
            "oi-app-server",
            "oi-config",
            "oi-core",
            "oi-jsonrpc",
            "oi-mcp-client",
            "oi-mcp-server",
            "oi-process",
            "oi-protocol",
            "oi-sandbox",
            "oi-thread-store",
            "oi-tui",
        ],
    ),
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

#[test]
fn crate_dependencies_follow_the_architecture_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root");
    let packages = workspace_packages(&root);
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED
        .iter()
        .map(|(name, deps)| (*name, deps.iter().copied().collect()))
        .collect();
    let architecture =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md");

    let mut problems = Vec::new();
    for (name, package) in &packages {
        let Some(ok) = allowed.get(name.as_str()) else {
            problems.push(format!(
                "{name} is not in this test's ALLOWED map: add it, with its allowed dependencies"
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
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_engine_knows_no_front_end() {
    // The invariant behind every row above, stated once more so a widened ALLOWED map
    // cannot quietly break it: oi-core and the libraries below it never depend on a front end.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root");
    let packages = workspace_packages(&root);
    let front_ends = ["oi-cli", "oi-tui", "oi-mcp-server", "oi-app-server"];
    // The two services on one connection are siblings: neither may reach into the other.
    for (service, sibling) in [
        ("oi-mcp-server", "oi-app-server"),
        ("oi-app-server", "oi-mcp-server"),
    ] {
        if let Some(package) = packages.get(service) {
            assert!(
                !package.deps.contains(sibling),
                "{service} depends on its sibling {sibling}; share code through oi-jsonrpc or oi-core"
            );
        }
    }
    for (name, package) in &packages {
        if front_ends.contains(&name.as_str()) {
            continue;
        }
        for dep in &package.deps {
            assert!(
                !front_ends.contains(&dep.as_str()),
                "{name} depends on the front end {dep}"
            );
        }
    }
}
