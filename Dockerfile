# Stagedoor: one static binary on distroless; the command is a subcommand of it:
# serve (the default), migrate, payrail, seed, demo, healthcheck. See docker-compose.yml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
# Modules first, so this layer stays cached until go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/stagedoor ./cmd/stagedoor

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/stagedoor /stagedoor
USER nonroot
EXPOSE 8080
# No shell or curl here: health checks run "/stagedoor healthcheck [URL]" (see docker-compose.yml).
ENTRYPOINT ["/stagedoor"]
CMD ["serve"]
