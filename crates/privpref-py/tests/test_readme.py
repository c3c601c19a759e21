"""The Python examples of README.md and docs/python.md run as written."""

from __future__ import annotations

import re

from conftest import REPO


def test_the_readme_python_example_runs(capsys):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README.md has no python block"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "converged" in out and "guarantee" in out


def test_the_python_guide_examples_run():
    text = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 1
    for i, code in enumerate(blocks):
        exec(compile(code, f"docs/python.md block {i}", "exec"), {})


def test_sources_parse_as_python_3_9():
    import ast

    for path in (REPO / "crates" / "privpref-py").rglob("*.py*"):
        if path.suffix in (".py", ".pyi") and "target" not in path.parts:
            ast.parse(path.read_text(), filename=str(path), feature_version=(3, 9))
