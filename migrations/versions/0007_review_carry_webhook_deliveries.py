"""reports.findings_sha256 (a review carries across a re-vet that finds nothing new) and webhook_deliveries

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No backfill: a NULL fingerprint makes the carrying rule compare the stored findings themselves
    # (app.core.review_carry), which is slower and just as exact.
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('findings_sha256', sa.String(length=64), nullable=True))
    op.create_table('webhook_deliveries',
    sa.Column('key_digest', sa.String(length=64), nullable=False),
    sa.Column('repo_id', sa.String(length=200), nullable=False),
    sa.Column('ref', sa.String(length=300), nullable=False),
    sa.Column('new_sha', sa.String(length=40), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('key_digest')
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_received_at'), ['received_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_webhook_deliveries_received_at'))
    op.drop_table('webhook_deliveries')
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.drop_column('findings_sha256')
