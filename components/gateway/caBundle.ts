import { X509Certificate, createHash } from "crypto";
import { ConfigReader, NOT_SHOWN } from "../config/reader";

/**
 * A spoke's CA bundle for the hub's read endpoint (`mimir.readCaBundle`, ADR-056 D5): the private
 * CA certificates that sign the certificate the hub's ingest Gateway serves for the spoke's
 * hostname. The controller's gates and verify both trust them on top of the public roots (the
 * rollouts stage mounts them into the controller; tools/verify reads them from the stack file).
 *
 * Only CA certificates, as PEM `CERTIFICATE` blocks and nothing else: no key, no leaf certificate,
 * no text between the blocks. A value that is not such a bundle is never echoed in a message (a
 * pasted key must not reach a CI log); the message describes it instead.
 */

/** The shape of a bundle, for the stack file's JSON Schema: CERTIFICATE blocks and whitespace only. */
export const PEM_CERTIFICATES = /^\s*(-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----\s*)+$/;

/** What a bundle must be, for the configuration reference and every message. */
export const CA_BUNDLE_RULE =
    "one or more PEM CA certificates (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- blocks of certificates with basicConstraints CA:TRUE, valid now, with keyCertSign where they carry a keyUsage) and nothing else: no key, no leaf certificate, no text between the blocks";

/**
 * Longest bundle accepted: the API server refuses a ConfigMap whose data exceeds 1 MiB (kubernetes
 * pkg/apis/core/validation/validation.go ValidateConfigMap, `core.MaxSecretSize`, at v1.35.4). The
 * bundle adds to the public roots, so it needs only the private CAs of the read endpoint.
 */
export const CA_BUNDLE_MAX_LENGTH = 512 * 1024;

/** Any PEM block: its label and its text. */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

export interface CaCertificate {
    subject: string;
    notAfter: string;
    fingerprint256: string;
}

export type CaBundleReading = { ok: true; pem: string; certificates: CaCertificate[] } | { ok: false; given: string; why: string };

/**
 * Whether a certificate's keyUsage extension (2.5.29.15), when it has one, lacks keyCertSign. Go's
 * crypto/x509 then refuses to verify anything it signed (golang/go src/crypto/x509/x509.go go1.24
 * `CheckSignatureFrom`: `parent.KeyUsage != 0 && parent.KeyUsage&KeyUsageCertSign == 0` is a
 * ConstraintViolationError), so the controller and verify would trust nothing through it. Node's
 * X509Certificate names the extended key usages only, so the extension is read from the DER here:
 * OID, an optional critical flag, and an OCTET STRING holding the BIT STRING of usages.
 */
export function lacksKeyCertSign(der: Uint8Array): boolean {
    const oid = [0x06, 0x03, 0x55, 0x1d, 0x0f];
    for (let i = 0; i + oid.length < der.length; i++) {
        if (!oid.every((b, j) => der[i + j] === b)) {
            continue;
        }
        let p = i + oid.length;
        if (der[p] === 0x01 && der[p + 1] === 0x01) {
            p += 3;
        }
        // OCTET STRING (short length), then BIT STRING: length, unused bits, then the usage bits.
        if (der[p] !== 0x04 || der[p + 2] !== 0x03) {
            return false;
        }
        const bits = der[p + 3] >= 2 ? der[p + 5] : 0;
        // keyCertSign is bit 5 of the first byte, counted from its most significant bit.
        return (bits & 0x04) === 0;
    }
    return false;
}

/** `CN=x\nO=y` as `CN=x, O=y`. */
const oneLine = (dn: string): string => dn.split("\n").filter(Boolean).join(", ");

/**
 * Reads a bundle: each block parsed by Node's X.509 parser and held to be a CA. On success, `pem`
 * is the certificates alone, one block after the other with a final newline (whatever line ends
 * or trailing newline the stack file's YAML gave), so the ConfigMap and its digest depend on the
 * certificates only. On failure, `given` describes the value without showing it and `why` says
 * what is wrong with it.
 */
