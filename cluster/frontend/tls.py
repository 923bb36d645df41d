"""The credentials ``kubemu serve`` hands out: a self-signed TLS certificate made at start,
a random bearer token, and the kubeconfig that carries both.

Owns the certificate (its subjectAltName names the served address, as Go clients
require; it is its own CA), the token and the kubeconfig file (mode 0600, context
``kubemu``). Called by ``actors/harness/serve.py``.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import secrets
import ssl
import tempfile

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def certificate(host: str) -> tuple[bytes, bytes]:
    """A self-signed (certificate PEM, key PEM) for ``host``, valid for 30 days."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubemu")])
    alt: list[x509.GeneralName] = [x509.DNSName("localhost")]
    try:
        alt.append(x509.IPAddress(ipaddress.ip_address(host)))
    except ValueError:
        alt.append(x509.DNSName(host))
    if host != "127.0.0.1":
        alt.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def server_context(cert_pem: bytes, key_pem: bytes) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with tempfile.TemporaryDirectory() as d:  # ssl loads chains from files only
        cert_path, key_path = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
        with open(cert_path, "wb") as f:
            f.write(cert_pem)
        with open(key_path, "wb") as f:
            f.write(key_pem)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx


def token() -> str:
    return secrets.token_urlsafe(32)


def kubeconfig(server: str, bearer: str, ca_pem: bytes | None) -> str:
    cluster: dict[str, object] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubemu", "cluster": cluster}],
        "users": [{"name": "kubemu-admin", "user": {"token": bearer}}],
        "contexts": [
            {"name": "kubemu", "context": {"cluster": "kubemu", "user": "kubemu-admin", "namespace": "default"}}
        ],
        "current-context": "kubemu",
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write_kubeconfig(path: str, text: str) -> None:
    """Write it readable by its owner only (it holds the token), whole or not at all: a
    client waiting for the file never reads half of it."""
    partial = f"{path}.{os.getpid()}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(partial, 0o600)
    os.replace(partial, path)
