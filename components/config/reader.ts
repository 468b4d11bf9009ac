/**
 * A small, strict reader for untyped configuration values. `pulumi.Config.requireObject` checks no
 * shape (pulumi/pulumi sdk/nodejs/config.ts at sdk/v3.248.0: `JSON.parse`), so every key goes
 * through this reader, which records every problem instead of throwing at the first: a user fixes
 * a stack file in one pass. This folder is the framework only and imports no stage folder.
 */
import { RunError } from "@pulumi/pulumi/errors";
import { INVISIBLE, NOT_SHOWN, printable, show } from "./show";

export { INVISIBLE, NOT_SHOWN, OFFLINE_SECRET, escapeInvisible, printable, show, withoutUrlSecrets } from "./show";

/** The Pulumi project name, which is also the namespace of every config key. */
export const PROJECT = "argo-rollouts-addon";
/** Namespaces other than the project's whose keys a stack file may carry: Pulumi's and the providers'. */
export const KNOWN_NAMESPACES: readonly string[] = ["pulumi", "aws", "kubernetes"];

/** One thing wrong with a stack's configuration: the dotted key (`qualified`: of another namespace), the value as shown (never a secret), what is allowed. */
export interface ConfigProblem {
    key: string;
    given: string;
    allowed: string;
    qualified?: boolean;
}

/**
 * Every problem of a stack's configuration, before any resource is declared. A RunError, so the CLI
 * prints the message alone (@pulumi/pulumi cmd/run/run.js); `stackName`, as `stack` is the trace.
 */
export class ConfigError extends RunError {
    constructor(
        public readonly stackName: string,
        public readonly namespace: string,
        public readonly problems: ConfigProblem[],
    ) {
        const lines = problems.map((p) => `  - ${p.qualified ? "" : `${namespace}:`}${p.key} = ${p.given}: ${p.allowed}`);
        const noun = problems.length === 1 ? "problem" : "problems";
        super(printable(`stack "${stackName}": invalid configuration (${problems.length} ${noun}):\n${lines.join("\n")}`));
        this.name = "ConfigError";
    }
}

/** A value that must stay secret: "[secret]" wherever it is printed or serialised; `reveal()` only to wrap it in `pulumi.secret`. */
export class SecretValue {
    readonly #value: string;
    constructor(value: string) {
        this.#value = value;
    }
    reveal(): string {
        return this.#value;
    }
    toString(): string {
        return "[secret]";
    }
    toJSON(): string {
        return "[secret]";
    }
}

export type Plain = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Plain {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether the stack declares `scope`'s namespaces absent (`policy.absentClasses`): prod by itself, every scope but default with tenants. */
export const absent = (policy: { absentClasses?: unknown }, scope: string): boolean =>
    scope !== "default" && ((policy.absentClasses ?? []) as string[]).some((c) => c === "tenants" || scope.startsWith(c));

/** A Kubernetes object name (RFC 1123 label): namespaces and most names. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A Kubernetes object name (DNS subdomain; at most 253 characters, checked by the rule's maxLength). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A Kubernetes resource quantity as used for cpu and memory. */
export const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
/** A fully qualified lowercase DNS name. */
export const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
/** An https URL without query or fragment. */
export const HTTPS_URL = /^https:\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%/-]*)?$/;
/**
 * A Mimir tenant id: at most 150 of letters, digits and `!-_.*'()`, not `.` or `..` (grafana/dskit
 * tenant/tenant.go ValidTenantID). No `|`: with tenant federation it would read several tenants.
 */
