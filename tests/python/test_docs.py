"""docs/mcp-server.md shows the Python client the tests run: keep them identical."""

from conftest import REPO


def test_docs_embed_the_tested_python_clients_verbatim():
    doc = (REPO / "docs" / "mcp-server.md").read_text()
    for name in ("example_client.py", "example_client_modern.py"):
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
