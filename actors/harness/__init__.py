"""What drives a cluster from outside: the ``kubemu`` command line, running a scenario on Ray,
``kubemu serve`` and the benchmarks."""
