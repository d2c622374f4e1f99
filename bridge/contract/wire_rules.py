"""Wire facts both halves share: the names that are never tool arguments nor request parameters.

Part of the contract between the generator and the runtime (it imports neither httpx nor the
generator): the generator leaves these headers out of input schemas, the runtime never sends them
from arguments and refuses any prepared request that carries a framing header.

**Credential names** (SECURITY.md P11). A credential the model could supply is one the operator
never gave (sent beside the operator's own, or instead of it), and an argument the model is asked
for invites it to go looking for one.
The rule is data, judged on three things at once:

- the **location** (``path``, ``query``, ``header``, ``cookie``, or ``body`` for a top-level
  property of the request body): ``key`` is Google's API key in a query and a map or object key
  in a body or a path (S3's ``{Key}``); ``signature`` is AWS's in a query and an e-mail signature
  in a body;
- the **family** of the name's last word (its *head*; camelCase, ``_ - . $`` and spaces split
  words, and a head glued to its qualifier, ``apikey``/``pagetoken``, is split too): the head
  decides, so ``key_id``, ``secret_name`` and ``token_type`` are identifiers, never credentials;
- the **qualifier** (the words before the head): ``page_token`` and ``NextToken`` are pagination
  cursors, ``ClientToken`` an idempotency token, ``sort_key`` an ordering; ``api_key`` and
  ``access_token`` are credentials.

The generator adds the description (:func:`describes_credential`, query/header/cookie only) and
the spec's own apiKey slots; the runtime applies :func:`credential_name` to every value a model
sends (``bridge.request.build``), so the generator drops a superset of what the runtime refuses.
A value that cannot hold text (a number, a boolean) is never a credential: ``max_token`` of a
language model stays.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT_ACCEPT",
    "FORBIDDEN_HEADERS",
    "FRAMING_HEADERS",
    "HEADER_SAFE",
    "CredentialLocation",
    "credential_name",
    "describes_credential",
    "may_hold_text",
    "name_words",
    "value_may_be_credential",
]

FRAMING_HEADERS: frozenset[str] = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "te",
        "trailer",
        "connection",
        "keep-alive",
        "proxy-connection",
        "upgrade",
        "expect",
        "forwarded",
        "via",
        "x-real-ip",
    }
)
"""Headers no prepared request may carry at all (httpx sets framing itself); ``X-Forwarded-*`` too.

