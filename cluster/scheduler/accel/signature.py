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
Called by ``Scheduler`` and ``FastFilters`` in a full cycle (signed once: the cycle's
state keeps it); read by ``rowmemo``, ``kindrun``, ``veto`` and ``preemption_fast`` for
their keys.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ...api.codec import encode

if TYPE_CHECKING:
    from ..framework import CycleState, Framework, Plugin
    from ..podinfo import PodInfo

# Per framework: the plugins asked for a fragment, and the signatures of the pod templates
# met lately (``PodInfo.template``) by the plugins PreFilter skipped.
_SIGNERS: WeakKeyDictionary[Framework, tuple[tuple[Plugin, ...], dict[tuple[Any, ...], tuple[Any, bytes | None]]]]
_SIGNERS = WeakKeyDictionary()
_TEMPLATES = 64  # template signatures kept per framework; cleared whole beyond it
# The CycleState key of the signature signed in that cycle: (framework, pod, signature).
_SIGNED = object()


def signers(fwk: Framework) -> tuple[Plugin, ...]:
    """The plugins asked for a fragment: those enabled at PreFilter, Filter, PreScore or
    Score, each once, in the profile's order."""
    return _signing(fwk)[0]


def _signing(fwk: Framework) -> tuple[tuple[Plugin, ...], dict[tuple[Any, ...], tuple[Any, bytes | None]]]:
    found = _SIGNERS.get(fwk)
    if found is None:
        points = (
            *fwk.pre_filter_plugins,
            *fwk.filter_plugins,
            *fwk.pre_score_plugins,
            *(p for p, _, _ in fwk.score_plugins),
        )
        ids = {id(p) for p in points}
        found = _SIGNERS[fwk] = (tuple(p for p in fwk.plugins.values() if id(p) in ids), {})
    return found


def sign_pod(fwk: Framework, state: CycleState, pod: PodInfo) -> bytes | None:
    """``pod``'s signature after its PreFilter filled ``state``; None when a plugin cannot sign it.

    A cycle asks more than once (the veto memo's key, the row memo's, preemption's); the
    answer is kept in ``state`` for that pod and framework, since nothing a fragment reads
    changes after PreFilter. A state cloned for another pod (a kind run's) signs afresh.
    Pods that came from one template (the same encoded namespace, spec, labels and owners,
    none nominated: ``PodInfo.template``) whose PreFilter skipped the same plugins share
    their signature, as a kind run already takes them to (``KindRun.serves``): the
    fragments read no more of a pod than that."""
    kept = state.read(_SIGNED)
    if kept is not None and kept[1] is pod and kept[0] is fwk:
        signed: bytes | None = kept[2]
        return signed
    plugins, by_template = _signing(fwk)
    skipped = sorted(state.skip_filter)
    template = pod.template
    key = None if template is None else (id(template), *skipped)
    hit = None if key is None else by_template.get(key)
    if hit is not None and hit[0] is template:
        signed = hit[1]
    else:
        signed = _sign(fwk, plugins, state, pod, skipped)
        if key is not None:
            if len(by_template) >= _TEMPLATES:
                by_template.clear()
            by_template[key] = (template, signed)
    state.write(_SIGNED, (fwk, pod, signed))
    return signed


def _sign(
    fwk: Framework, plugins: tuple[Plugin, ...], state: CycleState, pod: PodInfo, skipped: list[str]
) -> bytes | None:
    fragments = []
    for p in plugins:
        fragment = p.sign(pod, state)
        if fragment is None:
            return None
        fragments.append(fragment)
    return encode((fwk.profile_name, skipped, fragments))
