"""Use cases shared by the CLI, the API and the job workers."""
