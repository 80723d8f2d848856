"""Paradigm 1: the proxy-kernel SVM of Luss & d'Aspremont (paper 004) and its relatives.

One problem, several solvers, kept apart (theory.md §1-§3, §10-§11):

* :mod:`~indefsvm.proxy.operators` (dense ``K0``) and :mod:`~indefsvm.proxy.lowrank` (``K0 =
  Q S Q'``) evaluate the proxy kernel ``K* = (K0 + u u' / (4 rho))_+`` and its products;
* :mod:`~indefsvm.proxy.problems`: the learning problems (classification, regression,
  one-class, PerturbSVM) with their feasible sets, objectives, gradients and certified gaps,
  behind the contract of :mod:`~indefsvm.proxy.protocols`;
* :mod:`~indefsvm.proxy.solvers`: projected gradient, ACCPM and SIQCLP, which talk only to that
  contract; :mod:`~indefsvm.proxy.api` (``solve``) picks one; :mod:`~indefsvm.proxy.result`
  holds what they return;
* :mod:`~indefsvm.proxy.estimators` and :mod:`~indefsvm.proxy.baselines`: the scikit-learn
  estimators and the LIBSVM baselines (spectrum transforms) of the paper's Table 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm.utils.lazy import attach

_EXPORTS = {
    "solve": "indefsvm.proxy.api",
    "solve_problem": "indefsvm.proxy.api",
    "SOLVERS": "indefsvm.proxy.api",
    "make_problem": "indefsvm.proxy.problems",
    "ProxyKernelProblem": "indefsvm.proxy.problems",
    "SolveResult": "indefsvm.proxy.result",
    "IndefiniteSVC": "indefsvm.proxy.estimators",
    "IndefiniteSVR": "indefsvm.proxy.estimators",
    "IndefiniteOneClassSVM": "indefsvm.proxy.estimators",
    "PerturbSVC": "indefsvm.proxy.estimators",
    "SpectrumSVC": "indefsvm.proxy.baselines",
    "ModSVC": "indefsvm.proxy.baselines",
    "DirectSVC": "indefsvm.proxy.baselines",
}
_SUBMODULES = (
    "api",
    "baselines",
    "estimators",
    "lowrank",
    "operators",
    "out_of_sample",
    "problems",
    "protocols",
    "result",
    "solvers",
)

__all__ = [
    "DirectSVC",
    "IndefiniteOneClassSVM",
    "IndefiniteSVC",
    "IndefiniteSVR",
    "ModSVC",
    "PerturbSVC",
    "ProxyKernelProblem",
    "SOLVERS",
    "SolveResult",
    "SpectrumSVC",
    "make_problem",
    "solve",
    "solve_problem",
]

__getattr__, __dir__ = attach(__name__, _EXPORTS, _SUBMODULES)


if TYPE_CHECKING:  # pragma: no cover
    from indefsvm.proxy.api import SOLVERS, solve, solve_problem
    from indefsvm.proxy.baselines import DirectSVC, ModSVC, SpectrumSVC
    from indefsvm.proxy.estimators import (
        IndefiniteOneClassSVM,
        IndefiniteSVC,
        IndefiniteSVR,
        PerturbSVC,
    )
    from indefsvm.proxy.problems import ProxyKernelProblem, make_problem
    from indefsvm.proxy.result import SolveResult
