"""TLS of the upstream connection: a per-API CA bundle, and the client certificate of a mutualTLS scheme.

Internal APIs often sit behind a company CA and mutual TLS. ``<PREFIX>_CA_BUNDLE`` names a PEM
file of the CAs this API's server certificate must chain to (instead of the default store; the
process-wide ``SSL_CERT_FILE`` still applies when it is unset). A mutualTLS scheme's
``_CERT_FILE`` (PEM certificate, with its key unless ``_KEY_FILE`` names another file) and
``_KEY_PASSWORD`` are loaded once, at start-up, into the one SSL context of the API's client, so
the certificate goes only to the configured origin. Key material never leaves the SSL context:
errors name the variable and the file, never its content.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from bridge.contract.catalogue import CA_BUNDLE_SUFFIX
from bridge.tools.errors import ConfigurationError

__all__ = ["CA_BUNDLE_SUFFIX", "ClientCertificate", "ca_bundle_var", "upstream_ssl_context"]


@dataclass(frozen=True, slots=True, repr=False)
class ClientCertificate:
    """Where a client certificate is, and the variables that said so (for messages)."""

    cert_file: str
    key_file: str | None
    password: str | None
    cert_var: str
    key_var: str | None

    def __repr__(self) -> str:  # the password is a secret
        return f"ClientCertificate(cert_file={self.cert_file!r}, key_file={self.key_file!r})"


def ca_bundle_var(env_prefix: str) -> str:
    return f"{env_prefix}_{CA_BUNDLE_SUFFIX}"


def upstream_ssl_context(
    env_prefix: str,
    environ: Mapping[str, str],
    client: ClientCertificate | None,
    *,
    trust_env: bool = True,
) -> ssl.SSLContext | None:
    """The SSL context of the API's client; None when neither a CA bundle nor a client certificate
    is configured (httpx's default context).

    Raises:
        ConfigurationError: the CA bundle or the certificate cannot be loaded.
    """
    name = ca_bundle_var(env_prefix)
    ca_bundle = (environ.get(name) or "").strip() or None
    if ca_bundle is None and client is None:
        return None
    if ca_bundle is not None:
        try:
            context = ssl.create_default_context(cafile=ca_bundle)
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise ConfigurationError(
                f"{name} ({ca_bundle}) cannot be loaded as a PEM CA bundle: {_reason(exc)}."
            ) from None
    else:
        context = httpx.create_ssl_context(trust_env=trust_env)
    if client is not None:
        try:
            # Always a callable: with no password OpenSSL would prompt on the terminal (and hang a server).
            context.load_cert_chain(client.cert_file, client.key_file, lambda: (client.password or "").encode())
        except (OSError, ssl.SSLError, ValueError) as exc:
            where = client.cert_var + (f" and {client.key_var}" if client.key_file and client.key_var else "")
            raise ConfigurationError(
                f"the client certificate of {where} cannot be loaded: {_reason(exc)} (a PEM certificate and its "
                "private key are needed; an encrypted key needs its password variable)."
            ) from None
    return context


def _reason(exc: BaseException) -> str:
    """Why loading failed, without anything read from the file."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, ssl.SSLError):
        return f"not usable ({exc.reason or 'TLS error'})"
    return type(exc).__name__
