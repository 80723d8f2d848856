"""Solvers for the proxy-kernel problems; each talks only to the problem interface.

Imported lazily (PEP 562): the SIQCLP solver needs cvxpy, which takes seconds to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm._lazy import attach

_EXPORTS = {
    "SolverMonitor": "indefsvm.solvers._monitor",
    "analytic_center_cutting_plane": "indefsvm.solvers.accpm",
    "exchange_method": "indefsvm.solvers.siqclp",
    "projected_gradient": "indefsvm.solvers.pg",
}

__all__ = [
    "SolverMonitor",
    "analytic_center_cutting_plane",
    "exchange_method",
    "projected_gradient",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS)


if TYPE_CHECKING:  # pragma: no cover
    from indefsvm.solvers._monitor import SolverMonitor
    from indefsvm.solvers.accpm import analytic_center_cutting_plane
    from indefsvm.solvers.pg import projected_gradient
    from indefsvm.solvers.siqclp import exchange_method
