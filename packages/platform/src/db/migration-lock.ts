/**
 * The advisory-lock key of `schema`'s migrations: a stable 31-bit FNV-1a hash. node-pg-migrate holds
 * it as a session lock while it migrates, `applyFunctions` as a transaction lock (docs/design/services.md#sql-functions-in-files);
 * both are the same lock, so replicas starting together migrate and apply one after the other.
 */
export function lockValueFor(schema: string): number {
  let h = 0x811c9dc5;
  for (const ch of schema) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}
