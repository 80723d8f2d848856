"""indefsvm: learning with indefinite kernels.

Luss & d'Aspremont's indefinite SVM (proxy kernel learned jointly with the support vectors) and
learning in reproducing kernel Krein spaces (Oglic & Gaertner; Ong et al.).
"""

from indefsvm import krein
from indefsvm.api import METHODS, solve, solve_problem
from indefsvm.baselines import DirectSVC, IndefiniteKernelWarning, ModSVC, SpectrumSVC
from indefsvm.estimators import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR, PerturbSVC
from indefsvm.nystrom import IndefiniteNystroem
from indefsvm.problems import (
    PROBLEMS,
    ClassificationProblem,
    OneClassProblem,
    PerturbProblem,
    ProxyKernelProblem,
    RegressionProblem,
    make_problem,
)
from indefsvm.result import SolveResult
from indefsvm.spectrum import eigen_summary, is_cnd, is_nds, is_psd, spectrum_transform

__version__ = "0.1.0"

__all__ = [
    "METHODS",
    "PROBLEMS",
    "ClassificationProblem",
    "DirectSVC",
    "IndefiniteKernelWarning",
    "IndefiniteNystroem",
    "IndefiniteOneClassSVM",
    "IndefiniteSVC",
    "IndefiniteSVR",
    "ModSVC",
    "OneClassProblem",
    "PerturbProblem",
    "PerturbSVC",
    "ProxyKernelProblem",
    "RegressionProblem",
    "SolveResult",
    "SpectrumSVC",
    "eigen_summary",
    "is_cnd",
    "is_nds",
    "is_psd",
    "krein",
    "make_problem",
    "solve",
    "solve_problem",
    "spectrum_transform",
]
