"""Public face (docs/library.md): an API's credentials and their redaction (``credentials.redact``).

The code lives in :mod:`bridge.secrets.credentials`; this path stays.
"""

from bridge.secrets.credentials import CredentialParts, Credentials

__all__ = ["CredentialParts", "Credentials"]
