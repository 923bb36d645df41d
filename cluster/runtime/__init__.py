"""The component runtime: the one protocol every component implements (``component.py``),
the interface every runtime offers (``cluster.py``) and the local runtime (``local.py``).
See docs/architecture.md."""
