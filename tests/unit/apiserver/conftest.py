import pytest

from cluster.apiserver.apiserver import APIServer


@pytest.fixture
def api():
    return APIServer(seed=7)
