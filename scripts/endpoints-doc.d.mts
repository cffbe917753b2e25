// Types of endpoints-doc.mjs for its tests (test/ops/one-declaration.test.ts).
/** The page the script writes (docs/reference/endpoints.md). */
export const PAGE: string;
/**
 * docs/reference/endpoints.md as it should be, from `doc` (an OpenAPI document as @aps/api builds
 * it; default the served one) and the declarations it was built from (default OPERATIONS).
 */
export function render(
  doc?: object,
  operations?: readonly { operationId: string; access: string; description?: string; examples?: string }[],
): string;
