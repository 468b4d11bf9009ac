import * as assert from "assert";
import { UsageError, readFlags } from "../tools/cli";

// Every command reads its arguments with readFlags (tools/cli.ts); test/commands.test.ts holds what each command makes of them.
describe("readFlags", () => {
    const options = { stack: { type: "string" }, json: { type: "boolean" } } as const;
    const read = (argv: string[]) => readFlags(argv, options, "usage: npm run x");

    it("refuses an empty value and a value given to a switch, naming the flag, and ends with the usage", () => {
        for (const [argv, why] of [
            [["--stack="], /^--stack needs a value \(it was given an empty one\); usage: npm run x$/],
            [["--json=false"], /^--json is a switch and takes no value \(got --json=false\): give --json alone, or leave it out; usage: npm run x$/],
            [["--stack"], /^--stack needs a value; usage/],
            [["extra"], /^unknown argument extra; usage/],
        ] as const) {
            assert.throws(
                () => read([...argv]),
                (e: Error) => e instanceof UsageError && why.test(e.message),
                argv.join(" "),
            );
        }
        assert.deepStrictEqual({ ...(read(["--stack=hub", "--json"]) as object) }, { stack: "hub", json: true });
    });
});
