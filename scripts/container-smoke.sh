#!/usr/bin/env bash
# Container smoke run (not part of `npm test`): builds the image and runs the quick start against
# the compose stack (PostgreSQL, one API process, one worker process).
#
#   sudo scripts/container-smoke.sh            (root: debootstrap needs it)
#
# Works without any container registry: the base image is Debian bookworm from debootstrap plus
# this machine's Node.js (binary, npm and headers), and PostgreSQL is Debian's postgresql package
# on that base. Needs: a running Docker daemon (Debian: apt-get install docker.io), docker compose
# (the v2 plugin) or docker-compose (v1, what Debian bookworm ships), debootstrap, and the
# repository installed (`npm ci`) for the quick start.
#
# Environment: SMOKE_CACHE (default /var/tmp/voxkey-smoke: the debootstrap root filesystem, kept
# between runs), SMOKE_PORT (8088: the API on the host), SMOKE_KEEP=1 leaves the stack running.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${SMOKE_CACHE:-/var/tmp/voxkey-smoke}
API_PORT=${SMOKE_PORT:-8088}
PG_PORT=${SMOKE_PG_PORT:-15432}
WEBHOOK_PORT=${SMOKE_WEBHOOK_PORT:-3999}
BASE_IMAGE=voxkey-smoke/node:20-bookworm
PG_IMAGE=voxkey-smoke/postgres:15
IMAGE=voxkey:smoke
PROJECT=voxkey-smoke
AUDIO="$ROOT/packages/engine/test/fixtures/audio"
WORK=$(mktemp -d)

