"""Learning in reproducing kernel Krein spaces.

The second paradigm of :mod:`indefsvm` (next to the indefinite SVM of Luss & d'Aspremont):

* :mod:`indefsvm.krein.solver` -- global solutions of the KREIN (Oglic & Gaertner 2018, eq. 4)
  and OMCS-KREIN (eq. 2) problems through the secular equation, Krein kernel ridge regression
  (Oglic & Gaertner 2019, Sect. 2.4);
* :mod:`indefsvm.krein.models` -- scikit-learn estimators and the baselines (spectrum
  transforms, Krein SVM, similarities as features, Ong et al.'s subspace methods);
* :mod:`indefsvm.krein.lowrank` -- the low-rank learners of Oglic & Gaertner (2019), Sect.
  2.4-2.5, on a Nystroem factor: KREIN LSM, KREIN VC-LSM (secular solver in ``m``
  dimensions), KREIN SH-SVM (modified finite Newton) and its hyperparameter gradients;
* :mod:`indefsvm.krein.subspace` -- Ong et al. (2004), Sect. 5: TSF, Landweber-Fridman, MR-II;
* :mod:`indefsvm.krein.hypergrad` -- hyperparameter gradients (paper 000, Sect. 3.3) and an
  L-BFGS-B tuner.
"""

from indefsvm.krein.hypergrad import (
    HyperGradient,
    TuningResult,
    tune_variance_constrained,
    validation_hypergradient,
)
from indefsvm.krein.lowrank import (
    LowRankVCSolution,
    SquaredHingeSolution,
    lowrank_krein_ridge,
    lowrank_variance_constrained,
    rediagonalize,
    squared_hinge_hypergradient,
    squared_hinge_svm,
)
from indefsvm.krein.models import (
    KREIN_FORMULATIONS,
    KreinClassifier,
    KreinKernelRidge,
    KreinKernelRidgeClassifier,
    KreinRegressor,
    KreinSquaredHingeSVC,
    KreinSVC,
    OngSubspaceRegressor,
    SimilarityRidge,
    SimilarityRidgeClassifier,
    center_kernel_test,
    center_kernel_train,
)
from indefsvm.krein.solver import (
    KernelEigen,
    SphereSolution,
    VarianceConstrainedSolution,
    kernel_eigen,
    krein_kernel_ridge,
    krein_least_squares,
    krein_objective,
    krein_regularizer_eigenvalues,
    minimize_quadratic_on_sphere,
    omcs_krein_least_squares,
    variance_constrained_least_squares,
)
from indefsvm.krein.subspace import (
    IterativeSolution,
    landweber_fridman,
    mr_ii,
    truncated_spectral_factorization,
)

__all__ = [
    "HyperGradient",
    "IterativeSolution",
    "KREIN_FORMULATIONS",
    "KernelEigen",
    "KreinClassifier",
    "KreinKernelRidge",
    "KreinKernelRidgeClassifier",
    "KreinRegressor",
    "KreinSVC",
    "KreinSquaredHingeSVC",
    "LowRankVCSolution",
    "SquaredHingeSolution",
    "OngSubspaceRegressor",
    "SimilarityRidge",
    "SimilarityRidgeClassifier",
    "SphereSolution",
    "TuningResult",
    "VarianceConstrainedSolution",
    "center_kernel_test",
    "center_kernel_train",
    "kernel_eigen",
    "krein_kernel_ridge",
    "krein_least_squares",
    "krein_objective",
    "krein_regularizer_eigenvalues",
    "landweber_fridman",
    "lowrank_krein_ridge",
    "lowrank_variance_constrained",
    "minimize_quadratic_on_sphere",
    "mr_ii",
    "omcs_krein_least_squares",
    "rediagonalize",
    "squared_hinge_hypergradient",
    "squared_hinge_svm",
    "truncated_spectral_factorization",
    "tune_variance_constrained",
    "validation_hypergradient",
    "variance_constrained_least_squares",
]
