"""Solvers for the proxy-kernel problems; each talks only to the problem interface.

Imported lazily (PEP 562): the SIQCLP solver needs cvxpy, which takes seconds to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm.utils.lazy import attach

_EXPORTS = {
    "SolverMonitor": "indefsvm.proxy.solvers._monitor",
    "analytic_center_cutting_plane": "indefsvm.proxy.solvers.accpm",
    "exchange_method": "indefsvm.proxy.solvers.siqclp",
    "projected_gradient": "indefsvm.proxy.solvers.pg",
}

__all__ = [
    "SolverMonitor",
    "analytic_center_cutting_plane",
    "exchange_method",
    "projected_gradient",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS)


if TYPE_CHECKING:  # pragma: no cover
    from indefsvm.proxy.solvers._monitor import SolverMonitor
    from indefsvm.proxy.solvers.accpm import analytic_center_cutting_plane
    from indefsvm.proxy.solvers.pg import projected_gradient
    from indefsvm.proxy.solvers.siqclp import exchange_method
