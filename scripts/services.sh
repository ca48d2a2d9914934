#!/usr/bin/env bash
# Sourced by test.sh: make sure the services the tests use are up (PostgreSQL on 127.0.0.1:5432).
pg_up() { (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
if ! pg_up && command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "services: starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
if pg_up; then
  export HFVET_TEST_DATABASE_URL="${HFVET_TEST_DATABASE_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test}"
fi
