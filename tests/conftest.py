"""Shared fixtures: one local Ray for every test that needs it (started on first use)."""

import pytest


@pytest.fixture(scope="session")
def ray_local():
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", configure_logging=True)
    yield ray
    ray.shutdown()
