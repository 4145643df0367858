# claude-memory in one image: the server (MCP + REST API + web UI), CPU-only, with the bundled
# embedding model, running as a non-root user.
#
#   docker compose up -d --build        the server with the pgvector database (docker-compose.yml)
#   docker build -t claude-memory .     the image alone; without CLAUDE_MEMORY_DATABASE_URL it
#                                       runs the embedded PostgreSQL in /data/pg
#
# Stages: `ui` builds ui/dist with Node; `build` makes a virtual environment in /opt/venv with a
# CPU-only torch, the dependencies and the server; `runtime` copies that environment only.

ARG NODE_IMAGE=node:20.20.2-bookworm-slim
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm

# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS ui
WORKDIR /src/ui
# The lock file alone first, so the npm layer is reused until dependencies change.
COPY ui/package.json ui/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY ui/ ./
RUN npm run build

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS build
ARG TORCH_VERSION=2.13.0
# PyTorch's own index of CPU-only wheels: PyPI's Linux torch pulls several GB of CUDA libraries.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
RUN python -m venv /opt/venv

# torch before everything else, so sentence-transformers finds it and never asks PyPI for one.
RUN pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}" \
    && python -c "import torch; assert torch.version.cuda is None, 'not a CPU-only torch: ' + torch.__version__"

# The dependencies from pyproject.toml in their own layer: editing the server does not reinstall them.
WORKDIR /src
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
        > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt

COPY server/ server/
COPY migrations/ migrations/
COPY --from=ui /src/ui/dist/ ui/dist/
RUN pip install --no-deps .

# The installed package looks for migrations/ and ui/dist next to itself (see MIGRATIONS_DIR in
# server/db/migrate.py and UI_DIST in server/app.py). Ask it where, from outside the source tree
# so that the installed copy answers, and put both folders there.
WORKDIR /opt
RUN migrations_dir="$(python -c 'from server.db.migrate import MIGRATIONS_DIR; print(MIGRATIONS_DIR)')" \
    && ui_dist="$(python -c 'from server.app import UI_DIST; print(UI_DIST)')" \
    && mkdir -p "$(dirname "$ui_dist")" \
    && cp -R /src/migrations "$migrations_dir" \
    && cp -R /src/ui/dist "$ui_dist" \
    && python -c "from server.db.migrate import discover_migrations; assert discover_migrations()" \
    && python -c "from server.app import UI_DIST; assert (UI_DIST / 'index.html').is_file()"

# ---------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="claude-memory" \
      org.opencontainers.image.description="Persistent, searchable memory for AI coding agents" \
      org.opencontainers.image.licenses="MIT"
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    CLAUDE_MEMORY_HOME=/data \
    CLAUDE_MEMORY_HOST=0.0.0.0 \
    CLAUDE_MEMORY_PORT=3333

# A fixed uid/gid so volumes keep their owner across rebuilds.
RUN groupadd --system --gid 10001 claude-memory \
    && useradd --system --no-log-init --uid 10001 --gid claude-memory \
        --create-home --home-dir /home/claude-memory --shell /usr/sbin/nologin claude-memory \
    && install -d -o claude-memory -g claude-memory -m 0700 /data

COPY --from=build /opt/venv /opt/venv

# Numeric, so a runtime can tell it is not root without reading /etc/passwd.
USER 10001:10001
WORKDIR /home/claude-memory

# Fail the build, not the first start, when the model, torch or pg_dump cannot run here.
RUN python -c "from server.service.embeddings import LocalEmbedder; e = LocalEmbedder.load('all-MiniLM-L6-v2'); assert e.encode(['ok']).shape == (1, 384)" \
    && python -c "import subprocess; from server.jobs.backup import pg_tool; subprocess.run([pg_tool('pg_dump'), '--version'], check=True)" \
    && claude-memory --help > /dev/null

EXPOSE 3333
# /health is open even when CLAUDE_MEMORY_TOKEN is set; it answers 503 when the database is down.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('CLAUDE_MEMORY_PORT', '3333') + '/health', timeout=4)"]

# Inside the container the server must listen on all of the container's addresses for Docker to
# forward a published port to it; docker-compose.yml publishes that port on 127.0.0.1 only.
CMD ["claude-memory", "serve", "--allow-remote"]
