"""hfvet: supply-chain vetting for Hugging Face checkpoints."""

__version__ = "0.1.0"