step_started=0
step() { step_started=$(date +%s); echo; echo "== $*"; }
done_step() { echo "   ok ($(($(date +%s) - step_started)) s)"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
  COMPOSE=(docker-compose)
else
  fail "neither 'docker compose' nor 'docker-compose' is installed (Debian bookworm: apt-get install docker-compose)"
fi
command -v debootstrap >/dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"
docker info >/dev/null 2>&1 || fail "no Docker daemon answers (apt-get install docker.io; start dockerd)"
[ -d "$ROOT/node_modules" ] || fail "run npm ci in $ROOT first (the quick start runs from the repository)"

# The stack as documented, plus smoke-only changes: local images, and the worker on the host's
# network so it can deliver webhooks to the quick start's receiver on 127.0.0.1 (the API, which
# checks the callback URL, stays on the compose network and reaches PostgreSQL by its name). Production
# never delivers to loopback (it refuses to start with WEBHOOK_ALLOW_LOOPBACK), so both run in
# development mode, which allows loopback callbacks; the image's HOST=0.0.0.0 and the key still apply.
cat >"$WORK/smoke.override.yaml" <<EOF
services:
  postgres:
    ports: ["127.0.0.1:$PG_PORT:5432"]
  api:
    environment:
      NODE_ENV: development
  worker:
    network_mode: host
    environment:
      DATABASE_URL: postgres://voxkey:voxkey@127.0.0.1:$PG_PORT/voxkey
      NODE_ENV: development
EOF
export VOXKEY_IMAGE=$IMAGE POSTGRES_IMAGE=$PG_IMAGE VOXKEY_PORT=$API_PORT ENGINE_THREADS=1
VOXKEY_ENCRYPTION_KEY=$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')
export VOXKEY_ENCRYPTION_KEY
compose() { "${COMPOSE[@]}" -p "$PROJECT" -f "$ROOT/compose.yaml" -f "$WORK/smoke.override.yaml" "$@"; }

cleanup() {
  local status=$?
  [ -n "${QUICKSTART_PID:-}" ] && kill "$QUICKSTART_PID" 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    echo "--- compose logs (last 80 lines per service)"
    compose logs --no-color --tail=80 2>/dev/null || true
  fi
  if [ "${SMOKE_KEEP:-0}" != 1 ]; then compose down -v --remove-orphans >/dev/null 2>&1 || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

started=$(date +%s)
echo "Container smoke run, $(date -u +%Y-%m-%dT%H:%MZ), $("${COMPOSE[@]}" version --short 2>/dev/null || "${COMPOSE[@]}" version | head -1), Docker $(docker version --format '{{.Server.Version}}')"

step "base image $BASE_IMAGE (debootstrap bookworm + this machine's Node.js $(node --version))"
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  if [ ! -d "$CACHE/rootfs" ]; then
    mkdir -p "$CACHE"
    debootstrap --variant=minbase bookworm "$CACHE/rootfs.partial" http://deb.debian.org/debian >"$CACHE/debootstrap.log"
    mv "$CACHE/rootfs.partial" "$CACHE/rootfs"
  fi
  NODE_BIN=$(command -v node)
  NODE_PREFIX=$(dirname "$(dirname "$(readlink -f "$NODE_BIN")")")
  NPM_DIR=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  ROOTFS="$CACHE/rootfs"
  # Laid out like the official node images: /usr/local/{bin,lib/node_modules,include/node}.
  install -D -m 755 "$(readlink -f "$NODE_BIN")" "$ROOTFS/usr/local/bin/node"
  rm -rf "$ROOTFS/usr/local/lib/node_modules/npm" "$ROOTFS/usr/local/include/node"
  mkdir -p "$ROOTFS/usr/local/lib/node_modules" "$ROOTFS/usr/local/include"
  cp -a "$NPM_DIR" "$ROOTFS/usr/local/lib/node_modules/npm"
  cp -a "$NODE_PREFIX/include/node" "$ROOTFS/usr/local/include/node"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"
  # This machine's certificate authorities too (a TLS-intercepting egress proxy signs the npm
  # registry's certificate with its own CA): kept across the build stage's apt-get install.
  mkdir -p "$ROOTFS/usr/local/share/ca-certificates" "$ROOTFS/etc/ssl/certs"
  cp /usr/local/share/ca-certificates/*.crt "$ROOTFS/usr/local/share/ca-certificates/" 2>/dev/null || true
  [ -f /etc/ssl/certs/ca-certificates.crt ] && cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$ROOTFS/var/cache/apt/archives/"*.deb
  tar -C "$ROOTFS" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
    --change 'CMD ["node"]' - "$BASE_IMAGE" >/dev/null
fi
docker run --rm "$BASE_IMAGE" sh -c 'node --version && npm --version' | tr '\n' ' '
done_step

step "PostgreSQL image $PG_IMAGE (Debian's postgresql on the base; POSTGRES_* variables as in the official image)"
if ! docker image inspect "$PG_IMAGE" >/dev/null 2>&1; then
  mkdir -p "$WORK/pg"
  cat >"$WORK/pg/entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
BIN=/usr/lib/postgresql/15/bin
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "$POSTGRES_PASSWORD" >/tmp/pwfile
  "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm /tmp/pwfile
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  "$BIN/createdb" -U "$POSTGRES_USER" "$POSTGRES_DB"
  "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*'
EOF
  cat >"$WORK/pg/Dockerfile" <<EOF
FROM $BASE_IMAGE
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 && rm -rf /var/lib/apt/lists/*
COPY entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PGDATA=/var/lib/postgresql/data PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN chmod 755 /usr/local/bin/postgres-entrypoint && mkdir -p "\$PGDATA" && chown -R postgres:postgres /var/lib/postgresql
USER postgres
EXPOSE 5432
CMD ["postgres-entrypoint"]
EOF
  nice docker build -t "$PG_IMAGE" "$WORK/pg" >"$WORK/pg-build.log" 2>&1 || { tail -30 "$WORK/pg-build.log"; fail "docker build (PostgreSQL)"; }
fi
done_step

step "image $IMAGE (docker build --build-arg BASE_IMAGE=$BASE_IMAGE)"
nice docker build --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$IMAGE" "$ROOT" >"$WORK/build.log" 2>&1 || { tail -60 "$WORK/build.log"; fail "docker build"; }
docker image inspect "$IMAGE" --format 'size {{.Size}} bytes, user {{.Config.User}}, healthcheck {{json .Config.Healthcheck.Test}}, cmd {{json .Config.Entrypoint}} {{json .Config.Cmd}}'
[ "$(docker image inspect "$IMAGE" --format '{{.Config.User}}')" = voxkey ] || fail "the image does not run as the voxkey user"
docker run --rm "$IMAGE" --version
help=$(docker run --rm "$IMAGE" --help) && head -1 <<<"$help"
done_step

step "compose stack up (${COMPOSE[*]}: postgres, api, worker)"
compose down -v --remove-orphans >/dev/null 2>&1 || true
compose up -d --no-build
for _ in $(seq 1 90); do
  health=$(docker inspect --format '{{.State.Health.Status}}' "$(compose ps -q api)" 2>/dev/null || echo starting)
  [ "$health" = healthy ] && break
  sleep 2
done
[ "$health" = healthy ] || fail "the api container is not healthy ($health)"
curl -fsS "http://127.0.0.1:$API_PORT/healthz"; echo
curl -fsS "http://127.0.0.1:$API_PORT/readyz"; echo
# (The log is read into a variable first: `grep -q` closing a pipe early fails the pipeline under pipefail.)
worker_ready() { local log; log=$(compose logs --no-color worker 2>/dev/null); grep -q 'engine ready' <<<"$log"; }
for _ in $(seq 1 60); do
  worker_ready && break
  sleep 2
done
worker_ready || fail "the worker did not load the engine"
[ "$(docker inspect --format '{{.Config.User}}' "$(compose ps -q worker)")" = voxkey ] || fail "the worker does not run as voxkey"
done_step

step "demo organisation (printed by the API's first start)"
logs=$(compose logs --no-color api)
ORG_ID=$(sed -n 's/.*organisation id: *\([0-9]*\).*/\1/p' <<<"$logs" | head -1)
TOKEN=$(sed -n 's/.*trial token: *\(vk_[A-Za-z0-9_-]*\).*/\1/p' <<<"$logs" | head -1)
SECRET=$(sed -n 's/.*webhook secret: *\(whsec_[A-Za-z0-9+/=_-]*\).*/\1/p' <<<"$logs" | head -1)
[ -n "$ORG_ID" ] && [ -n "$TOKEN" ] && [ -n "$SECRET" ] || fail "no demo organisation in the api's log"
curl -fsS -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$API_PORT/v1/organisations/$ORG_ID"; echo
curl -fsS -o /dev/null -w 'GET /docs %{http_code}\n' "http://127.0.0.1:$API_PORT/docs"
compose exec -T api node apps/server/bin/voxkey.js org list
done_step

step "quick start (examples/quickstart-node: enrol, webhook, verify, webhook) against the stack"
(
  cd "$ROOT"
  VOXKEY_URL="http://127.0.0.1:$API_PORT" VOXKEY_TOKEN="$TOKEN" VOXKEY_ORG_ID="$ORG_ID" VOXKEY_WEBHOOK_SECRET="$SECRET" \
    ENROL_AUDIO="$AUDIO/alice_1.wav" VERIFY_AUDIO="$AUDIO/alice_2.wav" WEBHOOK_PORT="$WEBHOOK_PORT" WAIT_TIMEOUT_MS=300000 \
    nice npm start --silent -w @voxkey/example-quickstart-node
) | tee "$WORK/quickstart.log"
grep -q 'enrollment.completed' "$WORK/quickstart.log" || fail "no enrollment.completed webhook"
grep -q 'verification.completed' "$WORK/quickstart.log" || fail "no verification.completed webhook"
done_step

step "graceful stop"
compose stop -t 40 api worker >/dev/null
compose ps
done_step

echo
echo "PASSED in $(($(date +%s) - started)) s"
