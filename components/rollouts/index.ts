// The rollouts stage (stage.ts); its pure decisions are imported from their own modules.
export { RolloutsStage, type RolloutsStageArgs, type RolloutsStageConfig } from "./stage";
