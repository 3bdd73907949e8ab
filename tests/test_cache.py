"""The per-file result cache: hits, invalidation, corruption, and where it lives."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

import devicelint.runner as runner_module
from devicelint import cache as cache_module
from devicelint.cli import main

BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()  # comment\n"


def run(args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1"])
    finally:
        os.chdir(old)


def _count_lints(monkeypatch) -> list[str]:
    seen: list[str] = []
    original = runner_module.lint_source

    def counting(data, path, rules, **kwargs):
        seen.append(path)
        return original(data, path, rules, **kwargs)

    monkeypatch.setattr(runner_module, "lint_source", counting)
    return seen


def test_second_run_answers_from_the_cache(tmp_path, write, monkeypatch):
    write("a.py", BUG)
    write("b.py", "import torch\n")
    first = run([".", "--format", "json"], tmp_path)
    seen = _count_lints(monkeypatch)
    second = run([".", "--format", "json"], tmp_path)
    assert seen == []
    assert second.stdout == first.stdout
    assert json.loads(second.stdout)[0]["fix"] is not None
    assert (tmp_path / ".devicelint_cache" / ".gitignore").read_text().strip().endswith("*")


def test_changed_file_rule_set_or_version_misses(tmp_path, write, monkeypatch):
    target = write("a.py", BUG)
    run(["."], tmp_path)
    seen = _count_lints(monkeypatch)
    target.write_text(BUG + "y = 1\n")
    run(["."], tmp_path)
    assert seen == ["a.py"]
    run([".", "--ignore", "DL301"], tmp_path)
    assert seen == ["a.py", "a.py"]
    monkeypatch.setattr(cache_module, "__version__", "999")
    run(["."], tmp_path)
    assert seen == ["a.py", "a.py", "a.py"]


def test_corrupt_entries_are_ignored(tmp_path, write):
    write("a.py", BUG)
    expected = run([".", "--format", "json"], tmp_path).stdout
    for entry in (tmp_path / ".devicelint_cache").rglob("*.json"):
        entry.write_text("{not json")
    assert run([".", "--format", "json"], tmp_path).stdout == expected
    for entry in (tmp_path / ".devicelint_cache").rglob("*.json"):
        entry.write_text('[{"code": 1}]')
    assert run([".", "--format", "json"], tmp_path).stdout == expected


def test_no_cache_and_cache_dir(tmp_path, write):
    write("a.py", BUG)
    run([".", "--no-cache"], tmp_path)
    assert not (tmp_path / ".devicelint_cache").exists()
    run([".", "--cache-dir", "elsewhere"], tmp_path)
    assert list((tmp_path / "elsewhere").rglob("*.json"))
    assert not (tmp_path / ".devicelint_cache").exists()


def test_a_changed_devicelint_source_misses(tmp_path, write, monkeypatch):
    write("a.py", BUG)
    run(["."], tmp_path)
    seen = _count_lints(monkeypatch)
    monkeypatch.setattr(cache_module, "_code_fingerprint", lambda: "edited")
    run(["."], tmp_path)
    assert seen == ["a.py"]
