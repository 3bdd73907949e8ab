"""The one type that crosses layers: a frozen Finding, with its optional fix and related notes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Optional


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions with ``content``.

    Columns count characters (code points), like the finding's own columns. In a notebook the
    positions are within the code cell numbered ``cell``.
    """

    line: int
    column: int
    end_line: int
    end_column: int
    content: str
    cell: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "applicability": "safe" if self.safe else "unsafe",
            "edits": [edit.to_dict() for edit in self.edits],
        }


@dataclass(frozen=True)
class Related:
    """A second location that explains a finding ("x was moved to cuda here")."""

    message: str
    line: int
    column: int
    #: in a notebook, the cell the line counts in (see ``Finding.cell``)
    cell: Optional[int] = None
    #: the file the note is in, when it is another module of the project than the finding's
    path: Optional[str] = None


@dataclass(frozen=True)
class RuntimeContext:
    """What the runtime guard saw: the module (dotted path from the guarded model, and class),
    the module's own parameter or buffer and its device, the input (``args[0]``, ``kwargs['mask']``)
    and its device; for an op-level finding the torch operation and, where a device-less
    factory made the odd tensor, which factory and where, and where the guarded model was
    called from when that is another file than the op's (a library model's op)."""

    module_path: str
    module_class: str
    tensor: Optional[str] = None
    tensor_device: Optional[str] = None
    argument: Optional[str] = None
    argument_device: Optional[str] = None
    op: Optional[str] = None
    created_by: Optional[str] = None
    called_from: Optional[str] = None


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Optional[Fix] = None
    related: tuple[Related, ...] = field(default=())
    #: set on findings of the runtime guard (devicelint.guard / devicelint.simulate)
    runtime: Optional[RuntimeContext] = None
    #: in a notebook (.ipynb), the 1-based number of the cell among all its cells (markdown
    #: ones too, as Jupyter and ruff count them); ``line`` and ``column`` count within that cell
    cell: Optional[int] = None

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.code)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: exactly these keys, documented in the README."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "path": self.path,
            "cell": self.cell,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": self.fix.to_dict() if self.fix else None,
        }


def finding_from_dict(data: dict[str, Any], path: str) -> Finding:
    """The inverse of ``Finding.to_dict`` plus ``related`` (used by the result cache)."""
    fix = data.get("fix")
    return Finding(
        code=data["code"],
        name=data["name"],
        severity=Severity(data["severity"]),
        message=data["message"],
        path=path,
        cell=data.get("cell"),
        line=data["line"],
        column=data["column"],
        end_line=data["end_line"],
        end_column=data["end_column"],
        fix=None
        if fix is None
        else Fix(
            title=fix["title"],
            edits=tuple(
                Edit(e["line"], e["column"], e["end_line"], e["end_column"], e["content"], e.get("cell")) for e in fix["edits"]
            ),
            safe=fix["applicability"] == "safe",
        ),
        related=tuple(Related(r["message"], r["line"], r["column"], r.get("cell"), r.get("path")) for r in data.get("related", ())),
    )
