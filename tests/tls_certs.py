"""A throw-away test CA with a server certificate for 127.0.0.1 and client certificates, made with
``cryptography`` (PEM files in a folder the test owns)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_CN = "mcp-bridge-test-client"


@dataclass(frozen=True, slots=True)
class Pki:
    ca: Path  # CA certificate (PEM)
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path  # unencrypted
    client_key_encrypted: Path  # encrypted with `password`
    client_combined: Path  # certificate and key in one file
    password: str
    other_ca: Path  # a CA that signed nothing here

    def server_context(self, *, require_client_cert: bool = True) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.server_cert, self.server_key)
        context.load_verify_locations(cafile=self.ca)
        context.verify_mode = ssl.CERT_REQUIRED if require_client_cert else ssl.CERT_NONE
        return context


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    )
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


def _ca(cn: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(_name(cn))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def _leaf(
    ca_key: ec.EllipticCurvePrivateKey, ca: x509.Certificate, cn: str, *, server: bool
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(cn))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
    return key, builder.sign(ca_key, hashes.SHA256())


def make_pki(folder: Path, password: str = "key-password-CANARY-5e1f") -> Pki:
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca = _ca("mcp-bridge test CA")
    _, other = _ca("some other CA")
    server_key, server = _leaf(ca_key, ca, "127.0.0.1", server=True)
    client_key, client = _leaf(ca_key, ca, CLIENT_CN, server=False)
    pem = serialization.Encoding.PEM
    files = {
        "ca.pem": ca.public_bytes(pem),
        "other-ca.pem": other.public_bytes(pem),
        "server.pem": server.public_bytes(pem),
        "server.key": _key_pem(server_key),
        "client.pem": client.public_bytes(pem),
        "client.key": _key_pem(client_key),
        "client-encrypted.key": _key_pem(client_key, password),
        "client-combined.pem": client.public_bytes(pem) + _key_pem(client_key),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return Pki(
        ca=folder / "ca.pem",
        server_cert=folder / "server.pem",
        server_key=folder / "server.key",
        client_cert=folder / "client.pem",
        client_key=folder / "client.key",
        client_key_encrypted=folder / "client-encrypted.key",
        client_combined=folder / "client-combined.pem",
        password=password,
        other_ca=folder / "other-ca.pem",
    )
