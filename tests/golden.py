"""The specs whose generated packages are committed under generated/ as the golden record."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS_DIR = ROOT / "specs"
GENERATED_DIR = ROOT / "generated"

GOLDEN_SPECS = {
    "petstore": "petstore.yaml",
    "parameter_styles": "styles30.yaml",
    "swagger_two_store": "swagger2.yaml",
    "features_3_1": "features31.yaml",
    "multi_file": "multifile/openapi.yaml",
    "parameter_names": "parameters.yaml",
    "request_bodies": "bodies.yaml",
    "credential_shapes": "credentials.yaml",
}


def spec_path(name: str) -> Path:
    return SPECS_DIR / GOLDEN_SPECS[name]
