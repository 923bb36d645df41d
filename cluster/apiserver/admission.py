"""Admission: what the apiserver does to an object before it is stored.

Owns defaulting (uid, timestamps, pod defaults, requests from limits, a namespace's
``kubernetes`` finalizer and Active phase), NamespaceLifecycle on create (the namespace
must exist and not be Terminating), Priority admission and
DefaultTolerationSeconds, with RuntimeClass and DefaultIngressClass in ``classadmission.py``.
The apiserver logic calls ``admit_create`` for every create and
``admit_update`` for every update; validation (``cluster/api/validation.py``) runs first,
so admission only sees well-formed objects. Failures raise ``StatusError`` subclasses with upstream messages.
"""

from __future__ import annotations

import random

from ..api.errors import Cause, Forbidden, NotFound
from ..api.kinds import BY_KIND
from ..api.objects import namespaced
from ..api.patches import NAMESPACE_FINALIZER
from ..api.qos import pod_qos_class
from ..clock import rfc3339
from .classadmission import admit_default_ingress_class, admit_runtime_class
from .defaults import default_pod, scheduling_gated
from .quotaadmission import limit_defaults
from .storageclassadmission import admit_default_storage_class, admit_storage_class

DEFAULT_TOLERATION_SECONDS = 300
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_ALPHABET_SIZE = len(_NAME_ALPHABET)
_ALPHABET_BITS = _ALPHABET_SIZE.bit_length()
# RFC 4122 variant (bits 62-63 of the low half: 10) and version 4 (bits 76-79), as
# ``uuid.UUID(version=4)`` sets them.
_UUID_KEEP = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID_SET = (0x8000 << 48) | (4 << 76)
_HEX_PAD = 1 << 128  # a 33rd digit, so ``hex`` keeps the leading zeros of the 32
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class Admission:
    """Admission state: the uid generator and read access to PriorityClasses."""

    def __init__(self, store, seed: int = 0):
        self._store = store
        self._rng = random.Random(seed)
        self._default_class: tuple[int, dict | None] = (-1, None)  # (PriorityClass revision, class)

    def use_store(self, store) -> None:
        """Read from ``store`` from now on (the apiserver's dry run swaps its store in and out)."""
        self._store = store

    def draws(self) -> object:
        """The generator's state, for ``restore_draws``: a dry run leaves the uid and name
        sequence where it was, so a served cluster's later objects are what they would be."""
        return self._rng.getstate()

    def restore_draws(self, state: object) -> None:
        self._rng.setstate(state)  # type: ignore[arg-type]

    def new_uid(self) -> str:
        """A version-4 UUID from the seeded generator: the string ``uuid.UUID(int=...,
        version=4)`` gives for the same draw, built without the UUID object (every create
        pays for one)."""
        h = hex((self._rng.getrandbits(128) & _UUID_KEEP) | _UUID_SET | _HEX_PAD)  # "0x1" + 32 digits
        return f"{h[3:11]}-{h[11:15]}-{h[15:19]}-{h[19:23]}-{h[23:]}"

    def name_suffix(self) -> str:
        """Five characters for a ``generateName``, from upstream's alphabet (no vowels, so
        no words; no 0, 1 or 3, which read like letters). Each is drawn as ``Random.choice``
        draws (rejection sampling over 5-bit draws), so a seed names objects as it always did,
        without a call per character."""
        bits, out = self._rng.getrandbits, ""
        while len(out) < 5:
            r = bits(_ALPHABET_BITS)
            if r < _ALPHABET_SIZE:
                out += _NAME_ALPHABET[r]
        return out

    def admit_create(self, kind: str, obj: dict, now: float) -> None:
        m = obj.setdefault("metadata", {})
        if namespaced(kind):
            ns = m.setdefault("namespace", "default")
            home = self._store.peek("Namespace", "", ns)
            if home is None:
                raise NotFound.of("namespaces", "", ns)
            if (home.get("status") or {}).get("phase") == "Terminating":
                raise _terminating(kind, m, ns)
        else:
            m.pop("namespace", None)
        m["uid"] = self.new_uid()
        m["creationTimestamp"] = rfc3339(now)
        for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
            if field in m:  # (a test is cheaper than a call, and they are seldom there)
                del m[field]
        if kind == "Pod":
            self._admit_pod(obj)
        elif kind == "PriorityClass":
            self._admit_priority_class(obj)
        elif kind == "Namespace":
            _admit_namespace(obj)
        elif kind == "Ingress":
            admit_default_ingress_class(self._store, obj)
        elif kind == "PersistentVolumeClaim":  # DefaultStorageClass (storageclassadmission.py)
            admit_default_storage_class(self._store, obj)
        elif kind == "StorageClass":
            admit_storage_class(obj)

    def admit_update(self, kind: str, obj: dict, old: dict) -> None:
        """What an update gets before update validation compares it with ``old``: the
        defaults upstream applies on decode, the priority the Priority plugin set at create
        (kept when the update leaves it out), and DefaultTolerationSeconds again, so a
        manifest applied again compares equal to the stored object."""
        if kind == "Pod":
            spec = obj.setdefault("spec", {})
            default_pod(obj)
            default_pod(old)  # read with today's defaults, as upstream decodes what it stored
            was = old.get("spec") or {}
            for field in ("priority", "preemptionPolicy"):
                if spec.get(field) is None and was.get(field) is not None:
                    spec[field] = was[field]
            _default_toleration_seconds(spec)
        elif kind == "PriorityClass":
            _default_priority_class(obj)

    # -- pods ---------------------------------------------------------------------------
    def _admit_pod(self, pod: dict) -> None:
        spec = pod["spec"]
        default_pod(pod)
        limit_defaults(self._store, pod)  # LimitRanger's defaults (quotaadmission.py)
        self._admit_priority(pod)
        _default_toleration_seconds(spec)
        admit_runtime_class(self._store, pod)  # after DefaultTolerationSeconds, as upstream's order
        pod["status"] = {"phase": "Pending", "qosClass": pod_qos_class(pod)}
        scheduling_gated(pod)

    def _admit_priority(self, pod: dict) -> None:
        spec = pod["spec"]
        class_name = spec.get("priorityClassName") or ""
        if not class_name:
            default = self.default_priority_class()
            name = default["metadata"]["name"] if default else ""
            value = default["value"] if default else 0
            policy = (default or {}).get("preemptionPolicy", "PreemptLowerPriority")
            if name:
                spec["priorityClassName"] = name
        else:
            pc = self._store.peek("PriorityClass", "", class_name)
            if pc is None:
                raise Forbidden(f"no PriorityClass with name {class_name} was found")
            name, value = class_name, pc["value"]
            policy = pc.get("preemptionPolicy", "PreemptLowerPriority")
        given = spec.get("priority")
        if given is not None and given != value:
            raise Forbidden(
                f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {value} from the given PriorityClass name"
            )
        spec["priority"] = value
        given_policy = spec.get("preemptionPolicy")
        if given_policy is not None and given_policy != policy:
            raise Forbidden(
                f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod "
                f"spec; priority admission controller computed {policy} from the given PriorityClass name"
            )
        spec["preemptionPolicy"] = policy

    def default_priority_class(self) -> dict | None:
        """The globalDefault class with the lowest value (upstream's rule for races)."""
        # Every pod create without a class asks; the classes change rarely.
        revision = self._store.kind_revision("PriorityClass")
        if self._default_class[0] != revision:
            defaults = [pc for pc in self._store.peek_all("PriorityClass") if pc.get("globalDefault")]
            self._default_class = (revision, min(defaults, key=lambda pc: pc["value"]) if defaults else None)
        return self._default_class[1]

    # -- priority classes ---------------------------------------------------------------
    def _admit_priority_class(self, pc: dict) -> None:
        _default_priority_class(pc)
        if pc.get("globalDefault"):
            existing = self.default_priority_class()
            if existing is not None and existing["metadata"]["name"] != pc["metadata"]["name"]:
                raise Forbidden(
                    f"PriorityClass {existing['metadata']['name']} is already marked as default. "
                    "Only one default can exist"
                )


