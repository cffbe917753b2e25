// Types of generate.mjs for its test (src/drift.test.ts).
/** Where the generated types live. */
export const GENERATED: string;
/** The gateway's OpenAPI document, as GET /v1/openapi.json serves it. */
export function openApiDocument(): { paths: Record<string, Record<string, unknown>> };
/** The TypeScript source of the document's types (what src/gen/openapi.ts must hold). */
export function render(document?: object): Promise<string>;
