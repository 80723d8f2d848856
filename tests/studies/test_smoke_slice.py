"""``study run --smoke``, ``--datasets`` and ``--methods`` (issue 26, item 1)."""

from __future__ import annotations

import pytest

from indefsvm.cli.study import main
from indefsvm.studies.harness import candidates, plan_inner, plan_outer_keys
from indefsvm.studies.spec import SpecError, parse_spec, restrict_study, smoke_study, tomllib
from indefsvm.studies.store import Store

RAW = {
    "study": {"seed": 3, "outer_folds": 5, "inner_folds": 4, "search": "random", "n_iter": 5},
    "datasets": [
        {"name": "iono", "loader": "ionosphere", "max_samples": 30},
        {"name": "hab", "loader": "haberman"},
    ],
    "kernels": [
        {
            "name": "sigmoid",
            "params": {"coef0": -1.0},
            "grid": {"gamma": [0.5, 1.0, 2.0]},
            "scale": {"gamma": "inverse_n_features"},
        }
    ],
    "methods": [
        {"estimator": "KreinClassifier", "grid": {"lambda_plus": [0.1, 0.01, 1.0],
                                                   "lambda_minus": [0.5, 0.05]}},
        {"estimator": "SpectrumSVC", "params": {"spectrum": "clip"}, "grid": {"C": [1.0, 10.0]}},
    ],
}  # fmt: skip


def test_smoke_study_is_the_documented_slice():
    study = parse_spec(RAW)
    smoke = smoke_study(study)
    assert smoke.name == f"{study.name} (smoke)"
    assert (smoke.outer_folds, smoke.inner_folds, smoke.n_iter) == (2, 2, 2)
    # 40 objects, a smaller max_samples of the spec kept
    assert [d.max_samples for d in smoke.datasets] == [30, 40]
    assert smoke.kernels[0].grid == {"gamma": [0.5]}
    # first sorted key keeps two values (so the inner selection runs), the others one
    assert smoke.methods[0].grid == {"lambda_minus": [0.5, 0.05], "lambda_plus": [0.1]}
    assert smoke.methods[1].grid == {"C": [1.0, 10.0]}
    assert smoke.methods[1].params == {"spectrum": "clip"}
    for m in smoke.methods:
        assert len(candidates(smoke, "hab", smoke.kernels[0], m)) == 2
    # every data set x kernel x method is still planned
    assert len(plan_outer_keys(smoke)) == 2 * 1 * 2 * 2
    assert len(plan_inner(smoke)) == 2 * 2 * 2 * 2
    assert smoke.hash != study.hash


def test_smoke_study_refuses_a_tiny_sample():
    with pytest.raises(SpecError, match="n_samples must be an integer >= 8"):
        smoke_study(parse_spec(RAW), n_samples=3)


def test_restrict_study_keeps_the_named_parts_unchanged():
    study = parse_spec(RAW)
    sub = restrict_study(study, datasets=["hab"], methods=["SpectrumSVC"])
    assert [d.name for d in sub.datasets] == ["hab"]
    assert [m.label for m in sub.methods] == ["SpectrumSVC"]
    assert sub.methods[0] == study.methods[1] and sub.datasets[0] == study.datasets[1]
    assert (sub.outer_folds, sub.inner_folds, sub.kernels) == (5, 4, study.kernels)
    # the kept records are those the whole study plans
    assert set(plan_outer_keys(sub)) < set(plan_outer_keys(study))
    assert restrict_study(study) == study


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"datasets": ["nope"]}, r"--datasets: \['nope'\] not in the spec; its datasets are"),
        ({"methods": ["KREIN"]}, r"--methods: \['KREIN'\] not in the spec; its methods are"),
        ({"methods": []}, r"--methods: \[\] not in the spec"),
    ],
)
def test_restrict_study_names_an_unknown_part(kwargs, message):
    with pytest.raises(SpecError, match=message):
        restrict_study(parse_spec(RAW), **kwargs)


def test_cli_smoke_and_restriction(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(
        "[study]\nouter_folds = 5\n[[datasets]]\nname = 'hab'\nloader = 'haberman'\n"
        "[[datasets]]\nname = 'iono'\nloader = 'ionosphere'\n"
        "[[kernels]]\nname = 'linear'\n"
        "[[methods]]\nestimator = 'SpectrumSVC'\ngrid = { C = [0.1, 1.0, 10.0] }\n"
        "[[methods]]\nestimator = 'KreinSVC'\ngrid = { C = [1.0, 10.0] }\n"
    )
    out = tmp_path / "out"
    args = ["study", "run", str(spec), "--out", str(out), "--quiet", "--no-report"]
    assert main([*args, "--smoke", "--datasets", "hab", "--methods", "KreinSVC"]) == 0
    store = Store(out)
    try:
        study = store.study()
    finally:
        store.close()
    assert study.name == "s (smoke)" and study.outer_folds == 2
    assert [d.name for d in study.datasets] == ["hab"]
    assert [m.label for m in study.methods] == ["KreinSVC"]
    assert main([*args, "--methods", "Krein"]) == 2
    assert "--methods: ['Krein'] not in the spec" in capsys.readouterr().err


def test_cli_seed_replaces_the_spec_seed(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(
        "[study]\nseed = 3\nouter_folds = 3\n[[datasets]]\nname = 'hab'\nloader = 'haberman'\n"
        "[[kernels]]\nname = 'linear'\n"
        "[[methods]]\nestimator = 'SpectrumSVC'\ngrid = { C = [0.1, 1.0] }\n"
    )
    args = ["study", "run", str(spec), "--quiet", "--no-report", "--smoke"]
    seeds = {}
    for seed in ("3", "11"):
        out = tmp_path / f"out{seed}"
        assert main([*args, "--seed", seed, "--out", str(out)]) == 0
        store = Store(out)
        try:
            seeds[seed] = store.study()
        finally:
            store.close()
    assert seeds["3"].seed == 3 and seeds["11"].seed == 11
    assert seeds["3"] == smoke_study(parse_spec(tomllib.loads(spec.read_text()), base=tmp_path,
                                                default_name="s"))  # fmt: skip
    with pytest.raises(SystemExit) as exc:
        main([*args, "--seed", "-1", "--out", str(tmp_path / "bad")])
    assert exc.value.code == 2
    assert "expected an integer in [0, 2**32); got -1" in capsys.readouterr().err
