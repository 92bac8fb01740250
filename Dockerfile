# Rookhaven's image: the package and its runtime dependencies (no dev or bench extras),
# run as an unprivileged user. One image serves every role; docker-compose.yml names the
# command of each (worker, beat, mcp). Run with no command it plays the demo, which needs
# no services: `docker build -t rookhaven . && docker run --rm rookhaven`.

# Build stage: a virtual environment with Rookhaven installed from this checkout, so the
# runtime stage gets no pip cache, build backend or sources.
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rookhaven ./rookhaven
COPY workers ./workers
RUN python -m venv /opt/rookhaven \
 && /opt/rookhaven/bin/pip install .

FROM python:3.11-slim
ENV PATH=/opt/rookhaven/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ROOKHAVEN_BEAT_SCHEDULE_FILE=/var/lib/rookhaven/beat/celerybeat-schedule
# A fixed uid, so files in mounted volumes have the same owner on every rebuild. The beat
# directory exists here, owned by that user, because a named volume mounted on it copies
# the owner on first use: beat can then write its schedule state there.
RUN groupadd --system --gid 10001 rookhaven \
 && useradd --system --uid 10001 --gid rookhaven --home-dir /var/lib/rookhaven \
      --shell /usr/sbin/nologin rookhaven \
 && mkdir -p /var/lib/rookhaven/beat \
 && chown -R rookhaven:rookhaven /var/lib/rookhaven
COPY --from=build /opt/rookhaven /opt/rookhaven
USER rookhaven:rookhaven
WORKDIR /var/lib/rookhaven
# 8765: `rookhaven mcp --http` (ROOKHAVEN_MCP_PORT).
EXPOSE 8765
CMD ["rookhaven", "demo"]
