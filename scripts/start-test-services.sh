#!/usr/bin/env bash
# The tests talk to a real PostgreSQL (127.0.0.1:5432, database "test", role "root", trust auth)
# and a real Redis (127.0.0.1:6379). Starts whichever is not answering; on a machine without
# them, installs Debian's packages and sets PostgreSQL up that way first.
set -euo pipefail
sudo=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
# As root there may be no sudo at all: runuser switches to the postgres role then.
as_postgres() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi; }
apt_updated=""
install() {
  [ -n "$apt_updated" ] || { $sudo apt-get update; apt_updated=1; }
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
}

wait_until() { # <what> <command…>: up to 30 s
  local what=$1; shift
  for _ in $(seq 1 60); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
  echo "$what did not start" >&2; return 1
}

if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  command -v pg_ctlcluster >/dev/null || install postgresql
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  $sudo pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  wait_until PostgreSQL pg_isready -h 127.0.0.1 -p 5432 -q
fi
# The role and database the tests use, with trust on loopback (a test machine only).
if ! psql -h 127.0.0.1 -U root -d test -Atc 'SELECT 1' >/dev/null 2>&1; then
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  if ! $sudo grep -q '^host all all 127.0.0.1/32 trust' "$hba"; then
    $sudo sed -i '1i host all all 127.0.0.1/32 trust' "$hba"
    $sudo pg_ctlcluster --skip-systemctl-redirect "$version" main reload
  fi
  as_postgres psql -Atc "SELECT 1 FROM pg_roles WHERE rolname = 'root'" | grep -q 1 \
    || as_postgres createuser --superuser root
  as_postgres psql -Atc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
    || as_postgres createdb --owner root test
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; then
  command -v redis-server >/dev/null || install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_until Redis sh -c 'redis-cli -h 127.0.0.1 -p 6379 ping | grep -q PONG'
fi
echo "PostgreSQL and Redis are answering on 127.0.0.1."
