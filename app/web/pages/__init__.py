"""The dashboard's page handlers, one module per page (URLs in docs/dashboard.md)."""
