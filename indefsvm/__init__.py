"""indefsvm: learning with indefinite kernels.

Luss & d'Aspremont's indefinite SVM (proxy kernel learned jointly with the support vectors) and
learning in reproducing kernel Krein spaces.
"""

from indefsvm.api import METHODS, solve, solve_problem
from indefsvm.problems import ClassificationProblem, ProxyKernelProblem
from indefsvm.result import SolveResult

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "ClassificationProblem",
    "ProxyKernelProblem",
    "SolveResult",
    "solve",
    "solve_problem",
]
