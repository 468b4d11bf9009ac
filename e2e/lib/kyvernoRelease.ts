/**
 * Which Kyverno the run starts. CI runs v1.17.2 (e2e/engines/kyverno); a maintainer's own run can
 * take v1.19.1 instead with ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=1.19 (e2e/engines/kyverno-1.19, an
 * optional engine that a build with no arguments skips). The choice decides the binaries the
 * Kyverno scenarios start, the kyverno module whose chart and CRDs the run installs, and the
 * Kyverno versions the report names.
 *
 * What differs for kyverno-webhook-selectors: 1.17 and 1.18 give every CEL policy without match
 * conditions, an Exact match policy or a timeout one shared webhook with the namespace selector of
 * the last of them (kyverno/kyverno pkg/controllers/webhook/validating.go buildWebhookRules at
 * v1.17.2); v1.19.0 groups those policies by the selectors they resolve to, one webhook per group
 * (kyverno/kyverno #16615; pkg/controllers/webhook/validating.go groupBySelectors at v1.19.1). The
 * program's per-policy timeout puts each of its CEL policies on a fine-grained webhook of its own
 * on both, so the scenario expects the same on both and needs nothing per release.
 */
import * as path from "path";

export const KYVERNO_ENV = "ARGO_ROLLOUTS_ADDON_E2E_KYVERNO";
export const KYVERNO_MODULE = "github.com/kyverno/kyverno";

export interface KyvernoRelease {
    /** The value of ARGO_ROLLOUTS_ADDON_E2E_KYVERNO that selects it ("" for the default). */
    line: string;
    /** The engine folder under e2e/engines whose go.mod pins github.com/kyverno/kyverno. */
    engine: string;
    /** Whether e2e/engines/build.sh builds it only when named (the folder holds `optional`). */
    optional: boolean;
    /** The binaries in the engines' directory. */
    admission: string;
    background: string;
    /**
     * The folder whose go.mod and go.sum pin the kyverno module the run reads Kyverno's chart and
     * CRDs from, when it is not e2e/platform-crds (which pins v1.17.2, the default's version).
     */
    modulePins?: string;
}

const DEFAULT: KyvernoRelease = { line: "", engine: "kyverno", optional: false, admission: "kyverno", background: "kyverno-background-controller" };

const RELEASES = new Map<string, KyvernoRelease>([
    ["1.17", { ...DEFAULT, line: "1.17" }],
    [
        "1.19",
        {
            line: "1.19",
            engine: "kyverno-1.19",
            optional: true,
            admission: "kyverno-1.19",
            background: "kyverno-1.19-background-controller",
            modulePins: path.resolve(__dirname, "..", "engines", "kyverno-1.19"),
        },
    ],
]);

/** The Kyverno release the environment selects; an unknown value is refused. */
export function kyvernoRelease(env: NodeJS.ProcessEnv = process.env): KyvernoRelease {
    const value = (env[KYVERNO_ENV] ?? "").trim();
    if (value === "") {
        return DEFAULT;
    }
    const release = RELEASES.get(value);
    if (!release) {
        throw new Error(
            `${KYVERNO_ENV}=${value} names no Kyverno the run can build: use 1.19 (e2e/engines/kyverno-1.19, v1.19.1), or 1.17 or nothing for CI's v1.17.2 (e2e/engines/kyverno)`,
        );
    }
    return release;
}
