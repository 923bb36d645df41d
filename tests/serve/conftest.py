"""One ``kubemu serve`` process per test module (``servedcluster.py``)."""

import pytest
from servedcluster import Served


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    s = Served(tmp_path_factory.mktemp("serve"))
    yield s
    s.stop()
