# syntax=docker/dockerfile:1
# The service and its web panel in one image: built in a full Node image (npm ci, the panel's Vite
# build), run from a slim one as the unprivileged `node` user with only what runs (sources — Node
# runs TypeScript directly —, migrations, production dependencies, the built panel).
#
#   docker build -t automation-service .
#   docker run -p 3000:3000 -e APP_SECRET=… -v automation-data:/data automation-service
#
# Without DATABASE_URL it keeps the embedded database in /data; compose.yaml runs two replicas on
# PostgreSQL.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Dependencies first (a layer that changes only with the lockfile); the panel is built below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build:panel \
  && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
RUN mkdir -p /data && chown node:node /data
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/src ./src
COPY --from=build --chown=root:root /app/migrations ./migrations
COPY --from=build --chown=root:root /app/panel/dist ./panel/dist
USER node
VOLUME ["/data"]
EXPOSE 3000
# /readyz answers 200 once the database is reachable (503 otherwise).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "src/main.ts"]
