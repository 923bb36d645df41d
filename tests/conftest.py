"""Shared fixtures: one local Ray for every test that needs it (started on first use)."""

import pytest


@pytest.fixture(scope="session")
def ray_local():
    import ray

    from actors.raycluster import SYSTEM_CONFIG

    if not ray.is_initialized():
        # The transport kubemu's own Ray uses (``actors/raycluster.py``).
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            logging_level="ERROR",
            configure_logging=True,
            _system_config=dict(SYSTEM_CONFIG),  # Ray adds its spilling settings to the dict
        )
    yield ray
    ray.shutdown()
