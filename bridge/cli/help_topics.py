"""``--help`` of ``generate`` and ``serve`` grouped by topic (click 8 has no option groups)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from bridge.cli.ops_options import OPS_PARAMS

GENERATE_TOPICS = (
    ("Package", ("output", "name", "env_prefix", "allow_empty", "replace", "mode")),
    ("Reading the spec", ("config_path", "overlays", "workflows", "strict", "allow_remote_refs")),
    ("Which operations", ("include_tags", "exclude_tags", "include_operations", "exclude_operations", "read_only")),
    (
        "Tools' names, descriptions and schemas",
        (
            "max_name_length",
            "tool_description_limit",
            "description_limit",
            "property_description_limit",
            "output_depth",
            "max_input_schema_bytes",
            "no_output_schemas",
            "no_compact",
        ),
    ),
)

SERVE_TOPICS = (
    (
        "Transport",
        (
            "transport",
            "host",
            "port",
            "stateless",
            "allowed_hosts",
            "allowed_origins",
            "forwarded_allow_ips",
            "max_sessions",
            "max_sessions_per_client",
        ),
    ),
    (
        "Upstream",
        (
            "base_url",
            "server_number",
            "server_vars",
            "timeout",
            "retries",
            "max_concurrent_calls",
            "max_queue_wait",
            "max_calls_per_second",
            "validate_responses",
            "spec_path",
        ),
    ),
    ("What the model sees", ("mode", "no_output_schemas", "resources", "icons")),
    ("A spec TARGET", ("overlays", "workflows", "no_cache")),
    ("Results", ("max_result_bytes", "max_result_items", "max_result_string", "no_trim", "max_argument_bytes")),
    ("Code mode", ("program_timeout", "program_memory", "program_max_calls")),
    ("Confirmation", ("confirm", "confirm_fallback", "confirm_timeout")),
    ("Long-running operations", ("async_wait", "async_deadline")),
    (
        "Identity (HTTP)",
        (
            "auth_token_env",
            "auth_resource_url",
            "auth_issuer",
            "auth_jwks_url",
            "auth_introspection_url",
            "auth_client_id_env",
            "auth_client_secret_env",
            "auth_issuer_url",
            "auth_scopes",
            "token_exchange_url",
            "token_exchange_audience",
            "max_calls_per_user",
            "max_user_calls_per_second",
        ),
    ),
    ("Operations", OPS_PARAMS),
)


class TopicCommand(click.Command):
    """A command whose ``--help`` lists its options under topic headings, in the order given.

    ``topics`` maps a heading to the parameter names (destinations) under it; an option no topic
    names is listed under "Other options", so a new option is never lost from the help.
    """

    def __init__(self, *args: Any, topics: Sequence[tuple[str, Sequence[str]]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.topics = tuple((title, tuple(names)) for title, names in topics)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and param.name is not None:
                records[param.name] = record
        for title, names in (*self.topics, ("Other options", tuple(records))):
            rows = [records.pop(name) for name in names if name in records]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
