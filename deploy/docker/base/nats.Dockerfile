# NATS with JetStream from Debian's `nats-server` package, for the containerised test topology and
# the testcontainers fault suites (docs/design/operations.md#the-image). JetStream data in /data (mount a volume to keep
# it across a container restart).
ARG DEBIAN_IMAGE=aps-base/debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends nats-server \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
EXPOSE 4222 8222
ENTRYPOINT ["nats-server", "-js", "-sd", "/data", "-m", "8222"]
