"""Solvers for the proxy-kernel problems; each talks only to the problem interface."""

from indefsvm.solvers._monitor import SolverMonitor
from indefsvm.solvers.accpm import analytic_center_cutting_plane
from indefsvm.solvers.pg import projected_gradient
from indefsvm.solvers.siqclp import exchange_method

__all__ = [
    "SolverMonitor",
    "analytic_center_cutting_plane",
    "exchange_method",
    "projected_gradient",
]
