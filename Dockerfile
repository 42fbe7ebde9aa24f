# Flock on Debian 13 (trixie) slim with Node 24. The build steps are the ones CI proves in a Debian 13 userland on
# Node 24 (.ci/trixie.sh: `npm ci` from a clean tree, which builds the server, the SDK, the web app and its docs, then
# `npm start` answering /healthz). The development machines cannot build images (no registry to pull the base image
# from); docs/OPERATIONS.md says how to run it.
#
#   docker build -t flock .
#   docker compose up            # with Redis and Postgres (compose.yaml)

ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY . .
# npm ci runs `prepare` (the build); the prune then drops the dev dependencies without building again
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE}
# jemalloc: long-lived nodes keep a level RSS on it (README, "Memory allocator"); linked at one path whatever the
# architecture's library directory
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "$(dpkg -L libjemalloc2 | grep '/libjemalloc\.so\.2$')" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2

WORKDIR /app
# the code is root's and read-only to the node; only DATA_DIR (uploaded files) is the node user's
COPY --from=build /app /app
RUN mkdir -p /app/data && chown node:node /app/data
USER node

ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/app/data
VOLUME /app/data
EXPOSE 8080
# /readyz: 503 while Postgres or Redis is out, or while the node drains after SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM: linger (FLOCK_SHUTDOWN_LINGER, 5 s), drain (FLOCK_SHUTDOWN_GRACE, 10 s), exit 0; give it 30 s
STOPSIGNAL SIGTERM
CMD ["node", "dist/runtime/main.js"]
