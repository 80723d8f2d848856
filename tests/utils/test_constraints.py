"""Own parameter checks and one-vs-one aggregation (issue 23: no private scikit-learn names).

References are independent of the code under test: scikit-learn's public behaviour (``SVC``'s
``decision_function_shape="ovr"`` scores), hand-listed accepted/refused values, and a scan of
the package's source for private scikit-learn imports.
"""

from __future__ import annotations

import ast
import pathlib
from numbers import Integral, Real

import numpy as np
import pytest
from sklearn import config_context
from sklearn.svm import SVC

from indefsvm import IndefiniteSVC
from indefsvm.multiclass import ovo_vote_scores
from indefsvm.utils.constraints import (
    Interval,
    InvalidParameterError,
    StrOptions,
    check_parameters,
)

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "indefsvm"


def _private_sklearn_imports(path: pathlib.Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sklearn"):
            module_private = any(part.startswith("_") for part in node.module.split("."))
            names_private = [a.name for a in node.names if a.name.startswith("_")]
            if module_private or names_private:
                found.append(f"{path.name}:{node.lineno} from {node.module} import ...")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("sklearn") and any(
                    part.startswith("_") for part in alias.name.split(".")
                ):
                    found.append(f"{path.name}:{node.lineno} import {alias.name}")
    return found


def test_no_module_imports_a_private_scikit_learn_name():
    found = [hit for path in PACKAGE.rglob("*.py") for hit in _private_sklearn_imports(path)]
    assert found == []


def test_the_scan_sees_a_private_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from sklearn.utils._param_validation import Interval\n")
    assert _private_sklearn_imports(probe)


@pytest.mark.parametrize(
    ("constraint", "accepted", "refused"),
    [
        (Interval(Real, 0, None, closed="neither"), [1e-9, 3], [0, -1.0, np.nan, np.inf, True]),
        (Interval(Real, 0, 1, closed="both"), [0, 1, 0.5], [1.0000001, -1e-12]),
        (Interval(Integral, 1, None, closed="left"), [1, np.int64(7)], [0, 1.5, 2.0, False]),
        (Interval(Real, None, 0, closed="right"), [0, -1e300], [1e-300, -np.inf, "0"]),
        (StrOptions({"pg", "accpm"}), ["pg", "accpm"], ["PG", 1, None]),
        ("boolean", [True, np.bool_(False)], [0, 1, "True"]),
        ("array-like", [[1, 2], np.ones(3), (1,)], [1.0, "abc", None]),
        ("random_state", [None, 0, 2**32 - 1, np.random.RandomState(0)], [-1, 2**32, 1.5]),
        ("verbose", [0, 5, True], [-1, 1.5]),
        (None, [None], [0]),
        (callable, [len, lambda x: x], ["len"]),
    ],
)
def test_each_form_accepts_and_refuses_what_it_says(constraint, accepted, refused):
    for value in accepted:
        check_parameters({"p": [constraint]}, {"p": value}, "Owner")
    for value in refused:
        with pytest.raises(InvalidParameterError, match=r"The 'p' parameter of Owner must be"):
            check_parameters({"p": [constraint]}, {"p": value}, "Owner")


def test_message_lists_every_form_and_the_value():
    with pytest.raises(InvalidParameterError) as info:
        check_parameters(
            {"n_components": [Interval(Integral, 1, None, closed="left"), None]},
            {"n_components": 0},
            "IndefiniteSVC",
        )
    assert str(info.value) == (
        "The 'n_components' parameter of IndefiniteSVC must be an int in the range [1, inf) "
        "or None. Got 0 instead."
    )
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_estimators_check_at_fit_and_the_public_switch_turns_it_off():
    K = np.eye(4)
    y = np.array([0, 0, 1, 1])
    with pytest.raises(InvalidParameterError, match="'C' parameter of IndefiniteSVC"):
        IndefiniteSVC(C=-1.0).fit(K, y)
    # scikit-learn's public configuration switch is honoured: the bad C then reaches the
    # problem's own check, which refuses it in its own words.
    with config_context(skip_parameter_validation=True):
        with pytest.raises(ValueError) as info:
            IndefiniteSVC(C=-1.0).fit(K, y)
    assert not isinstance(info.value, InvalidParameterError)


@pytest.mark.parametrize("n_classes", [3, 4, 5])
def test_ovo_vote_scores_equal_svc_ovr_scores(n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(30 * n_classes, 2)) + np.repeat(np.arange(n_classes), 30)[:, None]
    y = np.repeat(np.arange(n_classes), 30)
    ovo = SVC(decision_function_shape="ovo").fit(X, y).decision_function(X)
    ovr = SVC(decision_function_shape="ovr").fit(X, y).decision_function(X)
    # LIBSVM's pairwise values are positive for the FIRST class of a pair; ours (and every
    # binary decision_function of scikit-learn) for the second: hence the sign.
    np.testing.assert_allclose(ovo_vote_scores(-ovo, n_classes), ovr, rtol=1e-12, atol=1e-12)


def test_ovo_vote_scores_refuses_a_wrong_number_of_pairs():
    with pytest.raises(
        ValueError, match=r"3 classes have 3 pairs; got decisions of shape \(1, 2\)"
    ):
        ovo_vote_scores(np.zeros((1, 2)), 3)
