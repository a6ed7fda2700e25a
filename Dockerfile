# syntax=docker/dockerfile:1
# tally: one static binary on a distroless base, running as an unprivileged user.
#   docker build -t tally .
#   docker compose up -d        (see docker-compose.yml)

# golang:1.26 tracks the newest 1.26.x, which satisfies go.mod's `go 1.26.8`
# (the image sets GOTOOLCHAIN=local, so it cannot fetch a newer toolchain).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/tally ./cmd/tally
# Directories for the WAL and the optional GeoIP database, owned by the runtime
# user so that fresh named volumes mounted there inherit that ownership.
RUN mkdir -p /out/var/lib/tally/wal /out/var/lib/tally/geo

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tally /usr/local/bin/tally
COPY --from=build --chown=65532:65532 /out/var/lib/tally /var/lib/tally
USER 65532:65532
ENV TALLY_ENV=production \
    TALLY_HTTP_ADDR=:8080 \
    TALLY_WAL_DIR=/var/lib/tally/wal
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/usr/local/bin/tally", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/tally"]
CMD ["serve"]
