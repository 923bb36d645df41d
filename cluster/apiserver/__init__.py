"""The apiserver: the versioned store, the watch window, admission and defaulting, graceful
deletion and the durable log; both runtimes call ``apiserver.APIServer``."""
