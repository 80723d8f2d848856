"""One reader for arrays and labels: the CLI, ``load_matrix`` and the studies agree.

Every file is read through the three entry points that read user files (``indefsvm.cli``'s
``load_array``, :func:`indefsvm.datasets.load_matrix`, :func:`indefsvm.studies.data.load_dataset`)
and compared with a hand-written expected array, values and dtype kind.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from indefsvm.cli import InputError, load_array
from indefsvm.datasets import load_matrix
from indefsvm.studies.data import load_dataset
from indefsvm.studies.spec import DatasetSpec, SpecError
from indefsvm.utils.io import MissingFileError, ReadError, parse_labels, read_labels

K = np.array(
    [
        [2.0, 0.5, -0.25, 0.0],
        [0.5, 1.5, 0.125, 1.0],
        [-0.25, 0.125, 3.0, -1.0],
        [0.0, 1.0, -1.0, 1.0],
    ]
)
SEPARATORS = {".csv": ",", ".tsv": "\t", ".txt": " ", ".dat": "  "}


def _write_kernel(path):
    if path.suffix == ".npy":
        np.save(path, K)
    else:
        sep = SEPARATORS[path.suffix]
        path.write_text("\n".join(sep.join(repr(float(v)) for v in row) for row in K) + "\n")
    return path


def _three_readers(kernel, labels):
    """(kernel, labels) as the CLI, load_matrix and a study read them."""
    cli = (load_array(str(kernel), what="kernel"), load_array(str(labels), what="labels",
                                                               labels=True))  # fmt: skip
    bunch = load_matrix(kernel, labels)
    data = load_dataset(DatasetSpec(name="d", kernel=str(kernel), labels=str(labels)))
    return {"cli": cli, "datasets": (bunch.matrix, bunch.target), "studies": (data.K, data.y)}


# Label files (text) and the labels every reader must return, written by hand.
LABEL_CASES = [
    ("1\n-1\n1\n-1\n", np.array([1, -1, 1, -1])),
    ("+1\n-1\n+1\n-1\n", np.array([1, -1, 1, -1])),
    ("01\n02\n01\n02\n", np.array([1, 2, 1, 2])),
    ("1.0\n2\n1\n2.0\n", np.array([1.0, 2.0, 1.0, 2.0])),
    ("0.5\n1e3\n0.5\n1e3\n", np.array([0.5, 1000.0, 0.5, 1000.0])),
    ("cat\ndog\ncat\ndog\n", np.array(["cat", "dog", "cat", "dog"])),
    ("c1\n01\nc1\n01\n", np.array(["c1", "01", "c1", "01"])),
]


@pytest.mark.parametrize("ksuffix", [".npy", ".csv", ".tsv", ".txt", ".dat"])
@pytest.mark.parametrize(("text", "expected"), LABEL_CASES)
@pytest.mark.parametrize("ysuffix", [".csv", ".txt", ".tsv"])
def test_cli_datasets_and_studies_read_the_same_files_alike(tmp_path, ksuffix, ysuffix, text,
                                                            expected):  # fmt: skip
    kernel = _write_kernel(tmp_path / f"K{ksuffix}")
    labels = tmp_path / f"y{ysuffix}"
    labels.write_text(text)
    for name, (M, y) in _three_readers(kernel, labels).items():
        np.testing.assert_array_equal(M, K, err_msg=name)
        np.testing.assert_array_equal(y, expected, err_msg=name)
        assert y.dtype.kind == expected.dtype.kind, (name, y.dtype)
        assert y.shape == (4,), name


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (np.array([1, -1, 1, -1]), np.array([1, -1, 1, -1])),
        (np.array([0.5, 1.0, 0.5, 1.0]), np.array([0.5, 1.0, 0.5, 1.0])),
        (np.array(["01", "2", "1", "02"]), np.array([1, 2, 1, 2])),
        (np.array(["a", "b", "a", "b"]), np.array(["a", "b", "a", "b"])),
    ],
)
def test_npy_labels_are_read_alike(tmp_path, stored, expected):
    kernel = _write_kernel(tmp_path / "K.npy")
    np.save(tmp_path / "y.npy", stored)
    for name, (_, y) in _three_readers(kernel, tmp_path / "y.npy").items():
        np.testing.assert_array_equal(y, expected, err_msg=name)
        assert y.dtype.kind == expected.dtype.kind, (name, y.dtype)


def test_labels_on_one_line_are_a_vector(tmp_path):
    kernel = _write_kernel(tmp_path / "K.txt")
    (tmp_path / "y.txt").write_text("1 -1 1 -1\n")
    for name, (_, y) in _three_readers(kernel, tmp_path / "y.txt").items():
        np.testing.assert_array_equal(y, [1, -1, 1, -1], err_msg=name)


def _all_refuse(kernel, labels, match):
    with pytest.raises(InputError, match=match):
        load_array(str(labels), what="labels", labels=True)
    with pytest.raises(ReadError, match=match):
        load_matrix(kernel, labels)
    with pytest.raises(SpecError, match=match):
        load_dataset(DatasetSpec(name="d", kernel=str(kernel), labels=str(labels)))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("1\nnan\n1\n-1\n", r"missing or NaN \(the first, 'nan', on line 2\)"),
        ("a\nNA\nb\na\n", r"missing or NaN \(the first, 'NA', on line 2\)"),
        ("a,b\nnull\na\nb\n", "missing"),
        ("1\n-1\ninf\n1\n", r"NaN or infinite \(the first on line 3\)"),
    ],
)
def test_a_missing_or_infinite_label_is_refused_everywhere(tmp_path, text, match):
    kernel = _write_kernel(tmp_path / "K.npy")
    labels = tmp_path / "y.txt"
    labels.write_text(text.replace("a,b", "a"))
    _all_refuse(kernel, labels, match)


def test_nan_in_npy_labels_is_refused_everywhere(tmp_path):
    kernel = _write_kernel(tmp_path / "K.npy")
    np.save(tmp_path / "y.npy", np.array([1.0, np.nan, 1.0, 0.0]))
    _all_refuse(kernel, tmp_path / "y.npy", "NaN or infinite")


class _Payload:
    """Unpickling it would create a file: the proof that loading ran code."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_reading_never_runs_code(tmp_path):
    witness = tmp_path / "ran"
    kernel = _write_kernel(tmp_path / "K.npy")
    (tmp_path / "y.npy").write_bytes(pickle.dumps(_Payload(str(witness))))
    np.save(tmp_path / "obj.npy", np.array([_Payload(str(witness))] * 4, dtype=object),
            allow_pickle=True)  # fmt: skip
    for bad in ("y.npy", "obj.npy"):
        _all_refuse(kernel, tmp_path / bad, "could not read")
        with pytest.raises(InputError, match="could not read"):
            load_array(str(tmp_path / bad), what="kernel")
    assert not witness.exists()


