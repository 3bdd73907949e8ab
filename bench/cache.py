"""Cold run versus re-runs answered from the result cache, with whole-project analysis.

Not a test: it prints measurements. It times the real command line (`python -m devicelint`)
in subprocesses, so the figures include interpreter start-up, discovery and hashing:
a cold run analysing each file alone (`--single-file`) and one reading the project modules
each file imports (the default), both without the cache; a cold run filling the cache; re-runs
over the unchanged tree; and re-runs after one file changed - a module that few files import,
and the project module most files import (whose importers must all be linted again).

    python bench/cache.py                 # a generated tree of 1,200 realistic files
    python bench/cache.py --tree DIR      # any tree (copied, so the cache lives outside it)
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def generate(target: Path, count: int) -> None:
    sources = sorted(FIXTURES.rglob("*.py"))
    for index in range(count):
        source = sources[index % len(sources)]
        package = target / f"pkg{index // 100:02d}"
        package.mkdir(parents=True, exist_ok=True)
        # a distinct file each time, so that no two share a cache entry
        (package / f"m{index:04d}.py").write_text(f"# generated copy {index}\n" + source.read_text(encoding="utf-8"))


def most_imported(tree: Path) -> tuple[Path, int]:
    """The module of the tree named in the most import statements (a rough count by text)."""
    files = sorted(tree.rglob("*.py"))
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in files]
    best, best_count = files[0], -1
    for path in files:
        parts = list(path.relative_to(tree).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts:
            continue
        dotted = ".".join(parts)
        pattern = re.compile(rf"^\s*(from|import)\s+{re.escape(dotted)}\b|^\s*from\s+\.+{re.escape(parts[-1])}\s+import", re.M)
        count = sum(1 for text in texts if pattern.search(text))
        if count > best_count:
            best, best_count = path, count
    return best, best_count


def touch(path: Path) -> None:
    """Change the file's bytes (a trailing comment), as an edit would."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n# edited by bench/cache.py\n")


def timed(tree: Path, *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "devicelint", ".", "--exit-zero", "--jobs", "1", *extra], cwd=tree, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--files", type=int, default=1200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        if options.tree:
            shutil.copytree(options.tree, tree, ignore=shutil.ignore_patterns(".devicelint_cache", "__pycache__"))
        else:
            generate(tree, options.files)
        files = sum(1 for _ in tree.rglob("*.py"))
        lines = sum(path.read_text(encoding="utf-8", errors="replace").count("\n") for path in tree.rglob("*.py"))
        startup = timed(tree, "--select", "DL001", "--no-cache", "--exclude", "*")
        single = timed(tree, "--no-cache", "--single-file")
        uncached = timed(tree, "--no-cache")
        cold = timed(tree)
        warm = [timed(tree) for _ in range(3)]
        leaf = sorted(tree.rglob("*.py"))[-1]
        touch(leaf)
        after_leaf = timed(tree)
        hub, importers = most_imported(tree)
        touch(hub)
        after_hub = timed(tree)
        print(f"tree: {files} files, {lines} lines, Python {sys.version.split()[0]}")
        print(f"  interpreter + CLI start-up alone           {startup:7.2f} s")
        print(f"  cold, --single-file, --no-cache, --jobs 1  {single:7.2f} s")
        print(f"  cold, project imports, --no-cache          {uncached:7.2f} s   ({uncached / single:.2f}x the single-file run)")
        print(f"  cold run (fills the cache), --jobs 1       {cold:7.2f} s")
        print(f"  re-run, unchanged tree (best of 3)         {min(warm):7.2f} s   (all: {', '.join(f'{w:.2f}' for w in warm)})")
        print(f"  re-run, one file changed ({leaf.relative_to(tree)})  {after_leaf:7.2f} s")
        print(f"  re-run, most-imported module changed ({hub.relative_to(tree)}, named by {importers} files)  {after_hub:7.2f} s")
        print(f"  cached re-run is {uncached / min(warm):.1f}x faster than an uncached one")


if __name__ == "__main__":
    main()
