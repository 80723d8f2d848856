"""Registry of the kernel names accepted by the estimators' ``kernel`` parameter.

A name ``"<name>"`` resolves to the function ``<name>_kernel`` of :mod:`indefsvm.kernels`;
scikit-learn's spellings (``"rbf"``, ``"poly"``) are aliases. Adding a kernel to the estimators
is one function in a module of this package plus one entry of :data:`KERNEL_NAMES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["KERNEL_ALIASES", "KERNEL_NAMES", "resolve_kernel"]

#: Kernel names accepted by the ``kernel`` parameter (functions ``<name>_kernel`` of
#: :mod:`indefsvm.kernels`), plus the aliases of :data:`KERNEL_ALIASES`.
#: Modules that define the ``<name>_kernel`` functions of :data:`KERNEL_NAMES`.
_KERNEL_MODULES = (
    "indefsvm.kernels.vector",
    "indefsvm.kernels.image",
    "indefsvm.kernels.sequence",
    "indefsvm.kernels.dissimilarity",
)

KERNEL_NAMES = (
    "linear",
    "polynomial",
    "gaussian",
    "sigmoid",
    "epanechnikov",
    "gaussian_combination",
    "multiquadric",
    "thin_plate_spline",
    "difference_of_gaussians",
    "simpson",
    "tangent_distance",
    "dtw",
)
#: scikit-learn style aliases of kernel names.
KERNEL_ALIASES = {"rbf": "gaussian", "poly": "polynomial", "tangent": "tangent_distance"}


def resolve_kernel(kernel: str | Callable[..., Any]) -> Callable[..., Any] | None:
    """Return the kernel function for a ``kernel`` parameter (None for ``"precomputed"``).

    Parameters
    ----------
    kernel : str or callable
        ``"precomputed"``, a name of :data:`KERNEL_NAMES` / :data:`KERNEL_ALIASES`, or a
        callable ``kernel(X, Y=None, **params)`` returning the ``(n_x, n_y)`` kernel matrix.

    Returns
    -------
    callable or None
    """
    if callable(kernel):
        return kernel
    if not isinstance(kernel, str):
        raise TypeError(
            f"kernel must be 'precomputed', a kernel name or a callable; got {type(kernel)}."
        )
    if kernel == "precomputed":
        return None
    name = KERNEL_ALIASES.get(kernel, kernel)
    if name not in KERNEL_NAMES:
        raise ValueError(
            f"unknown kernel {kernel!r}; expected 'precomputed', a callable or one of "
            f"{list(KERNEL_NAMES)} (aliases {KERNEL_ALIASES})."
        )
    # The defining modules, not the package (which imports this registry): no import circle.
    import importlib

    for module_name in _KERNEL_MODULES:
        module = importlib.import_module(module_name)
        function = getattr(module, f"{name}_kernel", None)
        if function is not None:
            return function
    raise AssertionError(f"kernel {name!r} is registered but no kernel module defines it")
