/** How a stack file's typo is told which key it likely meant. */
/** Edit distance between two keys, ignoring case (a stack file's typos are letters swapped, dropped or doubled). */
export function keyDistance(a: string, b: string): number {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
    for (let i = 1; i <= x.length; i++) {
        const cur = [i];
        for (let j = 1; j <= y.length; j++) {
            cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
        }
        prev = cur;
    }
    return prev[y.length];
}

/** The known key a typo most likely meant: the nearest within a third of its length (at least 2 edits), if one is nearest. */
export function nearestKey(given: string, known: readonly string[]): string | undefined {
    const limit = Math.max(2, Math.floor(given.length / 3));
    const scored = known
        .map((k) => ({ k, d: keyDistance(given, k) }))
        .filter((s) => s.d <= limit)
        .sort((a, b) => a.d - b.d);
    if (scored.length === 0 || (scored.length > 1 && scored[1].d === scored[0].d)) {
        return undefined;
    }
    return scored[0].k;
}
