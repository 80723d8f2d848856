"""Numerical linear algebra under both paradigms.

* :mod:`~indefsvm.linalg.rank_one`: eigenpairs of ``diag(d) + sigma z z'`` (secular equation,
  Gu-Eisenstat vectors; compiled engine in :mod:`~indefsvm.linalg._secular_numba`), the step
  that makes an evaluation of the proxy kernel cost O(n^2) instead of an ``eigh``;
* :mod:`~indefsvm.linalg.projection`: projections on the feasible sets of the dual problems
  (box, box with an equality, simplex), linear-time where possible (``_linear_time``);
* :mod:`~indefsvm.linalg.factor`: a kernel given by a factor (``LowRankKernel``) and the passes
  over the factor (``NumpyFactor`` in memory, ``DaskFactor`` on Dask workers), for both wings;
* :mod:`~indefsvm.linalg.spectrum`: spectrum transforms of indefinite kernels (clip, flip,
  shift, square) and the checks ``is_psd``/``is_cnd``/``is_nds``.
"""
