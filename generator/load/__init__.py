"""Stage 1, load: a description read, bundled, validated, converted to 3.x and tailored by overlays."""
