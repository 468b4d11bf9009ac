/**
 * A small, strict reader for untyped configuration values.
 *
 * `pulumi.Config.requireObject` only parses JSON: it checks no shape at all (pulumi/pulumi
 * sdk/nodejs/config.ts at sdk/v3.248.0, getObjectImpl: `JSON.parse`). Every stack key therefore goes through this reader, which records every problem it
 * finds instead of throwing at the first one, so a user fixes a stack file in one pass.
 *
 * This folder is the framework only: each stage folder reads its own sections with it (its
 * `config.ts`), and stacks/config.ts assembles the stack's configuration from them. It imports no
 * stage folder, so every stage can import it.
 */

import { RunError } from "@pulumi/pulumi/errors";
import { nearestKey } from "./keys";
import { NOT_SHOWN, printable, show } from "./show";

export { NOT_SHOWN, OFFLINE_SECRET, escapeInvisible, printable, show, withoutUrlSecrets } from "./show";

/** The Pulumi project name, which is also the namespace of every config key. */
export const PROJECT = "argo-rollouts-addon";

/** One thing wrong with the configuration of a stack. */
export interface ConfigProblem {
    /** The key in dotted form, e.g. `plugin.sha256`, without the project namespace. */
    key: string;
    /** The value as given, rendered for the message (secrets are never rendered). */
    given: string;
    /** What would have been accepted. */
    allowed: string;
    /** The key is already namespaced (a key of another namespace than the project's). */
    qualified?: boolean;
}

/**
 * Raised before any resource is declared when a stack's configuration is not usable. A RunError,
 * so the Pulumi CLI prints the message alone (@pulumi/pulumi cmd/run/run.js logs a RunError's
 * message and hides its stack; any other error it prints with util.inspect, stack trace and own
 * properties included). The stack's name is `stackName`: a field named `stack` would shadow
 * Error's stack trace, and the CLI would print the stack's name as the trace.
 */
export class ConfigError extends RunError {
    constructor(
        public readonly stackName: string,
        public readonly namespace: string,
        public readonly problems: ConfigProblem[],
    ) {
        super(formatProblems(stackName, namespace, problems));
        this.name = "ConfigError";
    }
}

export function formatProblems(stack: string, namespace: string, problems: ConfigProblem[]): string {
    const noun = problems.length === 1 ? "problem" : "problems";
    const lines = problems.map((p) => `  - ${p.qualified ? "" : `${namespace}:`}${p.key} = ${p.given}: ${p.allowed}`);
    return printable(`stack "${stack}": invalid configuration (${problems.length} ${noun}):\n${lines.join("\n")}`);
}

/**
 * A configuration value that must stay secret. It renders as "[secret]" wherever it is printed or
 * serialised by accident; `reveal()` is called only to wrap it in `pulumi.secret`.
 */
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

/** Kubernetes object names (RFC 1123 label), used for namespaces and most object names. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A Kubernetes object name (DNS subdomain; at most 253 characters, checked by the rule's maxLength). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** Kubernetes resource quantities as used for cpu and memory. */
export const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
/** A fully qualified lowercase DNS name. */
export const HOSTNAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)+$/;
/** An https URL without query or fragment. */
export const HTTPS_URL = /^https:\/\/[A-Za-z0-9.-]+(:[0-9]+)?(\/[A-Za-z0-9._~%/-]*)?$/;
/**
 * Mimir tenant ids: letters, digits and `!-_.*'()`, at most 150 characters, and neither `.` nor
 * `..` (grafana/dskit tenant/tenant.go, ValidTenantID: errUnsafeTenantID). `|` is excluded by
 * construction: with tenant federation it would read several tenants.
 */
