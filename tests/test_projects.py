"""Whole-project analysis: a file's analysis reads the modules of its project that it imports.

fixtures/projects/<shape>/bad and good are small projects, one per cross-file shape; the bad
one marks each expected finding with ``# expect: DLnnn`` and the good one has none.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

from devicelint.cache import ResultCache
from devicelint.engine import lint_source
from devicelint.project import ProjectIndex
from devicelint.rules import all_rules
from devicelint.runner import lint_files

PROJECTS = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
SHAPES = sorted(path.name for path in PROJECTS.iterdir() if path.is_dir())
DEFAULT_RULES = [rule for rule in all_rules() if rule.default_enabled]
CODES = [rule.code for rule in DEFAULT_RULES]
_EXPECT = re.compile(r"#\s*expect:\s*(DL\d{3})")

#: the expected findings that only a reading of the other modules can give: linted file by file
#: (the analysis before whole-project analysis), these are missed
NEEDS_PROJECT = {
    "helper_cpu_tensor": {("train.py", 14, "DL202")},
    "load_location_default": {("predict.py", 11, "DL301")},
    "load_wrapper": {("evaluate.py", 11, "DL301")},
    "model_in_other_file": {("nets/heads.py", 13, "DL202")},
    "numpy_on_imported_model": {("predict.py", 14, "DL204")},
    "optimizer_before_move": {("train.py", 11, "DL407")},
}


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _expected(folder: Path) -> set[tuple[str, int, str]]:
    expected = set()
    for path in _files(folder):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for code in _EXPECT.findall(line):
                expected.add((path.relative_to(folder).as_posix(), number, code))
    return expected


def _found(folder: Path, cross_file: bool = True, jobs: int = 1) -> set[tuple[str, int, str]]:
    findings = lint_files(_files(folder), CODES, jobs=jobs, cross_file=cross_file)
    return {(Path(f.path).relative_to(folder).as_posix(), f.line, f.code) for f in findings}


def test_every_shape_has_a_bad_and_a_good_project():
    assert len(SHAPES) >= 5
    for shape in SHAPES:
        assert _expected(PROJECTS / shape / "bad"), f"{shape}/bad marks no expected finding"
        assert _files(PROJECTS / shape / "good"), f"{shape} has no good project"


@pytest.mark.parametrize("shape", SHAPES)
def test_bad_project_findings_are_exactly_the_marked_ones(shape):
    folder = PROJECTS / shape / "bad"
    assert _found(folder) == _expected(folder)


@pytest.mark.parametrize("shape", SHAPES)
def test_good_project_is_clean(shape):
    assert _found(PROJECTS / shape / "good") == set()


@pytest.mark.parametrize("shape", sorted(NEEDS_PROJECT))
def test_file_by_file_analysis_misses_the_cross_file_findings(shape):
    """What whole-project analysis adds: these findings need the other modules."""
    folder = PROJECTS / shape / "bad"
    assert NEEDS_PROJECT[shape] <= _expected(folder)
    assert not NEEDS_PROJECT[shape] & _found(folder, cross_file=False)


def test_linting_one_file_still_reads_the_modules_it_imports(tmp_path):
    """pre-commit passes only the changed file: the index covers the project, not the command line."""
    folder = tmp_path / "proj"
    shutil.copytree(PROJECTS / "helper_cpu_tensor" / "bad", folder)
    (folder / "pyproject.toml").write_text("")
    findings = lint_files([folder / "train.py"], CODES)
    assert [(f.line, f.code) for f in findings] == [(14, "DL202")]
    message = findings[0].message
    assert "`causal_bias()` returns a CPU tensor" in message and "line 11 of utils.py" in message


def test_messages_and_notes_name_the_other_file(tmp_path):
    folder = tmp_path / "proj"
    shutil.copytree(PROJECTS / "optimizer_before_move" / "bad", folder)
    (folder / "pyproject.toml").write_text("")
    project = ProjectIndex()
    path = folder / "train.py"
    view = project.view(str(path))
    findings = lint_source(path.read_bytes(), str(path), DEFAULT_RULES, project=view)
    assert [f.code for f in findings] == ["DL407"]
    assert [Path(read).name for read in view.reads] == ["optim_factory.py"]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))


_TRAIN = """\
    import torch
    import torch.nn as nn
    from helpers import make_bias

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 4).to(device)

    def step(x):
        out = model(x.to(device))
        return out + make_bias(4)
