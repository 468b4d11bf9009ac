import { X509Certificate, createHash } from "crypto";
import { ConfigReader, NOT_SHOWN } from "../config/reader";

/**
 * A spoke's CA bundle for the hub's read endpoint (`mimir.readCaBundle`, ADR-056 D5), trusted by the
 * controller's gates and by verify beside the public roots. Only PEM `CERTIFICATE` blocks of CAs: a
 * value that is anything else is described, never echoed (a pasted key must not reach a CI log).
 */

/** The shape of a bundle, for the stack file's JSON Schema: CERTIFICATE blocks and whitespace only. */
export const PEM_CERTIFICATES = /^\s*(-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----\s*)+$/;

/** What a bundle must be, for the configuration reference and every message. */
export const CA_BUNDLE_RULE =
    "one or more PEM CA certificates (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE----- blocks of certificates with basicConstraints CA:TRUE, valid now, with keyCertSign where they carry a keyUsage) and nothing else: no key, no leaf certificate, no text between the blocks";

/** A ConfigMap holds at most 1 MiB (kubernetes pkg/apis/core/validation/validation.go ValidateConfigMap at v1.35.4). */
const CA_BUNDLE_MAX_LENGTH = 512 * 1024;

/** Any PEM block: its label and its text. */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

export type CaBundleReading = { ok: true; pem: string; count: number } | { ok: false; given: string; why: string };

/** `CN=x\nO=y` as `CN=x, O=y`. */
const oneLine = (dn: string): string => dn.split("\n").filter(Boolean).join(", ");

/**
 * Reads a bundle: each block parsed by Node's X.509 parser and held to be a CA valid at `now`. On
 * success, `pem` is the blocks alone, each ending in a newline, so the ConfigMap and its digest
 * depend on the certificates only; on failure, `given` describes the value without showing it.
 */
export function readCaBundle(value: string, now: Date = new Date()): CaBundleReading {
    const text = value.replace(/\r\n/g, "\n");
    const blocks = [...text.matchAll(PEM_BLOCK)].map((m) => ({ label: m[1], text: m[0] }));
    const given = blocks.length
        ? `[not shown: ${blocks.length} PEM block${blocks.length === 1 ? "" : "s"}: ${blocks.map((b) => b.label).join(", ")}]`
        : `[not shown: no PEM block, ${text.length} characters]`;
    const fail = (why: string): CaBundleReading => ({ ok: false, given, why });
    if (text.length > CA_BUNDLE_MAX_LENGTH) {
        return fail(
            `it is ${text.length} characters; a ConfigMap holds at most 1 MiB: give only the private CAs that sign the hub's read endpoint (the public roots stay trusted)`,
        );
    }
    if (blocks.length === 0) return fail("it has no PEM block");
    const other = blocks.findIndex((b) => b.label !== "CERTIFICATE");
    if (other >= 0) {
        const key = /PRIVATE KEY/.test(blocks[other].label)
            ? " (a private key belongs to the server that presents the certificate, never in a stack file)"
            : "";
        return fail(`block ${other + 1} is a ${blocks[other].label}, not a CERTIFICATE${key}`);
    }
    if (!PEM_CERTIFICATES.test(text)) return fail("it has text outside its CERTIFICATE blocks, or a block whose body is not base64");
    for (const [i, b] of blocks.entries()) {
        let cert: X509Certificate;
        try {
            cert = new X509Certificate(b.text);
        } catch {
            return fail(`certificate ${i + 1} does not parse as X.509 (a PEM CERTIFICATE block whose DER is not a certificate)`);
        }
        const named = `certificate ${i + 1} (subject ${oneLine(cert.subject)})`;
        // OpenSSL's X509_check_ca, behind `ca`, also refuses a keyUsage without keyCertSign, as Go's
        // crypto/x509 does for a parent (golang/go src/crypto/x509/x509.go go1.24 CheckSignatureFrom).
        if (!cert.ca) {
            return fail(
                `certificate ${i + 1} (subject ${oneLine(cert.subject)}, issuer ${oneLine(cert.issuer)}) is not a CA certificate (no basicConstraints CA:TRUE) or has a keyUsage without keyCertSign: give the CA that issued the read endpoint's certificate, not that certificate itself`,
            );
        }
        // Go checks every certificate of a chain at the current time (src/crypto/x509/verify.go go1.24 isValid).
        if (now.getTime() > Date.parse(cert.validTo)) {
            return fail(`${named} expired on ${cert.validTo}: the controller's gates and verify would trust nothing it signed; give its renewed CA`);
        }
        if (now.getTime() < Date.parse(cert.validFrom)) {
            return fail(`${named} is not valid before ${cert.validFrom}: until then the controller's gates and verify would trust nothing it signed`);
        }
    }
    return { ok: true, pem: `${blocks.map((b) => b.text).join("\n")}\n`, count: blocks.length };
}

/** The sha256 of a bundle's PEM, hex: what the controller's pod template carries so a new bundle restarts it. */
export function caBundleDigest(pem: string): string {
    return createHash("sha256").update(pem).digest("hex");
}

/**
 * Reads `mimir.readCaBundle`, only where a certificate is checked: never on a hub (`hubAddress`: its
 * gates read Mimir in-cluster over http) nor beside an http `mimir.readEndpoint`.
 */
export function readSpokeCaBundle(r: ConfigReader, value: unknown, where: { endpointUrl?: string; hubAddress?: string }): string | undefined {
    const key = "mimir.readCaBundle";
    if (value == null) return undefined;
    if (where.hubAddress !== undefined) {
        r.problemDescribed(
            key,
            NOT_SHOWN,
            `only applies to a spoke: the hub's gates read Mimir in-cluster over http (${where.hubAddress}), where no certificate is checked`,
        );
        return undefined;
    }
    if (typeof value !== "string") {
        const what = `[not shown: ${Array.isArray(value) ? "a list" : typeof value}]`;
        r.problemDescribed(key, what, `must be a string: ${CA_BUNDLE_RULE} (a YAML block scalar, readCaBundle: |)`);
        return undefined;
    }
    const bundle = readCaBundle(value);
    if (!bundle.ok) {
        r.problemDescribed(key, bundle.given, `must be ${CA_BUNDLE_RULE}; ${bundle.why}`);
        return undefined;
    }
    if (where.endpointUrl?.startsWith("http://")) {
        const what = `[${bundle.count} CA certificate${bundle.count === 1 ? "" : "s"}]`;
        r.problemDescribed(key, what, `only applies to an https read endpoint; mimir.readEndpoint is ${where.endpointUrl}, where no certificate is checked`);
        return undefined;
    }
    return bundle.pem;
}
