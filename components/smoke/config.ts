import { field, readSection, type Values } from "../config/declare";
import { IMAGE_BY_DIGEST_RULE } from "../config/reader";
import { PLATFORM_NAMESPACES } from "../config/reader";
import { ConfigReader, DNS_LABEL, HOSTNAME } from "../config/reader";

/** The smoke canary's section, `smokeTest` (ADR-056 Phase 3: a per-cluster canary that proves the whole path, gate and abort included). */
export type SmokeStrategy = SmokeTestConfig["strategy"];
/** Disabled, the hostname and images may be unset: read as "". */
export type SmokeTestConfig = Values<typeof SMOKE_TEST_FIELDS, "hostname" | "image" | "loadImage">;

const enabled = (s: { enabled?: unknown }) => s.enabled === true;

/** The `smokeTest` section: every key, once. */
export const SMOKE_TEST_FIELDS = {
    enabled: field.boolean({ default: false, doc: "deploy the smoke canary" }),
    strategy: field.oneOf(["canary", "blueGreen"], {
        default: "canary",
        describe: "",
        doc: "canary or blueGreen: the prod / standard shape the smoke app is delivered with",
    }),
    namespace: field.string({
        rule: { pattern: DNS_LABEL, describe: "a namespace name (not default)", maxLength: 63 },
        default: "rollouts-smoke",
        doc: "the smoke app's namespace: the addon's own, not one of Kubernetes' (nor kube-*), the controller's, or the namespace of the Gateway, Mimir, ArgoCD or the resolver this stack names",
    }),
    hostname: field.string({
        rule: { pattern: HOSTNAME, describe: "a hostname" },
        describeWith: (s) => (enabled(s) ? "the smoke app's hostname on the shared Gateway" : "a hostname"),
        required: enabled,
        defaultDoc: "required when enabled",
        doc: "the smoke app's hostname on the shared Gateway (must resolve in the cluster)",
    }),
    trigger: field.string({
        rule: { pattern: /^[A-Za-z0-9._-]{1,63}$/, describe: "a short token (letters, digits, '.', '_', '-'); change it to start a fresh canary" },
        default: "1",
        number: true,
        doc: "change it to start a fresh canary",
    }),
    failGate: field.boolean({ default: false, doc: "make the smoke version fail its gate (proves the abort path)" }),
    image: field.string({
        rule: IMAGE_BY_DIGEST_RULE,
        required: enabled,
        defaultDoc: "required when enabled",
        doc: "demo app image pinned by digest (argoproj/rollouts-demo from the mirror; under imageRegistry when that is set)",
    }),
    loadImage: field.string({
        rule: IMAGE_BY_DIGEST_RULE,
        required: enabled,
        defaultDoc: "required when enabled",
        doc: "image with sh and curl, pinned by digest (e.g. curlimages/curl from the mirror; under imageRegistry when that is set)",
    }),
    replicas: field.integer({ min: 2, max: 10, default: 2, doc: "smoke app replicas" }),
} as const;

export function readSmokeTest(r: ConfigReader, value: unknown): SmokeTestConfig | undefined {
    const s = readSection(r, "smokeTest", SMOKE_TEST_FIELDS, value);
    if (s && PLATFORM_NAMESPACES.includes(s.namespace)) {
        r.problem(
            "smokeTest.namespace",
            s.namespace,
            `must not be one of Kubernetes' own namespaces (${PLATFORM_NAMESPACES.join(", ")}): the stage declares and labels its namespace, and the platform refuses workloads there`,
        );
    }
    return s && { ...s, hostname: s.hostname ?? "", image: s.image ?? "", loadImage: s.loadImage ?? "" };
}
