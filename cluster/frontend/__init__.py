"""The Kubernetes API over HTTP: what kubectl, the client libraries and external
schedulers talk to. Pure request logic here (paths, queries, patches, tables, discovery);
the server that carries it is ``server.py``. See docs/architecture.md."""
