# The reference server from this repository, as `npm start` runs it.
FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
ENV HOST=0.0.0.0 PORT=3000
EXPOSE 3000
# npm forwards SIGTERM poorly; run the server as npm start does (with --no-node-snapshot, which the
# V8 program runtime needs), so shutdown is graceful.
CMD ["npx", "--no-install", "tsx", "--no-node-snapshot", "--conditions=@trading-platform/source", "packages/server/src/main.ts"]
