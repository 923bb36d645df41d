"""The base of the scenario file's models: an unknown field is an error.

Owns ``Strict``. A misspelt key in a scenario (``tolerationSecond:``) must stop the load
with the field named, not be dropped and leave the scenario testing something else.
``schema.py``, ``schema_expect.py`` and ``schema_workloads.py`` build their models on it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
