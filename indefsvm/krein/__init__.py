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

# Each module's __all__ is its public interface; the package re-exports them all, so a new
# public name is declared once (in its module), not again here.
from indefsvm.krein import hypergrad, lowrank, models, solver, subspace, tuning
from indefsvm.krein.hypergrad import *  # noqa: F403
from indefsvm.krein.lowrank import *  # noqa: F403
from indefsvm.krein.models import *  # noqa: F403
from indefsvm.krein.solver import *  # noqa: F403
from indefsvm.krein.subspace import *  # noqa: F403
from indefsvm.krein.tuning import *  # noqa: F403

__all__ = [
    *hypergrad.__all__,
    *lowrank.__all__,
    *models.__all__,
    *solver.__all__,
    *subspace.__all__,
    *tuning.__all__,
]
