"""attestations and content_index: signed verdicts and reviews; which vetted commit holds which bytes

The content index of a store that has commits already is filled from their stored manifests here,
in the migration's own transaction: no vet path or command has to remember to backfill it, and
the index holds every stored commit from the moment it exists (app/db/content_index.py).

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
    _backfill_content_index()


_BATCH = 1000  # index rows per INSERT


def _backfill_content_index() -> None:
    """One row per file and digest (`sha256:<hex>`, `gitblob:<hex>`) of every stored revision's manifest."""
    bind = op.get_bind()
    repos = sa.table('repos', sa.column('id', sa.Integer), sa.column('repo_id', sa.String))
    revisions = sa.table('revisions', sa.column('repo_pk', sa.Integer), sa.column('sha', sa.String),
                         sa.column('manifest', sa.JSON))
    index = sa.table('content_index', sa.column('digest', sa.String), sa.column('repo_id', sa.String),
                     sa.column('sha', sa.String), sa.column('path', sa.String), sa.column('size', sa.BigInteger))
    query = (sa.select(repos.c.repo_id, revisions.c.sha, revisions.c.manifest)
             .join(repos, revisions.c.repo_pk == repos.c.id).order_by(repos.c.repo_id, revisions.c.sha))
    rows: list[dict[str, object]] = []
    for repo_id, sha, manifest in bind.execute(query):
        seen: set[tuple[str, str]] = set()
        for entry in manifest or []:
            for digest in _digests(entry):
                if (entry['path'], digest) not in seen:
                    seen.add((entry['path'], digest))
                    rows.append({'digest': digest, 'repo_id': repo_id, 'sha': sha, 'path': entry['path'],
                                 'size': int(entry.get('size') or 0)})
        if len(rows) >= _BATCH:
            bind.execute(index.insert(), rows)
            rows = []
    if rows:
        bind.execute(index.insert(), rows)


def _digests(entry: object) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get('path'), str):
        return []
    found = [f'sha256:{entry["sha256"]}' if entry.get('sha256') else None,
             f'gitblob:{entry["blob_id"]}' if entry.get('blob_id') else None]
    return [d for d in found if d]


def downgrade() -> None:
    with op.batch_alter_table('content_index', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_content_index_digest'))
        batch_op.drop_index('ix_content_index_commit')
    op.drop_table('content_index')
    with op.batch_alter_table('attestations', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_attestations_report_pk'))
        batch_op.drop_index('ix_attestations_subject')
    op.drop_table('attestations')
