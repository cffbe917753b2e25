# PostgreSQL from Debian's `postgresql` package, for the containerised test topology and the
# testcontainers fault suites (docs/design/operations.md#the-image): no image registry is reachable here, Debian's
# packages are. Not a production image: the chart points at a managed or in-chart PostgreSQL.
#
#   docker run -e POSTGRES_PASSWORD=… -v pgdata:/var/lib/postgresql/data aps-base/postgres:15
#
# The first start initialises the cluster (scram-sha-256 for TCP, password from POSTGRES_PASSWORD,
# database POSTGRES_DB, default `aps`), then runs postgres in the foreground as `postgres`.
ARG DEBIAN_IMAGE=aps-base/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
 && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