export const MIMIR_TENANT_RULE = {
    pattern: /^(?!\.\.?$)[A-Za-z0-9!\-_.*'()]{1,150}$/,
    describe: "a Mimir tenant id: 1-150 of letters, digits and !-_.*'() (no '|', ',' or whitespace), not . or ..",
};
/** A label key, `[prefix/]name`, and a label value (k8s.io/apimachinery pkg/util/validation/validation.go v0.34.0). */
export const LABEL_KEY = /^((?=[^/]{1,253}\/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

const QUANTITY_FACTOR: Record<string, number> = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };

/** A Kubernetes quantity in base units, enough to compare two of them. */
export function parseQuantity(q: string): number {
    const m = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
    if (!m) throw new Error(`not a quantity: ${q}`);
    return Number(m[1]) * QUANTITY_FACTOR[m[2] ?? ""];
}

/** The known key a typo most likely meant: the nearest within a third of its length (at least 2 edits, case ignored), if one is nearest. */
export function nearestKey(given: string, known: readonly string[]): string | undefined {
    const distance = (a: string, b: string): number => {
        let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
        for (let i = 1; i <= a.length; i++) {
            const cur = [i];
            for (let j = 1; j <= b.length; j++) {
                cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
            }
            prev = cur;
        }
        return prev[b.length];
    };
    const scored = known.map((k) => ({ k, d: distance(given.toLowerCase(), k.toLowerCase()) })).sort((a, b) => a.d - b.d);
    const limit = Math.max(2, Math.floor(given.length / 3));
    return scored[0]?.d <= limit && scored[1]?.d !== scored[0].d ? scored[0].k : undefined;
}

export interface StringRule {
    pattern?: RegExp;
    /** A check the pattern cannot express (a range, say); false refuses the value with `describe`. */
    valid?: (value: string) => boolean;
    /** What is allowed, for the message. */
    describe: string;
    oneOf?: readonly string[];
    maxLength?: number;
}

const allowedBy = (rule: StringRule) => (rule.oneOf ? `one of ${rule.oneOf.join(", ")}` : rule.describe);

/** Collects the problems of one stack's configuration: each accessor returns the value when valid, else `undefined` or a fallback (for a value not set, never for one set wrongly). */
export class ConfigReader {
    readonly problems: ConfigProblem[] = [];

    problem(key: string, given: unknown, allowed: string): void {
        this.problems.push({ key, given: show(given), allowed });
    }

    /** A problem with a value that must not be shown: `described` says what it holds, never its text. */
    problemDescribed(key: string, described: string, allowed: string): void {
        this.problems.push({ key, given: described, allowed });
    }

    /** Reads an object and reports the keys it does not know: in a stack file they are typos. */
    object(key: string, value: unknown, knownKeys: readonly string[]): Plain | undefined {
        if (value === undefined) return {};
        if (!isPlainObject(value)) {
            this.problem(key, value, `must be an object with keys ${knownKeys.join(", ")}`);
            return undefined;
        }
        for (const k of Object.keys(value).filter((k) => !knownKeys.includes(k))) {
            this.unknownKey(`${key}.${k}`, k, `${key} takes ${knownKeys.join(", ")}`, knownKeys);
        }
        return value;
    }

    /** An unknown key, a typo: its value is never shown (a mistyped `notificationToken` would print the token); the nearest real key is suggested. */
    unknownKey(key: string, given: string, takes: string, knownKeys: readonly string[], opts: { qualified?: boolean } = {}): void {
        const near = nearestKey(given, knownKeys);
        this.problems.push({
            key,
            given: NOT_SHOWN,
            allowed: `unknown key; ${takes}${near ? `; did you mean ${near}?` : ""}`,
            ...(opts.qualified ? { qualified: true } : {}),
        });
    }

    string(key: string, value: unknown, rule: StringRule): string | undefined;
    string(key: string, value: unknown, rule: StringRule, fallback: string): string;
    string(key: string, value: unknown, rule: StringRule, fallback?: string): string | undefined {
        if (value === undefined || value === null) return fallback;
        const ok =
            typeof value === "string" &&
            (rule.oneOf === undefined || rule.oneOf.includes(value)) &&
            (rule.pattern === undefined || rule.pattern.test(value)) &&
            (rule.maxLength === undefined || value.length <= rule.maxLength) &&
            (rule.valid === undefined || rule.valid(value));
        if (!ok) {
            this.problem(key, value, `must be ${allowedBy(rule)}`);
            return fallback;
        }
        return value;
    }

    /** A required string: `not set` is a problem of its own. */
    requiredString(key: string, value: unknown, rule: StringRule): string | undefined {
        if (value === undefined || value === null || value === "") {
            this.problem(key, value, `is required; must be ${allowedBy(rule)}`);
            return undefined;
        }
        return this.string(key, value, rule);
    }

    boolean(key: string, value: unknown, fallback: boolean): boolean {
        if (value === undefined || value === null) return fallback;
        if (value === true || value === "true" || value === false || value === "false") return value === true || value === "true";
        this.problem(key, value, "must be true or false");
        return fallback;
    }

    /** A list of strings each matching `rule`, duplicates dropped, of a length within `size`; `fallback` when not set. */
    strings(key: string, value: unknown, rule: StringRule, fallback: readonly string[] = [], size = { min: 0, max: 100 }): string[] {
        if (value === undefined || value === null) return [...fallback];
        if (!Array.isArray(value) || value.length < size.min || value.length > size.max) {
            this.problem(key, value, `must be a list of ${size.min} to ${size.max} entries, each ${allowedBy(rule)}`);
            return [...fallback];
        }
        // A `~` item read as "not set" would shrink the list silently (an approver list of one approves nobody).
        const read = value.map((v, i) =>
            v === null || v === undefined
                ? this.problem(`${key}[${i}]`, null, `is an empty list item (~ or null); remove it or give ${allowedBy(rule)}`)
                : this.string(`${key}[${i}]`, v, rule),
        );
        return [...new Set(read.filter((s): s is string => s !== undefined))];
    }

    /** A map of Kubernetes label keys to values. */
    labels(key: string, value: unknown): Record<string, string> {
        if (value === undefined || value === null) return {};
        if (!isPlainObject(value)) {
            this.problem(key, value, "must be a map of label keys to string values");
            return {};
        }
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(value)) {
            if (!LABEL_KEY.test(k)) {
                this.problem(`${key}.${k}`, k, "must be a label key ([prefix/]name: a DNS subdomain prefix of at most 253 characters, a name of at most 63)");
            } else if (typeof v !== "string" || !LABEL_VALUE.test(v)) {
                this.problem(`${key}.${k}`, v, "must be a label value (at most 63 alphanumerics, '-', '_' or '.')");
            } else {
                out[k] = v;
            }
        }
        return out;
    }
}

// ---- rules shared by the sections: what a value must be where it lands --------------------------

/** A group or user name as authenticators report it: no outer blanks, inner blanks allowed (SSO groups such as `Release Approvers`), at most 254 characters, nothing a terminal does not show (no token carries a name with a zero-width space). */
export const IDENTITY_TEXT = new RegExp(`^(?!.*${INVISIBLE.source})\\S(.{0,252}\\S)?$`);

/**
 * `*` or `?` in a name: Kyverno's kyverno.io/v1 operators match them both ways as wildcards
 * (kyverno/kyverno pkg/engine/variables/operator/anyin.go v1.17.0 `isAnyIn`), its CEL compares
 * exactly, so `release-*` would grant every release group in one API and nobody in the other.
 */
export const WILDCARD = /[*?]/;

const NO_WILDCARD = "no * or ? (Kyverno's kyverno.io/v1 operators match them as wildcards, its CEL compares exactly)";

/** A group of people (approvers, deployers, tenant operators): never a Kubernetes `system:` group, which names every user, ServiceAccount or node. */
export const PEOPLE_GROUP_RULE: StringRule = {
    pattern: IDENTITY_TEXT,
    valid: (g) => !WILDCARD.test(g) && !/^system:/.test(g),
    describe: `a group name as the API server sees it (request.userInfo.groups; inner blanks allowed), ${NO_WILDCARD}, and no Kubernetes system: group (system:authenticated, system:serviceaccounts and the like hold every user, ServiceAccount or node)`,
};

/** A group or user an automation authenticates as: `system:` names are its own (the broad ones are refused where read). */
export function identityRule(what: "group" | "user"): StringRule {
    return {
        pattern: IDENTITY_TEXT,
        valid: (g) => !WILDCARD.test(g),
        describe: `a ${what} name as the API server sees it (request.userInfo.${what === "group" ? "groups" : "username"}), ${NO_WILDCARD}`,
    };
}

/** The longest image name, registry and repository (distribution/reference v0.6.0 reference.go `NameTotalLengthMax`). */
export const NAME_TOTAL_LENGTH_MAX = 255;

/** Whether an image name starts with a registry host: else the runtime pulls `mirror/argoproj/x` from docker.io (distribution/reference v0.6.0 normalize.go). */
export function hasRegistryHost(name: string): boolean {
    const first = name.split("/")[0];
    return name.includes("/") ? /[.:]/.test(first) || first === "localhost" : /[.:]/.test(name) || name === "localhost";
}

/** Whether a sha256 (anywhere in a reference) is that of zero bytes: the checksum of a failed download, never the asset's. */
export function isEmptyDigest(value: string): boolean {
    return value.toLowerCase().includes("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

const COMPONENT = "[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";
const HOST = "(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?";
/** `registry/repository[:tag]@sha256:<64 hex>` (distribution/reference v0.6.0 regexp.go `ReferenceRegexp`, the digest required; the runtime pulls by the digest). */
const IMAGE_BY_DIGEST = new RegExp(`^(${HOST}(?:/${COMPONENT})+)(?::[\\w][\\w.-]{0,127})?@sha256:[a-f0-9]{64}$`);

/** An image the node will pull as named: pinned by digest, from a registry host, within the name limit, not the digest of nothing. */
export const IMAGE_BY_DIGEST_RULE: StringRule = {
    pattern: IMAGE_BY_DIGEST,
    valid: (ref) => {
        const name = IMAGE_BY_DIGEST.exec(ref)?.[1] ?? "";
        return hasRegistryHost(name) && name.length <= NAME_TOTAL_LENGTH_MAX && !isEmptyDigest(ref);
    },
    describe: `an image reference pinned by digest, registry/repository[:tag]@sha256:<64 hex>: the registry a host (with a '.' or ':', or localhost; else it is a Docker Hub namespace), the name at most ${NAME_TOTAL_LENGTH_MAX} characters, never the sha256 of zero bytes`,
};

/** The namespaces the API server creates: the addon never declares, labels or runs anything in them (a destroy would delete them). */
export const PLATFORM_NAMESPACES: readonly string[] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** The Pod Security admission labels (k8s.io/pod-security-admission api/constants.go). */
export const POD_SECURITY_LABEL = /^pod-security\.kubernetes\.io\/(enforce|audit|warn)(-version)?$/;

/** A namespace name: a DNS-1123 label of at most 63 characters (k8s.io/apimachinery pkg/api/validation/generic.go v0.34.0 `ValidateNamespaceName`). */
export const NAMESPACE_RULE = {
    pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    maxLength: 63,
    describe: "a namespace name (DNS label: at most 63 lowercase letters, digits, '-')",
};

/** The label the API server sets on every namespace to its name (kubernetes/kubernetes pkg/registry/core/namespace/strategy.go v1.34.0): a value set here is overwritten at every preview. */
export const METADATA_NAME_LABEL = "kubernetes.io/metadata.name";

/**
 * Why the addon must not create (and a destroy delete) the namespace `ns`: Kubernetes' own, its
 * reserved `kube-` prefix (kubernetes/website .../working-with-objects/namespaces.md), or one another
 * key (`others`: key to namespace) names as someone else's. Undefined when it is free.
 */
export function foreignNamespace(ns: string, others: Readonly<Record<string, string | undefined>>): string | undefined {
    const owner = Object.entries(others).find(([, v]) => v === ns)?.[0];
    return PLATFORM_NAMESPACES.includes(ns)
        ? `one of Kubernetes' own namespaces (${PLATFORM_NAMESPACES.join(", ")})`
        : ns.startsWith("kube-")
          ? "a kube- namespace: Kubernetes reserves the prefix for its own"
          : owner && `the namespace of ${owner} (someone else's: creating it fails, and a destroy would delete it)`;
}
