"""The command line: every option, exit code, output format, config key and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main

BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"
LOAD = "import torch\nstate = torch.load('a.pt')\nuse_gpu = torch.cuda.is_available()\n"
CLEAN = "import torch\nx = torch.randn(3, 3, device=\"cuda\")\n"


def run(args, cwd: Path):
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, [*args, "--jobs", "1"] if args[:1] != ["rule"] else args)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path, write):
    write("pkg/bug.py", BUG)
    write("pkg/load.py", LOAD)
    write("pkg/clean.py", CLEAN)
    return tmp_path


def codes(result) -> list[str]:
    return [item["code"] for item in json.loads(result.stdout)]


def test_text_output_and_exit_one(project):
    result = run(["pkg"], project)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("pkg/bug.py:3:1: DL101 [*] `x.cuda()`") for line in lines)
    assert any(line.startswith("pkg/load.py:2:9: DL301 [*] ") for line in lines)
    assert lines[-2:] == ["Found 2 findings.", "[*] 2 fixable with the `--fix` option."]


def test_clean_tree_exits_zero(tmp_path, write):
    write("ok.py", CLEAN)
    result = run(["ok.py"], tmp_path)
    assert result.exit_code == 0
    assert result.stdout == "All checks passed.\n"


def test_default_path_is_current_directory(project):
    result = run([], project)
    assert result.exit_code == 1
    assert "pkg/bug.py" in result.stdout


def test_json_output_has_exactly_the_documented_keys(project):
    result = run(["pkg", "--format", "json"], project)
    items = json.loads(result.stdout)
    assert [set(item) for item in items] == [
        {"code", "name", "severity", "message", "path", "cell", "line", "column", "end_line", "end_column", "fix"}
    ] * 2
    bug = next(item for item in items if item["code"] == "DL101")
    assert (bug["line"], bug["column"], bug["end_line"], bug["end_column"]) == (3, 1, 3, 9)
    assert bug["severity"] == "error" and bug["name"] == "discarded-move"
    assert bug["cell"] is None  # only notebook findings have a cell
    assert bug["fix"]["edits"] == [{"cell": None, "line": 3, "column": 1, "end_line": 3, "end_column": 1, "content": "x = "}]


def test_github_output_uses_workflow_commands_by_severity(project):
    result = run(["pkg", "--format", "github"], project)
    lines = result.stdout.splitlines()
    assert "::error file=pkg/bug.py,line=3,col=1,title=DL101::" in lines[0] or any(
        line.startswith("::error file=pkg/bug.py,line=3,col=1,title=DL101::") for line in lines
    )
    assert any(line.startswith("::warning file=pkg/load.py,line=2,col=9,title=DL301::") for line in lines)


def test_github_notice_for_info_severity(tmp_path, write):
    write("dp.py", "import torch\nm = torch.nn.DataParallel(net, device_ids=[0, 1, 2])\n")
    result = run(["dp.py", "--format", "github", "--extend-select", "DL405"], tmp_path)  # info: opt-in
    assert result.stdout.startswith("::notice file=dp.py,line=2,")


def test_select_ignore_and_prefixes(project):
    assert codes(run(["pkg", "--format", "json", "--select", "DL3"], project)) == ["DL301"]
    assert codes(run(["pkg", "--format", "json", "--ignore", "DL101"], project)) == ["DL301"]
    assert codes(run(["pkg", "--format", "json", "--select", "DL", "--ignore", "DL1"], project)) == ["DL301"]
    assert codes(run(["pkg", "--format", "json", "--select", "ALL", "--ignore", "DL3,DL1"], project)) == []
    assert codes(run(["pkg", "--format", "json", "--select", "DL3", "--extend-select", "DL101"], project)) == ["DL101", "DL301"]
    # the most specific selector wins
    assert codes(run(["pkg", "--format", "json", "--ignore", "DL1", "--extend-select", "DL101"], project)) == ["DL101", "DL301"]


def test_unknown_code_exits_two_naming_it(project):
    for option in ("--select", "--ignore", "--extend-select"):
        result = run(["pkg", option, "DL999"], project)
        assert result.exit_code == 2
        assert "DL999" in result.stderr
        assert "Traceback" not in result.output


def test_exit_zero(project):
    result = run(["pkg", "--exit-zero"], project)
    assert result.exit_code == 0
    assert "DL101" in result.stdout


def test_statistics(project):
    result = run(["pkg", "--statistics"], project)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "1  DL101  [*] discarded-move",
        "1  DL301  [*] load-without-map-location",
        "Found 2 findings.",
        "[*] 2 fixable with the `--fix` option.",
    ]
    data = json.loads(run(["pkg", "--statistics", "--format", "json"], project).stdout)
    assert data == [
        {"code": "DL101", "name": "discarded-move", "count": 1, "fixable": 1},
        {"code": "DL301", "name": "load-without-map-location", "count": 1, "fixable": 1},
    ]


def test_jobs_runs_a_process_pool_with_the_same_result(tmp_path, write):
    for index in range(40):
        write(f"many/m{index:02d}.py", BUG if index % 2 else LOAD)
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        serial = runner.invoke(main, ["many", "--format", "json", "--jobs", "1"]).stdout
        parallel = runner.invoke(main, ["many", "--format", "json", "--jobs", "2"]).stdout
    finally:
        os.chdir(old)
    assert serial == parallel
    assert len(json.loads(parallel)) == 40


def test_list_rules_and_version(tmp_path):
    result = run(["--list-rules"], tmp_path)
    assert result.exit_code == 0
    assert any(line.startswith("DL101  [*] discarded-move") for line in result.stdout.splitlines())
    version = CliRunner().invoke(main, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("devicelint, version ")


def test_exclude_and_skipped_directories(tmp_path, write):
    write("src/a.py", BUG)
    write("src/generated/b.py", BUG)
    write("src/build/c.py", BUG)
    write("src/.venv/d.py", BUG)
    write("src/env2/pyvenv.cfg", "home = /usr\n")
    write("src/env2/e.py", BUG)
    write("src/node_modules/f.py", BUG)
    result = run(["src", "--extend-exclude", "generated", "--format", "json"], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["src/a.py"]


def test_explicit_file_is_always_linted(tmp_path, write):
    write("build/explicit.py", BUG)
    result = run(["build/explicit.py", "--exclude", "build", "--format", "json"], tmp_path)
    assert codes(result) == ["DL101"]


def test_gitignored_paths_are_skipped(tmp_path, write):
    (tmp_path / ".git").mkdir()
    write(".gitignore", "ignored/\n*_gen.py\n")
    write("ignored/a.py", BUG)
    write("pkg/b_gen.py", BUG)
    write("pkg/sub/.gitignore", "local.py\n")
    write("pkg/sub/local.py", BUG)
    write("pkg/kept.py", BUG)
    result = run([".", "--format", "json"], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["pkg/kept.py"]


def test_pyi_files_are_linted_and_other_suffixes_not(tmp_path, write):
    write("a.pyi", BUG)
    write("b.txt", BUG)
    result = run([".", "--format", "json"], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == ["a.pyi"]


def test_missing_path_exits_two_and_lints_the_rest(project):
    result = run(["pkg", "missing.py"], project)
    assert result.exit_code == 2
    assert "missing.py: no such file or directory" in result.stderr
    assert "DL101" in result.stdout
    assert "Traceback" not in result.output


def test_a_missing_path_alone_does_not_claim_all_checks_passed(tmp_path):
    result = run(["missing.py"], tmp_path)
    assert result.exit_code == 2
    assert "missing.py: no such file or directory" in result.stderr
    assert "All checks passed" not in result.output


def test_directory_without_python_files(tmp_path, write):
    write("docs/readme.md", "# nothing\n")
    result = run(["docs"], tmp_path)
    assert result.exit_code == 0
    assert "no Python files found under docs" in result.stderr


# --------------------------------------------------------------------------- config

def test_config_keys(tmp_path, write):
    write("pkg/bug.py", BUG)
    write("pkg/load.py", LOAD)
    write("tests/test_x.py", LOAD)
    write("vendor/v.py", BUG)
    write(
        "pyproject.toml",
        '[tool.devicelint]\nselect = ["DL1", "DL3"]\nignore = ["DL104"]\nextend-select = ["DL401"]\n'
        'exclude = ["vendor"]\n[tool.devicelint.per-file-ignores]\n"tests/*" = ["DL301"]\n',
    )
    result = run([".", "--format", "json"], tmp_path)
    assert [(item["path"], item["code"]) for item in json.loads(result.stdout)] == [
        ("pkg/bug.py", "DL101"),
        ("pkg/load.py", "DL301"),
    ]


def test_config_select_is_replaced_by_cli_select(tmp_path, write):
    write("pkg/bug.py", BUG)
    write("pkg/load.py", LOAD)
    write("pyproject.toml", '[tool.devicelint]\nselect = ["DL3"]\n')
    assert codes(run(["pkg", "--format", "json"], tmp_path)) == ["DL301"]
    assert codes(run(["pkg", "--format", "json", "--select", "DL1"], tmp_path)) == ["DL101"]


def test_nearest_pyproject_with_the_table_is_used(tmp_path, write):
    write("pyproject.toml", '[tool.devicelint]\nignore = ["DL101"]\n')
    write("sub/pyproject.toml", "[project]\nname = 'x'\n")
    write("sub/bug.py", BUG)
    assert codes(run(["bug.py", "--format", "json"], tmp_path / "sub")) == []


@pytest.mark.parametrize(
    "content, message",
    [
        ('[tool.devicelint]\nselct = ["DL1"]\n', "unknown key 'selct'"),
        ('[tool.devicelint]\nselect = "DL1"\n', "'select' in [tool.devicelint]"),
        ('[tool.devicelint]\nignore = ["DL777"]\n', "'DL777'"),
        ('[tool.devicelint]\nper-file-ignores = ["x"]\n', "'per-file-ignores'"),
        ('[tool.devicelint]\n[tool.devicelint.per-file-ignores]\n"a/*" = "DL101"\n', "'a/*'"),
        ('[tool.devicelint\nselect = 1\n', "not valid TOML"),
    ],
)
def test_bad_config_exits_two_naming_the_problem(tmp_path, write, content, message):
    write("pyproject.toml", content)
    write("bug.py", BUG)
    result = run(["bug.py"], tmp_path)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_explicit_config_option(tmp_path, write):
    write("bug.py", BUG)
    write("conf/pyproject.toml", '[tool.devicelint]\nignore = ["DL1"]\n')
    assert codes(run(["bug.py", "--format", "json", "--config", "conf/pyproject.toml"], tmp_path)) == []


# --------------------------------------------------------------------------- suppressions

@pytest.mark.parametrize(
    "line, silenced",
    [
        ("x.cuda()  # noqa", True),
        ("x.cuda()  # noqa: DL101", True),
        ("x.cuda()  # noqa: E501, DL101", True),
        ("x.cuda()  # noqa:DL201", False),
        ("x.cuda()  # devicelint: ignore[DL101]", True),
        ("x.cuda()  # devicelint: ignore[DL201, DL101]", True),
        ("x.cuda()  # devicelint: ignore[DL301]", False),
        ("x.cuda()", False),
    ],
)
def test_suppression_comments(tmp_path, write, line, silenced):
    write("s.py", f"import torch\nx = torch.randn(3, 3)\n{line}\n")
    result = run(["s.py", "--format", "json"], tmp_path)
    assert codes(result) == ([] if silenced else ["DL101"])


def test_suppression_below_a_form_feed_line_stays_on_its_line(tmp_path, write):
    # a form feed is no line break to Python: the comment must count lines as the findings do
    write("s.py", "import torch\n\x0c\nx = torch.zeros(3)\nx.cuda()  # devicelint: ignore[DL101]\n")
    write("t.py", "import torch\n\x0c\nx = torch.zeros(3)\nx.cuda()\n")
    result = run([".", "--format", "json"], tmp_path)
    assert [(item["path"], item["code"], item["line"]) for item in json.loads(result.stdout)] == [("t.py", "DL101", 4)]


def test_skip_file(tmp_path, write):
    write("s.py", "# devicelint: skip-file\n" + BUG)
    assert run(["s.py"], tmp_path).exit_code == 0


# --------------------------------------------------------------------------- robustness

def test_syntax_error_is_a_finding_and_the_run_goes_on(tmp_path, write):
    write("a_broken.py", "import torch\ndef f(:\n    pass\n")
    write("b_bug.py", BUG)
    result = run([".", "--format", "json"], tmp_path)
    items = json.loads(result.stdout)
    assert [(item["path"], item["code"]) for item in items] == [("a_broken.py", "DL001"), ("b_bug.py", "DL101")]
    assert items[0]["line"] == 2 and items[0]["message"].startswith("syntax error")


def test_undecodable_file_is_reported_cleanly(tmp_path, write):
    write("latin.py", b"import torch\nname = '\xff\xfe'\n")
    write("b_bug.py", BUG)
    result = run([".", "--format", "json"], tmp_path)
    items = json.loads(result.stdout)
    assert [(item["path"], item["code"]) for item in items] == [("b_bug.py", "DL101"), ("latin.py", "DL001")]
    assert "cannot decode" in items[1]["message"]
    assert "Traceback" not in result.output


def test_declared_encoding_and_bom_are_honoured(tmp_path, write):
    write("latin.py", "# -*- coding: latin-1 -*-\nimport torch\nname = 'é'\nx = torch.randn(3, 3)\nx.cuda()\n".encode("latin-1"))
    write("bom.py", b"\xef\xbb\xbf" + BUG.encode())
    result = run([".", "--format", "json"], tmp_path)
    assert [(item["path"], item["line"]) for item in json.loads(result.stdout)] == [("bom.py", 3), ("latin.py", 5)]


def test_crashing_rule_becomes_dl002_and_keeps_other_findings(monkeypatch):
    from devicelint.engine import lint_source
    from devicelint.rules import all_rules
    from devicelint.rules.dl201_mixed_device_op import MixedDeviceOp

    def explode(self, event):
        raise KeyError("boom")

    monkeypatch.setattr(MixedDeviceOp, "on_binary", explode)
    code = "import torch\nx = torch.randn(3, 3)\nx.cuda()\ny = x + x\n"
    findings = lint_source(code, "crash.py", [r for r in all_rules() if r.default_enabled])
    assert [(f.code, f.line) for f in findings] == [("DL002", 1), ("DL101", 3)]
    assert "rule DL201 (mixed-device-op) crashed" in findings[0].message and "KeyError" in findings[0].message
    assert "Traceback" not in findings[0].message
    verbose = lint_source(code, "crash.py", [r for r in all_rules() if r.default_enabled], verbose=True)
    assert "Traceback" in verbose[0].message


def test_crash_in_one_file_keeps_other_files(tmp_path, write, monkeypatch):
    from devicelint.rules.dl301_load_without_map_location import LoadWithoutMapLocation

    original = LoadWithoutMapLocation.on_call

    def fragile(self, event):
        if self.ctx.path.endswith("fragile.py"):
            raise RuntimeError("only here")
        return original(self, event)

    monkeypatch.setattr(LoadWithoutMapLocation, "on_call", fragile)
    write("fragile.py", LOAD)
    write("sturdy.py", LOAD)
    result = run([".", "--format", "json"], tmp_path)
    assert [(item["path"], item["code"]) for item in json.loads(result.stdout)] == [
        ("fragile.py", "DL002"),
        ("sturdy.py", "DL301"),
    ]


def test_files_without_torch_are_not_parsed(monkeypatch):
    import libcst

    from devicelint.engine import lint_source
    from devicelint.rules import all_rules

    calls = []
    monkeypatch.setattr(libcst, "parse_module", lambda *a, **k: calls.append(a))
    assert lint_source("import numpy as np\nx = np.zeros(3)\n", "n.py", all_rules()) == []
    assert calls == []


def test_files_that_only_import_a_pytorch_library_are_linted():
    from devicelint.engine import lint_source
    from devicelint.rules import all_rules

    source = (
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "model = AutoModelForSequenceClassification.from_pretrained('bert-base-uncased').to('cuda')\n"
        "inputs = tokenizer(['a sentence'], return_tensors='pt')\n"
        "outputs = model(**inputs)\n"
    )
    codes = {(finding.code, finding.line) for finding in lint_source(source, "hf.py", all_rules())}
    assert ("DL203", 4) in codes  # the tokenizer's host batch reaches the moved model


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch\n", True),
        ("from torchvision import models\n", True),
        ("from transformers import AutoModel\n", True),
        ("import diffusers\n", True),
        ("    from lightning.pytorch import Trainer\n", True),
        ("import timm\n", True),
        ("from accelerate import Accelerator\n", True),
        ("from allennlp.models.archival import load_archive\n", True),
        ("import numpy as np\n", False),
        ("# this code will accelerate nothing\nx = 'transformers'\n", False),
        ("import transformers_utils_of_mine\n", False),
    ],
)
def test_which_files_may_use_pytorch(source, expected):
    from devicelint.prefilter import may_use_pytorch

    assert may_use_pytorch(source) is expected


def test_linting_never_imports_torch(tmp_path, write):
    write("pkg/bug.py", BUG)
    script = (
        "import sys\nfrom click.testing import CliRunner\nfrom devicelint.cli import main\n"
        "result = CliRunner().invoke(main, ['pkg', '--jobs', '1'])\n"
        "assert result.exit_code == 1, result.output\n"
        "print('torch' in sys.modules)\n"
    )
    output = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "False"


def test_python_dash_m_entry_point(tmp_path, write):
    write("bug.py", BUG)
    result = subprocess.run([sys.executable, "-m", "devicelint", "bug.py", "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1
    assert "DL101" in result.stdout


def test_directory_named_explicitly_is_linted_even_if_an_enclosing_gitignore_ignores_it(tmp_path, write):
    (tmp_path / ".git").mkdir()
    write(".gitignore", ".venv/\n")
    write(".venv/lib/site-packages/pkg/a.py", BUG)
    write(".venv/lib/site-packages/pkg/.gitignore", "skipped.py\n")
    write(".venv/lib/site-packages/pkg/skipped.py", BUG)
    assert codes(run([".", "--format", "json"], tmp_path)) == []
    result = run([".venv/lib/site-packages/pkg", "--format", "json"], tmp_path)
    assert [item["path"] for item in json.loads(result.stdout)] == [".venv/lib/site-packages/pkg/a.py"]


def test_verbose_shows_the_traceback_of_an_internal_error(tmp_path, write, monkeypatch):
    from devicelint.rules.dl301_load_without_map_location import LoadWithoutMapLocation

    def broken(self, event):
        raise ValueError("planted")

    monkeypatch.setattr(LoadWithoutMapLocation, "on_call", broken)
    write("load.py", LOAD)
    quiet = run(["load.py"], tmp_path)
    assert quiet.exit_code == 1
    assert "DL002 rule DL301 (load-without-map-location) crashed on this file: ValueError: planted" in quiet.stdout
    assert "Traceback" not in quiet.stdout
    loud = run(["load.py", "--verbose"], tmp_path)
    assert "Traceback (most recent call last)" in loud.stdout


def test_an_off_by_default_rule_is_selected_by_its_code_or_all_only(tmp_path, write):
    write("script.py", "import torch\nx = torch.zeros(3).cuda()\n")
    assert codes(run(["script.py", "--format", "json"], tmp_path)) == []
    assert codes(run(["script.py", "--format", "json", "--select", "DL3"], tmp_path)) == []
    assert codes(run(["script.py", "--format", "json", "--extend-select", "DL314"], tmp_path)) == ["DL314"]
    assert codes(run(["script.py", "--format", "json", "--select", "ALL"], tmp_path)) == ["DL314"]
    assert codes(run(["script.py", "--format", "json", "--select", "ALL", "--ignore", "DL3"], tmp_path)) == []