export const MIMIR_TENANT = /^(?!\.\.?$)[A-Za-z0-9!\-_.*'()]{1,150}$/;
export const MIMIR_TENANT_RULE = {
    pattern: MIMIR_TENANT,
    describe: "a Mimir tenant id: 1-150 of letters, digits and !-_.*'() (no '|', ',' or whitespace), not . or ..",
};

/** Converts a Kubernetes quantity to a number in base units, enough to compare two of them. */
export function parseQuantity(q: string): number {
    const m = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
    if (!m) {
        throw new Error(`not a quantity: ${q}`);
    }
    const factor: Record<string, number> = {
        "": 1,
        m: 1e-3,
        k: 1e3,
        M: 1e6,
        G: 1e9,
        T: 1e12,
        Ki: 1024,
        Mi: 1024 ** 2,
        Gi: 1024 ** 3,
        Ti: 1024 ** 4,
    };
    return Number(m[1]) * factor[m[2] ?? ""];
}

export interface StringRule {
    pattern?: RegExp;
    /** A check the pattern cannot express (a range, say); false refuses the value with `describe`. */
    valid?: (value: string) => boolean;
    /** Human description of what is allowed, used in the message. */
    describe: string;
    oneOf?: readonly string[];
    maxLength?: number;
}

/**
 * Collects problems while reading one stack's configuration. Every accessor returns the value
 * when it is valid and `undefined` otherwise; callers fall back to defaults only for values that
 * were not set at all, never for values that were set wrongly.
 */
export class ConfigReader {
    readonly problems: ConfigProblem[] = [];

    problem(key: string, given: unknown, allowed: string): void {
        this.problems.push({ key, given: show(given), allowed });
    }

    /** A problem with a value that must not be shown: `described` stands for it in the message (what it holds, never its text). */
    problemDescribed(key: string, described: string, allowed: string): void {
        this.problems.push({ key, given: described, allowed });
    }

    /** Reads an object and reports keys it does not know: in a stack file they are typos. */
    object(key: string, value: unknown, knownKeys: readonly string[]): Plain | undefined {
        if (value === undefined) {
            return {};
        }
        if (!isPlainObject(value)) {
            this.problem(key, value, `must be an object with keys ${knownKeys.join(", ")}`);
            return undefined;
        }
        for (const k of Object.keys(value)) {
            if (!knownKeys.includes(k)) {
                this.unknownKey(`${key}.${k}`, k, `${key} takes ${knownKeys.join(", ")}`, knownKeys);
            }
        }
        return value;
    }

    /**
     * An unknown key: a typo. Its value is never shown (a mistyped `notificationToken` would print
     * the token), and the nearest real key is suggested.
     */
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
        if (value === undefined || value === null) {
            return fallback;
        }
        const allowed = rule.oneOf ? `must be one of ${rule.oneOf.join(", ")}` : `must be ${rule.describe}`;
        if (typeof value !== "string") {
            this.problem(key, value, allowed);
            return fallback;
        }
        const bad =
            (rule.oneOf !== undefined && !rule.oneOf.includes(value)) ||
            (rule.pattern !== undefined && !rule.pattern.test(value)) ||
            (rule.maxLength !== undefined && value.length > rule.maxLength) ||
            (rule.valid !== undefined && !rule.valid(value));
        if (bad) {
            this.problem(key, value, allowed);
            return fallback;
        }
        return value;
    }

    /** A required string: reports `not set` as a problem of its own. */
    requiredString(key: string, value: unknown, rule: StringRule): string | undefined {
        if (value === undefined || value === null || value === "") {
            this.problem(key, value, `is required; must be ${rule.oneOf ? `one of ${rule.oneOf.join(", ")}` : rule.describe}`);
            return undefined;
        }
        return this.string(key, value, rule);
    }

    integer(key: string, value: unknown, min: number, max: number, fallback: number): number {
        if (value === undefined || value === null) {
            return fallback;
        }
        // Pulumi stores scalar config as strings; accept "3" as well as 3.
        const n = typeof value === "string" && /^-?[0-9]+$/.test(value) ? Number(value) : value;
        if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max) {
            this.problem(key, value, `must be a whole number from ${min} to ${max}`);
            return fallback;
        }
        return n;
    }

    number(key: string, value: unknown, min: number, max: number, fallback: number): number {
        if (value === undefined || value === null) {
            return fallback;
        }
        const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
        if (typeof n !== "number" || !Number.isFinite(n) || n < min || n > max) {
            this.problem(key, value, `must be a number from ${min} to ${max}`);
            return fallback;
        }
        return n;
    }

    boolean(key: string, value: unknown, fallback: boolean): boolean {
        if (value === undefined || value === null) {
            return fallback;
        }
        if (value === true || value === "true") {
            return true;
        }
        if (value === false || value === "false") {
            return false;
        }
        this.problem(key, value, "must be true or false");
        return fallback;
    }

    /**
     * A list of strings each matching `rule`, duplicates dropped; `fallback` when not set. The
     * list's length must be within `size`.
     */
    strings(
        key: string,
        value: unknown,
        rule: StringRule,
        fallback: readonly string[] = [],
        size: { min: number; max: number } = { min: 0, max: 100 },
    ): string[] {
        if (value === undefined || value === null) {
            return [...fallback];
        }
        if (!Array.isArray(value) || value.length < size.min || value.length > size.max) {
            this.problem(
                key,
                value,
                `must be a list of ${size.min} to ${size.max} entries, each ${rule.oneOf ? `one of ${rule.oneOf.join(", ")}` : rule.describe}`,
            );
            return [...fallback];
        }
        const out: string[] = [];
        value.forEach((v, i) => {
            if (v === null || v === undefined) {
                // A YAML `~` (or empty) item: `string` would read it as "not set" and the list would
                // shrink silently (an approver list of one such item approves nobody).
                this.problem(
                    `${key}[${i}]`,
                    null,
                    `is an empty list item (~ or null); remove it or give ${rule.oneOf ? `one of ${rule.oneOf.join(", ")}` : rule.describe}`,
                );
                return;
            }
            const s = this.string(`${key}[${i}]`, v, rule);
            if (s !== undefined && !out.includes(s)) {
                out.push(s);
            }
        });
        return out;
    }

    /** A map of Kubernetes label keys to values. */
    labels(key: string, value: unknown): Record<string, string> {
        if (value === undefined || value === null) {
            return {};
        }
        if (!isPlainObject(value)) {
            this.problem(key, value, "must be a map of label keys to string values");
            return {};
        }
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(value)) {
            if (!LABEL_KEY.test(k)) {
                this.problem(
                    `${key}.${k}`,
                    k,
                    "must be a valid label key ([prefix/]name: a DNS subdomain prefix of at most 253 characters, a name of at most 63)",
                );
            } else if (typeof v !== "string" || !LABEL_VALUE.test(v)) {
                this.problem(`${key}.${k}`, v, "must be a label value (at most 63 alphanumerics, '-', '_' or '.')");
            } else {
                out[k] = v;
            }
        }
        return out;
    }
}

/**
 * A label key, `[prefix/]name` (k8s.io/apimachinery pkg/util/validation/validation.go v0.34.0
 * `IsQualifiedName`): the prefix a DNS-1123 subdomain of at most 253 characters, the name at most 63.
 */
export const LABEL_KEY = /^((?=[^/]{1,253}\/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** A label value: at most 63 characters (same file, `IsValidLabelValue`). */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
