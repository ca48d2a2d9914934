"""procrastinate's job queue schema, in its own PostgreSQL schema `procrastinate` (PostgreSQL only)

Revision ID: 0005
Revises: 0004

The queue's tables and functions live apart from hfvet's (`public`): `hfvet worker` and the API
connect to them with search_path=procrastinate, and the store's own tables never mix with them.
This applies the schema of the pinned procrastinate (3.10.0). A later procrastinate release that
ships migrations needs a new hfvet migration that applies them here (docs/deploy.md, "Upgrading").
"""

from __future__ import annotations

from alembic import op


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

SCHEMA = "procrastinate"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return  # SQLite runs vets in process: no queue schema
    from procrastinate.schema import SchemaManager

    raw = bind.connection.driver_connection  # psycopg: no placeholders parsed, several statements at once
    previous = raw.execute("SELECT current_setting('search_path')").fetchone()[0]
    raw.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    raw.execute(f"SELECT set_config('search_path', '{SCHEMA}', true)")
    raw.execute(SchemaManager.get_schema())
    raw.execute("SELECT set_config('search_path', %s, true)", (previous,))  # later migrations: as before


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
