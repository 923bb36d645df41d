"""The Ray runtime: thin actor shells around ``cluster/`` (the apiserver actor, the one generic
component shell), placement and faults."""
