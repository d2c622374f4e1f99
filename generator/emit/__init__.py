"""Stage 4, emit: the catalogue, the stubs and the package's files, written without losing anything."""
