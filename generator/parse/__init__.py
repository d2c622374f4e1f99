"""Stage 2, parse: the bundled document into the intermediate model (``ir``), facts only."""
