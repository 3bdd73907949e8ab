"""Standard input (`devicelint -`, --stdin-filename), exclusions (exclude, extend-exclude,
--force-exclude) and configuration found from the linted paths, through the public CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main

BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"
FIXED = "import torch\nx = torch.randn(3, 3)\nx = x.cuda()\n"
LOAD = "import torch\nstate = torch.load('a.pt')\nuse_gpu = torch.cuda.is_available()\n"
#: a finding without a fix (DL201 at 4:1) and one with a fix (DL101 at 5:1)
MIXED = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nx = torch.randn(4, 2)\nmodel(x)\nx.cuda()\n"


def run(args, cwd: Path, stdin=None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1"], input=stdin)
    finally:
        os.chdir(old)


def found(result) -> list[tuple[str, str]]:
    """(path, code) of every finding in a --format json run's stdout."""
    return sorted((item["path"], item["code"]) for item in json.loads(result.stdout))


# --------------------------------------------------------------------------- standard input

@pytest.mark.parametrize("args", [["-", "--stdin-filename", "src/train.py"], ["--stdin-filename", "src/train.py"]])
def test_stdin_is_reported_under_its_filename(tmp_path, args):
    result = run(args, tmp_path, stdin=BUG)
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("src/train.py:3:1: DL101 [*] ")
    assert not (tmp_path / "src").exists()  # the name is only a name: nothing is read or written there


def test_stdin_without_a_filename_is_reported_as_dash(tmp_path):
    result = run(["-", "--format", "json"], tmp_path, stdin=BUG)
    assert result.exit_code == 1
    assert found(result) == [("-", "DL101")]


def test_stdin_follows_the_configuration_and_per_file_ignores_of_its_filename(tmp_path, write):
    write("proj/pyproject.toml", '[tool.devicelint]\nignore = ["DL301"]\n[tool.devicelint.per-file-ignores]\n"tests/*" = ["DL101"]\n')
    source = LOAD + "x = torch.randn(3)\nx.cuda()\n"
    in_tests = run(["-", "--stdin-filename", "proj/tests/test_train.py", "--format", "json"], tmp_path, stdin=source)
    assert in_tests.exit_code == 0 and found(in_tests) == []
    in_src = run(["-", "--stdin-filename", "proj/src/train.py", "--format", "json"], tmp_path, stdin=source)
    assert found(in_src) == [("proj/src/train.py", "DL101")]
    # without the project's configuration, DL301 is on
    elsewhere = run(["-", "--stdin-filename", "other/train.py", "--format", "json"], tmp_path, stdin=source)
    assert found(elsewhere) == [("other/train.py", "DL101"), ("other/train.py", "DL301")]


def test_stdin_fix_writes_the_fixed_source_to_stdout_and_the_report_to_stderr(tmp_path):
    result = run(["-", "--stdin-filename", "src/train.py", "--fix"], tmp_path, stdin=MIXED)
    assert result.stdout == MIXED.replace("\nx.cuda()", "\nx = x.cuda()")
    assert "Applied 1 fix." in result.stderr
    assert "src/train.py:4:1: DL201 " in result.stderr  # what is left, on stderr
    assert "DL101" not in result.stderr
    assert result.exit_code == 1
    clean = run(["-", "--stdin-filename", "src/train.py", "--fix"], tmp_path, stdin=BUG)
    assert clean.exit_code == 0 and clean.stdout == FIXED
    assert "All checks passed." in clean.stderr


def test_stdin_fix_keeps_the_bytes_it_does_not_fix(tmp_path):
    untouched = b"\xef\xbb\xbfimport torch\r\nx = torch.randn(3)  # nothing to fix\r\n"
    result = CliRunner().invoke(main, ["-", "--fix", "--no-cache"], input=untouched)
    assert result.exit_code == 0 and result.stdout_bytes == untouched
    with_bom = b"\xef\xbb\xbf" + BUG.replace("\n", "\r\n").encode()
    fixed = CliRunner().invoke(main, ["-", "--fix", "--no-cache"], input=with_bom)
    assert fixed.stdout_bytes == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()


def test_stdin_diff_prints_the_diff_and_writes_no_source(tmp_path):
    result = run(["-", "--stdin-filename", "src/train.py", "--diff"], tmp_path, stdin=BUG)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == ["--- a/src/train.py", "+++ b/src/train.py"]
    assert "-x.cuda()" in result.stdout and "+x = x.cuda()" in result.stdout
    nothing = run(["-", "--stdin-filename", "src/train.py", "--diff"], tmp_path, stdin=FIXED)
    assert nothing.exit_code == 0 and nothing.stdout == ""


def test_stdin_that_is_not_utf8_is_dl001_without_a_traceback(tmp_path):
    source = b"import torch\nx = '\xff'\n"
    result = run(["-", "--stdin-filename", "bad.py", "--format", "json"], tmp_path, stdin=source)
    assert result.exit_code == 1
    assert found(result) == [("bad.py", "DL001")]
    fixing = run(["-", "--stdin-filename", "bad.py", "--fix"], tmp_path, stdin=source)
    assert fixing.stdout_bytes == source  # handed back as it came
    assert re.search(r"^bad\.py:\d+:\d+: DL001 ", fixing.stderr, re.MULTILINE)
    assert "Traceback" not in result.output + fixing.output


