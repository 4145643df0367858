# Stands in for python:3.11.x-slim-bookworm: Debian's Python 3.11 with venv, `python` on PATH.
# Debian's pip reads the system's CA bundle, which holds the machine's CAs (debian.Dockerfile).
ARG BASE
FROM ${BASE}
# Debian stable's current package: a stand-in follows the release, it pins no build.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python-is-python3 \
    && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
