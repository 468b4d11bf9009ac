#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler and kubectl into $OUT in one go
# build, so shared packages compile once. Each binary is version-stamped: unstamped builds report
# gitVersion "v0.0.0-master+$Format:%H$" (kubernetes/component-base version/base.go at v0.35.4),
# and the kubernetes provider's Helm renders Capabilities.KubeVersion from /version, so a chart
# with a kubeVersion constraint would refuse the cluster.
set -euo pipefail
version="$(go list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="$(echo "${version}" | cut -d. -f2)"
stamp=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    stamp+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
    stamp+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done
go build -ldflags "-s -w${stamp}" -o "${OUT}/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kubectl
