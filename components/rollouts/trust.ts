import { caBundleDigest } from "../gateway/caBundle";

/**
 * A spoke's `mimir.readCaBundle` in the controller (ADR-056 D5): the Prometheus provider's transport
 * has no CA option of its own, only Go's system roots (argo-rollouts v1.9.0
 * metricproviders/prometheus/prometheus.go newHTTPTransport), so the bundle is added to them, never in
 * their place. Go reads the first certificate file that exists and then every file of the directories
 * in `SSL_CERT_DIR`, which replaces its default list (crypto/x509 root_unix.go loadSystemRoots,
 * root_linux.go certDirectories), so `SSL_CERT_FILE` stays unset and `SSL_CERT_DIR` is Go's two
 * directories plus the bundle's. Go skips the kubelet's `..data` link of a ConfigMap volume
 * (readUniqueDirectoryEntries) and reads each certificate once. It loads the roots once per process
 * (root.go systemRootsPool), so the bundle's digest is on the pod template and a new one rolls the
 * controller. Every TLS connection with the system roots trusts it; the API server's CA is unaffected.
 */

/** The ConfigMap in the controller namespace holding the bundle. */
export const READ_CA_CONFIGMAP = "argo-rollouts-addon-mimir-read-ca";
/** Its one key: the certificates, as `mimir.readCaBundle` normalised them. */
export const READ_CA_KEY = "ca-bundle.crt";
export const READ_CA_VOLUME = "mimir-read-ca";
/** Where the controller container mounts it: a directory of its own, so Go reads nothing else there. */
export const READ_CA_DIR = "/etc/argo-rollouts-addon/mimir-read-ca";
/** Go's certificate directories on Linux when `SSL_CERT_DIR` is unset (crypto/x509 root_linux.go `certDirectories`). */
export const GO_CERT_DIRECTORIES: readonly string[] = ["/etc/ssl/certs", "/etc/pki/tls/certs"];
/** Pod annotation carrying the bundle's sha256: a new bundle restarts the controller. */
export const READ_CA_DIGEST_ANNOTATION = "argo-rollouts-addon.platform/mimir-read-ca-sha256";

/** What the chart values and the ConfigMap carry for the hub read endpoint's CA, or undefined without a bundle. */
export function controllerTrust(readCaBundle: string | undefined) {
    if (!readCaBundle) return undefined;
    return {
        configMapData: { [READ_CA_KEY]: readCaBundle },
        extraEnv: [{ name: "SSL_CERT_DIR", value: [...GO_CERT_DIRECTORIES, READ_CA_DIR].join(":") }],
        volumes: [{ name: READ_CA_VOLUME, configMap: { name: READ_CA_CONFIGMAP } }],
        volumeMounts: [{ name: READ_CA_VOLUME, mountPath: READ_CA_DIR, readOnly: true }],
        podAnnotations: { [READ_CA_DIGEST_ANNOTATION]: caBundleDigest(readCaBundle) },
    };
}
