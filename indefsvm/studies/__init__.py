"""Comparative studies on equal footing: ``indefsvm study run SPEC.toml --out DIR``.

A study is datasets x kernels (parameter grids) x methods (every estimator of
:mod:`indefsvm` and :mod:`indefsvm.krein`) x hyperparameter search x outer/inner
cross-validation, declared in a TOML file (:mod:`indefsvm.studies.spec`). The harness
(:mod:`indefsvm.studies.harness`) gives every method the same folds, the same kernel matrices
and the same tuning budget; records go to a resumable SQLite store
(:mod:`indefsvm.studies.store`); tasks run on local processes or a Dask cluster
(:mod:`indefsvm.studies.backends`); :mod:`indefsvm.studies.report` writes tables and plots.
See ``docs/studies.md``.
"""

from indefsvm.studies.data import LOADER_NAMES, StudyData, load_dataset
from indefsvm.studies.report import write_report
from indefsvm.studies.runner import StudyStatus, prepare_study, run_study, study_status
from indefsvm.studies.spec import SpecError, Study, load_spec, parse_spec
from indefsvm.studies.store import SpecChangedError, Store, StoreError

__all__ = [
    "LOADER_NAMES",
    "SpecChangedError",
    "SpecError",
    "Store",
    "StoreError",
    "Study",
    "StudyData",
    "StudyStatus",
    "load_dataset",
    "load_spec",
    "parse_spec",
    "prepare_study",
    "run_study",
    "study_status",
    "write_report",
]
