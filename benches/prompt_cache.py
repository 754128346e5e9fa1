#!/usr/bin/env python3
"""How much of a new `exec`'s prompt a warm llama-server can reuse (issue 43 item 6).

Starts the real-model tier's server (scripts/real-model.sh), then for each binary given:
one `exec` in a fresh folder to warm the server's prompt cache with that binary's prompt,
then a second `exec` of the same question in *another* folder, timed. Reports, for the
second run: seconds from start to the first streamed token of the answer, and what the
server prefilled (prompt tokens it had to process vs. the ones it took from its cache, read
from its own log).

    cargo build && cp target/debug/interpreter /tmp/interp-new
    benches/prompt_cache.py /tmp/interp-old /tmp/interp-new --runs 3

The server runs greedy with one slot; OI_REAL_MODEL_THREADS sets its threads (default 2;
on a machine shared with builds 1 is faster, see docs/real-models.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
from real_tasks import agent_env, write_config  # noqa: E402

QUESTION = "What is 2 + 2? Answer with just the number."
TIMING = re.compile(r"prompt eval time =\s+([\d.]+) ms /\s+(\d+) tokens")
RELEASE = re.compile(r"stop processing: n_tokens = (\d+)")


def start_server() -> dict[str, str]:
    out = subprocess.run(
        [str(ROOT / "scripts" / "real-model.sh"), "start"], capture_output=True, text=True, check=True, timeout=900
    ).stdout
    env = {}
    for line in out.splitlines():
        if line.startswith("export "):
            k, v = line.removeprefix("export ").split("=", 1)
            env[k] = v.strip("'")
    return env


def one_exec(binary: str, work: Path, home: Path) -> tuple[float | None, float, int]:
    """Seconds to the first answer token, total seconds, exit code."""
    work.mkdir(parents=True, exist_ok=True)
    argv = [binary, "exec", "--json", "-a", "never", QUESTION]
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=work, env=agent_env(work, home), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = None
    assert proc.stdout is not None
    for line in proc.stdout:
        try:
            kind = json.loads(line)["msg"]["type"]
        except (ValueError, KeyError):
            continue
        if first is None and kind == "agent_message_delta":
            first = time.monotonic() - start
    code = proc.wait()
    return first, time.monotonic() - start, code


def server_requests(log: Path, offset: int) -> tuple[list[tuple[int, int]], int]:
    """(prefilled tokens, whole prompt tokens) of each request logged after `offset`."""
    text = log.read_text(errors="replace")
    new = text[offset:]
    prefills = [int(m.group(2)) for m in TIMING.finditer(new)]
    totals = [int(m.group(1)) for m in RELEASE.finditer(new)]
    return list(zip(prefills, totals)), len(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="interpreter binaries to compare")
    ap.add_argument("--runs", type=int, default=2, help="timed second runs per binary")
    args = ap.parse_args()
    server = start_server()
    log = Path(server["OI_REAL_MODEL_LOG"])
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            for b, binary in enumerate(args.binaries):
                home = tmp / f"home{b}"
                write_config(home, server["OI_REAL_MODEL_URL"], server["OI_REAL_MODEL_ALIAS"])
                offset = len(log.read_text(errors="replace"))
                one_exec(binary, tmp / f"warm{b}", home)
                _, offset = server_requests(log, offset)
                firsts, prefills = [], []
                for r in range(args.runs):
                    first, total, code = one_exec(binary, tmp / f"run{b}-{r}", home)
                    reqs, offset = server_requests(log, offset)
                    firsts.append(first if first is not None else float("nan"))
                    prefills.append(reqs[0] if reqs else (0, 0))
                    print(
                        f"{binary}: run {r + 1}: first token {first and round(first, 1)} s, total {round(total, 1)} s, exit {code}, "
                        f"prefilled {reqs[0][0] if reqs else '?'} of {reqs[0][1] if reqs else '?'} prompt tokens",
                        flush=True,
                    )
                print(
                    f"{binary}: median first token {round(statistics.median(firsts), 1)} s; "
                    f"prefilled {statistics.median(p[0] for p in prefills)} of {statistics.median(p[1] for p in prefills)} tokens",
                    flush=True,
                )
    finally:
        subprocess.run([str(ROOT / "scripts" / "real-model.sh"), "stop", server["OI_REAL_MODEL_PID"]], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
