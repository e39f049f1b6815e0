# syntax=docker/dockerfile:1
# outreach-api as a container: the single executable alone on a base holding only what it needs
# (glibc, libstdc++, CA certificates, a non-root user), run as that user (uid 65532), the database
# on the /var/lib/outreach-api volume, which that user owns.
#
# From a clone, with Docker (the executable is built in the `source` stage, from the registry's
# node image):
#   docker build -t outreach-api .
#   docker run -d -p 8080:8080 -v outreach-data:/var/lib/outreach-api outreach-api
# First account and token: docs/operating.md, "Docker".
#
# `npm run release` builds this same file with buildah, offline (build/image.ts): EXECUTABLE=release
# takes the executables it has just built from the build context (amd64/outreach-api,
# arm64/outreach-api) instead of the `source` stage, and BASE is a base it makes from Debian's own
# files, with what gcr.io/distroless/cc-debian12 holds that the executable uses.
# No RUN after the `source` stage: the final image has no shell.

ARG BASE=gcr.io/distroless/cc-debian12
ARG EXECUTABLE=source

# ---- source: the single executable built from this clone (npm run build embeds this image's Node) ----
FROM docker.io/library/node:20-bookworm AS source
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && ./dist/outreach-api --version \
 && mkdir -p /out/usr/local/bin /out/var/lib/outreach-api \
 && cp dist/outreach-api /out/usr/local/bin/outreach-api

# ---- release: the executable for the image's arch, already built ---------------------------------
FROM scratch AS release
ARG TARGETARCH
COPY ${TARGETARCH}/outreach-api /out/usr/local/bin/outreach-api
WORKDIR /out/var/lib/outreach-api

FROM ${EXECUTABLE} AS executable

# ---- the image --------------------------------------------------------------------------------
FROM ${BASE}
COPY --from=executable /out/usr/local/bin/outreach-api /usr/local/bin/outreach-api
# The database directory, owned by the user the server runs as: a new named or anonymous volume
# starts as a copy of it, owner included.
COPY --from=executable --chown=65532:65532 /out/var/lib/outreach-api/ /var/lib/outreach-api/
ENV OUTREACH_API_DB=/var/lib/outreach-api/outreach.db \
    OUTREACH_API_SERVER_HOST=0.0.0.0 \
    OUTREACH_API_SERVER_PORT=8080 \
    OUTREACH_API_READY_FILE=/tmp/outreach-api.ready.json
# nonroot in the base's /etc/passwd (home /home/nonroot, where the SQLite addon is cached).
USER 65532:65532
WORKDIR /var/lib/outreach-api
VOLUME ["/var/lib/outreach-api"]
EXPOSE 8080
# The executable's own readiness wait (GET /readyz at the address serve wrote to its ready file):
# no shell, no curl, and right whatever OUTREACH_API_SERVER_PORT says.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/outreach-api", "wait", "--ready-file", "/tmp/outreach-api.ready.json", "--timeout", "4s"]
# Exec form: SIGTERM from `docker stop` reaches the server, which drains and exits 0.
ENTRYPOINT ["/usr/local/bin/outreach-api"]
CMD ["serve"]
