/** The run's shared state, set by e2e/run.ts before the scenarios load. */
import { World } from "./world";

export const context = {
    bin: process.env.ARGO_ROLLOUTS_ADDON_E2E_BIN ?? "",
    keep: false,
    chart: "stand-in" as "real" | "stand-in",
    plugin: "not run" as "real" | "stand-in" | "not run",
    /** Why a scenario was skipped, by title: a skip always says what it could not run. */
    skipReasons: new Map<string, string>(),
    world: undefined as World | undefined,
};

/** The run's world, started on first use. */
export async function world(): Promise<World> {
    if (!context.world) {
        if (!context.bin) {
            throw new Error("no engine binaries: run the scenarios through npm run e2e");
        }
        context.world = await World.start(context.bin, { keep: context.keep });
        context.chart = context.world.chart;
    }
    return context.world;
}

export async function stopWorld(): Promise<void> {
    const w = context.world;
    context.world = undefined;
    await w?.stop();
}
