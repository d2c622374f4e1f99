"""OpenAPI schema objects into JSON Schema 2020-12, keyword by keyword."""