def test_force_exclude_skips_an_excluded_stdin_filename(tmp_path, write):
    write("pyproject.toml", '[tool.devicelint]\nextend-exclude = ["generated"]\n')
    name = ["-", "--stdin-filename", "pkg/generated/model.py"]
    assert run(name, tmp_path, stdin=BUG).exit_code == 1  # named: linted without the flag
    skipped = run([*name, "--force-exclude"], tmp_path, stdin=BUG)
    assert skipped.exit_code == 0 and skipped.stdout == ""
    echoed = run([*name, "--force-exclude", "--fix"], tmp_path, stdin=BUG)
    assert echoed.exit_code == 0 and echoed.stdout == BUG  # a formatter-on-save gets its buffer back
    write("pyproject.toml", '[tool.devicelint]\nextend-exclude = ["generated"]\nforce-exclude = true\n')
    assert run(name, tmp_path, stdin=BUG).stdout == ""
    assert run([*name, "--no-force-exclude"], tmp_path, stdin=BUG).exit_code == 1


def test_dash_with_other_paths_is_a_usage_error_and_stdin_filename_wins_over_paths(tmp_path, write):
    write("a.py", BUG)
    mixed = run(["-", "a.py"], tmp_path, stdin=BUG)
    assert mixed.exit_code == 2
    assert "devicelint: error: `-` (standard input) cannot be linted together with other paths" in mixed.stderr
    named = run(["a.py", "--stdin-filename", "b.py", "--format", "json"], tmp_path, stdin=LOAD)
    assert found(named) == [("b.py", "DL301")]
    assert "ignoring a.py" in named.stderr


# --------------------------------------------------------------------------- exclusions

def test_force_exclude_skips_named_files_in_excluded_directories(tmp_path, write):
    write("pyproject.toml", '[tool.devicelint]\nexclude = ["generated"]\n')
    write("src/generated/model.py", BUG)
    write("src/train.py", BUG)
    named = ["src/generated/model.py", "src/train.py", "--format", "json"]
    assert found(run(named, tmp_path)) == [("src/generated/model.py", "DL101"), ("src/train.py", "DL101")]
    assert found(run([*named, "--force-exclude"], tmp_path)) == [("src/train.py", "DL101")]
    assert found(run(["src/generated", "--force-exclude", "--format", "json"], tmp_path)) == []
    write("pyproject.toml", '[tool.devicelint]\nexclude = ["generated"]\nforce-exclude = true\n')
    assert found(run(named, tmp_path)) == [("src/train.py", "DL101")]
    assert len(found(run([*named, "--no-force-exclude"], tmp_path))) == 2


def test_force_exclude_applies_the_default_exclusions_to_named_files(tmp_path, write):
    write(".venv/lib/site.py", BUG)
    assert found(run([".venv/lib/site.py", "--format", "json"], tmp_path)) == [(".venv/lib/site.py", "DL101")]
    assert found(run([".venv/lib/site.py", "--force-exclude", "--format", "json"], tmp_path)) == []


def test_extend_exclude_adds_to_the_defaults_from_config_and_command_line(tmp_path, write):
    write("legacy/old.py", BUG)
    write("build/copy.py", BUG)
    write("vendor/lib.py", BUG)
    write("train.py", BUG)
    write("pyproject.toml", '[tool.devicelint]\nextend-exclude = ["legacy"]\n')
    assert found(run([".", "--format", "json"], tmp_path)) == [("train.py", "DL101"), ("vendor/lib.py", "DL101")]
    both = run([".", "--extend-exclude", "vendor", "--format", "json"], tmp_path)
    assert found(both) == [("train.py", "DL101")]


def test_exclude_replaces_the_default_list_and_command_line_exclude_replaces_the_configured(tmp_path, write):
    write("legacy/old.py", BUG)
    write("build/copy.py", BUG)
    write("vendor/lib.py", BUG)
    write("pyproject.toml", '[tool.devicelint]\nexclude = ["legacy"]\n')
    assert found(run([".", "--format", "json"], tmp_path)) == [("build/copy.py", "DL101"), ("vendor/lib.py", "DL101")]
    replaced = run([".", "--exclude", "vendor,build", "--format", "json"], tmp_path)
    assert found(replaced) == [("legacy/old.py", "DL101")]


def test_exclude_patterns_are_relative_to_their_configuration_or_to_the_current_directory(tmp_path, write):
    write("proj/pyproject.toml", '[tool.devicelint]\nextend-exclude = ["src/gen/*"]\n')
    write("proj/src/gen/a.py", BUG)
    write("proj/src/gen2/b.py", BUG)
    write("proj/other/src/gen/c.py", BUG)  # not proj/src/gen: the pattern is anchored at proj/
    assert found(run(["proj", "--format", "json"], tmp_path)) == [
        ("proj/other/src/gen/c.py", "DL101"),
        ("proj/src/gen2/b.py", "DL101"),
    ]
    from_cli = run(["proj", "--extend-exclude", "proj/src/gen2", "--format", "json"], tmp_path)
    assert found(from_cli) == [("proj/other/src/gen/c.py", "DL101")]


