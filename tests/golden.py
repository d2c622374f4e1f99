"""The specs whose generated packages are committed under generated/ as the golden record."""

from __future__ import annotations

from pathlib import Path

from generator.options import GenerateOptions

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
    "petstore_tailored": "petstore.yaml",
    "pet_coupons_workflows": "arazzo/pet-coupons.openapi.yaml",
    "jobs": "jobs.yaml",
    "credential_shapes": "credentials.yaml",
}


# Packages made with more than the spec: overlays applied to it, Arazzo workflows as tools (paths under specs/).
GOLDEN_EXTRAS: dict[str, dict[str, tuple[str, ...]]] = {
    "petstore_tailored": {"overlays": ("overlays/petstore-tailor.yaml",)},
    "pet_coupons_workflows": {"workflows": ("arazzo/pet-coupons.arazzo.yaml",)},
}


def spec_path(name: str) -> Path:
    return SPECS_DIR / GOLDEN_SPECS[name]


def golden_options(name: str) -> GenerateOptions:
    """How ``generated/<name>`` is generated (run from the repository root, with relative paths)."""
    extras = {
        key: tuple(str((SPECS_DIR / p).relative_to(ROOT)) for p in paths)
        for key, paths in GOLDEN_EXTRAS.get(name, {}).items()
    }
    return GenerateOptions(name=name, **extras)  # type: ignore[arg-type]