Unlike :data:`FORBIDDEN_HEADERS` this leaves out ``Authorization``/``Cookie``/``Accept``/
``Content-Type``, which the bridge itself adds (credentials, cookies, content negotiation).
"""

FORBIDDEN_HEADERS: frozenset[str] = FRAMING_HEADERS | {
    "authorization",
    "proxy-authorization",
    "proxy-authenticate",
    "cookie",
    "content-type",
    "accept",
    "accept-encoding",
}
"""Header parameters never sent from arguments (lower case): the framing headers and those the
bridge sets itself; ``X-Forwarded-*`` too."""

DEFAULT_ACCEPT = "application/json, */*;q=0.5"

HEADER_SAFE = re.compile(r"[\x21-\x7e]+(?:[ \t]+[\x21-\x7e]+)*")
"""A value that can be sent as a header value: visible ASCII, inner spaces or tabs, no line breaks."""


# ---------------------------------------------------------------------------- credential names

CredentialLocation = Literal["path", "query", "header", "cookie", "body"]

_NOT_PATH: Final = frozenset({"query", "header", "cookie"})
_EVERYWHERE: Final = frozenset({"path", "query", "header", "cookie", "body"})
_SENT_WITH_REQUEST: Final = frozenset({"query", "header", "cookie", "body"})

# Head (last word) -> the locations where a bare or credential-qualified head is a credential.
# Qualifier words (the text before the head, squashed) that make a head NOT a credential, and
# those that make a head that is harmless alone (``key``) a credential.
_KEY_QUALIFIERS: Final = (
    "api",  # api_key, apikey, X-Api-Key, X-Goog-Api-Key, hapikey
    "access",  # access_key
    "secret",  # secret_key
    "private",  # private_key
    "auth",
    "subscription",  # Azure API Management: Ocp-Apim-Subscription-Key
    "app",
    "application",
    "client",
    "consumer",  # OAuth 1 consumer_key
    "developer",  # Google's developerKey
    "license",
    "master",
    "account",  # a storage account key
    "signing",
    "shared",
    "session",
    "service",
    "user",  # 3scale's user_key
    "admin",
    "encryption",  # S3 SSE-C: the caller's own encryption key
    "partner",
    "merchant",
)
_CURSOR_QUALIFIERS: Final = (
    # Pagination cursors: the answer hands them out, the model passes them back.
    "page",
    "next",
    "prev",
    "previous",
    "continuation",
    "continue",
    "pagination",
    "cursor",
    "sync",
    "delta",
    "skip",
    "start",
    "starting",
    "resume",
    "resumption",
    "marker",
    "iterator",
    "change",  # AWS WAF's ChangeToken: a change's handle
    # Idempotency: a random value the caller makes up to dedupe a retried call.
    "idempotency",
    "client",  # AWS ClientToken
    "request",  # AWS ClientRequestToken
    "dedup",
    "deduplication",
    # Addresses, not proof of who calls: push-notification device tokens.
    "device",
    "registration",
    "push",
    "fcm",
    "apns",
    # Language models' vocabulary tokens.
    "stop",
    "bos",
    "eos",
    "pad",
    "sep",
    "mask",
    "unk",
    "special",
    "end",
)
_KEY_HEADS: Final = ("key",)
_TOKEN_HEADS: Final = ("token",)
_SECRET_HEADS: Final = ("secret",)
_PASSWORD_HEADS: Final = ("password", "passwd", "passphrase", "pwd")
_SIGNATURE_HEADS: Final = ("signature", "sig")
_CREDENTIAL_HEADS: Final = ("credential", "credentials", "creds")
_AUTH_HEADS: Final = ("auth", "authorization")  # not `authentication`: EC2 configures a VPN's with it
# Heads glued to their qualifier (``apikey``, ``pagetoken``): split off when the word ends so.
_GLUED_HEADS: Final = (
    "token",
    "key",
    "secret",
    "password",
    "passwd",
    "signature",
    "sig",
    "credentials",
    "credential",
    "authorization",
    "auth",
)

# Words before a name that say whose it is, not what it is.
_PREFIX_WORDS: Final = frozenset({"x", "my", "goog", "amz", "ms", "ocp", "apim", "the", "your", "custom"})
_SESSION_WORDS: Final = frozenset({"sessionid", "sessid", "sid", "sessiontoken", "sessionkey"})
# AWS Signature Version 4 and 2 fields, squashed: the signer sets them, never a caller.
_AWS_SIGNING: Final = frozenset(
    {
        "xamzalgorithm",
        "xamzcredential",
        "xamzdate",
        "xamzexpires",
        "xamzsecuritytoken",
        "xamzsignature",
        "xamzsignedheaders",
        "xamzcontentsha256",
        "awsaccesskeyid",
        "securitytoken",
    }
)

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def name_words(name: str) -> tuple[str, ...]:
    """The lower-case words of ``name``: camelCase and any non-alphanumeric character split."""
    return tuple(word.lower() for word in _WORD.findall(name))


def _core(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` without a trailing number (``api_key2``) or leading vendor words (``X-``,
    ``X-Goog-``, ``my_``): ``x_key`` is a bare ``key``."""
    while len(words) > 1 and words[-1].isdigit():
        words = words[:-1]
    while len(words) > 1 and words[0] in _PREFIX_WORDS:
        words = words[1:]
    return words


def _head(words: tuple[str, ...]) -> tuple[str, str, bool]:
    """``(head, qualifier, glued)``: the last word and the word before it; a head glued to its
    qualifier (``apikey``, ``nexttoken``) is split off, and then the qualifier is all that came
    before it in that word (``nextpage`` of ``nextpagetoken``)."""
    words = _core(words)
    if not words:
        return "", "", False
    last = words[-1]
    for head in _GLUED_HEADS:
        if last != head and last.endswith(head):
            glued = last[: -len(head)]
            while (vendor := next((w for w in _PREFIX_WORDS if glued.startswith(w)), None)) is not None:
                glued = glued[len(vendor) :]  # xkey, xgoogapikey: a vendor's prefix
            return head, glued, bool(glued)
    return last, words[-2] if len(words) > 1 else "", False


def _is_cursor(qualifier: str, glued: bool) -> bool:
    """A token qualifier naming a cursor, an idempotency token or an address (word for word, or
    the end of a glued word: ``nextpagetoken``)."""
    return qualifier in _CURSOR_QUALIFIERS or (glued and qualifier.endswith(_CURSOR_QUALIFIERS))


BARE_KEY = "an API key (a bare `key`)"


def credential_name(location: str, name: str, description: str | None = None) -> str | None:
    """Why ``name`` in ``location`` carries a credential (a short reason), or None.

    ``location`` is a parameter's ``in`` or ``"body"`` (a top-level body property); header names
    in any case, ``_``/``-``/``.`` alike. A bare ``key`` in a query, header or cookie is Google's
    API key unless its ``description`` says what else it is: described, and not as a credential
    (GitHub's cache ``key``: "A key for identifying the cache"), it is kept; undescribed, it is one.
    """
    reason = _by_name(location, name)
    if reason == BARE_KEY and description and describes_credential(location, name, description) is None:
        return None
    return reason


