# syntax=docker/dockerfile:1
# outreach-api as a container: the single executable on a slim Debian, run as a non-root user,
# the database on the /var/lib/outreach-api volume (the path the systemd unit and the README use).
# Build: docker build -t outreach-api .
# Run:   docker run -d -p 8080:8080 -v outreach-data:/var/lib/outreach-api outreach-api
# First account and token: see docs/operating.md, "Docker".

# ---- build: the single executable (npm run build embeds the Node of this image) -------------
FROM node:20-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && ./dist/outreach-api --version

# ---- runtime: the executable alone -----------------------------------------------------------
FROM debian:bookworm-slim
# ca-certificates: TLS to SMTP and HTTP providers; curl: the HEALTHCHECK below.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 outreach \
 && useradd --system --uid 10001 --gid outreach --home-dir /var/lib/outreach-api --no-create-home --shell /usr/sbin/nologin outreach \
 && mkdir -p /var/lib/outreach-api \
 && chown outreach:outreach /var/lib/outreach-api
COPY --from=build /src/dist/outreach-api /usr/local/bin/outreach-api
ENV OUTREACH_API_DB=/var/lib/outreach-api/outreach.db \
    OUTREACH_API_SERVER_PORT=8080
USER outreach
WORKDIR /var/lib/outreach-api
VOLUME ["/var/lib/outreach-api"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
# Exec form: SIGTERM from `docker stop` reaches the server, which drains and exits 0.
ENTRYPOINT ["/usr/local/bin/outreach-api"]
CMD ["serve", "--host", "0.0.0.0"]
