from devicelint.findings import Severity
from devicelint.rules.base import Rule


class InternalErrorRule(Rule):
    """
    ## What it does
    Reports that the device-flow analysis or one rule raised an exception on this file. The
    rule and the file are named (the traceback is shown with `--verbose`); every other rule's
    findings, and every other file's, are kept.

    ## Why is this bad?
    It is not a bug in your code: it is a bug in devicelint. Please report it with the file
    (or a small piece of it that still triggers the error).

    ## Example
    ```text
    model.py:1:1: DL002 rule DL201 (mixed-device-op) crashed on this file: KeyError: 'x'
    ```

    ## Use instead
    Nothing to change in your code; silence the finding with `--ignore DL002` until devicelint
    is fixed.
    """

    code = "DL002"
    name = "internal-error"
    severity = Severity.ERROR
    summary = "A rule raised an exception on this file; its name and the file are reported, the run goes on."