# --------------------------------------------------------------------------- configuration discovery

def test_a_project_configuration_applies_when_run_from_its_parent(tmp_path, write):
    write(
        "proj/pyproject.toml",
        '[tool.devicelint]\nselect = ["DL1", "DL3"]\nignore = ["DL104"]\nextend-exclude = ["vendor"]\n'
        '[tool.devicelint.per-file-ignores]\n"tests/*" = ["DL301"]\n',
    )
    write("proj/pkg/bug.py", BUG)
    write("proj/pkg/load.py", LOAD)
    write("proj/tests/test_load.py", LOAD)
    write("proj/vendor/v.py", BUG)
    write("proj/pkg/loop.py", "import torch\nm = torch.nn.Linear(2, 2)\nfor _ in range(3):\n    m.cuda()\n")
    result = run(["proj", "--format", "json"], tmp_path)
    # DL401 (move-in-loop) is not selected; vendor/ is excluded; tests/ ignore DL301
    assert found(result) == [("proj/pkg/bug.py", "DL101"), ("proj/pkg/load.py", "DL301")]
    assert (tmp_path / "proj" / ".devicelint_cache").is_dir()  # the cache follows the configuration
    assert not (tmp_path / ".devicelint_cache").exists()


def test_two_projects_in_one_run_each_get_their_own_configuration(tmp_path, write):
    write("a/pyproject.toml", '[tool.devicelint]\nignore = ["DL101"]\n')
    write("b/pyproject.toml", '[tool.devicelint]\nignore = ["DL301"]\n')
    write("c/pyproject.toml", "[project]\nname = 'c'\n")  # no table: not a devicelint configuration
    for project in "abc":
        write(f"{project}/bug.py", BUG)
        write(f"{project}/load.py", LOAD)
    assert found(run(["a", "b", "c", "--format", "json"], tmp_path)) == [
        ("a/load.py", "DL301"),
        ("b/bug.py", "DL101"),
        ("c/bug.py", "DL101"),
        ("c/load.py", "DL301"),
    ]
    # walking their parent finds the same configurations
    assert len(found(run([".", "--format", "json"], tmp_path))) == 4
    # --config overrides them all
    write("shared.toml", '[tool.devicelint]\nselect = ["DL3"]\n')
    overridden = run(["a", "b", "--config", "shared.toml", "--format", "json"], tmp_path)
    assert found(overridden) == [("a/load.py", "DL301"), ("b/load.py", "DL301")]


def test_a_nested_project_configuration_replaces_its_parents(tmp_path, write):
    write("pyproject.toml", '[tool.devicelint]\nignore = ["DL101"]\nextend-exclude = ["skipped"]\n')
    write("sub/pyproject.toml", '[tool.devicelint]\nselect = ["DL101"]\n')
    write("bug.py", BUG)
    write("sub/bug.py", BUG)
    write("sub/load.py", LOAD)
    write("sub/skipped/bug.py", BUG)  # the parent's exclusions do not reach into sub's project
    assert found(run([".", "--format", "json"], tmp_path)) == [("sub/bug.py", "DL101"), ("sub/skipped/bug.py", "DL101")]


def test_files_under_no_configuration_use_the_one_found_from_the_current_directory(tmp_path, write):
    write("proj/pyproject.toml", '[tool.devicelint]\nignore = ["DL101"]\n')
    write("elsewhere/bug.py", BUG)
    assert found(run(["../elsewhere/bug.py", "--format", "json"], tmp_path / "proj")) == []


def test_a_broken_configuration_in_a_subproject_stops_the_run(tmp_path, write):
    write("ok/bug.py", BUG)
    write("broken/pyproject.toml", '[tool.devicelint]\nselct = ["DL1"]\n')
    write("broken/bug.py", BUG)
    result = run(["."], tmp_path)
    assert result.exit_code == 2
    assert "unknown key 'selct'" in result.stderr and "broken" in result.stderr
    assert "Traceback" not in result.output
    write("pyproject.toml", '[tool.devicelint]\nforce-exclude = "yes"\n')
    assert "'force-exclude' in [tool.devicelint]" in run(["ok"], tmp_path).stderr


def test_a_notebook_on_stdin_is_linted_as_a_notebook_and_handed_back_under_fix(tmp_path):
    notebook = (Path(__file__).resolve().parent.parent / "fixtures" / "notebooks" / "train.ipynb").read_bytes()
    result = run(["-", "--stdin-filename", "nb/train.ipynb", "--format", "json"], tmp_path, stdin=notebook)
    assert result.exit_code == 1
    items = json.loads(result.stdout)
    assert items and all(item["path"] == "nb/train.ipynb" and item["cell"] is not None for item in items)
    fixing = run(["-", "--stdin-filename", "nb/train.ipynb", "--fix"], tmp_path, stdin=notebook)
    assert fixing.stdout_bytes == notebook
    assert "fixes are not applied to a notebook read from standard input" in fixing.stderr
