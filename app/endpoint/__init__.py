"""The Hub endpoint: hfvet as the `HF_ENDPOINT` of every client, serving only approved, verified bytes.

A face beside app.api and app.web: mounted under /hub by the server (app.api.asgi), or alone on
`hfvet serve --hub-port`. It speaks the subset of the Hub API huggingface_hub 2.x uses to resolve and
download (shared/reference/hub-protocol.md); every answer is decided by the gate (app.services.hub_endpoint).
docs/endpoint.md tells the deploy story.
"""
