"""ImageLocality: prefer nodes that already hold the pod's container images.

Owns the image score: per node, the sizes of the pod's images present there, each scaled
by the fraction of all nodes holding that image (so an image everywhere does not pull pods
onto one node), clamped to [23 MiB, 1000 MiB x containers] and mapped onto 0..100, with
upstream's integer and float arithmetic. Init containers count, both in the sum and in
the number of containers. Built by the registry; reads ``NodeInfo.images`` and
``Snapshot.image_num_nodes``, kept by the cache.

Upstream's plugin is Score only. PreScore is added here so that a pod whose images no
node holds (every score would be 0) skips Score for about a microsecond.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..cache import PodInfo, Snapshot
from ..framework import MAX_NODE_SCORE, CycleState, PreScorePlugin, ScorePlugin
from ..status import SKIP, SUCCESS, Status

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB
_STATE_KEY = "PreScoreImageLocality"
_NAME_CACHE_LIMIT = 4096


class ImageLocality(PreScorePlugin, ScorePlugin):
    NAME = "ImageLocality"
    EVENTS: frozenset[str] = frozenset()  # a score plugin rejects no pod

    def __init__(self, args: dict[str, Any] | None = None, handle: Any = None) -> None:
        if args:
            raise ValueError(f"{self.NAME} takes no arguments, got {sorted(args)}")
        self._normalized: dict[str, str] = {}

    def normalized_name(self, image: str) -> str:
        """The name as a node reports it: no tag after the last path segment means ":latest"
        (a digest reference keeps its ``@sha256:...``)."""
        out = self._normalized.get(image)
        if out is None:
            out = image + ":latest" if image.rfind(":") <= image.rfind("/") else image
            if len(self._normalized) < _NAME_CACHE_LIMIT:
                self._normalized[image] = out
        return out

    def sign(self, pod: PodInfo, state: CycleState) -> tuple[Any, ...]:
        # The score reads the images and the nodes' images, which change only with the
        # node epoch (a memo's entries go with it).
        spec = pod.pod.get("spec") or {}
        images = [c.get("image") or "" for c in spec.get("containers") or ()]
        init = spec.get("initContainers")
        if init:  # init containers first, as pre_score sums them
            images[:0] = [c.get("image") or "" for c in init]
        return tuple(images)

    def pre_score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> Status:
        spec = pod.pod.get("spec") or {}
        present = []  # (image name, nodes holding it); one entry per container, as upstream sums
        containers = 0
        for group in ("initContainers", "containers"):
            for c in spec.get(group) or ():
                containers += 1
                name = self.normalized_name(c.get("image") or "")
                count = snap.image_num_nodes(name)
                if count:
                    present.append((name, count))
        if not present:
            return SKIP
        state.write(_STATE_KEY, (present, containers))
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, snap: Snapshot, candidates: np.ndarray) -> np.ndarray:
        data = state.read(_STATE_KEY)
        if data is None:  # Score without PreScore (a direct call): compute it now
            if self.pre_score(state, pod, snap, candidates).is_skip():
                return np.zeros(len(candidates), dtype=np.int64)
            data = state.read(_STATE_KEY)
        present, containers = data
        infos = snap.node_infos
        # Images live in per-node dicts; only candidates are read, and only for pods whose
        # images some node holds (PreScore skipped the rest).
        images = [infos[i].images for i in candidates.tolist()]
        total = np.zeros(len(candidates), dtype=np.int64)
        for name, count in present:
            sizes = np.fromiter((d.get(name, 0) for d in images), dtype=np.int64, count=len(images))
            spread = count / snap.num_nodes
            # int64(float64(size) * spread), truncating as Go's conversion does.
            total += (sizes.astype(np.float64) * spread).astype(np.int64)
        hi = MAX_CONTAINER_THRESHOLD * containers
        np.clip(total, MIN_THRESHOLD, hi, out=total)
        scores: np.ndarray = MAX_NODE_SCORE * (total - MIN_THRESHOLD) // (hi - MIN_THRESHOLD)
        return scores
