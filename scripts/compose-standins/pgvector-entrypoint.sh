#!/bin/sh
# The pgvector stand-in's entrypoint (pgvector.Dockerfile), doing what the postgres image's
# does for docker-compose.yml: on the first start, initdb in $PGDATA with POSTGRES_USER as the
# superuser, POSTGRES_PASSWORD for connections over the network, POSTGRES_DB created; then run
# postgres as the postgres user. UTF-8 throughout: with SQL_ASCII psycopg would read bytes.
set -eu

if [ "${1#-}" != "${1:-}" ]; then
    set -- postgres "$@"
fi

if [ "${1:-}" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    chown -R postgres:postgres /var/lib/postgresql
    chmod 0700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "${1:-}" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?the database needs POSTGRES_PASSWORD}"
    user="${POSTGRES_USER:-postgres}"
    db="${POSTGRES_DB:-$user}"
    pwfile="$(mktemp)"
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb --pgdata="$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 \
        --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256
    rm -f "$pwfile"
    printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
    printf 'host all all all scram-sha-256\n' >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        quoted="$(printf '%s' "$db" | sed 's/"/""/g')"
        printf 'CREATE DATABASE "%s"\n' "$quoted" | postgres --single -D "$PGDATA" postgres > /dev/null
    fi
    echo "stand-in database initialised: user $user, database $db"
fi

exec "$@"
