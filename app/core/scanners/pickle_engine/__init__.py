"""hfvet's own pickle engine: opcode reader and machine, global catalogue, analysis, container walker."""
