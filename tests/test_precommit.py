"""The pre-commit hooks, for real: the README's snippet, as written, run by pre-commit on a
temporary git repository; and `pre-commit try-repo`, which installs devicelint from this
repository's .pre-commit-hooks.yaml into a fresh environment."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    # try-repo needs a committed tree: take a snapshot of this checkout's files as they are now
    snapshot = tmp_path_factory.mktemp("hook-source")
    for name in ("devicelint", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, snapshot / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, snapshot / name)
    _git(snapshot, "init", "-q")
    _git(snapshot, "add", "-A")
    _git(snapshot, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "snapshot")
    return snapshot


def _try_repo(source: Path, work: Path, *files: str) -> subprocess.CompletedProcess:
    pre_commit = Path(sys.executable).with_name("pre-commit")
    env = {**os.environ, "PRE_COMMIT_HOME": str(work.parent / "pre-commit-home")}
    args = [str(pre_commit), "try-repo", str(source), "devicelint", "--color", "never"]
    args += ["--files", *files] if files else ["--all-files"]
    return subprocess.run(args, cwd=work, capture_output=True, text=True, env=env, timeout=900)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    work = tmp_path / "project"
    work.mkdir()
    _git(work, "init", "-q")
    for name, content in files.items():
        (work / name).write_text(content)
    _git(work, "add", "-A")
    return work


BAD = "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"


def test_hook_fails_on_a_bug_and_names_it(repository, tmp_path):
    work = _project(tmp_path, {"train.py": BAD, "notes.md": "x\n"})
    result = _try_repo(repository, work, "train.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:3:1: DL101" in result.stdout


def test_hook_passes_on_clean_code_and_on_an_empty_file_list(repository, tmp_path):
    work = _project(tmp_path, {"ok.py": "import torch\nx = torch.randn(3, device=\"cuda\")\n", "notes.md": "x\n"})
    clean = _try_repo(repository, work, "ok.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout
    no_python = _try_repo(repository, work, "notes.md")
    assert no_python.returncode == 0, no_python.stdout + no_python.stderr
    assert "no files to check" in no_python.stdout.lower()


def test_hook_skips_files_the_configuration_excludes(repository, tmp_path):
    work = _project(
        tmp_path,
        {
            "pyproject.toml": '[tool.devicelint]\nextend-exclude = ["generated_*.py"]\n',
            "generated_model.py": BAD,
            "train.py": BAD,
        },
    )
    result = _try_repo(repository, work, "generated_model.py", "train.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train.py:3:1: DL101" in result.stdout
    assert "generated_model.py" not in result.stdout
    only_excluded = _try_repo(repository, work, "generated_model.py")
    assert only_excluded.returncode == 0, only_excluded.stdout + only_excluded.stderr


def _readme_snippet() -> str:
    """The YAML block of the README's pre-commit section, exactly as a user would copy it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n### pre-commit\n", 1)[1]
    match = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the README's pre-commit section has no yaml block"
    return match.group(1)


def test_readme_snippet_works_as_written(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    work = _project(
        tmp_path,
        {
            ".pre-commit-config.yaml": _readme_snippet(),
            "pyproject.toml": '[tool.devicelint]\nexclude = ["generated"]\n',
            "train.py": BAD,
            "ok.py": "import torch\nx = torch.randn(3, device=\"cuda\")\n",
        },
    )
    (work / "generated").mkdir()
    (work / "generated" / "model.py").write_text(BAD)
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "project")
    # `language: system` runs the devicelint found on PATH: this environment's
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }

    def run_hooks(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(pre_commit), "run", "--color", "never", *args], cwd=work, capture_output=True, text=True, env=env, timeout=300
        )

    everything = run_hooks("--all-files")
    assert everything.returncode == 1, everything.stdout + everything.stderr
    assert "train.py:3:1: DL101" in everything.stdout
    assert "generated" not in everything.stdout  # committed, named by pre-commit, and excluded
    excluded_and_clean = run_hooks("--files", "generated/model.py", "ok.py")
    assert excluded_and_clean.returncode == 0, excluded_and_clean.stdout + excluded_and_clean.stderr
    assert "Passed" in excluded_and_clean.stdout


def test_fix_hook_rewrites_the_file(repository, tmp_path):
    work = _project(tmp_path, {"train.py": "import torch\nx = torch.randn(3, 3)\nx.cuda()\n"})
    pre_commit = Path(sys.executable).with_name("pre-commit")
    env = {**os.environ, "PRE_COMMIT_HOME": str(work.parent / "pre-commit-home")}
    result = subprocess.run(
        [str(pre_commit), "try-repo", str(repository), "devicelint-fix", "--color", "never", "--files", "train.py"],
        cwd=work, capture_output=True, text=True, env=env, timeout=900,
    )
    assert result.returncode == 1  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in result.stdout
    assert (work / "train.py").read_text() == "import torch\nx = torch.randn(3, 3)\nx = x.cuda()\n"
