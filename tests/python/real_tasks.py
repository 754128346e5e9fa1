"""Everyday coding tasks for a real model, each judged from the directory it leaves.

Shared by the real-model test tier (test_real_model.py, greedy decoding) and the success
rate benchmark (benches/real_model_tasks.py, the model's own sampling). A task sets up a
working directory, gives one prompt, and is judged only by files and command results there:
never by what the agent says it did, except where the answer must carry something only a
command could have found (a random token in a file).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable


@dataclass
class Task:
    name: str
    prompt: str
    setup: Callable[[Path], dict]
    # (work dir, setup's facts, final answer) -> None on success, else why it failed.
    judge: Callable[[Path, dict, str], str | None]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def _read(root: Path, name: str) -> str | None:
    try:
        return (root / name).read_text()
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return None


def _run(root: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=30)


def _judge_create(root: Path, _facts: dict, _answer: str) -> str | None:
    text = _read(root, "hello.txt")
    if text is None:
        return "hello.txt was not created"
    if text.strip() != "hi":
        return f"hello.txt holds {text[:80]!r}, not 'hi'"
    return None


def _judge_edit(root: Path, _facts: dict, _answer: str) -> str | None:
    text = _read(root, "notes.txt")
    if text is None:
        return "notes.txt is gone"
    if "apple" in text:
        return f"notes.txt still says apple: {text[:120]!r}"
    if text.count("banana") != 2 or "red" not in text or "pie" not in text:
        return f"notes.txt was not edited as asked: {text[:120]!r}"
    return None


CALC_TEST = """from calc import add

assert add(2, 3) == 5, f"add(2, 3) returned {add(2, 3)}"
assert add(-1, 1) == 0
print("ok")
"""


def _judge_fix(root: Path, _facts: dict, _answer: str) -> str | None:
    if _read(root, "test_calc.py") != CALC_TEST:
        return "test_calc.py was changed (the fix belongs in calc.py)"
    r = _run(root, sys.executable, "test_calc.py")
    if r.returncode != 0:
        return f"the test still fails: {(r.stderr or r.stdout).strip()[-160:]}"
    return None


def _setup_token(root: Path) -> dict:
    token = f"token-{secrets.token_hex(4)}"
    _write(root, {"secret.txt": token + "\n"})
    return {"token": token}


def _judge_report(_root: Path, facts: dict, answer: str) -> str | None:
    # The token is random: only a command that read the file can have put it in the answer.
    if facts["token"] not in answer:
        return f"the answer does not contain the file's token: {answer[:120]!r}"
    return None


_SEARCH_FILES = ["app/net/client.py", "app/store/cache.py", "lib/util/text.py", "lib/io/files.py", "tools/build/steps.py", "tools/report.py"]


def _setup_search(root: Path) -> dict:
    # The function lives in a file picked at random: only a search of the tree finds it.
    target = secrets.choice(_SEARCH_FILES)
    files = {f: f"def helper_{i}(x):\n    return x\n" for i, f in enumerate(_SEARCH_FILES)}
    files[target] += "\n\ndef load_settings(path):\n    return open(path).read()\n"
    _write(root, files)
    return {"target": target}


def _judge_search(_root: Path, facts: dict, answer: str) -> str | None:
    if facts["target"] not in answer:
        return f"the answer does not name {facts['target']}: {answer[:160]!r}"
    return None


def _judge_script(root: Path, _facts: dict, _answer: str) -> str | None:
    if not (root / "count.py").is_file():
        return "count.py was not created"
    r = _run(root, sys.executable, "count.py")
    if r.stdout.split() != ["1", "2", "3", "4", "5"]:
        return f"count.py printed {r.stdout[:80]!r} {r.stderr[-80:]!r}"
    return None


def _judge_append(root: Path, _facts: dict, _answer: str) -> str | None:
    text = _read(root, "todo.txt")
    if text is None:
        return "todo.txt is gone"
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if lines != ["buy milk", "walk the dog"]:
        return f"todo.txt holds {lines!r}"
    return None


def _judge_rename(root: Path, _facts: dict, _answer: str) -> str | None:
    if (root / "draft.txt").exists():
        return "draft.txt still exists"
    if _read(root, "final.txt") != "version one\n":
        return f"final.txt holds {_read(root, 'final.txt')!r}"
    return None


def _judge_nested(root: Path, _facts: dict, _answer: str) -> str | None:
    if not (root / "src" / "main.py").is_file():
        return "src/main.py was not created"
    r = _run(root, sys.executable, "src/main.py")
    if r.stdout.strip().lower() != "hello":
        return f"src/main.py printed {r.stdout[:80]!r} {r.stderr[-80:]!r}"
    return None


def _judge_multi(root: Path, _facts: dict, _answer: str) -> str | None:
    # Three steps, each judged from the directory: the module, the test, the test passing.
    if not (root / "mathx.py").is_file():
        return "mathx.py was not created"
    probe = "import mathx; assert mathx.mul(3, 4) == 12 and mathx.mul(2, 5) == 10"
    r = _run(root, sys.executable, "-c", probe)
    if r.returncode != 0:
        return f"mathx.mul is wrong: {r.stderr[-160:]!r}"
    if not (root / "test_mathx.py").is_file():
        return "test_mathx.py was not created"
    r = _run(root, sys.executable, "test_mathx.py")
    if r.returncode != 0:
        return f"test_mathx.py fails: {r.stdout[-80:]!r} {r.stderr[-160:]!r}"
    if "mul" not in (_read(root, "test_mathx.py") or ""):
        return "test_mathx.py does not test mul"
    return None


GREET_TEST = """from greet import greet

