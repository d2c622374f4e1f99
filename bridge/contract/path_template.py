"""Path templates that carry more than a path.

Specs key operations by path, so some APIs tell operations on the same path apart with a
fragment (``/web_links/{id}#get_shared_link``) and AWS-style APIs put fixed query pairs in the
key (``/?Action=DescribeInstances&Version=2016-11-15``, ``/{Bucket}?uploads``). A fragment is
never sent (it is not part of an HTTP request); literal query pairs are sent as query
parameters, before the arguments' ones. The template keeps both parts everywhere else, so the
two operations keep distinct names and labels.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, unquote

__all__ = ["literal_query", "split_template"]


@lru_cache(maxsize=4096)
def split_template(template: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``(path template, literal query pairs)``: the fragment dropped, pairs decoded."""
    path, _, _fragment = template.partition("#")
    path, _, query = path.partition("?")
    pairs = []
    for part in query.split("&"):
        if part:
            name, _, value = part.partition("=")
            pairs.append((unquote(name), unquote(value)))
    return path, tuple(pairs)


@lru_cache(maxsize=4096)
def literal_query(template: str) -> tuple[tuple[str, str], ...]:
    """The literal query pairs of ``template``, percent-encoded for the wire."""
    return tuple((quote(name, safe=""), quote(value, safe="")) for name, value in split_template(template)[1])
