"""docs/mcp-server.md shows the Python client the tests run: keep them identical."""

from conftest import REPO


def test_docs_embed_the_tested_python_clients_verbatim():
    doc = (REPO / "docs" / "mcp-server.md").read_text()
    for name in ("example_client.py", "example_client_modern.py", "example_client_tasks.py"):
        example = (REPO / "tests" / "python" / name).read_text()
        assert "```python\n" + example + "```" in doc, f"update the Python block of {name} in docs/mcp-server.md"


def test_example_client_passes_the_home_and_provider_keys(monkeypatch):
    """The SDK's default environment drops OPENINTERPRETER_HOME and API keys; the example must not."""
    from example_client import server

    monkeypatch.setenv("OPENINTERPRETER_HOME", "/srv/oi-home")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-test")
    params = server("interpreter")
    assert params.env is not None
    assert params.env["OPENINTERPRETER_HOME"] == "/srv/oi-home"
    assert params.env["DEEPSEEK_API_KEY"] == "sk-test"
    assert "PATH" in params.env


def test_every_json_block_in_the_docs_parses():
    """A reader copies these: each ```json block is one JSON value, or JSON Lines (one whole
    object per line). Illustrations that are not JSON use ```text."""
    import json
    import re

    bad = []
    for doc in sorted((REPO / "docs").glob("*.md")):
        text = doc.read_text()
        for m in re.finditer(r"```json\n(.*?)```", text, re.S):
            body = m.group(1)
            line = text[: m.start()].count("\n") + 1
            try:
                json.loads(body)
                continue
            except ValueError:
                pass
            try:
                for part in body.splitlines():
                    if part.strip():
                        json.loads(part)
            except ValueError as e:
                bad.append(f"{doc.name}:{line}: {e}")
    assert not bad, "\n".join(bad)
