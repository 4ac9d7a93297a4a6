# holdfast, built from this checkout: `docker compose up --build` runs it on the example.
FROM node:20-bookworm-slim AS build
WORKDIR /opt/holdfast
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY machines machines
COPY workers workers
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
WORKDIR /opt/holdfast
COPY --from=build /opt/holdfast/package.json ./
COPY --from=build /opt/holdfast/node_modules node_modules
COPY --from=build /opt/holdfast/dist dist
RUN mkdir -p /var/lib/holdfast && chown node:node /var/lib/holdfast
USER node
EXPOSE 9100
ENTRYPOINT ["node", "/opt/holdfast/dist/src/cli/main.js"]
# The dashboard listens on every address of the container, so the configuration must give it a
# password (http.passwordFile, e.g. /run/secrets/dashboard as docker-compose.yml mounts it):
# without one holdfast refuses to start (exit 2) rather than serve it to anyone who reaches it.
CMD ["run", "-c", "/etc/holdfast/holdfast.yaml", "--http", "0.0.0.0:9100"]
