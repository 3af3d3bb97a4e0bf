# syntax=docker/dockerfile:1
# The troupe controller manager. Build: make docker-build IMG=<registry>/troupe:<tag>

# 1. Compile TypeScript and bundle the dashboard page.
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
COPY scripts ./scripts
RUN npm run build && node scripts/build-web.ts

# 2. Production dependencies only.
FROM node:24-slim AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# 3. The runtime image: compiled code, production modules, manifests; no npm, no sources.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/build ./build
COPY package.json ./
COPY bin ./bin
COPY config ./config
# The image's own non-root user (node, uid 1000), numeric so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 8081 9443
ENTRYPOINT ["node", "bin/troupe.js"]
CMD ["run", "--leader-elect"]
