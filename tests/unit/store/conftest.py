import pytest

from cluster.store.apiserver import APIServer


@pytest.fixture
def api():
    return APIServer(seed=7)
