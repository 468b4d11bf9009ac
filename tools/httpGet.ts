/** The one GET the tools send over HTTP(S): the API server's, a spoke's read endpoint, the CRD files. */
import * as http from "http";
import * as https from "https";

export interface HttpAnswer {
    status: number;
    body: string;
}

/** The status and body of a GET; a socket error or no answer within `timeoutMs` rejects. */
export function httpGet(url: URL, options: https.RequestOptions, timeoutMs: number): Promise<HttpAnswer> {
    const transport = url.protocol === "http:" ? http : https;
    return new Promise((resolve, reject) => {
        const req = transport.request(url, { ...options, method: "GET", timeout: timeoutMs }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
            res.on("error", reject);
        });
        req.on("timeout", () => req.destroy(new Error(`timeout: no answer within ${timeoutMs / 1000} s`)));
        req.on("error", reject);
        req.end();
    });
}
