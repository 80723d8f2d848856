"""indefsvm: learning with indefinite kernels.

Luss & d'Aspremont's indefinite SVM (proxy kernel learned jointly with the support vectors) and
learning in reproducing kernel Krein spaces (Oglic & Gaertner; Ong et al.).

Layout (``docs/design.md``): :mod:`indefsvm.proxy` is paradigm 1 (problems, operators for dense
and low-rank kernels, solvers, estimators, LIBSVM baselines), :mod:`indefsvm.krein` paradigm 2,
both on :mod:`indefsvm.linalg` (rank-one eigen-updates, projections, spectrum transforms),
:mod:`indefsvm.approximation` (Nystroem for indefinite kernels) and :mod:`indefsvm.kernels`;
:mod:`indefsvm.studies` runs comparative studies; :mod:`indefsvm.utils` holds the plumbing.

Docstrings cite the derivations the code relies on as ``theory.md §N``: the numbered sections of
``docs/theory.md``.

Public names are imported on first use (PEP 562), so ``import indefsvm`` and the command line
start fast: scikit-learn, cvxpy and LIBSVM load only when a name that needs them is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm.utils.lazy import attach

__version__ = "0.2.0"

#: Public name -> module that defines it.
_EXPORTS: dict[str, str] = {
    "METHODS": "indefsvm.proxy.api",
    "SOLVERS": "indefsvm.proxy.api",
    "solve": "indefsvm.proxy.api",
    "solve_problem": "indefsvm.proxy.api",
    "DirectSVC": "indefsvm.proxy.baselines",
    "IndefiniteKernelWarning": "indefsvm.proxy.baselines",
    "ModSVC": "indefsvm.proxy.baselines",
    "SpectrumSVC": "indefsvm.proxy.baselines",
    "IndefiniteOneClassSVM": "indefsvm.proxy.estimators",
    "IndefiniteSVC": "indefsvm.proxy.estimators",
    "IndefiniteSVR": "indefsvm.proxy.estimators",
    "PerturbSVC": "indefsvm.proxy.estimators",
    "IndefiniteNystroem": "indefsvm.approximation.nystrom",
    "PROBLEMS": "indefsvm.proxy.problems",
    "PROBLEM_TYPES": "indefsvm.proxy.problems",
    "ClassificationProblem": "indefsvm.proxy.problems",
    "OneClassProblem": "indefsvm.proxy.problems",
    "PerturbProblem": "indefsvm.proxy.problems",
    "ProxyKernelProblem": "indefsvm.proxy.problems",
    "RegressionProblem": "indefsvm.proxy.problems",
    "make_problem": "indefsvm.proxy.problems",
    "register_problem": "indefsvm.proxy.problems",
    "SolveResult": "indefsvm.proxy.result",
    "eigen_summary": "indefsvm.linalg.spectrum",
    "is_cnd": "indefsvm.linalg.spectrum",
    "is_nds": "indefsvm.linalg.spectrum",
    "is_psd": "indefsvm.linalg.spectrum",
    "spectrum_transform": "indefsvm.linalg.spectrum",
}

_SUBMODULES = (
    "proxy",
    "krein",
    "kernels",
    "approximation",
    "linalg",
    "studies",
    "datasets",
    "metrics",
    "plotting",
)

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
    from indefsvm.approximation.nystrom import IndefiniteNystroem
    from indefsvm.linalg.spectrum import eigen_summary, is_cnd, is_nds, is_psd, spectrum_transform
    from indefsvm.proxy.api import METHODS, SOLVERS, solve, solve_problem
    from indefsvm.proxy.baselines import DirectSVC, IndefiniteKernelWarning, ModSVC, SpectrumSVC
    from indefsvm.proxy.estimators import (
        IndefiniteOneClassSVM,
        IndefiniteSVC,
        IndefiniteSVR,
        PerturbSVC,
    )
    from indefsvm.proxy.problems import (
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
    from indefsvm.proxy.result import SolveResult
