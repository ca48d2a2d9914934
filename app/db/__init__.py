"""The verdict store: SQLAlchemy rows, sessions and repository functions (SQLite or PostgreSQL)."""
