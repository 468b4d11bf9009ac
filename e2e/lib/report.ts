/**
 * The end-to-end report: one line per scenario (PASS, FAIL or SKIP, seconds), the closing
 * `N passed, N failed` line, and with --json the machine-readable report
 * `{ engines, chart, plugin, scenarios: [{ name, result, seconds, detail }] }`. A run on another
 * Kyverno than CI's (ARGO_ROLLOUTS_ADDON_E2E_KYVERNO) first prints which one it runs; `engines`
 * names it either way.
 */
import type { KyvernoRelease } from "./kyvernoRelease";

export type ScenarioResult = "PASS" | "FAIL" | "SKIP";

export interface ScenarioReport {
    name: string;
    result: ScenarioResult;
    seconds: number;
    detail: string;
}

export interface E2eReport {
    engines: { name: string; version: string }[];
    chart: "real" | "stand-in";
    /** Which traffic-router plugin the controller ran ("not run" when no delivery scenario ran). */
    plugin: "real" | "stand-in" | "not run";
    scenarios: ScenarioReport[];
}

export function scenarioLine(s: ScenarioReport): string {
    const detail = s.result === "PASS" ? "" : `: ${s.detail.split("\n")[0]}`;
    return `${s.result} ${s.name} (${s.seconds.toFixed(1)} s)${detail}`;
}

export function summaryLine(scenarios: readonly ScenarioReport[]): string {
    const count = (r: ScenarioResult) => scenarios.filter((s) => s.result === r).length;
    const skipped = count("SKIP");
    return `${count("PASS")} passed, ${count("FAIL")} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`;
}

/** The line a run on another Kyverno than CI's prints before its scenarios. */
export function kyvernoLine(release: KyvernoRelease, version: string): string {
    return `Kyverno ${version} (ARGO_ROLLOUTS_ADDON_E2E_KYVERNO=${release.line}: ${release.admission}, ${release.background} from e2e/engines/${release.engine}; chart and CRDs of the same module)`;
}
