/**
 * The labels every object of an app carries (ADR-056 D3: one manifest shape); the Services select
 * the Rollout's pods with them, the approval Roles (approval.ts) carry them too.
 */
export function appLabels(app: { name: string }): Record<string, string> {
    return { "app.kubernetes.io/name": app.name };
}
