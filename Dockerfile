# syntax=docker/dockerfile:1
# Mnemograph's image: the compiled CLI on Node 20 (Debian 12 slim), production dependencies
# only, as the unprivileged `node` user. `docker run IMAGE serve|worker|migrate|mcp --user U`
# (default: serve on PORT 8080). The stores are not inside: point NEO4J_URI, DATABASE_URL and
# REDIS_URL at them (docker-compose.yml does). Build: `docker build -t mnemograph .`
ARG NODE_VERSION=20.20.2

# --- build: every dependency, TypeScript compiled to dist/, the studio (Vite) to studio/dist/
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# No install scripts: tsc needs none, and onnxruntime-node's would fetch CUDA libraries.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY studio ./studio
RUN npm run build

# --- prod-deps: production dependencies only (no optional USE-lite runtime), onnxruntime-node's binaries for other platforms removed
FROM node:${NODE_VERSION}-bookworm-slim AS prod-deps
# Set by BuildKit to the platform being built (amd64, arm64).
ARG TARGETARCH
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
# onnxruntime-node ships bin/napi-v*/<os>/<arch>/ for darwin, win32 and linux (x64, arm64):
# keep linux/<this arch> only (about 290 MB of the 335 MB are other platforms).
RUN case "${TARGETARCH:-amd64}" in amd64) ort=x64 ;; arm64) ort=arm64 ;; *) echo "unsupported architecture ${TARGETARCH}" >&2; exit 1 ;; esac \
 && for napi in node_modules/onnxruntime-node/bin/napi-v*; do \
      find "$napi" -mindepth 1 -maxdepth 1 ! -name linux -exec rm -rf {} + \
      && find "$napi/linux" -mindepth 1 -maxdepth 1 ! -name "$ort" -exec rm -rf {} + \
      && test -f "$napi/linux/$ort/onnxruntime_binding.node"; \
    done

# --- runtime
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    API_HOST=0.0.0.0 \
    PORT=8080 \
    EMBEDDING_MODEL_DIR=/var/lib/mnemograph/models \
    AUDIT_SPOOL_DIR=/var/lib/mnemograph/audit-spool
WORKDIR /app
# The volumes' mount points, owned by the user the service runs as (a new named volume copies this ownership).
RUN mkdir -p /var/lib/mnemograph/models /var/lib/mnemograph/audit-spool \
 && chown -R node:node /var/lib/mnemograph
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY cypher ./cypher
COPY sql ./sql
COPY config/mnemograph.env.example ./config/
COPY --from=build /app/dist ./dist
COPY --from=build /app/studio/dist ./studio/dist
USER node
# The local embedding model (downloaded once from Maven Central, SHA-256 checked) and audit
# records spooled while PostgreSQL is down: both must outlive the container.
VOLUME ["/var/lib/mnemograph/models", "/var/lib/mnemograph/audit-spool"]
EXPOSE 8080
# /readyz: 200 when Neo4j, PostgreSQL and Redis answer (503 while draining or a store is down).
# Node's fetch, as the slim image has no curl. For `serve` only: compose disables it for the others.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]
