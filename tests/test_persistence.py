"""Model files that cannot run code (issue 22, item 8): indefsvm.persistence."""

from __future__ import annotations

import inspect
import io
import json
import os
import pickle
import warnings
import zipfile

import numpy as np
import pytest
import skops.io
from sklearn.base import is_classifier, is_regressor

import indefsvm
import indefsvm.krein
from indefsvm.persistence import TRUSTED_TYPES, UnsafeModelError, load_model, save_model


def _estimator_classes() -> list[type]:
    return sorted(
        {
            getattr(module, name)
            for module in (indefsvm, indefsvm.krein)
            for name in module.__all__
            if isinstance(getattr(module, name), type) and hasattr(getattr(module, name), "fit")
        },
        key=lambda cls: cls.__name__,
    )


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, -1)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    return X, y, y3, X[:, 1] + 0.1 * rng.normal(size=40)


def _fitted_variants(cls: type):
    """Fitted instances of ``cls`` in the configurations that change what the model holds."""
    X, y, y3, t = _data()
    params = inspect.signature(cls).parameters
    if cls is indefsvm.IndefiniteNystroem:
        yield cls("sigmoid", n_components=8, random_state=0).fit(X)
        return
    targets = [y, y3] if is_classifier(cls()) else [t] if is_regressor(cls()) else [None]
    # a loose tolerance: the test is about what a model holds, not about its accuracy
    kinds = [{"tol": 1e-3} if "tol" in params else {}]
    if "n_components" in params:
        kinds.append({"n_components": 8})
        if "random_state" in params:
            kinds[-1]["random_state"] = 0
    if "prediction_params" in params:  # the proxy-kernel models: keep their training state
        kinds += [{**k, "solver_options": {"keep_training_state": True}} for k in list(kinds)]
    kernel = "rbf" if cls is indefsvm.PerturbSVC else "sigmoid"
    for kind in kinds:
        for target in targets if kind == kinds[0] else targets[:1]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    est = cls(kernel=kernel, **kind).fit(X, target)
                except ValueError:
                    continue  # a configuration the estimator refuses (e.g. 3 classes)
            yield est


@pytest.mark.parametrize("cls", _estimator_classes(), ids=lambda c: c.__name__)
def test_trusted_types_cover_every_estimator_and_round_trip(cls, tmp_path):
    """Every estimator is in TRUSTED_TYPES, every type its fitted state holds beyond skops'
    defaults is too (what skops.io.get_untrusted_types reports), and a saved model predicts
    exactly as the fitted one in memory."""
    assert f"{cls.__module__}.{cls.__qualname__}" in TRUSTED_TYPES
    X = _data()[0]
    n_variants = 0
    for i, est in enumerate(_fitted_variants(cls)):
        n_variants += 1
        untrusted = skops.io.get_untrusted_types(data=skops.io.dumps(est))
        assert set(untrusted) <= set(TRUSTED_TYPES), (est, untrusted)
        path = save_model(est, tmp_path / f"m{i}.skops")
        loaded = load_model(path)
        assert type(loaded) is type(est)
        method = "predict" if hasattr(est, "predict") else "transform"
        np.testing.assert_array_equal(getattr(loaded, method)(X), getattr(est, method)(X))
    assert n_variants >= 1


def test_pickle_still_round_trips():
    X, y, _, _ = _data()
    clf = indefsvm.IndefiniteSVC(kernel="sigmoid", C=2.0).fit(X, y)
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))


class _Evil:
    """Unpickling this runs ``os.system`` (a shell command that creates ``marker``)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch '{self.marker}'",))


def malicious_pickle(path, marker) -> None:
    with open(path, "wb") as fh:
        pickle.dump({"format": "indefsvm-model-1", "estimator": _Evil(marker)}, fh)


def malicious_skops(path, marker) -> None:
    """A genuine model file whose schema was edited: its version entry is now built by calling
    ``os.system("touch marker")`` (skops' constructor node)."""
    X, y, _, _ = _data()
    save_model(indefsvm.IndefiniteSVC(kernel="sigmoid").fit(X, y), path)
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    schema = json.loads(members["schema.json"])
    schema["content"]["indefsvm_version"] = {
        "__class__": "system",
        "__module__": "os",
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": [
                {
                    "__class__": "str",
                    "__module__": "builtins",
                    "__loader__": "JsonNode",
                    "content": json.dumps(f"touch '{marker}'"),
                    "is_json": True,
                    "__id__": 1,
                }
            ],
            "__id__": 2,
        },
        "__id__": 3,
    }
    members["schema.json"] = json.dumps(schema).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    path.write_bytes(buffer.getvalue())


