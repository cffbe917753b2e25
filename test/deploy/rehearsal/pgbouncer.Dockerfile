# PgBouncer from Debian's `pgbouncer` package, the rehearsal's stand-in for the chart's
# edoburu/pgbouncer (no image registry is reachable here; Debian's packages are), built on the local
# aps-base/debian base as scripts/image.mjs builds its infrastructure images
# (test/deploy/rehearsal/images.ts builds it as aps-rehearsal-pgbouncer:<suite>).
#
# The chart's pod runs `/bin/sh -c '… exec pgbouncer /etc/pgbouncer/pgbouncer.ini'` as uid 70 with
# the ini mounted from its ConfigMap and the userlist written into an emptyDir: this image only
# needs `sh` and `pgbouncer` on the PATH. No USER: the pod's runAsUser applies.
ARG DEBIAN_IMAGE=aps-base/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends pgbouncer \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /usr/sbin/pgbouncer /usr/local/bin/pgbouncer
EXPOSE 6432
ENTRYPOINT []
CMD ["pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]
