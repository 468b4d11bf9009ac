#!/usr/bin/env bash
# Builds etcd into $OUT (see ../build.sh).
set -euo pipefail
go build -ldflags "-s -w" -o "${OUT}/etcd" go.etcd.io/etcd/server/v3
