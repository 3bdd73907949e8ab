"""The command line: ``devicelint [PATHS]`` (short for ``devicelint check``), ``devicelint rule
CODE`` and ``devicelint simulate MODULE:FACTORY``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import click

from devicelint import __version__
from devicelint.cache import DEFAULT_DIRECTORY, ResultCache
from devicelint.config import ConfigError, ConfigResolver, Overrides, Settings
from devicelint.discovery import discover
from devicelint.findings import Finding
from devicelint.project import ProjectIndex
from devicelint.report import FORMATS, render, statistics
from devicelint.rules import all_rules, rules_by_code
from devicelint.runner import default_jobs, lint_data, lint_files
from devicelint.selection import SelectionError, validate_selectors

if TYPE_CHECKING:
    from devicelint.fixer import FixResult
    from devicelint.rules import Rule

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
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to run in addition to the selected ones (e.g. DL314, off by default).")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules not to run, by code or prefix.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files and directories matching GLOB (a name, or a path relative to the current directory); replaces the configured `exclude` and the default list (.git, .venv, build, dist, node_modules, ...). Comma-separated or repeated.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB", help="Like --exclude, but added to the configured and default exclusions.")
@click.option("--force-exclude/--no-force-exclude", default=None, help="Apply the exclusions to paths named on the command line and to --stdin-filename too (pre-commit names every file it checks). Default: `force-exclude` in the configuration, else off.")
@click.option("--stdin-filename", metavar="PATH", default=None, help="Read the source from standard input and lint it as PATH (configuration, per-file-ignores, exclusions and the reported path follow PATH); with --fix the fixed source goes to stdout and the findings to stderr. `devicelint -` reads standard input as `-`.")
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format (`--output-format` is ruff's name for it).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", "show_statistics", is_flag=True, help="Print the number of findings per rule instead of the findings.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes (default: the number of CPUs).")
@click.option("--list-rules", is_flag=True, help="List every rule with its code, severity and summary, and exit.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="Read [tool.devicelint] from this file for every linted file, instead of the pyproject.toml nearest to each.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place (atomically), then report what is left.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing; exit 1 if anything would change.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix/--diff, also apply fixes marked unsafe (see `devicelint rule CODE`).")
@click.option("--cache-dir", type=click.Path(file_okay=False), default=None, help=f"Where to keep per-file results (default: {DEFAULT_DIRECTORY}/ beside the configuration of each file, or in the current directory).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--single-file", is_flag=True, help="Analyse each file on its own: do not read the modules of its project that it imports (faster, finds less).")
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of internal errors (DL002).")
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: Optional[bool],
    stdin_filename: Optional[str],
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
    single_file: bool,
    verbose: bool,
) -> None:
    """Lint PATHS (files or directories; default: the current directory; `-`: standard input).

    Each file is linted with the [tool.devicelint] table of the nearest pyproject.toml that has
    one, at or above it (--config: that file for all); command-line options apply on top.
    """
    if list_rules:
        _list_rules(unsafe_fixes)
        return
    try:
        overrides = Overrides(
            base=Path.cwd(),
            select=tuple(validate_selectors(_split(select), "--select")) if select else None,
            extend_select=tuple(validate_selectors(_split(extend_select), "--extend-select")),
            ignore=tuple(validate_selectors(_split(ignore), "--ignore")),
            exclude=tuple(_split(exclude)) if exclude else None,
            extend_exclude=tuple(_split(extend_exclude)),
            force_exclude=force_exclude,
        )
        resolver = ConfigResolver(overrides, Path(config_path) if config_path else None)
        if stdin_filename is not None or paths == ("-",):
            _check_stdin(stdin_filename, paths, resolver, fmt, exit_zero, show_statistics, fix, diff, unsafe_fixes, verbose)
        if "-" in paths:
            _fail("`-` (standard input) cannot be linted together with other paths")
        discovered = discover(paths or (".",), resolver)
    except (ConfigError, SelectionError) as error:
        _fail(str(error))
    for missing in discovered.missing:
        click.echo(f"devicelint: error: {missing}: no such file or directory", err=True)
    for empty in discovered.empty:
        click.echo(f"devicelint: warning: no Python files found under {empty}", err=True)
    findings: list[Finding] = []
    for settings, files in discovered.groups():
        codes = [rule.code for rule in settings.rules]
        cache = None
        if not no_cache:
            cache = ResultCache(Path(cache_dir) if cache_dir else settings.root / DEFAULT_DIRECTORY, codes, verbose, cross_file=not single_file)
        found = lint_files(
            files, codes, jobs or default_jobs(), verbose, cache, project_root=_common_parent(paths or (".",)), cross_file=not single_file
        )
        findings.extend(finding for finding in found if settings.keeps(finding.code, finding.path))
    if fix or diff:
        settings_of = {str(path): settings for path, settings in zip(discovered.files, discovered.settings)}
        findings, changed = _fix(findings, settings_of, unsafe_fixes, write=not diff, cross_file=not single_file)
        if diff:
            sys.exit(EXIT_FINDINGS if changed else EXIT_CLEAN)
    findings.sort(key=Finding.sort_key)
    if show_statistics:
        output = statistics(findings, fmt, unsafe_fixes=unsafe_fixes)
    else:
        output = render(findings, fmt, unsafe_fixes=unsafe_fixes)
    # "All checks passed." would be false when a named path was not there to check
    nothing_checked_is_wrong = fmt == "text" and not findings and bool(discovered.missing)
    if not nothing_checked_is_wrong:
        click.echo(output, nl=False)
    if discovered.missing:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _common_parent(paths: Sequence[str]) -> Optional[Path]:
    """The folder the named paths have in common: the project root of files with no
    pyproject.toml, setup.py or .git above them."""
    try:
        folders = [Path(path).resolve() if Path(path).is_dir() else Path(path).resolve().parent for path in paths]
        return Path(os.path.commonpath(folders)) if folders else None
    except (OSError, ValueError):
        return None


def _fix(
    findings: list[Finding], settings_of: dict[str, Settings], unsafe: bool, write: bool, cross_file: bool = True
) -> tuple[list[Finding], int]:
    """Fix every file with an applicable fix, with the rules its settings select (less its
    per-file-ignores); returns the findings left and how many files changed."""
    from devicelint.fixer import fix_file, write_atomically  # only --fix/--diff pay for it

    project = ProjectIndex(_common_parent(list(settings_of))) if cross_file else None
    paths = sorted({f.path for f in findings if f.fix is not None and (f.fix.safe or unsafe)})
    applied = 0
    changed = 0
    for path in paths:
        result = fix_file(Path(path), settings_of[path].rules_for(path), unsafe=unsafe, project=project)
        if result is None or result.fixed == result.original:
            continue
        changed += 1
        applied += result.applied
        if write:
            write_atomically(Path(path), result.fixed, result.encoding)
            findings = [f for f in findings if f.path != path] + result.remaining
        else:
            click.echo(result.unified_diff(path), nl=False)
    noun = "fix" if applied == 1 else "fixes"
    if write:
        click.echo(f"Applied {applied} {noun} in {changed} file{'s' if changed != 1 else ''}.", err=True)
    else:
        click.echo(f"Would apply {applied} {noun} in {changed} file{'s' if changed != 1 else ''}.", err=True)
    return findings, changed


def _check_stdin(
    stdin_filename: Optional[str],
    paths: tuple[str, ...],
    resolver: ConfigResolver,
    fmt: str,
    exit_zero: bool,
    show_statistics: bool,
    fix: bool,
    diff: bool,
    unsafe: bool,
    verbose: bool,
) -> None:
    """Lint the source on standard input as ``stdin_filename`` (``-`` when not given), as
    editors and format-on-save tools call linters, and exit. With --fix the fixed source (the
    source as it came, when nothing applies) is written to stdout and the report to stderr; with
    --diff the diff goes to stdout. A name that --force-exclude excludes lints nothing."""
    from devicelint.notebook import is_notebook

    for other in paths:
        if other != "-":
            click.echo(f"devicelint: warning: ignoring {other}: --stdin-filename reads the source from standard input", err=True)
    name = stdin_filename if stdin_filename is not None else "-"
    settings = resolver.for_path(stdin_filename) if stdin_filename is not None else resolver.for_directory(os.getcwd())
    if sys.stdin is None or sys.stdout is None:
        _fail("standard input or output is closed; nothing to read the source from or write it to")
    source = sys.stdin.buffer.read()
    stdout = sys.stdout.buffer
    if stdin_filename is not None and settings.force_exclude and settings.excludes_named(stdin_filename):
        if fix:
            stdout.write(source)
            stdout.flush()
        sys.exit(EXIT_CLEAN)
    rules = settings.rules_for(name)
    fixing = (fix or diff) and not is_notebook(name)
    if (fix or diff) and not fixing:
        click.echo("devicelint: warning: fixes are not applied to a notebook read from standard input", err=True)
    result = _fix_source_bytes(source, name, rules, unsafe) if fixing else None
    findings = result.remaining if result is not None else lint_data(source, name, rules, verbose, ProjectIndex().view(name))
    changed = result is not None and result.fixed != result.original
    applied = result.applied if result is not None else 0
    noun = "fix" if applied == 1 else "fixes"
    if diff:
        if changed:
            click.echo(result.unified_diff(name), nl=False)
        click.echo(f"Would apply {applied} {noun}.", err=True)
        sys.exit(EXIT_FINDINGS if changed else EXIT_CLEAN)
    if fix:
        stdout.write(result.fixed.encode(result.encoding) if changed else source)
        stdout.flush()
        click.echo(f"Applied {applied} {noun}.", err=True)
    _report(findings, fmt, show_statistics, unsafe, to_stderr=fix)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _fix_source_bytes(source: bytes, name: str, rules: Sequence[type[Rule]], unsafe: bool) -> Optional[FixResult]:
    """The fixes of Python source given as bytes; None when it cannot be decoded (the lint
    reports that as DL001, and the bytes are handed back as they came)."""
    from devicelint.engine import DecodeError, decode_source, detect_encoding
    from devicelint.fixer import FixResult, fix_source

    try:
        encoding = detect_encoding(source)
        original = decode_source(source)
    except DecodeError:
        return None
    fixed, applied, remaining = fix_source(original, name, rules, unsafe=unsafe, project=ProjectIndex())
    return FixResult(original, fixed, applied, remaining, encoding)


def _report(findings: list[Finding], fmt: str, show_statistics: bool, unsafe: bool, to_stderr: bool) -> None:
    findings = sorted(findings, key=Finding.sort_key)
    output = statistics(findings, fmt, unsafe_fixes=unsafe) if show_statistics else render(findings, fmt, unsafe_fixes=unsafe)
    click.echo(output, nl=False, err=to_stderr)


def _list_rules(unsafe_fixes: bool) -> None:
    """``[*]`` marks the rules whose fixes ``--fix`` applies: with ``--unsafe-fixes``, the
    rules with an unsafe fix too; without, those say that the option would enable it."""
    for rule in all_rules():
        applied = rule.fix_safety == "safe" or (rule.fix_safety == "unsafe" and unsafe_fixes)
        fix = "[*]" if applied else "   "
        notes = []
        if rule.fix_safety == "unsafe":
            notes.append("unsafe fix" if unsafe_fixes else "unsafe fix, applied only with --unsafe-fixes")
        if not rule.default_enabled:
            notes.append("off by default")
        note = f"  ({'; '.join(notes)})" if notes else ""
        click.echo(f"{rule.code}  {fix} {rule.name:<34} {rule.severity.value:<8} {rule.summary}{note}")


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
@click.option("--device", default="cuda:0", show_default=True, help="The simulated GPU that CPU models and inputs are moved to: cuda, or cuda:0 to cuda:7.")
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format (`--output-format` is ruff's name for it).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
def simulate(spec: str, device: str, fmt: str, exit_zero: bool) -> None:
    """Rehearse a forward, or a whole training step, on a simulated GPU, on this CPU-only machine.

    FACTORY, a function importable from MODULE (the current directory is on the import path),
    returns a devicelint.Simulation(model=..., inputs=..., kwargs=..., target=..., loss_fn=...,
    optimizer=...) (or a dict of those fields), or (model, example_inputs) or (model,
    example_inputs, example_kwargs). It is called in a subprocess where moves to a GPU give fake
    tensors on it; CPU models and inputs are moved to fake DEVICE tensors, and forward (with
    loss_fn or optimizer: loss, backward and optimizer step too) runs under
    devicelint.guard(ops=True). Exit status: 0 clean, 1 findings, 2 when the simulation could not
    run or stopped before its end (what stopped it is printed). Needs torch.
    """
    import importlib.util
    import os
    import warnings

    from devicelint.runtime.errors import SimulationError
    from devicelint.runtime.simulate import simulate_factory

    if importlib.util.find_spec("torch") is None:
        _fail("`devicelint simulate` needs torch: pip install torch")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the notes and the stop are printed below instead
            result = simulate_factory(spec, device=device)
    except SimulationError as error:
        _fail(f"the simulation could not run: {error}")
    for note in result.unsupported:
        click.echo(f"devicelint: note: {note}", err=True)
    findings = sorted((_relative(finding) for finding in result), key=Finding.sort_key)
    if findings or result.complete or fmt != "text":
        # an unfinished run with no findings must not print "All checks passed."
        click.echo(render(findings, fmt), nl=False)
    if not result.complete:
        _fail(f"the simulation did not finish, so it checked nothing after that point: {result.stopped}")
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


@main.command()
def server() -> None:
    """Run the language server (LSP) on stdin/stdout, for editors.

    Diagnostics as you type, quick fixes, and "Fix all safe devicelint problems", with the
    [tool.devicelint] settings nearest to each document. Needs pygls:
    pip install 'devicelint[server]'.
    """
    try:
        from devicelint.server import serve
    except ImportError as error:
        if (error.name or "").partition(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        _fail("devicelint server needs pygls: pip install 'devicelint[server]'")
    serve()


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
