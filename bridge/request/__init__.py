"""Building the request: validated tool arguments to the one HTTP request the OpenAPI operation describes."""
