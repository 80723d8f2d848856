"""Which scheduler the dask paths use (issue 25): the active Client, unless dask's
configuration names a local scheduler or a Client of its own."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from indefsvm.utils.dask_rows import active_client, persist_rows  # noqa: E402


def test_active_client_follows_dask_configuration():
    assert active_client() is None  # no client at all
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        assert active_client() is client
        with dask.config.set(scheduler="threads"):
            assert active_client() is None
            # persisted by the local scheduler: the chunks are numpy arrays in this process
            A = persist_rows(da.ones((10, 2), chunks=(4, 2)))
            assert all(isinstance(v, np.ndarray) for v in A.dask.values())
        with dask.config.set(scheduler=client):
            assert active_client() is client
