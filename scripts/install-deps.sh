#!/usr/bin/env bash
# Installs what holdfast's tests need on a fresh Debian machine with Node 20 and Go:
#   redis-server, PostgreSQL, the sqlite3 CLI and chromium (apt; the dashboard's browser test drives
#   it through playwright-core, which downloads no browser), FerretDB v1.24.2 (built with this machine's Go),
#   npm packages.
# Idempotent: a second run checks and does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

FERRETDB_VERSION=v1.24.2
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

# --- npm packages ----------------------------------------------------------------------------
stamp=node_modules/.holdfast-install-stamp
want="$(sha256sum package-lock.json | cut -d' ' -f1) $(node --version)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

say "ready: $(redis-server --version | cut -d' ' -f1-3), $(chromium --version 2>/dev/null | head -1), $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1), ferretdb $FERRETDB_VERSION, sqlite3 $(sqlite3 --version | cut -d' ' -f1), node $(node --version)"
