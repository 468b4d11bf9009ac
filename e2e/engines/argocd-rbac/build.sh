#!/usr/bin/env bash
# Builds argocd-rbac-enforce (main.go: the RBAC enforcer of ArgoCD v3.5.1's API server, asked
# JSON questions on stdin) into $OUT (see ../build.sh).
set -euo pipefail
go build -ldflags "-s -w" -o "${OUT}/argocd-rbac-enforce" .
