"""The runtime half: a guard on real forwards, and a simulated GPU run on a CPU-only machine.

torch is imported when a guard is made or a simulation runs, never by ``import devicelint``.
"""
