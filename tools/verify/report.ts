/**
 * Results of `npm run verify`: one line per check, the failing objects under a FAIL, and the
 * section of docs/operations/verify.md to read. `--json` prints the same as one document for pipelines.
 */

export type Status = "PASS" | "FAIL" | "SKIP";

/** One object that breaks a requirement, and what was found on it. */
export interface Finding {
    object: string;
    found: string;
}

export interface CheckResult {
    /** Stable id, e.g. `crds.established`. */
    id: string;
    status: Status;
    /** The requirement, in one line. */
    what: string;
    /** FAIL: every object that breaks it. */
    findings: Finding[];
    /** PASS/SKIP: what was seen, or why it was skipped (SKIP: with what to run instead). */
    note?: string;
    /** Anchor of the section of `VERIFY_PAGE` to read on FAIL (the key keeps its name: the JSON report is read by pipelines). */
    readme: string;
}

/** The page that documents every check, relative to the project root. */
export const VERIFY_PAGE = "docs/operations/verify.md";

/** Sections of `VERIFY_PAGE`, by group of checks (its headings under "Verify a cluster"). */
export const DOCS = {
    crds: "#verify-crds-and-controller",
    rbac: "#verify-rbac",
    kyverno: "#verify-kyverno-policies",
    argocd: "#verify-argocd",
    metrics: "#verify-metric-path",
    smoke: "#verify-smoke-canary",
    permissions: "#verifys-own-permissions",
} as const;

/** Builds the result of a check from what it found: FAIL with findings, PASS otherwise. */
export function outcome(id: string, what: string, readme: string, findings: Finding[], note?: string): CheckResult {
    return { id, status: findings.length > 0 ? "FAIL" : "PASS", what, findings, ...(note ? { note } : {}), readme };
}

export function skipped(id: string, what: string, readme: string, why: string): CheckResult {
    return { id, status: "SKIP", what, findings: [], note: why, readme };
}

export interface Report {
    stack: string;
    cluster: string;
    server: string;
    results: CheckResult[];
}

export function summary(results: readonly CheckResult[]): Record<Status, number> {
    const count = (s: Status) => results.filter((r) => r.status === s).length;
    return { PASS: count("PASS"), FAIL: count("FAIL"), SKIP: count("SKIP") };
}

/** 1 when any check failed, 0 otherwise (2, for usage and connection errors, is the CLI's). */
export function exitCode(results: readonly CheckResult[]): number {
    return results.some((r) => r.status === "FAIL") ? 1 : 0;
}

/** The human-readable report: `PASS|FAIL|SKIP  <id>  <what>` and, under a FAIL, object, found, the section to read. */
export function formatText(report: Report): string {
    const width = Math.max(...report.results.map((r) => r.id.length), 10);
    const lines = [`verify stack ${report.stack} (cluster ${report.cluster}) at ${report.server}`];
    for (const r of report.results) {
        const note = r.note ? ` (${r.note})` : "";
        lines.push(`${r.status}  ${r.id.padEnd(width)}  ${r.what}${r.status === "FAIL" ? "" : note}`);
        if (r.status === "FAIL") {
            for (const f of r.findings) {
                lines.push(`      ${f.object}: ${f.found}`);
            }
            if (r.note) {
                lines.push(`      ${r.note}`);
            }
            lines.push(`      read: ${VERIFY_PAGE}${r.readme}`);
        }
    }
    const s = summary(report.results);
    lines.push(`summary: ${s.PASS} PASS, ${s.FAIL} FAIL, ${s.SKIP} SKIP`);
    return lines.join("\n");
}

/** What `--json` prints when verify stops before any check ran (exit 2): the error, as a document. */
export function formatJsonError(e: { stack?: string; error: string }): string {
    return JSON.stringify({ ...(e.stack ? { stack: e.stack } : {}), error: e.error, exitCode: 2, results: [] }, null, 2);
}

export function formatJson(report: Report): string {
    return JSON.stringify({ ...report, summary: summary(report.results) }, null, 2);
}