def test_crafted_pickle_runs_no_code(tmp_path):
    marker = tmp_path / "pwned"
    malicious_pickle(tmp_path / "m.joblib", marker)
    # the file is a real attack: unpickling it runs the command
    with open(tmp_path / "m.joblib", "rb") as fh:
        pickle.load(fh)
    assert marker.exists()
    marker.unlink()
    with pytest.raises(UnsafeModelError, match="not in the safe skops format"):
        load_model(tmp_path / "m.joblib")
    assert not marker.exists()


def test_tampered_skops_file_runs_no_code(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "m.skops"
    malicious_skops(path, marker)
    # the file is a real attack: a loader that trusted os.system would run the command
    skops.io.loads(path.read_bytes(), trusted=[*TRUSTED_TYPES, "os.system"])
    assert marker.exists()
    marker.unlink()
    with pytest.raises(UnsafeModelError, match=r"os\.system"):
        load_model(path)
    assert not marker.exists()


def test_allow_pickle_loads_a_trusted_pickle(tmp_path):
    X, y, _, _ = _data()
    clf = indefsvm.IndefiniteSVC(kernel="sigmoid").fit(X, y)
    import joblib

    joblib.dump({"format": "indefsvm-model-1", "estimator": clf}, tmp_path / "m.joblib")
    with pytest.raises(UnsafeModelError, match="allow_pickle"):
        load_model(tmp_path / "m.joblib")
    loaded = load_model(tmp_path / "m.joblib", allow_pickle=True)
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))


def _my_kernel(A, B=None):
    B = A if B is None else B
    return np.tanh(0.5 * A @ B.T - 0.2)


def test_save_refuses_what_could_not_be_loaded_safely(tmp_path):
    X, y, _, _ = _data()
    clf = indefsvm.IndefiniteSVC(kernel=_my_kernel).fit(X, y)
    with pytest.raises(UnsafeModelError, match="callable"):
        save_model(clf, tmp_path / "m.skops")
    assert not (tmp_path / "m.skops").exists()


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not a zip", b"plain text\n"])
def test_unreadable_model_files_are_value_errors(tmp_path, content):
    path = tmp_path / "m.skops"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="m.skops"):
        load_model(path)
    with pytest.raises(ValueError, match="is a directory"):
        load_model(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        load_model(tmp_path / "missing.skops")


def test_precomputed_kernel_with_landmarks_saves_and_predicts_the_same(tmp_path):
    # kernel="precomputed" + n_components keeps a PrecomputedColumns reader in the Nystroem map;
    # it was not a trusted type, so such a model could not be saved (found by the issue-23
    # estimator template work).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    K = np.tanh(0.5 * X @ X.T - 0.2)
    model = indefsvm.IndefiniteSVC(n_components=20, random_state=0).fit(K, y)
    path = save_model(model, tmp_path / "model.skops")
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.decision_function(K[:7]), model.decision_function(K[:7]))


@pytest.mark.parametrize("cut", [0, 1, 40, 300, -20])
def test_empty_or_truncated_model_files_say_so(tmp_path, cut):
    """Before: 'looks like a file of another format ... pickle' for a cut-short .skops file."""
    X, y, _, _ = _data()
    path = save_model(indefsvm.IndefiniteSVC(kernel="rbf").fit(X, y), tmp_path / "m.skops")
    data = path.read_bytes()
    cut_path = tmp_path / "cut.skops"
    cut_path.write_bytes(data[:cut] if cut >= 0 else data[:cut])
    with pytest.raises(ValueError, match="corrupt or truncated") as refusal:
        load_model(cut_path)
    assert "pickle" not in str(refusal.value)


def test_a_scikit_learn_model_in_the_model_format_is_refused(tmp_path):
    """The README says load_model builds only indefsvm's estimators: a scikit-learn SVC saved
    in the same format loaded and predicted before."""
    from sklearn.svm import SVC

    from indefsvm.persistence import MODEL_FORMAT

    X, y, _, _ = _data()
    path = tmp_path / "svc.skops"
    path.write_bytes(skops.io.dumps({"format": MODEL_FORMAT, "estimator": SVC().fit(X, y)}))
    with pytest.raises(ValueError, match="not an indefsvm estimator"):
        load_model(path)


def test_predict_does_not_import_every_scikit_learn_estimator(tmp_path):
    """skops computes its default types by importing all of scikit-learn's estimators (most of
    an 'indefsvm predict'); the load trusts its own list and imports only what it needs."""
    import subprocess
    import sys

    X, y, _, _ = _data()
    path = save_model(indefsvm.krein.KreinSVC(kernel="rbf").fit(X, y), tmp_path / "m.skops")
    np.save(tmp_path / "X.npy", X)
    code = (
        "import sys\n"
        "from indefsvm.persistence import load_model\n"
        f"model = load_model({str(path)!r})\n"
        "import numpy as np\n"
        f"model.predict(np.load({str(tmp_path / 'X.npy')!r}))\n"
        "print('sklearn.gaussian_process' in sys.modules,\n"
        "      'sklearn.neural_network' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr
