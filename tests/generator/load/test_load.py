"""Loading descriptions from files, text and URLs: formats, version detection, limits and errors."""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from generator.load.reading import SpecError
from generator.load.spec import LoadedSpec, load_document_text, load_spec

DATA = Path(__file__).parent / "data"

MINIMAL_YAML = """\
openapi: 3.0.3
info:
  title: Pets
  version: "1.0"
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        200:
          description: the pets
"""


@dataclass
class Reply:
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    send_length: bool = True


@dataclass
class Server:
    url: str
    requests: list[str]


@contextmanager
def serve(replies: dict[str, Reply]) -> Iterator[Server]:
    """A loopback HTTP server answering GET with ``replies`` and recording every request path."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            reply = replies.get(self.path)
            if reply is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.send_length:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(excinfo: pytest.ExceptionInfo[SpecError]) -> list[str]:
    return excinfo.value.problems


def test_yaml_and_json_files_load_to_the_same_document(tmp_path: Path) -> None:
    yaml_file = write(tmp_path / "spec.yaml", MINIMAL_YAML)
    loaded_yaml = load_spec(str(yaml_file))
    json_file = write(tmp_path / "spec.txt", json.dumps(loaded_yaml.document))

    loaded_json = load_spec(str(json_file))

    assert loaded_json.document == loaded_yaml.document
    assert loaded_yaml.original_version == "3.0.3"
    assert loaded_yaml.source == str(yaml_file)
    assert loaded_yaml.sha256 == hashlib.sha256(yaml_file.read_bytes()).hexdigest()
    assert loaded_yaml.issues == ()


def test_yaml_integer_response_codes_become_string_keys() -> None:
    loaded = load_document_text(MINIMAL_YAML)

    assert list(loaded.document["paths"]["/pets"]["get"]["responses"]) == ["200"]


def test_yaml_dates_and_odd_keys_stay_as_written() -> None:
    text = MINIMAL_YAML + "components:\n  schemas:\n    Day:\n      type: string\n      example: 2024-01-31\n"
    text += "      x-flags: {on: 1, 1.5: 2}\n"

    schema = load_document_text(text).document["components"]["schemas"]["Day"]

    assert schema["example"] == "2024-01-31"
    assert schema["x-flags"] == {"on": 1, "1.5": 2}


def test_json_with_a_leading_brace_is_parsed_as_json() -> None:
    text = json.dumps({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}})

    loaded = load_document_text(text.encode())

    assert loaded.original_version == "3.1.0"
    assert loaded.document["paths"] == {}


def test_flow_style_yaml_that_looks_like_json_still_loads() -> None:
    loaded = load_document_text("{openapi: 3.0.3, info: {title: t, version: '1'}, paths: {}}")

    assert loaded.document["info"]["title"] == "t"


def test_broken_yaml_error_names_file_and_line(tmp_path: Path) -> None:
    spec = write(tmp_path / "broken.yaml", "openapi: 3.0.3\ninfo:\n  title: x\n   version: 1\n")

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    [problem] = problems_of(excinfo)
    assert problem.startswith(f"{spec}: line 4, column ")
    assert "invalid YAML" in problem
    assert "\n" not in str(excinfo.value)


def test_broken_json_error_names_file_and_line(tmp_path: Path) -> None:
    spec = write(tmp_path / "broken.json", '{\n  "openapi": "3.0.3",\n  "info": {,}\n}\n')

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec))

    assert problems_of(excinfo) == [
        f"{spec}: line 3, column 12: invalid JSON: Expecting property name enclosed in double quotes"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("title: not an api\n", "not an OpenAPI document (it has no 'openapi' or 'swagger' key)"),
        ("- a\n- b\n", "not an OpenAPI document (the top level is a list, not a mapping)"),
        ("", "not an OpenAPI document (the top level is empty)"),
        (
            "openapi: 3.0\ninfo: {}\npaths: {}\n",
            'the version must be a string such as "3.0.3"; got 3.0 (quote it in YAML)',
        ),
        ("openapi: '4.0.0'\n", "unsupported version '4.0.0' (supported: swagger 2.0, openapi 3.0.x and 3.1.x)"),
        ("swagger: '1.2'\n", "unsupported version '1.2' (supported: swagger 2.0, openapi 3.0.x and 3.1.x)"),
    ],
)
def test_document_that_is_not_openapi_is_refused_in_one_line(text: str, expected: str) -> None:
    with pytest.raises(SpecError) as excinfo:
        load_document_text(text, name="x.yaml")

    assert problems_of(excinfo) == [f"x.yaml: {expected}"]


def test_missing_file_is_one_clear_problem(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(missing))

    assert problems_of(excinfo) == [f"{missing}: file not found"]


def test_file_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    spec = write(tmp_path / "spec.yaml", MINIMAL_YAML)

    with pytest.raises(SpecError) as excinfo:
        load_spec(str(spec), max_bytes=100)

    assert problems_of(excinfo) == [f"{spec}: larger than the 100-byte limit"]


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    lines = [MINIMAL_YAML, "x-bomb:", "  l0: &l0 [a, a, a, a, a, a, a, a, a, a]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]

    with pytest.raises(SpecError) as excinfo:
        load_document_text("\n".join(lines) + "\n", name="bomb.yaml")

    assert problems_of(excinfo) == ["bomb.yaml: YAML aliases expand to more than 5000000 nodes"]


def test_validation_errors_stop_loading_and_validate_false_skips_them() -> None:
    text = MINIMAL_YAML.replace("description: the pets", "descriptio: the pets")

    with pytest.raises(SpecError) as excinfo:
        load_document_text(text, name="pets.yaml")
    loaded = load_document_text(text, name="pets.yaml", validate=False)

    assert problems_of(excinfo) == ["pets.yaml: /paths/~1pets/get/responses/200: 'description' is a required property"]
    assert loaded.document["paths"]["/pets"]["get"]["responses"]["200"] == {"descriptio": "the pets"}


def test_swagger2_file_is_converted_and_keeps_its_declared_version() -> None:
    loaded = load_spec(str(DATA / "petstore2.yaml"))

    assert loaded.original_version == "2.0"
    assert loaded.document["openapi"] == "3.0.3"
    assert "definitions" not in loaded.document
    assert [str(issue) for issue in loaded.issues] == [
        f"warning: {DATA / 'petstore2.yaml'}: /paths/~1pets/get/parameters/3: "
        "collectionFormat tsv has no OpenAPI 3 equivalent; values are sent comma-separated"
    ]


def test_inline_text_resolves_relative_refs_against_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "pet.yaml", "type: object\nproperties:\n  name: {type: string}\n")
    monkeypatch.chdir(tmp_path)
    text = MINIMAL_YAML + "components:\n  schemas:\n    Pet:\n      $ref: pet.yaml\n"

    loaded = load_document_text(text)

    assert loaded.document["components"]["schemas"]["Pet"] == {"$ref": "#/components/schemas/pet"}
    assert loaded.document["components"]["schemas"]["pet"]["properties"] == {"name": {"type": "string"}}


def test_spec_loads_from_a_url() -> None:
    with serve({"/api/spec.yaml": Reply(MINIMAL_YAML.encode())}) as server:
        loaded = load_spec(f"{server.url}/api/spec.yaml", timeout=5)

    assert isinstance(loaded, LoadedSpec)
    assert loaded.source == f"{server.url}/api/spec.yaml"
    assert loaded.sha256 == hashlib.sha256(MINIMAL_YAML.encode()).hexdigest()
    assert server.requests == ["/api/spec.yaml"]


@pytest.mark.parametrize("send_length", [True, False], ids=["declared-length", "streamed"])
def test_url_body_over_the_size_cap_is_refused(send_length: bool) -> None:
    body = MINIMAL_YAML.encode() + b"#" * 5000 + b"\n"

    with serve({"/spec.yaml": Reply(body, send_length=send_length)}) as server, pytest.raises(SpecError) as excinfo:
        load_spec(f"{server.url}/spec.yaml", max_bytes=1000, timeout=5)

    [problem] = problems_of(excinfo)
    assert problem.startswith(f"{server.url}/spec.yaml: larger than the 1000-byte limit")


def test_gzip_url_body_is_inflated_within_the_cap() -> None:
    packed = gzip.compress(MINIMAL_YAML.encode() + b"#" * 100_000 + b"\n")
    reply = Reply(packed, headers={"Content-Encoding": "gzip"})

    with serve({"/ok.yaml": reply, "/big.yaml": reply}) as server:
        loaded = load_spec(f"{server.url}/ok.yaml", timeout=5)
        with pytest.raises(SpecError) as excinfo:
            load_spec(f"{server.url}/big.yaml", max_bytes=50_000, timeout=5)

    assert loaded.document["info"]["title"] == "Pets"
    assert problems_of(excinfo) == [f"{server.url}/big.yaml: larger than the 50000-byte limit"]


def test_url_error_status_is_reported() -> None:
    with serve({}) as server, pytest.raises(SpecError) as excinfo:
        load_spec(f"{server.url}/missing.yaml", timeout=5)

    assert problems_of(excinfo) == [f"{server.url}/missing.yaml: HTTP 404 Not Found"]
