"""Solvers for the proxy-kernel problems; each talks only to the problem interface."""

from indefsvm.solvers._monitor import SolverMonitor
from indefsvm.solvers.pg import projected_gradient

__all__ = ["SolverMonitor", "projected_gradient"]
