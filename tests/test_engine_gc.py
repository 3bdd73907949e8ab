"""The cyclic garbage collector is paused while one file is linted and restored after, and a big
file's pieces do not pile up while it is paused."""

from __future__ import annotations

import gc

import libcst as cst
import pytest

import devicelint.engine as engine
from devicelint import chunking
from devicelint.engine import lint_source
from devicelint.rules import all_rules

RULES = [rule for rule in all_rules() if rule.default_enabled]
SOURCE = "import torch\nx = torch.zeros(3)\nx.cuda()\n"


@pytest.fixture
def gc_state():
    """Run a test with the collector in a known state, and give the process its own back."""
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def _record_gc_during_parse(monkeypatch):
    seen = []
    real_parse = cst.parse_module

    def parse(text, *args, **kwargs):
        seen.append(gc.isenabled())
        return real_parse(text, *args, **kwargs)

    monkeypatch.setattr(engine.cst, "parse_module", parse)
    return seen


def test_the_collector_is_off_while_a_file_is_linted_and_back_on_after(monkeypatch, gc_state):
    gc.enable()
    seen = _record_gc_during_parse(monkeypatch)
    assert [f.code for f in lint_source(SOURCE, "a.py", RULES)] == ["DL101"]
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off(monkeypatch, gc_state):
    gc.disable()
    lint_source(SOURCE, "a.py", RULES)
    assert not gc.isenabled()


def test_the_collector_is_restored_when_linting_raises(monkeypatch, gc_state):
    gc.enable()

    def interrupted(text, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine.cst, "parse_module", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lint_source(SOURCE, "a.py", RULES)
    assert gc.isenabled()


def test_a_file_linted_in_pieces_frees_each_piece_before_the_next(monkeypatch, gc_state):
    gc.enable()
    collected = []
    real_collect = engine._collect_piece

    def collect():
        collected.append(gc.isenabled())
        real_collect()

    monkeypatch.setattr(engine, "_collect_piece", collect)
    monkeypatch.setattr(engine, "CHUNK_CHARACTERS", 2_000)
    # plan_pieces binds its default size at import: hand it the small size explicitly
    monkeypatch.setattr(engine, "plan_pieces", lambda text: chunking.plan_pieces(text, size=2_000))
    source = "import torch\n" + "".join(f"def f{i}():\n    t = torch.zeros(3)\n    t.cuda()\n\n" for i in range(300))
    found = lint_source(source, "big.py", RULES)
    assert len([f for f in found if f.code == "DL101"]) == 300
    assert len(collected) > 5 and not any(collected)
    assert gc.isenabled()


def test_linting_many_files_leaves_no_cyclic_garbage_behind(gc_state):
    """What the paused collector leaves is collectable garbage, not a leak: after a young
    collection nothing of the files is still tracked (bounded memory over a long run)."""
    gc.enable()
    gc.collect()
    body = "".join(f"def f{i}(m):\n    t = torch.zeros(3)\n    t.cuda()\n    return m(t)\n\n" for i in range(40))
    lint_source("import torch\n" + body, "warm.py", RULES)
    gc.collect()
    before = len(gc.get_objects())
    for index in range(20):
        lint_source("import torch\n" + body, f"f{index}.py", RULES)
    gc.collect()
    assert len(gc.get_objects()) - before < 500
