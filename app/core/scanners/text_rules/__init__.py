"""Rules over text: lines, shell commands, URLs and upstream owners, Jinja templates."""
