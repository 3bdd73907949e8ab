from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


class SyntaxErrorRule(Rule):
    """
    ## What it does
    Reports a file that cannot be read as Python: a syntax error (at its position), bytes that
    do not decode in the file's declared encoding, a NUL byte, or nesting too deep to parse.

    ## Why is this bad?
    devicelint cannot check a file it cannot parse, and neither can Python run it. The run goes
    on with the other files; this finding makes sure the skipped file is not silently missed.

    ## Example
    ```python
    import torch
    def forward(x:
        return x.cuda()
    ```

    ## Use instead
    ```python
    import torch
    def forward(x):
        return x.cuda()
    ```
    """

    code = "DL001"
    name = "syntax-error"
    severity = Severity.ERROR
    summary = "The file does not parse; reported at the error position, and the run goes on."
    valid = ("import torch\nx = torch.zeros(3)\n",)
    invalid = (Example("import torch\ndef f(x:  # expect: DL001\n    return x\n"),)
