import { caBundleDigest } from "../gateway/caBundle";

/**
 * A spoke's `mimir.readCaBundle` in the controller (ADR-056 D5): the gates query the hub's read
 * endpoint with the Prometheus provider, whose transport has no CA option of its own: a
 * `tls.Config` with only `InsecureSkipVerify`, so Go's system roots (argo-rollouts v1.9.0
 * metricproviders/prometheus/prometheus.go `newHTTPTransport`). The image's roots are
 * /etc/ssl/certs/ca-certificates.crt (gcr.io/distroless/static-debian12, argo-rollouts v1.9.0
 * Dockerfile). The bundle is added to them, never put in their place:
 *
 * - Go reads the first certificate file that exists (`SSL_CERT_FILE`, else its list, which starts
 *   with /etc/ssl/certs/ca-certificates.crt) and then every file of the certificate directories
 *   (`SSL_CERT_DIR`, colon-separated, else /etc/ssl/certs and /etc/pki/tls/certs); a variable
 *   replaces its default list (Go crypto/x509 root_unix.go `loadSystemRoots`, root_linux.go
 *   `certFiles`, `certDirectories`, read at go1.26; the v1.9.0 image is built with golang:1.24).
 *   So `SSL_CERT_FILE` stays unset and `SSL_CERT_DIR` is Go's two directories plus the bundle's.
 * - The bundle is a ConfigMap volume. The kubelet writes it as `<key> -> ..data/<key>`,
 *   `..data -> ..<timestamp>` and the directory `..<timestamp>` (kubernetes
 *   pkg/volume/util/atomic_writer.go at v1.35.4). Go skips a symlink whose target has no slash
 *   (`..data`, `readUniqueDirectoryEntries`, `isSameDirSymlink`), cannot read the timestamped
 *   directory as a file, and reads `<key>` through its link: each certificate once.
 * - Go loads the system roots once per process (crypto/x509 root.go `systemRootsPool`, a
 *   `sync.Once`), so a changed bundle takes effect only in new pods: its digest is on the pod
 *   template, and a new bundle rolls the controller.
 *
 * The controller trusts the bundle for every TLS connection it opens with the system roots (the
 * plugin download and notification services too); the API server's CA is its own
 * (the ServiceAccount's), unaffected.
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

/** What the chart values and the ConfigMap carry for a bundle. */
export interface ControllerTrust {
    configMapData: Record<string, string>;
    extraEnv: { name: string; value: string }[];
    volumes: Record<string, unknown>[];
    volumeMounts: Record<string, unknown>[];
    podAnnotations: Record<string, string>;
}

/** The controller's trust of the hub's read endpoint's CA, or undefined without a bundle. */
export function controllerTrust(readCaBundle: string | undefined): ControllerTrust | undefined {
    if (!readCaBundle) {
        return undefined;
    }
    return {
        configMapData: { [READ_CA_KEY]: readCaBundle },
        extraEnv: [{ name: "SSL_CERT_DIR", value: [...GO_CERT_DIRECTORIES, READ_CA_DIR].join(":") }],
        volumes: [{ name: READ_CA_VOLUME, configMap: { name: READ_CA_CONFIGMAP } }],
        volumeMounts: [{ name: READ_CA_VOLUME, mountPath: READ_CA_DIR, readOnly: true }],
        podAnnotations: { [READ_CA_DIGEST_ANNOTATION]: caBundleDigest(readCaBundle) },
    };
}
