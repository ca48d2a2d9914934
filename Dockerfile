# hfvet CLI image (no torch, no tensorflow). Build: docker build -t hfvet .
# Run:   docker run --rm -v "$PWD/snapshot:/data:ro" hfvet scan /data --format json
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY app ./app
COPY policies ./policies
RUN python -m venv /opt/hfvet && /opt/hfvet/bin/pip install --no-cache-dir .

FROM python:3.11-slim
COPY --from=build /opt/hfvet /opt/hfvet
COPY policies /opt/hfvet-policies
RUN useradd --create-home --uid 10001 hfvet
USER hfvet
WORKDIR /home/hfvet
ENV PATH=/opt/hfvet/bin:$PATH HF_HUB_DISABLE_TELEMETRY=1 HFVET_POLICIES_DIR=/opt/hfvet-policies
ENTRYPOINT ["hfvet"]
CMD ["--help"]
