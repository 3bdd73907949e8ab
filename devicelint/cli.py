"""The command line: ``devicelint [PATHS]`` (short for ``devicelint check``), ``devicelint rule
CODE`` and ``devicelint simulate MODULE:FACTORY``."""

from __future__ import annotations

import difflib
import fnmatch
import sys
from pathlib import Path
from typing import Optional, Sequence

import click

from devicelint import __version__
from devicelint.cache import DEFAULT_DIRECTORY, ResultCache
from devicelint.config import Config, ConfigError, find_config, load_config
from devicelint.discovery import discover
from devicelint.findings import Finding
from devicelint.report import FORMATS, render, statistics
from devicelint.rules import all_rules, rules_by_code
from devicelint.runner import default_jobs, lint_files
from devicelint.selection import SelectionError, resolve, validate_selectors

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class _DefaultToCheck(click.Group):
    """``devicelint src/`` means ``devicelint check src/``, as with ruff."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="devicelint")
def main() -> None:
    """Find PyTorch device-placement bugs before they cost a GPU run.

    `devicelint [OPTIONS] [PATHS]...` is short for `devicelint check`; see
    `devicelint check --help`. Exit status: 0 no findings, 1 findings, 2 usage or
    configuration error.
    """


def _split(values: Sequence[str]) -> list[str]:
    return [part for value in values for part in value.split(",") if part.strip()]


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", "select", multiple=True, metavar="CODES", help="Rules to run, by code or prefix (DL101, DL1, DL) or ALL; replaces the default set. Comma-separated or repeated.")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to run in addition to the selected ones (e.g. DL302, off by default).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules not to run, by code or prefix.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files and directories matching GLOB (name or path relative to the config's directory); files named explicitly are always linted.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", "show_statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: the number of CPUs).")
@click.option("--list-rules", is_flag=True, help="List every rule with its code, severity and summary, and exit.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="Read [tool.devicelint] from this pyproject.toml instead of the nearest one.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place (atomically), then report what is left.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing; exit 1 if anything would change.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix/--diff, also apply fixes marked unsafe (see `devicelint rule CODE`).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help=f"Where to keep per-file results (default: {DEFAULT_DIRECTORY}/ beside the config, or in the current directory).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors (DL002).")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    fmt: str,
    exit_zero: bool,
    show_statistics: bool,
    jobs: Optional[int],
    list_rules: bool,
    config_path: Optional[str],
    fix: bool,
    diff: bool,
    unsafe_fixes: bool,
    cache_dir: Optional[str],
    no_cache: bool,
    verbose: bool,
) -> None:
    """Lint PATHS (files or directories; default: the current directory)."""
    if list_rules:
        _list_rules()
        return
    try:
        config = load_config(Path(config_path) if config_path else find_config(Path.cwd()))
        selection = resolve(
            config.select,
            config.extend_select,
            config.ignore,
            validate_selectors(_split(select), "--select") if select else None,
            validate_selectors(_split(extend_select), "--extend-select"),
            validate_selectors(_split(ignore), "--ignore"),
        )
    except (ConfigError, SelectionError) as error:
        _fail(str(error))
    rules = selection.rules()
    discovered = discover(paths or (".",), [*config.exclude, *exclude], config.root)
    for missing in discovered.missing:
        click.echo(f"devicelint: error: {missing}: no such file or directory", err=True)
    for empty in discovered.empty:
        click.echo(f"devicelint: warning: no Python files found under {empty}", err=True)
    codes = [rule.code for rule in rules]
    cache = None
    if not no_cache:
        cache = ResultCache(Path(cache_dir) if cache_dir else config.root / DEFAULT_DIRECTORY, codes, verbose)
    findings = lint_files(discovered.files, codes, jobs or default_jobs(), verbose, cache)
    findings = _apply_per_file_ignores(findings, config)
    if fix or diff:
        findings, changed = _fix(findings, rules, config, unsafe_fixes, write=not diff)
        if diff:
            sys.exit(EXIT_FINDINGS if changed else EXIT_CLEAN)
    findings.sort(key=Finding.sort_key)
    output = statistics(findings, fmt) if show_statistics else render(findings, fmt)
    # "All checks passed." would be false when a named path was not there to check
    nothing_checked_is_wrong = fmt == "text" and not findings and bool(discovered.missing)
    if (fmt != "text" or findings or not show_statistics) and not nothing_checked_is_wrong:
        click.echo(output, nl=False)
    if discovered.missing:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _fix(findings: list[Finding], rules: list, config: Config, unsafe: bool, write: bool) -> tuple[list[Finding], int]:
    """Fix every file with an applicable fix; returns the findings left and how many files changed."""
    from devicelint.fixer import fix_file, write_atomically  # only --fix/--diff pay for it

    paths = sorted({f.path for f in findings if f.fix is not None and (f.fix.safe or unsafe)})
    applied = 0
    changed = 0
    for path in paths:
        ignored = _ignored_codes(path, config)
        file_rules = [rule for rule in rules if not any(rule.code.startswith(code) or code == "ALL" for code in ignored)]
        result = fix_file(Path(path), file_rules, unsafe=unsafe)
        if result is None or result.fixed == result.original:
            continue
        changed += 1
        applied += result.applied
        if write:
            write_atomically(Path(path), result.fixed, result.encoding)
            findings = [f for f in findings if f.path != path] + result.remaining
        else:
            click.echo(
                "".join(
                    difflib.unified_diff(
                        result.original.splitlines(keepends=True),
                        result.fixed.splitlines(keepends=True),
                        fromfile=f"a/{path}",
                        tofile=f"b/{path}",
                    )
                ),
                nl=False,
            )
    noun = "fix" if applied == 1 else "fixes"
    if write:
        click.echo(f"Applied {applied} {noun} in {changed} file{'s' if changed != 1 else ''}.", err=True)
    else:
        click.echo(f"Would apply {applied} {noun} in {changed} file{'s' if changed != 1 else ''}.", err=True)
    return findings, changed


def _ignored_codes(path: str, config: Config) -> list[str]:
    if not config.per_file_ignores:
        return []
    candidate = Path(path)
    try:
        relative = candidate.resolve().relative_to(config.root.resolve()).as_posix()
    except ValueError:
        relative = candidate.as_posix()
    codes: list[str] = []
    for pattern, ignored in config.per_file_ignores.items():
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(candidate.name, pattern):
            codes.extend(ignored)
    return codes


def _apply_per_file_ignores(findings: list[Finding], config: Config) -> list[Finding]:
    if not config.per_file_ignores:
        return findings
    kept = []
    for finding in findings:
        ignored = _ignored_codes(finding.path, config)
        if not any(code == "ALL" or finding.code.startswith(code) for code in ignored):
            kept.append(finding)
    return kept


def _list_rules() -> None:
    for rule in all_rules():
        fix = "[*]" if rule.fix_safety else "   "
        off = "" if rule.default_enabled else "  (off by default)"
        click.echo(f"{rule.code}  {fix} {rule.name:<34} {rule.severity.value:<8} {rule.summary}{off}")


@main.command()
@click.argument("code")
def rule(code: str) -> None:
    """Print the docs of rule CODE (e.g. DL101)."""
    found = rules_by_code().get(code.strip().upper())
    if found is None:
        _fail(f"unknown rule code {code!r}; `devicelint check --list-rules` lists them")
    click.echo(found.render_docs(), nl=False)


@main.command()
@click.argument("spec", metavar="MODULE:FACTORY")
@click.option("--device", default="cuda:0", show_default=True, help="The device the fake tensors claim to be on.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
def simulate(spec: str, device: str, fmt: str, exit_zero: bool) -> None:
    """Run one forward of a model on a simulated GPU, on this CPU-only machine.

    FACTORY, a function importable from MODULE (the current directory is on the import path),
    returns (model, example_inputs) or (model, example_inputs, example_kwargs). The model and
    inputs are moved to fake DEVICE tensors and run under devicelint.guard(ops=True) in a
    subprocess; tensors that forward creates on the CPU and mixes in are reported. Needs torch.
    """
    import os
    import warnings

    try:
        from devicelint.runtime.errors import SimulationError
        from devicelint.runtime.simulate import simulate_factory
    except ImportError as error:  # torch missing
        _fail(f"`devicelint simulate` needs torch: {error}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notes are printed below instead
            result = simulate_factory(spec, device=device)
    except SimulationError as error:
        _fail(f"the simulation could not run: {error}")
    for note in result.unsupported:
        click.echo(f"devicelint: note: {note}", err=True)
    findings = sorted((_relative(finding) for finding in result), key=Finding.sort_key)
    click.echo(render(findings, fmt), nl=False)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _relative(finding: Finding) -> Finding:
    """Paths under the current directory as the static linter prints them."""
    import dataclasses
    import os

    try:
        relative = os.path.relpath(finding.path)
    except ValueError:  # another drive on Windows
        return finding
    return finding if relative.startswith("..") else dataclasses.replace(finding, path=relative)


def _fail(message: str) -> None:
    click.echo(f"devicelint: error: {message}", err=True)
    sys.exit(EXIT_USAGE)