assert greet("Ada") == "Hello, Ada!", greet("Ada")
print("ok")
"""


def _judge_typo(root: Path, _facts: dict, _answer: str) -> str | None:
    if _read(root, "test_greet.py") != GREET_TEST:
        return "test_greet.py was changed (the fix belongs in greet.py)"
    r = _run(root, sys.executable, "test_greet.py")
    if r.returncode != 0:
        return f"test_greet.py still fails: {(r.stderr or r.stdout).strip()[-160:]}"
    return None


def _judge_rename_function(root: Path, _facts: dict, _answer: str) -> str | None:
    shop, main = _read(root, "shop.py") or "", _read(root, "main.py") or ""
    if "compute_total" in shop or "compute_total" in main:
        return "compute_total is still used"
    if "def calculate_total" not in shop:
        return f"shop.py does not define calculate_total: {shop[:120]!r}"
    r = _run(root, sys.executable, "main.py")
    if r.stdout.strip() != "6":
        return f"main.py printed {r.stdout[:80]!r} {r.stderr[-120:]!r}"
    return None


RUN_SH = "#!/bin/sh\necho ready\n"


def _judge_executable(root: Path, _facts: dict, _answer: str) -> str | None:
    path = root / "run.sh"
    if _read(root, "run.sh") != RUN_SH:
        return f"run.sh was changed: {_read(root, 'run.sh')!r}"
    if not os.access(path, os.X_OK):
        return "run.sh is not executable"
    return None


PALINDROME_TEST = """from text_utils import is_palindrome

