"""The real-bug corpus (bench/realbugs/) is well formed, and recall on it does not fall.

bench/realbugs/floor.json holds the last measured figures: ``caught`` may only rise, and the
error/warning findings on the fixed twins (false alarms on correct code) may only fall. Raise or
lower them in the same change that improves the linter or grows the corpus.
"""

from __future__ import annotations

import ast
import csv
import importlib.util
import json
import re
import sys

import pytest

from conftest import ROOT
from devicelint.rules.base import expected_findings

CORPUS = ROOT / "bench" / "realbugs"
BUGS = sorted(CORPUS.glob("*.py"))
TWINS = sorted((CORPUS / "fixed").glob("*.py"))
SOURCE_HEADER = re.compile(r"^# source: https?://\S+", re.MULTILINE)


def _load_recall():
    # bench/ is a folder of scripts, not a package: load the module from its file
    spec = importlib.util.spec_from_file_location("bench_recall", ROOT / "bench" / "recall.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def report():
    return _load_recall().measure()


@pytest.mark.parametrize("path", BUGS, ids=lambda path: path.name)
def test_bug_file_parses_names_its_source_and_marks_a_line(path):
    text = path.read_text(encoding="utf-8")
    ast.parse(text, filename=str(path))
    assert SOURCE_HEADER.search("\n".join(text.splitlines()[:5])), "needs a '# source: <url>' header line"
    assert expected_findings(text), "needs at least one '# expect: DLnnn' marker"


@pytest.mark.parametrize("path", TWINS, ids=lambda path: path.name)
def test_twin_parses_has_its_bug_and_no_marker(path):
    text = path.read_text(encoding="utf-8")
    ast.parse(text, filename=str(path))
    assert (CORPUS / path.name).is_file(), "a fixed twin needs the bug file of the same name"
    assert SOURCE_HEADER.search("\n".join(text.splitlines()[:5]))
    assert not expected_findings(text), "a fixed twin holds no bug, so no marker"


def test_recall_does_not_fall(report):
    floor = json.loads((CORPUS / "floor.json").read_text(encoding="utf-8"))
    missed = "\n".join(f"{m.path}:{m.line} {m.code}" for m in report.missed())
    assert report.caught >= floor["caught"], f"caught {report.caught} < floor {floor['caught']}; missed:\n{missed}"


def test_fixed_twins_stay_quiet(report):
    floor = json.loads((CORPUS / "floor.json").read_text(encoding="utf-8"))
    noisy = "\n".join(f"{f.path}:{f.line} {f.code} {f.message}" for f in report.twin_findings if f.severity != "info")
    assert report.twin_error_warning <= floor["twin_error_warning_max"], noisy


def test_every_twin_verdict_names_a_finding_kind_that_exists():
    """bench/realbugs/fixed/verdicts.csv: a row per reviewed twin finding, for a twin that exists,
    with a verdict of the three and a reason."""
    rows = list(csv.DictReader((CORPUS / "fixed" / "verdicts.csv").open(encoding="utf-8")))
    assert rows
    for row in rows:
        assert (CORPUS / "fixed" / row["file"]).is_file(), row
        assert row["verdict"] in ("true", "false", "debatable"), row
        assert re.fullmatch(r"DL\d{3}", row["code"]) and int(row["line"]) > 0 and row["reason"].strip(), row


def test_twin_verdicts_are_joined_with_the_findings(report):
    verdicts = _load_recall().twin_verdicts(CORPUS / "fixed" / "verdicts.csv")
    for finding in report.twin_findings:
        key = (finding.path.rsplit("/", 1)[-1], finding.line, finding.code)
        assert finding.verdict == verdicts.get(key, "unreviewed"), finding
    floor = json.loads((CORPUS / "floor.json").read_text(encoding="utf-8"))
    assert report.twin_error_warning_not_true <= floor["twin_not_known_true_max"]


def test_markers_are_counted_per_collection_batch(report):
    batches = {batch: (markers, caught) for batch, markers, caught in report.per_batch()}
    assert sum(markers for markers, _ in batches.values()) == len(report.markers)
    assert sum(caught for _, caught in batches.values()) == report.caught
    by_file = [m for m in report.markers if m.path.rsplit("/", 1)[-1].startswith("4")]
    assert batches["4xx"] == (len(by_file), sum(m.caught for m in by_file))


def test_every_batch_label_names_a_batch_of_the_corpus(report):
    labels = _load_recall().batch_labels(CORPUS / "batches.json")
    assert labels, "the held-out batch is labelled"
    assert set(labels) <= {batch for batch, _, _ in report.per_batch()}


def test_bugs_flagged_anywhere_are_counted_per_batch(report):
    # every bug file counted once, in its batch; at the default selection every rule that
    # catches a marker reports errors or warnings, so a file whose markers are all caught is flagged
    assert sum(report.bugs_by_batch.values()) == report.bug_files
    assert set(report.bugs_by_batch) == {batch for batch, _, _ in report.per_batch()}
    for batch, flagged in report.flagged_by_batch.items():
        assert 0 <= flagged <= report.bugs_by_batch[batch]
    assert sum(report.flagged_by_batch.values()) >= report.files_all_caught


def _tiny_corpus(folder):
    (folder / "fixed").mkdir(parents=True)
    (folder / "0001_cuda_numpy.py").write_text(
        "# source: https://example.org/1\nimport torch\nx = torch.ones(2).cuda()\nx.numpy()  # expect: DL204\n", encoding="utf-8"
    )
    return folder


def test_script_measures_the_checkout_it_belongs_to_wherever_it_runs(tmp_path):
    # run as a script from another folder, Python puts bench/ (not the checkout) first on sys.path;
    # the measured code must still be this checkout's, and the report says so
    import subprocess

    corpus = _tiny_corpus(tmp_path / "corpus")
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall.py"), "--json", "--corpus", str(corpus)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["devicelint"] == str(ROOT.resolve())
    assert result["caught"] == 1 and result["markers"] == 1


def test_a_source_other_than_the_imported_code_is_refused(tmp_path, capsys):
    # in a process that has imported devicelint already, --source cannot switch the code: saying so
    # beats printing another checkout's figures under this one's name
    corpus = _tiny_corpus(tmp_path / "corpus")
    assert _load_recall().main(["--corpus", str(corpus), "--source", str(tmp_path)]) == 2
    assert "not from --source" in capsys.readouterr().err
