"""Arazzo 1.0 workflows as tools: :mod:`~generator.workflows.document` reads and checks a document,
:mod:`~generator.workflows.sources` maps its sources to the package, :mod:`~generator.workflows.steps`
resolves each step, and :mod:`~generator.workflows.build` makes the catalogue's workflow entries."""