"""


def test_a_change_in_an_imported_module_invalidates_the_importers_cached_result(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "",
        "train.py": _TRAIN,
        "helpers.py": "import torch\n\ndef make_bias(n):\n    return torch.zeros(2, n)\n",
    })
    cache = ResultCache(tmp_path / ".cache", CODES)
    first = lint_files([tmp_path / "train.py"], CODES, cache=cache)
    assert [f.code for f in first] == ["DL202"]
    again = lint_files([tmp_path / "train.py"], CODES, cache=cache)
    assert [f.code for f in again] == ["DL202"]  # answered from the cache, same result
    (tmp_path / "helpers.py").write_text("import torch\n\ndef make_bias(n, device=None):\n    return torch.zeros(2, n, device=device)\n")
    (tmp_path / "train.py").read_bytes()  # train.py itself is unchanged
    after = lint_files([tmp_path / "train.py"], CODES, cache=cache)
    assert after == []
    (tmp_path / "helpers.py").unlink()  # deleted: the import now leads outside the project
    assert lint_files([tmp_path / "train.py"], CODES, cache=cache) == []


def test_broken_cyclic_starred_and_shadowing_modules_never_stop_the_run(tmp_path):
    _write(tmp_path, {
        "setup.py": "",
        "a.py": "import torch\nfrom b import helper_b\n\ndef helper_a():\n    return helper_b()\n",
        "b.py": "import torch\nfrom a import helper_a\n\ndef helper_b():\n    return helper_a()\n",
        "broken.py": "import torch\ndef f(:\n",
        "stars.py": "from torch import *\nfrom a import *\n",
        "torch.py": "raise SystemExit('a local torch.py must never be read as torch')\n",
        "train.py": """\
            import torch
            import torch.nn as nn
            from a import helper_a
            from broken import f
            from stars import zeros
            import missing_module

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = nn.Linear(4, 4).to(device)
            out = model(torch.randn(2, 4, device=device))
            y = out + helper_a() + f() + zeros(3)
            z = torch.ones(2, 4) + out  # a finding the run must not lose
        """,
    })
    files = sorted(tmp_path.glob("*.py"))
    findings = lint_files(files, CODES)
    by_file = {(Path(f.path).name, f.line, f.code) for f in findings}
    assert ("train.py", 12, "DL201") in by_file
    assert ("broken.py", 2, "DL001") in by_file
    assert not any(f.code == "DL002" for f in findings), [f.message for f in findings if f.code == "DL002"]


def test_process_pool_gives_the_same_findings(tmp_path):
    helpers = "import torch\n\ndef make_bias(n):\n    return torch.zeros(2, n)\n"
    files = {"pyproject.toml": "", "helpers.py": helpers}
    for index in range(20):
        files[f"train_{index:02}.py"] = _TRAIN
    _write(tmp_path, files)
    paths = sorted(tmp_path.glob("*.py"))
    one = lint_files(paths, CODES, jobs=1)
    pool = lint_files(paths, CODES, jobs=2)
    assert len(one) == 20 and sorted(one, key=lambda f: f.path) == sorted(pool, key=lambda f: f.path)


def test_relative_and_package_imports_resolve(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "",
        "pkg/__init__.py": "from .layers import Block\n",
        "pkg/layers/__init__.py": "from .block import Block\n",
        "pkg/layers/block.py": "import torch.nn as nn\n\nclass Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n",
        "pkg/model.py": """\
            import torch
            from . import Block
            import pkg.layers as L

            class Net(Block):
                def forward(self, x):
                    return self.fc(x) + torch.ones(x.size(0), 4)

            class Other(L.Block):
                def forward(self, x):
                    return self.fc(x) * torch.rand(x.size(0), 4)
        """,
    })
    findings = lint_files([tmp_path / "pkg" / "model.py"], [rule.code for rule in all_rules()])
    assert sorted((f.line, f.code) for f in findings) == [(7, "DL202"), (11, "DL202")]
    assert lint_files([tmp_path / "pkg" / "model.py"], CODES, cross_file=False) == []


def test_command_line_reads_the_project_unless_single_file(tmp_path):
    from click.testing import CliRunner

    from devicelint.cli import main

    folder = tmp_path / "proj"
    shutil.copytree(PROJECTS / "helper_cpu_tensor" / "bad", folder)
    (folder / "pyproject.toml").write_text("")
    runner = CliRunner()
    default = runner.invoke(main, [str(folder / "train.py"), "--no-cache"])
    assert default.exit_code == 1 and "DL202" in default.output and "line 11 of utils.py" in default.output
    alone = runner.invoke(main, [str(folder / "train.py"), "--no-cache", "--single-file"])
    assert alone.exit_code == 0, alone.output
    sarif = runner.invoke(main, [str(folder), "--no-cache", "--format", "sarif"])
    assert sarif.exit_code == 1


def test_one_import_statement_naming_a_project_module_and_torch_binds_both(tmp_path):
    _write(tmp_path, {
        "pyproject.toml": "",
        "helpers.py": "def scale():\n    return 2.0\n",
        "train.py": """\
            import helpers, torch

            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            model = torch.nn.Linear(4, 4).to(device)

            def step(x):
                out = model(x.to(device)) * helpers.scale()
                return out + torch.ones(2, 4)
        """,
    })
    findings = lint_files([tmp_path / "train.py"], CODES)
    assert [(f.line, f.code) for f in findings] == [(8, "DL202")]
