# hfvet image: the CLI, the API (`serve`), the queue workers (`worker`) and migrations (`db upgrade`).
# No torch, no tensorflow; nothing here loads a model. docs/deploy.md runs it with docker-compose.yml.
#   docker build -t hfvet .
#   docker run --rm -v "$PWD/snapshot:/data:ro" hfvet scan /data --format json
ARG PYTHON=python:3.11-slim-bookworm

# Build stage: a virtualenv with hfvet and its dependencies. Every pinned dependency ships wheels; the slim
# base has no compiler, so a dependency without a wheel fails the build instead of compiling silently.
FROM ${PYTHON} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY policies ./policies
RUN python -m venv /opt/hfvet \
 && /opt/hfvet/bin/pip install . \
 && /opt/hfvet/bin/pip uninstall --yes pip setuptools wheel
# app/db/session.py finds the migrations two levels above the package (site-packages/migrations).
COPY migrations /opt/hfvet/lib/python3.11/site-packages/migrations

# Final stage: the same slim base, the virtualenv, no compiler, no pip, a non-root user.
FROM ${PYTHON}
COPY --from=build /opt/hfvet /opt/hfvet
COPY policies /opt/hfvet-policies
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin hfvet
USER 10001
WORKDIR /home/hfvet
ENV PATH=/opt/hfvet/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    HFVET_POLICIES_DIR=/opt/hfvet-policies \
    HFVET_HEALTH_URL=http://127.0.0.1:8000/healthz
# The API answers /healthz; a worker started with --metrics-port 9100 sets HFVET_HEALTH_URL to its /metrics.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(os.environ['HFVET_HEALTH_URL'], timeout=4)"]
EXPOSE 8000
ENTRYPOINT ["hfvet"]
CMD ["--help"]
