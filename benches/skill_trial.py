#!/usr/bin/env python3
"""Does a skill change what a small model gets done? One task, with and without the skill.

    benches/skill_trial.py [--runs N] [--config 'harness = "minimal"'] [--out FILE]

The task: record a deploy "the way this team does it". The team's way lives only in a skill
(`$OPENINTERPRETER_HOME/skills/record-deploy/`): run its script, which appends a line with a
token the model cannot guess. Without the skill the model has no way to write that line;
with it, it must load the skill (`load_skill`; under `harness = "minimal"` the request names
it, so it is loaded up front) and run the script. Judged from deploys.log.
Starts its own llama-server (greedy unless OI_REAL_MODEL_URL is set), like
benches/real_model_tasks.py; runs are interleaved with / without.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

from real_tasks import Task, run_exec  # noqa: E402

VERSION = "2.4.1"
PROMPT = f"Record the deploy of version {VERSION} in deploys.log the way this team does it."

SKILL_MD = """---
name: record-deploy
description: Record a deploy of a version in deploys.log, the team's way (never by hand).
---
To record a deploy, run the script of this skill from the project folder:

    python3 {dir}/scripts/record.py VERSION

It appends the team's line to deploys.log. Do not write deploys.log yourself.
"""

RECORD_PY = """import hashlib, sys
version = sys.argv[1]
token = hashlib.sha256(("deploy:" + version).encode()).hexdigest()[:12]
with open("deploys.log", "a") as f:
    f.write(f"{version} deployed token={token}\\n")
"""


def expected_line() -> str:
    token = hashlib.sha256(f"deploy:{VERSION}".encode()).hexdigest()[:12]
    return f"{VERSION} deployed token={token}"


def setup(with_skill: bool):
    def run(root: Path) -> dict:
        (root / "README.md").write_text("The shop's web front end.\n")
        if with_skill:
            skill = root.parent / "oi-home" / "skills" / "record-deploy"
            (skill / "scripts").mkdir(parents=True, exist_ok=True)
            (skill / "SKILL.md").write_text(SKILL_MD.format(dir=skill))
            (skill / "scripts" / "record.py").write_text(RECORD_PY)
        return {}

    return run


def judge(root: Path, _facts: dict, _answer: str) -> str | None:
    log = root / "deploys.log"
    if not log.is_file():
        return "no deploys.log"
    lines = [l.strip() for l in log.read_text(errors="replace").splitlines() if l.strip()]
    if lines != [expected_line()]:
        return f"deploys.log holds {lines!r}, not the team's line"
    return None


def start_server() -> tuple[str, str, str | None]:
    if os.environ.get("OI_REAL_MODEL_URL"):
        return os.environ["OI_REAL_MODEL_URL"], os.environ["OI_REAL_MODEL_ALIAS"], None
    out = subprocess.run(
        [str(REPO / "scripts" / "real-model.sh"), "start"], check=True, capture_output=True, text=True
    ).stdout
    env = dict(line.removeprefix("export ").split("=", 1) for line in out.splitlines() if "=" in line)
    env = {k: v.strip("'") for k, v in env.items()}
    return env["OI_REAL_MODEL_URL"], env["OI_REAL_MODEL_ALIAS"], env["OI_REAL_MODEL_PID"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--config", default="")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    interpreter = Path(os.environ.get("INTERPRETER_BIN", REPO / "target" / "debug" / "interpreter"))
    url, alias, pid = start_server()
    rows: dict[str, list] = {"without the skill": [], "with the skill": []}
    try:
        for i in range(args.runs):
            for label, with_skill in (("without the skill", False), ("with the skill", True)):
                task = Task("record-deploy", PROMPT, setup(with_skill), judge)
                with tempfile.TemporaryDirectory(prefix="oi-skill-trial-") as d:
                    try:
                        o = run_exec(interpreter, task, Path(d) / "work", url, alias, args.config)
                    except subprocess.TimeoutExpired:
                        print(f"{label} #{i + 1}: no answer in time", file=sys.stderr)
                        rows[label].append(None)
                        continue
                print(
                    f"{label} #{i + 1}: {'pass' if o.passed else 'fail'} exit={o.exit_code} "
                    f"{o.seconds:.0f}s {o.why or ''}",
                    file=sys.stderr,
                )
                rows[label].append(o)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps({"label": label, "passed": o.passed, "why": o.why,
                                            "exit": o.exit_code, "seconds": o.seconds,
                                            "answer": o.answer[-500:]}) + "\n")
    finally:
        if pid:
            subprocess.run([str(REPO / "scripts" / "real-model.sh"), "stop", pid], check=False)
    print("| | done | exit 0, not done |\n|---|---|---|")
    for label, outs in rows.items():
        done = sum(1 for o in outs if o is not None and o.passed)
        false = sum(1 for o in outs if o is not None and not o.passed and o.exit_code == 0)
        print(f"| {label} | {done}/{len(outs)} | {false} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
