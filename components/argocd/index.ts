// The argocd folder's public surface: the stage (stage.ts), its configuration section, and the
// tenant sync settings other programs that render tenant Applications use (syncOptions.ts).
export { ARGOCD_DEFAULTS, ARGOCD_FIELDS, type ArgoCdConfig } from "./config";
export { readArgoCd } from "./preflight";
export { ArgoCdAppsStage, type ArgoCdStageConfig } from "./stage";
export { BUILTIN_KINDS, HTTPROUTE_WEIGHTS_RULE, argocdCmIgnoreData, expandAllKinds } from "./ignoreRules";
export { ROLLOUT_PROJECT_KINDS, projectWhitelist } from "./projects";
export { APPROVER_ROLLOUT_ACTIONS, ARGOCD_ROLLOUT_ACTIONS, ROLLOUT_ACTIONS_POLICY_KEY, rolloutActionsPolicyCsv } from "./rbac";
export { applicationSetPatch, tenantSyncSettings } from "./syncOptions";