def _terminating(kind: str, meta: dict, ns: str) -> Forbidden:
    """NamespaceLifecycle's refusal, named as upstream's admission.NewForbidden names it
    (``generateName`` when the name is not drawn yet; ``replicasets.apps`` style resources)."""
    r = BY_KIND[kind]
    resource = f"{r.plural}.{r.group}" if r.group else r.plural
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return Forbidden(
        f'{resource} "{name}" is forbidden: unable to create new content in namespace {ns} '
        "because it is being terminated",
        (Cause("NamespaceTerminating", f"namespace {ns} is being terminated", "metadata.namespace"),),
    )


def _admit_namespace(ns: dict) -> None:
    """Upstream's namespace PrepareForCreate: phase Active, and the ``kubernetes`` finalizer
    that keeps a deleted namespace until the namespace controller has emptied it."""
    spec = ns.get("spec")
    if not isinstance(spec, dict):
        spec = ns["spec"] = {}
    finalizers = list(spec.get("finalizers") or ())
    if NAMESPACE_FINALIZER not in finalizers:
        spec["finalizers"] = [*finalizers, NAMESPACE_FINALIZER]
    ns["status"] = {"phase": "Active"}


def _default_priority_class(pc: dict) -> None:
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _default_toleration_seconds(spec: dict) -> None:
    """DefaultTolerationSeconds: tolerate not-ready/unreachable NoExecute for 300 s."""
    tolerations = spec.get("tolerations")
    if tolerations is None:  # absent or null: unset, as upstream decodes it
        tolerations = spec["tolerations"] = []
    for key in (NOT_READY_TAINT, UNREACHABLE_TAINT):
        for t in tolerations:  # a plain loop: every pod create comes here, most with none
            if _tolerates_no_execute(t, key):
                break
        else:
            tolerations.append(
                {
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                }
            )


def _tolerates_no_execute(t: dict, key: str) -> bool:
    if t.get("effect") not in (None, "", "NoExecute"):
        return False
    if t.get("key") in (None, ""):
        return t.get("operator") == "Exists"
    return t.get("key") == key
