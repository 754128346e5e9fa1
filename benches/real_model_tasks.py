#!/usr/bin/env python3
"""Success rate of everyday tasks on a real model: `interpreter exec` against llama-server.

    benches/real_model_tasks.py [--runs N] [--tasks a,b] [--config 'key = "value"'] [--out FILE]
                                [--codex PATH]   # the same tasks with `codex exec` 0.171
                                [--harnesses codex,claude-code,qwen-code,kimi-code]
                                                 # once per harness profile: a task × profile table
                                                 # (`claude-code@messages`: over the Messages wire)

Starts its own llama-server with the model's default sampling (scripts/real-model.sh start
sampled), unless OI_REAL_MODEL_URL is set, runs each task N times in fresh directories and
prints a Markdown table: passes (judged from the directory), false successes (exit 0 with
the work not done), median seconds. Needs a built `target/debug/interpreter` (or
INTERPRETER_BIN). Every run's details go to --out as JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from real_tasks import EVERYDAY, TASKS, Outcome, run_codex_exec, run_exec  # noqa: E402


def start_server() -> tuple[str, str, str | None]:
    if os.environ.get("OI_REAL_MODEL_URL"):
        return os.environ["OI_REAL_MODEL_URL"], os.environ["OI_REAL_MODEL_ALIAS"], None
    out = subprocess.run(
        [str(REPO / "scripts" / "real-model.sh"), "start", "sampled"],
        check=True, capture_output=True, text=True,
    ).stdout
    env = dict(line.removeprefix("export ").split("=", 1) for line in out.splitlines() if "=" in line)
    env = {k: v.strip("'") for k, v in env.items()}
    return env["OI_REAL_MODEL_URL"], env["OI_REAL_MODEL_ALIAS"], env["OI_REAL_MODEL_PID"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names, or `everyday` (the 14 everyday kinds)")
    ap.add_argument("--config", default="", help="extra config.toml lines, e.g. 'tool_call_format = \"text\"'")
    ap.add_argument("--out", default=None)
    ap.add_argument("--label", default="")
    ap.add_argument("--codex", default=None, help="path of a `codex` 0.171 binary: run the tasks with `codex exec` instead")
    ap.add_argument("--harnesses", default="", help="comma-separated harness profiles: run every task under each")
    args = ap.parse_args()
    if args.tasks == "everyday":
        args.tasks = ",".join(EVERYDAY)
    interpreter = Path(os.environ.get("INTERPRETER_BIN", REPO / "target" / "debug" / "interpreter"))
    url, alias, pid = start_server()
    results = []
    harnesses = [h for h in args.harnesses.split(",") if h] or [None]
    by_harness: dict[str, list] = {}
    try:
        for name in args.tasks.split(","):
            task = TASKS[name]
            for i in range(args.runs):
                # Profiles interleaved run by run, so a slow stretch of a shared machine
                # costs every profile alike.
                for harness in harnesses:
                    # `profile@messages`: the same profile over the Anthropic Messages wire
                    # (llama-server serves /v1/messages beside /v1/chat/completions).
                    profile, _, wire = (harness or "").partition("@")
                    config = "\n".join(filter(None, [args.config, f'harness = "{profile}"' if profile else ""]))
                    provider = f'wire_api = "{wire}"' if wire else ""
                    label = harness or args.label
                    with tempfile.TemporaryDirectory(prefix=f"oi-bench-{name}-") as d:
                        if args.codex:
                            o = run_codex_exec(Path(args.codex), task, Path(d) / "work", url, alias)
                        else:
                            try:
                                o = run_exec(interpreter, task, Path(d) / "work", url, alias, config, provider_config=provider)
                            except subprocess.TimeoutExpired as e:
                                # A run that never ends is a failed run, not the end of the benchmark.
                                o = Outcome(task=name, passed=False, why=f"no answer within {e.timeout:.0f} s", exit_code=-1, seconds=e.timeout, answer="")
                    results.append(o)
                    by_harness.setdefault(label or "", []).append(o)
                    mark = "pass" if o.passed else ("FALSE SUCCESS" if o.false_success else "fail")
                    print(f"{label or ''} {name} #{i + 1}: {mark} exit={o.exit_code} {o.seconds:.0f}s {o.why or ''}", file=sys.stderr, flush=True)
                    if args.out:
                        with open(args.out, "a") as f:
                            f.write(json.dumps({"label": label, **o.__dict__}) + "\n")
    finally:
        if pid:
            subprocess.run([str(REPO / "scripts" / "real-model.sh"), "stop", pid])
    if len(harnesses) > 1:
        cols = list(by_harness)
        print("\n| task | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols))
        for name in args.tasks.split(","):
            cells = []
            for h in cols:
                rs = [r for r in by_harness[h] if r.task == name]
                cells.append(f"{sum(r.passed for r in rs)}/{len(rs)}" + (f" ({sum(r.false_success for r in rs)} false)" if any(r.false_success for r in rs) else ""))
            print(f"| {name} | " + " | ".join(cells) + " |")
        totals = [f"**{sum(r.passed for r in by_harness[h])}/{len(by_harness[h])}**" for h in cols]
        print("| **all** | " + " | ".join(totals) + " |")
        return 0
    print(f"\n| task {args.label} | passed | false successes | median s |\n|---|---|---|---|")
    for name in args.tasks.split(","):
        rs = [r for r in results if r.task == name]
        print(f"| {name} | {sum(r.passed for r in rs)}/{len(rs)} | {sum(r.false_success for r in rs)} | {statistics.median(r.seconds for r in rs):.0f} |")
    total = len(results)
    print(f"| **all** | {sum(r.passed for r in results)}/{total} | {sum(r.false_success for r in results)} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
