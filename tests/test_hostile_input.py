"""Input nobody here has seen: each case finishes with findings or a clear DL001, never a
traceback, a crash or a hang."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main
from devicelint.engine import lint_source
from devicelint.rules import all_rules
from devicelint.runner import lint_files

DEFAULT_RULES = [rule for rule in all_rules() if rule.default_enabled]
BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"


def lint(source):
    return [(f.code, f.line, f.message) for f in lint_source(source, "hostile.py", DEFAULT_RULES)]


def run(args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1", "--no-cache", "--format", "json"])
    finally:
        os.chdir(old)


@pytest.mark.parametrize("source", ["", "# only a comment\n# torch mentioned here\n", "\n\n\n"])
def test_empty_and_comment_only_files(source):
    assert lint(source) == []


def test_bom_crlf_and_mixed_line_endings():
    assert [c for c, _, _ in lint(("\ufeff" + BUG).encode("utf-8"))] == ["DL101"]
    assert [(c, l) for c, l, _ in lint(BUG.replace("\n", "\r\n").encode())] == [("DL101", 3)]
    mixed = "import torch\r\nx = torch.randn(3, 3)\nx.cuda()\r\n"
    assert [(c, l) for c, l, _ in lint(mixed.encode())] == [("DL101", 3)]


def test_nul_byte():
    assert [(c, l) for c, l, _ in lint(b"import torch\nx = 1\x00\n")] == [("DL001", 2)]


@pytest.mark.parametrize(
    "source, message",
    [
        ("import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n", "too many nested parentheses"),
        ("import torch\nx = " + "f(" * 3000 + ")" * 3000 + "\n", "too many nested parentheses"),
        ("import torch\nx = a" + ".b" * 20000 + "\n", "nested"),
        ("import torch\nx = " + " + ".join(["a"] * 20000) + "\n", "nested"),
    ],
    ids=["parentheses", "calls", "attributes", "operators"],
)
def test_expressions_nested_thousands_deep_are_a_finding_not_a_crash(source, message):
    # libcst's native parser overflows its stack on these and takes the process with it
    findings = lint(source)
    assert [code for code, _, _ in findings] == ["DL001"]
    assert message in findings[0][2]


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntype Alias[T] = list[T]\ndef f[T](x: T) -> T:\n    return x\nclass C[T]:\n    pass\n",
        "import torch\nmatch command:\n    case [x, y]:\n        z = x.cuda()\n    case {'k': v}:\n        pass\n    case _:\n        pass\n",
        "import torch\nx = f\"{'a' + f'{1}'}\"\ny = f\"{x!r:>{10}}\"\nz = f'{\"\\n\".join([])}'\n",
        "import torch\ntry:\n    pass\nexcept* ValueError:\n    pass\n",
    ],
    ids=["type-parameters", "match", "pep701-fstrings", "except-star"],
)
def test_modern_syntax_parses(source):
    assert [code for code, _, _ in lint(source)] == []


def test_modern_syntax_is_still_analysed():
    source = "import torch\ndef f[T](x: T) -> T:\n    t = torch.zeros(3)\n    t.cuda()\n    return x\n"
    assert [(c, l) for c, l, _ in lint(source)] == [("DL101", 4)]


@pytest.mark.slow
def test_ten_megabyte_file_is_linted_in_pieces_with_every_finding():
    comment = "    # " + "generated " * 8 + "\n"
    block = "\n\ndef step_{i}(loader):\n" + comment * 2 + "    t = torch.zeros(4, 4)\n    t.cuda()\n    return t\n"
    body = "".join(block.format(i=i) for i in range(50_000))
    source = "import torch\n" + body
    assert len(source) > 10_000_000
    findings = lint_source(source, "big.py", [rule for rule in all_rules() if rule.code == "DL101"])
    assert len(findings) == 50_000
    assert [f.line for f in findings[:2]] == [8, 16]
    assert findings[-1].line == source.count("\n") - 1


def test_symlink_loop_unreadable_file_and_directory_named_like_a_module(tmp_path, write, monkeypatch):
    write("pkg/a.py", BUG)
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg")
    (tmp_path / "pkg" / "x.py").mkdir()
    write("pkg/x.py/inner.py", BUG)
    locked = write("pkg/locked.py", BUG)
    original = Path.read_bytes

    def read_bytes(self):
        if self.name == "locked.py":
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = run(["pkg"], tmp_path)
    items = [(item["path"], item["code"], item["message"]) for item in json.loads(result.stdout)]
    assert items == [
        ("pkg/a.py", "DL101", items[0][2]),
        ("pkg/locked.py", "DL001", "cannot read file: Permission denied"),
        ("pkg/x.py/inner.py", "DL101", items[2][2]),
    ]
    assert locked.exists()


def test_spaces_and_non_ascii_in_paths(tmp_path, write):
    write("my project/naïve módulo.py", BUG)
    result = run(["my project"], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["my project/naïve módulo.py"]


def test_file_deleted_between_discovery_and_reading(tmp_path, write):
    gone = write("gone.py", BUG)
    kept = write("kept.py", BUG)
    files = [gone, kept]
    gone.unlink()
    findings = lint_files(files, [rule.code for rule in DEFAULT_RULES], jobs=1)
    assert [(Path(f.path).name, f.code) for f in findings] == [("gone.py", "DL001"), ("kept.py", "DL101")]
    assert "No such file or directory" in findings[0].message


def test_a_worker_that_dies_is_reported_and_the_run_finishes(tmp_path, write, monkeypatch):
    from devicelint.rules.dl101_discarded_move import DiscardedMove

    original = DiscardedMove.on_call

    def killer(self, event):
        if self.ctx.path.endswith("killer.py"):
            os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
        return original(self, event)

    monkeypatch.setattr(DiscardedMove, "on_call", killer)
    paths = [write(f"f{index:02d}.py", BUG) for index in range(40)]
    paths.insert(17, write("killer.py", BUG))
    findings = lint_files(paths, [rule.code for rule in DEFAULT_RULES], jobs=2)
    by_file = {(Path(f.path).name, f.code) for f in findings}
    assert ("killer.py", "DL002") in by_file
    assert all((f"f{index:02d}.py", "DL101") in by_file for index in range(40))
    assert len(findings) == 41
