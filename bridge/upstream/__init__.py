"""Talking to the upstream API: the pooled client, its limits, retries, redirects and bounded answers."""
