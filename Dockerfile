# Voxkey server image: `voxkey serve` by default, `voxkey worker` as the alternative command.
#   docker build -t voxkey .
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://... -e VOXKEY_ENCRYPTION_KEY=... voxkey
#   docker run ... voxkey worker
# The base image is a build argument so the image can be built from a local or mirrored base
# (scripts/container-smoke.sh builds one with debootstrap); it needs Node.js 20.19+ with npm,
# and Debian's apt for the build stage's compiler.
ARG BASE_IMAGE=node:20-bookworm-slim

FROM ${BASE_IMAGE} AS build
# better-sqlite3 compiles from source when no prebuilt binary can be downloaded.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# npm_config_nodedir: the Node.js headers that ship with the base image, so a source build of
# better-sqlite3 never downloads them.
ENV TURBO_TELEMETRY_DISABLED=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_nodedir=/usr/local
# Manifests first: the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json .npmrc tsconfig.base.json turbo.json ./
COPY packages/contract/package.json packages/contract/
COPY packages/engine/package.json packages/engine/
COPY packages/sdk/package.json packages/sdk/
COPY apps/server/package.json apps/server/
COPY examples/quickstart-node/package.json examples/quickstart-node/
COPY examples/web-demo/package.json examples/web-demo/
# No lifecycle scripts (the root `prepare` would build every workspace); then only the native
# modules the server needs: better-sqlite3's addon and esbuild's binary (for tsup).
RUN npm ci --ignore-scripts --no-audit \
 && npm rebuild better-sqlite3 esbuild
COPY packages packages
COPY apps/server apps/server
COPY openapi openapi
RUN npx turbo run build --filter=@voxkey/server... --output-logs=errors-only \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf packages/*/src apps/server/src packages/sdk examples node_modules/@voxkey/sdk node_modules/@voxkey/example-* \
 # onnxruntime-node ships every platform's runtime; the image is Linux.
 && rm -rf node_modules/onnxruntime-node/bin/napi-v*/darwin node_modules/onnxruntime-node/bin/napi-v*/win32

FROM ${BASE_IMAGE} AS runtime
ARG VOXKEY_UID=10001
RUN useradd --system --uid "${VOXKEY_UID}" --user-group --home-dir /app --no-create-home --shell /usr/sbin/nologin voxkey \
 && mkdir -p /var/lib/voxkey \
 && chown voxkey:voxkey /var/lib/voxkey
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./
COPY --from=build --chown=root:root /app/node_modules node_modules
COPY --from=build --chown=root:root /app/packages packages
COPY --from=build --chown=root:root /app/apps apps
COPY --chown=root:root openapi/openapi.json openapi/openapi.json
COPY --chown=root:root models models
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/voxkey \
    DATABASE_URL=sqlite:/var/lib/voxkey/voxkey.db \
    VOXKEY_MODELS_DIR=/app/models
USER voxkey
VOLUME ["/var/lib/voxkey"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "apps/server/bin/voxkey.js"]
CMD ["serve"]
