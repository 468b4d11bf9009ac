// The linter CI runs (`npm run lint`): TypeScript's recommended rules over the program, the tools,
// the tests and the end-to-end run. Formatting is prettier's (`npm run format`).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

const node = Object.fromEntries(["require", "module", "process", "console", "__dirname", "Buffer", "exports"].map((g) => [g, "readonly"]));

export default tseslint.config(
    { ignores: ["node_modules/", "bin/", "plan/", "bench/out/", "e2e/chart/"] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    {
        rules: {
            // `_name` marks a value kept for its position (a destructured tuple, a callback's argument).
            "@typescript-eslint/no-unused-vars": [
                "error",
                { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_", caughtErrors: "none" },
            ],
        },
    },
    {
        // The CommonJS entry points: the swc loader, mocha's settings, the policy pack's entry.
        files: ["**/*.js"],
        languageOptions: { sourceType: "commonjs", globals: node },
        rules: { "@typescript-eslint/no-require-imports": "off" },
    },
);
