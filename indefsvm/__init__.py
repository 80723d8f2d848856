"""indefsvm: learning with indefinite kernels.

Luss & d'Aspremont's indefinite SVM (proxy kernel learned jointly with the support vectors) and
learning in reproducing kernel Krein spaces (Oglic & Gaertner; Ong et al.).

Public names are imported on first use (PEP 562), so ``import indefsvm`` and the command line
start fast: scikit-learn, cvxpy and LIBSVM load only when a name that needs them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm._lazy import attach

__version__ = "0.1.0"

#: Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "METHODS": "indefsvm.api",
    "SOLVERS": "indefsvm.api",
    "solve": "indefsvm.api",
    "solve_problem": "indefsvm.api",
    "DirectSVC": "indefsvm.baselines",
    "IndefiniteKernelWarning": "indefsvm.baselines",
    "ModSVC": "indefsvm.baselines",
    "SpectrumSVC": "indefsvm.baselines",
    "IndefiniteOneClassSVM": "indefsvm.estimators",
    "IndefiniteSVC": "indefsvm.estimators",
    "IndefiniteSVR": "indefsvm.estimators",
    "PerturbSVC": "indefsvm.estimators",
    "IndefiniteNystroem": "indefsvm.nystrom",
    "PROBLEMS": "indefsvm.problems",
    "PROBLEM_TYPES": "indefsvm.problems",
    "ClassificationProblem": "indefsvm.problems",
    "OneClassProblem": "indefsvm.problems",
    "PerturbProblem": "indefsvm.problems",
    "ProxyKernelProblem": "indefsvm.problems",
    "RegressionProblem": "indefsvm.problems",
    "make_problem": "indefsvm.problems",
    "register_problem": "indefsvm.problems",
    "SolveResult": "indefsvm.result",
    "eigen_summary": "indefsvm.spectrum",
    "is_cnd": "indefsvm.spectrum",
    "is_nds": "indefsvm.spectrum",
    "is_psd": "indefsvm.spectrum",
    "spectrum_transform": "indefsvm.spectrum",
}

_SUBMODULES = ("krein", "kernels", "datasets", "metrics", "plotting", "spectrum", "solvers")

__all__ = [
    "ClassificationProblem",
    "DirectSVC",
    "IndefiniteKernelWarning",
    "IndefiniteNystroem",
    "IndefiniteOneClassSVM",
    "IndefiniteSVC",
    "IndefiniteSVR",
    "METHODS",
    "ModSVC",
    "OneClassProblem",
    "PROBLEMS",
    "PROBLEM_TYPES",
    "PerturbProblem",
    "PerturbSVC",
    "ProxyKernelProblem",
    "RegressionProblem",
    "SOLVERS",
    "SolveResult",
    "SpectrumSVC",
    "eigen_summary",
    "is_cnd",
    "is_nds",
    "is_psd",
    "krein",
    "make_problem",
    "register_problem",
    "solve",
    "solve_problem",
    "spectrum_transform",
]


__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from indefsvm import krein
    from indefsvm.api import METHODS, SOLVERS, solve, solve_problem
    from indefsvm.baselines import DirectSVC, IndefiniteKernelWarning, ModSVC, SpectrumSVC
    from indefsvm.estimators import (
        IndefiniteOneClassSVM,
        IndefiniteSVC,
        IndefiniteSVR,
        PerturbSVC,
    )
    from indefsvm.nystrom import IndefiniteNystroem
    from indefsvm.problems import (
        PROBLEM_TYPES,
        PROBLEMS,
        ClassificationProblem,
        OneClassProblem,
        PerturbProblem,
        ProxyKernelProblem,
        RegressionProblem,
        make_problem,
        register_problem,
    )
    from indefsvm.result import SolveResult
    from indefsvm.spectrum import eigen_summary, is_cnd, is_nds, is_psd, spectrum_transform
