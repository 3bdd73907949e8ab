"""Big files are linted in pieces that each parse, with every finding at the file's own line."""

from __future__ import annotations

import libcst as cst

from devicelint.chunking import plan_pieces
from devicelint.engine import lint_source
from devicelint.rules import all_rules

RULES = [rule for rule in all_rules() if rule.code in ("DL101", "DL301")]


def findings(source):
    return [(f.code, f.line, f.column) for f in lint_source(source, "big.py", RULES)]


def test_pieces_cut_between_statements_parse_and_cover_the_file():
    source = "import torch\n" + "".join(f"def f{i}():\n    t = torch.zeros(3)\n    t.cuda()\n\n" for i in range(300))
    pieces = plan_pieces(source, size=2_000)
    assert len(pieces) > 5
    for piece in pieces:
        cst.parse_module(piece.text)
    assert "".join(piece.text for piece in pieces) == source
    first_lines = [piece.line_shift for piece in pieces]
    assert first_lines == sorted(first_lines)


def test_a_decorator_stays_with_its_definition_and_a_string_line_is_not_a_statement():
    docstring = '"""\ndef not_a_statement():\n"""\n'
    block = "@decorator\n@other(1,\n       2)\ndef f():\n    pass\n\n" + docstring
    source = "import torch\n" + block * 200
    for piece in plan_pieces(source, size=500):
        cst.parse_module(piece.text)
        assert not piece.text.startswith("def "), piece.text[:40]
        assert not piece.text.startswith("def not_a_statement")


def huge_literal_file():
    elements = "".join(f"    Entry('op{i}', weights=torch.load('op{i}.pt')),\n" for i in range(2_000))
    return (
        "import torch\n\ndef helper():\n    t = torch.zeros(3)\n    t.cuda()\n\nop_db = [\n"
        + elements
        + "] + extra\n\ndef tail():\n    u = torch.ones(3)\n    u.cuda()\n    return torch.cuda.is_available()  # the last piece says the program picks its device\n"
    )


def test_one_huge_literal_is_cut_between_its_elements():
    pieces = plan_pieces(huge_literal_file(), size=10_000)
    assert len(pieces) > 10
    assert max(len(piece.text) for piece in pieces) < 12_000
    for piece in pieces:
        cst.parse_module(piece.text)


def test_findings_inside_a_split_literal_keep_their_lines_and_columns(monkeypatch):
    source = huge_literal_file()
    whole = findings(source)
    assert len(whole) == 2 + 2_000
    assert ("DL101", 5, 5) in whole and ("DL301", 8, 26) in whole
    monkeypatch.setattr("devicelint.engine.CHUNK_CHARACTERS", 10_000)
    monkeypatch.setattr("devicelint.chunking.CHUNK_CHARACTERS", 10_000)
    assert findings(source) == whole


def test_a_file_the_tokenizer_cannot_follow_falls_back_to_definition_cuts():
    assert plan_pieces("import torch\nx = (\n", size=10) is None
    assert plan_pieces("import torch\rx = 1\r", size=10) is None


def test_lines_named_in_messages_count_in_the_whole_file_not_the_piece(monkeypatch):
    helpers = "".join(f"def helper{i}(a):\n    return a + {i}\n\n" for i in range(200))
    source = (
        "import torch\nimport torch.nn as nn\n\n" + helpers
        + "def main():\n    model = nn.Linear(2, 2)\n    for _ in range(3):\n        model.cuda()\n"
    )
    loop_line = source.splitlines().index("    for _ in range(3):") + 1
    rules = [rule for rule in all_rules() if rule.code == "DL401"]
    monkeypatch.setattr("devicelint.engine.CHUNK_CHARACTERS", 2_000)
    monkeypatch.setattr("devicelint.chunking.CHUNK_CHARACTERS", 2_000)
    [finding] = lint_source(source, "big.py", rules)
    assert finding.line == loop_line + 1
    assert f"the loop at line {loop_line};" in finding.message
