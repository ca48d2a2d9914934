"""The HTTP API: one router per resource, schemas apart from rows, dependencies named once."""
