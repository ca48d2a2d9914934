"""web_sessions: dashboard logins kept server-side, so logout and revocation end them

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Cookies signed before this migration name no session: their holders log in once more.
    op.create_table('web_sessions',
    sa.Column('id_digest', sa.String(length=64), nullable=False),
    sa.Column('token_digest', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id_digest')
    )
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_sessions_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_web_sessions_token_digest'), ['token_digest'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_sessions_token_digest'))
        batch_op.drop_index(batch_op.f('ix_web_sessions_created_at'))
    op.drop_table('web_sessions')
