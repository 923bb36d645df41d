"""The pod signature: the one key of every memo in ``accel/``.

Owns ``sign_pod``, which builds a pod's signature from the fragments its profile's
plugins give (``Plugin.sign``, upstream's SignPod): every plugin enabled at PreFilter,
Filter, PreScore or Score is asked, after the pod's PreFilter, for what it reads of the
pod; one that cannot sign (None) makes the pod unsignable, and no memo serves it. Two
pods with one signature get, on every node, the same verdicts and scores from every
plugin while that node's row is as it was, and placing one of them leaves the others'
PreFilter and PreScore outcome as it was (the promise each fragment makes; see
``Plugin.sign``).

The signature is bytes: the profile, the plugins PreFilter skipped and the fragments,
encoded together (equal bytes, equal fragments; a fragment whose dicts list their keys in
another order reads as another kind, which costs a memo miss and never a wrong answer).
Called by ``Scheduler`` once per full cycle; read by ``rowmemo``, ``kindrun``, ``veto``
and ``preemption_fast`` for their keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from ...api.codec import encode

if TYPE_CHECKING:
    from ..framework import CycleState, Framework, Plugin
    from ..podinfo import PodInfo

_SIGNERS: WeakKeyDictionary[Framework, tuple[Plugin, ...]] = WeakKeyDictionary()


def signers(fwk: Framework) -> tuple[Plugin, ...]:
    """The plugins asked for a fragment: those enabled at PreFilter, Filter, PreScore or
    Score, each once, in the profile's order."""
    found = _SIGNERS.get(fwk)
    if found is None:
        points = (
            *fwk.pre_filter_plugins,
            *fwk.filter_plugins,
            *fwk.pre_score_plugins,
            *(p for p, _, _ in fwk.score_plugins),
        )
        ids = {id(p) for p in points}
        found = _SIGNERS[fwk] = tuple(p for p in fwk.plugins.values() if id(p) in ids)
    return found


def sign_pod(fwk: Framework, state: CycleState, pod: PodInfo) -> bytes | None:
    """``pod``'s signature after its PreFilter filled ``state``; None when a plugin cannot sign it."""
    fragments = []
    for p in signers(fwk):
        fragment = p.sign(pod, state)
        if fragment is None:
            return None
        fragments.append(fragment)
    return encode((fwk.profile_name, sorted(state.skip_filter), fragments))
