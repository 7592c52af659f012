# The container image of petstore: its static binary on an empty base (scratch), run as
# a user without privileges. Build it with scripts/image VERSION, not with a bare
# `podman build .`: that script makes the build context this file copies from (the
# release binary for linux on the build machine's architecture, from scripts/release,
# and the build machine's CA certificates), so no base image is pulled and nothing is
# compiled inside a container. A multi-stage build would need a Go image to pull.
FROM scratch

# Outgoing TLS (webhooks to https endpoints, SMTP with STARTTLS or smtps) checks
# certificates against these. No time zone data: petstore loads no zone by name and
# works in UTC, which needs none.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY petstore /petstore
# The volume's mount point and a temporary folder (SQLite's, for large sorts), owned by
# the user the process runs as, so that a new volume starts writable by it.
COPY --chown=65532:65532 data /data
COPY --chown=65532:65532 --chmod=1777 tmp /tmp

USER 65532:65532
# Every interface of the container: only published ports reach it. The operator port
# (metrics, profiler) stays on the container's loopback unless PETSTORE_ADMIN_ADDR says
# otherwise (docs/OPERATING.md, Installing).
ENV PETSTORE_ADDR=0.0.0.0:8080 \
    PETSTORE_DATABASE=/data/petstore.db
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/petstore"]
CMD ["serve"]
