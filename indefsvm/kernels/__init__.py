"""Kernel functions (subpackage; the split into modules follows in the next commit)."""

from indefsvm.kernels.vector import *  # noqa: F403
from indefsvm.kernels.vector import BLOCK_BYTES, __all__  # noqa: F401