export function readCaBundle(value: string, now: Date = new Date()): CaBundleReading {
    const text = value.replace(/\r\n/g, "\n");
    const blocks = [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1], text: m[0] }));
    const given =
        blocks.length === 0
            ? `[not shown: no PEM block, ${text.length} characters]`
            : `[not shown: ${blocks.length} PEM block${blocks.length === 1 ? "" : "s"}: ${blocks.map((b) => b.label).join(", ")}]`;
    const fail = (why: string): CaBundleReading => ({ ok: false, given, why });
    if (text.length > CA_BUNDLE_MAX_LENGTH) {
        return fail(
            `it is ${text.length} characters; a ConfigMap holds at most 1 MiB: give only the private CAs that sign the hub's read endpoint (the public roots stay trusted)`,
        );
    }
    if (blocks.length === 0) {
        return fail("it has no PEM block");
    }
    const other = blocks.findIndex((b) => b.label !== "CERTIFICATE");
    if (other >= 0) {
        const key = /PRIVATE KEY/.test(blocks[other].label)
            ? " (a private key belongs to the server that presents the certificate, never in a stack file)"
            : "";
        return fail(`block ${other + 1} is a ${blocks[other].label}, not a CERTIFICATE${key}`);
    }
    if (!PEM_CERTIFICATES.test(text)) {
        return fail("it has text outside its CERTIFICATE blocks, or a block whose body is not base64");
    }
    const certificates: CaCertificate[] = [];
    for (const [i, b] of blocks.entries()) {
        let cert: X509Certificate;
        try {
            cert = new X509Certificate(b.text);
        } catch (e) {
            // OpenSSL's reason (ASN.1 internals) is not the user's to decode: say what the block is not.
            void e;
            return fail(`certificate ${i + 1} does not parse as X.509 (a PEM CERTIFICATE block whose DER is not a certificate)`);
        }
        const named = `certificate ${i + 1} (subject ${oneLine(cert.subject)})`;
        // Before the CA check: OpenSSL, under Node's `ca`, counts such a certificate as no CA at all,
        // and the message would blame basicConstraints.
        if (lacksKeyCertSign(cert.raw)) {
            return fail(
                `${named} has a keyUsage without keyCertSign: Go's crypto/x509, which the controller and verify use, refuses anything it signed; give a CA whose keyUsage includes keyCertSign`,
            );
        }
        if (!cert.ca) {
            return fail(
                `certificate ${i + 1} (subject ${oneLine(cert.subject)}, issuer ${oneLine(cert.issuer)}) is not a CA certificate (no basicConstraints CA:TRUE): give the CA that issued the read endpoint's certificate, not that certificate itself`,
            );
        }
        // Go verifies every certificate of a chain at the current time, the root's included (golang/go
        // src/crypto/x509/verify.go go1.24 `isValid`: `now.Before(c.NotBefore)`, `now.After(c.NotAfter)`
        // are an Expired CertificateInvalidError), and checks the parent's keyUsage (lacksKeyCertSign).
        if (now.getTime() > Date.parse(cert.validTo)) {
            return fail(`${named} expired on ${cert.validTo}: the controller's gates and verify would trust nothing it signed; give its renewed CA`);
        }
        if (now.getTime() < Date.parse(cert.validFrom)) {
            return fail(`${named} is not valid before ${cert.validFrom}: until then the controller's gates and verify would trust nothing it signed`);
        }
        certificates.push({ subject: oneLine(cert.subject), notAfter: cert.validTo, fingerprint256: cert.fingerprint256 });
    }
    return { ok: true, pem: `${blocks.map((b) => b.text).join("\n")}\n`, certificates };
}

/** The sha256 of a bundle's PEM, hex: what the controller's pod template carries so a new bundle restarts it. */
export function caBundleDigest(pem: string): string {
    return createHash("sha256").update(pem).digest("hex");
}

/**
 * Reads `mimir.readCaBundle`: CA certificates only (`readCaBundle` above), and only where a
 * certificate is checked. A hub (`hubAddress` given) reads Mimir at its in-cluster http address,
 * so its gates and verify check no certificate there and a bundle would change nothing but the
 * controller's trust: refused. So is a bundle beside an http `mimir.readEndpoint`. The value is
 * never shown, only what it holds.
 */
export function readSpokeCaBundle(r: ConfigReader, value: unknown, where: { endpointUrl?: string; hubAddress?: string }): string | undefined {
    const key = "mimir.readCaBundle";
    const endpointUrl = where.endpointUrl;
    if (value === undefined || value === null) {
        return undefined;
    }
    if (where.hubAddress !== undefined) {
        r.problemDescribed(
            key,
            NOT_SHOWN,
            `only applies to a spoke: the hub's gates read Mimir in-cluster over http (${where.hubAddress}), where no certificate is checked`,
        );
        return undefined;
    }
    if (typeof value !== "string") {
        r.problemDescribed(
            key,
            `[not shown: ${Array.isArray(value) ? "a list" : typeof value}]`,
            `must be a string: ${CA_BUNDLE_RULE} (a YAML block scalar, readCaBundle: |)`,
        );
        return undefined;
    }
    const bundle = readCaBundle(value);
    if (!bundle.ok) {
        r.problemDescribed(key, bundle.given, `must be ${CA_BUNDLE_RULE}; ${bundle.why}`);
        return undefined;
    }
    if (endpointUrl?.startsWith("http://")) {
        r.problemDescribed(
            key,
            `[${bundle.certificates.length} CA certificate${bundle.certificates.length === 1 ? "" : "s"}]`,
            `only applies to an https read endpoint; mimir.readEndpoint is ${endpointUrl}, where no certificate is checked`,
        );
        return undefined;
    }
    return bundle.pem;
}
