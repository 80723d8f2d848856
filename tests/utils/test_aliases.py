"""Module paths of the old layout (before issue 23) keep working for one release.

Independent checks: the import system's own answer (``importlib.import_module``), identity of
the module objects, the warning category, and a model file whose type names are rewritten to the
old paths byte by byte (as a file written before the move would name them).
"""

from __future__ import annotations

import importlib
import sys
import warnings
import zipfile

import numpy as np
import pytest

import indefsvm
from indefsvm.persistence import load_model, save_model
from indefsvm.utils.aliases import MOVED_MODULES, new_module_name


@pytest.mark.parametrize("old", sorted(MOVED_MODULES))
def test_every_old_path_is_the_new_module_with_a_future_warning(old):
    sys.modules.pop(old, None)
    with pytest.warns(FutureWarning, match=f"{old} moved to {MOVED_MODULES[old]}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED_MODULES[old])
    assert module.__name__ == MOVED_MODULES[old]


def test_submodules_of_a_moved_package_follow_it():
    assert new_module_name("indefsvm.solvers.pg") == "indefsvm.proxy.solvers.pg"
    assert new_module_name("indefsvm.krein.models") is None  # did not move
    assert new_module_name("indefsvm.problemsx") is None  # a prefix is not a match
    sys.modules.pop("indefsvm.solvers.pg", None)
    with pytest.warns(FutureWarning):
        from indefsvm.solvers.pg import projected_gradient
    assert projected_gradient.__module__ == "indefsvm.proxy.solvers.pg"


def test_old_proxy_module_names_are_forwarded_by_the_package():
    from indefsvm.proxy import operators

    with pytest.warns(FutureWarning, match="indefsvm.proxy.operators.negative_square_change"):
        forwarded = indefsvm.proxy.negative_square_change
    assert forwarded is operators.negative_square_change
    with pytest.raises(AttributeError):
        indefsvm.proxy.no_such_name  # noqa: B018


def test_the_new_paths_import_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for new in MOVED_MODULES.values():
            importlib.import_module(new)


def test_a_model_file_written_with_the_old_paths_still_loads(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = indefsvm.IndefiniteSVC(kernel="sigmoid", gamma=0.5, coef0=-0.2).fit(X, y)
    path = save_model(model, tmp_path / "new.skops")
    # Rewrite every type name to its old module path, as a file from before the move has them.
    old_file = tmp_path / "old.skops"
    inverse = sorted(((new, old) for old, new in MOVED_MODULES.items()), key=lambda p: -len(p[0]))
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(old_file, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith(".json"):
                text = data.decode()
                for new, old in inverse:
                    text = text.replace(f'"{new}"', f'"{old}"')
                data = text.encode()
            dst.writestr(item, data)
    with zipfile.ZipFile(old_file) as archive:
        assert any(b'"indefsvm.estimators"' in archive.read(n) for n in archive.namelist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        loaded = load_model(old_file)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
