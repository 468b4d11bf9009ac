import { ConfigReader, DNS_LABEL, HOSTNAME } from "../config/reader";
import { PLATFORM_NAMESPACES } from "../config/namespaces";

/**
 * The smoke canary's configuration section, `smokeTest` (ADR-056 Phase 3: a per-cluster canary
 * that proves the whole path, gate and abort included): its types, its defaults and its reader.
 */

/** The ADR-056 delivery shapes the smoke app can run (both are proven end to end). */
export type SmokeStrategy = "canary" | "blueGreen";
export const SMOKE_STRATEGIES: readonly SmokeStrategy[] = ["canary", "blueGreen"];

export interface SmokeTestConfig {
    enabled: boolean;
    /** Which prod / standard shape the smoke app is delivered with. */
    strategy: SmokeStrategy;
    namespace: string;
    /** Hostname of the smoke app on the shared Gateway. */
    hostname: string;
    /** Changing it starts a fresh canary. */
    trigger: string;
    /** Make the smoke version fail its gate, to prove the abort path. */
    failGate: boolean;
    /** The demo app image (from the mirror, pinned by digest). */
    image: string;
    /** The load generator image (from the mirror, pinned by digest); needs sh and wget. */
    loadImage: string;
    replicas: number;
}

/** Every default of the section, in one place; the README's config reference follows it. */
export const SMOKE_TEST_DEFAULTS = { enabled: false, strategy: "canary", namespace: "rollouts-smoke", trigger: "1", failGate: false, replicas: 2 } as const;

const IMAGE_BY_DIGEST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(\/[a-z0-9]+([._-][a-z0-9]+)*)+@sha256:[a-f0-9]{64}$/;

export function readSmokeTest(r: ConfigReader, value: unknown): SmokeTestConfig | undefined {
    const d = SMOKE_TEST_DEFAULTS;
    const s = r.object("smokeTest", value, ["enabled", "strategy", "namespace", "hostname", "trigger", "failGate", "image", "loadImage", "replicas"]);
    if (!s) {
        return undefined;
    }
    const enabled = r.boolean("smokeTest.enabled", s.enabled, d.enabled);
    const digest = { pattern: IMAGE_BY_DIGEST, describe: "an image reference pinned by digest, registry/repository@sha256:<64 hex>" };
    const image = enabled ? r.requiredString("smokeTest.image", s.image, digest) : r.string("smokeTest.image", s.image, digest);
    const loadImage = enabled ? r.requiredString("smokeTest.loadImage", s.loadImage, digest) : r.string("smokeTest.loadImage", s.loadImage, digest);
    const hostname = enabled
        ? r.requiredString("smokeTest.hostname", s.hostname, { pattern: HOSTNAME, describe: "the smoke app's hostname on the shared Gateway" })
        : r.string("smokeTest.hostname", s.hostname, { pattern: HOSTNAME, describe: "a hostname" });
    const trigger = typeof s.trigger === "number" ? String(s.trigger) : s.trigger;
    const namespace = r.string("smokeTest.namespace", s.namespace, { pattern: DNS_LABEL, describe: "a namespace name (not default)", maxLength: 63 }, d.namespace);
    if (PLATFORM_NAMESPACES.includes(namespace)) {
        r.problem("smokeTest.namespace", namespace, `must not be one of Kubernetes' own namespaces (${PLATFORM_NAMESPACES.join(", ")}): the stage declares and labels its namespace, and the platform refuses workloads there`);
    }
    const strategy = r.string("smokeTest.strategy", s.strategy, { oneOf: SMOKE_STRATEGIES, describe: "" }, d.strategy) as SmokeStrategy;
    return {
        enabled,
        strategy,
        namespace,
        hostname: hostname ?? "",
        trigger: r.string("smokeTest.trigger", trigger, { pattern: /^[A-Za-z0-9._-]{1,63}$/, describe: "a short token (letters, digits, '.', '_', '-'); change it to start a fresh canary" }, d.trigger),
        failGate: r.boolean("smokeTest.failGate", s.failGate, d.failGate),
        image: image ?? "",
        loadImage: loadImage ?? "",
        replicas: r.integer("smokeTest.replicas", s.replicas, 2, 10, d.replicas),
    };
}
