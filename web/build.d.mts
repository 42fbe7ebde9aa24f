// Types of web/build.mjs for the tests that build the app.
export function buildWeb(opts?: { out?: string; prune?: boolean }): Promise<{ js: string; css: string }>;
