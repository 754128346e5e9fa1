"""docs/mcp-server.md shows the Python client the tests run: keep them identical."""

from conftest import REPO


def test_docs_embed_the_tested_python_client_verbatim():
    doc = (REPO / "docs" / "mcp-server.md").read_text()
    example = (REPO / "tests" / "python" / "example_client.py").read_text()
    assert "```python\n" + example + "```" in doc, "update the Python block in docs/mcp-server.md"
