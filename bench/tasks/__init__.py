"""The task suites: multi-step tasks on GitHub's spec and the Swagger petstore (the project's suite)
and on Asana's (the second suite, written before it ran), in every serve mode.

    .venv/bin/python -m bench.tasks          -> bench/TASKS.md

- :mod:`bench.tasks.github_world`, :mod:`bench.tasks.petstore_world`: the data the loopback
  upstream serves, built from the specs' own examples and checked against their response schemas;
  :mod:`bench.tasks.asana_world`: Asana's, shaped as its API answers (compact records, ``opt_fields``,
  ``limit``/``offset`` pages);
- :mod:`bench.tasks.upstream`: that upstream (plain ASGI under uvicorn on 127.0.0.1), stateful;
- :mod:`bench.tasks.session`: one scripted transcript against one MCP client, counting what the
  model reads and writes and its round trips;
- :mod:`bench.tasks.task`: a task and its transcript in each mode;
- :mod:`bench.tasks.github_tasks`, :mod:`bench.tasks.petstore_tasks`, :mod:`bench.tasks.asana_tasks`:
  the tasks, each with its expected answer, its plan (tools and discovery mode) and its programs
  (code modes);
- :mod:`bench.tasks.serving`: the bridge in each mode (in memory) and FastMCP's code mode (stdio);
- :mod:`bench.tasks.run`: running every task in every mode, and the programs' overhead;
- :mod:`bench.tasks.report`, :mod:`bench.tasks.__main__`: the report.
"""