assert is_palindrome("racecar")
assert is_palindrome("noon")
assert not is_palindrome("python")
print("ok")
"""


def _judge_implement(root: Path, _facts: dict, _answer: str) -> str | None:
    if _read(root, "test_text_utils.py") != PALINDROME_TEST:
        return "test_text_utils.py was changed"
    r = _run(root, sys.executable, "test_text_utils.py")
    if r.returncode != 0:
        return f"test_text_utils.py fails: {(r.stderr or r.stdout).strip()[-160:]}"
    return None


CONFIG_TOML = '[server]\nhost = "127.0.0.1"\nport = 8000\n\n[log]\nlevel = "info"\n'


def _judge_toml(root: Path, _facts: dict, _answer: str) -> str | None:
    import tomllib

    text = _read(root, "config.toml")
    if text is None:
        return "config.toml is gone"
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return f"config.toml no longer parses: {e}"
    if cfg.get("server", {}).get("port") != 8080:
        return f"server.port is {cfg.get('server', {}).get('port')!r}"
    if cfg.get("server", {}).get("host") != "127.0.0.1" or cfg.get("log", {}).get("level") != "info":
        return f"other values changed: {text[:160]!r}"
    return None


def _setup_csv(root: Path) -> dict:
    amounts = [secrets.randbelow(40) + 1 for _ in range(5)]
    names = ["apple", "pear", "plum", "fig", "kiwi"]
    _write(root, {"sales.csv": "item,amount\n" + "".join(f"{n},{a}\n" for n, a in zip(names, amounts))})
    return {"total": sum(amounts)}


def _judge_csv(root: Path, facts: dict, _answer: str) -> str | None:
    text = _read(root, "total.txt")
    if text is None:
        return "total.txt was not created"
    try:
        got = float(text.strip())
    except ValueError:
        return f"total.txt holds {text[:80]!r}, not a number"
    if got != facts["total"]:
        return f"total.txt holds {got}, the total is {facts['total']}"
    return None


def _setup_name(root: Path) -> dict:
    name = secrets.choice(["Ada", "Grace", "Alan", "Edsger", "Barbara"])
    _write(root, {"name.txt": name + "\n"})
    return {"name": name}


def _judge_greeting(root: Path, facts: dict, _answer: str) -> str | None:
    text = _read(root, "greeting.txt")
    if text is None:
        return "greeting.txt was not created"
    want = f"Hello, {facts['name']}!"
    if text.strip() != want:
        return f"greeting.txt holds {text[:80]!r}, not {want!r}"
    return None


def _judge_dirs(root: Path, _facts: dict, _answer: str) -> str | None:
    missing = [d for d in ("logs", "data", "tmp") if not (root / d).is_dir()]
    return f"missing folders: {missing}" if missing else None


NOTES_TODO = "keep one\nTODO: fix the roof\nkeep two\nTODO: call Bob\nkeep three\n"


def _judge_delete_lines(root: Path, _facts: dict, _answer: str) -> str | None:
    text = _read(root, "notes.txt")
    if text is None:
        return "notes.txt is gone"
    lines = [l for l in text.splitlines() if l.strip()]
    if lines != ["keep one", "keep two", "keep three"]:
        return f"notes.txt holds {lines!r}"
    return None


TASKS: dict[str, Task] = {
    t.name: t
    for t in [
        Task("create-file", "Create a file hello.txt containing hi", lambda r: {}, _judge_create),
        Task(
            "edit-file",
            "In notes.txt, replace the word apple with banana everywhere.",
            lambda r: (_write(r, {"notes.txt": "The apple is red.\nI like apple pie.\n"}), {})[1],
            _judge_edit,
        ),
        Task(
            "fix-test",
            "The test test_calc.py fails (run it with `python3 test_calc.py`). Fix the bug in calc.py so that the test passes.",
            lambda r: (
                _write(r, {"calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": CALC_TEST}),
                {},
            )[1],
            _judge_fix,
        ),
        Task(
            "run-command",
            "Run the command `cat secret.txt` and tell me exactly what it printed.",
            _setup_token,
            _judge_report,
        ),
        Task(
            "search-tree",
            "Which file in this project defines the function load_settings? Answer with the file's path.",
            _setup_search,
            _judge_search,
        ),
        Task(
            "write-script",
            "Write a Python script count.py that prints the numbers 1 to 5, one per line.",
            lambda r: {},
            _judge_script,
        ),
        Task(
            "append-line",
            "Add a line 'walk the dog' at the end of todo.txt.",
            lambda r: (_write(r, {"todo.txt": "buy milk\n"}), {})[1],
            _judge_append,
        ),
        Task(
            "rename-file",
            "Rename draft.txt to final.txt.",
            lambda r: (_write(r, {"draft.txt": "version one\n"}), {})[1],
            _judge_rename,
        ),
        Task(
            "multi-step",
            "Create mathx.py with a function mul(a, b) that returns a times b. Then write test_mathx.py that "
            "asserts mul(3, 4) == 12, and run it with python3 to check that it passes.",
            lambda r: {},
            _judge_multi,
        ),
        Task(
            "nested-file",
            "Create a directory src with a file main.py in it that prints hello.",
            lambda r: {},
            _judge_nested,
        ),
        Task(
            "fix-typo",
            "Fix the typo in greet.py so that test_greet.py passes.",
            lambda r: (
                _write(r, {"greet.py": 'def greet(name):\n    return f"Helo, {name}!"\n', "test_greet.py": GREET_TEST}),
                {},
            )[1],
            _judge_typo,
        ),
        Task(
            "rename-function",
            "Rename the function compute_total to calculate_total in shop.py and main.py.",
            lambda r: (
                _write(
                    r,
                    {
                        "shop.py": "def compute_total(prices):\n    return sum(prices)\n",
                        "main.py": "from shop import compute_total\n\nprint(compute_total([1, 2, 3]))\n",
                    },
                ),
                {},
            )[1],
            _judge_rename_function,
        ),
        Task(
            "make-executable",
            "Make the script run.sh executable.",
            lambda r: (_write(r, {"run.sh": RUN_SH}), (r / "run.sh").chmod(0o644), {})[2],
            _judge_executable,
        ),
        Task(
            "implement-function",
            "Implement the function is_palindrome in text_utils.py so that test_text_utils.py passes.",
            lambda r: (
                _write(
                    r,
                    {
                        "text_utils.py": "def is_palindrome(text):\n    raise NotImplementedError\n",
                        "test_text_utils.py": PALINDROME_TEST,
                    },
                ),
                {},
            )[1],
            _judge_implement,
        ),
        Task(
            "toml-value",
            "In config.toml, change the server port to 8080.",
            lambda r: (_write(r, {"config.toml": CONFIG_TOML}), {})[1],
            _judge_toml,
        ),
        Task(
            "csv-total",
            "Read sales.csv and write the total of the amount column to total.txt.",
            _setup_csv,
            _judge_csv,
        ),
        Task(
            "read-then-write",
            "Create greeting.txt that greets the person named in name.txt, in the form Hello, <name>!",
            _setup_name,
            _judge_greeting,
        ),
        Task(
            "make-dirs",
            "Create the directories logs, data and tmp.",
            lambda r: {},
            _judge_dirs,
        ),
        Task(
            "delete-lines",
            "Delete the lines containing TODO from notes.txt.",
            lambda r: (_write(r, {"notes.txt": NOTES_TODO}), {})[1],
            _judge_delete_lines,
        ),
    ]
}

# The everyday kinds of issue 43 (the classes a held-out set of everyday tasks covered):
# benches/real_model_tasks.py --tasks everyday.
EVERYDAY = [
    "create-file",
    "append-line",
    "edit-file",
    "fix-typo",
    "rename-function",
    "make-executable",
    "implement-function",
    "toml-value",
    "search-tree",
    "csv-total",
    "read-then-write",
    "make-dirs",
    "delete-lines",
    "write-script",
]


@dataclass
class Outcome:
    task: str
    passed: bool
    why: str | None
    exit_code: int
    seconds: float
    answer: str
    commands: list[list[str]] = field(default_factory=list)
    patches: int = 0
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    # `last_token_usage` of every `token_count` event, in order (both processes of a resume).
    usages: list[dict] = field(default_factory=list)
    # `model_context_window` of each `task_started`.
    windows: list[int] = field(default_factory=list)

    @property
    def false_success(self) -> bool:
        """The agent exited 0 although the work was not done."""
        return self.exit_code == 0 and not self.passed


def write_config(home: Path, url: str, model: str, extra: str = "", provider: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    # OI_REAL_MODEL_CONFIG adds config lines to every run (to compare settings by hand).
    extra = "\n".join(filter(None, [extra, os.environ.get("OI_REAL_MODEL_CONFIG", "")]))
    # OI_REAL_MODEL_PROVIDER_CONFIG: lines for the provider's own table (e.g.
    # `supports_parallel_tool_calls = false`).
    provider_extra = "\n".join(filter(None, [provider, os.environ.get("OI_REAL_MODEL_PROVIDER_CONFIG", "")]))
    (home / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "llamacpp"\n{extra}\n'
        f'[model_providers.llamacpp]\nbase_url = "{url}"\nstream_idle_timeout_ms = 600000\n'
        f"{provider_extra}\n"
    )


def agent_env(root: Path, home: Path) -> dict[str, str]:
    # HOME is the task's own directory: commands the model runs with `bash -l` then read no
    # profile of whoever runs the tests (a profile's noise confuses small models).
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENINTERPRETER")}
    env.update({"HOME": str(root.parent), "OPENINTERPRETER_HOME": str(home), "RUST_LOG": "warn"})
    return env


def run_exec(
    interpreter: Path,
    task: Task,
    root: Path,
    url: str,
    model: str,
    extra_config: str = "",
    timeout: float = 600,
    resume_prompt: str | None = None,
    provider_config: str = "",
) -> Outcome:
    """One run of `task` through `interpreter exec --json` in `root` (which must be empty).
    `provider_config`: lines for the provider's table (e.g. `wire_api = "messages"`)."""
    root.mkdir(parents=True, exist_ok=True)
    home = root.parent / "oi-home"
    write_config(home, url, model, extra_config, provider_config)
    facts = task.setup(root)
    start = time.monotonic()
    argv = [str(interpreter), "exec", "--json", "-s", "workspace-write", "-a", "never", task.prompt]
    proc = subprocess.run(
        argv, cwd=root, env=agent_env(root, home), capture_output=True, text=True, timeout=timeout
    )
    out = parse_events(proc.stdout)
    exit_code = proc.returncode
    if resume_prompt is not None and exit_code == 0:
        argv = [str(interpreter), "resume", "--last", "--json", "-s", "workspace-write", "-a", "never", resume_prompt]
        proc = subprocess.run(
            argv, cwd=root, env=agent_env(root, home), capture_output=True, text=True, timeout=timeout
        )
        more = parse_events(proc.stdout)
        out = {
            "answer": more["answer"],
            "commands": out["commands"] + more["commands"],
            "patches": out["patches"] + more["patches"],
            "warnings": out["warnings"] + more["warnings"],
            "error": more["error"],
            "usages": out["usages"] + more["usages"],
            "windows": out["windows"] + more["windows"],
        }
        exit_code = proc.returncode
    seconds = time.monotonic() - start
    why = task.judge(root, facts, out["answer"])
    return Outcome(
        task=task.name,
        passed=why is None,
        why=why,
        exit_code=exit_code,
        seconds=seconds,
        answer=out["answer"],
        commands=out["commands"],
        patches=out["patches"],
        warnings=out["warnings"],
        usages=out["usages"],
        windows=out["windows"],
        error=out["error"] or (proc.stderr.strip()[-300:] if exit_code not in (0, 1) else None),
    )


