"""Issue 14's small items, through the public command line (and flake8): what `[*]` marks and the
summary under it, --list-rules, --output-format, --statistics with nothing to count, DL001 at
the byte that does not decode, DL203's suggestion, DL301's fix layout, and the flake8 plugin's
parity with `devicelint` (configuration, off-by-default rules, devicelint's own comments)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main

#: DL101 (safe fix) and DL202 (unsafe fix)
SAFE_AND_UNSAFE = (
    "import torch\n"
    "def scale(x: torch.Tensor):\n"
    "    return x + torch.zeros(3)\n"
    "y = torch.randn(3)\n"
    "y.cuda()\n"
)
UNSAFE_ONLY = "import torch\ndef scale(x: torch.Tensor):\n    return x + torch.zeros(3)\n"
CLEAN = "import torch\nx = torch.randn(3, 3, device=\"cuda\")\n"


def run(args, cwd: Path):
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, [*args, "--jobs", "1", "--no-cache"])
    finally:
        os.chdir(old)


def test_star_marks_only_what_fix_applies_and_the_summary_counts_hidden_fixes(tmp_path, write):
    write("both.py", SAFE_AND_UNSAFE)
    lines = run(["both.py"], tmp_path).stdout.splitlines()
    assert lines[0].startswith("both.py:3:16: DL202 `torch.zeros` without `device=`")  # unsafe: no [*]
    assert lines[1].startswith("both.py:5:1: DL101 [*] `y.cuda()`")
    assert lines[2:] == [
        "Found 2 findings.",
        "[*] 1 fixable with the `--fix` option (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    with_unsafe = run(["both.py", "--unsafe-fixes"], tmp_path).stdout.splitlines()
    assert with_unsafe[0].startswith("both.py:3:16: DL202 [*] ")
    assert with_unsafe[2:] == ["Found 2 findings.", "[*] 2 fixable with the `--fix` option."]


def test_summary_when_every_fix_is_hidden(tmp_path, write):
    write("unsafe.py", UNSAFE_ONLY)
    write("other.py", UNSAFE_ONLY)
    result = run(["."], tmp_path)
    assert result.stdout.splitlines()[-2:] == [
        "Found 2 findings.",
        "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option).",
    ]


def test_statistics_mark_and_count_what_fix_applies(tmp_path, write):
    write("both.py", SAFE_AND_UNSAFE)
    text = run(["both.py", "--statistics"], tmp_path).stdout.splitlines()
    assert text[:2] == ["1  DL101  [*] discarded-move", "1  DL202      factory-without-device"]
    data = json.loads(run(["both.py", "--statistics", "--format", "json"], tmp_path).stdout)
    assert {row["code"]: row["fixable"] for row in data} == {"DL101": 1, "DL202": 0}
    data = json.loads(run(["both.py", "--statistics", "--format", "json", "--unsafe-fixes"], tmp_path).stdout)
    assert {row["code"]: row["fixable"] for row in data} == {"DL101": 1, "DL202": 1}


def test_list_rules_marks_unsafe_fixes_only_with_unsafe_fixes(tmp_path):
    by_code = {line.split()[0]: line for line in run(["--list-rules"], tmp_path).stdout.splitlines()}
    assert by_code["DL101"].startswith("DL101  [*] discarded-move")
    assert by_code["DL202"].startswith("DL202      factory-without-device")
    assert by_code["DL202"].endswith("(unsafe fix, applied only with --unsafe-fixes)")
    assert by_code["DL203"].startswith("DL203      input-not-moved")
    assert by_code["DL314"].endswith("(off by default)")
    with_unsafe = {line.split()[0]: line for line in run(["--list-rules", "--unsafe-fixes"], tmp_path).stdout.splitlines()}
    assert with_unsafe["DL202"].startswith("DL202  [*] factory-without-device")
    assert with_unsafe["DL202"].endswith("(unsafe fix)")


def test_output_format_is_an_alias_of_format(tmp_path, write):
    write("both.py", SAFE_AND_UNSAFE)
    alias = run(["both.py", "--output-format", "json"], tmp_path)
    assert alias.exit_code == 1
    assert json.loads(alias.stdout) == json.loads(run(["both.py", "--format", "json"], tmp_path).stdout)
    assert "--output-format" in run(["check", "--help"], tmp_path).stdout
    bad = run(["both.py", "--output-format", "yaml"], tmp_path)
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_statistics_with_nothing_to_count_says_so(tmp_path, write):
    write("ok.py", CLEAN)
    result = run(["ok.py", "--statistics"], tmp_path)
    assert (result.exit_code, result.stdout) == (0, "All checks passed.\n")
    result = run(["ok.py", "--statistics", "--format", "json"], tmp_path)
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


@pytest.mark.parametrize(
    ("content", "line", "column"),
    [
        # declared UTF-8, a Latin-1 byte on line 3 after `y = "caf`
        (b"# -*- coding: utf-8 -*-\nimport torch\ny = \"caf\xe9\"\n", 3, 9),
        # no declaration and a bad byte on line 1: tokenize refuses before decoding
        (b"import torch  \xff\n", 1, 15),
        # a BOM is not a column; the two-byte `\xc3\xa9` is one
        (b"\xef\xbb\xbfimport torch\nx = '\xc3\xa9\xfe'\n", 2, 7),
    ],
)
def test_undecodable_source_is_reported_at_the_bad_byte(tmp_path, write, content, line, column):
    write("bad.py", content)
    [item] = json.loads(run(["bad.py", "--format", "json"], tmp_path).stdout)
    assert item["code"] == "DL001"
    assert (item["line"], item["column"]) == (line, column)
    assert "cannot be read as Python source" in item["message"]


def test_unknown_declared_encoding_points_at_the_declaration(tmp_path, write):
    write("odd.py", b"#!/usr/bin/env python\n# coding: no-such-codec\nimport torch\n")
    [item] = json.loads(run(["odd.py", "--format", "json"], tmp_path).stdout)
    assert (item["code"], item["line"], item["column"]) == ("DL001", 2, 1)


DL203_PROGRAM = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = torch.nn.Linear(4, 2).to(device)\n"
    "center = torch.zeros(4).to(device)\n"
    "loader = DataLoader(ds, batch_size=32)\n"
    "for inputs, targets in loader:\n"
    "    a = model(inputs - center)\n"
    "    b = model((inputs - 0.5) * 2)\n"
    "    c = model(inputs - inputs.mean())\n"
    "    d = model(inputs.float())\n"
)


def test_dl203_suggests_moving_the_operand_that_is_off_device(tmp_path, write):
    write("train.py", DL203_PROGRAM)
    items = json.loads(run(["train.py", "--format", "json", "--select", "DL203"], tmp_path).stdout)
    advice = {item["line"]: item["message"].rsplit("; ", 1)[1] for item in items}
    assert advice == {
        # `center` is already on `device`: the batch is what to move, not `center`
        8: "move the batch first (`inputs.to(...)`)",
        9: "move the batch first (`inputs.to(...)`)",
        # both operands are the batch: the whole, parenthesised
        10: "move the batch first (`(inputs - inputs.mean()).to(...)`)",
        11: "move the batch first (`inputs.float().to(...)`)",
    }
    assert next(item for item in items if item["line"] == 8)["message"].startswith("`inputs` is a batch on the CPU")


DL301_BEFORE = """\
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
a = torch.load(f, weights_only=True,)
b = torch.load(
    f,
    weights_only=True,  # trusted
)
c = torch.load(
    f,
    weights_only=True
)
d = torch.load(f, weights_only = True)
e = torch.load(
    f, weights_only=True,
)
g = (torch.load(f  # the checkpoint
    ))
