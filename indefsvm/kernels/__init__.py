"""Kernel functions: indefinite and positive definite kernels on vectors, kernels on images,
kernels built from dissimilarities and on time series.

Modules: :mod:`~indefsvm.kernels.vector`, :mod:`~indefsvm.kernels.image`,
:mod:`~indefsvm.kernels.dissimilarity`, :mod:`~indefsvm.kernels.sequence` (DTW) and the name
registry of the estimators, :mod:`~indefsvm.kernels.registry`.

Every kernel on vectors is a function ``(X, Y=None, **params) -> K`` with ``K[i, j] = k(x_i,
y_j)`` (``Y = X`` when omitted). Results are float64 and are built in blocks of rows whose
temporaries are capped by :data:`BLOCK_BYTES` (32 MB), so a 20,000 x 20,000 kernel needs its
3.2 GB plus a few tens of MB, never a second full-size array. With ``Y`` omitted only the upper
triangle is computed and mirrored (exactly symmetric result, half the work).

Kernels on vectors (``d = ||x - y||``):

* :func:`linear_kernel` ``<x, y>`` and :func:`gaussian_kernel` ``exp(-gamma d^2)`` (PSD);
* :func:`polynomial_kernel` ``(gamma <x, y> + coef0)^degree`` (PSD for ``coef0 >= 0``);
* :func:`sigmoid_kernel` ``tanh(gamma <x, y> + coef0)`` (textbook eq. 6.6; indefinite in general);
* :func:`epanechnikov_kernel` ``(1 - d^2/sigma)^p`` for ``d^2 <= sigma``, else 0;
  :func:`gaussian_combination_kernel` ``e^{-d^2/s1} + e^{-d^2/s2} - e^{-d^2/s3}``;
  :func:`multiquadric_kernel` ``sqrt(d^2/sigma + c^2)``;
  :func:`thin_plate_spline_kernel` ``(d/sigma)^(2p) ln(d^2/sigma)`` (Ong et al. 2004, Table 1);
* :func:`difference_of_gaussians_kernel` ``e^{-g1 d^2} - w e^{-g2 d^2}`` (Oglic & Gaertner 2019).

Kernels on images: :func:`simpson_kernel` (Luss & d'Aspremont 2009, Sect. 5.1) and the one-sided
tangent distance of Simard et al. (1998), :func:`one_sided_tangent_distance`, turned into a kernel
by :func:`tangent_distance_kernel` as in Luss & d'Aspremont (2009) after Haasdonk & Keysers (2002).

From dissimilarities: :func:`double_centering` / :class:`DoubleCentering` (classical MDS, with
the out-of-sample extension for test rows), :func:`exp_dissimilarity_kernel` and the transformer
:class:`DissimilarityKernel` (``exp(-D / (gamma scale))`` or ``-D / (gamma scale)`` with the unit
fitted on the training block; tunable inside ``GridSearchCV`` on a precomputed ``D``).

References
----------
C. S. Ong, X. Mary, S. Canu, A. J. Smola. Learning with non-positive kernels. ICML 2004.
D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019.
R. Luss, A. d'Aspremont. Support vector machine classification with indefinite kernels.
Math. Prog. Comp. 1, 2009.
P. Y. Simard, Y. LeCun, J. S. Denker, B. Victorri. Transformation invariance in pattern
recognition -- tangent distance and tangent propagation. LNCS 1524, 1998.
B. Haasdonk, D. Keysers. Tangent distance kernels for support vector machines. ICPR 2002.
"""

from indefsvm.kernels.dissimilarity import (
    DissimilarityKernel,
    DoubleCentering,
    double_centering,
    exp_dissimilarity_kernel,
)
from indefsvm.kernels.image import (
    DEFAULT_TANGENTS,
    one_sided_tangent_distance,
    simpson_kernel,
    tangent_distance_kernel,
    tangent_vectors,
)
from indefsvm.kernels.registry import KERNEL_ALIASES, KERNEL_NAMES, resolve_kernel
from indefsvm.kernels.sequence import dtw_distances, dtw_kernel
from indefsvm.kernels.vector import (
    difference_of_gaussians_kernel,
    epanechnikov_kernel,
    gaussian_combination_kernel,
    gaussian_kernel,
    linear_kernel,
    multiquadric_kernel,
    polynomial_kernel,
    sigmoid_kernel,
    squared_euclidean_distances,
    thin_plate_spline_kernel,
)
from indefsvm.utils.blocks import BLOCK_BYTES  # the package's one budget, documented here

__all__ = [
    "BLOCK_BYTES",
    "DEFAULT_TANGENTS",
    "KERNEL_ALIASES",
    "KERNEL_NAMES",
    "DissimilarityKernel",
    "DoubleCentering",
    "difference_of_gaussians_kernel",
    "double_centering",
    "dtw_distances",
    "dtw_kernel",
    "epanechnikov_kernel",
    "exp_dissimilarity_kernel",
    "gaussian_combination_kernel",
    "gaussian_kernel",
    "linear_kernel",
    "multiquadric_kernel",
    "one_sided_tangent_distance",
    "polynomial_kernel",
    "resolve_kernel",
    "sigmoid_kernel",
    "simpson_kernel",
    "squared_euclidean_distances",
    "tangent_distance_kernel",
    "tangent_vectors",
    "thin_plate_spline_kernel",
]