def parse_events(stdout: str) -> dict:
    answer, error = "", None
    commands: list[list[str]] = []
    patches = 0
    warnings: list[str] = []
    usages: list[dict] = []
    windows: list[int] = []
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)["msg"]
        except (ValueError, KeyError, TypeError):
            continue
        kind = msg.get("type")
        if kind == "exec_command_begin":
            commands.append(msg.get("command", []))
        elif kind == "patch_apply_end":
            patches += 1
        elif kind == "warning":
            warnings.append(msg.get("message", ""))
        elif kind == "error":
            error = msg.get("message")
        elif kind == "task_complete":
            answer = msg.get("last_agent_message") or answer
        elif kind == "agent_message":
            answer = msg.get("message") or answer
        elif kind == "token_count" and (msg.get("info") or {}).get("last_token_usage"):
            usages.append(msg["info"]["last_token_usage"])
        elif kind == "task_started" and msg.get("model_context_window"):
            windows.append(msg["model_context_window"])
    return {
        "answer": answer,
        "commands": commands,
        "patches": patches,
        "warnings": warnings,
        "error": error,
        "usages": usages,
        "windows": windows,
    }


def run_codex_exec(codex: Path, task: Task, root: Path, url: str, model: str, timeout: float = 900) -> Outcome:
    """The same task through `codex exec` (the reference, Codex 0.171) on the same server, over
    its Responses wire; judged the same way."""
    root.mkdir(parents=True, exist_ok=True)
    home = root.parent / "codex-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "{model}"\nmodel_provider = "llama"\napproval_policy = "never"\n'
        f'[model_providers.llama]\nname = "llama"\nbase_url = "{url}"\nwire_api = "responses"\n'
        f"stream_idle_timeout_ms = 600000\n"
    )
    facts = task.setup(root)
    last = root.parent / "codex-last-message.txt"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEX")}
    env.update({"HOME": str(root.parent), "CODEX_HOME": str(home)})
    start = time.monotonic()
    argv = [str(codex), "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-o", str(last), task.prompt]
    try:
        proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
        exit_code, stdout = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        exit_code, stdout = -1, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    seconds = time.monotonic() - start
    answer = last.read_text() if last.exists() else ""
    commands = []
    for line in stdout.splitlines():
        try:
            item = json.loads(line).get("item") or {}
        except ValueError:
            continue
        if item.get("type") == "command_execution" and json.loads(line).get("type") == "item.completed":
            commands.append([item.get("command", "")])
    why = task.judge(root, facts, answer)
    return Outcome(task=task.name, passed=why is None, why=why, exit_code=exit_code, seconds=seconds, answer=answer, commands=commands)