def test_bad_paths_name_the_file_and_the_expectation(tmp_path):
    with pytest.raises(MissingFileError, match="does not exist") as exc:
        read_labels(tmp_path / "none.txt")
    assert isinstance(exc.value, FileNotFoundError) and isinstance(exc.value, ValueError)
    with pytest.raises(ReadError, match="is a directory"):
        read_labels(tmp_path)
    (tmp_path / "y.json").write_text("[1, 2]")
    with pytest.raises(ReadError, match=r"expected \.npy, \.csv, \.tsv or \.txt"):
        read_labels(tmp_path / "y.json")
    (tmp_path / "y2.txt").write_text("1 2\n3 4\n")
    with pytest.raises(ReadError, match=r"expected a vector .* got shape \(2, 2\)"):
        read_labels(tmp_path / "y2.txt")
    (tmp_path / "K.csv").write_text("1;2\n3;4\n")
    with pytest.raises(InputError, match=r"numeric table separated by ','"):
        load_array(str(tmp_path / "K.csv"), what="kernel")


def test_parse_labels_rule():
    np.testing.assert_array_equal(parse_labels(["3", "-4", "+5"]), [3, -4, 5])
    assert parse_labels(["3", "-4"]).dtype == np.int64
    # Beyond int64 the labels are numbers, not an overflow.
    assert parse_labels(["99999999999999999999", "1"]).dtype == np.float64
    assert parse_labels([" x ", "y"]).tolist() == ["x", "y"]
