"""Device-flow analysis: what each name is, and where it lives."""

from devicelint.analysis.values import Device, Kind, Origin, Role, Value

__all__ = ["Device", "Kind", "Origin", "Role", "Value"]
