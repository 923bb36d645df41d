"""The device manager's checkpoint file, ``kubelet_internal_checkpoint``.

Owns the file's format: encoding the device assignments and the registered resources
into upstream's shape, and decoding and checking such a file. ``DeviceManager``
(``devices.py``) writes a checkpoint whenever its assignments or device lists change and
restores one as a restarting kubelet does; it keeps the state, this module only the bytes.

Differences from upstream, all invisible inside kubemu: ``AllocResp`` holds the Allocate
response as JSON (upstream: protobuf), base64-encoded as Go encodes ``[]byte``;
``Checksum`` is the CRC-32 of the canonical JSON of ``Data`` (upstream hashes Go's printed
form of the struct).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Iterable

from .deviceplugin import ContainerAllocateResponse

CHECKPOINT_NAME = "kubelet_internal_checkpoint"

# (pod UID, container, resource, NUMA node -> device IDs, the plugin's Allocate response)
Entry = tuple[str, str, str, dict[int, tuple[str, ...]], ContainerAllocateResponse]


class CheckpointError(ValueError):
    """A checkpoint that cannot be restored. Retrying with the same bytes never helps."""

    retryable = False


def encode(entries: Iterable[Entry], registered: dict[str, list[str]]) -> bytes:
    """The checkpoint of these assignments; ``registered`` maps every known resource to its
    healthy device IDs (upstream records only those)."""
    rows = []
    for uid, container, resource, by_numa, response in entries:
        resp = json.dumps(response.to_dict(), sort_keys=True, separators=(",", ":"))
        rows.append(
            {
                "PodUID": uid,
                "ContainerName": container,
                "ResourceName": resource,
                "DeviceIDs": {str(n): list(ids) for n, ids in by_numa.items()},
                "AllocResp": base64.b64encode(resp.encode()).decode(),
            }
        )
    data = {"PodDeviceEntries": rows, "RegisteredDevices": registered}
    return json.dumps({"Data": data, "Checksum": _checksum(data)}, sort_keys=True).encode()


def decode(blob: bytes | str) -> tuple[list[Entry], list[str]]:
    """(the assignments, the registered resource names) of a checkpoint; raises
    ``CheckpointError`` (one line naming the field) for a corrupt or malformed one."""
    data = _load(blob)
    entries = []
    for i, e in enumerate(data["PodDeviceEntries"]):
        try:
            by_numa = {int(n): tuple(ids) for n, ids in sorted(e["DeviceIDs"].items(), key=lambda kv: int(kv[0]))}
            response = ContainerAllocateResponse.from_dict(json.loads(base64.b64decode(e["AllocResp"])))
            entries.append((e["PodUID"], e["ContainerName"], e["ResourceName"], by_numa, response))
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            raise CheckpointError(
                f"checkpoint.Data.PodDeviceEntries[{i}]: malformed entry ({err!r}); retrying does not help"
            ) from None
    return entries, list(data["RegisteredDevices"])


def _checksum(data: dict) -> int:
    return zlib.crc32(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())


def _load(blob: bytes | str) -> dict:
    try:
        doc = json.loads(blob)
        data, checksum = doc["Data"], doc["Checksum"]
        entries, registered = data["PodDeviceEntries"], data["RegisteredDevices"]
    except (ValueError, TypeError, KeyError) as err:
        raise CheckpointError(
            f"checkpoint: not a device manager checkpoint ({err!r}); retrying does not help"
        ) from None
    if not isinstance(entries, list) or not isinstance(registered, dict):
        raise CheckpointError(
            "checkpoint.Data: PodDeviceEntries must be a list and RegisteredDevices a map; retrying does not help"
        )
    if checksum != _checksum(data):
        raise CheckpointError(
            f"checkpoint.Checksum: {checksum!r} does not match the data "
            f"({_checksum(data)}); the file is corrupt, retrying does not help"
        )
    return data
