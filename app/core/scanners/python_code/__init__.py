"""Python-code analysis for remote code: effects, names, taint, bandit, auto_map."""
