"""YuniKorn mode: a second scheduler that places pods through hierarchical queues with
guaranteed and max resources, and preempts as Apache YuniKorn does
(``../docs/yunikorn.md``). Pure logic, like every component under ``cluster/``."""
