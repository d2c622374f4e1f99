"""The task suite: multi-step tasks on GitHub's spec and the Swagger petstore, in every serve mode.

    .venv/bin/python -m bench.tasks          -> bench/TASKS.md

- :mod:`bench.tasks.github_world`, :mod:`bench.tasks.petstore_world`: the data the loopback
  upstream serves, built from the specs' own examples and checked against their response schemas;
- :mod:`bench.tasks.upstream`: that upstream (plain ASGI under uvicorn on 127.0.0.1), stateful;
- :mod:`bench.tasks.session`: one scripted transcript against one MCP client, counting what the
  model reads and writes and its round trips;
- :mod:`bench.tasks.github_tasks`, :mod:`bench.tasks.petstore_tasks`: the tasks, each with its
  expected answer and an ideal transcript per mode;
- :mod:`bench.tasks.run`: serving the bridge in each mode (and FastMCP's code mode) and running them;
- :mod:`bench.tasks.__main__`: the report.
"""
