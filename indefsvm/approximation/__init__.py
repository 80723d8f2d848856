"""Low-rank approximation of indefinite kernels (paper 003): the Nystroem map of
:mod:`~indefsvm.approximation.nystrom`, whose factor both paradigms' low-rank learners use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from indefsvm.utils.lazy import attach

__all__ = ["IndefiniteNystroem", "one_shot_eigendecomposition"]

__getattr__, __dir__ = attach(
    __name__,
    {
        "IndefiniteNystroem": "indefsvm.approximation.nystrom",
        "one_shot_eigendecomposition": "indefsvm.approximation.nystrom",
    },
    ("nystrom",),
)

if TYPE_CHECKING:  # pragma: no cover
    from indefsvm.approximation.nystrom import IndefiniteNystroem, one_shot_eigendecomposition
