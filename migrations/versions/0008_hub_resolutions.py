"""hub_resolutions: the gate's branch and tag resolutions, shared by replicas for a short time

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('hub_resolutions',
    sa.Column('repo_id', sa.String(length=200), nullable=False),
    sa.Column('revision', sa.String(length=256), nullable=False),
    sa.Column('sha', sa.String(length=40), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('repo_id', 'revision')
    )
    with op.batch_alter_table('hub_resolutions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_hub_resolutions_resolved_at'), ['resolved_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('hub_resolutions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_hub_resolutions_resolved_at'))
    op.drop_table('hub_resolutions')
