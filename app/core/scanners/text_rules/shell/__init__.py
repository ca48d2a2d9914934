"""Shell-like text read as a program: parsed with tree-sitter-bash, walked from download to execution."""
