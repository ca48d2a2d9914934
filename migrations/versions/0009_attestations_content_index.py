"""attestations and content_index: signed verdicts and reviews; which vetted commit holds which bytes

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('attestations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('report_pk', sa.Integer(), nullable=False),
    sa.Column('review_pk', sa.Integer(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('repo_id', sa.String(length=200), nullable=False),
    sa.Column('sha', sa.String(length=40), nullable=False),
    sa.Column('key_id', sa.String(length=64), nullable=False),
    sa.Column('envelope', sa.Text(), nullable=False),
    sa.Column('signed_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['report_pk'], ['reports.id'], ),
    sa.ForeignKeyConstraint(['review_pk'], ['reviews.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('attestations', schema=None) as batch_op:
        batch_op.create_index('ix_attestations_subject', ['repo_id', 'sha'], unique=False)
        batch_op.create_index(batch_op.f('ix_attestations_report_pk'), ['report_pk'], unique=False)
    op.create_table('content_index',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('digest', sa.String(length=80), nullable=False),
    sa.Column('repo_id', sa.String(length=200), nullable=False),
    sa.Column('sha', sa.String(length=40), nullable=False),
    sa.Column('path', sa.String(length=1024), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('repo_id', 'sha', 'path', 'digest', name='uq_content_index_file')
    )
    with op.batch_alter_table('content_index', schema=None) as batch_op:
        batch_op.create_index('ix_content_index_commit', ['repo_id', 'sha'], unique=False)
        batch_op.create_index(batch_op.f('ix_content_index_digest'), ['digest'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('content_index', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_content_index_digest'))
        batch_op.drop_index('ix_content_index_commit')
    op.drop_table('content_index')
    with op.batch_alter_table('attestations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_attestations_report_pk'))
        batch_op.drop_index('ix_attestations_subject')
    op.drop_table('attestations')
