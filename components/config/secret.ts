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
