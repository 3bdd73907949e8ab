"""Cold run versus a re-run over an unchanged tree answered from the result cache.

Not a test: it prints measurements. It times the real command line (`python -m devicelint`)
in subprocesses, so the figures include interpreter start-up, discovery and hashing.

    python bench/cache.py                 # a generated tree of 1,200 realistic files
    python bench/cache.py --tree DIR      # any tree (copied, so the cache lives outside it)
"""

from __future__ import annotations

import argparse
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
        cold = timed(tree)
        warm = [timed(tree) for _ in range(3)]
        uncached = timed(tree, "--no-cache")
        print(f"tree: {files} files, {lines} lines, Python {sys.version.split()[0]}")
        print(f"  interpreter + CLI start-up alone        {startup:7.2f} s")
        print(f"  cold run (fills the cache), --jobs 1    {cold:7.2f} s")
        print(f"  re-run, unchanged tree (best of 3)      {min(warm):7.2f} s   (all: {', '.join(f'{w:.2f}' for w in warm)})")
        print(f"  re-run with --no-cache                  {uncached:7.2f} s")
        print(f"  cached re-run is {uncached / min(warm):.1f}x faster than an uncached one")


if __name__ == "__main__":
    main()
