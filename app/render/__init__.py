"""Report renderers: text (rich), JSON (DESIGN §6.2) and SARIF 2.1.0."""
