# Stagedoor: one static binary on distroless; the command is a subcommand of it:
# serve (the default), migrate, payrail, seed, demo, healthcheck. See docker-compose.yml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Node.js and npm from Debian, only to install the web pages' npm packages
# (package-lock.json), which scripts/vendor-web.sh copies into web/vendor.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# Modules and packages first, so these layers stay cached until their locks change.
COPY go.mod go.sum ./
RUN go mod download
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
RUN bash scripts/vendor-web.sh \
 && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/stagedoor ./cmd/stagedoor

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/stagedoor /stagedoor
USER nonroot
EXPOSE 8080
# No shell or curl here: health checks run "/stagedoor healthcheck [URL]" (see docker-compose.yml).
ENTRYPOINT ["/stagedoor"]
CMD ["serve"]
