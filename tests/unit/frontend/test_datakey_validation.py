"""Secret and ConfigMap keys: upstream's config-key rule, through ``validate`` and over HTTP
(the conformance test "Secrets should fail to create secret due to empty secret key")."""

from __future__ import annotations

import pytest
from http_builders import CMS, call, serve

from cluster.api.datakeyvalidation import KEY_RULE, key_problems
from cluster.api.validation import ValidationError, validate

SECRETS = "/api/v1/namespaces/default/secrets"


def secret(data: dict, field: str = "data") -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, field: data}


def config_map(data: dict | None = None, binary: dict | None = None) -> dict:
    cm: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    if data is not None:
        cm["data"] = data
    if binary is not None:
        cm["binaryData"] = binary
    return cm


@pytest.mark.parametrize(
    "key, problems",
    [
        ("key.name", []),
        ("KEY_NAME-1", []),
        (".hidden", []),
        ("", [KEY_RULE]),
        ("a/b", [KEY_RULE]),
        ("a b", [KEY_RULE]),
        (".", ["must not be '.'"]),
        ("..", ["must not be '..'"]),
        ("..data", ["must not start with '..'"]),
        ("k" * 253, []),
        ("k" * 254, ["must be no more than 253 characters"]),
    ],
)
def test_key_problems(key: str, problems: list[str]) -> None:
    assert key_problems(key) == problems


@pytest.mark.parametrize(
    "obj, message",
    [
        (secret({"": "YQ=="}), f'data[]: Invalid value: "": {KEY_RULE}'),
        (secret({"a/b": "x"}, field="stringData"), f'data[a/b]: Invalid value: "a/b": {KEY_RULE}'),
        (config_map({"..x": "1"}), "data[..x]: Invalid value: \"..x\": must not start with '..'"),
        (config_map(binary={"": "YQ=="}), f'binaryData[]: Invalid value: "": {KEY_RULE}'),
        (
            config_map({"a": "1"}, {"a": "YQ=="}),
            'data[a]: Invalid value: "a": duplicate of key present in binaryData',
        ),
        (
            secret({"": "YQ==", ".": "YQ=="}),
            f'[data[]: Invalid value: "": {KEY_RULE}, data[.]: Invalid value: ".": must not be \'.\']',
        ),
    ],
)
def test_bad_keys_are_refused_with_every_field_named(obj: dict, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        validate(obj)
    assert str(err.value) == message
    fields = [c.field for c in err.value.causes]
    assert all(c.type == "FieldValueInvalid" for c in err.value.causes)
    assert fields == (["data[]", "data[.]"] if message.startswith("[") else [message.split(":")[0]])


@pytest.mark.parametrize("obj", [secret({"tls.crt": "YQ=="}), config_map({"a": "1"}, {"b": "YQ=="}), config_map()])
def test_good_keys_pass(obj: dict) -> None:
    validate(obj)


def test_empty_secret_key_is_a_422_over_http_and_stores_nothing() -> None:
    h, _ = serve()
    status, body = call(h, "POST", SECRETS, {**secret({"": "dmFsdWUtMQo="}), "metadata": {"name": "empty-key"}})
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == f'Secret "empty-key" is invalid: data[]: Invalid value: "": {KEY_RULE}'
    assert body["details"]["causes"][0]["field"] == "data[]"
    assert call(h, "GET", f"{SECRETS}/empty-key")[0] == 404
    status, body = call(h, "POST", CMS, {**config_map({"..x": "1"}), "metadata": {"name": "dots"}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "data[..x]")
    assert call(h, "GET", f"{CMS}/dots")[0] == 404