"""

DL301_AFTER = """\
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
a = torch.load(f, weights_only=True, map_location=device)
b = torch.load(
    f,
    weights_only=True,  # trusted
    map_location=device,
)
c = torch.load(
    f,
    weights_only=True,
    map_location=device
)
d = torch.load(f, weights_only = True, map_location = device)
e = torch.load(
    f, weights_only=True, map_location=device,
)
g = (torch.load(f, map_location=device  # the checkpoint
    ))
"""


def test_dl301_fix_writes_map_location_in_the_calls_own_layout(tmp_path, write):
    path = write("resume.py", DL301_BEFORE)
    result = run(["resume.py", "--fix", "--select", "DL301"], tmp_path)
    assert path.read_text() == DL301_AFTER
    assert (result.exit_code, result.stdout) == (0, "All checks passed.\n")


def _flake8() -> Path:
    flake8 = Path(sys.executable).with_name("flake8")
    if not flake8.exists():
        pytest.skip("flake8 is not installed (pip install -e '.[test]')")
    return flake8


FLAKE8_PROJECT = {
    "pyproject.toml": (
        "[tool.devicelint]\n"
        'ignore = ["DL301"]\n'
        'extend-select = ["DL314"]\n'
        "[tool.devicelint.per-file-ignores]\n"
        '"pkg/generated_*.py" = ["DL101"]\n'
    ),
    "pkg/train.py": (
        "import torch\n"
        "state = torch.load('a.pt')\n"
        "use_gpu = torch.cuda.is_available()\n"
        "x = torch.randn(3)\n"
        "x.cuda()\n"
        "y = torch.randn(3)\n"
        "y.cuda()  # devicelint: ignore[DL101]\n"
        "z = torch.randn(3)\n"
        "z.cuda()  # noqa: DL101\n"
    ),
    "pkg/generated_model.py": "import torch\nuse_gpu = torch.cuda.is_available()\nx = torch.randn(3)\nx.cuda()\n",
    "pkg/hardcoded.py": "import torch\nx = torch.randn(3)\nx = x.cuda()\n",
}


def test_flake8_plugin_selects_and_suppresses_as_devicelint_does(tmp_path, write):
    flake8 = _flake8()
    for name, content in FLAKE8_PROJECT.items():
        write(name, content)
    plugin = subprocess.run([str(flake8), "--select", "DL", "pkg"], cwd=tmp_path, capture_output=True, text=True)
    assert plugin.returncode == 1, plugin.stderr
    reported = sorted(plugin.stdout.splitlines())
    # config's ignore (DL301), extend-select of an off-by-default rule (DL314), per-file-ignores
    # (generated_model.py) and `# devicelint: ignore[...]` as in devicelint; `# noqa` by flake8
    assert [line.split(" ")[:2] for line in reported] == [["pkg/hardcoded.py:3:5:", "DL314"], ["pkg/train.py:5:1:", "DL101"]]
    own = run(["pkg"], tmp_path)
    own_lines = sorted(line.replace(" [*]", "") for line in own.stdout.splitlines() if line.startswith("pkg/"))
    assert reported == own_lines


def test_flake8_plugin_runs_off_by_default_rules_flake8_names(tmp_path, write):
    flake8 = _flake8()
    write("hardcoded.py", FLAKE8_PROJECT["pkg/hardcoded.py"])
    default = subprocess.run([str(flake8), "--select", "DL", "hardcoded.py"], cwd=tmp_path, capture_output=True, text=True)
    assert (default.returncode, default.stdout) == (0, "")
    for args in (["--select", "DL314"], ["--select", "DL", "--devicelint-extend-select", "dl314"]):
        named = subprocess.run([str(flake8), *args, "hardcoded.py"], cwd=tmp_path, capture_output=True, text=True)
        assert named.stdout.startswith("hardcoded.py:3:5: DL314 CUDA is hard-coded"), (args, named.stderr)
    write("setup.cfg", "[flake8]\ndevicelint-extend-select = DL314\n")
    configured = subprocess.run([str(flake8), "--select", "DL", "hardcoded.py"], cwd=tmp_path, capture_output=True, text=True)
    assert configured.stdout.startswith("hardcoded.py:3:5: DL314 "), configured.stderr


def test_flake8_plugin_bad_option_or_config_is_a_clear_error(tmp_path, write):
    flake8 = _flake8()
    write("hardcoded.py", FLAKE8_PROJECT["pkg/hardcoded.py"])
    bad_option = subprocess.run(
        [str(flake8), "--select", "DL", "--devicelint-extend-select", "DL999", "hardcoded.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert bad_option.returncode == 2
    assert "devicelint: error: unknown rule code or prefix 'DL999' in --devicelint-extend-select" in bad_option.stderr
    write("pyproject.toml", "[tool.devicelint]\nbogus = 1\n")
    bad_config = subprocess.run([str(flake8), "--select", "DL", "hardcoded.py"], cwd=tmp_path, capture_output=True, text=True)
    assert bad_config.returncode == 1
    assert "devicelint: error: unknown key 'bogus' in [tool.devicelint]" in bad_config.stdout
    assert "Traceback" not in bad_config.stdout + bad_config.stderr