def _by_name(location: str, name: str) -> str | None:
    words = name_words(name)
    if not words:
        return None
    squashed = "".join(words)
    if location in ("query", "header") and squashed in _AWS_SIGNING:
        return "an AWS request-signing field (the signer sets it)"
    core = "".join(_core(words))
    if location in ("header", "cookie") and (core in _SESSION_WORDS or core.endswith(("sessionid", "sessid"))):
        return "a session id (a session is a credential)"
    head, qualifier, glued = _head(words)
    if head in _KEY_HEADS:
        if not qualifier:
            return BARE_KEY if location in _NOT_PATH else None
        if qualifier.endswith(_KEY_QUALIFIERS):
            return "an API key or secret key"
        return None
    if head in _TOKEN_HEADS:
        if _is_cursor(qualifier, glued):
            return None
        if not qualifier and location == "path":
            return None  # /tokens/{token}: the resource's name
        return "a token (not a pagination cursor, idempotency token or device address)"
    if head in _SECRET_HEADS:
        return "a secret" if qualifier or location != "path" else None
    if head in _PASSWORD_HEADS:
        return "a password" if location != "body" else None  # a body's is account data (a new user's)
    if head in _SIGNATURE_HEADS:
        return "a request signature" if location in _NOT_PATH else None
    if head in _CREDENTIAL_HEADS:
        return "a credential" if location in _SENT_WITH_REQUEST else None
    if head in _AUTH_HEADS:
        return "an authorization value" if location in _NOT_PATH else None
    return None


# Phrases that name a credential in a parameter's description (its first sentence, lower case).
_DESCRIBED: Final = re.compile(
    r"\b(?:api[ _-]?key|access[ _-]token|oauth(?: ?2(?:\.0)?)? (?:access )?token|bearer token|auth(?:entication"
    r"|orization)? token|session token|security token|refresh token|client secret|secret key|private key"
    r"|password|request signature|hmac signature)\b"
)
# Last words that make a name an identifier or a property of a credential, not the credential.
_NOT_THE_VALUE: Final = frozenset(
    {
        "id",
        "ids",
        "name",
        "names",
        "type",
        "types",
        "count",
        "prefix",
        "hint",
        "url",
        "uri",
        "format",
        "length",
        "expiry",
        "expires",
        "expiration",
        "ttl",
        "status",
        "scope",
        "scopes",
        "label",
        "description",
        "version",
        "md5",
        "include",
        "fields",
        "limit",
        "page",
        "size",
        "sort",
        "order",
        "filter",
        "q",
        "query",
    }
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")
_TAG = re.compile(r"<[^<>]{0,200}>")  # AWS descriptions are HTML: "instance.</p> <ul>" ends a sentence


def describes_credential(location: str, name: str, description: str | None) -> str | None:
    """Why a query, header or cookie parameter's description says it carries a credential, or None.

    Only the first sentence counts ("The API key." names one; "Filter keys by prefix. Works with
    any API key." does not), and a name ending in an identifier word (``keyId``) or a cursor is
    never one. Body properties are judged by name only: their descriptions talk about the
    resource ("the user's password").
    """
    if location not in _NOT_PATH or not description:
        return None
    words = name_words(name)
    if not words or words[-1] in _NOT_THE_VALUE:
        return None
    head, qualifier, glued = _head(words)
    if head in _TOKEN_HEADS and _is_cursor(qualifier, glued):
        return None
    first = _SENTENCE_END.split(_TAG.sub(" ", description).strip(), maxsplit=1)[0].lower()
    match = _DESCRIBED.search(first)
    return f"described as {match.group(0)!r}" if match else None


def may_hold_text(schema: Any) -> bool:
    """Whether a value of ``schema`` may be (or hold) text: anything but numbers, booleans and null.

    The runtime's :func:`value_may_be_credential` is the same rule on a value, so what the
    generator keeps for being numeric, the runtime never refuses."""
    if not isinstance(schema, Mapping):
        return True
    kind = schema.get("type")
    kinds = (
        {kind}
        if isinstance(kind, str)
        else {k for k in kind if isinstance(k, str)}
        if isinstance(kind, list)
        else set()
    )
    return not kinds or not kinds <= {"integer", "number", "boolean", "null"}


def value_may_be_credential(value: Any) -> bool:
    """A model-supplied value that may carry a credential: anything but a number, boolean or null."""
    return value is not None and not isinstance(value, bool | int | float)
